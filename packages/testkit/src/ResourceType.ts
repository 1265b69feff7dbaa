/**
 * What the test server knows about a kind it serves: its group, version,
 * plural resource name, scope and subresources. Built-in kinds are listed in
 * {@link builtins}; creating a CustomResourceDefinition adds one per served
 * version.
 *
 * @since 0.1.0
 */
import * as internal from "./internal/registry.js"

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
  readonly namespaced: boolean
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
 * The built-in kinds: Namespace, ConfigMap, Secret, Service, Pod, Event (v1),
 * Deployment, ReplicaSet, StatefulSet (apps/v1), Lease (coordination.k8s.io/v1), Event (events.k8s.io/v1),
 * CustomResourceDefinition (apiextensions.k8s.io/v1).
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
