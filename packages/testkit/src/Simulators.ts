/**
 * Built-in controllers that make the in-memory cluster behave like a real one
 * for the kinds operators usually create.
 *
 * - {@link deploymentStatus}: a Deployment's `status` follows its spec after
 *   a delay (driven by Effect's `Clock`, so `TestClock` controls it).
 * - Namespace deletion removing the namespace's objects is built into the
 *   cluster (synchronous, see `TestCluster.Options.namespaceLifecycle`).
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/simulators.js"
import type { TestCluster } from "./TestCluster.js"

/**
 * Options of {@link deploymentStatus}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeploymentStatusOptions {
  /** Time from a spec change to the status reporting it (default 1 second). */
  readonly delay?: Duration.Input | undefined
}

/**
 * Runs the Deployment status simulator in scope: after `delay`, each
 * Deployment's status gets `observedGeneration = metadata.generation` and
 * `replicas`, `updatedReplicas`, `readyReplicas`, `availableReplicas` equal to
 * `spec.replicas`, with `Available` and `Progressing` conditions. A new change
 * before the delay has passed restarts the delay.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deploymentStatus: (
  options?: DeploymentStatusOptions
) => Effect.Effect<void, never, TestCluster | Scope.Scope> = internal.deploymentStatus

/**
 * {@link deploymentStatus} as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDeploymentStatus = (options?: DeploymentStatusOptions): Layer.Layer<never, never, TestCluster> =>
  Layer.effectDiscard(internal.deploymentStatus(options))
