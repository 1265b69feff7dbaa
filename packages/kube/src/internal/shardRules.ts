/**
 * The assignment rules of sharded controllers (issue 24), as pure functions over an object's metadata — the first
 * piece of sharding; the Lease membership, the sharder's watches and the shards' label-selected informers come next
 * and build on these. The design follows timebertt's kubernetes-controller-sharding (its ideas, none of its code):
 *
 * - **Ring**: the live shards (replicas whose shard Lease is not expired) on a consistent-hash ring (effect's
 *   `HashRing`, 128 virtual points each); an object's place is the hash of its key — its controlling owner's uid
 *   when it has one, so an owner and the objects it controls land on one shard, else its own uid. `HashRing`
 *   hashes strings with a 32-bit djb2, under which similar names (`r0`, `r1`, …) and their virtual points cluster:
 *   measured with 3–5 shards and 30,000 uids, the busiest shard had up to 1.75× the mean and the idlest 0.2×. Shard
 *   names and keys are therefore given to it as the first 16 hex digits of their SHA-256: then within 1.08× (the
 *   balance test in `test/sharding.test.ts`).
 * - **Assignment**: the label `shard.reconcile.dev/<ring>: <shard>`, written by the sharder. A shard reconciles
 *   exactly the objects labelled with its name and not being drained ({@link owns}).
 * - **Moves without overlap**: when the ring puts an object elsewhere while its shard is alive, the sharder only
 *   adds the drain label `drain.shard.reconcile.dev/<ring>`; the shard stops reconciling it, finishes what is in
 *   flight, and removes both labels ({@link acknowledge}); only then does the sharder assign the new shard. An object
 *   whose shard is not live (its Lease expired) is assigned at once: its old shard stopped itself before its Lease
 *   could expire (it stops when it cannot renew for `renewDeadline` < `leaseDuration`, as leader election does).
 *
 * Left for the runtime that uses these: a shard must remember the objects it let go until its cache shows the
 * labels removed (else a stale cache still says it owns them), and a partitioned shard's guarantee holds only with
 * clocks that run at the same rate and request latencies below `leaseDuration - renewDeadline`.
 */
import * as HashRing from "effect/HashRing"
import * as PrimaryKey from "effect/PrimaryKey"
import { createHash } from "node:crypto"

/** The label that assigns an object to a shard of `ring`. */
export const shardLabel = (ring: string): string => `shard.reconcile.dev/${ring}`

/** The label that asks an object's shard of `ring` to let it go. */
export const drainLabel = (ring: string): string => `drain.shard.reconcile.dev/${ring}`

/** What the rules read of an object. */
export interface Meta {
  readonly uid?: string | undefined
  readonly labels?: Readonly<Record<string, string>> | undefined
  readonly ownerReferences?:
    | ReadonlyArray<{ readonly uid: string; readonly controller?: boolean | undefined }>
    | undefined
}

/** The key an object is placed by: its controlling owner's uid, else its own. */
export const keyOf = (meta: Meta): string =>
  meta.ownerReferences?.find((o) => o.controller === true)?.uid ?? meta.uid ?? ""

/** The label of a shard Lease: the ring it is a member of. */
export const ringLabel = "lease.shard.reconcile.dev/ring"

/** The drain label's value. */
export const draining = "true"

/** The first 16 hex digits of a string's SHA-256: what the ring hashes (see the module's comment). */
const spread = (value: string): string => createHash("sha256").update(value).digest("hex").slice(0, 16)

class Shard implements PrimaryKey.PrimaryKey {
  private readonly key: string
  constructor(readonly name: string) {
    this.key = spread(name)
  }
  [PrimaryKey.symbol](): string {
    return this.key
  }
}

/** The ring of the live shards. */
export interface Ring {
  readonly live: ReadonlySet<string>
  /**
   * Shards not known to be live nor dead (a Lease listed, not yet seen renewed): on the ring, but they neither give
   * nor take objects until they are seen renewed or their Lease expires.
   */
  readonly pending: ReadonlySet<string>
  /** The shard the ring places `key` on (`undefined` when no shard is live). */
  readonly place: (key: string) => string | undefined
}

/** A ring of the shards named. */
export const ring = (live: Iterable<string>, pending: Iterable<string> = []): Ring => {
  const names = new Set(live)
  const maybe = new Set([...pending].filter((name) => !names.has(name)))
  const members = [...names, ...maybe].sort()
  const hashRing = HashRing.make<Shard>()
  HashRing.addMany(hashRing, members.map((name) => new Shard(name)))
  return {
    live: names,
    pending: maybe,
    place: (key) => members.length === 0 ? undefined : HashRing.get(hashRing, spread(key))?.name
  }
}

/** What the sharder does next for an object. */
export type Decision =
  /** Nothing: assigned where the ring places it, or waiting for its shard to let it go. */
  | { readonly _tag: "Keep" }
  /** Label it with `shard` (and remove a drain label): unassigned, or its shard is gone. */
  | { readonly _tag: "Assign"; readonly shard: string }
  /** Add the drain label: its live shard must let it go before it moves. */
  | { readonly _tag: "Drain"; readonly from: string }

/** The sharder's next step for an object of `ringName` with metadata `meta`, given the live ring. */
export const decide = (ringName: string, live: Ring, meta: Meta): Decision => {
  const target = live.place(keyOf(meta))
  const current = meta.labels?.[shardLabel(ringName)]
  const isDraining = meta.labels?.[drainLabel(ringName)] !== undefined
  // a shard that may or may not be alive (its Lease listed, not yet seen renewed) neither gives nor takes objects
  // until it is seen renewed (then live) or its Lease expires (then gone)
  if (current !== undefined && live.pending.has(current)) return { _tag: "Keep" }
  if (target !== undefined && live.pending.has(target)) return { _tag: "Keep" }
  if (current === undefined || !live.live.has(current)) {
    return target === undefined ? { _tag: "Keep" } : { _tag: "Assign", shard: target }
  }
  if (current === target || target === undefined) return { _tag: "Keep" }
  return isDraining ? { _tag: "Keep" } : { _tag: "Drain", from: current }
}

/** Whether `shard` may reconcile the object: labelled with it, and not being drained. */
export const owns = (ringName: string, shard: string, meta: Meta): boolean =>
  meta.labels?.[shardLabel(ringName)] === shard && meta.labels?.[drainLabel(ringName)] === undefined

/**
 * The labels a shard removes to let a drained object go (once no reconcile of it is in flight): its assignment and
 * the drain label; `undefined` when the object is not its, or not being drained.
 */
export const acknowledge = (ringName: string, shard: string, meta: Meta): ReadonlyArray<string> | undefined =>
  meta.labels?.[shardLabel(ringName)] === shard && meta.labels?.[drainLabel(ringName)] !== undefined
    ? [shardLabel(ringName), drainLabel(ringName)]
    : undefined
