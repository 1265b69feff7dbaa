/**
 * The small view of an object's metadata that `@reconcile/core` works with.
 *
 * Core knows nothing of Kubernetes wire formats: predicates, handlers and
 * requests only read the fields below. Every field is optional and typed
 * `T | undefined`, so the models of `@kubernetes/client-node` (whose objects
 * have an optional `metadata` with optional fields) fit without conversion,
 * and so do plain objects from channel sources or non-Kubernetes systems.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"

/**
 * A reference from an object to one of its owners (`metadata.ownerReferences[]`).
 *
 * `controller: true` marks the managing controller's object; at most one
 * reference of an object should carry it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean | undefined
  readonly blockOwnerDeletion?: boolean | undefined
}

/**
 * The metadata fields core reads. Other fields of a real object's metadata are
 * allowed and ignored.
 *
 * `deletionTimestamp` is a `Date` in client-node's models and a string on the
 * wire; core only checks whether it is set.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectMeta {
  readonly name?: string | undefined
  readonly namespace?: string | undefined
  readonly uid?: string | undefined
  readonly generation?: number | undefined
  readonly resourceVersion?: string | undefined
  readonly labels?: Readonly<Record<string, string>> | undefined
  readonly annotations?: Readonly<Record<string, string>> | undefined
  readonly ownerReferences?: ReadonlyArray<OwnerReference> | undefined
  readonly deletionTimestamp?: Date | string | undefined
  readonly finalizers?: ReadonlyArray<string> | undefined
}

/**
 * Anything with an (optional) `metadata` field: the constraint on the objects
 * that predicates and handlers see.
 *
 * @example
 * ```ts
 * import type { ObjectMeta } from "@reconcile/core"
 *
 * interface Widget extends ObjectMeta.HasMetadata {
 *   readonly spec: { readonly size: number }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface HasMetadata {
  readonly metadata?: ObjectMeta | undefined
}

const emptyRecord: Readonly<Record<string, string>> = Object.freeze({})
const emptyArray: ReadonlyArray<never> = Object.freeze([])

/**
 * The object's `metadata.name`, if set.
 *
 * @since 0.1.0
 * @category accessors
 */
export const name = (obj: HasMetadata): string | undefined => obj.metadata?.name

/**
 * The object's `metadata.namespace`, if set. An empty string (cluster-scoped in
 * Go's convention) is returned as `undefined`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const namespace = (obj: HasMetadata): string | undefined => {
  const ns = obj.metadata?.namespace
  return ns === "" ? undefined : ns
}

/**
 * The object's `metadata.uid`, if set.
 *
 * @since 0.1.0
 * @category accessors
 */
export const uid = (obj: HasMetadata): string | undefined => obj.metadata?.uid

/**
 * The object's labels; an empty record when it has none.
 *
 * @since 0.1.0
 * @category accessors
 */
export const labels = (obj: HasMetadata): Readonly<Record<string, string>> => obj.metadata?.labels ?? emptyRecord

/**
 * The object's annotations; an empty record when it has none.
 *
 * @since 0.1.0
 * @category accessors
 */
export const annotations = (obj: HasMetadata): Readonly<Record<string, string>> =>
  obj.metadata?.annotations ?? emptyRecord

/**
 * The object's owner references; empty when it has none.
 *
 * @since 0.1.0
 * @category accessors
 */
export const ownerReferences = (obj: HasMetadata): ReadonlyArray<OwnerReference> =>
  obj.metadata?.ownerReferences ?? emptyArray

/**
 * The owner reference marked `controller: true` (the first one, as
 * apimachinery's `GetControllerOf`), if any.
 *
 * @example
 * ```ts
 * import { ObjectMeta } from "@reconcile/core"
 *
 * const owner = ObjectMeta.controllerOf({
 *   metadata: {
 *     ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d4", uid: "u1", controller: true }]
 *   }
 * })
 * // Option.some({ kind: "ReplicaSet", name: "web-5d4", ... })
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const controllerOf = (obj: HasMetadata): Option.Option<OwnerReference> =>
  Option.fromNullishOr(ownerReferences(obj).find((ref) => ref.controller === true))

/**
 * Whether the object is being deleted (`metadata.deletionTimestamp` is set) and
 * only waits for its finalizers.
 *
 * @since 0.1.0
 * @category accessors
 */
export const isBeingDeleted = (obj: HasMetadata): boolean =>
  obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null
