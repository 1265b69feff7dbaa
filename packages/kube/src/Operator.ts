/**
 * An operator as one value: its name, the custom resources it serves, its
 * controllers and any extra permissions. The main job runs it
 * (`@reconcile/cli`'s `Main.run`), and `Manifests.generate` / `reconcile
 * manifests` turn it into the YAML a cluster needs (CRDs, least-privilege
 * RBAC, ServiceAccount, Deployment).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeController, Manifests, Operator, Resource } from "@reconcile/kube"
 *
 * export const operator = Operator.make({
 *   name: "settings-operator",
 *   controllers: [
 *     KubeController.layer({ name: "settings", for: Resource.ConfigMap, reconcile: () => Effect.void })
 *   ]
 * })
 *
 * const rules = Manifests.rules(operator) // what the ClusterRole grants
 * ```
 *
 * @since 0.1.0
 */
import type * as Layer from "effect/Layer"
import * as internal from "./internal/operator.js"
import type * as Resource from "./Resource.js"

const TypeId = internal.TypeId

/**
 * One RBAC rule (`rbac.authorization.k8s.io/v1` PolicyRule).
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string> | undefined
}

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
  /**
   * The controllers, each as `KubeController.layer` made it: it carries what the controller reads and writes
   * (provide its services with `KubeController.provide`, which keeps that).
   */
  readonly controllers: ReadonlyArray<Layer.Layer<never, E, R>>
  /** Permissions beyond what the controllers declare. */
  readonly rules: ReadonlyArray<PolicyRule>
  /** Every controller, merged. */
  readonly layer: Layer.Layer<never, E, R>
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Controllers extends ReadonlyArray<Layer.Layer<never, any, any>>> {
  readonly name: string
  readonly resources?: ReadonlyArray<Resource.AnyCustomResource> | undefined
  readonly controllers: Controllers
  readonly rules?: ReadonlyArray<PolicyRule> | undefined
}

/**
 * Describes an operator.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Controllers extends ReadonlyArray<Layer.Layer<never, any, any>>>(
  options: Options<Controllers>
): Operator<Layer.Error<Controllers[number]>, Layer.Services<Controllers[number]>> => internal.make(options) as any

/**
 * Whether a value is an {@link Operator} (how `reconcile manifests` finds one among a module's exports).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isOperator: (u: unknown) => u is Operator<unknown, unknown> = internal.isOperator
