/**
 * Writing an object's `status` subresource the way controllers should:
 *
 * - `observedGeneration` is set from `metadata.generation` of the object the
 *   status was computed for (when the status type has the field), so clients
 *   can tell a stale status from a current one;
 * - conditions are set with {@link Conditions.set} semantics
 *   (`lastTransitionTime` changes only when a condition's `status` changes,
 *   stable order, `observedGeneration` per condition) in the same write;
 * - nothing is written when the status would not change (compared
 *   semantically), so a steady-state reconcile makes no status writes and
 *   triggers no watch events.
 *
 * The write is a JSON merge patch of the changed status fields against the
 * given object's status (removed fields are sent as `null`).
 *
 * @example
 * ```ts
 * import { type Conditions, type Resource, Status } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom) whose status has readyReplicas and conditions
 * declare const WebApp: Resource.Resource<
 *   Resource.CustomObject<
 *     { readonly image: string },
 *     { readonly readyReplicas?: number; readonly conditions?: ReadonlyArray<Conditions.Condition> }
 *   >
 * >
 * type WebApp = Resource.Type<typeof WebApp>
 *
 * const report = (app: WebApp, ready: number) =>
 *   Status.patch(WebApp, app, { readyReplicas: ready }, {
 *     conditions: [{ type: "Ready", status: ready > 0 ? "True" : "False", reason: "Replicas" }]
 *   })
 * ```
 *
 * @since 0.1.0
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Effect from "effect/Effect"
import type * as Conditions from "./Conditions.js"
import * as internal from "./internal/status.js"
import type * as KubeClient from "./KubeClient.js"
import type * as KubeError from "./KubeError.js"
import type * as Resource from "./Resource.js"

/**
 * The status type of an object type.
 *
 * @since 0.1.0
 * @category models
 */
export type StatusOf<A> = A extends { readonly status?: infer S } ? Exclude<S, undefined> : never

/**
 * Options of {@link patch}.
 *
 * @since 0.1.0
 * @category models
 */
export interface PatchOptions {
  /** Conditions to set on `status.conditions` ({@link Conditions.set} rules), at the `Clock`'s time. */
  readonly conditions?: ReadonlyArray<Conditions.ConditionInput> | undefined
  /**
   * Whether to set `status.observedGeneration` to `metadata.generation`.
   * Default: when the status type declares it (a custom resource whose
   * status Schema has the field), or the object's status already has it.
   */
  readonly observedGeneration?: boolean | undefined
  /** The field manager recorded for the write. */
  readonly fieldManager?: string | undefined
}

/**
 * Patches the status of `object` to `{ ...object.status, ...status }`, plus
 * `observedGeneration` and `conditions` (see {@link PatchOptions}); makes no
 * request when that equals the current status. Returns the object as the
 * server has it after the write, or `object` when nothing was written.
 *
 * Conditions set through `options.conditions` start from
 * `status.conditions` when given, else from `object.status.conditions`;
 * a condition without `observedGeneration` gets the object's generation.
 * A field set to `undefined` in `status` is removed.
 *
 * @example
 * ```ts
 * import { type Conditions, type Resource, Status } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom) whose status has readyReplicas and conditions
 * declare const WebApp: Resource.Resource<
 *   Resource.CustomObject<
 *     { readonly image: string },
 *     { readonly readyReplicas?: number; readonly conditions?: ReadonlyArray<Conditions.Condition> }
 *   >
 * >
 * type WebApp = Resource.Type<typeof WebApp>
 *
 * const degraded = (app: WebApp, why: string) =>
 *   Status.patch(WebApp, app, {}, {
 *     conditions: [{ type: "Ready", status: "False", reason: "Degraded", message: why }]
 *   }) // Effect<WebApp, KubeError, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category writes
 */
export const patch: <A extends HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  status: Partial<StatusOf<A>>,
  options?: PatchOptions
) => Effect.Effect<A, KubeError.KubeError, KubeClient.KubeClient> = internal.patch

/**
 * Sets conditions (and `observedGeneration`) in the status of `object`,
 * leaving its other status fields as they are: {@link patch} with an empty
 * status.
 *
 * @example
 * ```ts
 * import { type Conditions, type Resource, Status } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom) whose status has readyReplicas and conditions
 * declare const WebApp: Resource.Resource<
 *   Resource.CustomObject<
 *     { readonly image: string },
 *     { readonly readyReplicas?: number; readonly conditions?: ReadonlyArray<Conditions.Condition> }
 *   >
 * >
 * type WebApp = Resource.Type<typeof WebApp>
 *
 * const ready = (app: WebApp) =>
 *   Status.setConditions(WebApp, app, [{ type: "Ready", status: "True", reason: "DeploymentAvailable" }])
 * ```
 *
 * @since 0.1.0
 * @category writes
 */
export const setConditions: <A extends HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  conditions: ReadonlyArray<Conditions.ConditionInput>,
  options?: Omit<PatchOptions, "conditions">
) => Effect.Effect<A, KubeError.KubeError, KubeClient.KubeClient> = internal.setConditions
