import * as Event from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Source from "@reconcile/core/Source"
import type * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import type * as Informer from "../Informer.js"
import type * as KubeError from "../KubeError.js"
import * as Undecodable from "../Undecodable.js"
import type * as Watcher from "../Watcher.js"
import * as Watch from "../Watcher.js"
import { intern } from "./intern.js"
import { keyOf, MutableStore } from "./store.js"
import * as internalUndecodable from "./undecodable.js"

const internLabels = (labels: unknown): unknown => {
  if (typeof labels !== "object" || labels === null) return labels
  const out: Record<string, unknown> = {}
  for (const key in labels) out[key] = intern((labels as Record<string, unknown>)[key])
  return out
}

/** @internal */
export const stripManagedFields = <A extends HasMetadata>(object: A): A => {
  const metadata = object.metadata as (HasMetadata["metadata"] & { managedFields?: unknown }) | undefined
  if (metadata === undefined || metadata.managedFields === undefined) return object
  const { managedFields: _, ...rest } = metadata as Record<string, unknown>
  if (rest.namespace !== undefined) rest.namespace = intern(rest.namespace)
  if (rest.creationTimestamp !== undefined) rest.creationTimestamp = intern(rest.creationTimestamp)
  if (rest.labels !== undefined) rest.labels = internLabels(rest.labels)
  return { ...object, metadata: rest }
}

const rv = (object: HasMetadata) => object.metadata?.resourceVersion
const uid = (object: HasMetadata) => object.metadata?.uid

type UndecodableEvent = Event.Event<Undecodable.Undecodable>

/** A published batch: its number, the events of decoded objects, the events of undecodable ones. */
type Batch<A> = readonly [number, ReadonlyArray<Event.Event<A>>, ReadonlyArray<UndecodableEvent>]

/** Counts objects an informer received that did not decode (list items and watch events), by kind. @internal */
export const decodeFailuresTotal = Metric.counter("informer_decode_failures_total", {
  description: "Objects (list items and watch events) an informer received that did not decode, by kind"
})

/** The objects an informer holds that do not decode. @internal */
export const undecodableObjects = Metric.gauge("informer_undecodable_objects", {
  description: "Objects an informer holds that exist but do not decode"
})

/**
 * The reflector: applies watcher events to the store and returns the core
 * events they mean — for decoded objects (`out`) and for objects that do not
 * decode (`undecodable`). A key is decoded or undecodable, never both: when an
 * object stops decoding its decoded copy goes (a `Delete` with
 * `finalStateUnknown`, since the server still has it) and it becomes
 * undecodable (a `Create`); when it decodes again, the reverse.
 *
 * @internal
 */
export class Reflector<A extends HasMetadata> {
  readonly store = new MutableStore<A>()
  private buffer: Map<string, A> | undefined
  private undecodableBuffer: Map<string, Undecodable.Undecodable> | undefined
  synced = false

  constructor(private readonly transform: (a: A) => A) {}

  apply(
    event: Watcher.WatcherEvent<A>,
    out: Array<Event.Event<A>>,
    undecodable: Array<Event.Event<Undecodable.Undecodable>>
  ): void {
    switch (event._tag) {
      case "Init":
        this.buffer = new Map()
        this.undecodableBuffer = new Map()
        return
      case "InitApply": {
        const object = this.transform(event.object)
        this.buffer?.set(keyOf(object), object)
        return
      }
      case "InitDone": {
        const next = this.buffer ?? new Map<string, A>()
        const nextUndecodable = this.undecodableBuffer ?? new Map<string, Undecodable.Undecodable>()
        this.buffer = undefined
        this.undecodableBuffer = undefined
        const initial = !this.synced
        for (const [key, object] of next) {
          const old = this.store.getByKey(key)
          if (old === undefined) out.push(Event.create(object, { initial }))
          // after a reset server's relist, another object (uid) may have the name and even the resourceVersion
          else if (rv(old) !== rv(object) || uid(old) !== uid(object)) out.push(Event.update(old, object))
        }
        for (const key of this.store.keys()) {
          if (!next.has(key)) out.push(Event.delete(this.store.getByKey(key)!, { finalStateUnknown: true }))
        }
        for (const [key, object] of nextUndecodable) {
          const old = this.store.undecodableByKey(key)
          if (old === undefined) undecodable.push(Event.create(object, { initial }))
          else if (rv(old) !== rv(object) || uid(old) !== uid(object)) undecodable.push(Event.update(old, object))
        }
        for (const key of this.store.undecodableKeys()) {
          if (!nextUndecodable.has(key)) {
            undecodable.push(Event.delete(this.store.undecodableByKey(key)!, { finalStateUnknown: true }))
          }
        }
        this.store.replace(next, nextUndecodable)
        this.synced = true
        return
      }
      case "Apply": {
        const object = this.transform(event.object)
        const key = keyOf(object)
        const was = this.store.removeUndecodable(key)
        if (was !== undefined) undecodable.push(Event.delete(was))
        const old = this.store.upsert(object, key)
        out.push(old === undefined ? Event.create(object) : Event.update(old, object))
        return
      }
      case "Delete": {
        const key = keyOf(event.object)
        const was = this.store.removeUndecodable(key)
        if (was !== undefined) undecodable.push(Event.delete(was))
        const old = this.store.remove(event.object)
        if (old !== undefined || was === undefined) out.push(Event.delete(old ?? this.transform(event.object)))
        return
      }
      case "Undecodable": {
        const object = internalUndecodable.fromDecode(event.error)
        if (object === undefined) return
        const key = keyOf(object)
        if (event.event === "InitApply") {
          this.undecodableBuffer?.set(key, object)
          return
        }
        // the decoded copy no longer says what is on the server
        const stale = this.store.getByKey(key)
        if (stale !== undefined) {
          this.store.remove(stale)
          out.push(Event.delete(stale, { finalStateUnknown: true }))
        }
        if (event.event === "Delete") {
          this.store.removeUndecodable(key)
          undecodable.push(Event.delete(object))
          return
        }
        const old = this.store.upsertUndecodable(object)
        undecodable.push(old === undefined ? Event.create(object) : Event.update(old, object))
        return
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
    const pubsub = yield* PubSub.unbounded<Batch<A>>()
    const synced = yield* Deferred.make<void, KubeError.KubeError>()
    /** Completes (as a defect) with the startup failure: the informer's streams die with it. */
    const failedAtStart = Effect.flatMap(Deferred.await(synced), () => Effect.never).pipe(
      Effect.catch((error) => Effect.die(error))
    )
    const informerName = listWatch.name
    /** Counts decode failures, logs each new undecodable version, and sets the gauge. */
    const report = (failures: ReadonlyArray<KubeError.Decode>, events: ReadonlyArray<UndecodableEvent>) =>
      Effect.gen(function*() {
        for (const error of failures) {
          yield* Metric.update(
            Metric.withAttributes(decodeFailuresTotal, { informer: informerName, kind: error.kind ?? "unknown" }),
            1
          )
        }
        for (const e of events) {
          if (e._tag !== "Create" && e._tag !== "Update") continue
          yield* Effect.logWarning("an object does not decode; the cache keeps its latest metadata").pipe(
            Effect.annotateLogs({
              informer: informerName,
              resourceVersion: e.object.metadata.resourceVersion ?? "",
              detail: Undecodable.describe(e.object)
            })
          )
        }
        yield* Metric.update(
          Metric.withAttributes(undecodableObjects, { informer: informerName }),
          reflector.store.undecodableCount()
        )
      })
    // the watch connection's health, for the sources' `health` (and the caller's own `onHealth`, if any)
    let health: Source.Health = Source.connected
    const onHealth = options.watcher?.onHealth
    const watcherOptions: Watcher.Options = {
      ...options.watcher,
      startup: options.failAtStart === false ? "retry" : "fail",
      onHealth: (h) =>
        Effect.andThen(
          Effect.sync(() => {
            health = h
          }),
          onHealth === undefined ? Effect.void : onHealth(h)
        )
    }
    const currentHealth = Effect.sync(() => health)
    // `startup` is "fail" unless `failAtStart: false`; the stream's error type is that of "fail" either way
    yield* Watch.watch(listWatch, watcherOptions as Watcher.Options & { readonly startup: "fail" }).pipe(
      Stream.runForEachArray((chunk) =>
        Effect.suspend(() => {
          let initDone = false
          const batch: Array<Event.Event<A>> = []
          const undecodable: Array<UndecodableEvent> = []
          let failures: Array<KubeError.Decode> | undefined
          for (const event of chunk) {
            reflector.apply(event, batch, undecodable)
            if (event._tag === "InitDone") initDone = true
            else if (event._tag === "Undecodable") (failures ??= []).push(event.error)
          }
          if (batch.length > 0 || undecodable.length > 0) {
            PubSub.publishUnsafe(pubsub, [++published, batch, undecodable])
          }
          const done = initDone ? Deferred.succeed(synced, undefined) : Effect.void
          return failures === undefined && undecodable.length === 0
            ? done
            : Effect.andThen(report(failures ?? [], undecodable), done)
        })
      ),
      // a failure at start (a CRD not installed, 403, …: see `Watcher.Options.startup`) fails `synced` with it; the
      // failure is the report (a main program prints it once), so it is logged at debug only
      Effect.catch((error) =>
        Effect.andThen(
          Effect.logDebug(error.message).pipe(Effect.annotateLogs({ informer: informerName, error: error._tag })),
          Deferred.fail(synced, error)
        )
      ),
      Effect.forkScoped
    )
    /** Stored objects as initial creates, then the live events `pick` takes from each batch (one chunk per batch). */
    const subscribe = <B>(
      existing: () => ReadonlyArray<B>,
      pick: (batch: Batch<A>) => ReadonlyArray<Event.Event<B>>
    ): Stream.Stream<Event.Event<B>> =>
      Stream.unwrap(
        Effect.flatMap(PubSub.subscribe(pubsub), (subscription) =>
          Effect.sync(() => {
            const seen = published
            const initial = reflector.synced ? existing().map((object) => Event.create(object, { initial: true })) : []
            return Stream.concat(
              Stream.fromIterable(initial),
              Stream.fromSubscription(subscription).pipe(
                Stream.filter((batch) => batch[0] > seen && pick(batch).length > 0),
                Stream.map((batch) => pick(batch) as Arr.NonEmptyReadonlyArray<Event.Event<B>>),
                Stream.flattenArray
              )
            ).pipe(Stream.interruptWhen(failedAtStart))
          }))
      )
    const events = subscribe(() => reflector.store.list(), (batch) => batch[1])
    const undecodableEvents = subscribe(() => reflector.store.listUndecodable(), (batch) => batch[2])
    // a source's `synced` never fails: a failed start ends its `events` instead (as a defect carrying the error)
    const sourceSynced = Effect.catch(Deferred.await(synced), () => Effect.never)
    const informer: Informer.Informer<A> = {
      name: listWatch.name,
      store: reflector.store,
      synced: Deferred.await(synced),
      hasSynced: Effect.sync(() => reflector.synced),
      events,
      health: currentHealth,
      source: Source.make({ name: listWatch.name, events, synced: sourceSynced, health: currentHealth }),
      undecodable: Source.make({
        name: `${listWatch.name} (undecodable)`,
        events: undecodableEvents,
        synced: sourceSynced,
        health: currentHealth
      })
    }
    return informer
  })
