import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import { constTrue } from "effect/Function"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import { Inspector } from "../Inspector.js"
import type * as InspectorServer from "../InspectorServer.js"
import { InspectorServerError } from "../InspectorServer.js"
import * as Assets from "./inspector/assets/index.js"
import * as Api from "./inspectorApi.js"
import { isLoopback } from "./loopback.js"

const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** The page may load and connect to this server only (no network), and may not be framed: `Assets.headers`. */
const pageHeaders = Assets.headers

const apiHeaders = { "cache-control": "no-store", "x-content-type-options": "nosniff" }

const answer = <A>(schema: Schema.ConstraintCodec<A, unknown, unknown, never>, body: A, status = 200) =>
  Effect.orDie(HttpServerResponse.schemaJson(schema)(body, { status, headers: apiHeaders }))

const refusal = (status: number, error: string) => answer(Api.ErrorBody, { error }, status)

/** A query parameter: its last value. */
const param = (params: URLSearchParams, name: string): string | undefined => {
  const all = params.getAll(name)
  return all.length === 0 ? undefined : all[all.length - 1]
}

/** A non-negative integer parameter: `undefined` when absent, a sentence when invalid. */
const integer = (params: URLSearchParams, name: string): number | undefined | string => {
  const text = param(params, name)
  if (text === undefined || text === "") return undefined
  return /^\d{1,15}$/.test(text) ? Number(text) : `${name} must be a non-negative integer, not "${text}"`
}

const states: ReadonlyArray<string> = Api.StateFilter.literals

/** The server-sent events of `/api/stream`: `change` when the version moved (checked 4 times a second), heartbeats. */
const changes = (inspector: Inspector.Service) =>
  Stream.unwrap(Effect.sync(() => {
    let last = -1
    let quiet = 0
    return Stream.tick("250 millis").pipe(
      Stream.mapEffect(() => inspector.version),
      Stream.map((version) => {
        if (version !== last) {
          last = version
          quiet = 0
          return `event: change\ndata: ${JSON.stringify({ version })}\n\n`
        }
        // a comment every 15 s keeps proxies and the browser from closing an idle connection
        return ++quiet % 60 === 0 ? ": heartbeat\n\n" : ""
      }),
      Stream.filter((text) => text !== ""),
      Stream.encodeText
    )
  }))

/** Routes a GET of the API: `segments` is the decoded path after `/api/`. */
const api = (inspector: Inspector.Service, segments: ReadonlyArray<string>, params: URLSearchParams) =>
  Effect.gen(function*() {
    const [first, controller, keys, ...key] = segments
    if (first === "controllers" && controller === undefined) {
      return yield* answer(Api.Controllers, yield* inspector.controllers)
    }
    if (first === "controllers" && controller !== undefined && keys === "keys" && key.length === 0) {
      const state = param(params, "state")
      if (state !== undefined && !states.includes(state)) {
        return yield* refusal(400, `state must be one of ${states.join(", ")}, not "${state}"`)
      }
      const offset = integer(params, "offset")
      const limit = integer(params, "limit")
      if (typeof offset === "string") return yield* refusal(400, offset)
      if (typeof limit === "string") return yield* refusal(400, limit)
      const found = yield* inspector.keys(controller, {
        state: state as Api.KeysQuery["state"],
        search: param(params, "search"),
        offset,
        limit
      })
      return Option.isSome(found)
        ? yield* answer(Api.Keys, found.value)
        : yield* refusal(404, `no controller named "${controller}"`)
    }
    if (first === "controllers" && controller !== undefined && keys === "keys" && key.length > 0) {
      // `default%2Fweb`, or `default/web` unencoded
      const name = key.join("/")
      const found = yield* inspector.key(controller, name)
      if (Option.isSome(found)) return yield* answer(Api.Key, found.value)
      const known = Option.isSome(yield* inspector.keys(controller, { limit: 0 }))
      return yield* refusal(
        404,
        known ? `the controller "${controller}" has no key "${name}"` : `no controller named "${controller}"`
      )
    }
    if (first === "timeline" && segments.length === 1) {
      const since = integer(params, "since")
      const limit = integer(params, "limit")
      if (typeof since === "string") return yield* refusal(400, since)
      if (typeof limit === "string") return yield* refusal(400, limit)
      return yield* answer(Api.Timeline, yield* inspector.timeline({ since, limit }))
    }
    if (first === "stream" && segments.length === 1) {
      return HttpServerResponse.stream(changes(inspector), {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      })
    }
    return yield* refusal(404, `no such API path: /api/${segments.join("/")}`)
  })

/** The `Host` header names a loopback host (or none was sent): not a rebound DNS name. */
const loopbackHost = (host: string | undefined): boolean => {
  if (host === undefined || host === "") return true
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "")
  return isLoopback(name)
}

const handler = (inspector: Inspector.Service, allowRemote: boolean) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!allowRemote) {
      if (!Option.exists(request.remoteAddress, isLoopback)) {
        return yield* refusal(
          403,
          "the inspector answers loopback clients only (bind a non-loopback address to serve others)"
        )
      }
      if (!loopbackHost(request.headers.host)) {
        return yield* refusal(
          403,
          "the inspector answers requests for a loopback host only (Host: 127.0.0.1, localhost)"
        )
      }
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      return yield* refusal(405, "the inspector is read-only: GET only")
    }
    const url = new URL(request.url, "http://inspector")
    let segments: Array<string>
    try {
      segments = url.pathname.split("/").filter((s) => s !== "").map(decodeURIComponent)
    } catch {
      return yield* refusal(400, "a path segment is not valid percent-encoding")
    }
    if (segments.length === 0) {
      return HttpServerResponse.text(Assets.page.html, { contentType: Assets.pageContentType, headers: pageHeaders })
    }
    if (segments[0] === "api") return yield* api(inspector, segments.slice(1), url.searchParams)
    if (segments[0] === "assets" && segments.length === 2) {
      // a name looked up (the record has no prototype), never joined to a path
      const asset = Assets.page.assets[segments[1]!]
      if (asset !== undefined) {
        return HttpServerResponse.text(asset.body, { contentType: asset.contentType, headers: pageHeaders })
      }
    }
    return HttpServerResponse.text("not found\n", { status: 404 })
  })

/** @internal */
export const serve = (
  options: InspectorServer.Options = {}
): Effect.Effect<InspectorServer.Address, InspectorServerError, Inspector | Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const port = options.port ?? 0
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* new InspectorServerError({ host, port, reason: "the port must be an integer in 0..65535" })
    }
    const inspector = yield* Inspector
    const allowRemote = options.allowRemote ?? (options.host !== undefined && !isLoopback(options.host))
    let node: Http.Server | undefined
    const server = yield* NodeHttpServer.make(() => (node = Http.createServer()), { host, port }).pipe(
      Effect.mapError((error) => new InspectorServerError({ host, port, reason: messageOf(error.cause), cause: error }))
    )
    // an open page holds its event stream open: closed at once when the server stops, not waited for
    yield* Effect.addFinalizer(() => Effect.sync(() => node?.closeAllConnections()))
    yield* server.serve(handler(inspector, allowRemote)).pipe(
      Effect.provideService(HttpMiddleware.TracerDisabledWhen, constTrue)
    )
    const address = server.address
    return NetAddress.isInetAddress(address)
      ? { host: NetAddress.formatHost(address), port: address.port }
      : { host, port }
  })
