/**
 * Where the sharder places an object, computed here so that the heap benchmark can label 30,000 objects in-process
 * before a ring starts instead of waiting for the sharder to patch each one over HTTP: the rule documented in
 * `@reconcile/kube`'s sharding (effect's `HashRing` of the live shards, shard names and object keys — the uid — given
 * to it as the first 16 hex digits of their SHA-256). The benchmark checks the sharder agrees: if it did not, the
 * sharder would move the objects, and the benchmark would count the moves and wait for them.
 */
import * as HashRing from "effect/HashRing"
import * as PrimaryKey from "effect/PrimaryKey"
import { createHash } from "node:crypto"

/** The label that assigns an object to a shard of `ring` (Sharding's `shardLabel`, for the driver's process). */
export const shardLabel = (ring: string): string => `shard.reconcile.dev/${ring}`

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

/** The shard of `shards` an object of this uid is placed on. */
export const placement = (shards: ReadonlyArray<string>): (uid: string) => string => {
  const ring = HashRing.make<Shard>()
  HashRing.addMany(ring, [...shards].sort().map((name) => new Shard(name)))
  return (uid) => HashRing.get(ring, spread(uid))!.name
}
