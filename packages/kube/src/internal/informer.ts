import * as Event from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Source from "@reconcile/core/Source"
import type * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import type * as Informer from "../Informer.js"
import type * as Watcher from "../Watcher.js"
import * as Watch from "../Watcher.js"
import { keyOf, MutableStore } from "./store.js"

/** @internal */
export const stripManagedFields = <A extends HasMetadata>(object: A): A => {
  const metadata = object.metadata as (HasMetadata["metadata"] & { managedFields?: unknown }) | undefined
  if (metadata === undefined || metadata.managedFields === undefined) return object
  const { managedFields: _, ...rest } = metadata
  return { ...object, metadata: rest }
}

const rv = (object: HasMetadata) => object.metadata?.resourceVersion

const isNonEmpty = <A>(as: Array<A>): as is Arr.NonEmptyArray<A> => as.length > 0

/**
 * The reflector: applies watcher events to the store and returns the core
 * events they mean.
 *
 * @internal
 */
export class Reflector<A extends HasMetadata> {
  readonly store = new MutableStore<A>()
  private buffer: Map<string, A> | undefined
  synced = false

  constructor(private readonly transform: (a: A) => A) {}

  apply(event: Watcher.WatcherEvent<A>): ReadonlyArray<Event.Event<A>> {
    switch (event._tag) {
      case "Init":
        this.buffer = new Map()
        return []
      case "InitApply": {
        const object = this.transform(event.object)
        this.buffer?.set(keyOf(object), object)
        return []
      }
      case "InitDone": {
        const next = this.buffer ?? new Map<string, A>()
        this.buffer = undefined
        const events: Array<Event.Event<A>> = []
        const initial = !this.synced
        for (const [key, object] of next) {
          const old = this.store.getByKey(key)
          if (old === undefined) events.push(Event.create(object, { initial }))
          else if (rv(old) !== rv(object)) events.push(Event.update(old, object))
        }
        for (const key of this.store.keys()) {
          if (!next.has(key)) events.push(Event.delete(this.store.getByKey(key)!, { finalStateUnknown: true }))
        }
        this.store.replace(next)
        this.synced = true
        return events
      }
      case "Apply": {
        const object = this.transform(event.object)
        const old = this.store.upsert(object)
        return [old === undefined ? Event.create(object) : Event.update(old, object)]
      }
      case "Delete": {
        const old = this.store.remove(event.object)
        return [Event.delete(old ?? this.transform(event.object))]
      }
    }
  }
}

/** @internal */
export const make = <A extends HasMetadata>(
  listWatch: Watcher.ListWatch<A>,
  options: Informer.Options<A> = {}
) =>
  Effect.gen(function*() {
    const reflector = new Reflector<A>(options.transform ?? stripManagedFields)
    // Every batch of events is numbered, and applying it to the store and publishing it happen in
    // one synchronous step. A subscriber notes the number its snapshot of the store corresponds to
    // and skips older batches still in its queue: nothing is seen twice, nothing is missed.
    let published = 0
    const pubsub = yield* PubSub.unbounded<readonly [number, Arr.NonEmptyReadonlyArray<Event.Event<A>>]>()
    const synced = yield* Deferred.make<void>()
    yield* Watch.watch(listWatch, options.watcher).pipe(
      Stream.runForEachArray((chunk) =>
        Effect.suspend(() => {
          let initDone = false
          const batch: Array<Event.Event<A>> = []
          for (const event of chunk) {
            const events = reflector.apply(event)
            for (const e of events) batch.push(e)
            if (event._tag === "InitDone") initDone = true
          }
          if (isNonEmpty(batch)) PubSub.publishUnsafe(pubsub, [++published, batch])
          return initDone ? Deferred.succeed(synced, undefined) : Effect.void
        })
      ),
      Effect.forkScoped
    )
    // A batch stays one chunk for subscribers (`flattenArray`).
    const events: Stream.Stream<Event.Event<A>> = Stream.unwrap(
      Effect.flatMap(PubSub.subscribe(pubsub), (subscription) =>
        Effect.sync(() => {
          const seen = published
          const existing = reflector.synced
            ? reflector.store.list().map((object) => Event.create(object, { initial: true }))
            : []
          return Stream.concat(
            Stream.fromIterable(existing),
            Stream.fromSubscription(subscription).pipe(
              Stream.filter(([n]) => n > seen),
              Stream.map(([, batch]) => batch),
              Stream.flattenArray
            )
          )
        }))
    )
    const informer: Informer.Informer<A> = {
      name: listWatch.name,
      store: reflector.store,
      synced: Deferred.await(synced),
      hasSynced: Deferred.isDone(synced),
      events,
      source: Source.make({ name: listWatch.name, events, synced: Deferred.await(synced) })
    }
    return informer
  })
