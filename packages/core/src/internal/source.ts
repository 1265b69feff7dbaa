import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Event from "../Event.js"
import type { Channel } from "../Source.js"

/** @internal */
export const channel = <A>(name: string): Effect.Effect<Channel<A>> =>
  Effect.map(Queue.unbounded<Event.Event<A>>(), (queue) => ({
    source: { name, events: Stream.fromQueue(queue), synced: Effect.void },
    offer: (event) =>
      Effect.flatMap(
        Queue.isShutdown(queue),
        (isShutdown) => isShutdown ? Effect.succeed(false) : Queue.offer(queue, event)
      ).pipe(Effect.catchAllCause(() => Effect.succeed(false))),
    shutdown: Queue.shutdown(queue)
  }))

/** @internal */
export const periodic = <A, E, R>(
  every: Duration.DurationInput,
  list: Effect.Effect<Iterable<A>, E, R>,
  immediate: boolean
): Stream.Stream<Event.Event<A>, E, R> => {
  const interval = Duration.decode(every)
  const batch = Stream.flatMap(Stream.fromEffect(list), (objects) => Stream.fromIterable(objects)).pipe(
    Stream.map((object) => Event.generic(object))
  )
  const repeated = Stream.repeat(batch, Schedule.fixed(interval))
  return immediate ? repeated : Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep(interval))), repeated)
}
