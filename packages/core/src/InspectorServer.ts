/**
 * The inspector's HTTP server: a web page and the JSON API it reads (`Inspector`), read-only, off unless started.
 *
 * | request | response |
 * |---|---|
 * | `GET /` | the page (`text/html`); `GET /assets/<file>`: its scripts and styles, served from the package |
 * | `GET /api/controllers` | `Inspector.Api.Controllers`: each controller's workers, queue counts, sources |
 * | `GET /api/controllers/:controller/keys?state=&search=&offset=&limit=` | `Inspector.Api.Keys`: a page of keys |
 * | `GET /api/controllers/:controller/keys/:key` | `Inspector.Api.Key` (the key URL-encoded: `default%2Fweb`) |
 * | `GET /api/timeline?since=&limit=` | `Inspector.Api.Timeline`: recent reconciles, newest last |
 * | `GET /api/stream` | `text/event-stream`: `change` with `{ "version": n }` when something was recorded (at most 4 a second), a comment every 15 s |
 * | an unknown controller, key or path | `404`, `{ "error": … }` |
 * | a bad query (`state=nope`, `limit=-1`) | `400`, `{ "error": … }` |
 * | from a non-loopback address, unless allowed | `403` |
 * | any other method than `GET` / `HEAD` | `405` |
 *
 * - **Bound to `127.0.0.1`** unless told otherwise; a request from a non-loopback address is refused (`403`) unless
 *   `allowRemote`, which is the default only when `host` names a non-loopback address (binding one is the opt-in),
 *   as `ProfilingServer`. While remote clients are refused, so is a request whose `Host` header names another host
 *   than a loopback one (a web page that rebinds its DNS name to 127.0.0.1 cannot read the API).
 * - The page loads nothing from the network: its `Content-Security-Policy` allows this server only.
 * - Requests are not traced, like the Manager's probes.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as HealthServer from "./HealthServer.js"
import type { Inspector } from "./Inspector.js"
import * as internal from "./internal/inspectorServer.js"
import type * as ProfilingServer from "./ProfilingServer.js"

/**
 * Where the inspector listens, and who may ask: the options of the other debug server, `ProfilingServer.Options`
 * (`host` default `127.0.0.1`; `port` default `0`, a free one; `allowRemote` default `true` only when `host` is a
 * non-loopback address, else such requests get `403`).
 *
 * @since 0.1.0
 * @category models
 */
export type Options = ProfilingServer.Options

/**
 * The address the server listens on; `port` is the bound port, also when `0` was asked for (the shape of every
 * server of this package: `HealthServer.Address`).
 *
 * @since 0.1.0
 * @category models
 */
export type Address = HealthServer.Address

/**
 * The server could not listen: the port is in use, the host cannot be bound, or the port is not an integer in
 * `0..65535`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InspectorServerError extends Data.TaggedError("InspectorServerError")<{
  readonly host: string
  readonly port: number
  readonly reason: string
  readonly cause?: unknown
}> {
  /** @since 0.1.0 */
  override get message(): string {
    return `cannot serve the inspector on ${this.host}:${this.port}: ${this.reason}`
  }
}

/**
 * Starts the server over the {@link Inspector} of the context and returns its address once it listens. The server
 * stops when the scope closes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Inspector, InspectorServer } from "@reconcile/core"
 *
 * const program = Effect.gen(function*() {
 *   const { port } = yield* InspectorServer.serve({ port: 8082 })
 *   // open http://127.0.0.1:8082/ — or curl http://127.0.0.1:8082/api/controllers
 * }).pipe(Effect.scoped, Effect.provide(Inspector.layer()))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve: (options?: Options) => Effect.Effect<Address, InspectorServerError, Inspector | Scope.Scope> =
  internal.serve
