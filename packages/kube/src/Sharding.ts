/**
 * Controllers sharded across replicas: every replica reconciles a share of the objects, and no object is reconciled
 * by two replicas at once. The distributed parts are Kubernetes' own — Leases and labels — in the design of
 * timebertt's kubernetes-controller-sharding.
 *
 * - **Membership**: each replica holds a shard Lease of its own (`<ring>-<identity>`, labelled
 *   `lease.shard.reconcile.dev/ring: <ring>`), renewed and released exactly as `LeaseLeaderElection` holds its
 *   Lease. A replica whose Lease expires is out of the ring; one that cannot renew for `renewDeadline` stops its
 *   controllers (and the Manager ends, as on lost leadership).
 * - **Assignment**: the replica holding the ring's sharder Lease (`<ring>-sharder`) places every object of the ring's
 *   kinds on a consistent-hash ring of the live shards (effect's `HashRing`) and writes the label
 *   `shard.reconcile.dev/<ring>: <identity>`, reading the objects through metadata-only watches. The hash key is
 *   an object's controlling owner's uid when it has one, so an owner and its children land on one shard; the
 *   `owns` kinds simply follow their owner's label.
 * - **Each shard caches and reconciles only its own**: a `Cache` built with this service in its context restricts
 *   every informer of the ring's kinds to this shard's label, and a `KubeController` whose `for` kind is in the
 *   ring runs a reconcile only for an object labelled with this shard and not being drained.
 * - **Moves without overlap**: when the ring changes, the sharder labels a moving object
 *   `drain.shard.reconcile.dev/<ring>`; its shard, once any reconcile of it has finished, removes both labels; only
 *   then does the sharder assign the new shard. An object whose shard's Lease expired is reassigned at once.
 *
 * - **Or the API server selects** (`mode`, default `auto`): where list and watch take a `shardSelector` (Kubernetes
 *   ≥ 1.36, `ShardedListAndWatch`), the uid hash space is cut into 256 buckets that the sharder assigns (a table in
 *   its Lease), each shard lists and watches its buckets' ranges, and buckets move with the same handshake, published
 *   through the shards' Leases: no object is written.
 *
 * Provide {@link layer} below the Manager, the Cache and the controllers: it is the Manager's `LeaderElection` (the
 * controllers run while this replica's shard Lease is held). The ring's kinds are the `for` and `owns` kinds of
 * `controllers`: list every controller of the ring. See `docs/high-availability.md` for the guarantees and their
 * bounds.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Manager } from "@reconcile/core"
 * import { Cache, Kube, KubeClient, KubeController, Resource, Sharding } from "@reconcile/kube"
 * import { Effect } from "effect"
 *
 * const Settings = KubeController.make({
 *   name: "settings",
 *   for: Resource.ConfigMap,
 *   owns: [Resource.Secret],
 *   reconcile: () => Effect.void
 * })
 *
 * const Main = KubeController.layer(Settings).pipe(
 *   Layer.provideMerge(Manager.layer({ healthPort: 8081 })),
 *   Layer.provide(Cache.layer()), // restricted to this shard's ConfigMaps and Secrets
 *   // the Manager's election: this replica's shard Lease; also runs the sharder while it holds the ring's Lease
 *   Layer.provide(Sharding.layer({ ring: "settings", namespace: "operators", controllers: [Settings] })),
 *   Layer.provideMerge(KubeClient.layer),
 *   Layer.provide(Kube.layerFromDefault())
 * )
 * ```
 *
 * @since 0.1.0
 */
import { LeaderElection } from "@reconcile/core/LeaderElection"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/sharding.js"
import * as service from "./internal/shardingService.js"
import * as rules from "./internal/shardRules.js"
import type * as KubeClient from "./KubeClient.js"
import type * as KubeController from "./KubeController.js"
import type { LeaseLeaderElectionError } from "./LeaseLeaderElection.js"

/**
 * The options of a replica's membership in a ring.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The ring's name (a DNS-1123 label), shared by every replica: it names the labels and the Leases. */
  readonly ring: string
  /** The ring's controllers: their `for` kinds are sharded, and their `owns` kinds follow their owners. */
  readonly controllers: ReadonlyArray<KubeController.Declaration>
  /** The Leases' namespace (default `default`). */
  readonly namespace?: string | undefined
  /**
   * This replica's shard name, unique in the ring, a DNS-1123 label (default: the hostname — the Pod's name — and a
   * random suffix, new at each start).
   */
  readonly identity?: string | undefined
  /**
   * How objects are assigned (default `auto`): `labels`, the sharder writes an assignment label on each object;
   * `server`, each shard lists and watches its ranges of the hash space with the API server's `shardSelector`
   * (Kubernetes ≥ 1.36 with the `ShardedListAndWatch` feature gate) and no object is written; `auto`, `server` when
   * the API server answers a `shardSelector`, else `labels` (decided at start, logged once).
   */
  readonly mode?: "auto" | "labels" | "server" | undefined
  /** The sharder assigns only objects of this namespace (a `Cache` restricted to one namespace); default: all. */
  readonly objectNamespace?: string | undefined
  /** How long a shard stays in the ring after its last renewal the sharder observed (default 15 s). */
  readonly leaseDuration?: Duration.Input | undefined
  /** How long a shard keeps reconciling without a successful renewal (default 10 s). */
  readonly renewDeadline?: Duration.Input | undefined
  /** The interval between renewals (default 2 s). */
  readonly retryPeriod?: Duration.Input | undefined
}

/**
 * The options cannot form a ring (an invalid name or identity, no controllers).
 *
 * @since 0.1.0
 * @category errors
 */
export class ShardingError extends Data.TaggedError("ShardingError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `invalid sharding options: ${this.reason}`
  }
}

/**
 * This replica's shard of a ring: what the `Cache` and `KubeController` read to restrict their informers and gate
 * their reconciles.
 *
 * @since 0.1.0
 * @category tags
 */
export const Sharding: typeof service.Sharding = service.Sharding

/**
 * @since 0.1.0
 * @category tags
 */
export type Sharding = service.Sharding

/**
 * @since 0.1.0
 */
export declare namespace Sharding {
  /**
   * @since 0.1.0
   * @category models
   */
  export type Service = service.Service
}

/**
 * The label that assigns an object to a shard of `ring`: `shard.reconcile.dev/<ring>`.
 *
 * @since 0.1.0
 * @category constants
 */
export const shardLabel: (ring: string) => string = rules.shardLabel

/**
 * The label that asks an object's shard to let it go: `drain.shard.reconcile.dev/<ring>`.
 *
 * @since 0.1.0
 * @category constants
 */
export const drainLabel: (ring: string) => string = rules.drainLabel

/**
 * Joins the ring for the lifetime of the scope: holds this replica's shard Lease, runs the sharder while holding
 * the ring's sharder Lease, and returns this shard and the Manager's election.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: Options
) => Effect.Effect<
  { readonly sharding: Sharding.Service; readonly election: LeaderElection.Service },
  ShardingError | LeaseLeaderElectionError,
  KubeClient.KubeClient | Scope.Scope
> = internal.make

/**
 * Provides {@link Sharding} and the Manager's `LeaderElection` (this replica's shard Lease) from a ring membership.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<Sharding | LeaderElection, ShardingError | LeaseLeaderElectionError, KubeClient.KubeClient> =>
  Layer.effectContext(
    Effect.map(
      internal.make(options),
      ({ election, sharding }) => Context.make(service.Sharding, sharding).pipe(Context.add(LeaderElection, election))
    )
  )
