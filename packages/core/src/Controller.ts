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
 * time (with the priority queue, which merges the event into the waiting
 * retry, the next retry follows the new delay). With
 * `outOfBandFailures: "ignore"`, a failure while a retry is already scheduled
 * does not call the rate limiter: the scheduled retry stands, with either
 * queue, and the backoff does not grow.
 *
 * **Priorities.** With a priority queue (`queue: "priority"`), each event's
 * requests enter at the priority of its watch: the handler's rule
 * (`Handler.withPriority`), else the source's (`Source.withPriority`), else
 * `Handler.lowPriorityWhenUnchanged` (the initial list and resyncs at
 * `Handler.LowPriority`), so real changes after a restart go first. A key keeps
 * its priority through retries and `RequeueAfter`. A FIFO queue ignores them.
 *
 * **Readiness.** A controller is ready once every source has synced, and stops
 * being ready while a source (a watch) has been disconnected for longer than
 * `sourceDisconnectLimit` (default 60 s); it is ready again as soon as the
 * source reconnects. Workers keep running meanwhile, on the cache they have.
 * Before its sources start (a follower without `warmup`) a controller is
 * ready: readiness never waits for leadership.
 *
 * **Lifecycle.** Sources start once this replica leads (the `LeaderElection`
 * service; always-leader by default), or at once with `warmup: true`; workers
 * start only after every source is synced (within `cacheSyncTimeout`, else the
 * controller fails with {@link CacheSyncTimeout} naming the sources) and this
 * replica leads. {@link addWatch} adds a source later. Closing the scope stops
 * the sources, lets in-flight reconciles finish within
 * `gracefulShutdownTimeout`, then interrupts them; no reconcile starts after
 * shutdown begins. Each reconcile runs with log annotations `controller`,
 * `namespace`, `name`, `reconcileID` (unique per reconcile, a UUID: RFC 9562
 * version 8, a random per-process prefix and a counter), and in a span
 * `reconcile` with the same attributes when a tracer is installed (with
 * effect's default in-memory tracer, no span is made: tracing costs nothing
 * unless it is used).
 *
 * @since 0.1.0
 */
import type { RateLimiter, Workqueue } from "@reconcile/workqueue"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import { dual } from "effect/Function"
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
  /**
   * Runs the source, feeding the requests its handler yields to `enqueue`, with the priority of the event that
   * caused them (used by a priority queue; absent: 0).
   */
  readonly run: (
    enqueue: (requests: ReadonlyArray<Request.Request>, priority?: number | undefined) => Effect.Effect<void>
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
 * import { Controller, Handler, type ObjectMeta, Predicates, type Source } from "@reconcile/core"
 *
 * declare const pods: Source.Source<ObjectMeta.HasMetadata> // e.g. a cache's source of Pods
 *
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
 * The `debounce` option: a window, or a window with the longest a burst may be
 * held (`maxWait`, at least `window`; default `window`).
 *
 * @since 0.1.0
 * @category models
 */
export type Debounce = Duration.Input | {
  readonly window: Duration.Input
  readonly maxWait?: Duration.Input | undefined
}

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
  /**
   * The queue: `"fifo"` (client-go), `"priority"`, or a constructor such as `PriorityWorkqueue.make`. Default: the
   * constructor a Layer provides (`Workqueue.layerMaker`), else `"fifo"`. Each controller makes its own queue.
   */
  readonly queue?: "fifo" | "priority" | Workqueue.Workqueue.Make | undefined
  /**
   * The rate limiter to make (`RateLimiter.Make`), made afresh for this controller. Default: the maker a Layer
   * provides (`RateLimiter.layer`), else a `RateLimiter` instance a Layer provides (shared), else
   * `RateLimiter.controllerDefault` (`RateLimiter.priorityDefault` with the priority queue).
   */
  readonly rateLimiter?: RateLimiter.Make | undefined
  /**
   * Debounce of source events per key (kube-rs's trailing-edge debounce, bounded): an event opens a window; each
   * later event of the key within it pushes the reconcile to `window` after that event, but never later than
   * `maxWait` (default: `window`) after the first — so a key that changes constantly is still reconciled at least
   * once per `maxWait`. A Duration is `{ window }`. Retries and `requeueAfter` are not debounced. Default: off.
   */
  readonly debounce?: Debounce | undefined
  /** Backoff rule for out-of-band failures (default `"count"`, as controller-runtime). */
  readonly outOfBandFailures?: OutOfBandFailures | undefined
  /**
   * Start the sources before this replica leads, so that a follower's sources have synced when it takes over
   * (controller-runtime's `EnableWarmup`). Default `false`, as controller-runtime (`pkg/config/controller.go`,
   * `EnableWarmup`: "Defaults to false"): the sources start once leadership is acquired. Without a
   * `LeaderElection` service the replica always leads and the sources start at once either way.
   */
  readonly warmup?: boolean | undefined
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
  /** Whether every source has started and synced. */
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
  /** Adds a source: see {@link addWatch}. */
  readonly watch: <R>(watch: Watch<E, R>) => Effect.Effect<void, never, R | Scope.Scope>
}

/**
 * Adds a source to a controller at any time (controller-runtime's `Controller.Watch`), for operators that discover
 * kinds at run time. Before the controller's sources start (without `warmup`, until this replica leads) the source
 * is queued and starts with the others, and the workers wait for it to sync; once they run it starts at once, the
 * controller is not ready until it has synced, and the controller fails with {@link CacheSyncTimeout} if it has not
 * synced within `cacheSyncTimeout`. The source stops (its fiber is interrupted) and no longer counts for readiness
 * when the scope of the call closes. Adding a source to a controller that is shutting down does nothing.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Controller, Handler, type ObjectMeta, type Source } from "@reconcile/core"
 *
 * declare const controller: Controller.Controller<never> // from Controller.make
 * declare const discovered: Source.Source<ObjectMeta.HasMetadata> // a source of a kind found at run time
 *
 * const program = Effect.gen(function*() {
 *   yield* Controller.addWatch(controller, Controller.watch(discovered, Handler.forObject))
 * })
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const addWatch: {
  <E, R>(watch: Watch<E, R>): (self: Controller<E>) => Effect.Effect<void, never, R | Scope.Scope>
  <E, R>(self: Controller<E>, watch: Watch<E, R>): Effect.Effect<void, never, R | Scope.Scope>
} = dual(2, <E, R>(self: Controller<E>, watch: Watch<E, R>) => self.watch(watch))

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
export const make: <E, RW, F extends Effect.Effect<unknown, unknown, unknown> = Effect.Effect<void>>(
  config: Definition<E, RW, F>
) => Effect.Effect<Controller<E>, never, Effect.Services<F> | RW | Scope.Scope> = internal.make as any

/**
 * A {@link Config} as `make` and `layer` read it: the reconcile's effect `F` is checked by `Reconcile.Checked`, so a
 * reconcile that fails with an error that is not an outcome does not compile, at the reconcile, with a message that
 * names that error and says to use `Reconcile.classify`, `retryable` or `terminal`.
 *
 * @since 0.1.0
 * @category models
 */
export type Definition<E, RW, F extends Effect.Effect<unknown, unknown, unknown>> =
  & Omit<Config<E, never, RW>, "reconcile">
  & { readonly reconcile: (request: Request.Request) => Reconcile.Checked<F> }

/**
 * A Layer running the controller for the lifetime of the Layer, registered
 * with the `Manager` when one is provided (which then reports its readiness
 * and fails when it fails). It exposes no handle: to add sources later
 * ({@link addWatch}), use {@link make}.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Controller, Handler, Manager, type ObjectMeta, type Request, type Source } from "@reconcile/core"
 *
 * declare const pods: Source.Source<ObjectMeta.HasMetadata> // e.g. a cache's source of Pods
 * const reconcile = (request: Request.Request) => Effect.log(`reconcile ${request.name}`)
 *
 * const Main = Layer.mergeAll(
 *   Controller.layer({ name: "pods", watches: [Controller.watch(pods, Handler.forObject)], reconcile })
 * ).pipe(Layer.provideMerge(Manager.layer({ healthPort: 8081 })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, RW, F extends Effect.Effect<unknown, unknown, unknown> = Effect.Effect<void>>(
  config: Definition<E, RW, F>
): Layer.Layer<never, never, Exclude<Effect.Services<F> | RW, Scope.Scope>> =>
  Layer.effectDiscard(internal.register(config as Config<E, Effect.Services<F>, RW>))
