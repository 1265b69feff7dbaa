/**
 * The HTTP face of the core, on Node's `http` module: we need raw sockets
 * (fault injection destroys watch connections mid-stream), a write per watch
 * event with Nagle off, and exact control of status codes and content types.
 */
import type * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo, Socket } from "node:net"
import * as YAML from "yaml"
import * as ApiError from "../../ApiError.js"
import type { KubeObject, ObjectList, WatchEvent } from "../../KubeObject.js"
import type { ResourceType } from "../../ResourceType.js"
import { type OpenWatch, paceWrites, type Verb, WatchPace } from "../faults.js"
import * as FieldValidation from "../fieldValidation.js"
import * as Freshness from "../freshness.js"
import * as Protobuf from "../protobuf/http.js"
import { isBuiltinGroup } from "../registry.js"
import { badRequest, type Core, deleteAnswer, type DeleteOptions, type PatchType } from "../store.js"
import { toApiError } from "../testCluster.js"
import * as Discovery from "./discovery.js"
import * as OpenApi from "./openapi.js"
import * as Query from "./query.js"
import { bool } from "./query.js"
import * as Subresources from "./subresources.js"
import * as Table from "./table.js"

export interface ServerOptions {
  readonly port: number
  readonly tls: { readonly cert: string; readonly key: string }
  readonly token: string
  readonly bookmarkIntervalMs: number
  /** How long a list or watch-list from a resourceVersion the server has not reached waits for it (default 3 s). */
  readonly resourceVersionWaitMs?: number | undefined
  readonly log: ((line: string) => void) | undefined
}

export interface RunningServer {
  readonly port: number
  readonly close: () => Promise<void>
}

/** Resolves once `core` has reached `from`, or after `millis` (polling every 20 ms). */
const waitFor = (core: Core, from: number, millis: number): Promise<void> =>
  new Promise((resolve) => {
    const deadline = Date.now() + millis
    const poll = (): void => {
      if (!Freshness.behind(core, from) || Date.now() >= deadline) resolve()
      else setTimeout(poll, Math.min(20, Math.max(1, deadline - Date.now())))
    }
    poll()
  })

class HttpFailure {
  constructor(readonly error: ApiError.ApiError) {}
}

/** A path the server does not serve; kube-apiserver's path errors carry empty details. */
const notFoundPath = (): ApiError.ApiError =>
  ApiError.make(404, "NotFound", "the server could not find the requested resource", {})

const methodNotAllowed = (): ApiError.ApiError =>
  ApiError.make(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})

/** Responses written indented (`pretty`, see `Query.pretty`). */
const prettyResponses = new WeakSet<Http.ServerResponse>()

const sendJson = (res: Http.ServerResponse, code: number, body: unknown, contentType = "application/json"): void => {
  // protobuf when the client asks for it first and the body's kind has a message (JSON if it cannot carry the object)
  const proto = contentType === "application/json" ? Protobuf.responseBody(res.req, body) : undefined
  // a client taking protobuf only, for a body that cannot be protobuf: 406 (a protobuf Status), not JSON
  const refused = proto === undefined && contentType === "application/json"
    ? Protobuf.notAcceptable(res.req, body)
    : undefined
  if (refused !== undefined) return sendJson(res, 406, refused.status)
  if (proto !== undefined) {
    res.writeHead(code, {
      "Content-Type": Protobuf.MEDIA_TYPE,
      "Content-Length": proto.length,
      "Cache-Control": "no-cache, private"
    })
    return void res.end(proto)
  }
  const text = prettyResponses.has(res) ? JSON.stringify(body, null, 2) : JSON.stringify(body)
  res.writeHead(code, {
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-cache, private"
  })
  res.end(text)
}

/** Adds `Warning` headers (`299 - "<text>"`), as kube-apiserver reports Warn-level field validation. */
const warn = (res: Http.ServerResponse, warnings: ReadonlyArray<string>): void => {
  if (warnings.length === 0) return
  const previous = res.getHeader("Warning")
  const before = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)]
  res.setHeader("Warning", [...before, ...warnings.map(Query.warningHeader)])
}

const sendStatus = (res: Http.ServerResponse, error: ApiError.ApiError): void => {
  const retry = error.status.details?.retryAfterSeconds
  if (retry !== undefined) res.setHeader("Retry-After", String(retry))
  // an empty reason, and empty strings in details, are omitted on the wire (Go's omitempty), as upstream's
  const { reason, ...rest } = error.status
  const details = rest.details === undefined
    ? undefined
    : Object.fromEntries(Object.entries(rest.details).filter(([, v]) => v !== ""))
  const status = { ...(reason === "" ? rest : error.status), ...(details === undefined ? {} : { details }) }
  sendJson(res, error.status.code, status)
}

const readBody = (req: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    // protobuf bodies travel as latin1 text (byte for byte) to parseBody
    const encoding = Protobuf.isProtobuf(req.headers["content-type"]) ? "latin1" : "utf8"
    req.on("end", () => resolve(Buffer.concat(chunks).toString(encoding)))
    req.on("error", reject)
  })

const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw badRequest(
      `the body of the request could not be decoded as JSON: ${e instanceof Error ? e.message : String(e)}`
    )
  }
}

/** YAML as kube-apiserver reads it (sigs.k8s.io/yaml, YAML 1.1: `y`, `yes`, `on` are booleans). */
const parseYaml = (text: string): unknown => {
  try {
    return YAML.parse(text, { version: "1.1" })
  } catch (e) {
    throw badRequest(`error decoding YAML: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** A request body by its media type; with the resource type of a create or update, JSON as its decoder words it. */
const parseBody = (req: Http.IncomingMessage, text: string, rt?: ResourceType): unknown => {
  const type = mediaType(req.headers["content-type"])
  if (type === "" || type === "application/json") {
    return rt === undefined ? parseJson(text) : FieldValidation.decodeBody(rt, text)
  }
  if (type === Protobuf.MEDIA_TYPE) return Protobuf.decodeBody(Buffer.from(text, "latin1"))
  if (type === "application/yaml" || type === "application/x-yaml") return parseYaml(text)
  throw ApiError.make(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`
  )
}

const patchTypes: Record<string, PatchType> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply"
}

interface Route {
  readonly rt: ResourceType
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
  readonly watchPath: boolean
}

const isBuiltin = (rt: ResourceType): boolean => isBuiltinGroup(rt.group)

/**
 * A list as kube-apiserver writes it: the items of a built-in kind's typed list carry no apiVersion and kind; a
 * custom resource list (unstructured) always has `metadata.continue`, empty on the last page.
 */
const wireList = (rt: ResourceType, list: ObjectList): ObjectList =>
  isBuiltin(rt)
    ? { ...list, items: list.items.map(({ apiVersion: _a, kind: _k, ...item }) => item as KubeObject) }
    : { ...list, metadata: { continue: "", ...list.metadata } }

export const start = (core: Core, options: ServerOptions): Promise<RunningServer> => {
  const waitMs = options.resourceVersionWaitMs ?? Freshness.defaultWaitMillis
  const sockets = new Set<Socket>()
  const httpWatches = new Set<{ readonly drop: () => void }>()

  const route = (segments: ReadonlyArray<string>): Route | undefined => {
    let group: string
    let version: string
    let rest: Array<string>
    if (segments[0] === "api" && segments.length >= 3) {
      group = ""
      version = segments[1]!
      rest = segments.slice(2)
    } else if (segments[0] === "apis" && segments.length >= 4) {
      group = segments[1]!
      version = segments[2]!
      rest = segments.slice(3)
    } else {
      return undefined
    }
    let watchPath = false
    if (rest[0] === "watch") {
      watchPath = true
      rest = rest.slice(1)
    }
    let namespace: string | undefined
    if (
      rest[0] === "namespaces" && rest.length >= 3 && core.registry.byResource(group, version, rest[2]!) !== undefined
    ) {
      namespace = rest[1]
      rest = rest.slice(2)
    }
    if (rest.length === 0 || rest.length > 3) return undefined
    const rt = core.registry.byResource(group, version, rest[0]!)
    if (rt === undefined) return undefined
    if (namespace !== undefined && !rt.namespaced) return undefined
    if (rt.namespaced && namespace === undefined && rest.length > 1) return undefined
    return { rt, namespace, name: rest[1], subresource: rest[2], watchPath }
  }

  const guard = async (verb: Verb, rt: ResourceType, namespace: string | undefined): Promise<void> => {
    const decision = core.faults.decide(verb, rt, namespace)
    if (decision.latencyMillis > 0) await new Promise((r) => setTimeout(r, decision.latencyMillis))
    if (decision.failure !== undefined) throw new HttpFailure(decision.failure)
  }

  const render = (req: Http.IncomingMessage, url: URL, rt: ResourceType, obj: KubeObject): unknown => {
    const accept = req.headers.accept ?? ""
    if (accept.includes("as=Table")) {
      return Table.table(
        rt,
        [obj],
        { resourceVersion: obj.metadata.resourceVersion },
        url.searchParams.get("includeObject") ?? "Metadata",
        core.now()
      )
    }
    if (accept.includes("as=PartialObjectMetadata")) return Table.partialObject(obj)
    return obj
  }

  const watch = async (
    req: Http.IncomingMessage,
    res: Http.ServerResponse,
    url: URL,
    r: Route
  ): Promise<void> => {
    const q = url.searchParams
    // ListOptions are decoded before the watch starts: a bad integer is a 400, not a broken stream (kube-apiserver)
    const timeout = Query.listOptions(q, true).timeoutSeconds
    await guard("watch", r.rt, r.namespace)
    const accept = req.headers.accept ?? ""
    const asTable = accept.includes("as=Table")
    const includeObject = q.get("includeObject") ?? "Metadata"
    const fieldSelector = r.name === undefined
      ? q.get("fieldSelector") ?? undefined
      : [q.get("fieldSelector"), `metadata.name=${r.name}`].filter((x) => x !== null && x !== "").join(",")
    // protobuf watches: length-prefixed WatchEvent frames, carried as latin1 strings through the pacing below
    const proto = !asTable && Protobuf.watchesProtobuf(req, r.rt)
    const line = (type: string, object: unknown): string =>
      proto ? Protobuf.watchLine(type, object) ?? "" : `${JSON.stringify({ type, object })}\n`
    const encoding = proto ? "latin1" : "utf8"
    res.writeHead(200, {
      "Content-Type": proto ? Protobuf.WATCH_MEDIA_TYPE : "application/json",
      "Cache-Control": "no-cache, private",
      "Transfer-Encoding": "chunked"
    })
    res.socket?.setNoDelay(true)
    res.flushHeaders()
    const from = Freshness.requested(q.get("resourceVersion") ?? undefined)
    if (bool(q.get("sendInitialEvents")) === true && Freshness.behind(core, from)) {
      // a watch-list waits for the resourceVersion like a list, and fails with an ERROR event (kube-apiserver)
      await waitFor(core, from!, waitMs)
      if (Freshness.behind(core, from)) {
        res.end(line("ERROR", Freshness.tooLarge(from!, core).status), encoding)
        return
      }
    }
    // stalled and delayed watches (Faults) hold lines and the end on the wall clock
    let ended = false
    const pace = new WatchPace(core.faults, r.rt, r.namespace)
    const paced = paceWrites(pace, (line) => {
      if (!ended) res.write(line, encoding)
    }, () => finish())
    const write = (event: WatchEvent): void => {
      let object: unknown = event.object
      if (event.type !== "ERROR" && event.type !== "BOOKMARK") {
        if (asTable) {
          object = Table.table(
            r.rt,
            [event.object],
            { resourceVersion: event.object.metadata.resourceVersion },
            includeObject,
            core.now()
          )
        } else if (accept.includes("as=PartialObjectMetadata")) object = Table.partialObject(event.object)
      }
      paced.write(line(event.type, object))
    }
    if (core.faults.takeExpire("watch")) {
      const status = ApiError.make(410, "Expired", "too old resource version: injected fault").status
      res.end(line("ERROR", status), encoding)
      return
    }
    const timers: Array<NodeJS.Timeout> = []
    // assigned once below, but `cleanup` (defined first) may run before the watch is open
    // eslint-disable-next-line prefer-const
    let handle: { readonly open: boolean; readonly close: () => void } | undefined
    const hooks: OpenWatch = {
      drop: () => {
        cleanup()
        req.socket.destroy()
      },
      garble: () => {
        if (!ended) res.write("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\u0000garbled\n")
      },
      stall: (millis) => paced.stall(millis),
      rt: r.rt,
      namespace: r.namespace
    }
    const cleanup = (): void => {
      if (ended) return
      ended = true
      for (const t of timers) clearTimeout(t)
      paced.cancel()
      handle?.close()
      core.faults.openWatches.delete(hooks)
      httpWatches.delete(hooks)
    }
    const finish = (): void => {
      if (ended) return
      cleanup()
      res.end()
    }
    req.on("close", cleanup)
    res.on("close", cleanup)
    handle = core.watch(r.rt, r.namespace, {
      labelSelector: q.get("labelSelector") ?? undefined,
      fieldSelector,
      resourceVersion: q.get("resourceVersion") ?? undefined,
      sendInitialEvents: bool(q.get("sendInitialEvents")),
      allowWatchBookmarks: bool(q.get("allowWatchBookmarks"))
    }, (event) => {
      if (!ended) write(event)
    })
    if (!handle.open) return paced.end()
    if (core.faults.takeDrop()) return hooks.drop()
    core.faults.openWatches.add(hooks)
    httpWatches.add(hooks)
    if (timeout !== undefined && timeout > 0) timers.push(setTimeout(paced.end, timeout * 1000))
    if (bool(q.get("allowWatchBookmarks")) === true) {
      // every bookmarkInterval and 2 s before the deadline; never older than the watch's start (kube-apiserver)
      const deadline = timeout !== undefined && timeout > 0 ? Date.now() + timeout * 1000 : undefined
      const schedule = (): void => {
        const now = Date.now()
        const at = Freshness.nextBookmarkAt(now, options.bookmarkIntervalMs, deadline)
        if (at !== undefined) timers.push(setTimeout(tick, at - now))
      }
      const tick = (): void => {
        if (ended) return
        const bookmark = Freshness.bookmarkFor(core, r.rt, from)
        if (bookmark !== undefined) write(bookmark)
        schedule()
      }
      schedule()
    }
  }

  const fieldManagerOf = (req: Http.IncomingMessage, q: URLSearchParams): string => {
    const explicit = q.get("fieldManager")
    if (explicit !== null && explicit !== "") return explicit
    const agent = req.headers["user-agent"]
    return agent === undefined || agent === "" ? "unknown" : agent.split("/")[0]!.slice(0, 128)
  }

  const resource = async (req: Http.IncomingMessage, res: Http.ServerResponse, url: URL, r: Route): Promise<void> => {
    const q = url.searchParams
    const method = req.method ?? "GET"
    const { rt, namespace, name, subresource } = r
    if (subresource === "scale" || subresource === "log") {
      return Subresources.serve(core, req, res, url, {
        rt,
        namespace,
        name,
        subresource,
        guard: (verb) => guard(verb, rt, namespace),
        body: async () => parseBody(req, await readBody(req)),
        text: () => readBody(req),
        send: (code, body) => sendJson(res, code, body),
        fieldManager: fieldManagerOf(req, q)
      })
    }
    if (subresource !== undefined && subresource !== "status") throw new HttpFailure(notFoundPath())
    // reading `/status` of a kind without the subresource: no such path (writes answer as the cluster does)
    if (subresource === "status" && !rt.hasStatus && method === "GET") throw new HttpFailure(notFoundPath())
    if (
      !Discovery.allows(rt, method, name !== undefined, r.watchPath || bool(q.get("watch")) === true) ||
      (rt.createOnly === true && name !== undefined)
    ) {
      throw new HttpFailure(methodNotAllowed())
    }
    if (method === "GET") {
      if (r.watchPath || bool(q.get("watch")) === true) return watch(req, res, url, r)
      if (name !== undefined) {
        await guard("get", rt, namespace)
        return sendJson(res, 200, render(req, url, rt, core.get(rt, namespace, name)))
      }
      await guard("list", rt, namespace)
      if (core.faults.takeExpire("list")) {
        throw new HttpFailure(ApiError.make(410, "Expired", "too old resource version: injected fault"))
      }
      const listOptions = {
        labelSelector: q.get("labelSelector") ?? undefined,
        fieldSelector: q.get("fieldSelector") ?? undefined,
        limit: Query.listOptions(q, false).limit,
        continue: q.get("continue") ?? undefined,
        resourceVersion: q.get("resourceVersion") ?? undefined,
        resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined
      }
      // from the "watch cache": wait for a resourceVersion not reached yet, then 504 with Retry-After (kube-apiserver)
      const from = Freshness.cachedNotOlderThan(listOptions)
      if (Freshness.behind(core, from)) {
        await waitFor(core, from!, waitMs)
        if (Freshness.behind(core, from)) throw new HttpFailure(Freshness.tooLarge(from!, core))
      }
      const list = core.list(rt, namespace, listOptions)
      const accept = req.headers.accept ?? ""
      if (accept.includes("as=Table")) {
        return sendJson(
          res,
          200,
          Table.table(rt, list.items, list.metadata, q.get("includeObject") ?? "Metadata", core.now())
        )
      }
      if (accept.includes("as=PartialObjectMetadataList")) return sendJson(res, 200, Table.partialList(list))
      return sendJson(res, 200, wireList(rt, list))
    }
    const text = await readBody(req)
    const fieldManager = fieldManagerOf(req, q)
    if (method === "POST") {
      if (name !== undefined) {
        throw new HttpFailure(methodNotAllowed())
      }
      const options = Query.writeOptions(q, "CreateOptions")
      const body = parseBody(req, text, rt)
      warn(res, FieldValidation.checkBody(rt, body, options.fieldValidation, text))
      await guard("create", rt, namespace)
      const created = core.create(rt, namespace, body, { fieldManager, dryRun: options.dryRun })
      return sendJson(res, 201, render(req, url, rt, created))
    }
    if (method === "PUT") {
      if (name === undefined) {
        throw new HttpFailure(methodNotAllowed())
      }
      const options = Query.writeOptions(q, "UpdateOptions")
      const body = parseBody(req, text, rt)
      warn(res, FieldValidation.checkBody(rt, body, options.fieldValidation, text))
      await guard("update", rt, namespace)
      const updated = core.update(rt, namespace, name, body, {
        fieldManager,
        subresource,
        dryRun: options.dryRun
      })
      return sendJson(res, 200, render(req, url, rt, updated))
    }
    if (method === "PATCH") {
      if (name === undefined) {
        throw new HttpFailure(methodNotAllowed())
      }
      const type = patchTypes[mediaType(req.headers["content-type"])]
      if (type === undefined || (type === "strategic" && !isBuiltin(rt))) {
        throw ApiError.make(
          415,
          "UnsupportedMediaType",
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${
            isBuiltin(rt) ? ", application/strategic-merge-patch+json" : ""
          }`
        )
      }
      const options = Query.patchOptions(q, type === "apply")
      await guard("patch", rt, namespace)
      const body = type === "apply" ? parseYaml(text) : FieldValidation.decodePatch(type, text, options.fieldValidation)
      if (type !== "apply") {
        warn(res, FieldValidation.checkPatch(core, rt, namespace, name, type, body, options.fieldValidation, text))
      }
      const result = core.patch(rt, namespace, name, type, body, {
        fieldManager: type === "apply" ? options.fieldManager : fieldManager,
        subresource,
        force: options.force,
        dryRun: options.dryRun
      })
      return sendJson(res, result.created ? 201 : 200, render(req, url, rt, result.object))
    }
    if (method === "DELETE") {
      // a DeleteOptions body, or without one the query (kube-apiserver reads one or the other)
      const deleteOptions: DeleteOptions = Query.deleteOptions(
        q,
        text.trim() === "" ? undefined : parseBody(req, text)
      )
      if (name === undefined) {
        Query.listOptions(q, false)
        await guard("deletecollection", rt, namespace)
        const list = core.list(rt, namespace, {
          labelSelector: q.get("labelSelector") ?? undefined,
          fieldSelector: q.get("fieldSelector") ?? undefined
        })
        const items: Array<KubeObject> = []
        for (const item of list.items) {
          try {
            // the items as listed, before their deletion (kube-apiserver's DeleteCollection)
            core.delete(rt, item.metadata.namespace, item.metadata.name!, deleteOptions)
            items.push(item)
          } catch (e) {
            if (!(e instanceof ApiError.ApiError && e.status.code === 404)) throw e
          }
        }
        return sendJson(res, 200, wireList(rt, { ...list, items }))
      }
      await guard("delete", rt, namespace)
      const answer = deleteAnswer(rt, name, core.delete(rt, namespace, name, deleteOptions))
      return sendJson(res, 200, answer._tag === "Object" ? answer.object : answer.status)
    }
    throw new HttpFailure(methodNotAllowed())
  }

  const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "https://127.0.0.1")
    const path = url.pathname.replace(/\/+$/, "") || "/"
    if (path === "/healthz" || path === "/livez" || path === "/readyz") {
      res.writeHead(200, { "Content-Type": "text/plain" })
      res.end("ok")
      return
    }
    if (req.headers.authorization !== `Bearer ${options.token}`) {
      return sendStatus(res, ApiError.make(401, "Unauthorized", "Unauthorized"))
    }
    if (Query.pretty(url.searchParams, req.headers["user-agent"])) prettyResponses.add(res)
    const segments = path.split("/").filter((s) => s !== "").map(decodeURIComponent)
    const types = core.registry.all()
    const accept = req.headers.accept ?? ""
    if (req.method === "GET") {
      if (segments[0] === "openapi") {
        const crdType = core.registry.byKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")!
        const crds = core.list(crdType, undefined, {}).items
        const ifNoneMatch = req.headers["if-none-match"]
        const doc = OpenApi.respond(segments, url, { accept, ifNoneMatch }, types, crds)
        if (doc !== undefined) {
          res.writeHead(doc.status, { ...doc.headers, "Content-Length": Buffer.byteLength(doc.body) })
          return void res.end(doc.body)
        }
      }
      const discovery = Discovery.respond(
        segments,
        { accept, ifNoneMatch: req.headers["if-none-match"], host: req.headers.host ?? "127.0.0.1" },
        types
      )
      if (discovery?._tag === "NotFound") return sendStatus(res, notFoundPath())
      if (discovery?._tag === "Object") return sendJson(res, discovery.status, discovery.body)
      if (discovery?._tag === "Raw") {
        res.writeHead(discovery.status, { ...discovery.headers, "Content-Length": Buffer.byteLength(discovery.body) })
        return void res.end(discovery.body)
      }
    }
    const r = route(segments)
    if (r === undefined) return sendStatus(res, notFoundPath())
    await resource(req, res, url, r)
  }

  const server = Https.createServer({ cert: options.tls.cert, key: options.tls.key }, (req, res) => {
    const started = Date.now()
    if (options.log !== undefined) {
      const log = options.log
      res.on("finish", () => {
        const url = req.url ?? "/"
        log(`${req.method} ${url} ${res.statusCode} ${Date.now() - started}ms`)
      })
    }
    handle(req, res).catch((e) => {
      const error = e instanceof HttpFailure ? e.error : toApiError(e)
      if (res.headersSent) {
        res.end()
      } else {
        sendStatus(res, error)
      }
    })
  })
  server.on("secureConnection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, "127.0.0.1", () => {
      server.off("error", reject)
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const w of [...httpWatches]) w.drop()
            server.close(() => done())
            for (const s of sockets) s.destroy()
          })
      })
    })
  })
}
