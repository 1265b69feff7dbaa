/**
 * A shard of a ring sharded by the API server (`shardBuckets.ts`): it follows the sharder's table (the annotation of
 * the sharder's Lease, watched), lists and watches the ranges of the buckets it serves (the cache relists when they
 * change), reconciles an object only while its bucket is served (assigned, not draining), and publishes what
 * it serves through its own Lease — a generation without a bucket only once no reconcile of an object of that
 * bucket is in flight. That publication is the acknowledgement the sharder waits for before it moves the bucket.
 */
import type { HasMetadata, ObjectMeta } from "@reconcile/core/ObjectMeta"
import * as Request from "@reconcile/core/Request"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Cache from "../Cache.js"
import type * as KubeClient from "../KubeClient.js"
import * as Resource from "../Resource.js"
import type * as Store from "../Store.js"
import * as internalInformer from "./informer.js"
import * as buckets from "./shardBuckets.js"
import type { Gate, ServerSelection } from "./shardingService.js"

/** A shard's state, made before its Lease's election (which publishes `annotations`) and run after it. */
export interface Keeper {
  /** What this shard's Lease publishes. */
  readonly annotations: () => Readonly<Record<string, string>>
  /** The ranges the cache lists and watches. */
  readonly selection: ServerSelection
  /** The gate of a controller over its primary store. */
  readonly gate: (store: Store.Store<HasMetadata>) => Gate
  /** Follows the sharder's table until the scope closes; `publish` renews this shard's Lease at once. */
  readonly run: (params: {
    readonly client: KubeClient.KubeClient.Service
    readonly namespace: string
    readonly sharderLease: string
    readonly publish: Effect.Effect<void>
  }) => Effect.Effect<void, never, Scope.Scope>
}

/** @internal */
export const make = (identity: string): Effect.Effect<Keeper> =>
  Effect.gen(function*() {
    let applied = 0
    let serving = new Set<number>()
    let selector = buckets.selectorOf(new Set())
    let selectorChanged = yield* Deferred.make<void>()
    let published: buckets.Serving = { generation: 0, buckets: new Set() }
    let pending: buckets.Serving = published
    const publisherWake = yield* Queue.sliding<void>(1)
    const inFlight = new Map<number, number>()
    const finished = yield* Queue.sliding<void>(1)
    /** Every gate's keys last seen served, with their bucket (a key whose object left the cache runs once). */
    const helds = new Set<Map<string, number>>()

    const track = <E, R>(bucket: number, effect: Effect.Effect<void, E, R>): Effect.Effect<void, E, R> => {
      inFlight.set(bucket, (inFlight.get(bucket) ?? 0) + 1)
      return Effect.ensuring(
        effect,
        Effect.sync(() => {
          const n = (inFlight.get(bucket) ?? 1) - 1
          if (n === 0) inFlight.delete(bucket)
          else inFlight.set(bucket, n)
          Queue.offerUnsafe(finished, undefined)
        })
      )
    }

    const gate = (store: Store.Store<HasMetadata>): Gate => {
      const held = new Map<string, number>()
      helds.add(held)
      return (request, reconcile) => {
        const key = Request.key(request)
        const meta: ObjectMeta | undefined = (store.get(request.name, request.namespace) ??
          store.undecodable(request.name, request.namespace))?.metadata
        if (meta === undefined) {
          const bucket = held.get(key)
          held.delete(key)
          return bucket !== undefined && serving.has(bucket) ? track(bucket, reconcile(request)) : Effect.void
        }
        const bucket = buckets.bucketOf(meta.uid ?? "")
        if (!serving.has(bucket)) {
          held.delete(key)
          return Effect.void
        }
        held.set(key, bucket)
        return track(bucket, reconcile(request))
      }
    }

    const apply = (table: buckets.Table) => {
      applied = table.generation
      const assigned = new Set<number>()
      table.shards.forEach((shard, b) => {
        if (shard === identity) assigned.add(b)
      })
      serving = new Set([...assigned].filter((b) => !table.draining.has(b)))
      for (const held of helds) {
        for (const [key, bucket] of held) if (!serving.has(bucket)) held.delete(key)
      }
      // the ranges served, not all those assigned: a bucket served again (no longer drained) is relisted, so its
      // objects are reconciled again (their events while it was drained were dropped)
      const next = buckets.selectorOf(serving)
      if (next !== selector) {
        selector = next
        const changed = selectorChanged
        selectorChanged = Deferred.makeUnsafe<void>()
        Deferred.doneUnsafe(changed, Effect.void)
      }
      pending = { generation: table.generation, buckets: serving }
      Queue.offerUnsafe(publisherWake, undefined)
    }

    /** Publishes the latest state once nothing outside it is in flight. */
    const publisher = (publish: Effect.Effect<void>) =>
      Effect.forever(Effect.gen(function*() {
        yield* Queue.take(publisherWake)
        while (true) {
          const next = pending
          if ([...inFlight.keys()].some((bucket) => !next.buckets.has(bucket))) {
            yield* Queue.take(finished)
            continue
          }
          if (next !== pending) continue
          published = next
          yield* publish
          yield* Effect.logDebug("serving").pipe(
            Effect.annotateLogs({ generation: next.generation, buckets: next.buckets.size })
          )
          return
        }
      }))

    const run: Keeper["run"] = ({ client, namespace, publish, sharderLease }) =>
      Effect.gen(function*() {
        const informer = yield* internalInformer.make(
          Cache.listWatch(client, Resource.Lease, { namespace, fieldSelector: `metadata.name=${sharderLease}` }),
          { failAtStart: false }
        )
        yield* Effect.forkScoped(publisher(publish))
        yield* Effect.forkScoped(Stream.runForEach(informer.events, (event) =>
          Effect.sync(() => {
            if (event._tag === "Delete") return
            const table = buckets.decodeTable(event.object.metadata?.annotations?.[buckets.tableAnnotation])
            if (table !== undefined && table.generation > applied) apply(table)
          })))
      })

    return {
      annotations: () => ({ [buckets.servingAnnotation]: buckets.encodeServing(published) }),
      selection: {
        current: () => selector,
        changed: (from) => Effect.suspend(() => from !== selector ? Effect.void : Deferred.await(selectorChanged))
      },
      gate,
      run
    }
  })
