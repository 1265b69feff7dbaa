/**
 * The HTTP face of the core: one request handler, over Node's `https` server
 * (`start`) and in process (`TestKube`, through `makeHandler`). Node's own
 * server because we need raw sockets (fault injection destroys watch
 * connections mid-stream), a write per watch event with Nagle off, and exact
 * control of status codes and content types.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Https from "node:https"
import type { AddressInfo, Socket } from "node:net"
import * as YAML from "yaml"
import * as ApiError from "../../ApiError.js"
import type { KubeObject, ObjectList, WatchEvent } from "../../KubeObject.js"
import type { ResourceType } from "../../ResourceType.js"
import * as AdmissionWebhooks from "../admissionWebhooks.js"
import { converting } from "../conversionWebhooks.js"
import { deleteAnswer, type DeleteOptions } from "../deletion.js"
import { type OpenWatch, paceWrites, type Verb, WatchPace } from "../faults.js"
import * as Freshness from "../freshness.js"
import * as Protobuf from "../protobuf/http.js"
import { isBuiltinGroup } from "../resourceType.js"
import { badRequest } from "../statuses.js"
import type { Core, PatchType } from "../store.js"
import { toApiError } from "../suspension.js"
import { onClock } from "../timers.js"
import * as Discovery from "./discovery.js"
import type * as Exchange from "./exchange.js"
import * as FieldValidation from "./fieldValidation.js"
import * as OpenApi from "./openapi.js"
import * as Query from "./query.js"
import { bool } from "./query.js"
import * as Subresources from "./subresources.js"
import * as Table from "./tableResponse.js"

/** What the handler answers with, wherever its requests come from. @internal */
export interface HandlerOptions {
  /** The bearer token every request but the health checks must carry; `undefined`: none checked. */
  readonly token: string | undefined
  readonly bookmarkIntervalMs: number
  /** How long a list or watch-list from a resourceVersion the server has not reached waits for it (default 3 s). */
  readonly resourceVersionWaitMs?: number | undefined
  readonly log: ((line: string) => void) | undefined
}

/** @internal */
export interface ServerOptions extends HandlerOptions {
  readonly port: number
  readonly tls: { readonly cert: string; readonly key: string }
}

/** The handler of one core: `handle` answers a request; `close` drops the watches it holds open. @internal */
export interface Handler {
  readonly handle: (req: Exchange.Request, res: Exchange.Response) => Effect.Effect<void>
  readonly close: () => void
}

export interface RunningServer {
  readonly port: number
  readonly close: () => Promise<void>
}

/** Succeeds once `core` has reached `from`, or after `millis` (polling every 20 ms), on Effect's Clock. */
const waitFor = (core: Core, from: number, millis: number): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (start) => {
    const deadline = start + millis
    const poll: Effect.Effect<void> = Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        !Freshness.behind(core, from) || now >= deadline
          ? Effect.void
          : Effect.andThen(Effect.sleep(Math.min(20, Math.max(1, deadline - now))), poll)
    )
    return poll
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
const prettyResponses = new WeakSet<Exchange.Response>()

const sendJson = (res: Exchange.Response, code: number, body: unknown, contentType = "application/json"): void => {
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
const warn = (res: Exchange.Response, warnings: ReadonlyArray<string>): void => {
  if (warnings.length === 0) return
  const previous = res.getHeader("Warning")
  const before = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)]
  res.setHeader("Warning", [...before, ...warnings.map(Query.warningHeader)])
}

const sendStatus = (res: Exchange.Response, error: ApiError.ApiError): void => {
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

const readBody = (req: Exchange.Request): Effect.Effect<string, Error> =>
  Effect.callback((resume) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    // protobuf bodies travel as latin1 text (byte for byte) to parseBody
    const encoding = Protobuf.isProtobuf(req.headers["content-type"]) ? "latin1" : "utf8"
    req.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString(encoding))))
    req.on("error", (e) => resume(Effect.fail(e)))
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
const parseBody = (req: Exchange.Request, text: string, rt?: ResourceType): unknown => {
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

/** The request handler of `core`. @internal */
export const makeHandler = (core: Core, options: HandlerOptions): Handler => {
  const waitMs = options.resourceVersionWaitMs ?? Freshness.defaultWaitMillis
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
    if (namespace !== undefined && rt.scope === "Cluster") return undefined
    if (rt.scope === "Namespaced" && namespace === undefined && rest.length > 1) return undefined
    return { rt, namespace, name: rest[1], subresource: rest[2], watchPath }
  }

  /** Injected faults: latency on Effect's Clock, then a failure. */
  const guard = (verb: Verb, rt: ResourceType, namespace: string | undefined): Effect.Effect<void, HttpFailure> =>
    Effect.suspend(() => {
      const decision = core.faults.decide(verb, rt, namespace)
      const delay = decision.latencyMillis > 0 ? Effect.sleep(decision.latencyMillis) : Effect.void
      return decision.failure === undefined
        ? delay
        : Effect.andThen(delay, Effect.fail(new HttpFailure(decision.failure)))
    })

  const render = (req: Exchange.Request, url: URL, rt: ResourceType, obj: KubeObject): unknown => {
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

  const watch = (
    req: Exchange.Request,
    res: Exchange.Response,
    url: URL,
    r: Route
  ) =>
    Effect.gen(function*() {
      const q = url.searchParams
      const context = yield* Effect.context<never>()
      const timers = onClock(context)
      // a kind converted by a webhook: its events' conversions called on this fiber's services
      const runFork = Effect.runForkWith(context)
      // ListOptions are decoded before the watch starts: a bad integer is a 400, not a broken stream (kube-apiserver)
      const timeout = Query.listOptions(q, true).timeoutSeconds
      yield* guard("watch", r.rt, r.namespace)
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
        yield* waitFor(core, from!, waitMs)
        if (Freshness.behind(core, from)) {
          res.end(line("ERROR", Freshness.tooLarge(from!, core).status), encoding)
          return
        }
      }
      // stalled and delayed watches (Faults) hold lines and the end on the wall clock
      let ended = false
      const pace = new WatchPace(core.faults, r.rt, r.namespace)
      const paced = paceWrites(pace, timers, (line) => {
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
      const cancels: Array<() => void> = []
      // assigned once below, but `cleanup` (defined first) may run before the watch is open
      // eslint-disable-next-line prefer-const
      let handle:
        | { readonly open: boolean; readonly close: () => void; readonly send: (event: WatchEvent) => void }
        | undefined
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
        for (const cancel of cancels) cancel()
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
      handle = core.watch(
        r.rt,
        r.namespace,
        {
          labelSelector: q.get("labelSelector") ?? undefined,
          fieldSelector,
          shardSelector: q.get("shardSelector") ?? undefined,
          resourceVersion: q.get("resourceVersion") ?? undefined,
          sendInitialEvents: bool(q.get("sendInitialEvents")),
          allowWatchBookmarks: bool(q.get("allowWatchBookmarks"))
        },
        (event) => {
          if (!ended) write(event)
        },
        "view",
        (effect) => void runFork(effect)
      )
      if (!handle.open) return paced.end()
      if (core.faults.takeDrop()) return hooks.drop()
      core.faults.openWatches.add(hooks)
      httpWatches.add(hooks)
      if (timeout !== undefined && timeout > 0) cancels.push(timers.after(timeout * 1000, paced.end))
      if (bool(q.get("allowWatchBookmarks")) === true) {
        // every bookmarkInterval and 2 s before the deadline; never older than the watch's start (kube-apiserver)
        const deadline = timeout !== undefined && timeout > 0 ? timers.now() + timeout * 1000 : undefined
        const schedule = (): void => {
          const now = timers.now()
          const at = Freshness.nextBookmarkAt(now, options.bookmarkIntervalMs, deadline)
          if (at !== undefined) cancels.push(timers.after(at - now, tick))
        }
        const tick = (): void => {
          if (ended) return
          const bookmark = Freshness.bookmarkFor(core, r.rt, from)
          // after the events converted before it
          if (bookmark !== undefined) handle?.send(bookmark)
          schedule()
        }
        schedule()
      }
    })

  const fieldManagerOf = (req: Exchange.Request, q: URLSearchParams): string => {
    const explicit = q.get("fieldManager")
    if (explicit !== null && explicit !== "") return explicit
    const agent = req.headers["user-agent"]
    return agent === undefined || agent === "" ? "unknown" : agent.split("/")[0]!.slice(0, 128)
  }

  /** A write through the admission webhooks; their warnings become `Warning` headers, refused or not. */
  const admitted = <A>(res: Exchange.Response, info: AdmissionWebhooks.RequestInfo, write: () => A) =>
    AdmissionWebhooks.admit(core, info, write).pipe(
      Effect.tapError((e) => Effect.sync(() => warn(res, AdmissionWebhooks.warningsOfError(e)))),
      Effect.map(({ value, warnings }) => {
        warn(res, warnings)
        return value
      })
    )

  const resource = (req: Exchange.Request, res: Exchange.Response, url: URL, r: Route) =>
    Effect.gen(function*() {
      const q = url.searchParams
      const method = req.method ?? "GET"
      const { rt, namespace, name, subresource } = r
      if (subresource === "scale" || subresource === "log") {
        return yield* Subresources.serve(core, req, res, url, {
          rt,
          namespace,
          name,
          subresource,
          guard: (verb) => guard(verb, rt, namespace),
          body: () => Effect.map(readBody(req), (text) => parseBody(req, text)),
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
        if (r.watchPath || bool(q.get("watch")) === true) return yield* watch(req, res, url, r)
        if (name !== undefined) {
          yield* guard("get", rt, namespace)
          const got = yield* converting(core, () => core.get(rt, namespace, name, "view"))
          return sendJson(res, 200, render(req, url, rt, got))
        }
        yield* guard("list", rt, namespace)
        if (core.faults.takeExpire("list")) {
          throw new HttpFailure(ApiError.make(410, "Expired", "too old resource version: injected fault"))
        }
        const listOptions = {
          labelSelector: q.get("labelSelector") ?? undefined,
          fieldSelector: q.get("fieldSelector") ?? undefined,
          shardSelector: q.get("shardSelector") ?? undefined,
          limit: Query.listOptions(q, false).limit,
          continue: q.get("continue") ?? undefined,
          resourceVersion: q.get("resourceVersion") ?? undefined,
          resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined
        }
        // from the "watch cache": wait for a resourceVersion not reached yet, then 504 + Retry-After (kube-apiserver)
        const from = Freshness.cachedNotOlderThan(listOptions)
        if (Freshness.behind(core, from)) {
          yield* waitFor(core, from!, waitMs)
          if (Freshness.behind(core, from)) throw new HttpFailure(Freshness.tooLarge(from!, core))
        }
        const list = yield* converting(core, () => core.list(rt, namespace, listOptions, "view"))
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
      const text = yield* readBody(req)
      const fieldManager = fieldManagerOf(req, q)
      if (method === "POST") {
        if (name !== undefined) {
          throw new HttpFailure(methodNotAllowed())
        }
        const options = Query.writeOptions(q, "CreateOptions")
        const body = parseBody(req, text, rt)
        warn(res, FieldValidation.checkBody(rt, body, options.fieldValidation, text))
        yield* guard("create", rt, namespace)
        const created = yield* admitted(
          res,
          { fieldManager: q.get("fieldManager") ?? undefined, fieldValidation: q.get("fieldValidation") ?? undefined },
          () => core.create(rt, namespace, body, { fieldManager, dryRun: options.dryRun })
        )
        return sendJson(res, 201, render(req, url, rt, created))
      }
      if (method === "PUT") {
        if (name === undefined) {
          throw new HttpFailure(methodNotAllowed())
        }
        const options = Query.writeOptions(q, "UpdateOptions")
        const body = parseBody(req, text, rt)
        warn(res, FieldValidation.checkBody(rt, body, options.fieldValidation, text))
        yield* guard("update", rt, namespace)
        const updated = yield* admitted(
          res,
          { fieldManager: q.get("fieldManager") ?? undefined, fieldValidation: q.get("fieldValidation") ?? undefined },
          () => core.update(rt, namespace, name, body, { fieldManager, subresource, dryRun: options.dryRun })
        )
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
        yield* guard("patch", rt, namespace)
        const body = type === "apply"
          ? parseYaml(text)
          : FieldValidation.decodePatch(type, text, options.fieldValidation)
        if (type !== "apply") {
          warn(res, FieldValidation.checkPatch(core, rt, namespace, name, type, body, options.fieldValidation, text))
        }
        const patchManager = type === "apply" ? options.fieldManager : fieldManager
        const result = yield* admitted(
          res,
          {
            fieldManager: q.get("fieldManager") ?? undefined,
            fieldValidation: q.get("fieldValidation") ?? undefined
          },
          () =>
            core.patch(rt, namespace, name, type, body, {
              fieldManager: patchManager,
              subresource,
              force: options.force,
              dryRun: options.dryRun
            })
        )
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
          yield* guard("deletecollection", rt, namespace)
          const list = core.list(rt, namespace, {
            labelSelector: q.get("labelSelector") ?? undefined,
            fieldSelector: q.get("fieldSelector") ?? undefined
          })
          const items: Array<KubeObject> = []
          for (const item of list.items) {
            // the items as listed, before their deletion (kube-apiserver's DeleteCollection)
            const deleted = yield* admitted(
              res,
              { deleteOptions: { ...deleteOptions } },
              () => core.delete(rt, item.metadata.namespace, item.metadata.name!, deleteOptions)
            ).pipe(
              Effect.as(true),
              Effect.catchIf((e) => e.status.code === 404, () => Effect.succeed(false))
            )
            if (deleted) items.push(item)
          }
          return sendJson(res, 200, wireList(rt, { ...list, items }))
        }
        yield* guard("delete", rt, namespace)
        const answer = deleteAnswer(
          rt,
          name,
          yield* admitted(res, { deleteOptions: { ...deleteOptions } }, () =>
            core.delete(rt, namespace, name, deleteOptions))
        )
        return sendJson(res, 200, answer._tag === "Object" ? answer.object : answer.status)
      }
      throw new HttpFailure(methodNotAllowed())
    })

  const handle = (req: Exchange.Request, res: Exchange.Response) =>
    Effect.gen(function*() {
      const url = new URL(req.url ?? "/", "https://127.0.0.1")
      const path = url.pathname.replace(/\/+$/, "") || "/"
      if (path === "/healthz" || path === "/livez" || path === "/readyz") {
        res.writeHead(200, { "Content-Type": "text/plain" })
        res.end("ok")
        return
      }
      if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
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
      yield* resource(req, res, url, r)
    })

  return {
    handle: (req, res) => {
      const started = Date.now()
      if (options.log !== undefined) {
        const log = options.log
        res.on("finish", () => {
          const url = req.url ?? "/"
          log(`${req.method} ${url} ${res.statusCode} ${Date.now() - started}ms`)
        })
      }
      return handle(req, res).pipe(
        Effect.catchCause((cause) =>
          Effect.sync(() => {
            if (Cause.hasInterruptsOnly(cause)) return
            const e = Cause.squash(cause)
            const error = e instanceof HttpFailure ? e.error : toApiError(e)
            if (res.headersSent) {
              res.end()
            } else {
              sendStatus(res, error)
            }
          })
        )
      )
    },
    close: () => {
      for (const w of [...httpWatches]) w.drop()
    }
  }
}

/** The handler of `core` on an HTTPS server on 127.0.0.1. @internal */
export const start = (core: Core, options: ServerOptions): Promise<RunningServer> => {
  const handler = makeHandler(core, options)
  const sockets = new Set<Socket>()
  const server = Https.createServer(
    { cert: options.tls.cert, key: options.tls.key },
    (req, res) => void Effect.runFork(handler.handle(req, res))
  )
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
            handler.close()
            server.close(() => done())
            for (const s of sockets) s.destroy()
          })
      })
    })
  })
}
