import type { LeaderElection } from "@reconcile/core/LeaderElection"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"
import * as KubeClient from "../KubeClient.js"
import type { LeaseLeaderElectionError } from "../LeaseLeaderElection.js"
import type * as Resource from "../Resource.js"
import { type Options, ShardingError } from "../Sharding.js"
import * as leaseLeaderElection from "./leaseLeaderElection.js"
import * as sharder from "./sharder.js"
import * as shardGate from "./shardGate.js"
import * as rules from "./sharding.js"
import { kindKey, type Service } from "./shardingService.js"

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

    // membership: this shard's own Lease, held as a leader election holds its Lease
    const shard = yield* leaseLeaderElection.make({ ...timings, name: `${ring}-${identity}` }, {
      [rules.ringLabel]: ring
    })
    // the sharder runs on the replica that holds the ring's sharder Lease
    const election = yield* leaseLeaderElection.make({ ...timings, name: `${ring}-sharder` })
    yield* Effect.forkScoped(annotate(Effect.andThen(
      election.awaitLeadership,
      sharder.run({ client, ring, namespace, objectNamespace: options.objectNamespace, kinds })
    )))

    const releases = Metric.withAttributes(sharder.metrics.releases, { ring })
    const sharding: Service = {
      ring,
      identity,
      labelSelectorOf: (resource) =>
        sharded.has(kindKey(resource)) ? `${rules.shardLabel(ring)}=${identity}` : undefined,
      gateOf: (resource, store) =>
        primaries.has(kindKey(resource))
          ? shardGate.make({
            client,
            ring,
            identity,
            resource,
            store,
            events: { released: Metric.update(releases, 1) }
          })
          : undefined
    }
    yield* annotate(Effect.logInfo("joining the ring"))
    return {
      sharding,
      // the Manager's election: controllers run while this shard holds its Lease, and stop (with the Manager) when
      // it, or the sharder's Lease while held, cannot be renewed
      election: {
        awaitLeadership: shard.awaitLeadership,
        isLeader: shard.isLeader,
        awaitLoss: Effect.raceFirst(shard.awaitLoss, election.awaitLoss)
      }
    }
  })
