/**
 * The `/scale` subresource (autoscaling/v1 Scale) of Deployments, ReplicaSets, StatefulSets and custom resources
 * whose CRD version declares `subresources.scale`, as kube-apiserver serves it: the Scale is a view of the parent
 * (name, namespace, uid, resourceVersion, creationTimestamp; `spec.replicas` from the spec replicas path,
 * `status.replicas` from the status replicas path, `status.selector` as a label selector string), and writing it
 * writes the parent's spec replicas through the ordinary update path (resourceVersion precondition, generation,
 * validation, watch event).
 */
import * as ApiError from "../ApiError.js"
import type { ResourceType, ScaleSubresource } from "../ResourceType.js"
import { isObject, type Obj } from "./json.js"
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js"
import type { Core, PatchType, WriteOptions } from "./store.js"

const notServed = (): ApiError.ApiError =>
  ApiError.make(404, "NotFound", "the server could not find the requested resource", {})

/** The scale paths of a kind, or a 404 as for any path the server does not serve. */
export const scaleOf = (rt: ResourceType): ScaleSubresource => {
  if (rt.scale === undefined) throw notServed()
  return rt.scale
}

const segments = (path: string): Array<string> => path.replace(/^\./, "").split(".").filter((s) => s !== "")

const read = (obj: Obj, path: string): unknown => {
  let node: unknown = obj
  for (const key of segments(path)) {
    if (!isObject(node)) return undefined
    node = node[key]
  }
  return node
}

const write = (obj: Obj, path: string, value: unknown): void => {
  const keys = segments(path)
  let node: Obj = obj
  for (const key of keys.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {}
    node = node[key]
  }
  node[keys[keys.length - 1]!] = value
}

const integer = (value: unknown, path: string): number => {
  if (value === undefined || value === null) return 0
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw ApiError.make(
      500,
      "InternalError",
      `Internal error occurred: .${segments(path).join(".")} accessor error: ${
        JSON.stringify(value)
      } is of the type ${typeof value}, expected int64`
    )
  }
  return value
}

/**
 * A label selector (`{matchLabels, matchExpressions}`) as apimachinery's `labels.Selector.String()` renders it:
 * requirements sorted by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas.
 */
export const formatSelector = (selector: unknown): string => {
  if (!isObject(selector)) return ""
  const requirements: Array<readonly [string, string]> = []
  for (const [key, value] of Object.entries(isObject(selector.matchLabels) ? selector.matchLabels : {})) {
    requirements.push([key, `${key}=${String(value)}`])
  }
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions as Array<Obj> : []) {
    const values = (Array.isArray(e.values) ? [...new Set(e.values as Array<string>)] : []).sort()
    const key = String(e.key)
    switch (e.operator) {
      case "In":
        requirements.push([key, `${key} in (${values.join(",")})`])
        break
      case "NotIn":
        requirements.push([key, `${key} notin (${values.join(",")})`])
        break
      case "Exists":
        requirements.push([key, key])
        break
      case "DoesNotExist":
        requirements.push([key, `!${key}`])
        break
    }
  }
  return requirements
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, text]) => text)
    .join(",")
}

/** The autoscaling/v1 Scale of a stored object. */
export const scaleFromObject = (rt: ResourceType, obj: Obj): Obj => {
  const paths = scaleOf(rt)
  const meta = obj.metadata as Obj
  const specReplicas = integer(read(obj, paths.specReplicasPath), paths.specReplicasPath)
  const statusReplicas = integer(read(obj, paths.statusReplicasPath), paths.statusReplicasPath)
  const rawSelector = paths.labelSelectorPath === undefined ? undefined : read(obj, paths.labelSelectorPath)
  // built-in kinds keep a selector object; a CRD's labelSelectorPath points at a string
  const selector = typeof rawSelector === "string" ? rawSelector : formatSelector(rawSelector)
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: meta.name,
      ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp
    },
    // autoscaling/v1: spec.replicas is omitempty, status.replicas is not
    spec: specReplicas === 0 ? {} : { replicas: specReplicas },
    status: { replicas: statusReplicas, ...(selector !== "" ? { selector } : {}) }
  }
}

/** GET `/scale`. */
export const getScale = (core: Core, rt: ResourceType, namespace: string | undefined, name: string): Obj => {
  scaleOf(rt)
  return scaleFromObject(rt, core.get(rt, namespace, name) as Obj)
}

const invalidScale = (name: string, field: string, value: unknown, detail: string): ApiError.ApiError => {
  const message = `Invalid value: ${JSON.stringify(value)}: ${detail}`
  return ApiError.make(422, "Invalid", `Scale.autoscaling "${name}" is invalid: ${field}: ${message}`, {
    name,
    group: "autoscaling",
    kind: "Scale",
    causes: [{ reason: "FieldValueInvalid", message, field }]
  })
}

/**
 * PUT `/scale`: writes `spec.replicas` into the parent at its spec replicas path. A `metadata.resourceVersion` on
 * the Scale is a precondition on the parent (409 Conflict as for the parent), a `metadata.uid` must match it.
 */
export const updateScale = (
  core: Core,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  body: unknown,
  options: WriteOptions
): Obj => {
  const paths = scaleOf(rt)
  if (!isObject(body)) throw ApiError.make(400, "BadRequest", "the body of the request must be a Scale object")
  const existing = core.get(rt, namespace, name) as Obj
  const meta = isObject(body.metadata) ? body.metadata : {}
  const replicas = isObject(body.spec) ? body.spec.replicas ?? 0 : 0
  if (typeof replicas !== "number" || !Number.isInteger(replicas)) {
    throw ApiError.make(
      400,
      "BadRequest",
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`
    )
  }
  if (replicas < 0) throw invalidScale(name, "spec.replicas", replicas, "must be greater than or equal to 0")
  if (typeof meta.uid === "string" && meta.uid !== "" && meta.uid !== existing.metadata.uid) {
    const plural = rt.group === "" ? rt.plural : `${rt.plural}.${rt.group}`
    throw ApiError.make(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${plural} "${name}": Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${existing.metadata.uid}`,
      { name, group: rt.group, kind: `${rt.plural}/scale` }
    )
  }
  const next: Obj = structuredClone(existing)
  write(next, paths.specReplicasPath, replicas)
  const rv = typeof meta.resourceVersion === "string" && meta.resourceVersion !== ""
    ? meta.resourceVersion
    : existing.metadata.resourceVersion
  next.metadata.resourceVersion = rv
  const updated = core.update(rt, namespace, name, next, { ...options, subresource: "scale" }) as Obj
  return scaleFromObject(rt, updated)
}

/** PATCH `/scale` (json, merge, strategic; apply takes `spec.replicas` from the configuration). */
export const patchScale = (
  core: Core,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  type: PatchType,
  patch: unknown,
  options: WriteOptions
): Obj => {
  const current = getScale(core, rt, namespace, name)
  let patched: unknown
  if (type === "json") patched = jsonPatch(current, patch)
  else if (!isObject(patch)) throw ApiError.make(400, "BadRequest", "the patch must be a JSON object")
  else if (type === "apply") patched = mergePatch(current, { spec: { replicas: patch.spec?.replicas ?? 0 } })
  else patched = type === "merge" ? mergePatch(current, patch) : strategicMergePatch(rt, current, patch)
  return updateScale(core, rt, namespace, name, patched, options)
}
