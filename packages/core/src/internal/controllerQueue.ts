/**
 * How a controller puts keys into its queue and takes them out: priorities (with a priority queue) and rate-limited
 * retries under the `outOfBandFailures` rule.
 *
 * - Adds from sources carry the priority their watch gives (`Handler.withPriority`, `Source.withPriority`, else
 *   `Handler.lowPriorityWhenUnchanged`); a FIFO queue ignores it, as controller-runtime's wrapper of a plain
 *   workqueue does.
 * - A key keeps the priority it was taken at through its rate-limited retries and `RequeueAfter` (controller-runtime
 *   passes the item's priority back to `AddWithOpts`), unless the outcome names one (`RequeueAfter`/`Retryable`
 *   `priority`: controller-runtime's `Result.Priority`, which replaces the item's priority for that add).
 * - `outOfBandFailures: "ignore"`: a failure while a retry is already scheduled does not call the rate limiter, and
 *   the retry is added again for the time it was scheduled at. The queue may no longer hold it: a priority queue
 *   merges an immediate add into the waiting item (the run that just failed consumed it), and a FIFO queue keeps only
 *   the earliest delayed entry of a key (an older entry that fired first consumed it). Where it is still there the add
 *   collapses into it.
 */
import type { PriorityWorkqueue, RateLimiter, Workqueue, WorkqueueError } from "@reconcile/workqueue"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Handler from "../Handler.js"

/** The queue of a controller, as the controller uses it. @internal */
export interface ControllerQueue {
  /** Adds a key from a source at `priority` (default 0). */
  readonly add: (key: string, priority?: number | undefined) => Effect.Effect<void>
  /** Takes the next key and remembers the priority it was queued at until `done`. */
  readonly take: Effect.Effect<string, WorkqueueError.WorkqueueShutdown>
  /** Ends the processing of a key taken with `take`. */
  readonly done: (key: string) => Effect.Effect<void>
  /**
   * A rate-limited retry of a key that failed, at `priority` if given else at the key's priority, following the
   * `outOfBandFailures` rule.
   */
  readonly retry: (key: string, priority?: number | undefined) => Effect.Effect<void>
  /** Adds the key again after `after`, at `priority` if given else at the key's priority (`RequeueAfter`). */
  readonly requeueAfter: (key: string, after: Duration.Input, priority?: number | undefined) => Effect.Effect<void>
  /** Success: clears the limiter's memory of the key and its scheduled retry. */
  readonly forget: (key: string) => Effect.Effect<void>
  /**
   * `forget` then `done`, for a finalizer that is already running: the scheduled retry is cleared now, the returned
   * effect forgets the key in the limiter and ends its processing.
   */
  readonly forgetThenDone: (key: string) => Effect.Effect<void>
  /** A terminal failure: no retry is scheduled any more (the backoff memory stays, as in controller-runtime). */
  readonly clearRetry: (key: string) => void
}

/** The queue as a priority queue, when it is one (by shape: a `Workqueue.Priority` make builds one). */
const asPriority = (queue: Workqueue.Workqueue.Service): PriorityWorkqueue.PriorityWorkqueue.Service | undefined =>
  "addWithOptions" in queue && "takeWithPriority" in queue
    ? queue as PriorityWorkqueue.PriorityWorkqueue.Service
    : undefined

/** @internal */
export const make = (options: {
  readonly queue: Workqueue.Workqueue.Service
  readonly limiter: RateLimiter.RateLimiter
  readonly ignoreOutOfBand: boolean
}): ControllerQueue => {
  const { ignoreOutOfBand, limiter, queue } = options
  const pq = asPriority(queue)
  /** When the scheduled rate-limited retry of a key fires (ms), for `outOfBandFailures: "ignore"`. */
  const retryAt = new Map<string, number>()
  /** The non-zero priority of each key in flight (a key is never in flight twice). */
  const inFlight = new Map<string, number>()

  const addAfter = (key: string, after: Duration.Input, priority: number | undefined): Effect.Effect<void> =>
    pq === undefined
      ? queue.addAfter(key, after)
      : pq.addWithOptions(key, { after, priority: priority ?? inFlight.get(key) })

  const retry = (key: string, priority?: number | undefined) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const pending = retryAt.get(key)
      if (ignoreOutOfBand && pending !== undefined && pending > now) {
        yield* addAfter(key, pending - now, priority)
        return
      }
      const delay = Duration.toMillis(yield* limiter.when(key))
      retryAt.set(key, now + delay)
      yield* addAfter(key, delay, priority)
    })

  // A FIFO queue has no priorities to remember.
  const done = pq === undefined ? queue.done : (key: string) =>
    Effect.suspend(() => {
      inFlight.delete(key)
      return queue.done(key)
    })

  return {
    add: pq === undefined
      ? (key) => queue.add(key)
      : (key, priority) =>
        priority === undefined || priority === 0 ? pq.add(key) : pq.addWithOptions(key, { priority }),
    take: pq === undefined ? queue.take : Effect.map(pq.takeWithPriority, ({ key, priority }) => {
      if (priority !== 0) inFlight.set(key, priority)
      return key
    }),
    done,
    retry,
    requeueAfter: (key, after, priority) => Effect.suspend(() => addAfter(key, after, priority)),
    forget: (key) =>
      Effect.suspend(() => {
        retryAt.delete(key)
        return queue.forget(key)
      }),
    forgetThenDone: (key) => {
      retryAt.delete(key)
      return Effect.andThen(queue.forget(key), done(key))
    },
    clearRetry: (key) => {
      retryAt.delete(key)
    }
  }
}

/** A watch's priority rule: the handler's, then the source's, then `Handler.lowPriorityWhenUnchanged`. @internal */
export const priorityOf = <A>(
  handler: Handler.Priority<A> | undefined,
  source: Handler.Priority<A> | undefined
): Handler.Priority<A> =>
(event) => handler?.(event) ?? source?.(event) ?? Handler.lowPriorityWhenUnchanged(event)
