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

/** Counts objects skipped because they did not decode, by watch name. @internal */
export const undecodableTotal = Metric.counter("watcher_undecodable_total", {
  description: "Objects a watcher skipped because they did not decode"
})

/** Counts list/watch failures (each one is retried), by watch name and error tag. @internal */
export const errorsTotal = Metric.counter("watcher_errors_total", {
  description: "List and watch failures of a watcher (each is retried)"
})

/** Counts relists caused by 410 Gone, by watch name. @internal */
export const relistsTotal = Metric.counter("watcher_relists_total", {
  description: "Relists of a watcher after 410 Gone"
})

class IdleTimeout {
  readonly _tag = "IdleTimeout"
}

/** Ends the current phase and asks for a relist. */
class Relist {
  readonly _tag = "Relist"
}

/**
 * Fails with `IdleTimeout` once `self` has delivered nothing for `timeout`. The stream is read by a fiber into a
 * small queue of chunks, and a watchdog fiber fails the output when no chunk arrived for `timeout` (a consumer that
 * is still busy with earlier chunks does not count as idle). `Stream.timeout` would race a timer against every pull,
 * which costs more than the rest of the watcher's work when the server sends one event per chunk, as it does.
 *
 * Each chunk of `self` stays one chunk of the output (a queue of non-empty arrays, flattened array by array). The
 * queue's end (`Queue.end`) and failure (`Queue.failCause`) let the chunks already queued drain first. Both fibers
 * live in the stream's scope (`Stream.unwrap` keeps it open while the stream runs) and are interrupted with it.
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
        Stream.runForEachArray((chunk) =>
          Effect.suspend(() => {
            arrived()
            offering = true
            return Effect.ensuring(
              Queue.offer(queue, chunk),
              Effect.sync(() => {
                offering = false
                arrived()
              })
            )
          })
        ),
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
      return Stream.flattenArray(Stream.fromQueue(queue))
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
  skipUndecodable: (error: KubeError.Decode) => Effect.Effect<void>
): Stream.Stream<Watcher.WatcherEvent<A>, E | KubeError.KubeError | Relist> =>
  Stream.transformPull(self, (pull) =>
    Effect.sync(() => {
      const skipAll = (undecodable: ReadonlyArray<KubeError.Decode>) =>
        Effect.forEach(undecodable, skipUndecodable, { discard: true })
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<Watcher.WatcherEvent<A>>, E | KubeError.KubeError | Relist> =
        Effect.flatMap(pull, (chunk) => {
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
                out.push(
                  event._tag === "Deleted"
                    ? WatcherEvent.Delete({ object: event.object })
                    : WatcherEvent.Apply({ object: event.object })
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
                  Effect.fail(event.error._tag === "Gone" ? new Relist() : event.error)
                )
              case "Undecodable":
                undecodable.push(event.error)
                break
            }
          }
          state.resourceVersion = resourceVersion
          if (progressed) state.failures = 0
          const emit = isNonEmpty(out) ? Effect.succeed(out) : next
          return undecodable.length === 0 ? emit : Effect.andThen(skipAll(undecodable), emit)
        })
      return next
    }))

const isNonEmpty = <A>(as: Array<A>): as is Arr.NonEmptyArray<A> => as.length > 0

/** @internal */
export const watch = <A>(listWatch: Watcher.ListWatch<A>, options: Watcher.Options = {}): Stream.Stream<
  Watcher.WatcherEvent<A>
> =>
  Stream.suspend(() => {
    const pageSize = options.pageSize ?? 500
    const timeoutSeconds = options.timeoutSeconds ?? 290
    const idleTimeout = Duration.seconds(timeoutSeconds + 5)
    const initial = Duration.toMillis(options.initialBackoff ?? Duration.millis(800))
    const max = Duration.toMillis(options.maxBackoff ?? Duration.seconds(30))
    const jitter = options.jitter ?? 1
    const tags = { watch: listWatch.name }
    const state = { resourceVersion: undefined as string | undefined, failures: 0 }

    const progress = Effect.sync(() => {
      state.failures = 0
    })

    const backoff = (error: KubeError.KubeError) =>
      Effect.gen(function*() {
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
        yield* Effect.logWarning("watcher error; retrying").pipe(
          Effect.annotateLogs({
            ...tags,
            error: error._tag,
            detail: error.message ?? "",
            retryInMillis: Math.round(delay)
          })
        )
        yield* Effect.sleep(Duration.millis(delay))
      })

    const skipUndecodable = (error: KubeError.Decode) =>
      Effect.andThen(
        Metric.update(Metric.withAttributes(undecodableTotal, tags), 1),
        Effect.logWarning("skipping an object that does not decode").pipe(
          Effect.annotateLogs({ ...tags, issue: error.issue })
        )
      )

    const relist = Effect.andThen(
      Metric.update(Metric.withAttributes(relistsTotal, tags), 1),
      Effect.sync(() => {
        state.resourceVersion = undefined
      })
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
            error._tag === "Gone" && cursor !== undefined ? new Relist() : error
          ),
          Effect.tap((page) =>
            Effect.forEach(page.undecodable ?? [], skipUndecodable, { discard: true })
          ),
          Effect.map((page) => {
            const next = page.continue === undefined || page.continue === "" ? undefined : page.continue
            if (next === undefined) state.resourceVersion = page.resourceVersion
            return [
              page.items.map((object) => WatcherEvent.InitApply({ object })),
              Option.fromUndefinedOr(next)
            ] as const
          })
        )).pipe(
          Stream.concat(
            Stream.fromEffect(
              Effect.suspend(() =>
                Effect.as(progress, WatcherEvent.InitDone({ resourceVersion: state.resourceVersion ?? "" }))
              )
            )
          )
        )
    )

    /** Watches from the current resourceVersion until the server closes the watch. */
    const watchPhase: Stream.Stream<Watcher.WatcherEvent<A>, KubeError.KubeError | Relist | IdleTimeout> = Stream
      .suspend(() =>
        listWatch.watch({ resourceVersion: state.resourceVersion!, allowWatchBookmarks: true, timeoutSeconds })
      ).pipe(
        idle(idleTimeout),
        (events) => toWatcherEvents(events, listWatch, state, skipUndecodable)
      )

    const phase = Stream.suspend(() => state.resourceVersion === undefined ? listPhase : watchPhase).pipe(
      Stream.catch((error) => {
        if (error._tag === "Relist") return Stream.fromEffectDrain(relist)
        if (error._tag === "Gone") return Stream.fromEffectDrain(relist)
        if (error._tag === "IdleTimeout") {
          return Stream.fromEffectDrain(
            Effect.logWarning("watch idle past its timeout; reconnecting").pipe(
              Effect.annotateLogs(tags)
            )
          )
        }
        return Stream.fromEffectDrain(backoff(error))
      })
    )
    return Stream.forever(phase)
  })
