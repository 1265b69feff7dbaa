/**
 * Sharding by the API server's `shardSelector` (Kubernetes ≥ 1.36, `ShardedListAndWatch`): the hash space of
 * `metadata.uid` — 64-bit FNV-1a, as kube-apiserver hashes it — is cut into 256 buckets (by the hash's top byte).
 * The sharder assigns buckets to shards on the consistent-hash ring and publishes the table in its Lease; each shard
 * lists and watches exactly the ranges of its buckets, and publishes in its own Lease which buckets it serves as of
 * which table. A bucket moves from a live shard only after that shard has published a table generation at or after
 * the one that asked it to let go, without the bucket — the drain handshake of labels, per bucket, with no write to
 * any object.
 */

/** The number of buckets. */
export const bucketCount = 256

/** The annotation of the sharder's Lease: the table. */
export const tableAnnotation = "shard.reconcile.dev/table"

/** The annotation of a shard's Lease: what it serves, as of which table. */
export const servingAnnotation = "shard.reconcile.dev/serving"

const offset = 0xcbf29ce484222325n
const prime = 0x100000001b3n
const mask = 0xffffffffffffffffn
const encoder = new TextEncoder()

/** The bucket of a uid: the top byte of its 64-bit FNV-1a hash (apimachinery's `sharding.HashField`). */
export const bucketOf = (uid: string): number => {
  let h = offset
  for (const byte of encoder.encode(uid)) h = ((h ^ BigInt(byte)) * prime) & mask
  return Number(h >> 56n)
}

const bound = (bucket: number): string =>
  bucket >= bucketCount ? "0x10000000000000000" : `0x${bucket.toString(16).padStart(2, "0")}00000000000000`

/**
 * The `shardSelector` of a set of buckets: one `shardRange` per run of consecutive buckets. An empty set selects
 * (practically) nothing: the one hash value 0, which the gate refuses anyway.
 */
export const selectorOf = (buckets: ReadonlySet<number>): string => {
  const sorted = [...buckets].sort((a, b) => a - b)
  if (sorted.length === 0) return "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"
  const ranges: Array<string> = []
  let start = sorted[0]!
  let end = start + 1
  for (const b of sorted.slice(1)) {
    if (b === end) {
      end++
      continue
    }
    ranges.push(`shardRange(object.metadata.uid, '${bound(start)}', '${bound(end)}')`)
    start = b
    end = b + 1
  }
  ranges.push(`shardRange(object.metadata.uid, '${bound(start)}', '${bound(end)}')`)
  return ranges.join(" || ")
}

/** A set of buckets as 64 hex digits (bit b of the 256). */
export const encodeSet = (buckets: ReadonlySet<number>): string => {
  const bytes = new Uint8Array(bucketCount / 8)
  for (const b of buckets) bytes[b >> 3]! |= 1 << (b & 7)
  return Buffer.from(bytes).toString("hex")
}

/** The buckets of {@link encodeSet}'s text (none for text that is not one). */
export const decodeSet = (text: unknown): Set<number> => {
  const out = new Set<number>()
  if (typeof text !== "string" || !/^[0-9a-f]{64}$/.test(text)) return out
  const bytes = Buffer.from(text, "hex")
  for (let b = 0; b < bucketCount; b++) if ((bytes[b >> 3]! & (1 << (b & 7))) !== 0) out.add(b)
  return out
}

/** The sharder's table: who each bucket is assigned to, and which are being drained since which generation. */
export interface Table {
  readonly generation: number
  readonly shards: ReadonlyArray<string | undefined>
  /** bucket → the generation of the table that first asked its shard to let it go. */
  readonly draining: ReadonlyMap<number, number>
}

/** No generation, nothing assigned. */
export const emptyTable: Table = { generation: 0, shards: new Array(bucketCount).fill(undefined), draining: new Map() }

/** The table as its annotation's JSON: `{ generation, shards: { <shard>: <set> }, draining: { <bucket>: <gen> } }`. */
export const encodeTable = (table: Table): string => {
  const byShard = new Map<string, Set<number>>()
  table.shards.forEach((shard, b) => {
    if (shard === undefined) return
    const set = byShard.get(shard) ?? new Set()
    set.add(b)
    byShard.set(shard, set)
  })
  return JSON.stringify({
    generation: table.generation,
    shards: Object.fromEntries([...byShard].map(([shard, set]) => [shard, encodeSet(set)])),
    draining: Object.fromEntries(table.draining)
  })
}

/** The table of an annotation; `undefined` when there is none or it does not read. */
export const decodeTable = (text: string | undefined): Table | undefined => {
  if (text === undefined) return undefined
  try {
    const json = JSON.parse(text) as Record<string, unknown>
    if (typeof json.generation !== "number" || typeof json.shards !== "object" || json.shards === null) return
    const shards: Array<string | undefined> = new Array(bucketCount).fill(undefined)
    for (const [shard, set] of Object.entries(json.shards as Record<string, unknown>)) {
      for (const b of decodeSet(set)) shards[b] = shard
    }
    const draining = new Map<number, number>()
    for (const [b, generation] of Object.entries((json.draining ?? {}) as Record<string, unknown>)) {
      if (typeof generation === "number" && Number(b) >= 0 && Number(b) < bucketCount) {
        draining.set(Number(b), generation)
      }
    }
    return { generation: json.generation, shards, draining }
  } catch {
    return undefined
  }
}

/** What a shard publishes: the buckets it serves, as of which table generation. */
export interface Serving {
  readonly generation: number
  readonly buckets: ReadonlySet<number>
}

/** {@link Serving} as its annotation. */
export const encodeServing = (serving: Serving): string =>
  JSON.stringify({ generation: serving.generation, buckets: encodeSet(serving.buckets) })

/** The {@link Serving} of an annotation; `undefined` when there is none or it does not read. */
export const decodeServing = (text: string | undefined): Serving | undefined => {
  if (text === undefined) return undefined
  try {
    const json = JSON.parse(text) as Record<string, unknown>
    if (typeof json.generation !== "number") return undefined
    return { generation: json.generation, buckets: decodeSet(json.buckets) }
  } catch {
    return undefined
  }
}
