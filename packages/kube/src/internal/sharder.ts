/**
 * The sharder: run by the replica that holds the ring's sharder Lease, it keeps every object of the ring's kinds
 * assigned to a live shard (the rules are `shardRules.ts`'s).
 *
 * - **Membership**: `shardMembership.ts` (the live shards, by their Leases).
 * - **Objects**: metadata-only informers of the ring's kinds, so the sharder's memory does not grow with object
 *   size. A primary kind (a controller's `for`) is assigned by `decide`, with the drain handshake when it moves from
 *   a live shard. A controlled kind (an `owns` kind) follows its controlling owner's assignment: its events only
 *   enqueue the owner, whose shard reconciles it, so it needs no handshake of its own.
 * - **Writes**: a merge patch of the labels that carries the `resourceVersion` the decision was made on, so a
 *   decision made on a stale view is refused (`Conflict`) and made again when the watch catches up. Patches run
 *   `concurrency` at a time from a deduplicated set of keys, each decided afresh when its turn comes.
 */
import type { ObjectMeta } from "@reconcile/core/ObjectMeta"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Cache from "../Cache.js"
import type * as Informer from "../Informer.js"
import type * as KubeClient from "../KubeClient.js"
import * as MetadataOnly from "../MetadataOnly.js"
import type * as Resource from "../Resource.js"
import * as internalInformer from "./informer.js"
import { compactObject } from "./metadataOnly.js"
import type * as shardMembership from "./shardMembership.js"
import * as rules from "./shardRules.js"

/** The ring's kinds. */
export interface Kinds {
  /** The `for` kinds of the ring's controllers: moved with the drain handshake. */
  readonly primaries: ReadonlyArray<Resource.Resource<any>>
  /** Their `owns` kinds (not also primary): they follow their controlling owner. */
  readonly controlled: ReadonlyArray<Resource.Resource<any>>
}

/** The sharding metrics (Prometheus names without the `reconcile_` prefix the exporter adds, if any). */
export const metrics = {
  members: Metric.gauge("shard_ring_members", { description: "Live shards of the ring, as its sharder sees them." }),
  objects: Metric.gauge("shard_objects", { description: "Objects of the ring's primary kinds assigned to a shard." }),
  moves: Metric.counter("shard_moves_total", {
    description: "Objects the sharder moved: drains started, and reassignments from shards whose Lease expired.",
    incremental: true
  }),
  assignment: Metric.histogram("shard_assignment_duration_seconds", {
    description: "Time from the sharder first seeing an unassigned object to its assignment.",
    boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
  }),
  releases: Metric.counter("shard_releases_total", {
    description: "Objects this shard let go of after a drain request.",
    incremental: true
  })
}

interface Kind {
  readonly index: number
  readonly resource: Resource.Resource<MetadataOnly.PartialObjectMetadata>
  readonly primary: boolean
  readonly informer: Informer.Informer<MetadataOnly.PartialObjectMetadata>
}

/** What the sharder writes for an object, decided on its current metadata. */
interface Plan {
  readonly labels: Record<string, string | null>
  readonly what: "assign" | "reassign" | "drain" | "follow"
}

const byUid = "uid"

/** Runs the sharder until the scope closes. */
export const run = (params: {
  readonly client: KubeClient.KubeClient.Service
  /** The ring's members, watched by this replica. */
  readonly membership: shardMembership.Membership
  readonly ring: string
  /** The shard Leases' namespace. */
  readonly namespace: string
  /** Only objects of this namespace (a cache restricted to one), else all. */
  readonly objectNamespace?: string | undefined
  readonly kinds: Kinds
  /** Patches in flight at most. */
  readonly concurrency?: number | undefined
}): Effect.Effect<never, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { client, ring: ringName } = params
    const shardLabel = rules.shardLabel(ringName)
    const drainLabel = rules.drainLabel(ringName)
    const attributes = { ring: ringName }
    const members = Metric.withAttributes(metrics.members, attributes)
    const moves = Metric.withAttributes(metrics.moves, attributes)
    const assignment = Metric.withAttributes(metrics.assignment, attributes)

    const kinds: Array<Kind> = []
    const add = (resource: Resource.Resource<any>, primary: boolean) =>
      Effect.map(
        internalInformer.make(
          Cache.listWatch(client, MetadataOnly.make(resource), { namespace: params.objectNamespace }),
          { failAtStart: false, transform: compactObject }
        ),
        (informer) => {
          if (primary) informer.store.addIndex(byUid, (o) => o.metadata.uid === undefined ? [] : [o.metadata.uid])
          kinds.push({ index: kinds.length, resource: MetadataOnly.make(resource), primary, informer })
        }
      )
    for (const resource of params.kinds.primaries) yield* add(resource, true)
    for (const resource of params.kinds.controlled) yield* add(resource, false)

    let ring = rules.ring([])
    const same = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x))
    const sameMembers = (live: ReadonlySet<string>, pending: ReadonlySet<string>) =>
      same(live, ring.live) && same(pending, ring.pending)

    // --- decisions ----------------------------------------------------------------------------------------------
    const keyOf = (kind: Kind, meta: ObjectMeta) => `${kind.index}|${meta.namespace ?? ""}|${meta.name ?? ""}`
    const metaOf = (kind: Kind, namespace: string, name: string) =>
      kind.informer.store.get(name, namespace === "" ? undefined : namespace)?.metadata
    const ownerShard = (uid: string): { readonly known: boolean; readonly shard: string | undefined } => {
      for (const kind of kinds) {
        if (!kind.primary) continue
        const owner = kind.informer.store.byIndex(byUid, uid)[0]
        if (owner !== undefined) return { known: true, shard: owner.metadata.labels?.[shardLabel] }
      }
      return { known: false, shard: undefined }
    }
    const planOf = (kind: Kind, meta: ObjectMeta): Plan | undefined => {
      const current = meta.labels?.[shardLabel]
      if (kind.primary) {
        const decision = rules.decide(ringName, ring, meta)
        switch (decision._tag) {
          case "Keep":
            return undefined
          case "Assign":
            return {
              labels: { [shardLabel]: decision.shard, [drainLabel]: null },
              what: current === undefined ? "assign" : "reassign"
            }
          case "Drain":
            return { labels: { [drainLabel]: rules.draining }, what: "drain" }
        }
      }
      const ownerUid = rules.keyOf(meta)
      const owner = ownerUid === meta.uid ? { known: false, shard: undefined } : ownerShard(ownerUid)
      const desired = owner.known ? owner.shard : ring.place(ownerUid)
      return desired === undefined || desired === current
        ? undefined
        : { labels: { [shardLabel]: desired }, what: "follow" }
    }

    // --- writes ---------------------------------------------------------------------------------------------------
    const work = yield* Queue.unbounded<string>()
    const pending = new Set<string>()
    const firstSeen = new Map<string, number>()
    const dirty = new Set<string>()
    const wake = yield* Queue.sliding<void>(1)
    const membership = params.membership
    yield* membership.subscribe(() => Queue.offerUnsafe(wake, undefined))
    const mark = (key: string) => {
      dirty.add(key)
      Queue.offerUnsafe(wake, undefined)
    }
    const parse = (key: string) => {
      const [index, namespace, name] = key.split("|") as [string, string, string]
      return { kind: kinds[Number(index)]!, namespace, name }
    }

    const write = (key: string) =>
      Effect.gen(function*() {
        pending.delete(key)
        const { kind, name, namespace } = parse(key)
        const meta = metaOf(kind, namespace, name)
        if (meta === undefined) return
        const plan = planOf(kind, meta)
        if (plan === undefined) return
        const patched = yield* client.patch(kind.resource, name, {
          metadata: { resourceVersion: meta.resourceVersion, labels: plan.labels }
        }, { type: "merge", namespace: namespace === "" ? undefined : namespace }).pipe(
          Effect.as(true),
          Effect.catch((error) => {
            // a stale view, or gone: the watch brings the news and the object is looked at again
            if (error._tag === "Conflict" || error._tag === "NotFound") return Effect.succeed(false)
            return Effect.logWarning("could not assign an object to its shard").pipe(
              Effect.annotateLogs({ object: `${namespace}/${name}`, error: error.message }),
              Effect.andThen(Effect.sleep("1 second")),
              Effect.andThen(Effect.sync(() => mark(key))),
              Effect.as(false)
            )
          })
        )
        if (!patched) return
        if (plan.what === "drain" || plan.what === "reassign") yield* Metric.update(moves, 1)
        if (plan.what === "assign" || plan.what === "reassign") {
          const seen = firstSeen.get(key)
          firstSeen.delete(key)
          if (seen !== undefined) yield* Metric.update(assignment, ((yield* Clock.currentTimeMillis) - seen) / 1000)
        }
      })
    const concurrency = Math.max(1, params.concurrency ?? 16)
    for (let i = 0; i < concurrency; i++) {
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(work), write)))
    }

    /** Looks at one dirty object: queues a write when its labels must change. */
    const consider = (key: string, now: number) => {
      const { kind, name, namespace } = parse(key)
      const meta = metaOf(kind, namespace, name)
      if (meta === undefined) {
        firstSeen.delete(key)
        return
      }
      if (kind.primary && meta.labels?.[shardLabel] === undefined && !firstSeen.has(key)) firstSeen.set(key, now)
      if (pending.has(key) || planOf(kind, meta) === undefined) return
      pending.add(key)
      Queue.offerUnsafe(work, key)
    }
    const markAll = () => {
      for (const kind of kinds) for (const object of kind.informer.store.list()) dirty.add(keyOf(kind, object.metadata))
    }

    // --- events ---------------------------------------------------------------------------------------------------
    for (const kind of kinds) {
      yield* Effect.forkScoped(Stream.runForEach(kind.informer.events, (event) =>
        Effect.sync(() => {
          const meta = event.object.metadata
          mark(keyOf(kind, meta))
          // an owner's assignment changed: its controlled objects follow
          if (!kind.primary || meta.uid === undefined) return
          const before = event._tag === "Update" ? event.old.metadata.labels?.[shardLabel] : undefined
          if (event._tag === "Update" && before === meta.labels?.[shardLabel]) return
          for (const other of kinds) {
            if (other.primary) continue
            for (const child of other.informer.store.byIndex("ownerUid", meta.uid)) mark(keyOf(other, child.metadata))
          }
        })))
    }

    // --- the loop ---------------------------------------------------------------------------------------------------
    yield* membership.synced
    for (const kind of kinds) yield* kind.informer.synced.pipe(Effect.ignore)
    yield* Effect.logInfo("sharder started").pipe(Effect.annotateLogs({ kinds: kinds.length }))
    let countedAt = -Infinity
    const reported = new Set<string>()
    while (true) {
      yield* membership.verify(yield* Clock.currentTimeMillis)
      const now = yield* Clock.currentTimeMillis
      const { live, next, pending } = membership.at(now)
      if (!sameMembers(live, pending)) {
        ring = rules.ring(live, pending)
        yield* Metric.update(members, live.size)
        yield* Effect.logInfo("ring changed").pipe(Effect.annotateLogs({ shards: [...live].sort().join(",") }))
        markAll()
      }
      for (const key of dirty) consider(key, now)
      dirty.clear()
      if (now - countedAt >= 5_000) {
        countedAt = now
        yield* countObjects(kinds, shardLabel, attributes, reported)
        yield* membership.collect(now)
      }
      const wait = Math.max(1, Math.min(next - now, 1_000))
      yield* Effect.timeoutOption(Queue.take(wake), wait)
    }
  }).pipe(Effect.annotateLogs({ ring: params.ring }))

/** `shard_objects{shard}` from the primary stores (a shard that holds nothing any more is reported as 0). */
const countObjects = (
  kinds: ReadonlyArray<Kind>,
  shardLabel: string,
  attributes: Readonly<Record<string, string>>,
  reported: Set<string>
) =>
  Effect.suspend(() => {
    const counts = new Map<string, number>()
    for (const shard of reported) counts.set(shard, 0)
    for (const kind of kinds) {
      if (!kind.primary) continue
      for (const object of kind.informer.store.list()) {
        const shard = object.metadata.labels?.[shardLabel]
        if (shard !== undefined) counts.set(shard, (counts.get(shard) ?? 0) + 1)
      }
    }
    for (const [shard, count] of counts) {
      if (count > 0) reported.add(shard)
      else reported.delete(shard)
    }
    return Effect.forEach(
      counts,
      ([shard, count]) => Metric.update(Metric.withAttributes(metrics.objects, { ...attributes, shard }), count),
      { discard: true }
    )
  })
