/**
 * Resource descriptors: what the client needs to talk about a kind — its
 * group, version, plural and scope (so request paths are built without
 * discovery round-trips), and how to decode (and encode) its objects.
 *
 * Built-in kinds are typed with `@kubernetes/client-node`'s models in their
 * JSON form ({@link Wire}: timestamps are RFC 3339 strings, as on the wire).
 * Custom resources are described with effect `Schema`s for `spec` and
 * `status`: objects are decoded on every read and watch event (a failure is
 * a typed `KubeError.Decode`), and {@link crdManifest} generates the
 * `CustomResourceDefinition` with its `openAPIV3Schema` from the same
 * Schemas.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Resource } from "@reconcile/kube"
 *
 * const WebApp = Resource.custom({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "WebApp",
 *   plural: "webapps",
 *   scope: "Namespaced",
 *   spec: Schema.Struct({ image: Schema.String, replicas: Schema.Int }),
 *   status: Schema.Struct({ readyReplicas: Schema.optional(Schema.Int) })
 * })
 * type WebApp = Resource.Type<typeof WebApp>
 *
 * const manifest = Resource.crdManifest(WebApp) // kubectl apply -f, or KubeClient.create
 * ```
 *
 * @since 0.1.0
 */
import type * as k8s from "@kubernetes/client-node"
import type { ObjectMeta } from "@reconcile/core"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as EffectResult from "effect/Result"
import type * as Schema from "effect/Schema"
import * as internal from "./internal/resource.js"
import type * as KubeError from "./KubeError.js"

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
 * The JSON form of a client-node model: its `Date` fields are strings (RFC
 * 3339), as the API server sends them. Objects are used as parsed, unknown
 * fields included, so a read-modify-write never drops fields the model does
 * not know.
 *
 * @since 0.1.0
 * @category models
 */
export type Wire<T> = T extends Date ? string
  : T extends ReadonlyArray<infer U> ? Array<Wire<U>>
  : T extends object ? { [K in keyof T]: Wire<T[K]> }
  : T

/**
 * Where a request goes: the namespace (ignored for cluster-scoped kinds), the
 * object's name and a subresource (`status`).
 *
 * @since 0.1.0
 * @category models
 */
export interface PathOptions {
  readonly namespace?: string | undefined
  readonly name?: string | undefined
  readonly subresource?: string | undefined
}

/**
 * Whether a kind's objects live in a namespace: the values of a
 * CustomResourceDefinition's `spec.scope` (and of kube-rs's `Scope`).
 *
 * @since 0.1.0
 * @category models
 */
export type Scope = "Namespaced" | "Cluster"

/**
 * A kind the client can read, write and watch.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<A extends ObjectMeta.HasMetadata> {
  readonly [TypeId]: TypeId
  /** The API group; `""` for the core group. */
  readonly group: string
  readonly version: string
  readonly kind: string
  /** The lowercase plural of the URL, e.g. `configmaps`. */
  readonly plural: string
  /** `"Namespaced"` or `"Cluster"` (cluster-scoped). */
  readonly scope: Scope
  /** `v1`, `apps/v1`, `example.com/v1`. */
  readonly apiVersion: string
  /** Whether objects hold secrets: undecodable text of them is never kept in errors. */
  readonly sensitive: boolean
  /**
   * The request path: `/api/v1/namespaces/ns/configmaps/name/status`; without
   * a namespace (or for cluster-scoped kinds) the cluster-wide collection.
   */
  readonly path: (options?: PathOptions) => string
  /** Decodes an object from the API (fills in `apiVersion`/`kind` when a list item lacks them). */
  readonly decode: (u: unknown) => Effect.Effect<A, KubeError.Decode>
  /** Encodes an object for the API. */
  readonly encode: (a: A) => Effect.Effect<unknown, KubeError.Encode>
}

/**
 * The object type of a resource.
 *
 * @since 0.1.0
 * @category models
 */
export type Type<R> = R extends Resource<infer A> ? A : never

/**
 * A descriptor for a kind without a built-in one (ReplicaSet, StatefulSet, a
 * CRD described without Schemas, …). Without `decode`, any JSON object is
 * accepted as `A`.
 *
 * @example
 * ```ts
 * import type * as k8s from "@kubernetes/client-node"
 * import { Resource } from "@reconcile/kube"
 *
 * const StatefulSet = Resource.make<Resource.Wire<k8s.V1StatefulSet>>({
 *   group: "apps", version: "v1", kind: "StatefulSet", plural: "statefulsets", scope: "Namespaced"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <A extends ObjectMeta.HasMetadata>(options: {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly scope: Scope
  readonly sensitive?: boolean | undefined
  readonly decode?: ((u: unknown) => Effect.Effect<A, KubeError.Decode>) | undefined
  readonly encode?: ((a: A) => Effect.Effect<unknown, KubeError.Encode>) | undefined
}) => Resource<A> = internal.make

/**
 * `v1` ConfigMap.
 *
 * @since 0.1.0
 * @category models
 */
export type ConfigMap = Wire<k8s.V1ConfigMap>

/**
 * `v1` ConfigMap.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const ConfigMap: Resource<ConfigMap> = internal.make({
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  scope: "Namespaced"
})

/**
 * `v1` Secret.
 *
 * @since 0.1.0
 * @category models
 */
export type Secret = Wire<k8s.V1Secret>

/**
 * `v1` Secret (sensitive: its text never appears in errors).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Secret: Resource<Secret> = internal.make({
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  scope: "Namespaced",
  sensitive: true
})

/**
 * `v1` Service.
 *
 * @since 0.1.0
 * @category models
 */
export type Service = Wire<k8s.V1Service>

/**
 * `v1` Service.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Service: Resource<Service> = internal.make({
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  scope: "Namespaced"
})

/**
 * `apps/v1` Deployment.
 *
 * @since 0.1.0
 * @category models
 */
export type Deployment = Wire<k8s.V1Deployment>

/**
 * `apps/v1` Deployment.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Deployment: Resource<Deployment> = internal.make({
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  scope: "Namespaced"
})

/**
 * `v1` Pod.
 *
 * @since 0.1.0
 * @category models
 */
export type Pod = Wire<k8s.V1Pod>

/**
 * `v1` Pod.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Pod: Resource<Pod> = internal.make({
  group: "",
  version: "v1",
  kind: "Pod",
  plural: "pods",
  scope: "Namespaced"
})

/**
 * `v1` Namespace.
 *
 * @since 0.1.0
 * @category models
 */
export type Namespace = Wire<k8s.V1Namespace>

/**
 * `v1` Namespace (cluster-scoped).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Namespace: Resource<Namespace> = internal.make({
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  scope: "Cluster"
})

/**
 * `coordination.k8s.io/v1` Lease.
 *
 * @since 0.1.0
 * @category models
 */
export type Lease = Wire<k8s.V1Lease>

/**
 * `coordination.k8s.io/v1` Lease (leader election).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Lease: Resource<Lease> = internal.make({
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  scope: "Namespaced"
})

/**
 * `v1` Event.
 *
 * @since 0.1.0
 * @category models
 */
export type Event = Wire<k8s.CoreV1Event>

/**
 * `v1` Event (the core group's; what `kubectl describe` shows).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const Event: Resource<Event> = internal.make({
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  scope: "Namespaced"
})

/**
 * `events.k8s.io/v1` Event.
 *
 * @since 0.1.0
 * @category models
 */
export type EventsV1Event = Wire<k8s.EventsV1Event>

/**
 * `events.k8s.io/v1` Event (what client-go's new event recorder writes).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const EventsV1Event: Resource<EventsV1Event> = internal.make({
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  scope: "Namespaced"
})

/**
 * `apiextensions.k8s.io/v1` CustomResourceDefinition.
 *
 * @since 0.1.0
 * @category models
 */
export type CustomResourceDefinition = Wire<k8s.V1CustomResourceDefinition>

/**
 * `apiextensions.k8s.io/v1` CustomResourceDefinition (cluster-scoped).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const CustomResourceDefinition: Resource<CustomResourceDefinition> = internal.make({
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  scope: "Cluster"
})

/**
 * An object of a custom resource: `spec` and `status` decoded by their
 * Schemas, `metadata` as on the wire.
 *
 * @since 0.1.0
 * @category models
 */
export interface CustomObject<Spec, Status = never> {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: Wire<k8s.V1ObjectMeta>
  readonly spec: Spec
  readonly status?: Status | undefined
}

/**
 * A custom resource described by Schemas.
 *
 * @since 0.1.0
 * @category models
 */
export interface CustomResource<Spec, SpecEncoded, Status = never, StatusEncoded = never>
  extends Resource<CustomObject<Spec, Status>>
{
  readonly singular: string
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly spec: Schema.Codec<Spec, SpecEncoded>
  readonly status: Schema.Codec<Status, StatusEncoded> | undefined
  /** The CRD version's `additionalPrinterColumns` (an `Age` column is added when none shows the creation time). */
  readonly printerColumns: ReadonlyArray<PrinterColumn>
  /** The CRD version's `scale` subresource, if any. */
  readonly scale: Scale | undefined
  /** Whether this version is the storage version when several versions of the kind make one CRD. */
  readonly storage: boolean | undefined
}

/**
 * A column of `kubectl get` for a custom resource (a CRD version's `additionalPrinterColumns` entry).
 *
 * @since 0.1.0
 * @category models
 */
export interface PrinterColumn {
  readonly name: string
  readonly type: "string" | "integer" | "number" | "boolean" | "date"
  /** A JSONPath into the object, e.g. `.spec.replicas` or `.status.conditions[?(@.type=="Ready")].status`. */
  readonly jsonPath: string
  readonly description?: string | undefined
  /** An OpenAPI format for the type (`int32`, `date-time`, `byte`, …). */
  readonly format?: string | undefined
  /** 0 (default): shown by `kubectl get`; more: only with `-o wide`. */
  readonly priority?: number | undefined
}

/**
 * The `scale` subresource of a custom resource (`kubectl scale`, HorizontalPodAutoscaler): where the replicas are.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scale {
  /** e.g. `.spec.replicas`. */
  readonly specReplicasPath: string
  /** e.g. `.status.replicas`. */
  readonly statusReplicasPath: string
  /** e.g. `.status.selector` (a label selector in its string form). */
  readonly labelSelectorPath?: string | undefined
}

/**
 * The `Age` printer column (`.metadata.creationTimestamp`), which Kubernetes shows by itself only for a CRD
 * without columns.
 *
 * @since 0.1.0
 * @category constants
 */
export const AgeColumn: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp"
}

/**
 * Any custom resource descriptor, with a status Schema or without one (a descriptor without one has the status
 * type `never`, which `CustomResource<any, any, any, any>` does not accept).
 *
 * @since 0.1.0
 * @category models
 */
export type AnyCustomResource = CustomResource<any, any, any, any> | CustomResource<any, any, never, never>

/**
 * Options of {@link custom}.
 *
 * @since 0.1.0
 * @category models
 */
export interface CustomOptions<Spec, SpecEncoded, Status, StatusEncoded> {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  /** Default: the kind in lowercase. */
  readonly singular?: string | undefined
  readonly shortNames?: ReadonlyArray<string> | undefined
  readonly categories?: ReadonlyArray<string> | undefined
  readonly scope: Scope
  readonly spec: Schema.Codec<Spec, SpecEncoded>
  /** With a status Schema the CRD declares the `status` subresource. */
  readonly status?: Schema.Codec<Status, StatusEncoded> | undefined
  /**
   * Columns of `kubectl get` (`additionalPrinterColumns`). With explicit columns Kubernetes no longer adds `AGE`
   * by itself: {@link AgeColumn} is appended unless a column already shows `.metadata.creationTimestamp`.
   */
  readonly printerColumns?: ReadonlyArray<PrinterColumn> | undefined
  /** Declares the `scale` subresource. */
  readonly scale?: Scale | undefined
  /**
   * When several versions of one kind make one CRD (`Manifests.generate`, {@link crdManifests}): `true` on
   * exactly one of them, the version objects are stored in. Alone, a version is always the storage version.
   */
  readonly storage?: boolean | undefined
}

/**
 * A custom resource whose `spec` (and `status`) are effect Schemas. Reads
 * and watch events decode them (a failure is a `KubeError.Decode` naming the
 * object and the issue); writes encode them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const custom: <Spec, SpecEncoded, Status = never, StatusEncoded = never>(
  options: CustomOptions<Spec, SpecEncoded, Status, StatusEncoded>
) => CustomResource<Spec, SpecEncoded, Status, StatusEncoded> = internal.custom

/**
 * Whether a resource was made by {@link custom}.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isCustom = <A extends ObjectMeta.HasMetadata>(
  resource: Resource<A>
): resource is Resource<A> & CustomResource<unknown, unknown, unknown, unknown> => internal.isCustom(resource)

/**
 * The `apiextensions.k8s.io/v1` CustomResourceDefinition of a custom
 * resource: names, scope, one served and stored version whose
 * `openAPIV3Schema` is derived from the Schemas (their encoded side, through
 * `SchemaRepresentation`'s JSON Schema, converted to the structural subset
 * Kubernetes accepts), and the `status` subresource when a status Schema is
 * given.
 *
 * The schema carries the Schemas' constraints, so the API server rejects
 * (422) what the decoder would: integer vs number, `minimum`/`maximum`
 * (exclusive too), `multipleOf`, `minLength`/`maxLength`, `pattern` (from
 * `isPattern` without flags, `isStartingWith`, `isUUID`, …), `enum` (literal
 * unions, `Schema.Enum`), `minItems`/`maxItems`, `minProperties`/
 * `maxProperties`, `required`, `nullable`, int-or-string, `isUnique` over
 * scalars as `x-kubernetes-list-type: set`, and the encoded defaults of
 * `withDecodingDefault`/`withDecodingDefaultKey` properties as `default`.
 *
 * Where a Schema says more than a structural schema can (custom filters,
 * patterns with flags, unions of different shapes, tuples, recursion), the
 * manifest checks less or accepts any value there and the client-side decode
 * still checks it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const crdManifest: <Spec, SpecEncoded, Status, StatusEncoded>(
  resource: CustomResource<Spec, SpecEncoded, Status, StatusEncoded>
) => CustomResourceDefinition = internal.crdManifest

/**
 * The CustomResourceDefinitions of custom resources, one per kind (group and plural): several
 * {@link custom} descriptors of one kind with different versions make one CRD serving them all, stored in the one
 * marked `storage: true`. Fails with a `CrdConflict` when descriptors of one kind disagree on scope or names,
 * repeat a version, or do not mark exactly one storage version.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Resource } from "@reconcile/kube"
 *
 * const common = { group: "example.com", kind: "Greeting", plural: "greetings", scope: "Namespaced" } as const
 * const V1 = Resource.custom({ ...common, version: "v1", spec: Schema.Struct({ text: Schema.String }) })
 * const V2 = Resource.custom({ ...common, version: "v2", storage: true, spec: Schema.Struct({ text: Schema.String }) })
 *
 * const crds = Resource.crdManifests([V1, V2]) // Result: one CRD serving v1 and v2, storing v2
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const crdManifests: (
  resources: ReadonlyArray<AnyCustomResource>
) => EffectResult.Result<Array<CustomResourceDefinition>, CrdConflict> = (resources) =>
  EffectResult.mapError(internal.crdManifests(resources), (conflict) => new CrdConflict(conflict))

/**
 * Custom resource descriptors that cannot make one CustomResourceDefinition (see {@link crdManifests}).
 *
 * @since 0.1.0
 * @category errors
 */
export class CrdConflict extends Data.TaggedError("CrdConflict")<{
  /** `<plural>.<group>`. */
  readonly crd: string
  readonly message: string
}> {}
