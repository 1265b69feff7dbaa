/**
 * Server-side field validation (`fieldValidation=Ignore|Warn|Strict`, Warn when absent): the fields of a request
 * object the kind does not declare (`../undeclaredFields.ts`) reported as warnings or refused, and duplicate JSON
 * fields, found by scanning the raw body (Strict and Warn only, as upstream's strict decoder). Also here: decoding
 * request bodies and patches as kube-apiserver's serializers word their failures (Go's encoding/json messages), and
 * the patched object as Go's json-patch marshals it when a Strict patch is refused (Go's field order from the
 * protobuf descriptors, which follow the Go structs).
 */
import * as ApiError from "../../ApiError.js"
import type { ResourceType } from "../../ResourceType.js"
import {
  clone,
  goJson,
  goJsonType,
  goPrint,
  goRawJson,
  type GoScan,
  goScan,
  isObject,
  type Obj,
  summarize
} from "../json.js"
import { jsonPatch, mergePatch, strategicMergePatch } from "../patch.js"
import { type Field, messages } from "../protobuf/descriptors.generated.js"
import { badRequest } from "../statuses.js"
import type { Core, PatchType } from "../store.js"
import { undeclaredFields } from "../undeclaredFields.js"

/** The `fieldValidation` directive. */
export type Directive = "Ignore" | "Warn" | "Strict"

// -----------------------------------------------------------------------------------------------------------------
// decoding bodies and patches

/** A JSON text parsed, or encoding/json's error for it (the scan runs only when `JSON.parse` refuses the text). */
const parse = (text: string): { readonly value: unknown } | string => {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch (e) {
    return goScan(text).error ?? (e instanceof Error ? e.message : String(e))
  }
}

const findKindType =
  `struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`

/**
 * A create or update body (JSON) decoded as kube-apiserver's serializer does: what is not JSON, or not an object, is
 * a 400 `the object provided is unrecognized (must be of type <Kind>): couldn't get version/kind; json parse error:
 * <encoding/json's error> (<the body's start>)`.
 */
export const decodeBody = (rt: ResourceType, text: string): unknown => {
  const unrecognized = (why: string) =>
    badRequest(
      `the object provided is unrecognized (must be of type ${rt.kind}): couldn't get version/kind; json parse error: ${why} (${
        summarize(text)
      })`
    )
  const body = parse(text)
  if (typeof body === "string") throw unrecognized(body)
  if (body.value !== null && !isObject(body.value)) {
    throw unrecognized(`json: cannot unmarshal ${goJsonType(body.value)} into Go value of type ${findKindType}`)
  }
  return body.value
}

/**
 * A json, merge or strategic patch decoded as kube-apiserver's patch handler does, its failures worded as upstream's
 * (they depend on the patch type and on whether `fieldValidation` asks for the strict decoder, Strict or Warn).
 */
export const decodePatch = (type: Exclude<PatchType, "apply">, text: string, directive: Directive): unknown => {
  const strict = directive !== "Ignore"
  const parsed = parse(text)
  const error = typeof parsed === "string" ? parsed : undefined
  const patch = typeof parsed === "string" ? undefined : parsed.value
  const wanted = type === "json" ? (strict ? "[]handlers.jsonPatchOp" : "jsonpatch.Patch") : "map[string]interface {}"
  const mismatch = patch === undefined || patch === null
    ? undefined
    : type === "json" && !Array.isArray(patch)
    ? goJsonType(patch)
    : type !== "json" && !isObject(patch)
    ? goJsonType(patch)
    : undefined
  const why = error ??
    (mismatch === undefined ? undefined : `json: cannot unmarshal ${mismatch} into Go value of type ${wanted}`)
  if (why !== undefined) {
    if (type === "strategic" || (type === "json" && !strict)) throw badRequest(why)
    // json-patch's MergePatch refuses what is not JSON with its own error (not strictly decoded first)
    if (type === "merge" && !strict) {
      if (error !== undefined) throw badRequest("Invalid JSON Patch")
      return patch
    }
    throw badRequest(`error decoding patch: ${why}`)
  }
  if (type === "merge" && patch === null) throw badRequest("Invalid JSON Patch")
  return patch
}

/** The strict decoder's `duplicate field "<path>"` errors of a JSON text, in text order, with their offsets. */
const duplicates = (scan: GoScan): Array<{ readonly at: number; readonly text: string }> =>
  scan.keys.filter((k) => k.duplicate).map((k) => ({ at: k.at, text: `duplicate field ${JSON.stringify(k.path)}` }))

/**
 * The strict decoding errors of a body: for a built-in kind unknown and duplicate fields in the order they appear
 * in the text (one pass of a typed decoder); for a custom resource the duplicates, then the fields pruning drops.
 */
/** The number of object members in a JSON text: its colons outside strings (a tight loop, no allocation). */
const memberCount = (text: string): number => {
  let count = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash escapes the next character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 58) count++
  }
  return count
}

/** The number of object members in a parsed JSON value (a repeated key collapsed into one). */
const keyCount = (u: unknown): number => {
  if (Array.isArray(u)) return u.reduce((n: number, item) => n + keyCount(item), 0)
  if (typeof u !== "object" || u === null) return 0
  let n = 0
  for (const value of Object.values(u)) n += 1 + keyCount(value)
  return n
}

const strictErrors = (rt: ResourceType, body: unknown, text: string | undefined): Array<string> => {
  const paths = undeclaredFields(rt, body)
  // the Go scan (positions of every key) only when something is to report: a repeated key (the text has more
  // members than the value it parsed to) or an undeclared field; most bodies have neither
  if (paths.length === 0 && (text === undefined || memberCount(text) === keyCount(body))) return []
  const scan = text === undefined ? undefined : goScan(text)
  if (scan === undefined || scan.error !== undefined) return paths.map(unknownField)
  const repeated = duplicates(scan)
  if (rt.schema !== undefined) return [...repeated.map((d) => d.text), ...paths.map(unknownField)]
  const firstAt = new Map<string, number>()
  for (const k of scan.keys) if (!firstAt.has(k.path)) firstAt.set(k.path, k.at)
  const unknown = paths.map((p) => ({ at: firstAt.get(p) ?? Number.MAX_SAFE_INTEGER, text: unknownField(p) }))
  return [...repeated, ...unknown].sort((a, b) => a.at - b.at).map((e) => e.text)
}

const unknownField = (path: string): string => `unknown field ${JSON.stringify(path)}`

const strictMessage = (errors: ReadonlyArray<string>): string => `strict decoding error: ${errors.join(", ")}`

/**
 * Checks the body of a create or update (`text` its raw JSON or YAML, when there is one): a custom resource without
 * a `kind` is a 400 (`Object 'Kind' is missing in '<body>'`, the unstructured decoder's); Strict with unknown or
 * duplicate fields is a 400 (`<Kind> in version "v1" cannot be handled as a <Kind>: strict decoding error: unknown
 * field "spec.foo"`), Warn returns one warning per field (`unknown field "spec.foo"`), Ignore nothing.
 */
export const checkBody = (rt: ResourceType, body: unknown, directive: Directive, text?: string): Array<string> => {
  if (
    rt.schema !== undefined && text !== undefined && isObject(body) && (body.kind === undefined || body.kind === "")
  ) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${rt.kind}): Object 'Kind' is missing in '${text}' (${
        summarize(text)
      })`
    )
  }
  if (directive === "Ignore") return []
  const errors = strictErrors(rt, body, text !== undefined && /^\s*[{[]/.test(text) ? text : undefined)
  if (errors.length === 0) return []
  if (directive === "Strict") {
    throw badRequest(
      `${rt.kind} in version ${JSON.stringify(rt.version)} cannot be handled as a ${rt.kind}: ${strictMessage(errors)}`
    )
  }
  return errors
}

/**
 * Checks a json, merge or strategic patch by the object it yields (`text` the raw patch): Strict with unknown fields,
 * or duplicate ones in the patch, is a 422 on the field `patch` (kube-apiserver's `"" is invalid: patch: Invalid
 * value: "<patched object>": strict decoding error: …`; a strategic patch quotes the patch itself, as Go's `%+v`),
 * Warn returns the warnings. A patch that fails to apply is left to the write itself.
 */
export const checkPatch = (
  core: Core,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  type: Exclude<PatchType, "apply">,
  patch: unknown,
  directive: Directive,
  text?: string
): Array<string> => {
  if (directive === "Ignore") return []
  let base: Obj
  let patched: unknown
  try {
    // the core's copy is ours; the patches below work on copies of it
    base = core.get(rt, namespace, name) as unknown as Obj
    patched = type === "json"
      ? jsonPatch(clone(base), patch)
      : type === "merge"
      ? mergePatch(clone(base), patch)
      : strategicMergePatch(rt, clone(base), patch as Obj)
  } catch {
    return []
  }
  const scan = text === undefined ? undefined : goScan(text)
  const repeated = scan === undefined
    ? []
    : duplicates(scan).map((d) => type === "json" ? `json patch ${d.text}` : d.text)
  const value = type === "strategic" ? goPrint(patch) : patchedJson(rt, base, type, patch, patched)
  // the typed decoder reads the patched object's text in order; a strategic patch is checked as a map (sorted)
  const fields = type === "strategic"
    ? undeclaredFields(rt, patched).sort()
    : undeclaredFields(rt, rt.schema === undefined ? JSON.parse(value) : patched)
  const errors = [...repeated, ...fields.map(unknownField)]
  if (errors.length === 0) return []
  if (directive === "Strict") {
    const quoted = JSON.stringify(value)
    const detail = strictMessage(errors)
    throw ApiError.make(422, "Invalid", ` "" is invalid: patch: Invalid value: ${quoted}: ${detail}`, {
      causes: [{ reason: "FieldValueInvalid", message: `Invalid value: ${quoted}: ${detail}`, field: "patch" }]
    })
  }
  return errors
}

// -----------------------------------------------------------------------------------------------------------------
// the patched object as Go marshals it

/**
 * The shape of a value for Go's JSON encoder: a typed struct (fields in declaration order), a map (keys sorted), a
 * list, or anything else (unstructured: keys sorted).
 */
type Shape =
  | { readonly _tag: "Any" }
  | { readonly _tag: "Struct"; readonly fields: ReadonlyArray<Field> }
  | { readonly _tag: "Map"; readonly of: Shape }
  | { readonly _tag: "List"; readonly of: Shape }

const ANY: Shape = { _tag: "Any" }

/** A message's JSON fields, embedded (inlined) structs expanded in place. */
const fieldsOf = (message: string): ReadonlyArray<Field> =>
  (messages[message] ?? []).flatMap((f) => ((f[3] ?? "").includes("i") ? fieldsOf(f[2]) : [f]))

/** Raw JSON fields (FieldsV1, RawExtension) are kept as sorted maps; scalar messages are no structs. */
const opaque = new Set(["meta.v1.FieldsV1", "runtime.RawExtension", "meta.v1.Time", "meta.v1.MicroTime"])

const shapeOf = (type: string, flags = ""): Shape => {
  const base: Shape = messages[type] === undefined || opaque.has(type)
    ? ANY
    : { _tag: "Struct", fields: fieldsOf(type) }
  return flags.includes("m") ? { _tag: "Map", of: base } : flags.includes("r") ? { _tag: "List", of: base } : base
}

/** A built-in kind's shape: TypeMeta (`kind`, `apiVersion`) first, then its struct (at least its ObjectMeta). */
const kindShape = (rt: ResourceType): Shape => {
  if (rt.schema !== undefined) return ANY
  const message = `${rt.group === "" ? "core" : rt.group.split(".")[0]}.${rt.version}.${rt.kind}`
  const typeMeta: ReadonlyArray<Field> = [["kind", 0, "string"], ["apiVersion", 0, "string"]]
  const body: ReadonlyArray<Field> = messages[message] !== undefined
    ? fieldsOf(message)
    : [["metadata", 1, "meta.v1.ObjectMeta"]]
  return { _tag: "Struct", fields: [...typeMeta, ...body] }
}

const childShape = (shape: Shape, key: string): Shape => {
  if (shape._tag === "Map") return shape.of
  if (shape._tag !== "Struct") return ANY
  const f = shape.fields.find((x) => x[0] === key)
  return f === undefined ? ANY : shapeOf(f[2], f[3])
}

const itemShape = (shape: Shape): Shape => (shape._tag === "List" ? shape.of : ANY)

const member = (key: string, text: string): string => `${goJson(key)}:${text}`

/** Go's JSON of a value of that shape: struct fields in declaration order (unknown ones after), maps sorted. */
const typedJson = (value: unknown, shape: Shape): string => {
  if (Array.isArray(value)) return `[${value.map((v) => typedJson(v, itemShape(shape))).join(",")}]`
  if (!isObject(value)) return goJson(value)
  const keys = Object.keys(value).filter((k) => value[k] !== undefined)
  const ordered = shape._tag === "Struct"
    ? [
      ...shape.fields.map((f) => f[0]).filter((k) => keys.includes(k)),
      ...keys.filter((k) => !shape.fields.some((f) => f[0] === k))
    ]
    : keys.sort()
  return `{${ordered.map((k) => member(k, typedJson(value[k], childShape(shape, k)))).join(",")}}`
}

/** A patch value with its null members dropped (json-patch's `pruneNulls`), keys sorted. */
const prunedJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(prunedJson).join(",")}]`
  if (!isObject(value)) return goJson(value)
  const keys = Object.keys(value).filter((k) => value[k] !== null && value[k] !== undefined).sort()
  return `{${keys.map((k) => member(k, prunedJson(value[k]))).join(",")}}`
}

/**
 * The text of a merge patch applied to an object encoded as Go encodes it (json-patch v4's `MergePatch`): every
 * object the patch reaches is re-marshaled with its keys sorted, what the patch leaves alone keeps the object's own
 * encoding, values the patch brings are marshaled sorted without their nulls.
 */
const mergedJson = (current: Obj, patch: Obj, shape: Shape): string => {
  const keys = [...new Set([...Object.keys(current), ...Object.keys(patch)])]
    .filter((k) => (k in patch ? patch[k] !== null : current[k] !== undefined))
    .sort()
  return `{${
    keys.map((k) => {
      if (!(k in patch)) return member(k, typedJson(current[k], childShape(shape, k)))
      const cur = current[k]
      const p = patch[k]
      if (cur === undefined || cur === null || !isObject(cur)) return member(k, prunedJson(p))
      if (!isObject(p)) return member(k, goRawJson(p))
      return member(k, mergedJson(cur, p, childShape(shape, k)))
    }).join(",")
  }}`
}

/** The JSON pointers a json patch writes, as paths of object keys and indices (`/spec/a` → `["spec", "a"]`). */
const opPaths = (patch: unknown): Array<ReadonlyArray<string>> =>
  (Array.isArray(patch) ? patch : []).flatMap((op: unknown) =>
    isObject(op) ? [op.path, op.from].filter((p): p is string => typeof p === "string") : []
  ).map((p) => p.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")))

/**
 * The text of a json patch applied to an object encoded as Go encodes it (json-patch v4's `Apply`): the objects on
 * an operation's path are re-marshaled with their keys sorted, the rest keeps the object's own encoding (values the
 * operations bring come as the patch spelled them).
 */
const jsonPatchedJson = (patched: unknown, patch: unknown, shape: Shape): string => {
  const paths = opPaths(patch)
  const targets = new Set(paths.map((p) => p.join("/")))
  const containers = new Set(paths.flatMap((p) => p.slice(0, -1).map((_, i) => p.slice(0, i + 1).join("/"))))
  const render = (value: unknown, at: ReadonlyArray<string>, s: Shape): string => {
    const key = at.join("/")
    if (targets.has(key) && !containers.has(key)) return goRawJson(value)
    if (Array.isArray(value)) return `[${value.map((v, i) => render(v, [...at, String(i)], itemShape(s))).join(",")}]`
    if (!isObject(value)) return goJson(value)
    if (at.length > 0 && !containers.has(key)) return typedJson(value, s)
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort()
    return `{${keys.map((k) => member(k, render(value[k], [...at, k], childShape(s, k)))).join(",")}}`
  }
  return render(patched, [], shape)
}

/** The patched object as upstream quotes it: Go's json-patch output over the object's Go encoding. */
const patchedJson = (
  rt: ResourceType,
  base: Obj,
  type: "json" | "merge",
  patch: unknown,
  patched: unknown
): string =>
  type === "merge" && isObject(patch)
    ? mergedJson(base, patch, kindShape(rt))
    : type === "json"
    ? jsonPatchedJson(patched, patch, kindShape(rt))
    : goJson(patched)
