/**
 * HTTP for the `/scale` and `pods/log` subresources; the semantics live in `../scale.ts` and `../podLog.ts` (shared
 * with `TestCluster`). The server passes what it owns: fault guards, body decoding and response encoding.
 */
import * as Effect from "effect/Effect"
import * as YAML from "yaml"
import * as ApiError from "../../ApiError.js"
import type { ResourceType } from "../../ResourceType.js"
import { converting } from "../conversionWebhooks.js"
import type { Verb } from "../faults.js"
import * as PodLog from "../podLog.js"
import * as Scale from "../scale.js"
import type { Core, PatchType } from "../store.js"
import type * as Exchange from "./exchange.js"
import * as Query from "./query.js"

/** What the server lends a subresource request. */
export interface SubresourceRequest {
  readonly rt: ResourceType
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: "scale" | "log"
  /** Applies injected faults for a verb. */
  readonly guard: (verb: Verb) => Effect.Effect<void, unknown>
  /** The request body decoded as the server decodes object bodies (JSON, YAML, …). */
  readonly body: () => Effect.Effect<unknown, unknown>
  /** The raw request body. */
  readonly text: () => Effect.Effect<string, unknown>
  /** Sends an object (or Status) the way the server sends objects. */
  readonly send: (code: number, body: unknown) => void
  readonly fieldManager: string
}

const patchTypes: Record<string, PatchType> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply"
}

const methodNotAllowed = (): ApiError.ApiError =>
  ApiError.make(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})

const notFoundPath = (): ApiError.ApiError =>
  ApiError.make(404, "NotFound", "the server could not find the requested resource", {})

const parse = (type: PatchType, text: string): unknown => {
  try {
    return type === "apply" ? YAML.parse(text) : JSON.parse(text)
  } catch (e) {
    throw ApiError.make(
      400,
      "BadRequest",
      `the body of the request could not be decoded: ${e instanceof Error ? e.message : String(e)}`
    )
  }
}

/**
 * A query parameter as an integer (apimachinery's conversion: strconv.ParseInt), or a 400 naming it as a real
 * server does for a value that does not parse.
 */
const int = (q: URLSearchParams, name: string): number | undefined => {
  const value = q.get(name)
  if (value === null || value === "") return undefined
  if (!/^[+-]?\d+$/.test(value)) {
    throw ApiError.make(
      400,
      "BadRequest",
      `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`
    )
  }
  return Number(value)
}

const bool = (value: string | null): boolean | undefined =>
  value === null ? undefined : !(value === "0" || value.toLowerCase() === "false")

const serveScale = (
  core: Core,
  req: Exchange.Request,
  q: URLSearchParams,
  s: SubresourceRequest
) =>
  Effect.gen(function*() {
    const { namespace, rt } = s
    if (s.name === undefined || rt.scale === undefined) throw notFoundPath()
    const name = s.name
    const method = req.method ?? "GET"
    if (method === "GET") {
      yield* s.guard("get")
      // (a version not stored: the object is converted by the CRD's webhook first)
      return s.send(200, yield* converting(core, () => Scale.getScale(core, rt, namespace, name)))
    }
    if (method === "PUT") {
      const { dryRun } = Query.writeOptions(q, "UpdateOptions")
      const body = yield* s.body()
      yield* s.guard("update")
      return s.send(
        200,
        yield* converting(core, () =>
          Scale.updateScale(core, rt, namespace, name, body, { fieldManager: s.fieldManager, dryRun }))
      )
    }
    if (method === "PATCH") {
      const type = patchTypes[(req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()]
      if (type === undefined) {
        throw ApiError.make(
          415,
          "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json"
        )
      }
      const { dryRun } = Query.patchOptions(q, type === "apply")
      const patch = parse(type, yield* s.text())
      yield* s.guard("patch")
      return s.send(
        200,
        yield* converting(core, () =>
          Scale.patchScale(core, rt, namespace, name, type, patch, { fieldManager: s.fieldManager, dryRun }))
      )
    }
    throw methodNotAllowed()
  })

const serveLog = (
  core: Core,
  req: Exchange.Request,
  res: Exchange.Response,
  q: URLSearchParams,
  s: SubresourceRequest
) =>
  Effect.gen(function*() {
    if (s.name === undefined || s.namespace === undefined || s.rt.group !== "" || s.rt.kind !== "Pod") {
      throw notFoundPath()
    }
    if ((req.method ?? "GET") !== "GET") throw methodNotAllowed()
    yield* s.guard("get")
    const timestamps = bool(q.get("timestamps")) === true
    const read = PodLog.readPodLog(core, s.rt, s.namespace, s.name, {
      container: q.get("container") ?? undefined,
      previous: bool(q.get("previous")),
      tailLines: int(q, "tailLines"),
      limitBytes: int(q, "limitBytes"),
      sinceSeconds: int(q, "sinceSeconds"),
      sinceTime: q.get("sinceTime") ?? undefined,
      timestamps
    })
    const follow = bool(q.get("follow")) === true && bool(q.get("previous")) !== true
    if (!follow) {
      res.writeHead(200, {
        "Content-Type": "text/plain",
        "Content-Length": Buffer.byteLength(read.text),
        "Cache-Control": "no-cache, private"
      })
      res.end(read.text)
      return
    }
    // follow: what is there, then each later write, until the pod is deleted or the client goes away
    res.writeHead(200, { "Content-Type": "text/plain", "Cache-Control": "no-cache, private" })
    res.socket?.setNoDelay(true)
    if (read.text !== "") res.write(read.text)
    else res.flushHeaders()
    const stop = PodLog.followPodLog(core, s.rt, read, timestamps, (text) => res.write(text), () => res.end())
    req.on("close", stop)
    res.on("close", stop)
  })

/** Serves GET/PUT/PATCH `<resource>/<name>/scale` and GET `pods/<name>/log`. */
export const serve = (
  core: Core,
  req: Exchange.Request,
  res: Exchange.Response,
  url: URL,
  s: SubresourceRequest
): Effect.Effect<void, unknown> =>
  s.subresource === "scale" ? serveScale(core, req, url.searchParams, s) : serveLog(core, req, res, url.searchParams, s)
