import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
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
 * small queue, and a watchdog fiber fails the output when no chunk arrived for `timeout` (a consumer that is still
 * busy with earlier chunks does not count as idle). `Stream.timeoutFail` would race a timer against every pull,
 * which costs more than the rest of the watcher's work when the server sends one event per chunk, as it does.
 */
const idle = (timeout: Duration.Duration) =>
<A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E | IdleTimeout, R> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const clock = yield* Effect.clock
    const millis = Duration.toMillis(timeout)
    const queue = yield* Effect.acquireRelease(Queue.bounded<Take.Take<A, E | IdleTimeout>>(16), Queue.shutdown)
    let last = clock.unsafeCurrentTimeMillis()
    let offering = false
    const arrived = () => {
      last = clock.unsafeCurrentTimeMillis()
    }
    yield* self.pipe(
      Stream.runForEachChunk((chunk) =>
        Effect.suspend(() => {
          arrived()
          offering = true
          return Effect.ensuring(
            Queue.offer(queue, Take.chunk(chunk)),
            Effect.sync(() => {
              offering = false
              arrived()
            })
          )
        })
      ),
      Effect.matchCauseEffect({
        onFailure: (cause) => Queue.offer(queue, Take.failCause(cause)),
        onSuccess: () => Queue.offer(queue, Take.end)
      }),
      Effect.forkScoped
    )
    const watchdog: Effect.Effect<void> = Effect.suspend(() => {
      if (offering) arrived()
      const left = last + millis - clock.unsafeCurrentTimeMillis()
      return left <= 0
        ? Queue.offer(queue, Take.fail(new IdleTimeout()))
        : Effect.zipRight(Effect.sleep(Duration.millis(left)), watchdog)
    })
    yield* Effect.forkScoped(watchdog)
    return Stream.flattenTake(Stream.fromQueue(queue))
  }))

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
        yield* Metric.increment(Metric.tagged(Metric.tagged(errorsTotal, "watch", tags.watch), "error", error._tag))
        yield* Effect.logWarning("watcher error; retrying").pipe(
          Effect.annotateLogs({ ...tags, error: error._tag, detail: error.message ?? "", retryInMillis: Math.round(delay) })
        )
        yield* Effect.sleep(Duration.millis(delay))
      })

    const skipUndecodable = (error: KubeError.Decode) =>
      Effect.zipRight(
        Metric.increment(Metric.tagged(undecodableTotal, "watch", tags.watch)),
        Effect.logWarning("skipping an object that does not decode").pipe(
          Effect.annotateLogs({ ...tags, issue: error.issue })
        )
      )

    const relist = Effect.zipRight(
      Metric.increment(Metric.tagged(relistsTotal, "watch", tags.watch)),
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
      Stream.paginateChunkEffect(undefined as string | undefined, (cursor) =>
        listWatch.list({ limit: pageSize, continue: cursor }).pipe(
          Effect.mapError((error): KubeError.KubeError | Relist =>
            error._tag === "Gone" && cursor !== undefined ? new Relist() : error
          ),
          Effect.tap((page) => Effect.forEach(page.undecodable ?? [], skipUndecodable, { discard: true })),
          Effect.map((page) => {
            const next = page.continue === undefined || page.continue === "" ? undefined : page.continue
            if (next === undefined) state.resourceVersion = page.resourceVersion
            return [
              Chunk.fromIterable(page.items.map((object) => WatcherEvent.InitApply({ object }))),
              Option.fromNullable(next)
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
        // A whole chunk at a time, synchronously: per-event effects cost more than the work itself.
        // The resourceVersion advances only when the chunk's events are emitted, so an error in the
        // middle of a chunk resumes from before it (the server replays) and nothing is skipped.
        Stream.mapChunksEffect((chunk) => {
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
                return Effect.zipRight(
                  Effect.forEach(undecodable, skipUndecodable, { discard: true }),
                  Effect.fail(event.error._tag === "Gone" ? new Relist() : event.error)
                )
              case "Undecodable":
                undecodable.push(event.error)
                break
            }
          }
          state.resourceVersion = resourceVersion
          if (progressed) state.failures = 0
          const emitted = Chunk.unsafeFromArray(out)
          return undecodable.length === 0
            ? Effect.succeed(emitted)
            : Effect.as(Effect.forEach(undecodable, skipUndecodable, { discard: true }), emitted)
        })
      )

    const phase = Stream.suspend(() => state.resourceVersion === undefined ? listPhase : watchPhase).pipe(
      Stream.catchAll((error) => {
        if (error._tag === "Relist") return Stream.execute(relist)
        if (error._tag === "Gone") return Stream.execute(relist)
        if (error._tag === "IdleTimeout") {
          return Stream.execute(Effect.logWarning("watch idle past its timeout; reconnecting").pipe(
            Effect.annotateLogs(tags)
          ))
        }
        return Stream.execute(backoff(error))
      })
    )
    return Stream.forever(phase)
  })
