/**
 * A value against its structural schema as kube-openapi's SchemaValidator checks it (types and formats, ranges,
 * lengths, patterns, enums, required properties, `allOf`/`anyOf`/`oneOf`/`not`), with ratcheting on updates, its
 * errors converted to field errors as apiextensions converts them (`kubeOpenAPIResultToFieldErrors`).
 */
import { deepEqual, goFloat, isObject, type Obj } from "../json.js"
import { formatValid, supportedFormats } from "./formats.js"
import {
  appendKey,
  type FieldError,
  goQuote,
  hasOwn,
  isInt64,
  isSchema,
  itemsOf,
  omitted,
  propsOf,
  type Schema,
  schemaTypes
} from "./schema.js"

/** A kube-openapi error: its path (`Name`), code, message and the value/limit it carries. */
interface OpenApiError {
  readonly name: string
  readonly code: "type" | "required" | "enum" | "tooLong" | "maxItems" | "maxProperties" | "other" | "composite"
  readonly message: string
  readonly value?: unknown
  readonly valid?: number
  readonly values?: ReadonlyArray<unknown>
}
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
/** The JSON type kube-openapi sees for a decoded value (an int64 is an integer, as Go decodes it). */
const valueType = (v: unknown): string => {
  if (typeof v === "string") return "string"
  if (typeof v === "boolean") return "boolean"
  if (typeof v === "number") return isInt64(v) ? "integer" : "number"
  if (Array.isArray(v)) return "array"
  return "object"
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
