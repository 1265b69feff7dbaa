/**
 * Fault injection for reliability tests of controllers and clients. Faults
 * act on the cluster, so they apply both to in-process `TestCluster` calls
 * and to requests served by `TestApiServer`.
 *
 * - `failRequests`: answer matching requests with a status code (500, 503,
 *   429 with `Retry-After`, …), by verb, resource, namespace, count or
 *   probability.
 * - `addLatency`: delay matching requests (in-process through Effect's
 *   `Clock`, so `TestClock` drives it; over HTTP in real time).
 * - `dropWatches` / `dropNextWatches`: end open watches abruptly (over HTTP
 *   the socket is destroyed mid-stream) or the next ones right after their
 *   initial events.
 * - `expireNext`: the next list answers 410 Expired; the next watch sends an
 *   `ERROR` event with a 410 Status and ends.
 * - `garbleWatches`: write a line that is not JSON on every open HTTP watch.
 * - `stallWatches`: hold the open watches (events, bookmarks, their end) for
 *   a duration with the connection open, then deliver what was held, in
 *   order — a proxy that stops forwarding, a frozen network path.
 * - `delayWatches`: deliver every event of matching watches (open now or
 *   later) late by a duration, in order, until the rule is removed — a cache
 *   that lags the server.
 *
 * Stalls and delays run on Effect's `Clock` in-process (`TestClock` drives
 * them, deterministically) and on the wall clock over HTTP.
 * - `compactNow`: forget the watch history.
 *
 * Probabilistic rules draw from a PRNG seeded by `TestCluster` (`seed`
 * option) or `reseed`: with the same seed and the same request order the same
 * requests fail.
 *
 * @since 0.1.0
 */
import type * as KubeController from "@reconcile/kube/KubeController"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { coreOf } from "./internal/testCluster.js"
import { TestCluster } from "./TestCluster.js"

/**
 * A request verb as Kubernetes names it (`KubeController.Verb`, the verbs of RBAC rules).
 *
 * @since 0.1.0
 * @category models
 */
export type Verb = KubeController.Verb

/**
 * Which requests a rule applies to; every given field must match.
 *
 * @since 0.1.0
 * @category models
 */
export interface Match {
  readonly verbs?: ReadonlyArray<Verb> | undefined
  /** Plural resource names, optionally with the group: `configmaps`, `deployments.apps`. */
  readonly resources?: ReadonlyArray<string> | undefined
  readonly namespaces?: ReadonlyArray<string> | undefined
  /** Apply to the first `count` matching requests, then remove the rule. */
  readonly count?: number | undefined
  /** Apply to each matching request with this probability (seeded, deterministic). */
  readonly probability?: number | undefined
}

/**
 * A rule answering matching requests with an error status.
 *
 * @since 0.1.0
 * @category models
 */
export interface FailRule extends Match {
  /** The HTTP status code (500, 503, 429, …). */
  readonly code: number
  /** Sent as `Retry-After` and `details.retryAfterSeconds`. */
  readonly retryAfterSeconds?: number | undefined
  /**
   * The Status message (default `injected fault: <code>`; for a 403, kube-apiserver's RBAC denial:
   * `configmaps is forbidden: User "system:serviceaccount:default:reconcile" cannot list resource "configmaps" in
   * API group "" in the namespace "default"`).
   */
  readonly message?: string | undefined
}

/**
 * A rule delaying matching requests.
 *
 * @since 0.1.0
 * @category models
 */
export interface LatencyRule extends Match {
  readonly latency: Duration.Input
}

/**
 * Which watches a stall or a delay applies to; every given field must match.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchMatch {
  /** Plural resource names, optionally with the group: `configmaps`, `deployments.apps`. */
  readonly resources?: ReadonlyArray<string> | undefined
  readonly namespaces?: ReadonlyArray<string> | undefined
}

/**
 * A stall of the open watches.
 *
 * @since 0.1.0
 * @category models
 */
export interface StallRule extends WatchMatch {
  /** How long nothing is delivered (the connection stays open). */
  readonly duration: Duration.Input
}

/**
 * A rule delaying watch events.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchDelayRule extends WatchMatch {
  /** How late each event arrives. */
  readonly delay: Duration.Input
}

/**
 * Identifies a rule, to remove it.
 *
 * @since 0.1.0
 * @category models
 */
export type RuleId = number

/**
 * The fault injection service of a cluster.
 *
 * @since 0.1.0
 * @category tags
 */
export class Faults extends Context.Service<Faults, Faults.Service>()("@reconcile/testkit/Faults") {}

/**
 * @since 0.1.0
 */
export declare namespace Faults {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly failRequests: (rule: FailRule) => Effect.Effect<RuleId>
    readonly addLatency: (rule: LatencyRule) => Effect.Effect<RuleId>
    readonly removeRule: (id: RuleId) => Effect.Effect<void>
    /** Ends every open watch now; returns how many. */
    readonly dropWatches: Effect.Effect<number>
    /** The next `count` watches end right after their initial events. */
    readonly dropNextWatches: (count?: number) => Effect.Effect<void>
    /** The next `count` lists (or watches) answer 410 Expired. */
    readonly expireNext: (verb: "list" | "watch", count?: number) => Effect.Effect<void>
    /** Writes a line that is not JSON on every open HTTP watch; returns how many got one. */
    readonly garbleWatches: Effect.Effect<number>
    /**
     * Holds the matching open watches for `duration` with their connections
     * open: nothing is delivered (events, bookmarks, the end of the watch),
     * then what was held arrives in order. Returns how many were stalled.
     */
    readonly stallWatches: (rule: StallRule) => Effect.Effect<number>
    /**
     * Delivers every event of the matching watches — open now or opened later —
     * `delay` after the cluster produced it, in order, until the rule is
     * removed (events already held keep their time).
     */
    readonly delayWatches: (rule: WatchDelayRule) => Effect.Effect<RuleId>
    /** Forgets the watch history now. */
    readonly compactNow: Effect.Effect<void>
    /** Restarts the random draws from `seed`. */
    readonly reseed: (seed: number) => Effect.Effect<void>
    /** Removes every rule and pending one-shot fault. */
    readonly reset: Effect.Effect<void>
  }
}

/**
 * The fault injection service of the `TestCluster` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Faults.Service, never, TestCluster> = Effect.map(TestCluster, (cluster) => {
  const faults = coreOf(cluster).faults
  return {
    failRequests: (rule) => Effect.sync(() => faults.fail(rule, rule.code, rule.retryAfterSeconds, rule.message)),
    addLatency: (rule) => Effect.sync(() => faults.latency(rule, Duration.toMillis(rule.latency))),
    removeRule: (id) => Effect.sync(() => faults.remove(id)),
    dropWatches: Effect.sync(() => faults.dropAll()),
    dropNextWatches: (count = 1) => Effect.sync(() => faults.dropNextWatches(count)),
    expireNext: (verb, count = 1) => Effect.sync(() => faults.expireNext(verb, count)),
    garbleWatches: Effect.sync(() => faults.garbleAll()),
    stallWatches: (rule) => Effect.sync(() => faults.stallWatches(rule, Duration.toMillis(rule.duration))),
    delayWatches: (rule) => Effect.sync(() => faults.delayWatches(rule, Duration.toMillis(rule.delay))),
    compactNow: Effect.sync(() => coreOf(cluster).compact()),
    reseed: (seed) => Effect.sync(() => faults.reseed(seed)),
    reset: Effect.sync(() => faults.reset())
  }
})

/**
 * Provides {@link Faults} for the `TestCluster` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Faults, never, TestCluster> = Layer.effect(Faults, make)
