import type { LeaderElection } from "@reconcile/core/LeaderElection"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"
import * as KubeClient from "../KubeClient.js"
import type { LeaseLeaderElectionError } from "../LeaseLeaderElection.js"
import type * as Resource from "../Resource.js"
import { type Options, ShardingError } from "../Sharding.js"
import type * as Store from "../Store.js"
import * as bucketSharder from "./bucketSharder.js"
import * as leaseLeaderElection from "./leaseLeaderElection.js"
import * as buckets from "./shardBuckets.js"
import * as sharder from "./sharder.js"
import * as shardGate from "./shardGate.js"
import { kindKey, type Service } from "./shardingService.js"
import * as shardKeeper from "./shardKeeper.js"
import * as shardMembership from "./shardMembership.js"
import * as rules from "./shardRules.js"

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** @internal */
export const defaultIdentity: Effect.Effect<string> = Effect.map(
  Random.nextIntBetween(0, 0x10000000, { halfOpen: true }),
  (n) => {
    const host = Os.hostname().toLowerCase().replace(/[^-a-z0-9]/g, "-").replace(/^-+|-+$/g, "").slice(0, 54)
    return `${host === "" ? "shard" : host}-${n.toString(16).padStart(7, "0")}`
  }
)

/** The ring's kinds: the controllers' `for` kinds, and their `owns` kinds that are not also some `for`. */
const kindsOf = (options: Options): sharder.Kinds => {
  const primaries = new Map<string, Resource.Resource<any>>()
  for (const c of options.controllers) primaries.set(kindKey(c.for), c.for)
  const controlled = new Map<string, Resource.Resource<any>>()
  for (const c of options.controllers) {
    for (const owned of c.owns) if (!primaries.has(kindKey(owned))) controlled.set(kindKey(owned), owned)
  }
  return { primaries: [...primaries.values()], controlled: [...controlled.values()] }
}

/** Whether the API server selects shards: a list with a `shardSelector` that it echoes in `metadata.shardInfo`. */
const chooseMode = (
  client: KubeClient.KubeClient.Service,
  options: Options,
  primary: Resource.Resource<any>
): Effect.Effect<{ readonly mode: "labels" | "server"; readonly reason: string }, ShardingError> => {
  const wanted = options.mode ?? "auto"
  if (wanted === "labels") return Effect.succeed({ mode: "labels", reason: "mode: labels" })
  // a full list: kube-apiserver 1.36 filters a PartialObjectMetadataList too but leaves `shardInfo` out of it
  return client.list(primary, {
    namespace: options.objectNamespace,
    limit: 1,
    shardSelector: buckets.selectorOf(new Set(Array.from({ length: buckets.bucketCount }, (_, b) => b)))
  }).pipe(
    Effect.mapError((error) =>
      new ShardingError({ reason: `cannot ask the API server whether it selects shards: ${error.message}` })
    ),
    Effect.flatMap(
      (list): Effect.Effect<{ readonly mode: "labels" | "server"; readonly reason: string }, ShardingError> => {
        if (list.shardSelector !== undefined) {
          return Effect.succeed({ mode: "server" as const, reason: "the API server answered a shardSelector" })
        }
        if (wanted === "server") {
          return Effect.fail(
            new ShardingError({
              reason: "mode: server, but the API server ignores shardSelector (Kubernetes ≥ 1.36 with the " +
                "ShardedListAndWatch feature gate)"
            })
          )
        }
        return Effect.succeed({ mode: "labels" as const, reason: "the API server ignores shardSelector" })
      }
    )
  )
}

/** @internal */
export const make = (
  options: Options
): Effect.Effect<
  { readonly sharding: Service; readonly election: LeaderElection.Service },
  ShardingError | LeaseLeaderElectionError,
  KubeClient.KubeClient | Scope.Scope
> =>
  Effect.gen(function*() {
    const fail = (reason: string) => Effect.fail(new ShardingError({ reason }))
    const ring = options.ring
    if (!dnsLabel.test(ring) || ring.length > 63) return yield* fail(`ring "${ring}" is not a DNS-1123 label`)
    if (options.controllers.length === 0) return yield* fail("a ring needs at least one controller")
    const identity = options.identity ?? (yield* defaultIdentity)
    if (!dnsLabel.test(identity) || identity.length > 63) {
      return yield* fail(
        `identity "${identity}" is not a DNS-1123 label (it is a label value and part of a Lease name)`
      )
    }
    if (identity === "sharder") return yield* fail(`identity "sharder" is reserved (the sharder's Lease)`)
    const client = yield* KubeClient.KubeClient
    const namespace = options.namespace ?? "default"
    const timings = {
      namespace,
      identity,
      leaseDuration: options.leaseDuration,
      renewDeadline: options.renewDeadline,
      retryPeriod: options.retryPeriod
    }
    const kinds = kindsOf(options)
    const sharded = new Set([...kinds.primaries, ...kinds.controlled].map(kindKey))
    const primaries = new Set(kinds.primaries.map(kindKey))
    const annotate = Effect.annotateLogs({ ring, replica: identity })
    const mode = yield* chooseMode(client, options, kinds.primaries[0]!)
    const sharderLease = `${ring}-sharder`

    // server mode: what this shard serves, published through its Lease (made before the Lease, run after it)
    const keeper = mode.mode === "server" ? yield* shardKeeper.make(identity) : undefined
    const tableRef: bucketSharder.TableRef = { table: undefined }

    // membership: this shard's own Lease, held as a leader election holds its Lease
    const shard = yield* leaseLeaderElection.make({ ...timings, name: `${ring}-${identity}` }, {
      labels: { [rules.ringLabel]: ring },
      annotations: keeper?.annotations
    })
    // the ring's members, watched from the start (whoever becomes the sharder has watched them all along)
    const membership = yield* shardMembership.make({ client, ring, namespace })
    // replicas of one Deployment start together: a sharder deciding before the others' Leases had a retry period to
    // appear would place their objects elsewhere, and move them again a moment later
    const ringKnownAt = (yield* Clock.currentTimeMillis) +
      Duration.toMillis(Duration.fromInputUnsafe(timings.retryPeriod ?? "2 seconds"))
    // the sharder runs on the replica that holds the ring's sharder Lease (in server mode it publishes the table
    // there); a replica that loses that Lease stops its sharder and runs for the Lease again — it goes on as a shard
    const sharderTerm = Effect.scoped(Effect.gen(function*() {
      const election = yield* leaseLeaderElection.make({ ...timings, name: sharderLease }, {
        annotations: mode.mode === "server"
          ? () => tableRef.table === undefined ? {} : { [buckets.tableAnnotation]: buckets.encodeTable(tableRef.table) }
          : undefined
      })
      const runSharder = mode.mode === "server"
        ? bucketSharder.run({
          client,
          membership,
          ring,
          namespace,
          lease: sharderLease,
          tableRef,
          publish: election.renewSoon
        })
        : sharder.run({
          client,
          membership,
          ring,
          namespace,
          objectNamespace: options.objectNamespace,
          kinds,
          ringKnownAt
        })
      const lost = yield* Effect.raceFirst(
        Effect.andThen(election.awaitLeadership, Effect.andThen(runSharder, Effect.never)),
        election.awaitLoss
      )
      yield* Effect.logWarning("the sharder stopped: its Lease was lost; running for it again").pipe(
        Effect.annotateLogs({ reason: lost.reason })
      )
      yield* Effect.sleep(timings.retryPeriod ?? "2 seconds")
    })).pipe(Effect.orDie)
    yield* Effect.forkScoped(annotate(Effect.forever(sharderTerm)))
    if (keeper !== undefined) {
      yield* annotate(keeper.run({ client, namespace, sharderLease, publish: shard.renewSoon }))
    }

    const releases = Metric.withAttributes(sharder.metrics.releases, { ring })
    // shard_objects{shard}: each shard counts what its caches hold of its own (the sharder stores no object)
    const stores = new Map<string, Store.Store<HasMetadata>>()
    const objects = Metric.withAttributes(sharder.metrics.objects, { ring, shard: identity })
    const count = Effect.suspend(() => {
      let n = 0
      for (const store of stores.values()) {
        if (keeper !== undefined) n += store.size()
        else {for (
            const object of store.list()
          )
          {
            if (object.metadata !== undefined && rules.owns(ring, identity, object.metadata)) n++
          }}
      }
      return Metric.update(objects, n)
    })
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep("5 seconds"), count)))
    const sharding: Service = {
      ring,
      identity,
      mode: mode.mode,
      labelSelectorOf: (resource) =>
        mode.mode === "labels" && sharded.has(kindKey(resource)) ? `${rules.shardLabel(ring)}=${identity}` : undefined,
      serverSelectionOf: (resource) =>
        keeper !== undefined && primaries.has(kindKey(resource)) ? keeper.selection : undefined,
      gateOf: (resource, store) => {
        if (!primaries.has(kindKey(resource))) return undefined
        stores.set(kindKey(resource), store)
        if (keeper !== undefined) return keeper.gate(store)
        return shardGate.make({
          client,
          ring,
          identity,
          resource,
          store,
          events: { released: Metric.update(releases, 1) }
        })
      }
    }
    yield* annotate(
      Effect.logInfo(
        mode.mode === "server"
          ? "sharding by the API server's shardSelector: no labels written"
          : "sharding by assignment labels"
      ).pipe(Effect.annotateLogs({ reason: mode.reason }))
    )
    yield* annotate(Effect.logInfo("joining the ring"))
    return {
      sharding,
      // the Manager's election: controllers run while this shard holds its Lease, and stop (with the Manager) when
      // it cannot be renewed
      election: {
        awaitLeadership: shard.awaitLeadership,
        isLeader: shard.isLeader,
        awaitLoss: shard.awaitLoss
      }
    }
  })
