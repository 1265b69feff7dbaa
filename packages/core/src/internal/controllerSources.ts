/**
 * The sources of one controller: the watches it was made with plus those added by `Controller.addWatch`, before
 * the sources start (queued, started with the others) or after (started at once). Tracks which have synced and
 * which are disconnected, for the controller's `synced` / `ready` and its cache-sync timeout.
 *
 * A source of a controller, {@link Watch}, is declared here and re-exported by the public `Controller` module,
 * which this module does not import.
 */
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as Request from "../Request.js"
import type { Health } from "../Source.js"
import { CacheSyncTimeout, type ControllerError, SourceFailed } from "./controllerError.js"

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
   * caused them (used by a priority queue; absent: 0). With `observe` (an `Inspector` records the controller), it
   * also reports each event's predicate verdicts under the keys it maps to.
   */
  readonly run: (
    enqueue: (requests: ReadonlyArray<Request.Request>, priority?: number | undefined) => Effect.Effect<void>,
    observe?: Observe | undefined
  ) => Effect.Effect<void, E, R>
  /** Completes once the source has synced. */
  readonly synced: Effect.Effect<void>
  /** The source's connection (`Source.health`); absent: always connected. */
  readonly health?: Effect.Effect<Health> | undefined
}

type Enqueue = Parameters<Watch["run"]>[0]

/**
 * How a watch reports its events to an inspector: called once per run with the source's name and its predicates'
 * names, it returns what each event calls with a key it maps to, its type (`Create`, …), how many predicates were
 * evaluated (up to the first that failed) and whether the event was enqueued.
 *
 * @since 0.1.0
 * @category models
 */
export type Observe = (watch: {
  readonly source: string
  readonly predicates: ReadonlyArray<string>
}) => (key: string, type: string, evaluated: number, enqueued: boolean) => void

interface Entry<E> {
  readonly watch: Watch<E, any>
  readonly context: Context.Context<any>
  /** Completes when the source has synced, or when it is removed (nobody waits for a removed source). */
  readonly done: Deferred.Deferred<void>
  synced: boolean
  /** Set once the source runs; closing it interrupts the source. */
  scope: Scope.Closeable | undefined
}

/** @internal */
export interface Sources<E> {
  /** Whether the sources have been started. */
  readonly started: () => boolean
  /** Starts every queued source (once); later additions start at once. */
  readonly startAll: Effect.Effect<void>
  /** Waits for the sources started by `startAll` to sync, failing with `CacheSyncTimeout` after the timeout. */
  readonly awaitInitialSync: Effect.Effect<void, CacheSyncTimeout>
  /** Adds a source, removed when the scope of the call closes. */
  readonly add: <R>(watch: Watch<E, R>) => Effect.Effect<void, never, R | Scope.Scope>
  /** Adds one of the controller's own sources (queued until `startAll`; stopped with the controller). */
  readonly addInitial: <R>(watch: Watch<E, R>) => Effect.Effect<void, never, R>
  /** Whether every source has been started and has synced. */
  readonly synced: Effect.Effect<boolean>
  /** The sources that run now (for readiness). */
  readonly running: () => ReadonlyArray<Watch<E, any>>
  /** Whether every running source has synced. */
  readonly runningSynced: () => boolean
  /** Each source's connection, for the inspector: `unknown` before it starts, `connected` without `health`. */
  readonly states: Effect.Effect<ReadonlyArray<SourceState>>
}

/** A source's connection as the inspector shows it. */
interface SourceState {
  readonly name: string
  readonly state: "connected" | "disconnected" | "unknown"
  readonly since?: number
}

/** @internal */
export const make = <E>(options: {
  readonly name: string
  readonly scope: Scope.Scope
  readonly enqueue: Enqueue
  readonly failure: Deferred.Deferred<never, ControllerError<E>>
  readonly cacheSyncTimeout: Duration.Duration
  /** Whether the controller is shutting down: nothing starts any more. */
  readonly stopping: () => boolean
  /** The inspector's recorder of events, when one records the controller. */
  readonly observe?: Observe | undefined
}): Sources<E> => {
  const { cacheSyncTimeout, enqueue, failure, name } = options
  const entries = new Set<Entry<E>>()
  let started = false
  let initial: ReadonlyArray<Entry<E>> = []

  const timeoutError = (pending: ReadonlyArray<Entry<E>>) =>
    new CacheSyncTimeout({
      controller: name,
      sources: pending.filter((e) => !e.synced).map((e) => e.watch.name),
      timeout: cacheSyncTimeout
    })

  const start = (entry: Entry<E>, watchdog: boolean) =>
    Effect.gen(function*() {
      const scope = yield* Scope.fork(options.scope, "sequential")
      entry.scope = scope
      yield* entry.watch.run(enqueue, options.observe).pipe(
        Effect.provideContext(entry.context),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.void : Option.match(Cause.findErrorOption(cause), {
            onNone: () => Deferred.failCause(failure, cause as Cause.Cause<never>),
            onSome: (error) =>
              Deferred.fail(failure, new SourceFailed({ controller: name, source: entry.watch.name, cause: error }))
          })
        ),
        Effect.forkIn(scope)
      )
      yield* entry.watch.synced.pipe(
        Effect.andThen(Effect.sync(() => void (entry.synced = true))),
        Effect.andThen(Deferred.succeed(entry.done, undefined)),
        Effect.forkIn(scope)
      )
      // A source added while the controller runs has a cache-sync timeout of its own, as the first ones had.
      if (watchdog) {
        yield* Deferred.await(entry.done).pipe(
          Effect.timeoutOrElse({
            duration: cacheSyncTimeout,
            orElse: () => Deferred.fail(failure, timeoutError([entry]))
          }),
          Effect.forkIn(scope)
        )
      }
    })

  const remove = (entry: Entry<E>) =>
    Effect.suspend(() => {
      entries.delete(entry)
      return Effect.andThen(
        Deferred.succeed(entry.done, undefined),
        entry.scope === undefined ? Effect.void : Scope.close(entry.scope, Exit.void)
      )
    })

  return {
    started: () => started,
    startAll: Effect.suspend(() => {
      if (started || options.stopping()) return Effect.void
      started = true
      initial = [...entries]
      return Effect.forEach(initial, (entry) => start(entry, false), { discard: true })
    }),
    awaitInitialSync: Effect.suspend(() =>
      Effect.forEach(initial, (entry) => Deferred.await(entry.done), { discard: true }).pipe(
        Effect.timeoutOrElse({
          duration: cacheSyncTimeout,
          orElse: () => Effect.fail(timeoutError(initial.filter((e) => entries.has(e))))
        })
      )
    ),
    addInitial: <R>(watch: Watch<E, R>) =>
      Effect.gen(function*() {
        entries.add({
          watch,
          context: yield* Effect.context<R>(),
          done: yield* Deferred.make<void>(),
          synced: false,
          scope: undefined
        })
      }),
    add: <R>(watch: Watch<E, R>) =>
      Effect.gen(function*() {
        if (options.stopping()) return
        const entry: Entry<E> = {
          watch,
          context: yield* Effect.context<R>(),
          done: yield* Deferred.make<void>(),
          synced: false,
          scope: undefined
        }
        entries.add(entry)
        yield* Effect.addFinalizer(() => remove(entry))
        if (started) {
          yield* Effect.logInfo("Starting EventSource").pipe(
            Effect.annotateLogs({ controller: name, source: watch.name })
          )
          yield* start(entry, true)
        }
      }),
    synced: Effect.sync(() => started && [...entries].every((e) => e.synced)),
    running: () => started ? [...entries].map((e) => e.watch) : [],
    runningSynced: () => !started || [...entries].every((e) => e.synced),
    states: Effect.suspend(() =>
      Effect.forEach([...entries], ({ scope, watch }): Effect.Effect<SourceState> =>
        scope === undefined
          ? Effect.succeed({ name: watch.name, state: "unknown" })
          : watch.health === undefined
          ? Effect.succeed({ name: watch.name, state: "connected" })
          : Effect.map(watch.health, (health): SourceState =>
            health._tag === "Connected"
              ? { name: watch.name, state: "connected" }
              : { name: watch.name, state: "disconnected", since: health.since }))
    )
  }
}
