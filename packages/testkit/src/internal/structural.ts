/**
 * Custom resources against their CRD's structural schema, as kube-apiserver's apiextensions handles them: pruning of
 * unknown fields, defaulting, then validation (kube-openapi's schema validator, embedded resources, list types and
 * `x-kubernetes-validations` CEL rules), with errors worded and shaped as upstream's field errors.
 *
 * Facts come from k8s.io/apiextensions-apiserver v0.32 (`pkg/apiserver/schema/{pruning,defaulting,objectmeta,
 * listtype,cel}`, `pkg/apiserver/validation`) and k8s.io/kube-openapi (`pkg/validation/{validate,errors,strfmt}`),
 * the wording and cause order checked against kube-apiserver v1.36.3 (values as 1.36 prints them: `null`, JSON for
 * structured values, none for an object in a CEL rule's message); the code is ours. One difference stays: upstream
 * lists the errors of sibling properties in Go map order (random per process), this module in schema order.
 */
import { type CelEnv, celEnv, celMethod, CelScalar, isCelError, isCelList, listType, parse, plan } from "@bufbuild/cel"
import { strings } from "@bufbuild/cel/ext"
import type { StatusCause } from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { deepEqual, goFloat, goJson, goPrint, isObject, type Obj } from "./json.js"

/** A JSONSchemaProps object (an `openAPIV3Schema` node). */
export type Schema = Obj

// -----------------------------------------------------------------------------------------------------------------
// field errors (k8s.io/apimachinery/pkg/util/validation/field)

/** A field error type: the `reason` of a StatusCause. */
export type ErrorType =
  | "FieldValueRequired"
  | "FieldValueInvalid"
  | "FieldValueTypeInvalid"
  | "FieldValueNotSupported"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueForbidden"
  | "FieldValueDuplicate"

const typeText: Record<ErrorType, string> = {
  FieldValueRequired: "Required value",
  FieldValueInvalid: "Invalid value",
  FieldValueTypeInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueForbidden: "Forbidden",
  FieldValueDuplicate: "Duplicate value"
}

const omitted: unique symbol = Symbol("omitted")

/** One field error: the path (`<nil>` for the root), the bad value (Go-formatted in the message) and the detail. */
export interface FieldError {
  readonly type: ErrorType
  readonly field: string
  readonly value: unknown
  readonly detail: string
}

/** A Go `%q` string (JSON quoting is the same for what objects hold, short of rare control characters). */
const goQuote = (s: string): string => JSON.stringify(s)

/** A decoded JSON value as Go's `%#v` prints `interface{}` (maps with sorted keys; kube-openapi's enum lists). */
const goSharp = (v: unknown, nested = false): string => {
  if (v === null || v === undefined) return nested ? "interface {}(nil)" : "<nil>"
  if (typeof v === "string") return goQuote(v)
  if (typeof v === "number") return goFloat(v)
  if (typeof v === "boolean") return String(v)
  if (Array.isArray(v)) return `[]interface {}{${v.map((x) => goSharp(x, true)).join(", ")}}`
  const o = v as Obj
  return `map[string]interface {}{${
    Object.keys(o).sort().map((k) => `${goQuote(k)}:${goSharp(o[k], true)}`).join(", ")
  }}`
}

/** The body of a field error (what follows `<field>: `), as `field.Error.ErrorBody` words it. */
export const errorBody = (e: FieldError): string => {
  let s: string
  const label = typeText[e.type]
  if (
    e.type === "FieldValueRequired" || e.type === "FieldValueForbidden" || e.type === "FieldValueTooLong" ||
    e.value === omitted
  ) {
    s = label
  } else {
    // 1.36: scalars as `%v`/`%q`, nil and structured values as JSON
    const v = e.value
    if (v === null || v === undefined) s = `${label}: null`
    else if (typeof v === "string") s = `${label}: ${goQuote(v)}`
    else if (typeof v === "number") s = `${label}: ${goFloat(v)}`
    else if (typeof v === "boolean") s = `${label}: ${v}`
    else s = `${label}: ${goJson(v)}`
  }
  return e.detail.length > 0 ? `${s}: ${e.detail}` : s
}

/** A field error as a StatusCause of a 422 Invalid. */
export const toCause = (e: FieldError): StatusCause => ({ reason: e.type, message: errorBody(e), field: e.field })

/** The message of a 422 Invalid: `<Kind>.<group> "<name>" is invalid: <errors>`, aggregated as upstream does. */
export const invalidMessage = (qualifiedKind: string, name: string, causes: ReadonlyArray<StatusCause>): string => {
  const seen: Array<string> = []
  for (const c of causes) {
    const body = c.message ?? ""
    const msg = c.field === undefined || c.field === "" ? body : `${c.field}: ${body}`
    if (!seen.includes(msg)) seen.push(msg)
  }
  if (seen.length === 0) return `${qualifiedKind} ${goQuote(name)} is invalid`
  const text = seen.length === 1 ? seen[0]! : `[${seen.join(", ")}]`
  return `${qualifiedKind} ${goQuote(name)} is invalid: ${text}`
}

// -----------------------------------------------------------------------------------------------------------------
// schema helpers

const isSchema = (s: unknown): s is Schema => isObject(s)
const propsOf = (s: Schema | undefined): Obj | undefined => (isObject(s?.properties) ? s.properties : undefined)
/** The schema of a map's values: `additionalProperties` as a schema (`true` means any value, unpruned). */
const additionalOf = (s: Schema | undefined): Schema | undefined => {
  const ap = s?.additionalProperties
  if (isSchema(ap)) return ap
  if (ap === true) return { "x-kubernetes-preserve-unknown-fields": true }
  return undefined
}
const itemsOf = (s: Schema | undefined): Schema | undefined => (isSchema(s?.items) ? s.items : undefined)
const preserves = (s: Schema | undefined): boolean => s?.["x-kubernetes-preserve-unknown-fields"] === true
const embedded = (s: Schema | undefined): boolean => s?.["x-kubernetes-embedded-resource"] === true
const hasOwn = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)
const childSchema = (s: Schema | undefined, key: string): Schema | undefined => {
  const props = propsOf(s)
  if (props !== undefined && hasOwn(props, key) && isSchema(props[key])) return props[key]
  return additionalOf(s)
}

const metaFields = new Set(["apiVersion", "kind", "metadata"])

const objectMetaFields = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields"
])

const appendKey = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

// -----------------------------------------------------------------------------------------------------------------
// pruning

/**
 * Drops the fields the schema does not specify (outside `x-kubernetes-preserve-unknown-fields`), in place, and
 * returns their paths sorted (`spec.foo`, `spec.items[0].bar`). At the resource root and in embedded resources
 * `apiVersion`, `kind` and `metadata` are kept; unknown `metadata` fields of those are dropped too (ObjectMeta).
 */
export const prune = (obj: unknown, schema: Schema | undefined, isResourceRoot = true): Array<string> => {
  const paths: Array<string> = []
  const root = isResourceRoot ? { ...schema, "x-kubernetes-embedded-resource": true } : schema
  pruneNode(obj, root, "", paths)
  coerceMetadata(obj, root, "", paths)
  return paths.sort()
}

const pruneNode = (x: unknown, s: Schema | undefined, path: string, paths: Array<string>): void => {
  if (s !== undefined && preserves(s)) return skipPrune(x, s, path, paths)
  if (Array.isArray(x)) {
    x.forEach((v, i) => pruneNode(v, s === undefined ? undefined : itemsOf(s), `${path}[${i}]`, paths))
    return
  }
  if (!isObject(x)) return
  if (s === undefined) {
    for (const k of Object.keys(x)) {
      paths.push(appendKey(path, k))
      delete x[k]
    }
    return
  }
  pruneFields(x, s, path, paths, false)
}

const skipPrune = (x: unknown, s: Schema, path: string, paths: Array<string>): void => {
  if (Array.isArray(x)) {
    const items = itemsOf(s)
    if (items !== undefined) x.forEach((v, i) => skipPrune(v, items, `${path}[${i}]`, paths))
    return
  }
  if (!isObject(x)) return
  pruneFields(x, s, path, paths, true)
}

/**
 * Prunes each field of an object under the schema that specifies it (`properties`, else `additionalProperties`); a
 * field neither specifies is dropped, unless `keepUnknown` (`x-kubernetes-preserve-unknown-fields` at this level).
 */
const pruneFields = (x: Obj, s: Schema, path: string, paths: Array<string>, keepUnknown: boolean): void => {
  const props = propsOf(s)
  const additional = additionalOf(s)
  for (const k of Object.keys(x)) {
    if (embedded(s) && metaFields.has(k)) continue
    if (props !== undefined && hasOwn(props, k)) pruneNode(x[k], props[k], appendKey(path, k), paths)
    else if (additional !== undefined) pruneNode(x[k], additional, appendKey(path, k), paths)
    else if (!keepUnknown) {
      if (!metaFields.has(k) || path !== "") paths.push(appendKey(path, k))
      delete x[k]
    }
  }
}

/** Drops unknown ObjectMeta fields of the root and of embedded resources (upstream decodes them into ObjectMeta). */
const coerceMetadata = (x: unknown, s: Schema | undefined, path: string, paths: Array<string>): void => {
  if (Array.isArray(x)) {
    x.forEach((v, i) => coerceMetadata(v, itemsOf(s), `${path}[${i}]`, paths))
    return
  }
  if (!isObject(x) || s === undefined) return
  if (embedded(s) && isObject(x.metadata)) {
    for (const k of Object.keys(x.metadata)) {
      if (!objectMetaFields.has(k)) {
        paths.push(appendKey(appendKey(path, "metadata"), k))
        delete x.metadata[k]
      }
    }
  }
  for (const k of Object.keys(x)) {
    if (embedded(s) && metaFields.has(k)) continue
    const child = childSchema(s, k)
    if (child !== undefined) coerceMetadata(x[k], child, appendKey(path, k), paths)
  }
}

/** Removes `null` values of non-nullable fields without a default (before defaulting, as upstream). */
export const pruneNulls = (x: unknown, s: Schema | undefined): void => {
  if (Array.isArray(x)) {
    for (const v of x) pruneNulls(v, itemsOf(s))
    return
  }
  if (!isObject(x)) return
  for (const k of Object.keys(x)) {
    const child = childSchema(s, k)
    if (x[k] === null && child !== undefined && child.nullable !== true && child.default === undefined) delete x[k]
    else pruneNulls(x[k], child)
  }
}

// -----------------------------------------------------------------------------------------------------------------
// defaulting

const copy = <A>(v: A): A => (v === undefined ? v : JSON.parse(JSON.stringify(v)))
const nonNullableNull = (x: unknown, s: Schema | undefined): boolean =>
  x === null && s !== undefined && s.nullable !== true

/** Applies `default` values in place: a missing field (or a null one not nullable) gets its schema's default. */
export const applyDefaults = (x: unknown, s: Schema | undefined): void => {
  if (s === undefined) return
  if (Array.isArray(x)) {
    const items = itemsOf(s)
    for (let i = 0; i < x.length; i++) {
      if (items !== undefined && nonNullableNull(x[i], items) && items.default !== undefined) x[i] = copy(items.default)
      applyDefaults(x[i], items)
    }
    return
  }
  if (!isObject(x)) return
  const props = propsOf(s)
  if (props !== undefined) {
    for (const [k, prop] of Object.entries(props)) {
      if (!isSchema(prop) || prop.default === undefined) continue
      if (!hasOwn(x, k) || nonNullableNull(x[k], prop)) x[k] = copy(prop.default)
    }
  }
  const additional = additionalOf(s)
  for (const k of Object.keys(x)) {
    if (props !== undefined && hasOwn(props, k)) applyDefaults(x[k], props[k])
    else if (additional !== undefined) {
      if (nonNullableNull(x[k], additional) && additional.default !== undefined) x[k] = copy(additional.default)
      applyDefaults(x[k], additional)
    }
  }
}

// -----------------------------------------------------------------------------------------------------------------
// schema validation (kube-openapi's SchemaValidator, errors converted as apiextensions converts them)

/** A kube-openapi error: its path (`Name`), code, message and the value/limit it carries. */
interface OpenApiError {
  readonly name: string
  readonly code: "type" | "required" | "enum" | "tooLong" | "maxItems" | "maxProperties" | "other" | "composite"
  readonly message: string
  readonly value?: unknown
  readonly valid?: number
  readonly values?: ReadonlyArray<unknown>
}

const supportedFormats = new Set([
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "datetime"
])

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (mo < 1 || mo > 12 || d < 1) return false
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
  return d <= days[mo - 1]!
}

const isIPv4 = (s: string): boolean =>
  /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s) && s.split(".").every((p) => Number(p) <= 255)

const isIPv6 = (s: string): boolean => {
  if (!s.includes(":")) return false
  let body = s
  const lastColon = s.lastIndexOf(":")
  const tail = s.slice(lastColon + 1)
  let groups = 8
  if (tail.includes(".")) {
    if (!isIPv4(tail)) return false
    body = s.slice(0, lastColon + 1) + "0"
    groups = 7
  }
  const halves = body.split("::")
  if (halves.length > 2) return false
  const parts = (h: string): Array<string> => (h === "" ? [] : h.split(":"))
  const all = halves.flatMap(parts)
  if (!all.every((p) => /^[0-9a-fA-F]{1,4}$/.test(p))) return false
  return halves.length === 2 ? all.length < groups : all.length === groups
}

const durationUnits = new Set(
  [
    "ns",
    "nano",
    "us",
    "µs",
    "micro",
    "ms",
    "milli",
    "s",
    "sec",
    "m",
    "min",
    "h",
    "hr",
    "hour",
    "d",
    "day",
    "w",
    "wk",
    "week"
  ]
    .flatMap((u) => [u, `${u}s`])
)

const isDuration = (s: string): boolean => {
  if (/^([-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(s) || s === "0") return true
  const matches = [...s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)]
  return matches.length > 0 && matches.every((m) => durationUnits.has(m[2]!))
}

const hostChar = "a-zA-Z0-9\\p{S}\\p{L}"
/** strfmt's HostnamePattern. */
const hostnamePattern = new RegExp(
  `^([${hostChar}]((-?[${hostChar}]{0,62})?)|([${hostChar}](([${hostChar}-]{0,61}[${hostChar}])?)(\\.)){1,}` +
    "([a-zA-Z\\p{L}]){2,63})$",
  "u"
)
const octet = "\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*"
const rgbPattern = new RegExp(`^rgb\\(${octet},${octet},${octet}\\)$`)

const formatValid: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: (s) => /^([a-zA-Z][a-zA-Z0-9+.-]*:\S+|\/\S*)$/.test(s),
  email: (s) => /^[^\s@<>]+@[^\s@<>]+$/.test(s) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(s),
  hostname: (s) =>
    s.length <= 255 &&
    hostnamePattern.test(s) &&
    s.split(".").every((p) => p.length <= 63),
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: (s) => {
    const [ip, bits, ...rest] = s.split("/")
    if (rest.length > 0 || bits === undefined || !/^\d+$/.test(bits)) return false
    if (isIPv4(ip!)) return Number(bits) <= 32
    return isIPv6(ip!) && Number(bits) <= 128
  },
  mac: (s) =>
    /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s) || /^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$/.test(s) ||
    /^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/.test(s),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid4: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  uuid5: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  isbn: (s) => /^(?:[0-9]{9}X|[0-9]{10})$/.test(s.replace(/[\s-]/g, "")) || /^[0-9]{13}$/.test(s.replace(/[\s-]/g, "")),
  isbn10: (s) => /^(?:[0-9]{9}X|[0-9]{10})$/.test(s.replace(/[\s-]/g, "")),
  isbn13: (s) => /^[0-9]{13}$/.test(s.replace(/[\s-]/g, "")),
  creditcard: (s) => /^[0-9]{13,19}$/.test(s.replace(/[^0-9]/g, "")),
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => rgbPattern.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: (s) => {
    if (s.length < 4) return false
    const parts = s.toLowerCase().split("t")
    if (parts.length < 2 || !isDate(parts[0]!)) return false
    const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1]!)
    return m !== null && m[1]! <= "23" && m[2]! <= "59" && m[3]! <= "59"
  }
}

const regexCache = new Map<string, RegExp | string>()
/** A compiled `pattern` (ECMAScript syntax standing in for Go's RE2), or the compile error text. */
const compilePattern = (pattern: string): RegExp | string => {
  let re = regexCache.get(pattern)
  if (re === undefined) {
    try {
      re = new RegExp(pattern, "u")
    } catch {
      try {
        re = new RegExp(pattern)
      } catch (e) {
        re = `error parsing regexp: ${e instanceof Error ? e.message : String(e)}`
      }
    }
    regexCache.set(pattern, re)
  }
  return re
}

/** Whether Go's unstructured JSON decoding makes a number an int64 (whole and in range) rather than a float64. */
const isInt64 = (n: number): boolean => Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63

/** The JSON type kube-openapi sees for a decoded value (an int64 is an integer, as Go decodes it). */
const valueType = (v: unknown): string => {
  if (typeof v === "string") return "string"
  if (typeof v === "boolean") return "boolean"
  if (typeof v === "number") return isInt64(v) ? "integer" : "number"
  if (Array.isArray(v)) return "array"
  return "object"
}

const schemaTypes = (s: Schema): Array<string> => {
  if (s["x-kubernetes-int-or-string"] === true) return ["integer", "string"]
  return typeof s.type === "string" && s.type !== "" ? [s.type] : []
}

class Result {
  readonly errors: Array<OpenApiError> = []
  matchCount = 0
  add(e: OpenApiError): void {
    if (!this.errors.some((x) => x.message === e.message)) this.errors.push(e)
  }
  merge(other: Result): void {
    for (const e of other.errors) this.add(e)
    this.matchCount += other.matchCount
  }
  get valid(): boolean {
    return this.errors.length === 0
  }
}

const int32 = 2 ** 31
/**
 * kube-openapi's capacity check of a number against its schema's type and format (`IsValueValidAgainstRange`): an
 * integer field must hold a whole number that fits its format (int64 unless int32/uint32/uint64), a float one a
 * float32. A plain error, reported without a field (`<nil>: Invalid value: "": Checked value must be …`).
 */
const rangeError = (data: number, s: Schema, path: string): string | undefined => {
  const type = typeof s.type === "string" ? s.type : ""
  const format = typeof s.format === "string" ? s.format : ""
  const whole = Number.isInteger(data)
  let fits = true
  if (type === "integer") {
    if (format === "int32") fits = whole && data >= -int32 && data < int32
    else if (format === "uint32") fits = whole && data >= 0 && data < 2 * int32
    else if (format === "uint64") fits = whole && data >= 0 && data < 2 ** 64
    else fits = isInt64(data)
  } else if (format === "float" || format === "float32") fits = Math.abs(data) <= 3.4028234663852886e38
  if (fits) return undefined
  return format !== ""
    ? `Checked value must be of type ${type} with format ${format} in ${path}`
    : `Checked value must be of type ${type} (default format) in ${path}`
}

const typeError = (path: string, typeName: string, value: unknown): OpenApiError => ({
  name: path,
  code: "type",
  message: typeof value === "string"
    ? `${path} in body must be of type ${typeName}: ${goQuote(value)}`
    : `${path} in body must be of type ${typeName}`,
  value
})

const other = (path: string, message: string, value: unknown): OpenApiError => ({
  name: path,
  code: "other",
  message,
  value
})

const enumMatches = (data: unknown, values: ReadonlyArray<unknown>): boolean =>
  values.some((v) => v !== null && deepEqual(data, v))

/** The correlated old value of a node on an update (ratcheting), absent when the node has none. */
type Old = { readonly value: unknown } | undefined

const oldChild = (old: Old, key: string): Old =>
  old !== undefined && isObject(old.value) && hasOwn(old.value, key) ? { value: old.value[key] } : undefined

/** The old item a map-list item correlates with (by its `x-kubernetes-list-map-keys`); other lists do not. */
const oldItem = (old: Old, s: Schema, item: unknown): Old => {
  const keys = s["x-kubernetes-list-map-keys"]
  if (old === undefined || !Array.isArray(old.value) || s["x-kubernetes-list-type"] !== "map" || !isObject(item)) {
    return undefined
  }
  if (!Array.isArray(keys)) return undefined
  const match = old.value.find((o) => isObject(o) && keys.every((k: string) => deepEqual(o[k], item[k])))
  return match === undefined ? undefined : { value: match }
}

const validateNode = (data: unknown, s: Schema, path: string, old?: Old): Result => {
  const result = new Result()
  // Ratcheting (CRDValidationRatcheting, on in 1.32): an update does not fail on a value it left unchanged.
  if (old !== undefined && deepEqual(data, old.value)) return result
  const types = schemaTypes(s)
  // type
  if (data === null || data === undefined) {
    if (types.length > 0 && s.nullable !== true) result.add(typeError(path, types.join(","), "null"))
    if (Array.isArray(s.enum) && s.enum.length > 0) {
      result.add({
        name: path,
        code: "enum",
        message: `${path} in body should be one of ${goList(s.enum)}`,
        value: null,
        values: s.enum
      })
    }
    result.matchCount++
    return result
  }
  const t = valueType(data)
  if (types.length > 0) {
    const ok = types.includes(t) || (t === "integer" && types.includes("number"))
    if (!ok) result.add(typeError(path, types.join(","), t))
  }
  // anyOf / oneOf / allOf / not
  result.merge(validateComposition(data, s, path, old))
  // string
  if (typeof data === "string") {
    const length = [...data].length
    if (typeof s.maxLength === "number" && length > s.maxLength) {
      result.add({
        name: path,
        code: "tooLong",
        message: `${path} in body should be at most ${s.maxLength} chars long`,
        value: data,
        valid: s.maxLength
      })
    } else if (typeof s.minLength === "number" && length < s.minLength) {
      result.add(other(path, `${path} in body should be at least ${s.minLength} chars long`, data))
    } else if (typeof s.pattern === "string" && s.pattern !== "") {
      const re = compilePattern(s.pattern)
      if (typeof re === "string") {
        result.add(other(path, `${path} in body should match '${s.pattern}, but pattern is invalid: ${re}'`, data))
      } else if (!re.test(data)) result.add(other(path, `${path} in body should match '${s.pattern}'`, data))
    }
    // format
    if (typeof s.format === "string") {
      const normalized = s.format.replace(/-/g, "")
      if (supportedFormats.has(normalized) && !formatValid[normalized]!(data)) {
        result.add(typeError(path, s.format, data))
      }
    }
  }
  // number
  if (typeof data === "number") {
    const range = rangeError(data, s, path)
    if (range !== undefined) result.add({ name: "", code: "other", message: range, value: "" })
    if (typeof s.multipleOf === "number") {
      const f = s.multipleOf
      if (f <= 0) {
        result.add(other(path, `factor MultipleOf declared for ${path} must be positive: ${goFloat(f)}`, data))
      } else {
        const mult = f < 1 ? (1 / f) * data : data / f
        if (!Number.isInteger(mult)) {
          result.add(other(path, `${path} in body should be a multiple of ${goFloat(f)}`, data))
        }
      }
    }
    if (typeof s.minimum === "number") {
      const ex = s.exclusiveMinimum === true
      if (ex ? data <= s.minimum : data < s.minimum) {
        result.add(
          other(
            path,
            `${path} in body should be greater than ${ex ? "" : "or equal to "}${goFloat(s.minimum)}`,
            data
          )
        )
      }
    }
    if (typeof s.maximum === "number") {
      const ex = s.exclusiveMaximum === true
      if (ex ? data >= s.maximum : data > s.maximum) {
        result.add(
          other(path, `${path} in body should be less than ${ex ? "" : "or equal to "}${goFloat(s.maximum)}`, data)
        )
      }
    }
  }
  // array
  if (Array.isArray(data)) {
    const items = itemsOf(s)
    if (items !== undefined) {
      data.forEach((v, i) => result.merge(validateNode(v, items, `${path}[${i}]`, oldItem(old, s, v))))
    }
    if (typeof s.minItems === "number" && data.length < s.minItems) {
      result.add(other(path, `${path} in body should have at least ${s.minItems} items`, data.length))
    }
    if (typeof s.maxItems === "number" && data.length > s.maxItems) {
      result.add({
        name: path,
        code: "maxItems",
        message: `${path} in body should have at most ${s.maxItems} items`,
        value: data.length,
        valid: s.maxItems
      })
    }
    if (s.uniqueItems === true && data.some((v, i) => data.slice(0, i).some((u) => deepEqual(u, v)))) {
      result.add({ name: path, code: "other", message: `${path} in body shouldn't contain duplicates` })
    }
  }
  // enum
  if (Array.isArray(s.enum) && s.enum.length > 0 && !enumMatches(data, s.enum)) {
    result.add({
      name: path,
      code: "enum",
      message: `${path} in body should be one of ${goList(s.enum)}`,
      value: data,
      values: s.enum
    })
  }
  // object
  if (isObject(data)) {
    const n = Object.keys(data).length
    if (typeof s.minProperties === "number" && n < s.minProperties) {
      result.add(other(path, `${path} in body should have at least ${s.minProperties} properties`, n))
    }
    if (typeof s.maxProperties === "number" && n > s.maxProperties) {
      result.add({
        name: path,
        code: "maxProperties",
        message: `${path} in body should have at most ${s.maxProperties} properties`,
        value: n,
        valid: s.maxProperties
      })
    }
    const props = propsOf(s) ?? {}
    const additional = isSchema(s.additionalProperties) ? s.additionalProperties : undefined
    if (s.additionalProperties === false) {
      for (const k of Object.keys(data)) {
        if (!hasOwn(props, k)) {
          result.add({ name: path, code: "other", message: `${path}.${k} in body is a forbidden property` })
        }
      }
    } else if (additional !== undefined) {
      for (const [k, v] of Object.entries(data)) {
        if (!hasOwn(props, k)) result.merge(validateNode(v, additional, `${path}.${k}`, oldChild(old, k)))
      }
    }
    for (const [k, prop] of Object.entries(props)) {
      if (hasOwn(data, k) && isSchema(prop)) {
        result.merge(validateNode(data[k], prop, appendKey(path, k), oldChild(old, k)))
      }
    }
    if (Array.isArray(s.required)) {
      for (const k of s.required as Array<string>) {
        if (!hasOwn(data, k)) {
          result.add({ name: `${path}.${k}`, code: "required", message: `${path}.${k} in body is required` })
        }
      }
    }
  }
  result.matchCount++
  return result
}

/** A Go `%v` of a `[]interface{}` (enum values: strings unquoted). */
const goList = (values: ReadonlyArray<unknown>): string =>
  `[${
    values.map((v) =>
      typeof v === "string" ? v : typeof v === "number" ? goFloat(v) : v === null ? "<nil>" : goSharp(v).replace(
        /^map\[string\]interface \{\}\{|^\[\]interface \{\}\{/,
        (m) => (m.startsWith("map") ? "map[" : "[")
      )
    ).join(" ")
  }]`

const validateComposition = (data: unknown, s: Schema, path: string, old: Old): Result => {
  const main = new Result()
  const anyOf = Array.isArray(s.anyOf) ? (s.anyOf as Array<Schema>) : []
  if (anyOf.length > 0) {
    let best: Result | undefined
    let succeeded = false
    for (const sub of anyOf) {
      const r = validateNode(data, sub, path, old)
      if (r.valid) {
        succeeded = true
        best = undefined
        break
      }
      if (best === undefined || r.matchCount > best.matchCount) best = r
    }
    if (!succeeded) {
      main.add({ name: "", code: "composite", message: `${goQuote(path)} must validate at least one schema (anyOf)` })
    }
    if (best !== undefined) main.merge(best)
  }
  const oneOf = Array.isArray(s.oneOf) ? (s.oneOf as Array<Schema>) : []
  if (oneOf.length > 0) {
    let best: Result | undefined
    let validated = 0
    for (const sub of oneOf) {
      const r = validateNode(data, sub, path, old)
      if (r.valid) {
        validated++
        best = undefined
        continue
      }
      if (validated === 0 && (best === undefined || r.matchCount > best.matchCount)) best = r
    }
    if (validated !== 1) {
      const extra = validated === 0 ? "Found none valid" : `Found ${validated} valid alternatives`
      main.add({
        name: "",
        code: "composite",
        message: `${goQuote(path)} must validate one and only one schema (oneOf). ${extra}`
      })
      if (best !== undefined) main.merge(best)
    }
  }
  const allOf = Array.isArray(s.allOf) ? (s.allOf as Array<Schema>) : []
  if (allOf.length > 0) {
    let validated = 0
    for (const sub of allOf) {
      const r = validateNode(data, sub, path, old)
      if (r.valid) validated++
      main.merge(r)
    }
    if (validated !== allOf.length) {
      main.add({
        name: "",
        code: "composite",
        message: `${goQuote(path)} must validate all the schemas (allOf)${validated === 0 ? ". None validated" : ""}`
      })
    }
  }
  if (isSchema(s.not) && validateNode(data, s.not, path, old).valid) {
    main.add({ name: "", code: "composite", message: `${goQuote(path)} must not validate the schema (not)` })
  }
  return main
}

const fieldOf = (name: string): string => {
  const trimmed = name.startsWith(".") ? name.slice(1) : name
  return trimmed === "" ? "<nil>" : trimmed
}

/** kube-openapi errors as apiextensions turns them into field errors (`kubeOpenAPIResultToFieldErrors`). */
const toFieldError = (e: OpenApiError): FieldError => {
  const field = e.code === "composite" ? "<nil>" : fieldOf(e.name)
  switch (e.code) {
    case "required":
      return { type: "FieldValueRequired", field, value: "", detail: "" }
    case "enum":
      return {
        type: "FieldValueNotSupported",
        field,
        value: e.value,
        detail: `supported values: ${
          (e.values ?? []).map((v) => goQuote(typeof v === "string" ? v : JSON.stringify(v))).join(", ")
        }`
      }
    case "tooLong":
      return { type: "FieldValueTooLong", field, value: omitted, detail: `may not be more than ${e.valid} bytes` }
    case "maxItems":
    case "maxProperties":
      return { type: "FieldValueTooMany", field, value: e.value, detail: `must have at most ${e.valid} items` }
    case "type":
      return { type: "FieldValueTypeInvalid", field, value: e.value ?? "", detail: e.message }
    default:
      return { type: "FieldValueInvalid", field, value: e.value ?? "", detail: e.message }
  }
}

/**
 * Validates a value against a schema as kube-openapi's SchemaValidator does, as field errors; with the old value
 * (an update), values left unchanged are not held against it (ratcheting).
 */
export const validateSchema = (value: unknown, schema: Schema, old?: { readonly value: unknown }): Array<FieldError> =>
  validateNode(value, schema, "", old).errors.map(toFieldError)

// -----------------------------------------------------------------------------------------------------------------
// embedded resources and list types

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/

const validateEmbedded = (x: unknown, s: Schema | undefined, path: string, errs: Array<FieldError>): void => {
  if (s === undefined) return
  if (Array.isArray(x)) {
    const items = itemsOf(s)
    x.forEach((v, i) => validateEmbedded(v, items, `${path}[${i}]`, errs))
    return
  }
  if (!isObject(x)) return
  if (embedded(s) && path !== "") {
    const at = (k: string) => appendKey(path, k)
    if (!hasOwn(x, "apiVersion")) {
      errs.push({ type: "FieldValueRequired", field: at("apiVersion"), value: "", detail: "must not be empty" })
    }
    if (!hasOwn(x, "kind")) {
      errs.push({ type: "FieldValueRequired", field: at("kind"), value: "", detail: "must not be empty" })
    }
    if (hasOwn(x, "apiVersion")) {
      const v = x.apiVersion
      if (typeof v !== "string") {
        errs.push({ type: "FieldValueInvalid", field: at("apiVersion"), value: v, detail: "must be a string" })
      } else if (v === "") {
        errs.push({ type: "FieldValueInvalid", field: at("apiVersion"), value: v, detail: "must not be empty" })
      } else if (v.split("/").length > 2) {
        errs.push({
          type: "FieldValueInvalid",
          field: at("apiVersion"),
          value: v,
          detail: `unexpected GroupVersion string: ${v}`
        })
      }
    }
    if (hasOwn(x, "kind")) {
      const v = x.kind
      if (typeof v !== "string") {
        errs.push({ type: "FieldValueInvalid", field: at("kind"), value: v, detail: "must be a string" })
      } else if (v === "") {
        errs.push({ type: "FieldValueInvalid", field: at("kind"), value: v, detail: "must not be empty" })
      } else if (v.length > 63 || !dns1035.test(v.toLowerCase())) {
        errs.push({
          type: "FieldValueInvalid",
          field: at("kind"),
          value: v,
          detail:
            "may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        })
      }
    }
  }
  for (const k of Object.keys(x)) {
    if (embedded(s) && metaFields.has(k)) continue
    validateEmbedded(x[k], childSchema(s, k), appendKey(path, k), errs)
  }
}

const validateListTypes = (x: unknown, s: Schema | undefined, path: string, errs: Array<FieldError>): void => {
  if (s === undefined) return
  if (Array.isArray(x)) {
    const type = s["x-kubernetes-list-type"]
    if (type === "set") {
      x.forEach((v, i) => {
        if (x.slice(0, i).some((u) => deepEqual(u, v))) {
          errs.push({ type: "FieldValueDuplicate", field: `${path}[${i}]`, value: v, detail: "" })
        }
      })
    } else if (type === "map" && Array.isArray(s["x-kubernetes-list-map-keys"])) {
      const keys = s["x-kubernetes-list-map-keys"] as Array<string>
      const keyOf = (v: unknown): Obj => {
        const out: Obj = {}
        if (isObject(v)) { for (const k of keys) if (hasOwn(v, k)) out[k] = v[k] }
        return out
      }
      x.forEach((v, i) => {
        const key = keyOf(v)
        if (x.slice(0, i).some((u) => deepEqual(keyOf(u), key))) {
          errs.push({ type: "FieldValueDuplicate", field: `${path}[${i}]`, value: key, detail: "" })
        }
      })
    }
    const items = itemsOf(s)
    x.forEach((v, i) => validateListTypes(v, items, `${path}[${i}]`, errs))
    return
  }
  if (!isObject(x)) return
  for (const k of Object.keys(x)) validateListTypes(x[k], childSchema(s, k), appendKey(path, k), errs)
}

// -----------------------------------------------------------------------------------------------------------------
// CEL (x-kubernetes-validations) with @bufbuild/cel

/** The value of a field as CEL sees it: integers as int (bigint), objects as maps, by the schema. */
const toCel = (v: unknown, s: Schema | undefined): unknown => {
  if (v === null || v === undefined) return null
  if (typeof v === "number") {
    const types = s === undefined ? [] : schemaTypes(s)
    if (types.includes("number")) return v
    return Number.isInteger(v) ? BigInt(v) : v
  }
  if (Array.isArray(v)) return v.map((x) => toCel(x, itemsOf(s)))
  if (isObject(v)) {
    const m = new Map<string, unknown>()
    for (const [k, x] of Object.entries(v)) m.set(k, toCel(x, childSchema(s, k)))
    return m
  }
  return v
}

const fromCelNumber = (v: unknown): number => (typeof v === "bigint" ? Number(v) : Number(v))
const celItems = (list: unknown): Array<unknown> => (isCelList(list) ? [...list] : [])

/** Kubernetes' list library (`sum`, `min`, `max`, `isSorted`, `indexOf`, `lastIndexOf`) and regex `find`/`findAll`. */
const k8sFuncs = [
  celMethod("sum", listType(CelScalar.INT), [], CelScalar.INT, function() {
    return celItems(this).reduce<bigint>((a, b) => a + (b as bigint), 0n)
  }),
  celMethod("sum", listType(CelScalar.DOUBLE), [], CelScalar.DOUBLE, function() {
    return celItems(this).reduce<number>((a, b) => a + fromCelNumber(b), 0)
  }),
  celMethod("min", listType(CelScalar.INT), [], CelScalar.INT, function() {
    const xs = celItems(this) as Array<bigint>
    if (xs.length === 0) throw new Error("min called on empty list")
    return xs.reduce((a, b) => (b < a ? b : a))
  }),
  celMethod("max", listType(CelScalar.INT), [], CelScalar.INT, function() {
    const xs = celItems(this) as Array<bigint>
    if (xs.length === 0) throw new Error("max called on empty list")
    return xs.reduce((a, b) => (b > a ? b : a))
  }),
  celMethod("isSorted", listType(CelScalar.DYN), [], CelScalar.BOOL, function() {
    const xs = celItems(this) as Array<any>
    return xs.every((x, i) => i === 0 || xs[i - 1] <= x)
  }),
  celMethod("indexOf", listType(CelScalar.DYN), [CelScalar.DYN], CelScalar.INT, function(x) {
    return BigInt(celItems(this).findIndex((y) => y === x))
  }),
  celMethod("lastIndexOf", listType(CelScalar.DYN), [CelScalar.DYN], CelScalar.INT, function(x) {
    const xs = celItems(this)
    for (let i = xs.length - 1; i >= 0; i--) if (xs[i] === x) return BigInt(i)
    return -1n
  }),
  celMethod("find", CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function(pattern) {
    const m = new RegExp(pattern, "u").exec(this)
    return m === null ? "" : m[0]
  }),
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function(pattern) {
    return [...this.matchAll(new RegExp(pattern, "gu"))].map((m) => m[0])
  })
]

let env: CelEnv | undefined
const celEnvironment = (): CelEnv => (env ??= celEnv({ funcs: [...strings, ...k8sFuncs] }))

type Program = (ctx: Record<string, unknown>) => unknown
const programs = new Map<string, Program | string>()
/** A planned CEL program, or the compile error text. */
const compile = (expr: string): Program | string => {
  let p = programs.get(expr)
  if (p === undefined) {
    try {
      const run = plan(celEnvironment(), parse(expr))
      p = (ctx) => run(ctx as never)
    } catch (e) {
      p = e instanceof Error ? e.message : String(e)
    }
    programs.set(expr, p)
  }
  return p
}

const usesOldSelf = (rule: string): boolean => /\boldSelf\b/.test(rule)

const fieldPathChild = (path: string, child: string): string => {
  const c = child.startsWith(".") ? child.slice(1) : child
  return path === "" ? c : `${path}.${c}`
}
const celField = (path: string): string => (path === "" ? "<nil>" : path)

const evalRules = (
  x: unknown,
  old: unknown,
  hasOld: boolean,
  s: Schema,
  path: string,
  errs: Array<FieldError>
): void => {
  const rules = s["x-kubernetes-validations"]
  if (!Array.isArray(rules) || rules.length === 0) return
  const type = typeof s.type === "string" ? s.type : ""
  let self: unknown
  let oldSelf: unknown
  for (const rule of rules as Array<Obj>) {
    if (typeof rule?.rule !== "string" || rule.rule.trim() === "") continue
    const ruleText = rule.rule as string
    const message = typeof rule.message === "string" ? rule.message.trim() : ""
    const ruleString = message !== "" ? message : ruleText.trim()
    const transition = usesOldSelf(ruleText)
    // `optionalOldSelf` rules see oldSelf as a CEL optional, which @bufbuild/cel lacks: they are not evaluated.
    if (rule.optionalOldSelf === true || (transition && !hasOld)) continue
    // Ratcheting: a rule without oldSelf does not fail an update on a value the update left unchanged.
    if (!transition && hasOld && deepEqual(x, old)) continue
    const program = compile(ruleText)
    if (typeof program === "string") {
      errs.push({
        type: "FieldValueInvalid",
        field: celField(path),
        value: type,
        detail: `rule compile error: ${program}`
      })
      continue
    }
    self ??= toCel(x, s)
    if (hasOld) oldSelf ??= toCel(old, s)
    const ctx: Record<string, unknown> = { self }
    if (transition) ctx.oldSelf = oldSelf
    let result: unknown
    try {
      result = program(ctx)
    } catch (e) {
      result = e
    }
    if (isCelError(result) || result instanceof Error) {
      const text = (result as Error).message
      const detail = text.startsWith("found no matching overload")
        ? `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleString}`
        : `${text.replace(/^field not found: /, "no such key: ")} evaluating rule: ${ruleString}`
      errs.push({ type: "FieldValueInvalid", field: celField(path), value: type, detail })
      continue
    }
    if (result === true) continue
    const field = celField(
      typeof rule.fieldPath === "string" && rule.fieldPath !== "" ? fieldPathChild(path, rule.fieldPath) : path
    )
    let detail = message !== "" ? message : `failed rule: ${ruleString}`
    // 1.36 shows the value itself, but not an object's or a list's
    const shown = isObject(x) || Array.isArray(x) ? omitted : x
    if (typeof rule.messageExpression === "string" && rule.messageExpression !== "") {
      const msgProgram = compile(rule.messageExpression)
      let msg: unknown
      try {
        msg = typeof msgProgram === "string" ? undefined : msgProgram({ self, ...(hasOld ? { oldSelf } : {}) })
      } catch {
        msg = undefined
      }
      if (typeof msg === "string" && msg.trim() !== "" && !/\n/.test(msg.trim())) detail = msg.trim()
    }
    switch (rule.reason) {
      case "FieldValueForbidden":
        errs.push({ type: "FieldValueForbidden", field, value: "", detail })
        break
      case "FieldValueRequired":
        errs.push({ type: "FieldValueRequired", field, value: "", detail })
        break
      case "FieldValueDuplicate":
        errs.push({ type: "FieldValueDuplicate", field, value: shown, detail: "" })
        break
      default:
        errs.push({ type: "FieldValueInvalid", field, value: shown, detail })
    }
  }
}

/** Walks the object evaluating `x-kubernetes-validations`; `old` correlates by field name and map-list keys. */
const validateCel = (
  x: unknown,
  old: unknown,
  hasOld: boolean,
  s: Schema | undefined,
  path: string,
  errs: Array<FieldError>
): void => {
  if (s === undefined || x === null || x === undefined) return
  evalRules(x, old, hasOld, s, path, errs)
  if (Array.isArray(x)) {
    const items = itemsOf(s)
    if (items === undefined) return
    const keys = s["x-kubernetes-list-type"] === "map" && Array.isArray(s["x-kubernetes-list-map-keys"])
      ? (s["x-kubernetes-list-map-keys"] as Array<string>)
      : undefined
    const oldItems = hasOld && Array.isArray(old) ? old : []
    x.forEach((v, i) => {
      const match = keys === undefined || !isObject(v)
        ? undefined
        : oldItems.find((o) => isObject(o) && keys.every((k) => deepEqual(o[k], v[k])))
      validateCel(v, match, match !== undefined, items, `${path}[${i}]`, errs)
    })
    return
  }
  if (!isObject(x)) return
  const props = propsOf(s)
  const additional = additionalOf(s)
  const oldObj = hasOld && isObject(old) ? old : undefined
  const granular = s["x-kubernetes-map-type"] !== "atomic"
  if (additional !== undefined && props === undefined) {
    for (const [k, v] of Object.entries(x)) {
      const has = granular && oldObj !== undefined && hasOwn(oldObj, k)
      validateCel(v, has ? oldObj[k] : undefined, has, additional, `${path}[${k}]`, errs)
    }
  }
  if (props !== undefined) {
    for (const [k, v] of Object.entries(x)) {
      if (!hasOwn(props, k)) continue
      const has = granular && oldObj !== undefined && hasOwn(oldObj, k)
      validateCel(v, has ? oldObj[k] : undefined, has, props[k], appendKey(path, k), errs)
    }
  }
}

// -----------------------------------------------------------------------------------------------------------------
// scale paths

/** Go's `%T` of a decoded JSON value (`unstructured` decodes whole numbers as int64). */
const goType = (v: unknown): string =>
  v === null || v === undefined
    ? "<nil>"
    : typeof v === "string"
    ? "string"
    : typeof v === "boolean"
    ? "bool"
    : typeof v === "number"
    ? isInt64(v) ? "int64" : "float64"
    : Array.isArray(v)
    ? "[]interface {}"
    : "map[string]interface {}"

/**
 * A custom resource's scale paths, as apiextensions-apiserver checks them after the schema: the replicas at
 * `specReplicasPath` and `statusReplicasPath` must be integers from 0 to 2³¹-1 when present. A value that is not
 * one is the accessor's error (`unstructured.NestedInt64`), with value 0, at the path as the CRD spells it.
 */
const scaleErrors = (scale: NonNullable<ResourceType["scale"]>, obj: Obj): Array<FieldError> => {
  const errs: Array<FieldError> = []
  for (const path of [scale.specReplicasPath, scale.statusReplicasPath]) {
    if (typeof path !== "string" || path === "") continue
    const fields = path.replace(/^\./, "").split(".")
    const invalid = (value: unknown, detail: string) =>
      errs.push({ type: "FieldValueInvalid", field: path, value, detail })
    const accessor = `.${fields.join(".")} accessor error`
    let value: unknown = obj
    let found = true
    for (const [i, f] of fields.entries()) {
      if (value === null || value === undefined) {
        found = false
        break
      }
      if (!isObject(value)) {
        invalid(
          0,
          `.${fields.slice(0, i + 1).join(".")} accessor error: ${goPrint(value)} is of the type ${
            goType(value)
          }, expected map[string]interface{}`
        )
        found = false
        break
      }
      if (!hasOwn(value, f)) {
        found = false
        break
      }
      value = value[f]
    }
    if (!found) continue
    if (typeof value !== "number" || goType(value) !== "int64") {
      invalid(0, `${accessor}: ${goPrint(value)} is of the type ${goType(value)}, expected int64`)
    } else if (value < 0) invalid(value, "should be a non-negative integer")
    else if (value > 2147483647) invalid(value, "should be less than or equal to 2147483647")
  }
  return errs
}

// -----------------------------------------------------------------------------------------------------------------
// the custom resource pipeline

/** The served version's schema of a custom resource type, if it has one. */
export const schemaOf = (rt: ResourceType): Schema | undefined => (isSchema(rt.schema) ? rt.schema : undefined)

/**
 * The paths of the fields pruning would drop from `body` (without changing it): what `fieldValidation=Strict`
 * rejects (`unknown field "spec.foo"`) and `Warn` reports. Empty for kinds without a structural schema.
 */
export const unknownFields = (rt: ResourceType, body: unknown): Array<string> => {
  const schema = schemaOf(rt)
  if (schema === undefined || !isObject(body)) return []
  return prune(copy(body), schema, true)
}

/** Whether any node of the schema has `x-kubernetes-validations` (upstream builds no CEL validator otherwise). */
const hasRules = (s: unknown): boolean => {
  if (Array.isArray(s)) return s.some(hasRules)
  if (!isObject(s)) return false
  if (Array.isArray(s["x-kubernetes-validations"]) && s["x-kubernetes-validations"].length > 0) return true
  return Object.entries(s).some(([k, v]) => k !== "default" && k !== "enum" && k !== "example" && hasRules(v))
}

const blocking = new Set<ErrorType>([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid"
])

/** Decoding as upstream does for custom resources: pruning, then nulls dropped, then defaults (in place). */
export const decode = (rt: ResourceType, obj: Obj): void => {
  const schema = schemaOf(rt)
  if (schema === undefined) return
  prune(obj, schema, true)
  pruneNulls(obj, schema)
  applyDefaults(obj, schema)
}

/**
 * Validates a custom resource against its schema: kube-openapi schema validation, the scale subresource's replicas,
 * embedded resources, list types and CEL rules (transition rules only with `old`). Returns the causes, empty when the
 * object is valid.
 */
export const validateObject = (rt: ResourceType, obj: Obj, old: Obj | undefined): Array<StatusCause> => {
  const schema = schemaOf(rt)
  if (schema === undefined) return []
  let previous: Obj | undefined
  if (old !== undefined) {
    previous = copy(old)
    decode(rt, previous)
  }
  const errs: Array<FieldError> = validateSchema(obj, schema, previous === undefined ? undefined : { value: previous })
  // upstream's order: the schema, the scale paths, embedded resources, list types, then CEL rules
  if (rt.scale !== undefined) { for (const e of scaleErrors(rt.scale, obj)) errs.push(e) }
  validateEmbedded(obj, schema, "", errs)
  const oldListErrors: Array<FieldError> = []
  if (previous !== undefined) validateListTypes(previous, schema, "", oldListErrors)
  if (oldListErrors.length === 0) validateListTypes(obj, schema, "", errs)
  // As the custom resource strategy: CEL rules run only when no error blocks them (types, required, enums, sizes).
  if (!hasRules(schema)) return errs.map(toCause)
  if (errs.some((e) => blocking.has(e.type))) {
    errs.push({
      type: "FieldValueInvalid",
      field: "<nil>",
      value: null,
      detail:
        "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
    })
  } else {
    validateCel(obj, previous, previous !== undefined, schema, "", errs)
  }
  return errs.map(toCause)
}

/**
 * The write path of a custom resource: decode (prune, default) the object in place and validate it; returns the
 * causes of a 422, empty when it may be stored.
 */
export const admit = (rt: ResourceType, obj: Obj, old: Obj | undefined): Array<StatusCause> => {
  decode(rt, obj)
  return validateObject(rt, obj, old)
}

/**
 * The `x-kubernetes-validations` rules of a CRD version's schema that do not compile, as causes of the CRD's 422
 * (kube-apiserver refuses such a CRD: "compilation failed"). `base` is the schema's field path in the CRD.
 */
export const ruleCompileErrors = (schema: unknown, base: string): Array<StatusCause> => {
  const out: Array<StatusCause> = []
  const walk = (s: unknown, path: string): void => {
    if (Array.isArray(s)) return s.forEach((x, i) => walk(x, `${path}[${i}]`))
    if (!isObject(s)) return
    const rules = s["x-kubernetes-validations"]
    if (Array.isArray(rules)) {
      rules.forEach((rule: unknown, i: number) => {
        if (!isObject(rule) || typeof rule.rule !== "string") return
        const compiled = compile(rule.rule)
        if (typeof compiled === "string") {
          out.push({
            reason: "FieldValueInvalid",
            message: `Invalid value: ${JSON.stringify(rule.rule)}: compilation failed: ERROR: ${compiled}`,
            field: `${path}.x-kubernetes-validations[${i}].rule`
          })
        }
      })
    }
    for (const [k, v] of Object.entries(s)) {
      if (k === "properties" && isObject(v)) {
        for (const [name, child] of Object.entries(v)) walk(child, `${path}.properties[${name}]`)
      } else if (k === "items" || k === "additionalProperties" || k === "allOf" || k === "anyOf" || k === "oneOf") {
        walk(v, `${path}.${k}`)
      }
    }
  }
  walk(schema, base)
  return out
}
