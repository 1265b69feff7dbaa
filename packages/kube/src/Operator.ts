/**
 * An operator as one value: its name, the custom resources it serves, its
 * controllers and any extra permissions. The main job runs it
 * (`@reconcile/cli`'s `Main.run`), and `Manifests.generate` / `reconcile
 * manifests` turn it into the YAML a cluster needs (CRDs, least-privilege
 * RBAC, ServiceAccount, Deployment).
 *
 * The operator is given its controllers as values (`KubeController.make`):
 * `Manifests` computes RBAC from what they declare. It runs `layer`: by default
 * every controller's `KubeController.layer`, merged; when controllers need
 * services of their own (an `EventRecorder`, a client of another system), give
 * the Layer built from them with ordinary Layer functions — what it is built
 * with never changes what the controllers declare. List each controller that
 * `layer` runs in `controllers`: a controller that runs without being listed
 * has no permissions in the generated RBAC.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { EventRecorder, KubeController, Manifests, Operator, Resource } from "@reconcile/kube"
 *
 * const Settings = KubeController.make({ name: "settings", for: Resource.ConfigMap, reconcile: () => Effect.void })
 * const Secrets = KubeController.make({
 *   name: "secrets",
 *   for: Resource.Secret,
 *   reconcile: (secret) => EventRecorder.record(secret, { type: "Normal", reason: "Seen", action: "Reconcile" })
 * })
 *
 * // every controller's Layer, merged
 * export const operator = Operator.make({ name: "settings-operator", controllers: [Settings] })
 *
 * // a controller with a service of its own: the Layer that runs them, built from the values
 * export const withEvents = Operator.make({
 *   name: "settings-operator",
 *   controllers: [Settings, Secrets],
 *   layer: Layer.mergeAll(
 *     KubeController.layer(Settings),
 *     KubeController.layer(Secrets).pipe(Layer.provide(EventRecorder.layer({ controller: "example.com/secrets" })))
 *   )
 * })
 *
 * const rules = Manifests.rules(withEvents) // what the ClusterRole grants: both controllers' needs
 * ```
 *
 * @since 0.1.0
 */
import type * as Layer from "effect/Layer"
import * as internal from "./internal/operator.js"
import type { PolicyRule } from "./internal/policyRule.js"
import type * as KubeController from "./KubeController.js"
import type * as Resource from "./Resource.js"

const TypeId = internal.TypeId

// One RBAC rule (declared by `internal/policyRule.ts`, so that `KubeController` need not import this module).
export type { PolicyRule }

/**
 * An operator: see the module documentation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operator<E = never, R = never> {
  readonly [TypeId]: typeof TypeId
  /** A DNS-1123 label: the field manager, the leader-election Lease, the ServiceAccount, ClusterRole and Deployment. */
  readonly name: string
  /** The custom resources the operator serves: their CRDs are installed on the embedded cluster and generated. */
  readonly resources: ReadonlyArray<Resource.AnyCustomResource>
  /** What each controller reads and writes (`KubeController` values are declarations): the RBAC's source. */
  readonly controllers: ReadonlyArray<KubeController.Declaration>
  /** Permissions beyond what the controllers declare. */
  readonly rules: ReadonlyArray<PolicyRule>
  /** The Layer that runs the controllers (by default every controller's `KubeController.layer`, merged). */
  readonly layer: Layer.Layer<never, E, R>
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Controllers extends ReadonlyArray<KubeController.Declaration>> {
  readonly name: string
  readonly resources?: ReadonlyArray<Resource.AnyCustomResource> | undefined
  /** The controllers: what Manifests grants is computed from what they declare. */
  readonly controllers: Controllers
  readonly rules?: ReadonlyArray<PolicyRule> | undefined
}

/**
 * Describes an operator. Without `layer`, it runs every controller's `KubeController.layer`, merged; with `layer`, it
 * runs that Layer (built from the controllers with any Layer functions), and `controllers` may also hold plain
 * `KubeController.Declaration`s of controllers made otherwise.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <const Controllers extends ReadonlyArray<KubeController.KubeController<any, any>>>(
    options: Options<Controllers> & { readonly layer?: undefined }
  ): Operator<never, KubeController.Services<Controllers[number]>>
  <E, R>(
    options: Options<ReadonlyArray<KubeController.Declaration>> & { readonly layer: Layer.Layer<never, E, R> }
  ): Operator<E, R>
} = internal.make as any

/**
 * Whether a value is an {@link Operator} (how `reconcile manifests` finds one among a module's exports).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isOperator: (u: unknown) => u is Operator<unknown, unknown> = internal.isOperator
