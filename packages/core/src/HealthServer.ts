/**
 * The Manager's HTTP endpoints: `/metrics` (Prometheus), `/healthz` and
 * `/readyz` (Kubernetes probes), served by effect's `HttpServer`
 * on Node.
 *
 * | request | response |
 * |---|---|
 * | `GET /metrics` | `200`, `Prometheus.text({ processMetrics })`, typed `Prometheus.contentType` (if `metrics`) |
 * | `GET /healthz` | `200 ok` while `healthy` yields `true` (the default), else `500` |
 * | `GET /readyz` | `200 ok` when `ready` yields `true`, else `503 not ready` |
 * | anything else | `404` |
 *
 * The server binds `127.0.0.1` unless told otherwise (in a pod, pass
 * `host: "0.0.0.0"` so the kubelet and Prometheus can reach it). Requests are
 * not traced: probes and scrapes every few seconds would only add noise to an
 * application's traces.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/healthServer.js"

/**
 * What {@link serve} serves, and where.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The address to bind. Default `"127.0.0.1"` (loopback only). */
  readonly host?: string | undefined
  /** The port to bind; `0` (the default) picks a free port, see {@link Address}. */
  readonly port?: number | undefined
  /** Read on each `GET /healthz`: `false` answers `500`. Default: always healthy. */
  readonly healthy?: Effect.Effect<boolean> | undefined
  /** Read on each `GET /readyz`: `false` answers `503`. */
  readonly ready: Effect.Effect<boolean>
  /** Serve `GET /metrics`. Default `true`. */
  readonly metrics?: boolean | undefined
  /**
   * Add the process and Node.js metrics of prom-client's default collectors to `/metrics` (see
   * `Prometheus.text`). Default `true`.
   */
  readonly processMetrics?: boolean | undefined
}

/**
 * The address a server listens on; `port` is the bound port, also when `0`
 * was asked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Address {
  readonly host: string
  readonly port: number
}

/**
 * The server could not listen: the port is in use, the host cannot be bound,
 * or the port is not an integer in `0..65535`. `reason` is the system's
 * message (e.g. `listen EADDRINUSE: address already in use 127.0.0.1:8080`).
 *
 * @since 0.1.0
 * @category errors
 */
export class HealthServerError extends Data.TaggedError("HealthServerError")<{
  readonly host: string
  readonly port: number
  readonly reason: string
  readonly cause?: unknown
}> {
  /** @since 0.1.0 */
  override get message(): string {
    return `cannot serve on ${this.host}:${this.port}: ${this.reason}`
  }
}

/**
 * Starts the server and returns its address once it listens. The server stops
 * when the scope closes.
 *
 * @example
 * ```ts
 * import { Effect, Ref } from "effect"
 * import { HealthServer } from "@reconcile/core"
 *
 * const program = Effect.gen(function*() {
 *   const synced = yield* Ref.make(false)
 *   const { port } = yield* HealthServer.serve({ port: 8081, ready: Ref.get(synced) })
 *   // GET http://127.0.0.1:8081/readyz answers 503 until the caches sync
 *   yield* Ref.set(synced, true)
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve: (options: Options) => Effect.Effect<Address, HealthServerError, Scope.Scope> = internal.serve
