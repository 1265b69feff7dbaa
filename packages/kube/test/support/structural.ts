/**
 * The rules of a Kubernetes structural schema (apiextensions.k8s.io/v1) that a generated `openAPIV3Schema` must
 * follow; the test API server does not validate schemas, so the tests check them here.
 */
type Json = Record<string, unknown>

const allowed = new Set([
  "type",
  "format",
  "description",
  "default",
  "example",
  "nullable",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-type"
])

export const structuralIssues = (schema: Json, path = "<root>"): Array<string> => {
  const issues: Array<string> = []
  const nested = (more: ReadonlyArray<string>) => {
    for (const issue of more) issues.push(issue)
  }
  for (const key of Object.keys(schema)) if (!allowed.has(key)) issues.push(`${path}: ${key} is not allowed`)
  const untyped = schema["x-kubernetes-preserve-unknown-fields"] === true ||
    schema["x-kubernetes-int-or-string"] === true
  if (schema.type === undefined && !untyped) issues.push(`${path}: no type`)
  if (
    schema.type !== undefined &&
    !["object", "array", "string", "integer", "number", "boolean"].includes(schema.type as string)
  ) {
    issues.push(`${path}: type ${String(schema.type)}`)
  }
  if (schema.properties !== undefined && schema.additionalProperties !== undefined) {
    issues.push(`${path}: properties and additionalProperties together`)
  }
  if (schema.exclusiveMinimum !== undefined && typeof schema.exclusiveMinimum !== "boolean") {
    issues.push(`${path}: exclusiveMinimum must be boolean`)
  }
  if (schema["x-kubernetes-list-type"] !== undefined) {
    const items = schema.items as Json | undefined
    if (schema.type !== "array") issues.push(`${path}: x-kubernetes-list-type on a non-array`)
    else if (
      schema["x-kubernetes-list-type"] === "set" &&
      !["string", "integer", "number", "boolean"].includes(items?.type as string)
    ) {
      issues.push(`${path}: x-kubernetes-list-type set needs scalar items`)
    }
  }
  if (schema.type === "array") {
    if (typeof schema.items !== "object" || schema.items === null || Array.isArray(schema.items)) {
      issues.push(`${path}: array without an items schema`)
    } else nested(structuralIssues(schema.items as Json, `${path}[]`))
  }
  if (schema.properties !== undefined) {
    for (const [k, v] of Object.entries(schema.properties as Json)) {
      nested(structuralIssues(v as Json, `${path}.${k}`))
    }
    for (const r of (schema.required as Array<string> | undefined) ?? []) {
      if (!(r in (schema.properties as Json))) issues.push(`${path}: required ${r} is not a property`)
    }
  }
  if (typeof schema.additionalProperties === "object" && schema.additionalProperties !== null) {
    nested(structuralIssues(schema.additionalProperties as Json, `${path}.*`))
  } else if (schema.additionalProperties !== undefined) {
    issues.push(`${path}: additionalProperties must be a schema`)
  }
  return issues
}
