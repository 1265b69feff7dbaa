/**
 * The sharder of a ring sharded by the API server (`shardBuckets.ts`): it assigns the 256 buckets of the hash space
 * to the live shards on the consistent-hash ring and publishes the table through its own Lease (the annotation is
 * written with the sharder Lease's next renewal, asked for at once). It reads no object: its cost is the Leases.
 *
 * Per bucket, as `shardRules.ts`'s `decide` per object: unassigned or on a shard that is not live, it is assigned to
 * its place at once (a shard that is not live stopped itself before its Lease could expire); on a live shard that
 * is not its place, it is marked draining as of the next generation, and moved only once that shard has published
 * a generation at least that one without the bucket among those it serves.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as KubeClient from "../KubeClient.js"
import * as KubeError from "../KubeError.js"
import * as Resource from "../Resource.js"
import * as buckets from "./shardBuckets.js"
import { metrics } from "./sharder.js"
import type * as shardMembership from "./shardMembership.js"
import * as rules from "./shardRules.js"

/** The table the sharder's Lease publishes (read by its election at each renewal). */
export interface TableRef {
  table: buckets.Table | undefined
}

/** The next table for the members at hand; `undefined` when nothing changes. */
export const nextTable = (
  table: buckets.Table,
  ring: rules.Ring,
  serving: (shard: string) => buckets.Serving | undefined
): { readonly table: buckets.Table; readonly moves: number } | undefined => {
  const generation = table.generation + 1
  const shards = [...table.shards]
  const draining = new Map(table.draining)
  let changed = false
  let moves = 0
  for (let b = 0; b < buckets.bucketCount; b++) {
    const target = ring.place(`bucket-${b}`)
    const current = shards[b]
    // a shard that may or may not be alive (a Lease listed, not yet seen renewed) neither gives nor takes buckets
    if ((current !== undefined && ring.pending.has(current)) || (target !== undefined && ring.pending.has(target))) {
      continue
    }
    if (current === undefined || !ring.live.has(current)) {
      if (target === undefined) continue
      shards[b] = target
      draining.delete(b)
      changed = true
      if (current !== undefined) moves++
    } else if (current === target || target === undefined) {
      // back where it belongs before it left: its shard serves it again
      if (draining.delete(b)) changed = true
    } else if (!draining.has(b)) {
      draining.set(b, generation)
      changed = true
      moves++
    } else {
      const published = serving(current)
      if (published !== undefined && published.generation >= draining.get(b)! && !published.buckets.has(b)) {
        shards[b] = target
        draining.delete(b)
        changed = true
      }
    }
  }
  return changed ? { table: { generation, shards, draining }, moves } : undefined
}

/** Runs the sharder until the scope closes. */
export const run = (params: {
  readonly client: KubeClient.KubeClient.Service
  /** The ring's members, watched by this replica. */
  readonly membership: shardMembership.Membership
  readonly ring: string
  readonly namespace: string
  /** The name of the sharder's Lease, whose annotation carries the table. */
  readonly lease: string
  readonly tableRef: TableRef
  readonly publish: Effect.Effect<void>
}): Effect.Effect<never, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { client, tableRef } = params
    const attributes = { ring: params.ring }
    const members = Metric.withAttributes(metrics.members, attributes)
    const moves = Metric.withAttributes(metrics.moves, attributes)
    const wake = yield* Queue.sliding<void>(1)
    const membership = params.membership
    yield* membership.subscribe(() => Queue.offerUnsafe(wake, undefined))
    // the table so far: the previous sharder's, kept in the Lease this one now holds
    // (read until it works: starting from an empty table would restart the generations the shards have seen)
    const own = yield* KubeError.ignoreNotFound(
      client.get(Resource.Lease, params.lease, { namespace: params.namespace })
    ).pipe(Effect.retry({ schedule: Schedule.spaced("1 second") }), Effect.orDie)
    tableRef.table = (Option.isSome(own)
      ? buckets.decodeTable(own.value.metadata?.annotations?.[buckets.tableAnnotation])
      : undefined) ?? buckets.emptyTable
    yield* membership.synced
    yield* Effect.logInfo("sharder started (the API server's shardSelector)").pipe(
      Effect.annotateLogs({ generation: tableRef.table.generation })
    )
    let lastMembers = -1
    let collectedAt = -Infinity
    while (true) {
      yield* membership.verify(yield* Clock.currentTimeMillis)
      const now = yield* Clock.currentTimeMillis
      const { leases, live, next, pending } = membership.at(now)
      if (live.size !== lastMembers) {
        lastMembers = live.size
        yield* Metric.update(members, live.size)
      }
      const step = nextTable(
        tableRef.table!,
        rules.ring(live, pending),
        (shard) => buckets.decodeServing(leases.get(shard)?.metadata?.annotations?.[buckets.servingAnnotation])
      )
      if (step !== undefined) {
        tableRef.table = step.table
        if (step.moves > 0) yield* Metric.update(moves, step.moves)
        yield* Effect.logDebug("shard table changed").pipe(
          Effect.annotateLogs({ generation: step.table.generation, draining: step.table.draining.size })
        )
        yield* params.publish
      }
      if (now - collectedAt >= 5_000) {
        collectedAt = now
        yield* membership.collect(now)
      }
      yield* Effect.timeoutOption(Queue.take(wake), Math.max(1, Math.min(next - now, 1_000)))
    }
  }).pipe(Effect.annotateLogs({ ring: params.ring }))
