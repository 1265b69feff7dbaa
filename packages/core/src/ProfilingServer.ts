/**
 * Profiles on demand, what `net/http/pprof` is to controller-runtime's users (`PprofBindAddress`): a debug HTTP
 * server, off unless started, serving a CPU profile and a heap snapshot of the running process in the formats
 * Chrome DevTools opens.
 *
 * | request | response |
 * |---|---|
 * | `GET /debug/pprof/profile?seconds=N` | `200`, a CPU profile of the next `N` seconds (default 30, at most 300) as a `.cpuprofile` attachment |
 * | `GET /debug/pprof/heap` | `200`, a V8 heap snapshot as a `.heapsnapshot` attachment, streamed |
 * | `GET /debug/pprof/` | `200`, an index naming both |
 * | either, while a profile or a heap snapshot is being taken | `409` (one at a time) |
 * | from a non-loopback address, unless allowed | `403` |
 * | anything else | `404` |
 *
 * - **Bound to `127.0.0.1`** unless told otherwise; a request from a non-loopback address is refused (`403`) unless
 *   `allowRemote`, which is the default only when `host` names a non-loopback address (binding one is the opt-in).
 *   In a cluster, reach it with `kubectl port-forward`, which connects from the Pod's loopback.
 * - **A CPU profile** is V8's sampling profiler through `node:inspector` (`Profiler.start`, `Profiler.stop` of a
 *   session of this process): the wait is a sleep on the fiber's `Clock`, so reconciles run meanwhile, slowed only by
 *   the sampling (about a thousand stack samples a second). Closing the connection stops it. `seconds` may be a
 *   fraction (`0.5`).
 * - **A heap snapshot** stops the process while V8 walks the heap and then again while it writes it out (both are
 *   synchronous in V8): reconciles, probes and watches wait that long, roughly a second per few hundred MB of heap.
 *   The snapshot is streamed to the client chunk by chunk (`v8.getHeapSnapshot()`), never built as one string; its
 *   chunks are held until sent, about the size of the file.
 * - Requests are not traced, like the Manager's probes.
 *
 * Node.js only, like `HealthServer`: `node:inspector` and `node:v8` are loaded on the first request (a Node built
 * without the inspector answers `501` to a CPU profile).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as HealthServer from "./HealthServer.js"
import * as internal from "./internal/profilingServer.js"

/**
 * Where {@link serve} listens, and who may ask.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The address to bind. Default `"127.0.0.1"` (loopback only). */
  readonly host?: string | undefined
  /** The port to bind; `0` (the default) picks a free port, see {@link Address}. */
  readonly port?: number | undefined
  /**
   * Answer requests from non-loopback addresses. Default: `true` when `host` is given and is not a loopback address
   * (`127.0.0.0/8`, `::1`, `localhost`), else `false` (such requests get `403`).
   */
  readonly allowRemote?: boolean | undefined
}

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
export class ProfilingServerError extends Data.TaggedError("ProfilingServerError")<{
  readonly host: string
  readonly port: number
  readonly reason: string
  readonly cause?: unknown
}> {
  /** @since 0.1.0 */
  override get message(): string {
    return `cannot serve profiles on ${this.host}:${this.port}: ${this.reason}`
  }
}

/**
 * The longest CPU profile one request may ask for, in seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxSeconds: number = internal.maxSeconds

/**
 * Starts the server and returns its address once it listens. The server stops when the scope closes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ProfilingServer } from "@reconcile/core"
 *
 * const program = Effect.gen(function*() {
 *   const { port } = yield* ProfilingServer.serve({ port: 6060 })
 *   // curl -o cpu.cpuprofile "http://127.0.0.1:6060/debug/pprof/profile?seconds=10"
 *   // curl -o heap.heapsnapshot http://127.0.0.1:6060/debug/pprof/heap
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve: (options?: Options) => Effect.Effect<Address, ProfilingServerError, Scope.Scope> = internal.serve
