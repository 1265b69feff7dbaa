import * as Event from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Source from "@reconcile/core/Source"
import type * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as PubSub from "effect/PubSub"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type * as Informer from "../Informer.js"
import type * as KubeError from "../KubeError.js"
import * as Store from "../Store.js"
import * as Undecodable from "../Undecodable.js"
import type * as Watcher from "../Watcher.js"
import * as Watch from "../Watcher.js"
import { intern } from "./intern.js"
import { MutableStore } from "./store.js"

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

type UndecodableEvent = Event.Event<Undecodable.Undecodable>

/** Published when the informer failed at start (see `failure` in `make`). */
const startFailed: unique symbol = Symbol("startFailed")

/** Counts objects an informer received that did not decode (list items and watch events), by kind. @internal */
export const decodeFailuresTotal = Metric.counter("informer_decode_failures_total", {
  description: "Objects (list items and watch events) an informer received that did not decode, by kind"
})

/** The objects an informer holds that do not decode. @internal */
export const undecodableObjects = Metric.gauge("informer_undecodable_objects", {
  description: "Objects an informer holds that exist but do not decode"
})

/** @internal */
export const make = <A extends HasMetadata>(
  listWatch: Watcher.ListWatch<A>,
  options: Informer.Options<A> = {}
) =>
  Effect.gen(function*() {
    const store = new MutableStore<A>()
    // The reflector applies each chunk of watcher events in one synchronous step and says at which revision of the
    // store it left it; the changes are published in order. A subscriber notes the revision its snapshot of the
    // store was read at and skips the changes it already holds: nothing is seen twice, nothing is missed.
    let synced = false
    const pubsub = yield* PubSub.unbounded<Store.Changes<A> | typeof startFailed>()
    const firstList = yield* Deferred.make<void, KubeError.KubeError>()
    /**
     * The startup failure, once there is one: the informer's streams die with it (as a defect). It is published
     * too (`startFailed`), so a subscriber waiting for changes wakes up to it — a stage racing every pull against
     * the failure would cost a fiber hand-off per chunk.
     */
    let failure: KubeError.KubeError | undefined
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
          store.undecodableCount()
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
      Store.reflector(store, { transform: options.transform ?? stripManagedFields }),
      // The effect returned for a chunk must not hold its changes: a list's changes hold a `Create` per object, and
      // whoever awaits `synced` runs while this effect does (the heap at sync would count them on top of the store).
      Stream.runForEachArray((chunk) => {
        let listed = false
        let failures: Array<KubeError.Decode> | undefined
        let undecodable: Array<UndecodableEvent> | undefined
        for (const changes of chunk) {
          if (changes.events.length > 0 || changes.undecodable.length > 0) PubSub.publishUnsafe(pubsub, changes)
          if (changes.listed) listed = synced = true
          for (const failure of changes.decodeFailures) (failures ??= []).push(failure)
          for (const event of changes.undecodable) (undecodable ??= []).push(event)
        }
        const done = listed ? Deferred.succeed(firstList, undefined) : Effect.void
        return failures === undefined && undecodable === undefined
          ? done
          : Effect.andThen(report(failures ?? [], undecodable ?? []), done)
      }),
      // a failure at start (a CRD not installed, 403, …: see `Watcher.Options.startup`) fails `synced` with it; the
      // failure is the report (a main program prints it once), so it is logged at debug only
      Effect.catch((error) =>
        Effect.andThen(
          Effect.logDebug(error.message).pipe(Effect.annotateLogs({ informer: informerName, error: error._tag })),
          Effect.andThen(
            Effect.sync(() => {
              failure = error
              PubSub.publishUnsafe(pubsub, startFailed)
            }),
            Deferred.fail(firstList, error)
          )
        )
      ),
      Effect.forkScoped
    )
    /**
     * Stored objects as initial creates, then the live events `pick` takes from each change: one stage, one chunk
     * for the changes published since the last pull.
     */
    const subscribe = <B>(
      existing: () => ReadonlyArray<B>,
      pick: (changes: Store.Changes<A>) => ReadonlyArray<Event.Event<B>>
    ): Stream.Stream<Event.Event<B>> =>
      Stream.unwrap(
        Effect.flatMap(PubSub.subscribe(pubsub), (subscription) =>
          Effect.sync(() => {
            // the store is empty until the first list is stored: before it, no initial creates
            const seen = store.revision()
            const initial = existing().map((object) => Event.create(object, { initial: true }))
            const live = Stream.transformPull(Stream.fromSubscription(subscription), (pull) =>
              Effect.sync(() => {
                const next: Pull.Pull<Arr.NonEmptyReadonlyArray<Event.Event<B>>> = Effect.flatMap(pull, (batch) => {
                  let out: Array<Event.Event<B>> | undefined
                  for (const changes of batch) {
                    if (changes === startFailed) return Effect.die(failure)
                    if (changes.revision <= seen) continue
                    const events = pick(changes)
                    if (events.length === 0) continue
                    if (out === undefined) out = batch.length === 1 ? events as Array<Event.Event<B>> : [...events]
                    else for (const event of events) out.push(event)
                  }
                  return out !== undefined && out.length > 0
                    ? Effect.succeed(out as Arr.NonEmptyArray<Event.Event<B>>)
                    : next
                })
                return next
              }))
            return failure !== undefined ? Stream.die(failure) : Stream.concat(Stream.fromIterable(initial), live)
          }))
      )
    const events = subscribe(() => store.list(), (changes) => changes.events)
    const undecodableEvents = subscribe(() => store.listUndecodable(), (changes) => changes.undecodable)
    // a source's `synced` never fails: a failed start ends its `events` instead (as a defect carrying the error)
    const sourceSynced = Effect.catch(Deferred.await(firstList), () => Effect.never)
    const informer: Informer.Informer<A> = {
      name: listWatch.name,
      store,
      synced: Deferred.await(firstList),
      hasSynced: Effect.sync(() => synced),
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
