import type { ObjectMeta } from "@reconcile/core"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as KubeError from "../KubeError.js"
import type * as MetadataOnly from "../MetadataOnly.js"
import type * as Resource from "../Resource.js"
import { intern } from "./intern.js"
import { rawText, TypeId as ResourceTypeId, withSyncDecoder } from "./resource.js"
import { metadataOf } from "./undecodable.js"

/** @internal */
export const TypeId: MetadataOnly.TypeId = Symbol.for("@reconcile/kube/MetadataOnly") as MetadataOnly.TypeId

/** @internal */
export const acceptObject = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

/** @internal */
export const acceptList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * One frozen copy of each small owner list or finalizer list many objects repeat (the children of one owner): keyed
 * by its JSON. Bounded: past `sharedLimit` distinct values, or for a value whose JSON is longer than
 * `sharedLength`, the object keeps its own (unfrozen) copy.
 */
const sharedTable = new Map<string, unknown>()
const sharedLimit = 4_096
const sharedLength = 512

const deepFreeze = (value: unknown): unknown => {
  if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Json)[key])
    Object.freeze(value)
  }
  return value
}

const share = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  const key = JSON.stringify(value)
  if (key.length > sharedLength) return value
  const shared = sharedTable.get(key)
  if (shared !== undefined) return shared
  if (sharedTable.size >= sharedLimit) return value
  // a copy: the caller's object is not frozen under it
  const copy = deepFreeze(JSON.parse(key))
  sharedTable.set(key, copy)
  return copy
}

/** A step of the record trie: the records whose entries so far are the path to it, and the shared one ending here. */
interface RecordNode {
  children: Map<string, Map<string, RecordNode>> | undefined
  shared: Readonly<Record<string, string>> | undefined
}

/**
 * One frozen copy of each small label set or annotation set many objects repeat (the pods of one ReplicaSet):
 * found by walking its entries, in order, down a trie (two map lookups per entry, no string built). Bounded: past
 * `recordNodeLimit` trie nodes, or for a record longer than `sharedLength` characters, the object keeps its own
 * (unfrozen) copy.
 */
const recordRoot: RecordNode = { children: undefined, shared: undefined }
let recordNodes = 0
const recordNodeLimit = 16_384

const shareRecord = (record: unknown): unknown => {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return share(record)
  let node = recordRoot
  let length = 0
  for (const key in record) {
    const value = (record as Json)[key]
    if (typeof value !== "string") return share(record)
    length += key.length + value.length
    if (length > sharedLength) return record
    let byValue = node.children?.get(key)
    let next = byValue?.get(value)
    if (next === undefined) {
      if (recordNodes >= recordNodeLimit) return record
      recordNodes++
      if (byValue === undefined) (node.children ??= new Map()).set(key, byValue = new Map())
      byValue.set(value, next = { children: undefined, shared: undefined })
    }
    node = next
  }
  // a copy: the caller's object is not frozen under it
  return node.shared ??= Object.freeze({ ...(record as Record<string, string>) })
}

/** A metadata field as a cache stores it: its strings interned, its repeated structures shared, or as it is. */
const compactField = (key: string, value: unknown): unknown => {
  switch (key) {
    case "namespace":
    case "generateName":
    case "creationTimestamp":
    case "deletionTimestamp":
      return intern(value)
    case "labels":
    case "annotations":
      return shareRecord(value)
    case "ownerReferences":
    case "finalizers":
      return share(value)
    default:
      return value
  }
}

/**
 * A template object per list of metadata fields, made by `JSON.parse` (which lays out exactly that many
 * properties inside the object): its spread copies have the same compact layout, where an object built by adding
 * properties one by one keeps its fifth and later ones in a separate, partly empty array. Bounded like the tables
 * above; past it, copies are built field by field. The last template used is checked first: the objects of a list
 * or a watch mostly have the same fields.
 */
const templates = new Map<string, Json>()
const templateLimit = 1_024
let lastFields: ReadonlyArray<string> = []
let lastTemplate: Json | undefined

/** Whether `keys`, but managedFields, are `fields`. */
const sameFields = (keys: ReadonlyArray<string>, fields: ReadonlyArray<string>): boolean => {
  let j = 0
  for (const key of keys) {
    if (key === "managedFields") continue
    if (fields[j++] !== key) return false
  }
  return j === fields.length
}

const templateFor = (keys: ReadonlyArray<string>): Json | undefined => {
  if (lastTemplate !== undefined && sameFields(keys, lastFields)) return lastTemplate
  const fields = keys.filter((key) => key !== "managedFields")
  let shape = ""
  for (const field of fields) shape += `${field.length}:${field}`
  let template = templates.get(shape)
  if (template === undefined) {
    if (templates.size >= templateLimit) return undefined
    template = JSON.parse(`{${fields.map((field) => `${JSON.stringify(field)}:null`).join(",")}}`) as Json
    templates.set(shape, template)
  }
  lastFields = fields
  lastTemplate = template
  return template
}

/**
 * A compact copy of an object's `metadata` for a cache to hold: every field the server sent but `managedFields`
 * (which only server-side apply reads), short repeated strings interned, repeated labels, annotations, owner
 * references and finalizers shared (and frozen), in an object of exactly its fields. The input is left as it is.
 *
 * @internal
 */
export const compactMetadata = (metadata: Json): ObjectMeta.ObjectMeta => {
  const keys = Object.keys(metadata)
  const template = templateFor(keys)
  if (template === undefined) {
    return Object.fromEntries(
      keys.filter((key) => key !== "managedFields").map((key) => [key, compactField(key, metadata[key])])
    ) as ObjectMeta.ObjectMeta
  }
  // the template's own properties are exactly `keys` (but managedFields): assignments fill them in place
  const copy: Json = { ...template }
  for (const key of keys) if (key !== "managedFields") copy[key] = compactField(key, metadata[key])
  return copy as ObjectMeta.ObjectMeta
}

/**
 * The default transform of a cache's metadata-only informers: the object with its metadata compact (see
 * `compactMetadata`), for a metadata-only cache is there to be small.
 *
 * @internal
 */
export const compactObject = <A extends ObjectMeta.HasMetadata>(object: A): A => {
  const { apiVersion, kind, metadata } = object as A & { readonly apiVersion?: string; readonly kind?: string }
  return { apiVersion, kind, metadata: compactMetadata(metadata as Json) } as unknown as A
}

/** @internal */
export const isMetadataOnly = (u: unknown): u is MetadataOnly.MetadataOnly<any> => Predicate.hasProperty(u, TypeId)

/**
 * The `Accept` header of a request whose answer decodes with `resource`: `undefined` (plain JSON) unless the
 * resource is metadata-only.
 *
 * @internal
 */
export const acceptFor = (resource: Resource.Resource<any>, list: boolean): string | undefined =>
  isMetadataOnly(resource) ? (list ? acceptList : acceptObject) : undefined

/** @internal */
export const make = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>
): MetadataOnly.MetadataOnly<A> => {
  if (isMetadataOnly(resource)) return resource as unknown as MetadataOnly.MetadataOnly<A>
  const fail = (u: unknown, issue: string) => {
    const metadata = metadataOf(u, resource.sensitive)
    return Result.fail(
      new KubeError.Decode({
        kind: resource.kind,
        ...(metadata === undefined ? {} : { apiVersion: resource.apiVersion, metadata }),
        raw: rawText(u, resource.sensitive, resource.kind),
        issue
      })
    )
  }
  // The server answers `meta.k8s.io/v1` PartialObjectMetadata; a server that ignores `as=` sends the whole object.
  // Either way only `metadata` is kept, under the kind's own apiVersion and kind (as controller-runtime's cache
  // reader sets the GVK of the objects it returns). A cache holds them compact (`compactObject`).
  const decodeResult = (u: unknown): Result.Result<MetadataOnly.PartialObjectMetadata, KubeError.Decode> => {
    if (!isRecord(u)) return fail(u, `expected a JSON object, got ${Array.isArray(u) ? "an array" : typeof u}`)
    const partial = u.kind === "PartialObjectMetadata" && u.apiVersion === "meta.k8s.io/v1"
    if (!partial && u.kind !== undefined && u.kind !== resource.kind) {
      return fail(u, `expected kind PartialObjectMetadata or ${resource.kind}, got ${String(u.kind)}`)
    }
    if (!partial && u.apiVersion !== undefined && u.apiVersion !== resource.apiVersion) {
      return fail(u, `expected apiVersion meta.k8s.io/v1 or ${resource.apiVersion}, got ${String(u.apiVersion)}`)
    }
    if (!isRecord(u.metadata)) return fail(u, "metadata is not an object")
    return Result.succeed({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      metadata: u.metadata as ObjectMeta.ObjectMeta
    })
  }
  // lists and watches decode their items with `decodeResult` directly, without an Effect per item
  const decode = withSyncDecoder((u: unknown) => Effect.fromResult(decodeResult(u)), decodeResult)
  return {
    [TypeId]: TypeId,
    of: resource,
    [ResourceTypeId]: ResourceTypeId,
    group: resource.group,
    version: resource.version,
    kind: resource.kind,
    plural: resource.plural,
    scope: resource.scope,
    apiVersion: resource.apiVersion,
    sensitive: resource.sensitive,
    path: resource.path,
    decode,
    encode: () =>
      Effect.fail(
        new KubeError.Encode({
          kind: resource.kind,
          issue: "a metadata-only resource has no spec to write: create or replace with the full resource " +
            "(patch and delete work)"
        })
      )
  }
}
