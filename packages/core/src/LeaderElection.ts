/**
 * Leader election, as seen by the Manager and its controllers: workers start
 * only once this replica leads, and stop when leadership is lost. A
 * controller's sources start once it leads too, unless `warmup: true`.
 *
 * The `Manager` requires one (`Manager.layer` has it in its type) and its
 * controllers follow it; there is no implicit default. Core defines the
 * service and an always-leader Layer, {@link layerAlwaysLeader}, which says
 * "this replica always leads" — right for a single replica and for tests;
 * `@reconcile/kube`'s `LeaseLeaderElection.layer` is the Lease-based election
 * for several replicas.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The leader election service.
 *
 * @since 0.1.0
 * @category tags
 */
export class LeaderElection extends Context.Service<LeaderElection, LeaderElection.Service>()(
  "@reconcile/core/LeaderElection"
) {}

/**
 * @since 0.1.0
 */
export declare namespace LeaderElection {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Completes once this replica is the leader (at once for an always-leader election). */
    readonly awaitLeadership: Effect.Effect<void>
    /** Completes if leadership, once acquired, is lost. Never completes for an always-leader election. */
    readonly awaitLoss: Effect.Effect<LeadershipLost>
    /** Whether this replica leads right now. */
    readonly isLeader: Effect.Effect<boolean>
  }
}

/**
 * Leadership was lost after it had been acquired: every controller's workers
 * stop and the Manager ends with this error (controller-runtime exits the
 * process in the same case).
 *
 * @since 0.1.0
 * @category errors
 */
export class LeadershipLost extends Data.TaggedError("LeadershipLost")<{
  readonly identity: string
  readonly reason: string
}> {
  override get message(): string {
    return `leadership lost by ${this.identity}: ${this.reason}`
  }
}

/**
 * An election this replica always wins.
 *
 * @since 0.1.0
 * @category constructors
 */
export const alwaysLeader: LeaderElection.Service = {
  awaitLeadership: Effect.void,
  awaitLoss: Effect.never,
  isLeader: Effect.succeed(true)
}

/**
 * A Layer providing {@link alwaysLeader}: for an operator that runs one replica, and for tests. The Manager has no
 * implicit election: provide this one, or `LeaseLeaderElection.layer`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAlwaysLeader: Layer.Layer<LeaderElection> = Layer.succeed(LeaderElection, alwaysLeader)

/**
 * A manually driven election, for tests and for embedding: `elect` makes this
 * replica the leader, `lose` takes leadership away.
 *
 * @since 0.1.0
 * @category constructors
 */
export const manual = (identity = "manual"): Effect.Effect<{
  readonly election: LeaderElection.Service
  readonly elect: Effect.Effect<void>
  readonly lose: (reason: string) => Effect.Effect<void>
}> =>
  Effect.gen(function*() {
    const elected = yield* Deferred.make<void>()
    const lost = yield* Deferred.make<LeadershipLost>()
    return {
      election: {
        awaitLeadership: Deferred.await(elected),
        awaitLoss: Deferred.await(lost),
        isLeader: Effect.zipWith(Deferred.isDone(elected), Deferred.isDone(lost), (e, l) => e && !l)
      },
      elect: Deferred.succeed(elected, undefined),
      lose: (reason) => Deferred.succeed(lost, new LeadershipLost({ identity, reason }))
    }
  })
