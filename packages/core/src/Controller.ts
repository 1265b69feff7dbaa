/**
 * The controller: sources feed a workqueue through predicates and handlers,
 * and `maxConcurrentReconciles` workers run the reconcile for each key.
 *
 * ```
 * Source ──Stream.filter(predicates)──▶ Handler ──▶ Workqueue ──▶ workers ──▶ reconcile ──▶ decide
 * ```
 *
 * The decision table (controller-runtime's, made explicit by the error channel):
 *
 * | reconcile ends with | queue action | `controller_runtime_reconcile_total{result}` |
 * |---|---|---|
 * | success | `forget` | `success` |
 * | `RequeueAfter(d)` | `forget`, then `addAfter(d)` | `requeue_after` |
 * | `Retryable` | rate-limited re-add (backoff grows) | `error`, `reconcile_errors_total`++ |
 * | `Terminal` | no requeue; logged once; waits for the next event | `error`, `reconcile_errors_total`++ and `terminal_reconcile_errors_total`++ |
 * | defect (throw, `Effect.die`) | as `Retryable` (with `recoverPanics`, the default) | `error`, `reconcile_panics_total`++ |
 * | `reconcileTimeout` exceeded | interrupted, as `Retryable` | `error`, `reconcile_timeouts_total`++ |
 *
 * `Terminal` counts in `reconcile_errors_total` too and does not `forget` the
 * key's backoff, as in controller-runtime.
 *
 * **Out-of-band events and backoff.** As in controller-runtime, an event that
 * arrives while a key waits for a rate-limited retry runs the key at once; if
 * that attempt fails too, the failure counts toward the key's backoff (the next
 * delay doubles), and the retry that was already scheduled still fires on
 * time. With `outOfBandFailures: "ignore"`, a failure while a retry is already
 * scheduled does not call the rate limiter: the scheduled retry stands and the
 * backoff does not grow.
 *
 * **Readiness.** A controller is ready once every source has synced, and stops
 * being ready while a source (a watch) has been disconnected for longer than
 * `sourceDisconnectLimit` (default 60 s); it is ready again as soon as the
 * source reconnects. Workers keep running meanwhile, on the cache they have.
 *
 * **Lifecycle.** Sources start at once; workers start only after every source
 * is synced (within `cacheSyncTimeout`, else the controller fails with
 * {@link CacheSyncTimeout} naming the sources) and this replica leads (the
 * `LeaderElection` service; always-leader by default). Closing the scope stops
 * the sources, lets in-flight reconciles finish within
 * `gracefulShutdownTimeout`, then interrupts them; no reconcile starts after
 * shutdown begins. Each reconcile runs with log annotations `controller`,
 * `namespace`, `name`, `reconcileID`, and in a span `reconcile` with the same
 * attributes when a tracer is installed (with effect's default in-memory
 * tracer, no span is made: tracing costs nothing unless it is used).
 *
 * @since 0.1.0
 */
import type { RateLimiter, Workqueue } from "@reconcile/workqueue"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Handler } from "./Handler.js"
import * as internal from "./internal/controller.js"
import type { LeadershipLost } from "./LeaderElection.js"
import type { Predicate } from "./Predicates.js"
import type * as Reconcile from "./Reconcile.js"
import type * as Request from "./Request.js"
import type { Health, Source } from "./Source.js"

/**
 * One source with its predicates and handler; the object type is erased so
 * that a controller can watch several kinds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Watch<E = never, R = never> {
  /** The source's name (used in sync-timeout errors and logs). */
  readonly name: string
  /** Runs the source, feeding the requests its handler yields to `enqueue`. */
  readonly run: (
    enqueue: (requests: ReadonlyArray<Request.Request>) => Effect.Effect<void>
  ) => Effect.Effect<void, E, R>
  /** Completes once the source has synced. */
  readonly synced: Effect.Effect<void>
  /** The source's connection (`Source.health`); absent: always connected. */
  readonly health?: Effect.Effect<Health> | undefined
}

/**
 * Builds a {@link Watch}: events of `source` that pass every predicate are
 * mapped to requests by `handler`.
 *
 * @example
 * ```ts
 * Controller.watch(pods, Handler.forObject, Predicates.generationChanged)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch: <A, E1, R1, E2 = never, R2 = never>(
  source: Source<A, E1, R1>,
  handler: Handler<A, E2, R2>,
  ...predicates: ReadonlyArray<Predicate<A>>
) => Watch<E1 | E2, R1 | R2> = internal.watch

/**
 * What happens to the backoff of a key that fails while a rate-limited retry
 * is already scheduled (an out-of-band attempt): `"count"` (controller-runtime)
 * or `"ignore"`.
 *
 * @since 0.1.0
 * @category models
 */
export type OutOfBandFailures = "count" | "ignore"

/**
 * Controller options; every field has controller-runtime's default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Number of workers (default 1). Never two reconciles of one key at once, whatever the number. */
  readonly maxConcurrentReconciles?: number | undefined
  /** Interrupt a reconcile that runs longer, and treat it as `Retryable` (default: no timeout). */
  readonly reconcileTimeout?: Duration.Input | undefined
  /** How long workers wait for the sources to sync before the controller fails (default 2 minutes). */
  readonly cacheSyncTimeout?: Duration.Input | undefined
  /**
   * How long a source may stay disconnected (`Source.health`: no list, event or bookmark since its
   * connection failed) before the controller reports not ready — `/readyz` answers 503 — until it
   * reconnects (default 60 seconds).
   */
  readonly sourceDisconnectLimit?: Duration.Input | undefined
  /** Recover defects as `Retryable` (default true); when false a defect fails the controller. */
  readonly recoverPanics?: boolean | undefined
  /** How long in-flight reconciles may run after shutdown begins (default 30 seconds). */
  readonly gracefulShutdownTimeout?: Duration.Input | undefined
  /** The queue: `"fifo"` (client-go, the default), `"priority"`, or a constructor such as `PriorityWorkqueue.make`. */
  readonly queue?:
    | "fifo"
    | "priority"
    | ((options: Workqueue.Workqueue.Options) => Effect.Effect<Workqueue.Workqueue.Service, never, Scope.Scope>)
    | undefined
  /**
   * The rate limiter, created afresh for this controller. Default:
   * `RateLimiter.controllerDefault` (`RateLimiter.priorityDefault` with the priority queue).
   */
  readonly rateLimiter?: Effect.Effect<RateLimiter.RateLimiter.Service> | undefined
  /** Backoff rule for out-of-band failures (default `"count"`, as controller-runtime). */
  readonly outOfBandFailures?: OutOfBandFailures | undefined
}

/**
 * What a controller is made of.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config<E, R, RW> {
  /** Unique controller name: the `controller` label of metrics and logs, and the queue's name. */
  readonly name: string
  /** The sources with their predicates and handlers. */
  readonly watches: ReadonlyArray<Watch<E, RW>>
  /** The reconcile for one key; its requirements become the controller's. */
  readonly reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>
  readonly options?: Options | undefined
}

/**
 * A running controller.
 *
 * @since 0.1.0
 * @category models
 */
export interface Controller<E = never> {
  readonly name: string
  /** The controller's own queue. */
  readonly queue: Workqueue.Workqueue.Service
  /** Whether every source has synced. */
  readonly synced: Effect.Effect<boolean>
  /**
   * Whether the controller is ready: every source has synced and none has been disconnected for longer
   * than `sourceDisconnectLimit`. The Manager's `/readyz` answers from it.
   */
  readonly ready: Effect.Effect<boolean>
  /** Whether the workers are running. */
  readonly started: Effect.Effect<boolean>
  /** Fails when the controller fails (sync timeout, a failed source, lost leadership, an unrecovered defect). */
  readonly await: Effect.Effect<never, ControllerError<E>>
}

/**
 * The sources did not sync within `cacheSyncTimeout`.
 *
 * @since 0.1.0
 * @category errors
 */
export class CacheSyncTimeout extends Data.TaggedError("CacheSyncTimeout")<{
  readonly controller: string
  /** The names of the sources that had not synced. */
  readonly sources: ReadonlyArray<string>
  readonly timeout: Duration.Duration
}> {
  override get message(): string {
    return `controller ${this.controller}: timed out waiting for sources to sync: ${this.sources.join(", ")}`
  }
}

/**
 * A source's stream failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class SourceFailed<E> extends Data.TaggedError("SourceFailed")<{
  readonly controller: string
  readonly source: string
  readonly cause: E
}> {
  override get message(): string {
    return `controller ${this.controller}: source ${this.source} failed`
  }
}

/**
 * Why a controller stopped.
 *
 * @since 0.1.0
 * @category errors
 */
export type ControllerError<E> = CacheSyncTimeout | SourceFailed<E> | LeadershipLost

/**
 * Starts a controller in the current scope and returns its handle. Uses the
 * `LeaderElection` service when one is in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <E, R, RW>(config: Config<E, R, RW>) => Effect.Effect<Controller<E>, never, R | RW | Scope.Scope> =
  internal.make

/**
 * A Layer running the controller for the lifetime of the Layer, registered
 * with the `Manager` when one is provided (which then reports its readiness
 * and fails when it fails).
 *
 * @example
 * ```ts
 * const Main = Layer.mergeAll(
 *   Controller.layer({ name: "pods", watches: [Controller.watch(pods, Handler.forObject)], reconcile })
 * ).pipe(Layer.provideMerge(Manager.layer({ healthPort: 8081 })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R, RW>(config: Config<E, R, RW>): Layer.Layer<never, never, Exclude<R | RW, Scope.Scope>> =>
  Layer.effectDiscard(internal.register(config))
