/**
 * Plain JSON Kubernetes objects as the test server stores and returns them.
 * The testkit does not depend on typed models: any object with `apiVersion`,
 * `kind` and `metadata` is accepted.
 *
 * @since 0.1.0
 */

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/**
 * `metav1.OwnerReference`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean
  readonly blockOwnerDeletion?: boolean
}

/**
 * `metav1.ManagedFieldsEntry`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ManagedFieldsEntry {
  readonly manager: string
  readonly operation: "Apply" | "Update"
  readonly apiVersion: string
  readonly time: string
  readonly fieldsType: "FieldsV1"
  readonly fieldsV1: { readonly [key: string]: unknown }
  readonly subresource?: string
}

/**
 * `metav1.ObjectMeta`, the fields the test server reads or writes.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectMeta {
  readonly name?: string
  readonly generateName?: string
  readonly namespace?: string
  readonly uid?: string
  readonly resourceVersion?: string
  readonly generation?: number
  readonly creationTimestamp?: string
  readonly deletionTimestamp?: string
  readonly deletionGracePeriodSeconds?: number
  readonly labels?: { readonly [key: string]: string }
  readonly annotations?: { readonly [key: string]: string }
  readonly finalizers?: ReadonlyArray<string>
  readonly ownerReferences?: ReadonlyArray<OwnerReference>
  readonly managedFields?: ReadonlyArray<ManagedFieldsEntry>
  readonly [key: string]: unknown
}

/**
 * A Kubernetes object as plain JSON.
 *
 * @since 0.1.0
 * @category models
 */
export interface KubeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: ObjectMeta
  readonly [key: string]: unknown
}

/**
 * A list answer (`ConfigMapList`, …): `metadata.resourceVersion` is the
 * resourceVersion the list was read at; `continue` is set when more pages remain.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectList {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: {
    readonly resourceVersion: string
    readonly continue?: string
    readonly remainingItemCount?: number
  }
  readonly items: ReadonlyArray<KubeObject>
}

/**
 * A watch event. `ERROR` carries a `metav1.Status` (for example 410 Expired);
 * `BOOKMARK` carries only `metadata.resourceVersion` (and, after initial
 * events, the `k8s.io/initial-events-end` annotation).
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"
  readonly object: KubeObject
}

/**
 * The `apiVersion` string of a group and version (`"v1"` for the core group).
 *
 * @since 0.1.0
 * @category utils
 */
export const apiVersionOf = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`)

/**
 * Splits an `apiVersion` into group and version (`"apps/v1"` → `["apps", "v1"]`, `"v1"` → `["", "v1"]`).
 *
 * @since 0.1.0
 * @category utils
 */
export const parseApiVersion = (apiVersion: string): readonly [group: string, version: string] => {
  const slash = apiVersion.indexOf("/")
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)]
}
