import type { PrinterColumn, ResourceType, ScaleSubresource } from "../ResourceType.js"
import { isObject } from "./json.js"

const metaKeys: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["metadata.finalizers", []],
  ["metadata.ownerReferences", ["uid"]]
]

const podSpecKeys = (prefix: string): ReadonlyArray<readonly [string, ReadonlyArray<string>]> => {
  const containers = (field: string): ReadonlyArray<readonly [string, ReadonlyArray<string>]> => [
    [`${prefix}.${field}`, ["name"]],
    [`${prefix}.${field}[].ports`, ["containerPort", "protocol"]],
    [`${prefix}.${field}[].env`, ["name"]],
    [`${prefix}.${field}[].volumeMounts`, ["mountPath"]]
  ]
  return [
    ...containers("containers"),
    ...containers("initContainers"),
    [`${prefix}.volumes`, ["name"]],
    [`${prefix}.imagePullSecrets`, ["name"]],
    [`${prefix}.tolerations`, []]
  ]
}

interface BuiltinSpec {
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly kind: string
  readonly namespaced: boolean
  readonly shortNames?: ReadonlyArray<string>
  readonly hasStatus?: boolean
  readonly tracksGeneration?: boolean
  readonly listKeys?: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
  /** Discovery categories (`all` for the workload kinds, as upstream). */
  readonly categories?: ReadonlyArray<string>
  /** Whether the kind has a `/scale` subresource over `.spec.replicas` (apps/v1 workloads). */
  readonly scale?: boolean
}

const replicasScale = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
  labelSelectorPath: ".spec.selector"
}

const builtin = (spec: BuiltinSpec): ResourceType => ({
  group: spec.group,
  version: spec.version,
  plural: spec.plural,
  singular: spec.kind.toLowerCase(),
  kind: spec.kind,
  listKind: `${spec.kind}List`,
  namespaced: spec.namespaced,
  shortNames: spec.shortNames ?? [],
  categories: spec.categories ?? [],
  hasStatus: spec.hasStatus ?? false,
  tracksGeneration: spec.tracksGeneration ?? false,
  listKeys: new Map([...metaKeys, ["status.conditions", ["type"]], ...(spec.listKeys ?? [])]),
  printerColumns: [],
  ...(spec.scale === true ? { scale: replicasScale } : {})
})

/** @internal */
export const builtins: ReadonlyArray<ResourceType> = [
  builtin({
    group: "",
    version: "v1",
    plural: "namespaces",
    kind: "Namespace",
    namespaced: false,
    shortNames: ["ns"],
    hasStatus: true,
    listKeys: [["spec.finalizers", []]]
  }),
  builtin({ group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, shortNames: ["cm"] }),
  builtin({ group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true }),
  builtin({
    group: "",
    version: "v1",
    plural: "services",
    kind: "Service",
    namespaced: true,
    shortNames: ["svc"],
    categories: ["all"],
    hasStatus: true,
    listKeys: [["spec.ports", ["port", "protocol"]]]
  }),
  builtin({
    group: "",
    version: "v1",
    plural: "pods",
    kind: "Pod",
    namespaced: true,
    shortNames: ["po"],
    categories: ["all"],
    hasStatus: true,
    listKeys: podSpecKeys("spec")
  }),
  builtin({ group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, shortNames: ["ev"] }),
  builtin({
    group: "apps",
    version: "v1",
    plural: "deployments",
    kind: "Deployment",
    namespaced: true,
    shortNames: ["deploy"],
    categories: ["all"],
    hasStatus: true,
    tracksGeneration: true,
    scale: true,
    listKeys: podSpecKeys("spec.template.spec")
  }),
  builtin({
    group: "apps",
    version: "v1",
    plural: "replicasets",
    kind: "ReplicaSet",
    namespaced: true,
    shortNames: ["rs"],
    categories: ["all"],
    hasStatus: true,
    tracksGeneration: true,
    scale: true,
    listKeys: podSpecKeys("spec.template.spec")
  }),
  builtin({
    group: "apps",
    version: "v1",
    plural: "statefulsets",
    kind: "StatefulSet",
    namespaced: true,
    shortNames: ["sts"],
    categories: ["all"],
    hasStatus: true,
    tracksGeneration: true,
    scale: true,
    listKeys: podSpecKeys("spec.template.spec")
  }),
  builtin({
    group: "",
    version: "v1",
    plural: "serviceaccounts",
    kind: "ServiceAccount",
    namespaced: true,
    shortNames: ["sa"]
  }),
  builtin({ group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true }),
  // RBAC objects are stored and served (what `kubectl apply` of an operator's manifests needs); nothing enforces them
  ...(["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"] as const).map((kind) =>
    builtin({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      plural: `${kind.toLowerCase()}s`,
      kind,
      namespaced: !kind.startsWith("Cluster")
    })
  ),
  builtin({
    group: "events.k8s.io",
    version: "v1",
    plural: "events",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"]
  }),
  builtin({
    group: "apiextensions.k8s.io",
    version: "v1",
    plural: "customresourcedefinitions",
    kind: "CustomResourceDefinition",
    namespaced: false,
    shortNames: ["crd", "crds"],
    hasStatus: true,
    tracksGeneration: true,
    listKeys: [["spec.versions", ["name"]]]
  }),
  ...["SelfSubjectAccessReview", "SelfSubjectRulesReview"].map((kind): ResourceType => ({
    ...builtin({
      group: "authorization.k8s.io",
      version: "v1",
      plural: `${kind.toLowerCase()}s`,
      kind,
      namespaced: false
    }),
    createOnly: true
  }))
]

/**
 * The key under which objects of a resource are stored: versions of one group/resource share storage, and so do
 * core/v1 and events.k8s.io/v1 `events` (stored in the core/v1 form, see `events.ts`).
 */
/**
 * Whether an API group is one of Kubernetes' own (served by the test server natively, not from a CRD): what decides
 * strategic merge patch, built-in field validation and protobuf's 406 wording.
 *
 * @internal
 */
export const isBuiltinGroup = (group: string): boolean => builtinGroups.has(group)

const builtinGroups: ReadonlySet<string> = new Set([
  "",
  "apps",
  "apiextensions.k8s.io",
  "authorization.k8s.io",
  "autoscaling",
  "coordination.k8s.io",
  "events.k8s.io",
  "rbac.authorization.k8s.io"
])

export const storageKey = (rt: ResourceType): string =>
  rt.group === "events.k8s.io" && rt.plural === "events" ? "/events" : `${rt.group}/${rt.plural}`

type Obj = Record<string, any>

/** Collects list merge keys from a CRD's OpenAPI v3 schema (`x-kubernetes-list-type`). */
const schemaListKeys = (schema: unknown): Map<string, ReadonlyArray<string>> => {
  const out = new Map<string, ReadonlyArray<string>>()
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== "object") return
    const s = node as Obj
    if (s.type === "array") {
      if (s["x-kubernetes-list-type"] === "map" && Array.isArray(s["x-kubernetes-list-map-keys"])) {
        out.set(path, s["x-kubernetes-list-map-keys"] as Array<string>)
      } else if (s["x-kubernetes-list-type"] === "set") {
        out.set(path, [])
      }
      walk(s.items, `${path}[]`)
      return
    }
    if (s.properties !== null && typeof s.properties === "object") {
      for (const [key, child] of Object.entries(s.properties as Obj)) {
        walk(child, path === "" ? key : `${path}.${key}`)
      }
    }
  }
  walk(schema, "")
  return out
}

const isScale = (scale: unknown): scale is Obj =>
  scale !== null && typeof scale === "object" && typeof (scale as Obj).specReplicasPath === "string"

/** A CRD version's `subresources.scale` as the paths the `/scale` subresource uses. */
const crdScale = (scale: Obj): ScaleSubresource => ({
  specReplicasPath: scale.specReplicasPath,
  statusReplicasPath: typeof scale.statusReplicasPath === "string" ? scale.statusReplicasPath : ".status.replicas",
  ...(typeof scale.labelSelectorPath === "string" ? { labelSelectorPath: scale.labelSelectorPath } : {})
})

/** The resource types a CustomResourceDefinition serves (one per served version). */
export const fromCrd = (crd: Obj): ReadonlyArray<ResourceType> => {
  const spec = crd.spec as Obj
  const names = spec.names as Obj
  const versions = (spec.versions ?? []) as Array<Obj>
  return versions
    .filter((v) => v.served !== false)
    .map((v): ResourceType => {
      const listKeys = new Map<string, ReadonlyArray<string>>(metaKeys)
      for (const [k, keys] of schemaListKeys(v.schema?.openAPIV3Schema)) listKeys.set(k, keys)
      const columns = Array.isArray(v.additionalPrinterColumns)
        ? (v.additionalPrinterColumns as Array<PrinterColumn>)
        : []
      return {
        group: spec.group,
        version: v.name,
        plural: names.plural,
        singular: names.singular ?? String(names.kind).toLowerCase(),
        kind: names.kind,
        listKind: names.listKind ?? `${names.kind}List`,
        namespaced: spec.scope !== "Cluster",
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        hasStatus: v.subresources?.status !== undefined && v.subresources?.status !== null,
        tracksGeneration: true,
        listKeys,
        printerColumns: columns,
        ...(isScale(v.subresources?.scale) ? { scale: crdScale(v.subresources.scale) } : {}),
        ...(isObject(v.schema?.openAPIV3Schema) ? { schema: v.schema.openAPIV3Schema } : {}),
        ...(Array.isArray(v.selectableFields)
          ? { selectableFields: v.selectableFields.map((f: Obj) => String(f?.jsonPath ?? "").replace(/^\./, "")) }
          : {})
      }
    })
}

/** The mutable set of served resource types. */
export class Registry {
  private readonly types: Array<ResourceType> = [...builtins]

  all(): ReadonlyArray<ResourceType> {
    return this.types
  }

  byResource(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.plural === plural)
  }

  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.kind === kind)
  }

  /** Any served version of a group/resource (used to find the storage of a CRD). */
  versionsOf(group: string, plural: string): ReadonlyArray<ResourceType> {
    return this.types.filter((t) => t.group === group && t.plural === plural)
  }

  setCrd(group: string, plural: string, types: ReadonlyArray<ResourceType>): void {
    this.removeCrd(group, plural)
    for (const type of types) this.types.push(type)
  }

  removeCrd(group: string, plural: string): void {
    for (let i = this.types.length - 1; i >= 0; i--) {
      const t = this.types[i]!
      if (t.group === group && t.plural === plural) this.types.splice(i, 1)
    }
  }
}
