/**
 * Sources of events: a `Stream` of {@link Event}s plus a `synced` signal.
 *
 * A source is a plain value. Running its `events` stream is what starts it
 * (a watch, a subscription, a timer), and it can be run outside any
 * controller — in a test, a script, another stream pipeline. A controller runs
 * each source's stream, filters it with the source's predicates, maps events
 * to requests with a handler, and starts its workers once every source's
 * `synced` has completed (with a timeout).
 *
 * @example
 * ```ts
 * import { Effect, pipe, Stream } from "effect"
 * import { Event, Predicates, Source } from "@reconcile/core"
 *
 * const program = Effect.gen(function*() {
 *   const { offer, source } = yield* Source.channel<{ metadata: { name: string } }>("webhooks")
 *   yield* offer(Event.generic({ metadata: { name: "web" } }))
 *   const filtered = pipe(source, Source.withPredicates(Predicates.labelSelector({})))
 *   return yield* Stream.runHead(filtered.events)
 * })
 * ```
 *
 * @since 0.1.0
 */
import { PriorityWorkqueue } from "@reconcile/workqueue"
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { Event } from "./Event.js"
import type { Priority } from "./Handler.js"
import * as internal from "./internal/source.js"
import type { Predicate } from "./Predicates.js"
import * as Predicates from "./Predicates.js"

/**
 * A named stream of events about objects of type `A`.
 *
 * - `name` identifies the source in logs and in a controller's cache-sync
 *   timeout error.
 * - `events` is the stream; each run is independent (a new watch, a new
 *   subscription) unless the constructor says otherwise.
 * - `synced` completes once the source has delivered its initial state (for a
 *   watch: the first list). It never fails; a consumer bounds the wait with a
 *   timeout.
 * - `health`, for sources with a connection (a watch), says whether it is
 *   connected; a controller reports not ready while one of its sources has
 *   been disconnected for too long. Sources without it are always connected.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source<A, E = never, R = never> {
  readonly name: string
  readonly events: Stream.Stream<Event<A>, E, R>
  readonly synced: Effect.Effect<void>
  /** The source's connection (default: always connected). */
  readonly health?: Effect.Effect<Health> | undefined
  /**
   * The priority of the requests its events cause in a priority queue (see {@link withPriority}); a handler's
   * own rule comes first. Default: `Handler.lowPriorityWhenUnchanged`.
   */
  readonly priority?: Priority<A> | undefined
}

/**
 * The connection of a source. `Disconnected.since` is when the source last
 * heard from its server (milliseconds on Effect's `Clock`): for a watch, the
 * last list page, event, bookmark or normal end before the failure that
 * disconnected it; `reason` says what failed (e.g. `Transport`, `idle`).
 *
 * @since 0.1.0
 * @category models
 */
export type Health = Data.TaggedEnum<{
  Connected: {}
  Disconnected: { readonly since: number; readonly reason: string }
}>

/**
 * Constructors and `$match` for {@link Health}.
 *
 * @example
 * ```ts
 * import { Source } from "@reconcile/core"
 *
 * const lost = Source.Health.Disconnected({ since: Date.now(), reason: "Transport" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const Health = Data.taggedEnum<Health>()

/**
 * The health of a source without a connection, or of one that is connected.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connected: Health = Health.Connected()

/**
 * Makes a source from its parts; `synced` defaults to "synced at once",
 * `health` to "always connected".
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, E = never, R = never>(options: {
  readonly name: string
  readonly events: Stream.Stream<Event<A>, E, R>
  readonly synced?: Effect.Effect<void> | undefined
  readonly health?: Effect.Effect<Health> | undefined
  readonly priority?: Priority<A> | undefined
}): Source<A, E, R> => ({
  name: options.name,
  events: options.events,
  synced: options.synced ?? Effect.void,
  health: options.health,
  ...(options.priority === undefined ? {} : { priority: options.priority })
})

/**
 * A source from any stream of events. It counts as synced at once unless a
 * `synced` effect is given (e.g. `Deferred.await` of a deferred the stream
 * completes after its initial list).
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Event, Source } from "@reconcile/core"
 *
 * const source = Source.fromStream("fixed", Stream.make(Event.create({ metadata: { name: "a" } }, { initial: true })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStream = <A, E = never, R = never>(
  name: string,
  stream: Stream.Stream<Event<A>, E, R>,
  options?: { readonly synced?: Effect.Effect<void> | undefined }
): Source<A, E, R> => make({ name, events: stream, synced: options?.synced })

/**
 * A channel source fed from a queue (external events such as webhooks). Every
 * run of `events` takes from the same queue, so concurrent runs split the
 * events between them; the stream ends when the queue is shut down or ended
 * (`Queue.end`, for a queue whose error type includes `Cause.Done`). Synced at
 * once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromQueue = <A>(name: string, queue: Queue.Dequeue<Event<A>, Cause.Done>): Source<A> =>
  make({ name, events: internal.fromQueue(queue) })

/**
 * A channel source fed from a `PubSub`: each run of `events` subscribes anew
 * and receives what is published from then on (not what was published
 * before). The stream ends when the PubSub is shut down. Synced at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPubSub = <A>(name: string, pubsub: PubSub.PubSub<Event<A>>): Source<A> =>
  make({ name, events: Stream.fromPubSub(pubsub) })

/**
 * A channel source with its feeding end, as made by {@link channel}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Channel<A> {
  readonly source: Source<A>
  /** Enqueues an event; `false` once the channel is shut down. */
  readonly offer: (event: Event<A>) => Effect.Effect<boolean>
  /** Shuts the channel down: its stream ends at once (events not yet taken are dropped) and `offer` returns `false`. */
  readonly shutdown: Effect.Effect<void>
}

/**
 * A channel source backed by an unbounded queue, with the `offer` function to
 * feed it: the convenient way to push external events (webhooks, a message
 * bus) into a controller. Offered events are kept until the source's stream
 * takes them, so nothing offered before the controller starts is lost.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Event, Source } from "@reconcile/core"
 *
 * const program = Effect.gen(function*() {
 *   const webhooks = yield* Source.channel<{ metadata: { name: string; namespace: string } }>("github")
 *   // give webhooks.source to a controller; from an HTTP handler:
 *   yield* webhooks.offer(Event.generic({ metadata: { name: "web", namespace: "default" } }))
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const channel: <A>(name: string) => Effect.Effect<Channel<A>> = internal.channel

/**
 * A resync source: emits a `Generic` event for every object `list` returns,
 * every `every` (a fixed rate: a slow `list` delays the next tick, ticks do not
 * pile up). The first batch is emitted when the stream starts, or after
 * `every` with `immediate: false`. A failure of `list` fails the stream.
 * Synced at once. Time comes from Effect's `Clock`, so `TestClock` drives it.
 * `every` should be positive: a zero interval re-lists without pause. Like
 * controller-runtime's resyncs, its events enter a priority queue at
 * `Handler.LowPriority` (change it with {@link withPriority}).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Source } from "@reconcile/core"
 *
 * declare const listApps: Effect.Effect<ReadonlyArray<{ metadata: { name: string } }>>
 * const resync = Source.periodic("resync", "10 minutes", listApps, { immediate: false })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const periodic = <A, E = never, R = never>(
  name: string,
  every: Duration.Input,
  list: Effect.Effect<Iterable<A>, E, R>,
  options?: { readonly immediate?: boolean | undefined }
): Source<A, E, R> =>
  make({
    name,
    events: internal.periodic(every, list, options?.immediate ?? true),
    priority: () => PriorityWorkqueue.LowPriority
  })

/**
 * Keeps only the events the predicate passes (`Stream.filter` on the events).
 * Name and `synced` are unchanged.
 *
 * @since 0.1.0
 * @category combinators
 */
export const filter: {
  <A>(predicate: Predicate<NoInfer<A>>): <E, R>(self: Source<A, E, R>) => Source<A, E, R>
  <A, E, R>(self: Source<A, E, R>, predicate: Predicate<NoInfer<A>>): Source<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Source<A, E, R>, predicate: Predicate<A>): Source<A, E, R> =>
    make({
      name: self.name,
      events: Stream.filter(self.events, predicate),
      synced: self.synced,
      health: self.health,
      priority: self.priority
    })
)

/**
 * Keeps only the events every predicate passes: controller-runtime's
 * `WithPredicates`/`WithEventFilter`, pipeable.
 *
 * @example
 * ```ts
 * import { pipe } from "effect"
 * import { Predicates, Source } from "@reconcile/core"
 *
 * declare const apps: Source.Source<{ metadata?: { generation?: number } }>
 * const specChanges = pipe(apps, Source.withPredicates(Predicates.generationChanged))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPredicates = <A>(
  ...predicates: ReadonlyArray<Predicate<NoInfer<A>>>
): <E, R>(self: Source<A, E, R>) => Source<A, E, R> =>
(self) => filter(self, Predicates.all(predicates))

/**
 * Gives the requests caused by a source's events a priority in a controller
 * with a priority queue: a number for every event, or a rule per event
 * (`undefined` falls back to `Handler.lowPriorityWhenUnchanged`). A
 * handler's own rule (`Handler.withPriority`) comes first. Name, `synced`
 * and `health` are unchanged.
 *
 * @example
 * ```ts
 * import { pipe } from "effect"
 * import { Handler, Source } from "@reconcile/core"
 *
 * declare const nodes: Source.Source<{ metadata?: { resourceVersion?: string } }>
 * // node changes wait behind everything else, initial list or not
 * const background = pipe(nodes, Source.withPriority(Handler.LowPriority))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPriority: {
  <A = unknown>(priority: number | Priority<A>): <B extends A, E, R>(self: Source<B, E, R>) => Source<B, E, R>
  <A, E, R>(self: Source<A, E, R>, priority: number | Priority<NoInfer<A>>): Source<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Source<A, E, R>, priority: number | Priority<A>): Source<A, E, R> => ({
    ...self,
    priority: typeof priority === "number" ? () => priority : priority
  })
)
