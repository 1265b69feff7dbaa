/**
 * Writing desired state: server-side apply, and controller-runtime's
 * `CreateOrUpdate` / `CreateOrPatch`.
 *
 * - {@link apply}: server-side apply with a field manager named after the
 *   controller. The server merges the intent with what other managers own
 *   and records ownership in `managedFields`; taking fields another manager
 *   owns is a `Conflict` (`KubeError.isFieldManagerConflict`) unless `force`.
 * - {@link createOrUpdate} / {@link createOrPatch}: read the object, run a
 *   mutate function on it (or on the given object when it does not exist),
 *   and write only if the mutation changed something — compared
 *   semantically: key order, `undefined`/`null` and empty maps or lists do
 *   not count as changes. `createOrUpdate` replaces the object (a stale read
 *   is a `Conflict`: wrap it in `KubeError.retryOnConflict`, which re-runs
 *   the read too); `createOrPatch` sends a JSON merge patch of the changed
 *   fields, and status changes through the status subresource.
 * - **Owned objects**: the `owner` option writes the object with a controller
 *   reference to its owner — the owner's **uid**, with `blockOwnerDeletion` —
 *   set on the object given to `apply` or returned by the mutate function (an
 *   owner without a uid is `InvalidOwner`, an object controlled by another
 *   owner `AlreadyOwned`; nothing is written then). The uid is what protects
 *   against orphans: the API server accepts a reference to an owner that no
 *   longer exists (admission does not check it), and the garbage collector
 *   then deletes the child, since its owner's uid is gone — within seconds on
 *   a real cluster, at once in the testkit. A child written for an owner that
 *   was deleted and re-created under the same name refers to the old uid and
 *   is collected too. `Finalizer.reconcile` adds the other half: its `apply`
 *   never runs for an owner already deleted on the server.
 *
 * @example
 * ```ts
 * import { Apply, OwnerReference, Resource } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom)
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 *
 * const ensureConfig = (app: WebApp) =>
 *   Apply.createOrUpdate(
 *     Resource.ConfigMap,
 *     { metadata: { name: `${app.metadata.name}-config` } },
 *     (cm) => OwnerReference.setControllerReference(app, { ...cm, data: { image: app.spec.image } }),
 *     { namespace: app.metadata.namespace }
 *   ) // Effect<Apply.Result<ConfigMap>, KubeError | AlreadyOwned | InvalidOwner | MutatedKey, KubeClient>
 * ```
 *
 * @since 0.1.0
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as EffectResult from "effect/Result"
import * as internal from "./internal/apply.js"
import type * as KubeClient from "./KubeClient.js"
import type * as KubeError from "./KubeError.js"
import type * as OwnerReference from "./OwnerReference.js"
import type * as Resource from "./Resource.js"

/**
 * Options of {@link apply}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApplyOptions {
  /** The field manager: name it after the controller (`webapp-controller`). */
  readonly fieldManager: string
  /** Take ownership of fields other managers own instead of failing with a `Conflict`. */
  readonly force?: boolean | undefined
  /** The namespace when the object has none (else the client's default). */
  readonly namespace?: string | undefined
  readonly dryRun?: boolean | undefined
  /** Write the object with a controller reference to this owner (its uid; see the module documentation). */
  readonly owner?: OwnerReference.Owner | undefined
}

/**
 * The errors the `owner` option adds (none without one).
 *
 * @since 0.1.0
 * @category models
 */
export type OwnerError<O> = O extends { readonly owner?: undefined } ? never
  : OwnerReference.AlreadyOwned | OwnerReference.InvalidOwner

/**
 * Server-side applies `object` — the fully specified intent of this field
 * manager: fields it leaves out that it applied before are removed, fields
 * other managers own are kept. `apiVersion` and `kind` are filled in from the
 * resource; `metadata.managedFields` is dropped; a `metadata.resourceVersion`
 * makes the apply conditional on it. Creates the object when missing.
 *
 * @example
 * ```ts
 * import { Apply, Resource } from "@reconcile/kube"
 *
 * const applied = Apply.apply(
 *   Resource.ConfigMap,
 *   { metadata: { name: "settings", namespace: "shop" }, data: { mode: "fast" } },
 *   { fieldManager: "webapp-controller" }
 * ) // Effect<ConfigMap, KubeError, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category writes
 */
export const apply: <A extends HasMetadata, O extends ApplyOptions>(
  resource: Resource.Resource<A>,
  object: A,
  options: O
) => Effect.Effect<A, KubeError.KubeError | OwnerError<O>, KubeClient.KubeClient> = internal.apply

/**
 * What {@link createOrUpdate} / {@link createOrPatch} did.
 *
 * @since 0.1.0
 * @category models
 */
export type Operation = "created" | "updated" | "unchanged"

/**
 * The operation and the object as the server has it after the write (the read
 * object when unchanged).
 *
 * @since 0.1.0
 * @category models
 */
export interface Result<A> {
  readonly operation: Operation
  readonly object: A
}

/**
 * Options of {@link createOrUpdate} / {@link createOrPatch}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The namespace when the object has none (else the client's default). */
  readonly namespace?: string | undefined
  /** The field manager recorded for the writes. */
  readonly fieldManager?: string | undefined
  /**
   * Write the object with a controller reference to this owner (its uid; see
   * the module documentation), set on what the mutate function returns.
   */
  readonly owner?: OwnerReference.Owner | undefined
}

/**
 * The mutate function changed the object's name or namespace: it must only
 * change the object it was given (controller-runtime's "MutateFn cannot
 * mutate object name and/or object namespace").
 *
 * @since 0.1.0
 * @category errors
 */
export class MutatedKey extends Data.TaggedError("MutatedKey")<{
  readonly expected: string
  readonly actual: string
}> {
  override get message(): string {
    return `the mutate function changed the object's key from ${this.expected} to ${this.actual}`
  }
}

/**
 * What a mutate function returns: the desired object, or an `Effect` of it
 * (or a `Result`, e.g. `OwnerReference.setControllerReference`), whose
 * error and requirements become the operation's (see {@link MutateError},
 * {@link MutateContext}).
 *
 * @since 0.1.0
 * @category models
 */
export type Mutated<A> = A | Effect.Effect<A, any, any> | EffectResult.Result<A, any>

/**
 * The error of a mutate function's result (`never` for a plain object).
 *
 * @since 0.1.0
 * @category models
 */
export type MutateError<M> = M extends Effect.Effect<any, infer E, any> ? E
  : M extends EffectResult.Result<any, infer E> ? E
  : never

/**
 * The requirements of a mutate function's result (`never` for a plain object).
 *
 * @since 0.1.0
 * @category models
 */
export type MutateContext<M> = M extends Effect.Effect<any, any, infer R> ? R : never

/**
 * controller-runtime's `CreateOrUpdate`: gets the object named by `object`
 * (its `metadata.name` and `metadata.namespace`); if it exists, runs `mutate`
 * on it and replaces it (PUT, guarded by the read's `resourceVersion`) unless
 * nothing changed; if it does not, runs `mutate` on `object` and creates it.
 * Status is not written (use `Status.patch`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Apply, KubeError, Resource } from "@reconcile/kube"
 *
 * const ensureSettings = Effect.gen(function*() {
 *   const { operation } = yield* Apply.createOrUpdate(
 *     Resource.ConfigMap,
 *     { metadata: { name: "settings", namespace: "shop" } },
 *     (cm) => ({ ...cm, data: { ...cm.data, mode: "fast" } })
 *   ).pipe(KubeError.retryOnConflict())
 *   yield* Effect.log(operation) // "created" the first time, "unchanged" afterwards
 * })
 * ```
 *
 * @since 0.1.0
 * @category writes
 */
export const createOrUpdate: <A extends HasMetadata, M extends Mutated<A>, O extends Options = {}>(
  resource: Resource.Resource<A>,
  object: A,
  mutate: (current: A) => M,
  options?: O
) => Effect.Effect<
  Result<A>,
  KubeError.KubeError | MutatedKey | MutateError<M> | OwnerError<O>,
  KubeClient.KubeClient | MutateContext<M>
> = internal.createOrUpdate

/**
 * controller-runtime's `CreateOrPatch`: as {@link createOrUpdate}, but an
 * existing object is written with a JSON merge patch of the fields `mutate`
 * changed (no `resourceVersion` guard: fields nobody changed are left to
 * other writers), and a changed `status` is patched through the status
 * subresource.
 *
 * @since 0.1.0
 * @category writes
 */
export const createOrPatch: <A extends HasMetadata, M extends Mutated<A>, O extends Options = {}>(
  resource: Resource.Resource<A>,
  object: A,
  mutate: (current: A) => M,
  options?: O
) => Effect.Effect<
  Result<A>,
  KubeError.KubeError | MutatedKey | MutateError<M> | OwnerError<O>,
  KubeClient.KubeClient | MutateContext<M>
> = internal.createOrPatch
