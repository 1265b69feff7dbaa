/**
 * A request object decoded as kube-apiserver's serializers decode it before the strategy sees it: its apiVersion
 * and kind checked against the resource, built-in metadata typed as Go's decoder types it (a value of the wrong
 * JSON type refused, a `null` read as Go reads it), and the fields a built-in kind does not declare dropped.
 */
import { apiVersion, type ResourceType } from "../ResourceType.js"
import { clone, goJsonType, isObject, type Obj } from "./json.js"
import { isBuiltinGroup, type Registry } from "./resourceType.js"
import { badRequest } from "./statuses.js"
import { pruneUndeclared } from "./undeclaredFields.js"

/** The string and `map[string]string` fields of ObjectMeta a client writes, as Go's decoder types them. */
const metaStrings = ["name", "generateName", "namespace", "uid", "resourceVersion"] as const
const metaMaps = ["labels", "annotations"] as const

/** A `null` metadata string is absent and a `null` label or annotation value `""`, as Go's decoder reads them. */
const nullsAsGoDecodes = (metadata: Obj): void => {
  for (const field of metaStrings) if (metadata[field] === null) delete metadata[field]
  for (const field of metaMaps) {
    const map = metadata[field]
    if (isObject(map)) { for (const [k, v] of Object.entries(map)) if (v === null) map[k] = "" }
  }
}

/**
 * The typed decoding of a built-in object's metadata: a value of the wrong JSON type is refused as Go's decoder
 * words it (`json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.name of type string`).
 */
const checkMetaTypes = (rt: ResourceType, metadata: Obj): void => {
  const refuse = (value: unknown, field: string, type: string) => {
    throw badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: json: cannot unmarshal ${
        goJsonType(value)
      } into Go struct field ObjectMeta.metadata.${field} of type ${type}`
    )
  }
  for (const field of metaStrings) {
    const value = metadata[field]
    if (value !== undefined && value !== null && typeof value !== "string") refuse(value, field, "string")
  }
  for (const field of metaMaps) {
    const value = metadata[field]
    if (value === undefined || value === null) continue
    if (!isObject(value)) refuse(value, field, "map[string]string")
    for (const v of Object.values(value as Obj)) if (v !== null && typeof v !== "string") refuse(v, field, "string")
  }
}

/**
 * Decodes the body of a create, update or apply of `rt` (400 BadRequest for what upstream refuses): a copy with the
 * resource's apiVersion and kind and a `metadata` object.
 */
export const decode = (registry: Registry, rt: ResourceType, body: unknown): Obj => {
  if (!isObject(body)) throw badRequest("the body of the request was not a JSON object")
  if (body.metadata !== undefined && !isObject(body.metadata)) throw badRequest("metadata must be an object")
  const expected = apiVersion(rt)
  if (body.apiVersion !== undefined && body.apiVersion !== expected) {
    throw badRequest(
      `the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`
    )
  }
  if (body.kind !== undefined && body.kind !== rt.kind) {
    // a built-in body of another kind of the group version decodes as that kind, which does not convert
    if (
      isBuiltinGroup(rt.group) && typeof body.kind === "string" &&
      registry.byKind(rt.group, rt.version, body.kind) !== undefined
    ) {
      const internal = rt.group === "" ? "core" : rt.group.split(".")[0]
      throw badRequest(
        `${body.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: converting (${rt.version}.${body.kind}) to (${internal}.${rt.kind}): unknown conversion`
      )
    }
    throw badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${rt.kind})`)
  }
  if (isBuiltinGroup(rt.group) && isObject(body.metadata)) checkMetaTypes(rt, body.metadata)
  const out = clone(body)
  out.apiVersion = expected
  out.kind = rt.kind
  out.metadata ??= {}
  if (isBuiltinGroup(rt.group)) nullsAsGoDecodes(out.metadata)
  pruneUndeclared(rt, out)
  return out
}
