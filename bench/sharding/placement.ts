/**
 * Where the sharder places an object, computed here so that the heap benchmark can label 30,000 objects in-process
 * before a ring starts instead of waiting for the sharder to patch each one over HTTP: `@reconcile/kube`'s own rules
 * (its internal `shardRules`, the ring the sharder builds). The benchmark checks the sharder agrees: if it did not,
 * the sharder would move the objects, and the benchmark would count the moves and wait for them.
 */
import * as rules from "@reconcile/kube/internal/shardRules"

/** The label that assigns an object to a shard of `ring` (Sharding's `shardLabel`, for the driver's process). */
export const shardLabel: (ring: string) => string = rules.shardLabel

/** The shard of `shards` an object of this uid (and no controlling owner) is placed on. */
export const placement = (shards: ReadonlyArray<string>): (uid: string) => string => {
  const ring = rules.ring(shards)
  return (uid) => ring.place(uid)!
}
