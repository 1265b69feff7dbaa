/**
 * The Manager runs controllers and other runnables, serves `/metrics`
 * (Prometheus: Effect's metrics and the process and Node.js metrics, see
 * `Prometheus.text`), `/healthz` and `/readyz` (ready once every registered
 * runnable is ready: every controller's sources synced, and none
 * disconnected for longer than its `sourceDisconnectLimit`), and ends with a
 * typed error as soon as one of them fails — a cache-sync timeout, a failed
 * source, or lost leadership.
 *
 * Every controller runs under a Manager: `Controller.layer`, `Controller.make`
 * and `KubeController.layer` require it in their type, so a program that
 * forgets `Manager.layer` does not compile. The Manager in turn requires the
 * replica's `LeaderElection`, said explicitly: `LeaderElection.layerAlwaysLeader`
 * for one replica (and tests), `LeaseLeaderElection.layer` for several. Without
 * ports, `Manager.layer()` serves no endpoint (what tests use).
 *
 * Graceful shutdown on SIGTERM/SIGINT comes from running the app with
 * `NodeRuntime.runMain`: the signal interrupts the main fiber, every Layer's
 * scope closes, and each controller drains its in-flight reconciles within its
 * `gracefulShutdownTimeout`.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { Controller, LeaderElection, Manager } from "@reconcile/core"
 *
 * declare const webApps: Controller.Config<never, never, never>
 * declare const configs: Controller.Config<never, never, never>
 *
 * const Main = Layer.mergeAll(Controller.layer(webApps), Controller.layer(configs)).pipe(
 *   Layer.provideMerge(Manager.layer({ metricsPort: 8080, healthPort: 8081 })),
 *   Layer.provide(LeaderElection.layerAlwaysLeader) // one replica; several: LeaseLeaderElection.layer
 * )
 * Manager.launch(Main).pipe(NodeRuntime.runMain({ teardown: Manager.teardown }))
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type * as HealthServer from "./HealthServer.js"
import * as internal from "./internal/manager.js"
import type { LeaderElection } from "./LeaderElection.js"

/**
 * The Manager service: controllers register with it, and read from it when this replica leads.
 *
 * @since 0.1.0
 * @category tags
 */
export class Manager extends Context.Service<Manager, Manager.Service>()("@reconcile/core/Manager") {}

/**
 * @since 0.1.0
 */
export declare namespace Manager {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Registers a runnable: its readiness joins `/readyz`, its failure ends the Manager. */
    readonly register: (runnable: Runnable) => Effect.Effect<void, never, Scope.Scope>
    /** Whether every registered runnable is ready. */
    readonly ready: Effect.Effect<boolean>
    /** The address `/metrics` is served on, if enabled. */
    readonly metricsAddress: HealthServer.Address | undefined
    /** The address `/healthz` and `/readyz` are served on, if enabled. */
    readonly healthAddress: HealthServer.Address | undefined
    /** Fails with the first runnable's failure; never succeeds. */
    readonly await: Effect.Effect<never, ManagerError>
    /** The replica's leader election, the one the Manager was made with: its controllers' workers follow it. */
    readonly leaderElection: LeaderElection.Service
  }

  /**
   * Something the Manager supervises: a controller, or any long-running task.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Runnable {
    readonly name: string
    readonly ready: Effect.Effect<boolean>
    /** Fails when the runnable fails; never succeeds. */
    readonly await: Effect.Effect<never, unknown>
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    /** Port of `/metrics` on `host`; 0 for a random free port; omit to serve no metrics endpoint. */
    readonly metricsPort?: number | undefined
    /** Port of `/healthz` and `/readyz`; may equal `metricsPort` (one server); omit to serve none. */
    readonly healthPort?: number | undefined
    /** Interface to bind (default `127.0.0.1`). */
    readonly host?: string | undefined
    /**
     * Serve the process and Node.js metrics of prom-client's default collectors (`process_cpu_seconds_total`,
     * `process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`, `nodejs_eventloop_lag_seconds`, …) on
     * `/metrics` beside Effect's metrics. Default `true`.
     */
    readonly processMetrics?: boolean | undefined
  }
}

/**
 * A runnable failed, so the Manager stopped.
 *
 * @since 0.1.0
 * @category errors
 */
export class ManagerError extends Data.TaggedError("ManagerError")<{
  readonly runnable: string
  readonly cause: unknown
}> {
  override get message(): string {
    const detail = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `${this.runnable} failed: ${detail}`
  }
}

/**
 * Makes a Manager in the current scope, with the `LeaderElection` in context; its HTTP endpoints close with it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Manager.Options
) => Effect.Effect<Manager.Service, HealthServer.HealthServerError, LeaderElection | Scope.Scope> = internal.make

/**
 * A Layer providing the Manager. It requires the replica's `LeaderElection`: provide
 * `LeaderElection.layerAlwaysLeader` for a single replica, `LeaseLeaderElection.layer` for several.
 *
 * @example
 * ```ts
 * import { LeaderElection, Manager } from "@reconcile/core"
 * import { Layer } from "effect"
 *
 * // what tests use: no endpoint, always the leader
 * const TestManager = Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (
  options?: Manager.Options
) => Layer.Layer<Manager, HealthServer.HealthServerError, LeaderElection> = internal.layer

/**
 * Builds `app` (which must provide the Manager), then runs until a runnable
 * fails — failing with its `ManagerError` — or the fiber is interrupted (e.g.
 * by SIGTERM under `NodeRuntime.runMain`), which closes everything gracefully.
 *
 * @since 0.1.0
 * @category running
 */
export const launch: <E, R>(app: Layer.Layer<Manager, E, R>) => Effect.Effect<never, E | ManagerError, R> =
  internal.launch

/**
 * The process exit of a Manager run under `NodeRuntime.runMain`: a graceful stop (SIGTERM/SIGINT interrupted
 * the main fiber, every scope closed, in-flight reconciles drained) exits 0, as Kubernetes expects of a pod
 * that stopped cleanly; anything else is effect's default (a failure exits 1). Effect 4's own default exits
 * 130 on an interrupt.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import type { Layer } from "effect"
 * import { Manager } from "@reconcile/core"
 *
 * declare const Main: Layer.Layer<Manager.Manager>
 *
 * Manager.launch(Main).pipe(NodeRuntime.runMain({ teardown: Manager.teardown }))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
