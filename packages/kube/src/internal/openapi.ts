/**
 * JSON Schema (draft-07, as `JSONSchema.make` writes it) → the structural
 * OpenAPI v3 subset that `apiextensions.k8s.io/v1` accepts:
 *
 * - every node has a `type` (or `x-kubernetes-preserve-unknown-fields` /
 *   `x-kubernetes-int-or-string`);
 * - no `$ref`, `$defs`, `additionalProperties: false`, `patternProperties`,
 *   `uniqueItems`, `const`, tuple `items`; `properties` and
 *   `additionalProperties` never together;
 * - `anyOf` with `null` becomes `nullable`, literal unions become `enum`,
 *   integer|string becomes `x-kubernetes-int-or-string`, unions of objects
 *   merge their properties (required: those every branch requires); other
 *   unions keep any value (`x-kubernetes-preserve-unknown-fields`) — the
 *   Schema still decodes them precisely on the client;
 * - draft-07 numeric `exclusiveMinimum: n` becomes `minimum: n` +
 *   `exclusiveMinimum: true` (OpenAPI 3.0);
 * - recursive definitions keep any value below the recursion.
 */
type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const preserve = (): Json => ({ "x-kubernetes-preserve-unknown-fields": true })

const annotationsOf = (node: Json): Json => {
  const out: Json = {}
  if (typeof node.description === "string") out.description = node.description
  if (node.default !== undefined) out.default = node.default
  if (Array.isArray(node.examples) && node.examples.length > 0) out.example = node.examples[0]
  return out
}

const typeOfValue = (v: unknown): string | undefined =>
  typeof v === "string"
    ? "string"
    : typeof v === "boolean"
    ? "boolean"
    : typeof v === "number"
    ? Number.isInteger(v) ? "integer" : "number"
    : undefined

const copy = (from: Json, to: Json, keys: ReadonlyArray<string>) => {
  for (const k of keys) if (from[k] !== undefined) to[k] = from[k]
}

interface Context {
  readonly defs: Json
  readonly seen: ReadonlySet<string>
}

const annotationKeys = new Set(["description", "title", "$id", "default", "examples", "$comment"])

const resolveRef = (node: Json, ctx: Context): Json => {
  const ref = node.$ref as string
  const name = decodeURIComponent(ref.replace(/^#\/(\$defs|definitions)\//, ""))
  const { $ref: _, ...siblings } = node
  if (ctx.seen.has(name) || !isObject(ctx.defs[name])) return { ...preserve(), ...annotationsOf(siblings) }
  const resolved = convert(ctx.defs[name], { defs: ctx.defs, seen: new Set([...ctx.seen, name]) })
  const annotationOnly = Object.keys(siblings).every((k) => annotationKeys.has(k))
  const scalar = resolved.type === "string" || resolved.type === "integer" || resolved.type === "number"
  const overlay = annotationOnly || !scalar
    ? annotationsOf(siblings)
    : convert({ ...siblings, type: resolved.type }, ctx)
  return { ...resolved, ...overlay }
}

const mergeObjects = (branches: ReadonlyArray<Json>): Json => {
  const properties: Json = {}
  let required: Array<string> | undefined
  for (const b of branches) {
    for (const [k, v] of Object.entries((b.properties as Json | undefined) ?? {})) {
      const existing = properties[k]
      properties[k] = existing === undefined ? v : mergeSame(existing as Json, v as Json)
    }
    const r = (b.required as Array<string> | undefined) ?? []
    required = required === undefined ? [...r] : required.filter((x) => r.includes(x))
  }
  const out: Json = { type: "object", properties }
  if (required !== undefined && required.length > 0) out.required = required
  return out
}

/** Two schemas of the same property in different union branches. */
const mergeSame = (a: Json, b: Json): Json => {
  if (Array.isArray(a.enum) && Array.isArray(b.enum) && a.type === b.type) {
    return { ...a, enum: [...new Set([...(a.enum as Array<unknown>), ...(b.enum as Array<unknown>)])] }
  }
  if (a.type === "object" && b.type === "object" && isObject(a.properties) && isObject(b.properties)) {
    return mergeObjects([a, b])
  }
  return JSON.stringify(a) === JSON.stringify(b) ? a : preserve()
}

const convertUnion = (node: Json, branchesIn: ReadonlyArray<unknown>, ctx: Context): Json => {
  const annotations = annotationsOf(node)
  const raw = branchesIn.filter(isObject)
  const isNull = (b: Json) => b.type === "null" || (Array.isArray(b.enum) && b.enum.length === 1 && b.enum[0] === null)
  const nullable = raw.some(isNull)
  const branches = raw.filter((b) => !isNull(b)).map((b) => convert(b, ctx))
  const withNullable = (s: Json): Json => ({ ...s, ...(nullable ? { nullable: true } : {}), ...annotations })
  if (branches.length === 0) return withNullable(preserve())
  if (branches.length === 1) return withNullable(branches[0]!)
  if (branches.every((b) => Array.isArray(b.enum) && b.type !== undefined && b.type === branches[0]!.type)) {
    const values = [...new Set(branches.flatMap((b) => b.enum as Array<unknown>))]
    return withNullable({ type: branches[0]!.type, enum: values })
  }
  const types = new Set(branches.map((b) => b.type))
  if (types.size === 2 && types.has("string") && types.has("integer") && branches.length === 2) {
    return withNullable({ "x-kubernetes-int-or-string": true })
  }
  if (branches.every((b) => b.type === "object" && isObject(b.properties))) {
    return withNullable(mergeObjects(branches))
  }
  return withNullable(preserve())
}

const convert = (node: unknown, ctx: Context): Json => {
  if (!isObject(node)) return preserve()
  if (typeof node.$ref === "string") return resolveRef(node, ctx)
  if (Array.isArray(node.allOf)) {
    const { allOf, ...rest } = node
    const parts = (allOf as Array<unknown>).map((p) => convert(p, ctx))
    const base = Object.keys(rest).some((k) => k !== "description" && k !== "title" && k !== "$id")
      ? [convert(rest, ctx)]
      : []
    const all = [...base, ...parts]
    const merged = all.length === 1 ? all[0]! : all.every((p) => p.type === "object")
      ? { ...mergeObjectsAll(all) }
      : all.reduce((a, b) => ({ ...a, ...b }), {})
    return { ...merged, ...annotationsOf(node) }
  }
  if (Array.isArray(node.anyOf)) return convertUnion(node, node.anyOf, ctx)
  if (Array.isArray(node.oneOf)) return convertUnion(node, node.oneOf, ctx)
  if (node.const !== undefined) {
    if (node.const === null) return { ...preserve(), nullable: true }
    const type = typeOfValue(node.const)
    return type === undefined ? preserve() : { type, enum: [node.const], ...annotationsOf(node) }
  }
  let type = node.type
  let nullable = false
  if (Array.isArray(type)) {
    nullable = type.includes("null")
    const rest = type.filter((t) => t !== "null")
    if (rest.length !== 1) return { ...preserve(), ...(nullable ? { nullable } : {}), ...annotationsOf(node) }
    type = rest[0]
  }
  if (type === undefined && Array.isArray(node.enum)) {
    const types = new Set(node.enum.map(typeOfValue))
    type = types.size === 1 ? [...types][0] : undefined
    if (types.size === 2 && types.has("integer") && types.has("number")) type = "number"
  }
  const out: Json = {}
  switch (type) {
    case "string":
      out.type = "string"
      copy(node, out, ["minLength", "maxLength", "pattern", "format", "enum"])
      break
    case "integer":
    case "number":
      out.type = type
      copy(node, out, ["minimum", "maximum", "multipleOf", "enum"])
      if (typeof node.exclusiveMinimum === "number") {
        out.minimum = node.exclusiveMinimum
        out.exclusiveMinimum = true
      }
      if (typeof node.exclusiveMaximum === "number") {
        out.maximum = node.exclusiveMaximum
        out.exclusiveMaximum = true
      }
      break
    case "boolean":
      out.type = "boolean"
      copy(node, out, ["enum"])
      break
    case "array": {
      out.type = "array"
      copy(node, out, ["minItems", "maxItems"])
      out.items = isObject(node.items) ? convert(node.items, ctx) : preserve()
      break
    }
    case "object": {
      out.type = "object"
      const properties = isObject(node.properties) ? node.properties : {}
      const names = Object.keys(properties)
      if (names.length > 0) {
        out.properties = Object.fromEntries(names.map((k) => [k, convert(properties[k], ctx)]))
        const required = Array.isArray(node.required) ? node.required.filter((r) => names.includes(r as string)) : []
        if (required.length > 0) out.required = required
        // a struct with an index signature: the extra keys cannot be described next to `properties`
        if (isObject(node.additionalProperties) || node.additionalProperties === true) {
          out["x-kubernetes-preserve-unknown-fields"] = true
        }
      } else if (isObject(node.additionalProperties)) {
        out.additionalProperties = convert(node.additionalProperties, ctx)
      } else if (isObject(node.patternProperties)) {
        const first = Object.values(node.patternProperties)[0]
        out.additionalProperties = convert(first, ctx)
      } else {
        out["x-kubernetes-preserve-unknown-fields"] = true
      }
      copy(node, out, ["minProperties", "maxProperties"])
      break
    }
    case "null":
      return { ...preserve(), nullable: true, ...annotationsOf(node) }
    default:
      // unknown / any / `{}`: any value
      return { ...preserve(), ...annotationsOf(node) }
  }
  if (nullable) out.nullable = true
  return { ...out, ...annotationsOf(node) }
}

const mergeObjectsAll = (parts: ReadonlyArray<Json>): Json => {
  const properties: Json = {}
  const required = new Set<string>()
  for (const p of parts) {
    Object.assign(properties, (p.properties as Json | undefined) ?? {})
    for (const r of (p.required as Array<string> | undefined) ?? []) required.add(r)
  }
  const out: Json = { type: "object" }
  if (Object.keys(properties).length > 0) out.properties = properties
  else out["x-kubernetes-preserve-unknown-fields"] = true
  if (required.size > 0) out.required = [...required]
  return out
}

/**
 * Converts a root JSON Schema (with `$defs`) to a structural OpenAPI v3 schema.
 *
 * @internal
 */
export const toStructural = (root: Json): Json => {
  const defs = isObject(root.$defs) ? root.$defs : isObject(root.definitions) ? root.definitions : {}
  return convert(root, { defs, seen: new Set() })
}
