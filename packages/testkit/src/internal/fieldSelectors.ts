/**
 * The field selectors each kind supports, with the labels, values and error texts of kube-apiserver v1.32: the
 * field label conversion functions of `pkg/apis/core/v1/conversion.go` and `pkg/apis/events/v1/conversion.go`, the
 * selectable field sets of the registries (`ToSelectableFields` of pods, events, namespaces, secrets, services),
 * apimachinery's `DefaultMetaV1FieldSelectorConversion` for the other built-in kinds and the
 * apiextensions converter (`field label not supported`) for custom resources.
 */
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { coreFieldLabel, isEventsV1 } from "./events.js"
import type { Obj } from "./json.js"
import { type FieldRequirement, matchesFields, parseFieldSelector } from "./labelSelector.js"
import { builtins } from "./resourceType.js"

type Getter = (obj: Obj) => string

const text = (value: unknown): string => (value === undefined || value === null ? "" : String(value))
const at = (...path: ReadonlyArray<string>): Getter => (obj) => {
  let node: any = obj
  for (const key of path) node = node?.[key]
  return text(node)
}

const involved = Object.fromEntries(
  ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"].map((
    f
  ) => [`involvedObject.${f}`, at("involvedObject", f)])
)

interface Table {
  readonly fields: Readonly<Record<string, Getter>>
  /** Whether `metadata.namespace` is a label (not for cluster-scoped Namespaces). */
  readonly namespace: boolean
}

/** Fields beyond `metadata.name`/`metadata.namespace`, by `group/Kind`. */
const tables: ReadonlyMap<string, Table> = new Map<string, Table>([
  ["/Pod", {
    namespace: true,
    fields: {
      "spec.nodeName": at("spec", "nodeName"),
      // what old v1 clients send for spec.nodeName
      "spec.host": at("spec", "nodeName"),
      "spec.restartPolicy": at("spec", "restartPolicy"),
      "spec.schedulerName": at("spec", "schedulerName"),
      "spec.serviceAccountName": at("spec", "serviceAccountName"),
      "spec.hostNetwork": (o) => String(o.spec?.hostNetwork === true),
      "status.phase": at("status", "phase"),
      "status.podIP": (o) => text(o.status?.podIPs?.[0]?.ip ?? o.status?.podIP),
      // accepted as a label upstream but not in the selectable set: it only matches ""
      "status.podIPs": () => "",
      "status.nominatedNodeName": at("status", "nominatedNodeName")
    }
  }],
  ["/Event", {
    namespace: true,
    fields: {
      ...involved,
      reason: at("reason"),
      reportingComponent: at("reportingComponent"),
      source: (o) => text(o.source?.component || o.reportingComponent),
      type: at("type")
    }
  }],
  ["/Namespace", { namespace: false, fields: { "status.phase": at("status", "phase") } }],
  ["/Secret", { namespace: true, fields: { type: at("type") } }],
  ["/Service", {
    namespace: true,
    fields: { "spec.clusterIP": at("spec", "clusterIP"), "spec.type": at("spec", "type") }
  }]
  // ReplicaSets: the registry selects on status.replicas, but apps/v1 registers no field label conversion, so
  // kube-apiserver refuses it like any other label (kubernetes/kubernetes#135136)
])

const isBuiltin = (rt: ResourceType): boolean => builtins.some((b) => b.group === rt.group && b.plural === rt.plural)

/** The field of the stored object a selector label of `rt` reads (events.k8s.io labels become core/v1 ones). */
const storedLabel = (rt: ResourceType, label: string): string => {
  if (isEventsV1(rt)) return coreFieldLabel(label)
  return label
}

const unsupported = (rt: ResourceType, label: string): string | undefined => {
  const table = tables.get(`${rt.group}/${rt.kind}`)
  if (table !== undefined) {
    if (label === "metadata.name" || (label === "metadata.namespace" && table.namespace)) return undefined
    return Object.hasOwn(table.fields, label) ? undefined : `field label not supported: ${label}`
  }
  if (label === "metadata.name") return undefined
  if (!isBuiltin(rt)) {
    // the apiextensions converter: metadata.namespace when namespaced, and the version's selectableFields
    if (rt.scope === "Namespaced" && label === "metadata.namespace") return undefined
    return rt.selectableFields?.includes(label) === true ? undefined : `field label not supported: ${label}`
  }
  return label === "metadata.namespace"
    ? undefined
    : `"${label}" is not a known field selector: only "metadata.name", "metadata.namespace"`
}

/** A custom resource's selectable field: a scalar at the path, as text (`true`, `3`); anything else is "". */
const selectable = (obj: Obj, path: string): string => {
  let node: any = obj
  for (const key of path.split(".")) node = node?.[key]
  return ["string", "number", "boolean"].includes(typeof node) ? String(node) : ""
}

/** The requirements of a field selector on `rt` (labels as stored); 400 BadRequest for a bad one, as upstream. */
export const parse = (rt: ResourceType, selector: string | undefined): ReadonlyArray<FieldRequirement> => {
  if (selector === undefined) return []
  const parsed = parseFieldSelector(selector, (label) => {
    if (isEventsV1(rt)) {
      coreFieldLabel(label)
      return undefined
    }
    return unsupported(rt, label)
  })
  if (parsed._tag === "Err") throw ApiError.make(400, "BadRequest", parsed.message)
  return parsed.requirements.map((r) => ({ ...r, field: storedLabel(rt, r.field) }))
}

/** Whether a stored object of `rt` matches the requirements from {@link parse}. */
export const matches = (rt: ResourceType, requirements: ReadonlyArray<FieldRequirement>, obj: Obj): boolean => {
  if (requirements.length === 0) return true
  const table = tables.get(`${isEventsV1(rt) ? "" : rt.group}/${rt.kind}`)
  return matchesFields(
    requirements,
    obj.metadata?.name ?? "",
    obj.metadata?.namespace,
    (field) => table !== undefined ? table.fields[field]?.(obj) ?? "" : selectable(obj, field)
  )
}
