import type { PrinterColumn, ResourceType, ScaleSubresource } from "../ResourceType.js"
import { builtinResources } from "./builtinResources.generated.js"
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

/** What discovery does not say about a built-in resource: the behaviour the test server gives it. */
interface Extras {
  /** Whether `metadata.generation` is maintained (kube-apiserver's strategies for these kinds set it). */
  readonly tracksGeneration?: boolean
  readonly listKeys?: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
  /** Where `/scale` reads and writes, when discovery lists `<resource>/scale`. */
  readonly scale?: ScaleSubresource
}

const replicasScale: ScaleSubresource = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
  labelSelectorPath: ".spec.selector"
}

const workload = (templateSpec: string): Extras => ({ tracksGeneration: true, listKeys: podSpecKeys(templateSpec) })

/** By `group/plural`; kinds not named here are stored as they are, without generation. */
const extras: Readonly<Record<string, Extras>> = {
  "/namespaces": { listKeys: [["spec.finalizers", []]] },
  "/services": { listKeys: [["spec.ports", ["port", "protocol"]]] },
  "/pods": { listKeys: podSpecKeys("spec") },
  "/podtemplates": workload("template.spec"),
  "/replicationcontrollers": {
    ...workload("spec.template.spec"),
    scale: { ...replicasScale, labelSelectorPath: undefined }
  },
  "apps/deployments": { ...workload("spec.template.spec"), scale: replicasScale },
  "apps/replicasets": { ...workload("spec.template.spec"), scale: replicasScale },
  "apps/statefulsets": { ...workload("spec.template.spec"), scale: replicasScale },
  "apps/daemonsets": workload("spec.template.spec"),
  "batch/jobs": workload("spec.template.spec"),
  "batch/cronjobs": workload("spec.jobTemplate.spec.template.spec"),
  "apiextensions.k8s.io/customresourcedefinitions": { tracksGeneration: true, listKeys: [["spec.versions", ["name"]]] },
  "networking.k8s.io/ingresses": { tracksGeneration: true },
  "networking.k8s.io/ingressclasses": { tracksGeneration: true },
  "networking.k8s.io/networkpolicies": { tracksGeneration: true },
  "policy/poddisruptionbudgets": { tracksGeneration: true },
  "scheduling.k8s.io/priorityclasses": { tracksGeneration: true },
  "discovery.k8s.io/endpointslices": { tracksGeneration: true },
  "flowcontrol.apiserver.k8s.io/flowschemas": { tracksGeneration: true },
  "flowcontrol.apiserver.k8s.io/prioritylevelconfigurations": { tracksGeneration: true },
  "resource.k8s.io/deviceclasses": { tracksGeneration: true },
  "resource.k8s.io/resourceslices": { tracksGeneration: true },
  ...Object.fromEntries(
    [
      "mutatingadmissionpolicies",
      "mutatingadmissionpolicybindings",
      "mutatingwebhookconfigurations",
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
      "validatingwebhookconfigurations"
    ].map((plural) => [`admissionregistration.k8s.io/${plural}`, { tracksGeneration: true }])
  )
}

/** A subresource as discovery lists it. */
export interface DiscoverySubresource {
  readonly name: string
  /** Set when the subresource answers another kind than its resource (Scale is autoscaling/v1). */
  readonly group?: string | undefined
  readonly version?: string | undefined
  readonly kind: string
  readonly verbs: ReadonlyArray<string>
}

/** The verbs and subresources discovery lists for a built-in resource (upstream's, from the generated table). */
export interface DiscoveryInfo {
  readonly verbs: ReadonlyArray<string>
  readonly subresources: ReadonlyArray<DiscoverySubresource>
  /** `storageVersionHash` (none for create-only and read-only resources). */
  readonly storageVersionHash: string | undefined
}

const discoveryInfo = new WeakMap<ResourceType, DiscoveryInfo>()

/** The discovery entry of a built-in resource type (`undefined` for custom resources). */
export const builtinDiscovery = (rt: ResourceType): DiscoveryInfo | undefined => discoveryInfo.get(rt)

const list = (csv: string): ReadonlyArray<string> => (csv === "" ? [] : csv.split(","))

/** `attach=PodAttachOptions:create,get`, `eviction=policy/v1/Eviction:create`, `status:get,patch,update`. */
const parseSubresource = (kind: string) => (text: string): DiscoverySubresource => {
  const colon = text.lastIndexOf(":")
  const [name, responseKind] = text.slice(0, colon).split("=") as [string, string | undefined]
  const parts = responseKind?.split("/") ?? []
  return {
    name,
    ...(parts.length === 3 ? { group: parts[0], version: parts[1] } : {}),
    kind: parts.length === 0 ? kind : parts[parts.length - 1]!,
    verbs: list(text.slice(colon + 1))
  }
}

/** @internal */
export const builtins: ReadonlyArray<ResourceType> = builtinResources.map((row) => {
  const [group, version, plural, singular, kind, scope, verbs, shortNames, categories, subresources, hash] = row
  const extra = extras[`${group}/${plural}`] ?? {}
  const subs = subresources === "" ? [] : subresources.split(" ").map(parseSubresource(kind))
  const rt: ResourceType = {
    group,
    version,
    plural,
    singular,
    kind,
    listKind: `${kind}List`,
    scope,
    shortNames: list(shortNames),
    categories: list(categories),
    hasStatus: subs.some((s) => s.name === "status"),
    tracksGeneration: extra.tracksGeneration ?? false,
    listKeys: new Map([...metaKeys, ["status.conditions", ["type"]], ...(extra.listKeys ?? [])]),
    printerColumns: [],
    ...(verbs === "create" ? { createOnly: true } : {}),
    ...(extra.scale !== undefined && subs.some((s) => s.name === "scale") ? { scale: extra.scale } : {})
  }
  discoveryInfo.set(rt, { verbs: list(verbs), subresources: subs, storageVersionHash: hash === "" ? undefined : hash })
  return rt
})

/**
 * Whether an API group is one of Kubernetes' own (served by the test server natively, not from a CRD): what decides
 * strategic merge patch, built-in field validation and protobuf's 406 wording.
 *
 * @internal
 */
export const isBuiltinGroup = (group: string): boolean => builtinGroups.has(group)

const builtinGroups: ReadonlySet<string> = new Set(builtinResources.map((row) => row[0]))

/**
 * The key under which objects of a resource are stored: versions of one group/resource share storage, and so do
 * core/v1 and events.k8s.io/v1 `events` (stored in the core/v1 form, see `events.ts`).
 */
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

const storageVersions = new WeakMap<ResourceType, string>()

/** The version a custom resource type's objects are stored in (its CRD's `storage: true` version). */
export const storageVersionOf = (rt: ResourceType): string | undefined => storageVersions.get(rt)

const conversionWebhooks = new WeakMap<ResourceType, Obj>()

/**
 * A custom resource type's conversion webhook (its CRD's `spec.conversion.webhook`) when the strategy is `Webhook`:
 * the same object for every version of one CRD's revision (a changed CRD gives its types a new one).
 */
export const conversionWebhookOf = (rt: ResourceType): Obj | undefined => conversionWebhooks.get(rt)

/** The resource types a CustomResourceDefinition serves (one per served version). */
export const fromCrd = (crd: Obj): ReadonlyArray<ResourceType> => {
  const spec = crd.spec as Obj
  const names = spec.names as Obj
  const versions = (spec.versions ?? []) as Array<Obj>
  const storage = versions.find((v) => v.storage === true)?.name as string | undefined
  const types = versions
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
        scope: spec.scope === "Cluster" ? "Cluster" : "Namespaced",
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
  if (storage !== undefined) { for (const t of types) storageVersions.set(t, storage) }
  const conversion = spec.conversion
  if (isObject(conversion) && conversion.strategy === "Webhook" && isObject(conversion.webhook)) {
    const webhook = { ...conversion.webhook }
    for (const t of types) conversionWebhooks.set(t, webhook)
  }
  return types
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
