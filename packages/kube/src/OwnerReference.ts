/**
 * Owner references: who owns an object, and which owner is its controller.
 * `KubeController`'s `owns` relies on controller references; garbage
 * collection deletes owned objects with their owner.
 *
 * All functions are pure: they return a new object, never mutate.
 *
 * @since 0.1.0
 */
import type { HasMetadata, OwnerReference } from "@reconcile/core/ObjectMeta"
import * as Data from "effect/Data"
import * as Result from "effect/Result"

/**
 * An object that can own others: it must know its apiVersion, kind, name and uid.
 *
 * @since 0.1.0
 * @category models
 */
export interface Owner extends HasMetadata {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
}

/**
 * Another controller already controls the object.
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyOwned extends Data.TaggedError("AlreadyOwned")<{
  readonly object: string
  readonly existing: OwnerReference
  readonly wanted: OwnerReference
}> {
  override get message(): string {
    return `${this.object} is already controlled by ${this.existing.kind} ${this.existing.name} (uid ${this.existing.uid}); ` +
      `cannot make ${this.wanted.kind} ${this.wanted.name} its controller`
  }
}

/**
 * The owner lacks a field an owner reference needs (apiVersion, kind, name or uid) —
 * typically an owner that was never read back from the API server.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidOwner extends Data.TaggedError("InvalidOwner")<{ readonly missing: ReadonlyArray<string> }> {
  override get message(): string {
    return `owner has no ${this.missing.join(", ")}`
  }
}

/**
 * The owner reference pointing at `owner`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  owner: Owner,
  options: { readonly controller?: boolean | undefined; readonly blockOwnerDeletion?: boolean | undefined } = {}
): Result.Result<OwnerReference, InvalidOwner> => {
  const fields = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata?.name,
    uid: owner.metadata?.uid
  }
  const missing = Object.entries(fields).filter(([, v]) => v === undefined || v === "").map(([k]) => k)
  if (missing.length > 0) return Result.fail(new InvalidOwner({ missing }))
  return Result.succeed({
    apiVersion: fields.apiVersion!,
    kind: fields.kind!,
    name: fields.name!,
    uid: fields.uid!,
    ...(options.controller === undefined ? {} : { controller: options.controller }),
    ...(options.blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion: options.blockOwnerDeletion })
  })
}

const withReferences = <A extends HasMetadata>(object: A, refs: ReadonlyArray<OwnerReference>): A => ({
  ...object,
  metadata: { ...object.metadata, ownerReferences: refs }
})

/**
 * Makes `owner` the controller of `object` (`controller: true`,
 * `blockOwnerDeletion: true`), replacing an earlier reference to the same
 * owner; fails if another owner is already the controller.
 *
 * @example
 * ```ts
 * import { OwnerReference, type Resource } from "@reconcile/kube"
 *
 * declare const webApp: Resource.CustomObject<{ readonly image: string }> // the owner, read from the server
 * declare const deployment: Resource.Deployment
 *
 * // Result<Deployment, AlreadyOwned | InvalidOwner>
 * const owned = OwnerReference.setControllerReference(webApp, deployment)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const setControllerReference = <A extends HasMetadata>(
  owner: Owner,
  object: A
): Result.Result<A, AlreadyOwned | InvalidOwner> =>
  Result.flatMap(make(owner, { controller: true, blockOwnerDeletion: true }), (wanted) => {
    const refs = object.metadata?.ownerReferences ?? []
    const existing = refs.find((ref) => ref.controller === true && ref.uid !== wanted.uid)
    if (existing !== undefined) {
      return Result.fail(new AlreadyOwned({ object: describe(object), existing, wanted }))
    }
    return Result.succeed(withReferences(object, [...refs.filter((ref) => ref.uid !== wanted.uid), wanted]))
  })

/**
 * Adds (or refreshes) a non-controller owner reference to `owner`. An
 * existing controller reference to the same owner stays a controller reference.
 *
 * @since 0.1.0
 * @category combinators
 */
export const setOwnerReference = <A extends HasMetadata>(owner: Owner, object: A): Result.Result<A, InvalidOwner> =>
  Result.map(make(owner), (wanted) => {
    const refs = object.metadata?.ownerReferences ?? []
    const existing = refs.find((ref) => ref.uid === wanted.uid)
    const ref = existing?.controller === true ? { ...wanted, controller: true, blockOwnerDeletion: true } : wanted
    return withReferences(object, [...refs.filter((r) => r.uid !== wanted.uid), ref])
  })

/**
 * Removes every owner reference to `owner` (matched by uid).
 *
 * @since 0.1.0
 * @category combinators
 */
export const removeOwnerReference = <A extends HasMetadata>(owner: HasMetadata, object: A): A =>
  withReferences(object, (object.metadata?.ownerReferences ?? []).filter((ref) => ref.uid !== owner.metadata?.uid))

/**
 * Whether `object` has an owner reference to `owner` (matched by uid).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isOwnedBy = (object: HasMetadata, owner: HasMetadata): boolean =>
  owner.metadata?.uid !== undefined &&
  (object.metadata?.ownerReferences ?? []).some((ref) => ref.uid === owner.metadata?.uid)

/**
 * Whether `owner` is the controller of `object`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isControlledBy = (object: HasMetadata, owner: HasMetadata): boolean =>
  owner.metadata?.uid !== undefined &&
  (object.metadata?.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === owner.metadata?.uid)

const describe = (object: HasMetadata) => {
  const ns = object.metadata?.namespace
  return ns === undefined ? object.metadata?.name ?? "<unnamed>" : `${ns}/${object.metadata?.name ?? "<unnamed>"}`
}
