/**
 * What the test server knows about a kind it serves: its group, version,
 * plural resource name, scope and subresources. Built-in kinds are listed in
 * {@link builtins}; creating a CustomResourceDefinition adds one per served
 * version.
 *
 * @since 0.1.0
 */
import * as internal from "./internal/resourceType.js"

/**
 * A served group/version/resource.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceType {
  readonly group: string
  readonly version: string
  /** The plural, lower-case resource name used in URLs (`configmaps`). */
  readonly plural: string
  readonly singular: string
  readonly kind: string
  readonly listKind: string
  /** Whether objects live in a namespace (`"Namespaced"`) or not (`"Cluster"`). */
  readonly scope: Scope
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  /** Whether the kind has a `/status` subresource. */
  readonly hasStatus: boolean
  /** Whether `metadata.generation` is maintained (Deployments, CRDs and custom resources). */
  readonly tracksGeneration: boolean
  /**
   * List merge keys by JSON path (`spec.template.spec.containers` → `["name"]`), used by
   * server-side apply and strategic merge patch; `[]` marks a set of scalars.
   */
  readonly listKeys: ReadonlyMap<string, ReadonlyArray<string>>
  /** For custom resources: the CRD's columns to print (`kubectl get`). */
  readonly printerColumns: ReadonlyArray<PrinterColumn>
  /**
   * Create-only and never stored (authorization.k8s.io access reviews): discovery lists only `create`, a create
   * returns the answer, other verbs get 405.
   */
  readonly createOnly?: boolean | undefined
  /** Where the `/scale` subresource (autoscaling/v1 Scale) reads and writes replicas, when the kind has one. */
  readonly scale?: ScaleSubresource | undefined
  /**
   * For custom resources: the served version's `openAPIV3Schema` (a structural schema). Objects written are
   * pruned, defaulted and validated against it (422 Invalid), as kube-apiserver does.
   */
  readonly schema?: unknown
  /**
   * For custom resources: the served version's `selectableFields` (their JSON paths without the leading dot,
   * `spec.color`), usable in field selectors besides `metadata.name` and `metadata.namespace`.
   */
  readonly selectableFields?: ReadonlyArray<string> | undefined
}

/**
 * Whether a kind's objects live in a namespace: the values of a CustomResourceDefinition's `spec.scope`, the same
 * vocabulary as `@reconcile/kube`'s `Resource.Scope`.
 *
 * @since 0.1.0
 * @category models
 */
export type Scope = "Namespaced" | "Cluster"

/**
 * The paths behind a `/scale` subresource, as a CRD's `subresources.scale` declares them (JSON paths such as
 * `.spec.replicas`); Deployments, ReplicaSets and StatefulSets use `.spec.replicas`, `.status.replicas` and
 * `.spec.selector` (a label selector object, rendered as a string).
 *
 * @since 0.1.0
 * @category models
 */
export interface ScaleSubresource {
  readonly specReplicasPath: string
  readonly statusReplicasPath: string
  readonly labelSelectorPath?: string | undefined
}

/**
 * A CRD `additionalPrinterColumns` entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface PrinterColumn {
  readonly name: string
  readonly type: string
  readonly jsonPath: string
  readonly description?: string
  readonly priority?: number
}

/**
 * The built-in resources: every group, version and resource kube-apiserver 1.36 serves (core/v1, apps/v1,
 * batch/v1, networking.k8s.io/v1, policy/v1, autoscaling/v2 and v1, rbac.authorization.k8s.io/v1, …), in its
 * discovery order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const builtins: ReadonlyArray<ResourceType> = internal.builtins

/**
 * The `apiVersion` of a resource type (`"apps/v1"`, `"v1"`).
 *
 * @since 0.1.0
 * @category utils
 */
export const apiVersion = (resource: ResourceType): string =>
  resource.group === "" ? resource.version : `${resource.group}/${resource.version}`
