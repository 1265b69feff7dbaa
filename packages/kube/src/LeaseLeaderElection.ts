/**
 * Leader election on a `coordination.k8s.io/v1` Lease: core's
 * `LeaderElection` service for operators that run several replicas, with
 * client-go's `leaderelection` semantics.
 *
 * - **Acquire**: every `retryPeriod` (and at the moment the holder's lease
 *   expires, if that comes sooner), read the Lease; take it (optimistic
 *   concurrency on its `resourceVersion`: a `Conflict` means someone else
 *   wrote first, try again next period) when it is missing, free — no
 *   holder, released — or expired. Expiry is judged as client-go does, by
 *   *this replica's* clock: the record is expired `leaseDurationSeconds`
 *   after we first observed its current content, never by comparing the
 *   remote `renewTime` with our clock (clocks of different machines may
 *   disagree; their rates may not). `leaseDuration` is written in whole
 *   seconds, rounded up.
 * - **Renew**: the leader writes `renewTime` every `retryPeriod`. If no renewal
 *   has succeeded for `renewDeadline` (measured from the start of the last
 *   successful one), it stops leading: `isLeader` turns false and
 *   `awaitLoss` completes with `LeadershipLost`, so every controller stops its
 *   workers and the Manager ends with a typed error. It does not run for
 *   leadership again (restart the process, as controller-runtime does).
 * - **Release** (`releaseOnCancel`, default true): when the Layer's scope
 *   closes (graceful shutdown, after the controllers drained), the leader
 *   writes an empty `holderIdentity` and `leaseDurationSeconds: 1`, so a
 *   follower takes over at its next try instead of waiting for expiry.
 * - **Metric**: client-go's gauge `leader_election_master_status{name}` (the
 *   Lease's name), 1 while this replica leads, else 0, as controller-runtime
 *   serves it (the `NoLeader` alert of `Manifests` reads it).
 *
 * "Never two leaders" needs `leaseDuration > renewDeadline` (checked), clocks
 * that run at the same rate on every replica, and request latencies below
 * `leaseDuration - renewDeadline`; see `docs/high-availability.md`. Every
 * wait uses Effect's `Clock`, so `TestClock` drives it in tests.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Manager } from "@reconcile/core"
 * import { Cache, Kube, KubeClient, LeaseLeaderElection } from "@reconcile/kube"
 *
 * // a controller's Layer: KubeController.layer(KubeController.make({ ... }))
 * declare const WebAppController: Layer.Layer<never, never, Manager.Manager | Cache.Cache | KubeClient.KubeClient>
 *
 * const Main = Layer.mergeAll(WebAppController).pipe(
 *   Layer.provideMerge(Manager.layer({ healthPort: 8081 })),
 *   // the Manager's election: its controllers' workers run while this replica holds the Lease
 *   Layer.provide(LeaseLeaderElection.layer({ name: "webapp-operator", namespace: "operators" })),
 *   Layer.provide(Cache.layer()),
 *   Layer.provideMerge(KubeClient.layer),
 *   Layer.provide(Kube.layerFromDefault())
 * )
 * ```
 *
 * @since 0.1.0
 */
import { LeaderElection } from "@reconcile/core/LeaderElection"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/leaseLeaderElection.js"
import type * as KubeClient from "./KubeClient.js"

/**
 * Options of the election.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The Lease's name, shared by every replica of the operator. */
  readonly name: string
  /** The Lease's namespace (default `default`). */
  readonly namespace?: string | undefined
  /** This replica's identity, unique among replicas (default: the hostname and a random suffix). */
  readonly identity?: string | undefined
  /** How long followers wait, after the last change they observed, before taking the Lease (default 15 s). */
  readonly leaseDuration?: Duration.Input | undefined
  /** How long the leader keeps leading without a successful renewal (default 10 s). */
  readonly renewDeadline?: Duration.Input | undefined
  /** The interval between tries to acquire or renew (default 2 s). */
  readonly retryPeriod?: Duration.Input | undefined
  /**
   * Followers wait `retryPeriod · (1 + jitter · r)`, r uniform in [0, 1), between
   * tries (default 0: exactly `retryPeriod`; client-go uses 1.2).
   */
  readonly jitter?: number | undefined
  /** Give the Lease up when the scope closes, so a follower takes over at once (default true). */
  readonly releaseOnCancel?: boolean | undefined
}

/**
 * The options cannot give the election's guarantee (see the module docs).
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseLeaderElectionError extends Data.TaggedError("LeaseLeaderElectionError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `invalid leader election options: ${this.reason}`
  }
}

/**
 * Joins the election for the lifetime of the scope and returns the service.
 * Runs for leadership in the background from the start; closing the scope
 * stops it (and releases the Lease when leading and `releaseOnCancel`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<LeaderElection.Service, LeaseLeaderElectionError, KubeClient.KubeClient | Scope.Scope> =>
  // a call, not `internal.make` itself: the internal module imports this one (for the error), so a program that loads
  // the internal module first (through `Sharding`) finds this module evaluated before the internal one
  internal.make(options)

/**
 * Provides core's `LeaderElection` from a Lease election over the
 * `KubeClient`.
 *
 * @example
 * ```ts
 * import { LeaseLeaderElection } from "@reconcile/kube"
 *
 * const Election = LeaseLeaderElection.layer({ name: "webapp-operator", leaseDuration: "30 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<LeaderElection, LeaseLeaderElectionError, KubeClient.KubeClient> =>
  Layer.effect(LeaderElection, internal.make(options))

/**
 * The default identity: the hostname (the Pod name in a cluster), `_`, and a
 * random suffix, as client-go's examples use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultIdentity: Effect.Effect<string> = Effect.suspend(() => internal.defaultIdentity)
