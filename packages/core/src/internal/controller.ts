import { updater } from "@reconcile/workqueue/WorkqueueMetrics"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type * as Controller from "../Controller.js"
import type { Handler } from "../Handler.js"
import { Inspector } from "../Inspector.js"
import { Manager } from "../Manager.js"
import type { Predicate } from "../Predicates.js"
import type * as Reconcile from "../Reconcile.js"
import * as Request from "../Request.js"
import type { Source } from "../Source.js"
import * as metrics from "./controllerMetrics.js"
import * as controllerQueue from "./controllerQueue.js"
import * as controllerSources from "./controllerSources.js"
import * as debounce from "./debounce.js"
import type * as inspector from "./inspector.js"
import * as logging from "./logging.js"
import * as queueOptions from "./queueOptions.js"
import * as reconcileId from "./reconcileId.js"

/** An effect that is already a successful `Exit` (as `Effect.succeed` makes): its value is there without running it. */
const isSuccess = <A, E, R>(effect: Effect.Effect<A, E, R>): effect is Exit.Success<A, E> =>
  Exit.isExit(effect) && Exit.isSuccess(effect)

/** @internal */
export const watch = <A, E1, R1, E2 = never, R2 = never>(
  source: Source<A, E1, R1>,
  handler: Handler<A, E2, R2>,
  ...predicates: ReadonlyArray<Predicate<A>>
): Controller.Watch<E1 | E2, R1 | R2> => ({
  name: source.name,
  synced: source.synced,
  health: source.health,
  run: (enqueue, observe) => {
    if (observe !== undefined) return observed(source, handler, predicates, enqueue, observe)
    const events = predicates.length === 0 ? source.events : Stream.filter(source.events, (event) => {
      for (const p of predicates) if (!p(event)) return false
      return true
    })
    // The handler's rule, then the source's, then the default (internal/controllerQueue.ts).
    const priority = controllerQueue.priorityOf(handler.priority, source.priority)
    return Stream.runForEach(events, (event) => {
      const requests = handler(event)
      // A handler that answers at once (`forObject`: an `Effect.succeed`) needs no flatMap.
      return isSuccess(requests)
        ? enqueue(requests.value, priority(event))
        : Effect.flatMap(requests, (rs) => enqueue(rs, priority(event)))
    })
  }
})

/**
 * A watch's run while an inspector records (`Controller.watch` without one is the plain pipeline above): each event's
 * predicates are evaluated one by one (stopping at the first that fails, as `Stream.filter` does) and the verdict is
 * recorded under the keys its requests name. A dropped event's keys are those the handler maps it to, the handler
 * being run for it only here; its failure then changes nothing (the event was dropped).
 */
const observed = <A, E1, R1, E2, R2>(
  source: Source<A, E1, R1>,
  handler: Handler<A, E2, R2>,
  predicates: ReadonlyArray<Predicate<A>>,
  enqueue: Parameters<Controller.Watch["run"]>[0],
  observe: NonNullable<Parameters<Controller.Watch["run"]>[1]>
): Effect.Effect<void, E1 | E2, R1 | R2> => {
  const record = observe({
    source: source.name,
    predicates: predicates.map((p, i) => p.name === "" ? `predicate ${i + 1}` : p.name)
  })
  const priority = controllerQueue.priorityOf(handler.priority, source.priority)
  return Stream.runForEach(source.events, (event): Effect.Effect<void, E2, R2> => {
    let evaluated = 0
    let passed = true
    for (const p of predicates) {
      evaluated++
      if (!p(event)) {
        passed = false
        break
      }
    }
    const requests = handler(event)
    const recordAll = (rs: ReadonlyArray<Request.Request>) => {
      for (const r of rs) record(Request.key(r), event._tag, evaluated, passed)
    }
    if (passed) {
      if (isSuccess(requests)) {
        recordAll(requests.value)
        return enqueue(requests.value, priority(event))
      }
      return Effect.flatMap(requests, (rs) => {
        recordAll(rs)
        return enqueue(rs, priority(event))
      })
    }
    return Effect.catchCause(Effect.map(requests, recordAll), () => Effect.void)
  })
}

/** A reconcile's outcome as its span's `outcome` attribute names it. */
const outcomeOf = (exit: Exit.Exit<void, Reconcile.Outcome | ReconcileTimeout>): inspector.Outcome => {
  if (Exit.isSuccess(exit)) return "success"
  const failed = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failed)) {
    switch (failed.value._tag) {
      case "RequeueAfter":
        return "requeueAfter"
      case "Retryable":
        return "error"
      case "Terminal":
        return "terminal"
      case "ReconcileTimeout":
        return "timeout"
    }
  }
  return Cause.hasInterruptsOnly(exit.cause) ? "interrupted" : "panic"
}

/** The log annotations of a reconcile (`controller`, `namespace`, `name`, `reconcileID`), also its span attributes. */
type ReconcileAnnotations = Readonly<Record<"controller" | "namespace" | "name" | "reconcileID", string>>

class ReconcileTimeout {
  readonly _tag = "ReconcileTimeout"
}

const defaults = {
  maxConcurrentReconciles: 1,
  cacheSyncTimeout: Duration.minutes(2),
  sourceDisconnectLimit: Duration.seconds(60),
  gracefulShutdownTimeout: Duration.seconds(30)
}

/**
 * The worker loop of a controller, without its sources: the queue, `maxConcurrentReconciles` workers, the reconcile of
 * each key with its outcome's queue action, metrics and logs, and the graceful shutdown, registered on the current
 * scope (the feed's scope closes first, then the queue drains within `gracefulShutdownTimeout`). `make` feeds it from
 * its sources, `run` from a stream of requests.
 */
const loop = <R, X>(params: {
  readonly name: string
  readonly options: Controller.RunOptions
  readonly reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>
  /** Where an unrecovered defect (`recoverPanics: false`) goes. */
  readonly failure: Deferred.Deferred<never, X>
}) =>
  Effect.gen(function*() {
    const { failure, name, options, reconcile } = params
    const workers = Math.max(1, Math.floor(options.maxConcurrentReconciles ?? defaults.maxConcurrentReconciles))
    const gracefulShutdownTimeout = Duration.fromInputUnsafe(
      options.gracefulShutdownTimeout ?? defaults.gracefulShutdownTimeout
    )
    const reconcileTimeout = options.reconcileTimeout === undefined
      ? undefined
      : Duration.fromInputUnsafe(options.reconcileTimeout)
    const recoverPanics = options.recoverPanics ?? true
    const ignoreOutOfBand = options.outOfBandFailures === "ignore"
    // The queue constructor and the limiter: options, else the makers a Layer provides, else defaults.
    const { limiter, makeQueue } = yield* queueOptions.resolve(options)
    // Metrics are updated synchronously against this context: its `MetricRegistry` holds the series.
    const context = yield* Effect.context<never>()
    const m = metrics.make(name)
    metrics.initialize(m, workers, context)
    // The series of the per-reconcile updates, resolved once (WorkqueueMetrics.updater).
    const record = {
      success: updater(m.total.success, context),
      error: updater(m.total.error, context),
      requeueAfter: updater(m.total.requeue_after, context),
      errors: updater(m.errors, context),
      terminalErrors: updater(m.terminalErrors, context),
      panics: updater(m.panics, context),
      timeouts: updater(m.timeouts, context),
      reconcileTime: updater(m.reconcileTime, context),
      activeWorkers: updater(m.activeWorkers, context)
    }
    const clock = yield* Clock.Clock
    // The debug line of a successful reconcile, made once; none when the minimum level hides debug (workers run in
    // this context, so their level is this one).
    const debug = !LogLevel.isGreaterThan(yield* References.MinimumLogLevel, "Debug")
    const logSuccess = debug ? Effect.logDebug("Reconcile successful") : undefined
    // each reconcile's first line (its last is its outcome's): with the reconcileID, overlapping reconciles of one
    // object — across replicas too, whose lines name them — can be found from the logs alone
    const logStart = debug ? Effect.logDebug("Reconcile started") : undefined
    const logInterrupted = debug ? Effect.logDebug("Reconcile interrupted") : undefined
    // effect 4's default tracer is the in-memory native tracer, whose spans nothing can observe: a reconcile runs in a
    // span only when a real tracer is installed (and tracing is enabled), so tracing costs nothing unless it is used.
    const tracer = yield* Effect.tracer
    const traced = tracer !== Tracer.nativeTracer && (yield* References.TracerEnabled)
    // The inspector, when one is in the context (looked up once): without it nothing below records anything.
    const inspecting = Option.getOrUndefined(yield* Effect.serviceOption(Inspector))

    const outer = yield* Effect.scope
    // The queue, the feed (sources or a stream) and the workers live in scopes of their own, closed in order by the
    // shutdown finalizer (registered before anything is fed or any worker starts), whatever the finalizer strategy of
    // the caller's scope.
    const queueScope = yield* Scope.make()
    const feedScope = yield* Scope.make("sequential")
    const workersScope = yield* Scope.make("parallel")
    const workerFibers: Array<Fiber.Fiber<void>> = []
    let stopping = false
    let started = false
    let active = 0

    const queue = yield* Scope.provide(makeQueue({ name, controller: name, rateLimiter: limiter }), queueScope)
    // Priorities and retries (`outOfBandFailures`): internal/controllerQueue.ts.
    const keys = controllerQueue.make({ queue, limiter, ignoreOutOfBand })
    const recorder = inspecting?.register({ name, workers, busy: () => active, queue, limiter, clock })
    if (recorder !== undefined) yield* Scope.addFinalizer(outer, Effect.sync(recorder.unregister))

    // --- shutdown: stop the feed, drain in-flight reconciles within the grace period, then interrupt.
    yield* Scope.addFinalizer(
      outer,
      Effect.gen(function*() {
        stopping = true
        yield* Scope.close(feedScope, Exit.void)
        yield* queue.shutdown
        const drained = yield* Fiber.awaitAll(workerFibers).pipe(
          Effect.timeoutOption(gracefulShutdownTimeout),
          Effect.map(Option.isSome)
        )
        if (!drained) yield* Effect.logWarning("graceful shutdown timed out; interrupting reconciles")
        yield* Scope.close(workersScope, Exit.void)
        yield* Scope.close(queueScope, Exit.void)
      }).pipe(Effect.annotateLogs({ controller: name }))
    )

    const enqueueNow = (requests: ReadonlyArray<Request.Request>, priority?: number | undefined) =>
      requests.length === 1
        ? keys.add(Request.key(requests[0]!), priority)
        : Effect.forEach(requests, (request) => keys.add(Request.key(request), priority), { discard: true })
    // `debounce` (internal/debounce.ts): events of a key within the window collapse into one add.
    const enqueue = yield* debounce.wrap(options.debounce, enqueueNow, feedScope)

    // --- one reconcile --------------------------------------------------------
    // Per reconcile: the request's log annotations, a span only when traced, then the metrics, `decide` and `done` in
    // one finalizer that sees the reconcile's exit (also when the worker is interrupted). The worker records the
    // start (`startedAt`, `active`), sets the annotations and runs this; the finalizer's own logs carry them too.
    const reconcileOf = (
      request: Request.Request
    ): Effect.Effect<void, Reconcile.Outcome | ReconcileTimeout, R> => {
      // The reconcile's effect is made here, in the worker's fiber with the annotations (and the span) set, rather
      // than in an `Effect.suspend` one step later: a throw becomes the same defect (a panic).
      let run: Effect.Effect<void, Reconcile.Outcome | ReconcileTimeout, R>
      try {
        run = reconcile(request)
      } catch (defect) {
        run = Effect.die(defect)
      }
      if (reconcileTimeout !== undefined) {
        run = Effect.timeoutOrElse(run, {
          duration: reconcileTimeout,
          orElse: () => Effect.fail(new ReconcileTimeout())
        })
      }
      return run
    }

    // --- the reconcile's span (only when traced) ---------------------------------
    // Made by the worker before the reconcile starts and set on its fiber with the annotations, ended once the
    // finalizer has logged the outcome: the reconcile's API requests are its children, and every line of the
    // reconcile (its start, its outcome) carries its trace and span IDs. Attributes: the annotations, `attempt` (the
    // key's failures so far + 1, from the rate limiter), `queue.wait_ms` (how long the key waited in the queue
    // before this reconcile) and `outcome`; the span fails (status error) on an error
    // outcome, not on a `RequeueAfter`.
    const startSpan = (key: string, annotations: ReconcileAnnotations): Effect.Effect<Tracer.Span> =>
      Effect.flatMap(Effect.zip(limiter.numRequeues(key), queue.queueWait(key)), ([failures, waited]) =>
        Effect.makeSpan("reconcile", {
          attributes: {
            ...annotations,
            attempt: failures + 1,
            ...(Option.isSome(waited) ? { "queue.wait_ms": Duration.toMillis(waited.value) } : {})
          },
          kind: "internal"
        }))

    const endSpan = (span: Tracer.Span, exit: Exit.Exit<void, Reconcile.Outcome | ReconcileTimeout>) => {
      const outcome = outcomeOf(exit)
      span.attribute("outcome", outcome)
      span.end(clock.currentTimeNanosUnsafe(), outcome === "requeueAfter" ? Exit.void : exit)
    }

    /** The reconcile's finalizer: metrics, then the outcome's queue action and `done`. */
    const finish = (
      key: string,
      startedAt: number,
      exit: Exit.Exit<void, Reconcile.Outcome | ReconcileTimeout>
    ): Effect.Effect<void> => {
      record.activeWorkers(--active)
      record.reconcileTime((clock.currentTimeMillisUnsafe() - startedAt) / 1000)
      // A finalizer is uninterruptible: a success only forgets the key (synchronous for every built-in limiter);
      // a failure's retry asks the rate limiter, which may be a custom one that waits, so it stays interruptible
      // (as before) and `done` still runs.
      if (Exit.isSuccess(exit)) {
        record.success(1)
        const forget = keys.forgetThenDone(key)
        return logSuccess === undefined ? forget : Effect.andThen(logSuccess, forget)
      }
      // interrupted (the worker itself is): its last line here, not in `decide`'s interruptible part, which an
      // interrupted fiber skips
      if (Cause.hasInterruptsOnly(exit.cause)) {
        return logInterrupted === undefined ? keys.done(key) : Effect.andThen(logInterrupted, keys.done(key))
      }
      return Effect.ensuring(Effect.interruptible(decide(key, exit.cause)), keys.done(key))
    }

    // Outcome logging (controller-runtime's messages): success and RequeueAfter at debug; Retryable, Terminal and
    // timeouts at error with the error's message on one line (no stack: they are expected outcomes); a panic at error
    // with its cause, whose stack the formatter keeps (internal/logging.ts).
    const retryable = (
      key: string,
      log: Effect.Effect<void>,
      priority?: number | undefined
    ) =>
      Effect.andThen(
        Effect.sync(() => {
          record.errors(1)
          record.error(1)
        }),
        Effect.andThen(log, keys.retry(key, priority))
      )

    const decide = (key: string, cause: Cause.Cause<Reconcile.Outcome | ReconcileTimeout>): Effect.Effect<void> => {
      const failed = Cause.findErrorOption(cause)
      if (Option.isSome(failed)) {
        const error = failed.value
        switch (error._tag) {
          case "RequeueAfter":
            record.requeueAfter(1)
            return Effect.andThen(
              Effect.logDebug("Reconcile done, requeueing after").pipe(
                Effect.annotateLogs("requeueAfter", Duration.format(error.after))
              ),
              Effect.andThen(keys.forget(key), keys.requeueAfter(key, error.after, error.priority))
            )
          case "Retryable":
            return retryable(
              key,
              Effect.logError("Reconciler error").pipe(Effect.annotateLogs("error", outcomeText(error))),
              error.priority
            )
          case "ReconcileTimeout":
            record.timeouts(1)
            return retryable(
              key,
              Effect.logError("Reconcile timed out").pipe(
                Effect.annotateLogs("error", `reconcileTimeout ${Duration.format(reconcileTimeout!)} exceeded`)
              )
            )
          case "Terminal":
            record.terminalErrors(1)
            record.errors(1)
            record.error(1)
            keys.clearRetry(key)
            return Effect.logError("Terminal reconciler error: no retry until the next change").pipe(
              Effect.annotateLogs("error", outcomeText(error))
            )
        }
      }
      if (Cause.hasInterruptsOnly(cause)) {
        return Effect.void
      }
      // A defect: a throw or Effect.die inside the reconcile.
      record.panics(1)
      const defects = Cause.fromReasons<never>(
        cause.reasons.filter((reason): reason is Cause.Die | Cause.Interrupt =>
          !Cause.isFailReason(reason)
        )
      )
      if (!recoverPanics) {
        record.error(1)
        return Effect.andThen(
          Effect.logError("Observed a panic in reconciler", defects),
          Deferred.failCause(failure, defects)
        )
      }
      return retryable(key, Effect.logError("Observed a panic in reconciler", defects))
    }

    /**
     * The inspector's message of a reconcile that did not succeed: what its error line in the log says, redacted as
     * the log is (`Logging.redact`); a defect as its one-line error text (no stack).
     */
    const inspectedMessage = (exit: Exit.Exit<void, Reconcile.Outcome | ReconcileTimeout>): string | undefined => {
      if (Exit.isSuccess(exit)) return undefined
      const failed = Cause.findErrorOption(exit.cause)
      if (Option.isSome(failed)) {
        const error = failed.value
        switch (error._tag) {
          case "RequeueAfter":
            return `requeue after ${Duration.format(error.after)}`
          case "Retryable":
          case "Terminal":
            return logging.redactText(
              shownCause(error.cause) ? outcomeText(error) : `${error.message ?? error._tag}${notShown(error.cause)}`
            )
          case "ReconcileTimeout":
            return `reconcileTimeout ${Duration.format(reconcileTimeout!)} exceeded`
        }
      }
      const defect = exit.cause.reasons.find(Cause.isDieReason)
      if (defect === undefined) return undefined
      return shownCause(defect.defect)
        ? logging.redactText(logging.errorText(defect.defect))
        : `a defect${notShown(defect.defect)}`
    }

    // --- workers ----------------------------------------------------------------
    // The log annotations of a reconcile are set on the worker's fiber and put back once the reconcile's finalizer is
    // over, as `Effect.annotateLogs` does, without the frames it pushes per call (the context is the worker's own
    // between reconciles: nothing else in the loop changes it, and an interrupted worker ends).
    const worker: Effect.Effect<void, never, R> = Effect.withFiber((fiber) => {
      const outer = fiber.context
      // `Effect.annotateLogs` merges: the annotations the worker inherited first, then the reconcile's. Usually the
      // inherited ones are the controller's own `controller` (startWorkers), and the reconcile's object serves alone.
      const inherited = fiber.getRef(References.CurrentLogAnnotations)
      const mergeInherited = Object.keys(inherited).some((key) => key !== "controller")
      // A worker runs one reconcile at a time: its key and start time, and one finalizer closure for all of them.
      let key = ""
      let startedAt = 0
      let span: Tracer.Span | undefined
      let recorded: inspector.Started | undefined
      const onExit = (exit: Exit.Exit<void, Reconcile.Outcome | ReconcileTimeout>) => {
        if (recorded !== undefined) {
          recorder!.finished(key, recorded, outcomeOf(exit), inspectedMessage(exit))
          recorded = undefined
        }
        if (span === undefined) return finish(key, startedAt, exit)
        const ending = span
        return Effect.ensuring(finish(key, startedAt, exit), Effect.sync(() => endSpan(ending, exit)))
      }
      return Effect.gen(function*() {
        while (true) {
          key = yield* keys.take
          if (stopping) {
            yield* keys.done(key)
            return
          }
          startedAt = clock.currentTimeMillisUnsafe()
          record.activeWorkers(++active)
          const request = Request.fromKey(key)
          const annotations: ReconcileAnnotations = {
            controller: name,
            namespace: request.namespace ?? "",
            name: request.name,
            reconcileID: reconcileId.next()
          }
          const annotated = Context.add(
            outer,
            References.CurrentLogAnnotations,
            mergeInherited ? { ...inherited, ...annotations } : annotations
          )
          if (traced) {
            span = yield* startSpan(key, annotations)
            fiber.setContext(Context.add(annotated, Tracer.ParentSpan, span))
          } else {
            fiber.setContext(annotated)
          }
          if (recorder !== undefined) {
            const failures = yield* limiter.numRequeues(key)
            recorded = recorder.started(key, annotations.reconcileID, failures + 1, traced ? span?.traceId : undefined)
          }
          if (logStart !== undefined) yield* logStart
          // `Effect.exit`: the outcome was handled by `decide`, the worker goes on.
          yield* Effect.exit(Effect.onExitPrimitive(reconcileOf(request), onExit))
          fiber.setContext(outer)
        }
      })
    }).pipe(Effect.catchTag("WorkqueueShutdown", () => Effect.void))

    /** Starts the workers (once; not after shutdown began). */
    const startWorkers = Effect.gen(function*() {
      if (stopping || started) return
      for (let i = 0; i < workers; i++) workerFibers.push(yield* Effect.forkIn(worker, workersScope))
      started = true
      yield* Effect.logInfo("Starting workers").pipe(Effect.annotateLogs("worker count", workers))
    })

    /** Stops taking keys at once and interrupts the workers (leadership lost). */
    const halt = Effect.suspend(() => {
      stopping = true
      return Effect.andThen(queue.shutdown, Fiber.interruptAll(workerFibers))
    })

    return {
      queue,
      recorder,
      enqueue,
      feedScope,
      workersScope,
      startWorkers,
      halt,
      stopping: () => stopping,
      started: () => started
    }
  })

/** @internal */
export const make = <E, R, RW>(
  config: Controller.Config<E, R, RW>
): Effect.Effect<Controller.Controller<E>, never, Manager | R | RW | Scope.Scope> =>
  Effect.gen(function*() {
    const name = config.name
    const options = config.options ?? {}
    const cacheSyncTimeout = Duration.fromInputUnsafe(options.cacheSyncTimeout ?? defaults.cacheSyncTimeout)
    const disconnectLimit = Duration.toMillis(
      Duration.fromInputUnsafe(options.sourceDisconnectLimit ?? defaults.sourceDisconnectLimit)
    )
    // The Manager supervises the controller (readiness, failure) and holds the replica's election.
    const manager = yield* Manager
    const election = manager.leaderElection
    const failure = yield* Deferred.make<never, Controller.ControllerError<E>>()
    const workers = yield* loop({ name, options, reconcile: config.reconcile, failure })

    // --- sources (internal/controllerSources.ts): with `warmup` they start now, else once this replica leads --
    const sources = controllerSources.make<E>({
      name,
      scope: workers.feedScope,
      enqueue: workers.enqueue,
      failure,
      cacheSyncTimeout,
      stopping: workers.stopping,
      observe: workers.recorder?.observe
    })
    workers.recorder?.setSources(sources.states)
    for (const w of config.watches) yield* sources.addInitial(w)
    if (options.warmup === true || (yield* election.isLeader)) yield* sources.startAll

    const startWorkers = Effect.gen(function*() {
      if (!sources.started()) {
        yield* election.awaitLeadership
        yield* sources.startAll
      }
      yield* sources.awaitInitialSync
      yield* Effect.logDebug("sources synced")
      yield* election.awaitLeadership
      yield* workers.startWorkers
    }).pipe(
      Effect.catch((error) => Deferred.fail(failure, error)),
      Effect.annotateLogs({ controller: name })
    )
    yield* Effect.forkIn(startWorkers, workers.workersScope)

    // Leadership lost: stop the workers and fail.
    yield* election.awaitLoss.pipe(
      Effect.flatMap((lost) => Effect.andThen(workers.halt, Deferred.fail(failure, lost))),
      Effect.forkIn(workers.feedScope)
    )

    const synced = sources.synced
    /** Sources disconnected for longer than the limit (a disconnection of exactly the limit is still tolerated). */
    const disconnected = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.filter(sources.running(), (w) =>
        w.health === undefined
          ? Effect.succeed(false)
          : Effect.map(w.health, (health) =>
            health._tag === "Disconnected" && now - health.since > disconnectLimit)))
    const controller: Controller.Controller<E> = {
      name,
      queue: workers.queue,
      synced,
      // Before its sources start (a follower without warmup) a controller is ready: readiness ignores leadership.
      ready: Effect.flatMap(Effect.sync(sources.runningSynced), (ok) =>
        ok
          ? Effect.map(disconnected, (ws) =>
            ws.length === 0)
          : Effect.succeed(false)),
      started: Effect.sync(workers.started),
      await: Deferred.await(failure),
      watch: sources.add
    }
    yield* manager.register({ name, ready: controller.ready, await: controller.await })
    return controller
  })

/** @internal */
export const run = <E, R, RS>(config: Controller.RunConfig<E, R, RS>): Effect.Effect<never, E, R | RS> =>
  Effect.scoped(Effect.gen(function*() {
    const failure = yield* Deferred.make<never, E>()
    const workers = yield* loop({
      name: config.name,
      options: config.options ?? {},
      reconcile: config.reconcile,
      failure
    })
    yield* workers.startWorkers.pipe(Effect.annotateLogs({ controller: config.name }))
    // The requests: each one is added to the queue; a failed stream fails `run` (after the graceful shutdown).
    yield* Stream.runForEach(config.requests, (request) => workers.enqueue([request])).pipe(
      Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Deferred.failCause(failure, cause)),
      Effect.forkIn(workers.feedScope)
    )
    return yield* Deferred.await(failure)
  }))

/**
 * Whether the inspector shows a cause as text: a string or an error (its message and its causes' are shown,
 * redacted). Any other value — an object, which may be the Secret the reconcile read — is not shown: a log record
 * drops only the fields whose names say they are secret, the inspector keeps nothing of it.
 */
const shownCause = (cause: unknown): boolean =>
  cause === undefined || typeof cause === "string" || cause instanceof Error ||
  (typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string" &&
    (("_tag" in cause && typeof cause._tag === "string") || ("name" in cause && typeof cause.name === "string")))

/** What the inspector says of a cause it does not show. */
const notShown = (cause: unknown): string =>
  ` (caused by ${cause === null ? "null" : Array.isArray(cause) ? "an array" : `a value of type ${typeof cause}`}: ` +
  "not shown by the inspector)"

/**
 * A `Retryable`'s or `Terminal`'s error on one line: its cause as `_tag: message` (`Logging.formatError`), preceded by
 * the outcome's own message when that says something else (`could not apply: Conflict: …`).
 */
const outcomeText = (outcome: Reconcile.Retryable | Reconcile.Terminal): string => {
  const inner = outcome.cause === undefined ? undefined : logging.errorText(outcome.cause)
  const message = outcome.message
  if (message === undefined || message === "") return inner ?? outcome._tag
  if (inner === undefined || inner.includes(message)) return inner ?? message
  return `${message}: ${inner}`
}
