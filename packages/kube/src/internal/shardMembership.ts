/**
 * The sharder's view of a ring's members: the shard Leases labelled with the ring, watched. A shard is live while its
 * Lease has a holder and has not expired in the sharder's eyes — `leaseDurationSeconds` after the sharder first
 * observed its current content, on the sharder's own clock (client-go's rule; remote timestamps are never compared
 * with local time). Leases not live for `max(1 min, 4 × their duration)` are deleted (a replica's identity is new
 * at each start, so its Lease would otherwise stay).
 *
 * A watch can be stale (stalled, cut off) while the holder goes on renewing: a Lease that expired in the watch's
 * view is only *suspect* — pending, neither live nor gone — until a fresh read (a quorum GET) finds the record
 * unchanged (then it is gone: its holder stopped at `renewDeadline` after its last renewal, before the expiry) or
 * changed (then it is live again). Without that read, a sharder behind a stalled watch would reassign the objects
 * of a shard that is still reconciling them (found by the chaos harness).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Cache from "../Cache.js"
import type * as KubeClient from "../KubeClient.js"
import * as Resource from "../Resource.js"
import * as internalInformer from "./informer.js"
import * as rules from "./shardRules.js"

interface Observed {
  /** Seen written while observed (renewed, or created): its holder was alive then. */
  readonly confirmed: boolean
  /** Expired, and a fresh read found the same record: its holder is gone. */
  readonly gone: boolean
  readonly content: string
  readonly at: number
  readonly holder: string
  readonly millis: number
  readonly lease: Resource.Lease
}

/** The members as seen at one instant. */
export interface Members {
  /** The live shards: Leases not expired that this sharder has seen written (renewed or created). */
  readonly live: ReadonlySet<string>
  /**
   * Shards that may or may not be alive: a Lease only listed, not yet seen renewed (a sharder that just started
   * cannot tell until a renewal or the expiry), or expired in the watch's view but not yet read afresh. Their
   * objects stay; nothing new goes to them.
   */
  readonly pending: ReadonlySet<string>
  /** When the first of them expires, unless renewed (Infinity: none live). */
  readonly next: number
  /** The Lease of each live shard, as last observed. */
  readonly leases: ReadonlyMap<string, Resource.Lease>
}

/**
 * Watches the ring's shard Leases, on every replica from its start (so that when it becomes the sharder it has
 * watched the Leases all along, and a shard that died before it took over expires `leaseDuration` after its last
 * renewal, not after the new sharder's first look).
 */
export const make = (params: {
  readonly client: KubeClient.KubeClient.Service
  readonly ring: string
  readonly namespace: string
}) =>
  Effect.gen(function*() {
    const { client, namespace } = params
    const informer = yield* internalInformer.make(
      Cache.listWatch(client, Resource.Lease, { namespace, labelSelector: `${rules.ringLabel}=${params.ring}` }),
      { failAtStart: false }
    )
    const observed = new Map<string, Observed>()
    const listeners = new Set<() => void>()
    const observe = (lease: Resource.Lease, now: number, written: boolean) => {
      const name = lease.metadata?.name ?? ""
      const spec = lease.spec
      const content = JSON.stringify([
        spec?.holderIdentity ?? "",
        spec?.leaseDurationSeconds ?? 0,
        spec?.acquireTime ?? "",
        spec?.renewTime ?? "",
        spec?.leaseTransitions ?? 0
      ])
      const before = observed.get(name)
      const seconds = spec?.leaseDurationSeconds ?? 0
      observed.set(name, {
        gone: before?.content === content ? before.gone : false,
        confirmed: before?.confirmed === true || written || (before !== undefined && before.content !== content),
        content,
        at: before?.content === content ? before.at : now,
        holder: spec?.holderIdentity ?? "",
        millis: seconds > 0 ? seconds * 1000 : 0,
        lease
      })
    }
    yield* Effect.forkScoped(Stream.runForEach(informer.events, (event) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if (event._tag === "Delete") observed.delete(event.object.metadata?.name ?? "")
        // a Lease listed at start may be a dead shard's last record; one created or changed since was just written
        else observe(event.object, now, event._tag === "Create" && !event.initial)
        for (const listener of listeners) listener()
      })))

    /** The members at `now`. */
    const at = (now: number): Members => {
      const live = new Set<string>()
      const pending = new Set<string>()
      const leases = new Map<string, Resource.Lease>()
      let next = Infinity
      for (const o of observed.values()) {
        if (o.holder === "" || o.gone) continue
        const expires = o.at + o.millis
        if (expires > now) {
          if (o.confirmed) live.add(o.holder)
          else pending.add(o.holder)
          leases.set(o.holder, o.lease)
          next = Math.min(next, expires)
        } else {
          // expired in the watch's view: suspect until a fresh read says (`verify`)
          pending.add(o.holder)
        }
      }
      return { live, pending, next, leases }
    }

    /** Reads afresh every Lease expired in the watch's view: gone if unchanged, live again if renewed. */
    const verify = (now: number) =>
      Effect.forEach(
        [...observed].filter(([, o]) => o.holder !== "" && !o.gone && o.at + o.millis <= now),
        ([name, o]) =>
          client.get(Resource.Lease, name, { namespace }).pipe(
            Effect.flatMap((fresh) =>
              Effect.map(Clock.currentTimeMillis, (at) => {
                const current = observed.get(name)
                if (current !== o) return // the watch moved on meanwhile
                observe(fresh, at, false)
                const after = observed.get(name)!
                if (after.content === o.content) observed.set(name, { ...after, gone: true })
                else observed.set(name, { ...after, confirmed: true })
              })
            ),
            Effect.catchTag("NotFound", () => Effect.sync(() => void observed.delete(name))),
            // no answer: no verdict, the shard stays suspect
            Effect.ignore
          ),
        { discard: true }
      )

    /** Deletes the Leases not live for `max(1 min, 4 × duration)`, each only as last observed. */
    const collect = (now: number) =>
      Effect.forEach(
        [...observed].filter(([, o]) =>
          o.holder === "" ? now - o.at >= 60_000 : now - (o.at + o.millis) >= Math.max(60_000, 4 * o.millis)
        ),
        ([name, o]) =>
          client.delete(Resource.Lease, name, {
            namespace,
            preconditions: { resourceVersion: o.lease.metadata?.resourceVersion }
          }).pipe(
            Effect.andThen(
              Effect.logDebug("deleted the Lease of a departed shard").pipe(Effect.annotateLogs({ lease: name }))
            ),
            Effect.ignore
          ),
        { discard: true }
      )

    const subscribe = (listener: () => void) =>
      Effect.acquireRelease(Effect.sync(() => listeners.add(listener)), () =>
        Effect.sync(() => listeners.delete(listener)))
        .pipe(Effect.asVoid)

    return { synced: Effect.ignore(informer.synced), at, verify, collect, subscribe }
  }) as Effect.Effect<Membership, never, Scope.Scope>

/** A ring's membership, watched. */
export interface Membership {
  /** Completes once the Leases were first listed. */
  readonly synced: Effect.Effect<void>
  /** The members at `now`. */
  readonly at: (now: number) => Members
  /** Reads afresh the Leases expired in the watch's view (see the module's comment); call before `at`. */
  readonly verify: (now: number) => Effect.Effect<void>
  /** Deletes the Leases of departed shards. */
  readonly collect: (now: number) => Effect.Effect<void>
  /** Calls `listener` on every Lease event, for the lifetime of the scope. */
  readonly subscribe: (listener: () => void) => Effect.Effect<void, never, Scope.Scope>
}
