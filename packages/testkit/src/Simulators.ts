/**
 * Built-in controllers that make the in-memory cluster behave like a real one
 * for the kinds operators usually create.
 *
 * - {@link controllerManager}: a small kube-controller-manager (with the
 *   scheduler and kubelet as far as Pods need them). Deployments get
 *   ReplicaSets named `<deployment>-<pod-template-hash>` (revision annotations,
 *   controller ownerReferences), ReplicaSets get Pods (`<replicaset>-<5 chars>`)
 *   that are scheduled to `testkit-node` at once and become Running and Ready
 *   `podReadyDelay` later (on Effect's `Clock`, so `TestClock` controls it);
 *   scaling, RollingUpdate (maxSurge / maxUnavailable against available Pods),
 *   Recreate, pause, revision history (`kubectl rollout status|history|undo`
 *   work), Deployment and ReplicaSet `status` with upstream conditions.
 *   `TestApiServer` runs it by default (`controllers: false` turns it off).
 * - Namespace deletion removing the namespace's objects, and garbage
 *   collection through ownerReferences, are built into the cluster
 *   (synchronous, see `TestCluster.Options.namespaceLifecycle`).
 *
 * @since 0.1.0
 */
import type * as Kube from "@reconcile/kube/Kube"
import type * as KubeClient from "@reconcile/kube/KubeClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/controllerManager.js"
import * as kubelet_ from "./internal/kubelet.js"
import { coreOf } from "./internal/testCluster.js"
import { TestCluster } from "./TestCluster.js"

/**
 * Options of {@link controllerManager}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControllerManagerOptions {
  /** Time from a Pod's creation to Running and Ready (default 1 second). */
  readonly podReadyDelay?: Duration.Input | undefined
}

/**
 * Runs the controller manager over the cluster in context, in scope. One runs
 * per cluster: starting it again while it runs only changes its options (the
 * latest win). Its writes go to the cluster directly: `Faults` do not affect it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TestClock } from "effect/testing"
 * import { Simulators, TestCluster } from "@reconcile/testkit"
 *
 * const program = Effect.gen(function*() {
 *   yield* Simulators.controllerManager({ podReadyDelay: "2 seconds" })
 *   // create a Deployment: its ReplicaSet and Pods follow; Ready after TestClock.adjust("2 seconds")
 * }).pipe(Effect.scoped, Effect.provide(TestCluster.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const controllerManager = (
  options?: ControllerManagerOptions
): Effect.Effect<void, never, TestCluster | Scope.Scope> =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster
    yield* internal.run(coreOf(cluster), options)
  })

/**
 * {@link controllerManager} as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerControllerManager = (options?: ControllerManagerOptions): Layer.Layer<never, never, TestCluster> =>
  Layer.effectDiscard(controllerManager(options))

/**
 * The pod-template hash of a Deployment's pod template, as its ReplicaSet's
 * name and `pod-template-hash` label carry it (FNV-32a, encoded with
 * Kubernetes' vowel-free alphabet; the value is the testkit's own, not a real
 * cluster's).
 *
 * @since 0.1.0
 * @category utils
 */
export const podTemplateHash: (template: unknown) => string = (template) => internal.computeHash(template)

/**
 * Options of {@link kubelet}.
 *
 * @since 0.1.0
 * @category models
 */
export interface KubeletOptions {
  /** Time from seeing a Pod to reporting it Running and Ready (a Job's Pod: Succeeded); default 1 second. */
  readonly podReadyDelay?: Duration.Input | undefined
  /** One line per Pod it starts. */
  readonly log?: ((line: string) => void) | undefined
}

/**
 * Plays the scheduler and the kubelet of a cluster that has none — a real control plane (`Envtest`), where
 * kube-controller-manager creates ReplicaSets and Pods but nothing runs them: it registers the Node
 * `testkit-node`, binds each Pod to it, reports it Running with its containers ready `podReadyDelay` after it
 * sees it (a Pod a Job owns: Succeeded), so Deployments become Available and Jobs complete, and confirms the
 * graceful deletion of a bound Pod at once (a zero grace period), as a kubelet whose containers stopped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const kubelet = (
  options?: KubeletOptions
): Effect.Effect<void, never, KubeClient.KubeClient | Kube.Kube | Scope.Scope> => kubelet_.run(options)

/**
 * {@link kubelet} as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerKubelet = (options?: KubeletOptions): Layer.Layer<never, never, KubeClient.KubeClient | Kube.Kube> =>
  Layer.effectDiscard(kubelet(options))
