/**
 * The vocabulary of structural schemas shared by pruning, defaulting, schema validation and CEL: a schema node and
 * its children (properties, map values, list items), the types a node allows, and field errors worded as
 * `k8s.io/apimachinery/pkg/util/validation/field` words them.
 */
import type { StatusCause } from "../../ApiError.js"
import { goFloat, goJson, isObject, type Obj } from "../json.js"

/** A JSONSchemaProps object (an `openAPIV3Schema` node). */
export type Schema = Obj

// -----------------------------------------------------------------------------------------------------------------
// schema nodes

export const isSchema = (s: unknown): s is Schema => isObject(s)
export const propsOf = (s: Schema | undefined): Obj | undefined => (isObject(s?.properties) ? s.properties : undefined)
/** The schema of a map's values: `additionalProperties` as a schema (`true` means any value, unpruned). */
export const additionalOf = (s: Schema | undefined): Schema | undefined => {
  const ap = s?.additionalProperties
  if (isSchema(ap)) return ap
  if (ap === true) return { "x-kubernetes-preserve-unknown-fields": true }
  return undefined
}
export const itemsOf = (s: Schema | undefined): Schema | undefined => (isSchema(s?.items) ? s.items : undefined)
export const preserves = (s: Schema | undefined): boolean => s?.["x-kubernetes-preserve-unknown-fields"] === true
export const embedded = (s: Schema | undefined): boolean => s?.["x-kubernetes-embedded-resource"] === true
export const hasOwn = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)
export const childSchema = (s: Schema | undefined, key: string): Schema | undefined => {
  const props = propsOf(s)
  if (props !== undefined && hasOwn(props, key) && isSchema(props[key])) return props[key]
  return additionalOf(s)
}

export const metaFields = new Set(["apiVersion", "kind", "metadata"])

export const appendKey = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

/** Whether Go's unstructured JSON decoding makes a number an int64 (whole and in range) rather than a float64. */
export const isInt64 = (n: number): boolean => Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63

/** The types a node allows (`x-kubernetes-int-or-string`: integer and string). */
export const schemaTypes = (s: Schema): Array<string> => {
  if (s["x-kubernetes-int-or-string"] === true) return ["integer", "string"]
  return typeof s.type === "string" && s.type !== "" ? [s.type] : []
}

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

export const omitted: unique symbol = Symbol("omitted")

/** One field error: the path (`<nil>` for the root), the bad value (Go-formatted in the message) and the detail. */
export interface FieldError {
  readonly type: ErrorType
  readonly field: string
  readonly value: unknown
  readonly detail: string
}

/** A Go `%q` string (JSON quoting is the same for what objects hold, short of rare control characters). */
export const goQuote = (s: string): string => JSON.stringify(s)

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
