/**
 * Object schemas of the served kinds, named as kube-apiserver names them (`io.k8s.api.core.v1.Pod`,
 * `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`, `com.example.v1.WebApp` for a CRD): built-in kinds from the
 * client-node models ({@link Models}), custom resources from their CRD's `openAPIV3Schema`.
 *
 * Schemas here are plain JSON Schema objects whose references are `{ $ref: "<definition name>" }`; the v2 and v3
 * documents rewrite them to `#/definitions/…` and `#/components/schemas/…`.
 */
import type { ResourceType } from "../../ResourceType.js"
import type { Model, Models } from "../builtinModels.js"

/** A JSON Schema object. */
export type Schema = Record<string, any>

const META = "io.k8s.apimachinery.pkg.apis.meta.v1"
/** The owner of meta/v1 models in {@link BuiltinSchemas}' package assignment. */
const META_GROUP = "meta.k8s.io"
const TIME = `${META}.Time`
const MICRO_TIME = `${META}.MicroTime`
const FIELDS_V1 = `${META}.FieldsV1`
const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
const RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
/** The body of PATCH requests. */
export const PATCH = `${META}.Patch`

/** The scalar definitions the models refer to by type or format (Date, IntOrString, …), as upstream defines them. */
const scalars: Record<string, Schema> = {
  [TIME]: {
    description: "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.",
    type: "string",
    format: "date-time"
  },
  [MICRO_TIME]: {
    description: "MicroTime is version of Time with microsecond level precision.",
    type: "string",
    format: "date-time"
  },
  [FIELDS_V1]: {
    description: "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.",
    type: "object"
  },
  [INT_OR_STRING]: {
    description: "IntOrString is a type that can hold an int32 or a string.",
    type: "string",
    format: "int-or-string"
  },
  [QUANTITY]: { description: "Quantity is a fixed-point representation of a number.", type: "string" },
  [RAW_EXTENSION]: { description: "RawExtension is used to hold extensions in external versions.", type: "object" },
  [PATCH]: {
    description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
    type: "object"
  }
}

/**
 * In v3, IntOrString and Quantity are declared by `oneOf` (no `type`), as kube-openapi's `OpenAPIV3OneOfTypes` makes
 * them; kubectl explain then names them (`<IntOrString>`, `<map[string]Quantity>`).
 */
export const v3Scalars: Record<string, Schema> = {
  [INT_OR_STRING]: {
    description: scalars[INT_OR_STRING]!.description,
    format: "int-or-string",
    oneOf: [{ type: "integer" }, { type: "string" }]
  },
  [QUANTITY]: { description: scalars[QUANTITY]!.description, oneOf: [{ type: "string" }, { type: "number" }] }
}

/** apimachinery meta/v1 models (client-node names them `V1<Name>` like any core model). */
const metaNames = new Set([
  "ObjectMeta",
  "ListMeta",
  "LabelSelector",
  "LabelSelectorRequirement",
  "ManagedFieldsEntry",
  "OwnerReference",
  "Condition",
  "Status",
  "StatusDetails",
  "StatusCause",
  "DeleteOptions",
  "Preconditions",
  "WatchEvent",
  "APIResource",
  "APIResourceList",
  "APIGroup",
  "APIGroupList",
  "APIVersions",
  "GroupVersionForDiscovery",
  "ServerAddressByClientCIDR",
  "FieldSelectorRequirement"
])

/** Models several API groups use whose own group is another one. */
const ownerOverrides: Record<string, string> = {
  V1Scale: "autoscaling",
  V1Eviction: "policy.k8s.io",
  // core/v1 types that only StorageClass uses
  V1TopologySelectorTerm: "",
  V1TopologySelectorLabelRequirement: ""
}

/**
 * Properties typed `string` (or maps of strings) by the client-node models that upstream types as `Quantity`
 * (the generator renders Quantity as a plain string).
 */
const quantityProperties = new Set([
  "V1ResourceRequirements.limits",
  "V1ResourceRequirements.requests",
  "V1VolumeResourceRequirements.limits",
  "V1VolumeResourceRequirements.requests",
  "V1ContainerStatus.allocatedResources",
  "V1PodSpec.overhead",
  "V1PodStatus.allocatedResources",
  "V1EmptyDirVolumeSource.sizeLimit",
  "V1ResourceFieldSelector.divisor",
  "V1PersistentVolumeClaimStatus.capacity",
  "V1PersistentVolumeClaimStatus.allocatedResources"
])

const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)

/** The client-node class-name prefix of an API group (`""` → `Core`, `events.k8s.io` → `Events`). */
const groupPrefix = (group: string): string =>
  group === "" ? "Core" : group === "rbac.authorization.k8s.io" ? "RbacAuthorization" : capitalize(group.split(".")[0]!)

/** The definition-name package of an API group (`io.k8s.api.apps`, …). */
const groupPackage = (group: string): string => {
  const first = group === "" ? "core" : group.split(".")[0]!
  if (first === "apiextensions") return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions"
  if (first === "apiregistration") return "io.k8s.kube-aggregator.pkg.apis.apiregistration"
  return `io.k8s.api.${first}`
}

const classPattern = /^([A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$/

/** The reversed-domain prefix of a CRD's definitions (`example.com` → `com.example`). */
export const crdDefinitionName = (group: string, version: string, kind: string): string =>
  `${group.split(".").reverse().join(".")}.${version}.${kind}`

/** Definitions of built-in kinds, derived from the client-node models. */
export class BuiltinSchemas {
  private readonly owners = new Map<string, string>()
  private readonly closed = new Set<string>()
  private readonly defs = new Map<string, Schema>()
  private readonly names = new Map<string, string>()
  /** The definitions each built definition refers to, directly or not (complete once it is built). */
  private readonly refs = new Map<string, ReadonlyArray<string>>()

  constructor(private readonly models: Models) {}

  /**
   * Assigns the nested models reachable from an API group's models to that group (first claim wins; meta/v1 models
   * and what they use are claimed first, models with an owner override take their own group with what they use).
   */
  private claim(group: string, version: string): void {
    // the API classes name flowcontrol.apiserver.k8s.io in full (its models are `Flowcontrol…`)
    const prefix = group === "flowcontrol.apiserver.k8s.io" ? "FlowcontrolApiserver" : groupPrefix(group)
    const apiClass = `${prefix}${capitalize(version)}Api`
    if (this.closed.has(apiClass)) return
    if (this.closed.size === 0) {
      this.closed.add("meta")
      this.walk([...metaNames].map((n) => [`V1${n}`, META_GROUP]))
    }
    this.closed.add(apiClass)
    this.walk(this.models.apiModels(apiClass).map((n) => [n, ownerOverrides[n] ?? group]))
  }

  private walk(queue: Array<readonly [string, string]>): void {
    while (queue.length > 0) {
      const [name, group] = queue.pop()!
      if (this.owners.has(name) || this.models.get(name) === undefined) continue
      this.owners.set(name, group)
      for (const a of this.models.get(name)!.attributes) {
        for (const ref of a.type.match(/[A-Z][A-Za-z0-9]+/g) ?? []) {
          if (!this.owners.has(ref)) queue.push([ref, ownerOverrides[ref] ?? group])
        }
      }
    }
  }

  /** The upstream definition name of a client-node model. */
  definitionName(className: string): string {
    const cached = this.names.get(className)
    if (cached !== undefined) return cached
    const m = classPattern.exec(className)
    let name: string
    if (className === "VersionInfo") {
      name = "io.k8s.apimachinery.pkg.version.Info"
    } else if (m === null) {
      name = className
    } else {
      const [, prefix, version, short] = m
      const v = version!.charAt(0).toLowerCase() + version!.slice(1)
      if (prefix !== undefined) {
        name = `${groupPackage(prefix === "Core" ? "" : prefix.toLowerCase())}.${v}.${short}`
      } else {
        this.claim("", "v1")
        const group = this.owners.get(className) ?? ""
        name = group === META_GROUP ? `${META}.${short}` : `${groupPackage(group)}.${v}.${short}`
      }
    }
    this.names.set(className, name)
    return name
  }

  /** The client-node model of a served kind (`CoreV1Event` or `V1Pod`), if any. */
  modelOf(group: string, version: string, kind: string): Model | undefined {
    this.claim("", "v1")
    this.claim(group, version)
    const v = capitalize(version)
    return this.models.get(`${groupPrefix(group)}${v}${kind}`) ?? this.models.get(`${v}${kind}`)
  }

  /** The schema of a property type (`Array<V1Container>`, `{ [key: string]: string; }`, `Date`, …). */
  private typeSchema(type: string, format: string, quantity: boolean, out: Map<string, Schema>): Schema {
    const array = /^Array<(.+)>$/.exec(type)
    if (array !== null) return { type: "array", items: this.typeSchema(array[1]!, format, quantity, out) }
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(type)
    if (map !== null) {
      return { type: "object", additionalProperties: this.typeSchema(map[1]!, format, quantity, out) }
    }
    const ref = (name: string): Schema => {
      if (scalars[name] !== undefined) out.set(name, scalars[name])
      return { $ref: name }
    }
    switch (type) {
      case "string":
        if (quantity) return ref(QUANTITY)
        return format === "" ? { type: "string" } : { type: "string", format }
      case "number":
        return format === "int32" || format === "int64"
          ? { type: "integer", format }
          : format === ""
          ? { type: "number" }
          : { type: "number", format }
      case "boolean":
        return { type: "boolean" }
      case "Date":
        return ref(format === "date-time-micro" ? MICRO_TIME : TIME)
      case "IntOrString":
        return ref(INT_OR_STRING)
      case "V1MicroTime":
        return ref(MICRO_TIME)
      case "any":
        return {}
    }
    if (this.models.get(type) === undefined) return {}
    const name = this.definitionName(type)
    this.collect(type, out)
    return { $ref: name }
  }

  /** A model's definition and what it refers to, by class name; `undefined` when client-node has no such model. */
  modelDefinition(className: string, out: Map<string, Schema>): string | undefined {
    return this.models.get(className) === undefined ? undefined : this.collect(className, out)
  }

  /** Adds a model's definition and every definition it refers to. */
  collect(className: string, out: Map<string, Schema>): string {
    const name = this.definitionName(className)
    if (out.has(name)) return name
    let def = this.defs.get(name)
    if (def !== undefined) {
      out.set(name, def)
      for (const dep of this.refs.get(name) ?? []) {
        if (!out.has(dep)) this.collectByName(dep, out)
      }
      return name
    }
    const model = this.models.get(className)!
    const own = new Map<string, Schema>()
    def = { type: "object" }
    own.set(name, def)
    this.defs.set(name, def)
    out.set(name, def)
    if (model.description !== undefined) def.description = model.description
    const properties: Record<string, Schema> = {}
    const required: Array<string> = []
    for (const a of model.attributes) {
      let schema = this.typeSchema(
        a.type,
        a.format,
        quantityProperties.has(`${className}.${a.name}`),
        own
      )
      if (a.type === "any" && className === "V1ManagedFieldsEntry" && a.name === "fieldsV1") {
        own.set(FIELDS_V1, scalars[FIELDS_V1]!)
        schema = { $ref: FIELDS_V1 }
      }
      if (a.description !== undefined) schema = { ...schema, description: a.description }
      properties[a.name] = schema
      if (a.required) required.push(a.name)
    }
    def.properties = properties
    if (required.length > 0) def.required = required
    own.delete(name)
    for (const [k, v] of own) out.set(k, v)
    this.refs.set(name, [...own.keys()])
    return name
  }

  private collectByName(name: string, out: Map<string, Schema>): void {
    if (scalars[name] !== undefined) {
      out.set(name, scalars[name])
      return
    }
    for (const [cls, n] of this.names) {
      if (n === name) {
        this.collect(cls, out)
        return
      }
    }
  }

  /** The definition of a served built-in kind (and its list), with everything they refer to; `undefined` if unknown. */
  kind(rt: ResourceType, out: Map<string, Schema>): string | undefined {
    const model = this.modelOf(rt.group, rt.version, rt.kind)
    if (model === undefined) return undefined
    const name = this.collect(model.className, out)
    const def = out.get(name)!
    def["x-kubernetes-group-version-kind"] = [{ group: rt.group, kind: rt.kind, version: rt.version }]
    describeMetadata(def, objectMetaRef.description)
    annotateListKeys(def, rt.listKeys, out)
    const list = this.modelOf(rt.group, rt.version, rt.listKind)
    if (list !== undefined) {
      const listDef = out.get(this.collect(list.className, out))!
      listDef["x-kubernetes-group-version-kind"] = [{ group: rt.group, kind: rt.listKind, version: rt.version }]
      describeMetadata(listDef, listMetaDescription)
    }
    return name
  }

  /** autoscaling/v1 Scale, the body of `/scale` subresources. */
  scale(out: Map<string, Schema>): void {
    if (this.models.get("V1Scale") === undefined) return
    const def = out.get(this.collect("V1Scale", out))!
    def["x-kubernetes-group-version-kind"] = [{ group: "autoscaling", kind: "Scale", version: "v1" }]
    describeMetadata(def, objectMetaRef.description)
  }

  /** meta/v1 definitions every group version document carries (Status, DeleteOptions, WatchEvent…). */
  common(out: Map<string, Schema>): void {
    for (const cls of ["V1Status", "V1DeleteOptions", "V1WatchEvent", "V1ObjectMeta", "V1ListMeta"]) {
      if (this.models.get(cls) !== undefined) this.collect(cls, out)
    }
    out.set(PATCH, scalars[PATCH]!)
  }
}

/**
 * The generated models lose the descriptions of properties whose type is another model; `metadata`'s is the same
 * text on every kind upstream, so it is put back.
 */
const describeMetadata = (def: Schema, description: string): void => {
  const metadata = def.properties?.metadata as Schema | undefined
  if (metadata !== undefined && metadata.description === undefined) {
    def.properties.metadata = { ...metadata, description }
  }
}

const deref = (schema: Schema | undefined, defs: ReadonlyMap<string, Schema>): Schema | undefined =>
  schema !== undefined && typeof schema.$ref === "string" ? defs.get(schema.$ref) : schema

/**
 * Marks list properties with their merge keys (`x-kubernetes-list-type: map`, `x-kubernetes-list-map-keys`,
 * `x-kubernetes-patch-merge-key`, `x-kubernetes-patch-strategy: merge`) from a kind's list keys (paths such as
 * `spec.template.spec.containers[].ports`); lists of scalars kept as sets get `x-kubernetes-list-type: set`.
 */
const annotateListKeys = (
  root: Schema,
  listKeys: ReadonlyMap<string, ReadonlyArray<string>>,
  defs: ReadonlyMap<string, Schema>
): void => {
  for (const [path, keys] of listKeys) {
    let owner: Schema | undefined = root
    const segments = path.split(".")
    let target: Schema | undefined
    for (let i = 0; i < segments.length && owner !== undefined; i++) {
      const seg = segments[i]!.replace(/\[\]$/, "")
      const prop = owner.properties?.[seg] as Schema | undefined
      if (prop === undefined) break
      if (i === segments.length - 1) {
        target = prop
        break
      }
      let next = deref(prop, defs)
      if (next?.type === "array") next = deref(next.items, defs)
      owner = next
    }
    if (target === undefined || target.type !== "array") continue
    const items = deref(target.items, defs)
    if (keys.length === 0) {
      if (items?.type === "string") {
        target["x-kubernetes-list-type"] = "set"
        target["x-kubernetes-patch-strategy"] = "merge"
      }
      continue
    }
    target["x-kubernetes-list-map-keys"] = [...keys]
    target["x-kubernetes-list-type"] = "map"
    target["x-kubernetes-patch-merge-key"] = keys[0]
    target["x-kubernetes-patch-strategy"] = "merge"
  }
}

const listMetaDescription =
  "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"

const objectMetaRef = {
  $ref: `${META}.ObjectMeta`,
  description:
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
}
const apiVersionProp = {
  type: "string",
  description:
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
}
const kindProp = {
  type: "string",
  description:
    "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
}

/**
 * The definitions of a CRD's served versions (the kind and its list), from each version's `openAPIV3Schema`
 * (or the CRD's top-level legacy `validation`), with `metadata` as ObjectMeta and `apiVersion`/`kind` declared.
 */
export const crdDefinitions = (
  crd: Schema,
  version: string,
  builtin: BuiltinSchemas,
  out: Map<string, Schema>
): string | undefined => {
  const spec = crd.spec as Schema | undefined
  const v = (spec?.versions as Array<Schema> | undefined)?.find((x) => x.name === version)
  if (spec === undefined || v === undefined) return undefined
  const source =
    (v.schema?.openAPIV3Schema ?? { type: "object", "x-kubernetes-preserve-unknown-fields": true }) as Schema
  const schema: Schema = structuredClone(source)
  const group = spec.group as string
  const kind = spec.names.kind as string
  const listKind = (spec.names.listKind ?? `${kind}List`) as string
  schema.type ??= "object"
  schema.properties = {
    apiVersion: apiVersionProp,
    kind: kindProp,
    ...schema.properties,
    metadata: objectMetaRef
  }
  schema["x-kubernetes-group-version-kind"] = [{ group, kind, version }]
  builtin.common(out)
  const name = crdDefinitionName(group, version, kind)
  out.set(name, schema)
  out.set(crdDefinitionName(group, version, listKind), {
    description: `${listKind} is a list of ${kind}`,
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: apiVersionProp,
      items: {
        description: `List of ${
          (spec.names.plural ?? "").toString()
        }. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        type: "array",
        items: { $ref: name }
      },
      kind: kindProp,
      metadata: {
        $ref: `${META}.ListMeta`,
        description: listMetaDescription
      }
    },
    "x-kubernetes-group-version-kind": [{ group, kind: listKind, version }]
  })
  return name
}
