/**
 * The sharder: run by the replica that holds the ring's sharder Lease, it keeps every object of the ring's kinds
 * assigned to a live shard (the rules are `shardRules.ts`'s).
 *
 * - **Membership**: `shardMembership.ts` (the live shards, by their Leases).
 * - **Primary kinds** (a controller's `for`): watched metadata-only and **not stored**, so the sharder's memory
 *   does not grow with the number of objects it assigns — only with the objects it is about to write. Each object
 *   is decided on as its event arrives (`decide`, with the drain handshake when it moves from a live shard); when
 *   the ring changes, the watches start again from a fresh list, so that every object is decided on again against
 *   the new ring. What the sharder keeps per object is only what is in flight: the latest metadata of an object it
 *   is about to patch, the first sighting of an unassigned one (for the assignment latency), and the shard of an
 *   owner that is not where the ring places it (moving, or waiting for a pending shard), which its children follow.
 * - **Controlled kinds** (an `owns` kind that is no `for`): a metadata-only informer, stored with its owner index,
 *   so that when an owner moves its children can be found and follow it (the hash key of a child is its
 *   controlling owner's uid). Their events only enqueue the owner, whose shard reconciles it, so they need no
 *   handshake of their own.
 * - **Writes**: a merge patch of the labels that carries the `resourceVersion` the decision was made on, so a
 *   decision made on a stale view is refused (`Conflict`) and made again when the watch brings the newer version.
 *   Patches run `concurrency` at a time from a deduplicated set of keys, each decided afresh on the latest
 *   metadata seen when its turn comes.
 */
import type { ObjectMeta } from "@reconcile/core/ObjectMeta"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Cache from "../Cache.js"
import type * as Informer from "../Informer.js"
import type * as KubeClient from "../KubeClient.js"
import * as MetadataOnly from "../MetadataOnly.js"
import type * as Resource from "../Resource.js"
import type * as Watcher from "../Watcher.js"
import * as internalInformer from "./informer.js"
import { compactObject } from "./metadataOnly.js"
import type * as shardMembership from "./shardMembership.js"
import * as rules from "./shardRules.js"
import * as internalWatcher from "./watcher.js"

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
  objects: Metric.gauge("shard_objects", {
    description: "Objects of the ring's primary kinds assigned to a shard, as that shard's cache holds them."
  }),
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

type Meta = MetadataOnly.PartialObjectMetadata

/** A primary kind: watched, not stored. */
interface Primary {
  readonly index: number
  readonly resource: Resource.Resource<Meta>
  readonly listWatch: Watcher.ListWatch<Meta>
  /** Owners (by uid) whose shard label is not where the ring places their uid: their children follow the label. */
  transit: Map<string, string | undefined>
  /** The same, built from a list in progress (it replaces `transit` when the list is complete). */
  building: Map<string, string | undefined> | undefined
  /** The fiber of the current watch. */
  fiber: Fiber.Fiber<void, unknown> | undefined
}

/** A controlled kind: stored, for its owner index. */
interface Controlled {
  readonly index: number
  readonly resource: Resource.Resource<Meta>
  readonly informer: Informer.Informer<Meta>
}

/** An object the sharder is about to write: its kind and the latest metadata seen of it. */
interface Entry {
  readonly kind: Primary | Controlled
  readonly meta: ObjectMeta
}

/** What the sharder writes for an object, decided on its current metadata. */
interface Plan {
  readonly labels: Record<string, string | null>
  readonly what: "assign" | "reassign" | "drain" | "follow"
}

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
  /**
   * When the ring's Leases will have been watched for a retry period (ms, on the fiber's clock): every shard alive
   * then — also one that started with this replica — has written its Lease. A sharder that starts earlier (a fresh
   * process; not a replica that takes over, which has watched them since its start) waits until then.
   */
  readonly ringKnownAt?: number | undefined
}): Effect.Effect<never, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { client, ring: ringName } = params
    const scope = yield* Effect.scope
    const clock = yield* Clock.Clock
    const shardLabel = rules.shardLabel(ringName)
    const drainLabel = rules.drainLabel(ringName)
    const attributes = { ring: ringName }
    const members = Metric.withAttributes(metrics.members, attributes)
    const moves = Metric.withAttributes(metrics.moves, attributes)
    const assignment = Metric.withAttributes(metrics.assignment, attributes)
    const selection = { namespace: params.objectNamespace }

    let index = 0
    const primaries: Array<Primary> = params.kinds.primaries.map((resource) => {
      const metadata = MetadataOnly.make(resource)
      return {
        index: index++,
        resource: metadata,
        listWatch: Cache.listWatch(client, metadata, selection),
        transit: new Map(),
        building: undefined,
        fiber: undefined
      }
    })
    const controlled: Array<Controlled> = []
    for (const resource of params.kinds.controlled) {
      const metadata = MetadataOnly.make(resource)
      const informer = yield* internalInformer.make(Cache.listWatch(client, metadata, selection), {
        failAtStart: false,
        transform: compactObject
      })
      controlled.push({ index: index++, resource: metadata, informer })
    }
    const kinds: ReadonlyArray<Primary | Controlled> = [...primaries, ...controlled]
    const isPrimary = (kind: Primary | Controlled): kind is Primary => "listWatch" in kind

    let ring = rules.ring([])
    const same = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x))
    const sameMembers = (live: ReadonlySet<string>, pending: ReadonlySet<string>) =>
      same(live, ring.live) && same(pending, ring.pending)

    // --- decisions ----------------------------------------------------------------------------------------------
    const keyOf = (kind: Primary | Controlled, meta: ObjectMeta) =>
      `${kind.index}|${meta.namespace ?? ""}|${meta.name ?? ""}`
    /** The shard an owner is labelled with, when that is not where the ring places it (else the ring's place). */
    const ownerShard = (uid: string): string | undefined => {
      for (const primary of primaries) {
        const transit = primary.building?.has(uid) ? primary.building : primary.transit
        if (transit.has(uid)) return transit.get(uid)
      }
      return ring.place(uid)
    }
    const planOf = (kind: Primary | Controlled, meta: ObjectMeta): Plan | undefined => {
      const current = meta.labels?.[shardLabel]
      if (isPrimary(kind)) {
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
      const desired = ownerUid === meta.uid ? ring.place(ownerUid) : ownerShard(ownerUid)
      return desired === undefined || desired === current
        ? undefined
        : { labels: { [shardLabel]: desired }, what: "follow" }
    }

    // --- writes ---------------------------------------------------------------------------------------------------
    const work = yield* Queue.unbounded<string>()
    /** Objects queued or being written, with the latest metadata seen of each. */
    const entries = new Map<string, Entry>()
    const queued = new Set<string>()
    const firstSeen = new Map<string, number>()
    const enqueue = (key: string) => {
      if (queued.has(key)) return
      queued.add(key)
      Queue.offerUnsafe(work, key)
    }
    /** Looks at an object's latest metadata: queues a write when its labels must change. */
    const see = (kind: Primary | Controlled, meta: ObjectMeta) => {
      const key = keyOf(kind, meta)
      if (entries.has(key)) {
        // queued or being written: the write decides on the latest
        entries.set(key, { kind, meta })
        return
      }
      const plan = planOf(kind, meta)
      if (plan === undefined) return
      if (plan.what === "assign" && !firstSeen.has(key)) firstSeen.set(key, clock.currentTimeMillisUnsafe())
      entries.set(key, { kind, meta })
      enqueue(key)
    }
    const forget = (kind: Primary | Controlled, meta: ObjectMeta) => {
      const key = keyOf(kind, meta)
      entries.delete(key)
      firstSeen.delete(key)
    }

    const write = (key: string) =>
      Effect.gen(function*() {
        queued.delete(key)
        const entry = entries.get(key)
        if (entry === undefined) return
        const { kind, meta } = entry
        const plan = planOf(kind, meta)
        if (plan === undefined) {
          entries.delete(key)
          return
        }
        const name = meta.name ?? ""
        const namespace = meta.namespace
        const patched = yield* client.patch(kind.resource, name, {
          metadata: { resourceVersion: meta.resourceVersion, labels: plan.labels }
        }, { type: "merge", namespace }).pipe(
          Effect.as(true),
          Effect.catch((error) => {
            // a stale view, or gone: the watch brings the news and the object is looked at again
            if (error._tag === "Conflict" || error._tag === "NotFound") return Effect.succeed(false)
            return Effect.logWarning("could not assign an object to its shard").pipe(
              Effect.annotateLogs({ object: `${namespace ?? ""}/${name}`, error: error.message }),
              Effect.andThen(Effect.sleep("1 second")),
              Effect.andThen(Effect.sync(() => {
                if (entries.has(key)) enqueue(key)
              })),
              Effect.as(undefined)
            )
          })
        )
        if (patched === undefined) return
        // a newer version seen meanwhile is decided on again; else the watch brings this write's event (or the
        // change that refused it), which `see` decides on
        if (entries.get(key) === entry) entries.delete(key)
        else if (entries.has(key)) enqueue(key)
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

    // --- events ---------------------------------------------------------------------------------------------------
    const wake = yield* Queue.sliding<void>(1)
    const membership = params.membership
    yield* membership.subscribe(() => Queue.offerUnsafe(wake, undefined))
    /** Controlled objects to look at (from the loop, once no list of a primary kind is in progress). */
    const dirty = new Set<string>()
    const mark = (key: string) => {
      dirty.add(key)
      Queue.offerUnsafe(wake, undefined)
    }
    const markChildren = (uid: string) => {
      for (const kind of controlled) {
        for (const child of kind.informer.store.byIndex("ownerUid", uid)) mark(keyOf(kind, child.metadata))
      }
    }
    const noteTransit = (transit: Map<string, string | undefined>, meta: ObjectMeta) => {
      if (meta.uid === undefined) return
      const label = meta.labels?.[shardLabel]
      if (label !== undefined && label === ring.place(meta.uid)) transit.delete(meta.uid)
      else transit.set(meta.uid, label)
    }

    let listing = 0
    let listed = yield* Deferred.make<void>()
    const onPrimary = (primary: Primary) => (event: Watcher.WatcherEvent<Meta>) => {
      switch (event._tag) {
        case "Init":
          if (primary.building === undefined) listing++
          primary.building = new Map()
          return
        case "InitApply":
          noteTransit(primary.building ?? primary.transit, event.object.metadata)
          see(primary, event.object.metadata)
          if (event.object.metadata.uid !== undefined) markChildren(event.object.metadata.uid)
          return
        case "InitDone":
          if (primary.building !== undefined) {
            primary.transit = primary.building
            primary.building = undefined
            listing--
          }
          if (listing === 0) {
            Deferred.doneUnsafe(listed, Effect.void)
            Queue.offerUnsafe(wake, undefined)
          }
          return
        case "Apply":
          noteTransit(primary.transit, event.object.metadata)
          see(primary, event.object.metadata)
          if (event.object.metadata.uid !== undefined) markChildren(event.object.metadata.uid)
          return
        case "Delete":
          if (event.object.metadata.uid !== undefined) primary.transit.delete(event.object.metadata.uid)
          forget(primary, event.object.metadata)
          return
        case "Undecodable":
          return
      }
    }
    /** Stops the primary kinds' watches (an empty ring has nothing to decide). */
    const stopWatches = Effect.gen(function*() {
      for (const primary of primaries) {
        if (primary.fiber !== undefined) yield* Fiber.interrupt(primary.fiber)
        primary.fiber = undefined
        if (primary.building !== undefined) {
          primary.building = undefined
          listing--
        }
        primary.transit = new Map()
      }
    })
    /** (Re)starts the primary kinds' watches: each lists every object again, decided on against the current ring. */
    const relist = Effect.gen(function*() {
      yield* stopWatches
      if (yield* Deferred.isDone(listed)) listed = yield* Deferred.make<void>()
      for (const primary of primaries) {
        const handle = onPrimary(primary)
        primary.fiber = yield* Stream.runForEach(
          internalWatcher.watch(primary.listWatch, {}),
          (event) => Effect.sync(() => handle(event))
        ).pipe(Effect.forkIn(scope))
      }
    })
    for (const kind of controlled) {
      yield* Effect.forkScoped(Stream.runForEach(kind.informer.events, (event) =>
        Effect.sync(() => {
          if (event._tag === "Delete") forget(kind, event.object.metadata)
          else mark(keyOf(kind, event.object.metadata))
        })))
    }
    const considerDirty = () => {
      for (const key of dirty) {
        const [kindIndex, namespace, name] = key.split("|") as [string, string, string]
        const kind = kinds[Number(kindIndex)] as Controlled
        const object = kind.informer.store.get(name, namespace === "" ? undefined : namespace)
        if (object !== undefined) see(kind, object.metadata)
      }
      dirty.clear()
    }

    // --- the loop ---------------------------------------------------------------------------------------------------
    yield* membership.synced
    for (const kind of controlled) yield* kind.informer.synced.pipe(Effect.ignore)
    const settle = (params.ringKnownAt ?? 0) - (yield* Clock.currentTimeMillis)
    if (settle > 0) yield* Effect.sleep(settle)
    let first = true
    let started = false
    let countedAt = -Infinity
    while (true) {
      yield* membership.verify(yield* Clock.currentTimeMillis)
      const now = yield* Clock.currentTimeMillis
      const { live, next, pending } = membership.at(now)
      if (first || !sameMembers(live, pending)) {
        first = false
        ring = rules.ring(live, pending)
        yield* Metric.update(members, live.size)
        yield* Effect.logInfo("ring changed").pipe(Effect.annotateLogs({ shards: [...live].sort().join(",") }))
        if (live.size + pending.size === 0) {
          yield* stopWatches
        } else {
          yield* relist
          for (const kind of controlled) {
            for (const object of kind.informer.store.list()) dirty.add(keyOf(kind, object.metadata))
          }
          if (!started) {
            started = true
            yield* Deferred.await(listed)
            yield* Effect.logInfo("sharder started").pipe(Effect.annotateLogs({ kinds: kinds.length }))
          }
        }
      }
      // children follow their owners' labels as the primary kinds' watches know them: not during a list of them
      if (listing === 0) considerDirty()
      if (now - countedAt >= 5_000) {
        countedAt = now
        yield* membership.collect(now)
      }
      const wait = Math.max(1, Math.min(next - now, 1_000))
      yield* Effect.timeoutOption(Queue.take(wake), wait)
    }
  }).pipe(Effect.annotateLogs({ ring: params.ring }))
