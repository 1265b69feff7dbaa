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
 *
 * This module is the pipeline (pruning, defaulting, embedded resources, list types, the scale paths, then
 * `validateObject`); `structural/` holds its parts: the schema vocabulary and field errors (`schema.ts`),
 * kube-openapi's validator (`openApiValidator.ts`, its formats in `formats.ts`) and CEL rules (`cel.ts`).
 */
import type { StatusCause } from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { deepEqual, goPrint, isObject, type Obj } from "./json.js"
import { compile, validateCel } from "./structural/cel.js"
import { validateSchema } from "./structural/openApiValidator.js"
import {
  additionalOf,
  appendKey,
  childSchema,
  embedded,
  type ErrorType,
  type FieldError,
  goQuote,
  hasOwn,
  isInt64,
  isSchema,
  itemsOf,
  metaFields,
  preserves,
  propsOf,
  type Schema,
  toCause
} from "./structural/schema.js"

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
