import * as Source from "@reconcile/core/Source"
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Pull from "effect/Pull"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import type * as KubeError from "../KubeError.js"
import type * as Watcher from "../Watcher.js"
import { WatcherEvent } from "../Watcher.js"
import { isFatalAtStart } from "./diagnose.js"

/** Counts objects skipped because they did not decode, by watch name. @internal */
export const undecodableTotal = Metric.counter("watcher_undecodable_total", {
  description: "Objects a watcher skipped because they did not decode"
})

/** Counts list/watch failures (each one is retried), by watch name and error tag. @internal */
export const errorsTotal = Metric.counter("watcher_errors_total", {
  description: "List and watch failures of a watcher (each is retried)"
})

/** Counts relists caused by 410 Gone or a reset API server, by watch name. @internal */
export const relistsTotal = Metric.counter("watcher_relists_total", {
  description: "Relists of a watcher after 410 Gone or a reset API server (too large resourceVersion)"
})

/**
 * Counts the attempts of a watcher to re-establish its list+watch because something went wrong, by watch name and
 * `reason`: `error` (a failed list, watch or check), `idle` (nothing arrived within the idle limit), `expired`
 * (410 Gone: relist) or `reset` (the server's resourceVersions went back: relist). A watch the server ends normally
 * is resumed without counting. @internal
 */
export const reconnectsTotal = Metric.counter("watcher_reconnects_total", {
  description: "Re-established lists and watches of a watcher after a failure, an idle connection, 410 Gone or a reset"
})

class IdleTimeout {
  readonly _tag = "IdleTimeout"
}

/** A watch the server ended at once without sending anything (client-go's "very short watch"): backed off. */
class ShortWatch {
  readonly _tag = "ShortWatch"
  readonly message = "the watch ended at once without any event"
}

/** Ends the current phase and asks for a relist: after 410 Gone (`expired`) or from a reset server (`reset`). */
class Relist {
  readonly _tag = "Relist"
  constructor(readonly reason: "expired" | "reset") {}
}

/**
 * Whether `error` is kube-apiserver's answer to a resourceVersion newer than its own (504 `Timeout` with cause
 * `ResourceVersionTooLarge`, or — from servers older than the cause — its message): the server was reset or
 * restored from a backup, and only a fresh list recovers. client-go's reflector tests the same two things.
 *
 * @internal
 */
export const isTooLargeResourceVersion = (error: KubeError.KubeError): boolean => {
  if (!("status" in error)) return false
  const status = error.status
  return (status.details?.causes ?? []).some((cause) => cause.reason === "ResourceVersionTooLarge") ||
    (error._tag === "Timeout" && (status.message ?? "").includes("Too large resource version"))
}

/**
 * Fails with `IdleTimeout` once `self` has delivered nothing for `timeout`. The stream is read by a fiber into a
 * small queue of chunks, and a watchdog fiber fails the output when no chunk arrived for `timeout` (a consumer that
 * is still busy with earlier chunks does not count as idle). `Stream.timeout` would race a timer against every pull,
 * which costs more than the rest of the watcher's work when the server sends one event per chunk, as it does.
 *
 * The chunks of `self` that queued up while the consumer was busy make one chunk of the output (a queue of non-empty
 * arrays, taken all at once: a consumer that falls behind catches up in larger steps). The queue's end
 * (`Queue.end`) and failure (`Queue.failCause`) let the chunks already queued drain first. Both fibers live in the
 * stream's scope (`Stream.unwrap` keeps it open while the stream runs) and are interrupted with it.
 */
const idle =
  (timeout: Duration.Duration) => <A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E | IdleTimeout, R> =>
    Stream.unwrap(Effect.gen(function*() {
      const clock = yield* Clock.Clock
      const millis = Duration.toMillis(timeout)
      const queue = yield* Effect.acquireRelease(
        Queue.bounded<Arr.NonEmptyReadonlyArray<A>, E | IdleTimeout | Cause.Done>(16),
        Queue.shutdown
      )
      let last = clock.currentTimeMillisUnsafe()
      let offering = false
      const arrived = () => {
        last = clock.currentTimeMillisUnsafe()
      }
      yield* self.pipe(
        Stream.runForEachArray((chunk) => {
          arrived()
          // the common case, room in the queue, costs no effect; a full queue waits for the consumer
          if (Queue.offerUnsafe(queue, chunk)) return Effect.void
          offering = true
          return Effect.ensuring(
            Queue.offer(queue, chunk),
            Effect.sync(() => {
              offering = false
              arrived()
            })
          )
        }),
        Effect.matchCauseEffect({
          onFailure: (cause) => Queue.failCause(queue, cause),
          onSuccess: () => Queue.end(queue)
        }),
        Effect.forkScoped
      )
      const watchdog: Effect.Effect<void> = Effect.suspend(() => {
        if (offering) arrived()
        const left = last + millis - clock.currentTimeMillisUnsafe()
        return left <= 0
          ? Effect.asVoid(Queue.fail(queue, new IdleTimeout()))
          : Effect.andThen(Effect.sleep(Duration.millis(left)), watchdog)
      })
      yield* Effect.forkScoped(watchdog)
      // what queued up while the consumer was busy goes on as one array: every stage after this one runs once for it
      const take = Effect.map(
        Queue.takeAll(queue),
        (arrays): Arr.NonEmptyReadonlyArray<A> =>
          arrays.length === 1 ? arrays[0] : arrays.flat() as unknown as Arr.NonEmptyReadonlyArray<A>
      )
      return Stream.fromPull(Effect.succeed(take))
    }))

/**
 * Turns raw watch events into watcher events a whole chunk at a time, synchronously (per-event effects cost more
 * than the work itself). The resourceVersion advances only when the chunk's events are emitted, so an error in the
 * middle of a chunk resumes from before it (the server replays) and nothing is skipped. A chunk that emits nothing
 * (bookmarks, undecodable lines) pulls the next one: stream chunks are never empty.
 */
const toWatcherEvents = <A, E>(
  self: Stream.Stream<Watcher.RawEvent<A>, E>,
  listWatch: Watcher.ListWatch<A>,
  state: { resourceVersion: string | undefined; failures: number },
  skipUndecodable: (error: KubeError.Decode) => Effect.Effect<void>,
  heard: () => Effect.Effect<void> | undefined
): Stream.Stream<Watcher.WatcherEvent<A>, E | KubeError.KubeError | Relist> =>
  Stream.transformPull(self, (pull) =>
    Effect.sync(() => {
      const skipAll = (undecodable: ReadonlyArray<KubeError.Decode>) =>
        Effect.forEach(undecodable, skipUndecodable, { discard: true })
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<Watcher.WatcherEvent<A>>, E | KubeError.KubeError | Relist> =
        Effect.flatMap(pull, (chunk) => {
          // any line is the server talking: the connection is alive (a reconnection is reported once)
          const reconnected = heard()
          const out: Array<Watcher.WatcherEvent<A>> = []
          const undecodable: Array<KubeError.Decode> = []
          let resourceVersion = state.resourceVersion
          let progressed = false
          for (const event of chunk) {
            switch (event._tag) {
              case "Added":
              case "Modified":
              case "Deleted": {
                resourceVersion = listWatch.resourceVersion(event.object) ?? resourceVersion
                progressed = true
                // plain objects of `WatcherEvent`'s shape: its constructors go through a Proxy, per event
                out.push(
                  event._tag === "Deleted"
                    ? { object: event.object, _tag: "Delete" }
                    : { object: event.object, _tag: "Apply" }
                )
                break
              }
              case "Bookmark":
                resourceVersion = event.resourceVersion
                progressed = true
                break
              case "Error":
                return Effect.andThen(
                  skipAll(undecodable),
                  Effect.fail(
                    event.error._tag === "Gone"
                      ? new Relist("expired")
                      : isTooLargeResourceVersion(event.error)
                      ? new Relist("reset")
                      : event.error
                  )
                )
              case "Undecodable": {
                // an object we can name stays visible (the cache keeps its metadata); any other line is skipped
                const named = event.type !== undefined && isNamed(event.error)
                if (!named) {
                  undecodable.push(event.error)
                  break
                }
                resourceVersion = event.error.metadata?.resourceVersion ?? resourceVersion
                progressed = true
                out.push(
                  WatcherEvent.Undecodable({ error: event.error, event: event.type === "Deleted" ? "Delete" : "Apply" })
                )
                break
              }
            }
          }
          state.resourceVersion = resourceVersion
          if (progressed) state.failures = 0
          const emit = isNonEmpty(out) ? Effect.succeed(out) : next
          const result = undecodable.length === 0 ? emit : Effect.andThen(skipAll(undecodable), emit)
          return reconnected === undefined ? result : Effect.andThen(reconnected, result)
        })
      return next
    }))

const isNonEmpty = <A>(as: Array<A>): as is Arr.NonEmptyArray<A> => as.length > 0

/** A decode failure that names its object (see `Undecodable`). */
const isNamed = (error: KubeError.Decode): boolean => error.metadata?.name !== undefined && error.metadata.name !== ""

/** @internal */
export const watch = <A>(listWatch: Watcher.ListWatch<A>, options: Watcher.Options = {}): Stream.Stream<
  Watcher.WatcherEvent<A>,
  KubeError.KubeError
> =>
  Stream.unwrap(Effect.clockWith((clock) =>
    Effect.sync(() => {
      const pageSize = options.pageSize ?? 500
      const timeoutSeconds = options.timeoutSeconds ?? defaultTimeoutSeconds
      const idleTimeout = idleLimit(options)
      const initial = Duration.toMillis(options.initialBackoff ?? Duration.millis(800))
      const max = Duration.toMillis(options.maxBackoff ?? Duration.seconds(30))
      const jitter = options.jitter ?? 1
      const tags = { watch: listWatch.name }
      /** `verify`: check the resourceVersion with the server before the next watch (after a failure or empty watch). */
      const state = {
        resourceVersion: undefined as string | undefined,
        failures: 0,
        verify: false,
        shortWatches: 0,
        /** Whether a list has completed once: before, a diagnosed failure ends the stream with `startup: "fail"`. */
        synced: false
      }
      const failAtStart = options.startup === "fail"
      /**
       * The failures logged since the server last answered the same way (key → the verb that failed, if known):
       * each is logged once (diagnosed ones at error, with the fix), then retried quietly (debug) until it recovers.
       */
      const reported = new Map<string, string | undefined>()
      /** A list completed (`list`) or a watch delivered (`watch`): the failures of that verb (or unknown) are over. */
      const recovered = (verb: "list" | "watch") => {
        if (reported.size === 0) return
        for (const [key, failed] of reported) {
          if (verb === "watch" || failed !== "watch") reported.delete(key)
        }
      }
      const check = listWatch.checkResourceVersion

      // --- connection health: the last time the server was heard from, and since when it is lost (if it is)
      const health = {
        lastContact: clock.currentTimeMillisUnsafe(),
        lost: undefined as { readonly since: number; readonly reason: string } | undefined,
        /** Whether the current watch delivered anything. */
        received: false
      }
      const report = (h: Source.Health) => options.onHealth === undefined ? Effect.void : options.onHealth(h)
      const reconnected: Effect.Effect<void> = Effect.suspend(() => {
        const lost = health.lost
        if (lost === undefined) return Effect.void
        health.lost = undefined
        return Effect.andThen(
          Effect.logInfo("watch connected again").pipe(
            Effect.annotateLogs({ ...tags, silentMillis: health.lastContact - lost.since, reason: lost.reason })
          ),
          report(Source.connected)
        )
      })
      /** The server answered: synchronous, returns the report to make when this ends a disconnection. */
      const heard = (): Effect.Effect<void> | undefined => {
        health.lastContact = clock.currentTimeMillisUnsafe()
        health.received = true
        return health.lost === undefined ? undefined : reconnected
      }
      /** A watch delivered something: its failures are over too. */
      const heardWatch = (): Effect.Effect<void> | undefined => {
        recovered("watch")
        return heard()
      }
      const heardEffect = Effect.suspend(() => heard() ?? Effect.void)
      const lose = (reason: string) =>
        Effect.suspend(() => {
          state.verify = true
          if (health.lost !== undefined) return Effect.void
          health.lost = { since: health.lastContact, reason }
          return report(Source.Health.Disconnected(health.lost))
        })
      const reconnect = (reason: "error" | "idle" | "expired" | "reset") =>
        Metric.update(Metric.withAttributes(reconnectsTotal, { ...tags, reason }), 1)

      /** A list completed: the backoff starts over, and its resourceVersion needs no check. */
      const progress = Effect.sync(() => {
        state.failures = 0
        state.verify = false
        state.synced = true
        recovered("list")
      })

      const backoff = (error: KubeError.KubeError | ShortWatch) =>
        Effect.gen(function*() {
          yield* lose(error._tag)
          yield* reconnect("error")
          const n = state.failures++
          const base = Math.min(initial * 2 ** n, max)
          const factor = 1 + jitter * ((yield* Random.next) - 0.5)
          // a server that said when to come back (429, 503 with Retry-After) is not asked again before then
          const retryAfter = (error._tag === "TooManyRequests" || error._tag === "ServerError") &&
              error.retryAfter !== undefined
            ? Duration.toMillis(error.retryAfter)
            : 0
          const delay = Math.max(retryAfter, Math.min(max, Math.max(0, base * factor)))
          yield* Metric.update(Metric.withAttributes(errorsTotal, { watch: tags.watch, error: error._tag }), 1)
          const diagnosis = "diagnosis" in error ? error.diagnosis : undefined
          const key = diagnosis !== undefined ? `${diagnosis.problem}: ${diagnosis.summary}` : error._tag
          const annotations = {
            ...tags,
            error: error._tag,
            detail: error.message ?? "",
            retryInMillis: Math.round(delay)
          }
          if (reported.has(key)) {
            yield* Effect.logDebug("watcher error; retrying").pipe(Effect.annotateLogs(annotations))
          } else {
            reported.set(key, diagnosis?.rule?.verbs[0])
            yield* (diagnosis !== undefined
              ? Effect.logError(`${error.message} (retrying with backoff; logged again when it recovers)`).pipe(
                Effect.annotateLogs({ ...tags, error: error._tag })
              )
              : Effect.logWarning("watcher error; retrying").pipe(Effect.annotateLogs(annotations)))
          }
          yield* Effect.sleep(Duration.millis(delay))
        })

      const skipUndecodable = (error: KubeError.Decode) =>
        Effect.andThen(
          Metric.update(Metric.withAttributes(undecodableTotal, tags), 1),
          Effect.logWarning("skipping an object that does not decode").pipe(
            Effect.annotateLogs({ ...tags, issue: error.issue })
          )
        )

      const relist = (reason: "expired" | "reset") =>
        Effect.andThen(
          reason === "reset"
            ? Effect.logWarning("the API server's resourceVersions went back (reset or restored): relisting").pipe(
              Effect.annotateLogs({ ...tags, resourceVersion: state.resourceVersion ?? "" })
            )
            : Effect.void,
          Effect.andThen(
            Effect.andThen(Metric.update(Metric.withAttributes(relistsTotal, tags), 1), reconnect(reason)),
            Effect.sync(() => {
              state.resourceVersion = undefined
              state.verify = false
            })
          )
        )

      /**
       * Lists every page: `Init`, `InitApply`…, `InitDone`. A 410 on a continue
       * token (expired) restarts the list; consumers drop a partial list at the
       * next `Init`.
       */
      const listPhase: Stream.Stream<Watcher.WatcherEvent<A>, KubeError.KubeError | Relist> = Stream.concat(
        Stream.make(WatcherEvent.Init()),
        Stream.paginate(undefined as string | undefined, (cursor) =>
          listWatch.list({ limit: pageSize, continue: cursor }).pipe(
            Effect.mapError((error): KubeError.KubeError | Relist =>
              error._tag === "Gone" && cursor !== undefined ? new Relist("expired") : error
            ),
            Effect.tap(() => heardEffect),
            Effect.tap((page) =>
              Effect.forEach(
                (page.undecodable ?? []).filter((e) =>
                  !isNamed(e)
                ),
                skipUndecodable,
                { discard: true }
              )
            ),
            Effect.map((page) => {
              const next = page.continue === undefined || page.continue === "" ? undefined : page.continue
              if (next === undefined) state.resourceVersion = page.resourceVersion
              const events: Array<Watcher.WatcherEvent<A>> = page.items.map((object) => ({
                object,
                _tag: "InitApply"
              }))
              for (const error of page.undecodable ?? []) {
                if (isNamed(error)) events.push(WatcherEvent.Undecodable({ error, event: "InitApply" }))
              }
              return [events, Option.fromUndefinedOr(next)] as const
            })
          )).pipe(
            // the next page is asked for while this one is applied: a paged list costs the slower of the server
            // and the client, not their sum
            Stream.bufferArray({ capacity: 1 }),
            Stream.concat(
              Stream.fromEffect(
                Effect.suspend(() =>
                  Effect.as(progress, WatcherEvent.InitDone({ resourceVersion: state.resourceVersion ?? "" }))
                )
              )
            )
          )
      )

      /**
       * Before resuming after a failure or an empty watch: does the server still serve our resourceVersion? A reset
       * server (restarted over a new or restored store) answers 504 "Too large resource version" and a plain watch
       * from that resourceVersion would wait in silence (kube-apiserver starts it and sends nothing older).
       */
      const verify: Effect.Effect<void, KubeError.KubeError | Relist> = Effect.suspend(() =>
        check === undefined || !state.verify ? Effect.void : check(state.resourceVersion!).pipe(
          Effect.mapError((error): KubeError.KubeError | Relist =>
            error._tag === "Gone"
              ? new Relist("expired")
              : isTooLargeResourceVersion(error)
              ? new Relist("reset")
              : error
          ),
          Effect.andThen(Effect.sync(() => {
            state.verify = false
          })),
          Effect.andThen(heardEffect)
        )
      )

      /**
       * The server ended the watch normally. One that delivered nothing — not even the bookmark kube-apiserver sends
       * before a watch's timeout — may be a watch from a resourceVersion the server does not have: check it before
       * the next. A second one in a row that ended at once with nothing is backed off (client-go's "very short
       * watch"), so a server that closes every watch at once is not asked in a tight loop.
       */
      const ended = (startedAt: number) =>
        Effect.suspend((): Effect.Effect<void, ShortWatch> => {
          if (health.received) {
            state.shortWatches = 0
            return heardEffect
          }
          state.verify = true
          const short = clock.currentTimeMillisUnsafe() - startedAt < 1000
          state.shortWatches = short ? state.shortWatches + 1 : 0
          return state.shortWatches > 1 ? Effect.fail(new ShortWatch()) : heardEffect
        })

      /** Watches from the current resourceVersion until the server closes the watch. */
      const watchPhase: Stream.Stream<
        Watcher.WatcherEvent<A>,
        KubeError.KubeError | Relist | IdleTimeout | ShortWatch
      > = Stream.unwrap(Effect.as(
        verify,
        Stream.suspend(() => {
          health.received = false
          const startedAt = clock.currentTimeMillisUnsafe()
          return listWatch.watch({ resourceVersion: state.resourceVersion!, allowWatchBookmarks: true, timeoutSeconds })
            .pipe(
              idle(idleTimeout),
              (events) => toWatcherEvents(events, listWatch, state, skipUndecodable, heardWatch),
              Stream.concat(Stream.fromEffectDrain(ended(startedAt)))
            )
        })
      ))

      const phase = Stream.suspend(() => state.resourceVersion === undefined ? listPhase : watchPhase).pipe(
        Stream.catch((error) => {
          if (error._tag === "Relist") return Stream.fromEffectDrain(relist(error.reason))
          if (error._tag === "Gone") return Stream.fromEffectDrain(relist("expired"))
          if (error._tag !== "IdleTimeout" && error._tag !== "ShortWatch" && isTooLargeResourceVersion(error)) {
            return Stream.fromEffectDrain(relist("reset"))
          }
          if (error._tag === "IdleTimeout") {
            return Stream.fromEffectDrain(
              Effect.logWarning("watch silent past the idle limit; reconnecting").pipe(
                Effect.annotateLogs({ ...tags, idleMillis: Duration.toMillis(idleTimeout) }),
                Effect.andThen(lose("idle")),
                Effect.andThen(reconnect("idle"))
              )
            )
          }
          // before the first list completed, a failure retrying will not fix ends the stream (`startup: "fail"`)
          if (failAtStart && !state.synced && error._tag !== "ShortWatch" && isFatalAtStart(error)) {
            return Stream.fail(error)
          }
          return Stream.fromEffectDrain(backoff(error))
        })
      )
      return Stream.forever(phase)
    })
  ))

/** The server-side watch timeout (seconds) by default: see `Watcher.Options.timeoutSeconds`. @internal */
export const defaultTimeoutSeconds = 50

/**
 * The idle limit of a watch: `idleTimeout`, else the smaller of `timeoutSeconds` + 5 s and twice
 * `bookmarkInterval` (55 s with the defaults). @internal
 */
export const idleLimit = (options: Watcher.Options): Duration.Duration => {
  if (options.idleTimeout !== undefined) return Duration.fromInputUnsafe(options.idleTimeout)
  const timeout = Duration.seconds((options.timeoutSeconds ?? defaultTimeoutSeconds) + 5)
  const bookmarks = Duration.times(Duration.fromInputUnsafe(options.bookmarkInterval ?? Duration.minutes(1)), 2)
  return Duration.min(timeout, bookmarks)
}
