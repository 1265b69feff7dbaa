/**
 * Metadata-only resources: watch, list and cache a kind as
 * `PartialObjectMetadata` — its `metadata` only, without `spec`, `status` or
 * `data` — like controller-runtime's `builder.OnlyMetadata` and
 * `metav1.PartialObjectMetadata`. The main memory saver for kinds a
 * controller only needs to notice (`owns`), or whose labels and owners are
 * all it reads.
 *
 * `MetadataOnly.make(Resource.Deployment)` is a {@link Resource.Resource} of
 * {@link PartialObjectMetadata}: use it wherever a resource goes —
 * `KubeController`'s `owns` and `watches`, `Cache.informer`, `Cache.get` and
 * `Cache.list`, `KubeClient.get`/`list`/`watch`/`patch`/`delete`. Requests for
 * it ask the API server for `PartialObjectMetadata` (header
 * `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, and
 * `…;as=PartialObjectMetadataList;…` for lists); the decoded objects carry
 * the kind's own `apiVersion` and `kind`, and only `metadata` is kept even
 * from a server that sends whole objects. A `Cache` holds them compact:
 * every metadata field but `managedFields` (which only server-side apply
 * reads), short repeated strings (namespace, creation time) shared, and so
 * are label sets, annotation sets, owner references and finalizer lists that
 * other cached objects repeat, which are frozen for that reason (objects from
 * a cache are read-only anyway: copy before changing one; objects from
 * `KubeClient` are plain and the caller's own). A cache keeps
 * metadata-only and full informers of one kind apart:
 * `Cache.get(Resource.Deployment, …)` is not answered from a metadata-only
 * informer. `create` and `replace` fail
 * with `KubeError.Encode`: there is nothing to write but metadata.
 *
 * @example
 * ```ts
 * import { KubeController, MetadataOnly, Resource } from "@reconcile/kube"
 * import { Effect } from "effect"
 *
 * const Controller = KubeController.make({
 *   name: "webapp",
 *   for: Resource.ConfigMap,
 *   // owned Deployments are cached as metadata: their changes still enqueue the owner
 *   owns: [MetadataOnly.make(Resource.Deployment)],
 *   reconcile: (_configMap) => Effect.void
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { ObjectMeta } from "@reconcile/core"
import * as internal from "./internal/metadataOnly.js"
import type * as Resource from "./Resource.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * An object's `metadata` alone, under its kind's `apiVersion` and `kind`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PartialObjectMetadata {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: ObjectMeta.ObjectMeta
}

/**
 * A kind read as {@link PartialObjectMetadata}; `of` is the full resource.
 *
 * @since 0.1.0
 * @category models
 */
export interface MetadataOnly<A extends ObjectMeta.HasMetadata> extends Resource.Resource<PartialObjectMetadata> {
  readonly [TypeId]: TypeId
  readonly of: Resource.Resource<A>
}

/**
 * The metadata-only view of a resource (idempotent: a metadata-only resource
 * is returned as is).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <A extends ObjectMeta.HasMetadata>(resource: Resource.Resource<A>) => MetadataOnly<A> = internal.make

/**
 * Whether a resource is metadata-only.
 *
 * @since 0.1.0
 * @category guards
 */
export const isMetadataOnly: (u: unknown) => u is MetadataOnly<any> = internal.isMetadataOnly

/**
 * The `Accept` header of get, watch, patch and delete requests for a
 * metadata-only resource (`PartialObjectMetadata`, JSON as a fallback).
 *
 * @since 0.1.0
 * @category constants
 */
export const acceptObject: string = internal.acceptObject

/**
 * The `Accept` header of list requests for a metadata-only resource
 * (`PartialObjectMetadataList`, JSON as a fallback).
 *
 * @since 0.1.0
 * @category constants
 */
export const acceptList: string = internal.acceptList
