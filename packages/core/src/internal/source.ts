import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Event from "../Event.js"
import type { Channel } from "../Source.js"

/**
 * The queue's elements until it is done. effect 4's `Queue.shutdown` completes a queue with an interruption, which
 * `Stream.fromQueue` propagates; a stream over a queue that was shut down ends instead, as in effect 3. The stream
 * still fails with anything else (a failed queue, the interruption of its own fiber).
 *
 * @internal
 */
export const fromQueue = <A, E>(queue: Queue.Dequeue<A, E>): Stream.Stream<A, Exclude<E, Cause.Done>> =>
  Stream.catchCause(
    Stream.fromQueue(queue),
    (cause) => queue.state._tag === "Done" && Cause.hasInterruptsOnly(cause) ? Stream.empty : Stream.failCause(cause)
  )

/** @internal */
export const channel = <A>(name: string): Effect.Effect<Channel<A>> =>
  Effect.map(Queue.unbounded<Event.Event<A>, Cause.Done>(), (queue) => ({
    source: { name, events: Stream.fromQueue(queue), synced: Effect.void },
    // `false` once the queue is done: effect 4's `Queue.offer` no longer fails on a shut down queue.
    offer: (event) => Queue.offer(queue, event),
    // Ending the queue first makes its completion `Done` (the stream ends) rather than an interruption; shutting it
    // down then drops the events not yet taken.
    shutdown: Effect.asVoid(Effect.andThen(Queue.end(queue), Queue.shutdown(queue)))
  }))

/** @internal */
export const periodic = <A, E, R>(
  every: Duration.Input,
  list: Effect.Effect<Iterable<A>, E, R>,
  immediate: boolean
): Stream.Stream<Event.Event<A>, E, R> => {
  const interval = Duration.fromInputUnsafe(every)
  const batch = Stream.flatMap(Stream.fromEffect(list), (objects) => Stream.fromIterable(objects)).pipe(
    Stream.map((object) => Event.generic(object))
  )
  const repeated = Stream.repeat(batch, Schedule.fixed(interval))
  return immediate ? repeated : Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep(interval))), repeated)
}
