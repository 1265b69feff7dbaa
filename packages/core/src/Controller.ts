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
 * **Priorities.** With a priority queue (`queue: Workqueue.priority`), each event's
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
 * **Lifecycle.** A controller runs under the `Manager` ({@link make} and
 * {@link layer} require it): the Manager reports its readiness, ends when it
 * fails, and holds the replica's `LeaderElection`. Sources start once this
 * replica leads, or at once with `warmup: true`; workers
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
 * **The worker loop alone.** {@link run} is the same queue, workers and
 * decision table fed by a stream of requests, without sources, a Manager,
 * leader election or Kubernetes (kube-rs's `applier`): for embedding and for
 * tests of a reconcile's outcomes.
 *
 * @since 0.1.0
 */
import type { RateLimiter, Workqueue } from "@reconcile/workqueue"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Handler } from "./Handler.js"
import * as internal from "./internal/controller.js"
import { CacheSyncTimeout, type ControllerError, SourceFailed } from "./internal/controllerError.js"
import type { Watch } from "./internal/controllerSources.js"
import type { Debounce } from "./internal/debounce.js"
import type { Manager } from "./Manager.js"
import type { Predicate } from "./Predicates.js"
import type * as Reconcile from "./Reconcile.js"
import type * as Request from "./Request.js"
import type { Source } from "./Source.js"

// A source of a controller (`internal/controllerSources.ts` declares it, so that the sources need not import this
// module).
export type { Watch }

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

// The `debounce` option (declared by `internal/debounce.ts`, which resolves it).
export type { Debounce }

/**
 * Options of the worker loop, for {@link run} and every controller; every field has controller-runtime's default.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /** Number of workers (default 1). Never two reconciles of one key at once, whatever the number. */
  readonly maxConcurrentReconciles?: number | undefined
  /** Interrupt a reconcile that runs longer, and treat it as `Retryable` (default: no timeout). */
  readonly reconcileTimeout?: Duration.Input | undefined
  /** Recover defects as `Retryable` (default true); when false a defect fails the controller. */
  readonly recoverPanics?: boolean | undefined
  /** How long in-flight reconciles may run after shutdown begins (default 30 seconds). */
  readonly gracefulShutdownTimeout?: Duration.Input | undefined
  /**
   * The queue to make: `Workqueue.fifo` (client-go), `Workqueue.priority` (controller-runtime's priority queue),
   * or a `Workqueue.Make` of your own, tagged with its kind. Default: the `Workqueue.Maker` setting
   * (`Workqueue.layerMaker`), itself `Workqueue.fifo` by default. Each controller makes its own queue.
   */
  readonly queue?: Workqueue.Make | undefined
  /**
   * The rate limiter to make (`RateLimiter.Make`), made afresh for this controller. Default: the `RateLimiter.Maker`
   * setting (`RateLimiter.layerMaker`), else the queue kind's default: `RateLimiter.controllerDefault`
   * (`RateLimiter.priorityDefault` with a priority queue).
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
}

/**
 * Controller options: the worker loop's ({@link RunOptions}) and the sources'; every field has
 * controller-runtime's default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends RunOptions {
  /** How long workers wait for the sources to sync before the controller fails (default 2 minutes). */
  readonly cacheSyncTimeout?: Duration.Input | undefined
  /**
   * How long a source may stay disconnected (`Source.health`: no list, event or bookmark since its
   * connection failed) before the controller reports not ready — `/readyz` answers 503 — until it
   * reconnects (default 60 seconds).
   */
  readonly sourceDisconnectLimit?: Duration.Input | undefined
  /**
   * Start the sources before this replica leads, so that a follower's sources have synced when it takes over
   * (controller-runtime's `EnableWarmup`). Default `false`, as controller-runtime (`pkg/config/controller.go`,
   * `EnableWarmup`: "Defaults to false"): the sources start once leadership is acquired. With
   * `LeaderElection.layerAlwaysLeader` the replica always leads and the sources start at once either way.
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

// Why a controller stops (declared by `internal/controllerError.ts`, so that the sources make them without
// importing this module).
export { CacheSyncTimeout, type ControllerError, SourceFailed }

/**
 * Starts a controller in the current scope, under the `Manager` (which reports its readiness, ends when it fails and
 * decides when this replica leads), and returns its handle: for {@link addWatch}, or to read its queue.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <E, RW, F extends Effect.Effect<unknown, unknown, unknown> = Effect.Effect<void>>(
  config: Definition<E, RW, F>
) => Effect.Effect<Controller<E>, never, Manager | Effect.Services<F> | RW | Scope.Scope> = internal.make as any

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
 * A Layer running the controller for the lifetime of the Layer, under the `Manager` it requires (which reports its
 * readiness and fails when it fails). It exposes no handle: to add sources later ({@link addWatch}), use
 * {@link make}.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import {
 *   Controller,
 *   Handler,
 *   LeaderElection,
 *   Manager,
 *   type ObjectMeta,
 *   type Request,
 *   type Source
 * } from "@reconcile/core"
 *
 * declare const pods: Source.Source<ObjectMeta.HasMetadata> // e.g. a cache's source of Pods
 * const reconcile = (request: Request.Request) => Effect.log(`reconcile ${request.name}`)
 *
 * const Main = Layer.mergeAll(
 *   Controller.layer({ name: "pods", watches: [Controller.watch(pods, Handler.forObject)], reconcile })
 * ).pipe(
 *   Layer.provideMerge(Manager.layer({ healthPort: 8081 })),
 *   Layer.provide(LeaderElection.layerAlwaysLeader) // one replica
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, RW, F extends Effect.Effect<unknown, unknown, unknown> = Effect.Effect<void>>(
  config: Definition<E, RW, F>
): Layer.Layer<never, never, Manager | Exclude<Effect.Services<F> | RW, Scope.Scope>> =>
  Layer.effectDiscard(internal.make(config as Config<E, Effect.Services<F>, RW>))

/**
 * What {@link run} is made of: a stream of requests instead of sources.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunConfig<E, R, RS> {
  /** The `controller` label of metrics and logs, and the queue's name. */
  readonly name: string
  /** The requests to reconcile: each one is added to the queue (adds of a waiting key collapse). */
  readonly requests: Stream.Stream<Request.Request, E, RS>
  /** The reconcile for one key. */
  readonly reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>
  readonly options?: RunOptions | undefined
}

/**
 * A {@link RunConfig} as {@link run} reads it: the reconcile is checked by `Reconcile.Checked`, as in
 * {@link Definition}.
 *
 * @since 0.1.0
 * @category models
 */
export type RunDefinition<E, RS, F extends Effect.Effect<unknown, unknown, unknown>> =
  & Omit<RunConfig<E, never, RS>, "reconcile">
  & { readonly reconcile: (request: Request.Request) => Reconcile.Checked<F> }

/**
 * The worker loop alone (kube-rs's `applier`): the requests of a stream go into a queue of the controller's kind
 * (dedup, delays, per-key rate limiting) and `maxConcurrentReconciles` workers run the reconcile for each key with
 * the controller's decision table, metrics and logs — no sources, no `Manager`, no leader election, no Kubernetes.
 *
 * It runs until interrupted: the end of the stream stops nothing (retries and `RequeueAfter` go on). Interruption
 * stops the stream, lets in-flight reconciles finish within `gracefulShutdownTimeout`, then interrupts them. It
 * fails when the stream fails (after the same shutdown), and dies with a defect of the reconcile when
 * `recoverPanics` is `false`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Controller, Reconcile, Request } from "@reconcile/core"
 *
 * const requests = Stream.make(Request.make("a", "default"), Request.make("b", "default"))
 *
 * // reconcile "a" and "b"; "b" once more every minute
 * const program = Controller.run({
 *   name: "example",
 *   requests,
 *   reconcile: (request) => request.name === "b" ? Reconcile.requeueAfter("1 minute") : Effect.void,
 *   options: { maxConcurrentReconciles: 2 }
 * }) // Effect<never>
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run: <E, RS, F extends Effect.Effect<unknown, unknown, unknown> = Effect.Effect<void>>(
  config: RunDefinition<E, RS, F>
) => Effect.Effect<never, E, Effect.Services<F> | RS> = internal.run as any
