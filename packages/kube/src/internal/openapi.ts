/**
 * effect Schema → the structural OpenAPI v3 subset that
 * `apiextensions.k8s.io/v1` accepts, in two steps.
 *
 * First the Schema's representation (its encoded side, what the API server
 * stores) is adjusted where effect 4's JSON Schema compiler says something our
 * decoder does not mean, or less than effect 3's `JSONSchema.make` said:
 *
 * - an `optional` property (`?: A | undefined`) is just not required: JSON has
 *   no `undefined`, and effect 4 writes it as a `null` branch, which would make
 *   the field `nullable` although the Schema rejects `null`;
 * - checks without a description get effect 3's (`a string at least 1
 *   character(s) long`, `an integer`, …);
 * - `isPattern` exports its pattern without the `u` flag too (effect 4 exports
 *   only unicode-mode patterns; Kubernetes uses RE2 either way).
 *
 * Then the JSON Schema (draft 2020-12, as `SchemaRepresentation` compiles it)
 * becomes structural:
 *
 * - every node has a `type` (or `x-kubernetes-preserve-unknown-fields` /
 *   `x-kubernetes-int-or-string`);
 * - no `$ref`, `$defs`, `additionalProperties: false`, `patternProperties`,
 *   `uniqueItems`, `const`, tuple `prefixItems`; `properties` and
 *   `additionalProperties` never together (`additionalProperties: true`, effect
 *   4's mark of an open struct, is dropped);
 * - `allOf` of check fragments is merged into its node;
 * - `anyOf` with `null` becomes `nullable` (without `enum`: the server checks
 *   `enum` on `null` too and `null` never matches; string literals become a
 *   `pattern`), literal unions become `enum`,
 *   integer|string becomes `x-kubernetes-int-or-string`, unions of objects
 *   merge their properties (required: those every branch requires); other
 *   unions keep any value (`x-kubernetes-preserve-unknown-fields`) — the
 *   Schema still decodes them precisely on the client;
 * - `Schema.Number`'s `"NaN"`/`"Infinity"`/`"-Infinity"` string branch is
 *   dropped (JSON numbers are finite; the Schema does not decode those
 *   strings), and `Schema.Int`'s safe-integer bounds are left out (effect 3
 *   wrote none; Kubernetes integers are int64);
 * - draft 2020-12 numeric `exclusiveMinimum: n` becomes `minimum: n` +
 *   `exclusiveMinimum: true` (OpenAPI 3.0);
 * - recursive definitions keep any value below the recursion;
 * - integer-valued numeric literals are an `integer` enum; string and integer
 *   literals together an int-or-string enum; `isUnique` over scalars is
 *   `x-kubernetes-list-type: set` (the server rejects duplicates;
 *   `uniqueItems` is not allowed in a structural schema); a tuple whose
 *   elements are all its rest (`NonEmptyArray`) is an array of that rest.
 *
 * Last, the encoded defaults of struct properties (`withDecodingDefault`,
 * `withDecodingDefaultKey`, and a `default` annotation) become `default`, so
 * the API server stores what the decoder would fill in.
 *
 * So the CRD carries: `type` (integer vs number), `minimum`/`maximum`
 * (exclusive too), `multipleOf`, `minLength`/`maxLength` (code points:
 * `isMinLength(n)` counts UTF-16 units, so its bound is `ceil(n / 2)`;
 * `isMinCodePoints` is exact), `pattern` (`isPattern` without `i`/`m`/`s`/`v`
 * flags, `isStartingWith`, `isEndingWith`, `isIncluding`, `isTrimmed`,
 * `isLowercased`, `isUppercased`, `isUUID` (+ `format: uuid`), `isBase64`, …),
 * `enum`, `minItems`/`maxItems`, `minProperties`/`maxProperties`, `required`,
 * `nullable`, `x-kubernetes-int-or-string`, `default`.
 *
 * Checks with no OpenAPI form (the Schema still checks them on the client):
 * custom filters (`Schema.makeFilter`, `check(...)` with a predicate), patterns
 * with flags, `isUnique` over objects, `isPropertyNames`, date and bigint
 * bounds on their string encodings, nullable unions of number or boolean
 * literals (the type only), tuples with different element types,
 * unions other than literals / nullable / int-or-string / objects (their
 * fields keep any value), number-or-string, transformations' decoded-side
 * checks, and defaults that need services or fail.
 */
import * as Exit from "effect/Exit"
import type * as JsonSchema from "effect/JsonSchema"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaRepresentation from "effect/SchemaRepresentation"

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

// -----------------------------------------------------------------------------
// representation
// -----------------------------------------------------------------------------

type Representation = SchemaRepresentation.Representation
type Check = SchemaRepresentation.Check
type Annotations = Schema.Annotations.Annotations

const hasDescription = (annotations: Annotations | undefined): boolean => typeof annotations?.description === "string"

const checkDescribed = (check: Check): boolean =>
  hasDescription(check.annotations) || (check._tag === "FilterGroup" && check.checks.some(checkDescribed))

/** effect 3's description of a check (`JSONSchema.make` wrote the outermost refinement's). */
const describeCheck = (check: Check, node: Representation["_tag"]): string | undefined => {
  if (check._tag !== "Filter" || check.representation === undefined) return undefined
  const p = (check.representation.payload ?? {}) as Record<string, unknown>
  const what = node === "Arrays" ? "an array of" : "a string"
  const unit = node === "Arrays" ? "item(s)" : "character(s)"
  switch (check.representation.id) {
    case "effect/schema/isMinLength":
      return node === "Arrays"
        ? `${what} at least ${p.minLength} ${unit}`
        : `${what} at least ${p.minLength} ${unit} long`
    case "effect/schema/isMaxLength":
      return node === "Arrays"
        ? `${what} at most ${p.maxLength} ${unit}`
        : `${what} at most ${p.maxLength} ${unit} long`
    case "effect/schema/isBetweenLength":
      return node === "Arrays"
        ? `${what} at least ${p.minimum} and at most ${p.maximum} ${unit}`
        : `${what} at least ${p.minimum} ${unit} and at most ${p.maximum} ${unit} long`
    case "effect/schema/isPattern":
      return `a string matching the pattern ${p.source}`
    case "effect/schema/isGreaterThan":
      return `a number greater than ${p.exclusiveMinimum}`
    case "effect/schema/isGreaterThanOrEqualTo":
      return `a number greater than or equal to ${p.minimum}`
    case "effect/schema/isLessThan":
      return `a number less than ${p.exclusiveMaximum}`
    case "effect/schema/isLessThanOrEqualTo":
      return `a number less than or equal to ${p.maximum}`
    case "effect/schema/isBetween":
      return `a number between ${p.minimum}${p.exclusiveMinimum === true ? " (excluded)" : ""} and ${p.maximum}${
        p.exclusiveMaximum === true ? " (excluded)" : ""
      }`
    case "effect/schema/isMultipleOf":
      return `a number divisible by ${p.divisor}`
    case "effect/schema/isInt":
      return "an integer"
    case "effect/schema/isFinite":
      return "a finite number"
  }
  return undefined
}

/** `isPattern` exports its pattern unless a flag changes what it matches (effect 4 also needs `u`). */
const exportPattern = (check: Check): Check => {
  if (check._tag === "FilterGroup") return { ...check, checks: mapNonEmpty(check.checks, exportPattern) }
  if (check.representation?.id !== "effect/schema/isPattern") return check
  const { flags, source } = check.representation.payload as { readonly source: string; readonly flags: string }
  if (/[imsv]/.test(flags)) return check
  const pattern = flags.includes("y") ? `^(?:${source})` : source
  const toJsonSchema = (): JsonSchema.JsonSchema => ({ pattern })
  return { ...check, annotations: { ...check.annotations, toJsonSchema } as Annotations }
}

const mapNonEmpty = <A, B>(as: readonly [A, ...Array<A>], f: (a: A) => B): [B, ...Array<B>] =>
  as.map(f) as [B, ...Array<B>]

/** Checks with patterns exported, and effect 3's description when neither the node nor a check has one. */
const withChecks = <R extends Exclude<Representation, SchemaRepresentation.Reference>>(node: R): R => {
  if (node.checks.length === 0) return node
  const checks = node.checks.map(exportPattern)
  if (hasDescription(node.annotations) || node.checks.some(checkDescribed)) return { ...node, checks }
  let description: string | undefined
  for (let i = checks.length - 1; i >= 0 && description === undefined; i--) {
    description = describeCheck(checks[i]!, node._tag)
  }
  return description === undefined
    ? { ...node, checks }
    : { ...node, checks, annotations: { ...node.annotations, description } }
}

/**
 * The type of an optional property without its `undefined` members, also in
 * nested unions (`withDecodingDefault` over `optional` writes `(A | undefined) | undefined`).
 */
const withoutUndefined = (type: Representation): Representation => {
  if (type._tag !== "Union" || !type.types.some((t) => t._tag === "Undefined" || t._tag === "Union")) return type
  const types = type.types.filter((t) => t._tag !== "Undefined").map(withoutUndefined)
  if (types.length === type.types.length && types.every((t, i) => t === type.types[i])) return type
  if (types.length === 1 && type.checks.length === 0 && type.annotations === undefined) return types[0]!
  return { ...type, types }
}

const adjust = (node: Representation): Representation => {
  switch (node._tag) {
    case "Reference":
      return node
    case "Suspend":
      return { ...node, thunk: adjust(node.thunk) }
    case "Declaration":
      return withChecks({ ...node, typeParameters: node.typeParameters.map(adjust) })
    case "Objects":
      return withChecks({
        ...node,
        propertySignatures: node.propertySignatures.map((ps) => ({
          ...ps,
          type: adjust(ps.isOptional ? withoutUndefined(ps.type) : ps.type)
        })),
        indexSignatures: node.indexSignatures.map((is) => ({ parameter: adjust(is.parameter), type: adjust(is.type) }))
      })
    case "Arrays":
      return withChecks({
        ...node,
        elements: node.elements.map((e) => ({ ...e, type: adjust(e.type) })),
        rest: node.rest.map(adjust)
      })
    case "Union":
      return withChecks({ ...node, types: node.types.map(adjust) })
    case "TemplateLiteral":
      return withChecks({ ...node, parts: node.parts.map(adjust) })
    default:
      return withChecks(node)
  }
}

/**
 * The JSON Schema (draft 2020-12) of a Schema's encoded side, adjusted as the
 * module docs say.
 *
 * @internal
 */
export const jsonSchema = (schema: Schema.Top): JsonSchema.Document<"draft-2020-12"> => {
  const document = Schema.toRepresentation(schema)
  const references: Record<string, Representation> = {}
  for (const [name, node] of Object.entries(document.references)) references[name] = adjust(node)
  return SchemaRepresentation.toJsonSchemaDocument({ representation: adjust(document.representation), references })
}

// -----------------------------------------------------------------------------
// JSON Schema → structural
// -----------------------------------------------------------------------------

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

const refName = (ref: string): string =>
  decodeURIComponent(ref.replace(/^#\/(\$defs|definitions)\//, "")).replace(/~1/g, "/").replace(/~0/g, "~")

const resolveRef = (node: Json, ctx: Context): Json => {
  const name = refName(node.$ref as string)
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

const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")

/**
 * A schema that also accepts `null`. The API server checks `enum` on a `null`
 * value too, and `null` never matches an enum value (not even a `null` one),
 * so a nullable field has no `enum`: string literals become a `pattern` (not
 * checked on `null`), other literals keep only their type.
 */
const nullableOf = (s: Json): Json => {
  if (!Array.isArray(s.enum)) return { ...s, nullable: true }
  const { enum: values, ...rest } = s
  if (s.type === "string" && values.every((v) => typeof v === "string") && rest.pattern === undefined) {
    return { ...rest, pattern: `^(?:${(values as Array<string>).map(escapeRegExp).join("|")})$`, nullable: true }
  }
  return { ...rest, nullable: true }
}

const nonFinite = new Set(["NaN", "Infinity", "-Infinity"])

/** `Schema.Number`'s JSON form: a number, or one of the non-finite values as a string. */
const isNonFiniteBranch = (b: Json): boolean =>
  b.type === "string" && Array.isArray(b.enum) && b.enum.length > 0 &&
  b.enum.every((v) => typeof v === "string" && nonFinite.has(v))

const convertUnion = (node: Json, branchesIn: ReadonlyArray<unknown>, ctx: Context): Json => {
  const { anyOf: _anyOf, oneOf: _oneOf, ...siblings } = node
  let raw = branchesIn.filter(isObject)
  if (raw.some((b) => b.type === "number") && raw.some(isNonFiniteBranch)) {
    raw = raw.filter((b) => !isNonFiniteBranch(b))
    // the checks of a `Schema.Number` sit next to its `anyOf`: they belong to the number
    const constraints = Object.keys(siblings).filter((k) => !annotationKeys.has(k))
    if (constraints.length > 0) {
      raw = raw.map((b) =>
        b.type === "number" ? { ...b, ...Object.fromEntries(constraints.map((k) => [k, siblings[k]])) } : b
      )
    }
  }
  const annotations = annotationsOf(node)
  const isNull = (b: Json) => b.type === "null" || (Array.isArray(b.enum) && b.enum.length === 1 && b.enum[0] === null)
  const nullable = raw.some(isNull)
  const branches = raw.filter((b) => !isNull(b)).map((b) => convert(b, ctx))
  const withNullable = (s: Json): Json => ({ ...(nullable ? nullableOf(s) : s), ...annotations })
  if (branches.length === 0) return withNullable(preserve())
  if (branches.length === 1) return withNullable(branches[0]!)
  if (branches.every((b) => Array.isArray(b.enum) && b.type !== undefined && b.type === branches[0]!.type)) {
    const values = [...new Set(branches.flatMap((b) => b.enum as Array<unknown>))]
    return withNullable({ type: branches[0]!.type, enum: values })
  }
  const types = new Set(branches.map((b) => b.type))
  // literals of both kinds (`Schema.Literals(["auto", 1])`): an int-or-string field with an enum
  if (
    types.size === 2 && types.has("string") && types.has("integer") &&
    branches.every((b) => Array.isArray(b.enum) && Object.keys(b).every((k) => k === "type" || k === "enum"))
  ) {
    const values = [...new Set(branches.flatMap((b) => b.enum as Array<unknown>))]
    return withNullable({ "x-kubernetes-int-or-string": true, enum: values })
  }
  if (types.size === 2 && types.has("string") && types.has("integer") && branches.length === 2) {
    return withNullable({ "x-kubernetes-int-or-string": true })
  }
  if (branches.every((b) => b.type === "object" && isObject(b.properties))) {
    return withNullable(mergeObjects(branches))
  }
  return withNullable(preserve())
}

const lowerBounds = new Set(["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"])
const upperBounds = new Set(["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"])

/**
 * An `allOf` whose parts are plain keyword fragments (how effect 4 writes the
 * second and later checks of a node) merged into its node: the tightest
 * bounds, the last description (effect 3 kept the outermost refinement's).
 */
const flattenAllOf = (node: Json): Json | undefined => {
  const { allOf, ...rest } = node
  const parts = allOf as Array<unknown>
  if (!parts.every((p) => isObject(p) && p.$ref === undefined && p.anyOf === undefined && p.oneOf === undefined)) {
    return undefined
  }
  const out: Json = { ...rest }
  for (const part of parts as Array<Json>) {
    for (const [k, v] of Object.entries(part.allOf !== undefined ? flattenAllOf(part) ?? part : part)) {
      const current = out[k]
      if (k === "properties" && isObject(current) && isObject(v)) out[k] = { ...current, ...v }
      else if (k === "required" && Array.isArray(current) && Array.isArray(v)) out[k] = [...new Set([...current, ...v])]
      else if (lowerBounds.has(k) && typeof current === "number" && typeof v === "number") out[k] = Math.max(current, v)
      else if (upperBounds.has(k) && typeof current === "number" && typeof v === "number") out[k] = Math.min(current, v)
      else if (k === "type" && current !== undefined && current !== v) return undefined
      else out[k] = v
    }
  }
  return out
}

const isScalar = (s: Json): boolean =>
  (s.type === "string" || s.type === "integer" || s.type === "number" || s.type === "boolean") && s.nullable !== true

const convert = (node: unknown, ctx: Context): Json => {
  if (!isObject(node)) return preserve()
  if (Array.isArray(node.allOf)) {
    const flat = flattenAllOf(node)
    if (flat !== undefined) return convert(flat, ctx)
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
  if (typeof node.$ref === "string") return resolveRef(node, ctx)
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
      // numeric literals that are all integers: an integer field
      if (Array.isArray(out.enum) && out.enum.every((v) => Number.isInteger(v))) out.type = "integer"
      if (typeof node.exclusiveMinimum === "number") {
        out.minimum = node.exclusiveMinimum
        out.exclusiveMinimum = true
      }
      if (typeof node.exclusiveMaximum === "number") {
        out.maximum = node.exclusiveMaximum
        out.exclusiveMaximum = true
      }
      // `Schema.Int`'s safe-integer range: not a constraint of the field
      if (type === "integer" && out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum
      if (type === "integer" && out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum
      break
    case "boolean":
      out.type = "boolean"
      copy(node, out, ["enum"])
      break
    case "array": {
      out.type = "array"
      copy(node, out, ["minItems", "maxItems"])
      // a tuple (`prefixItems`) keeps any items: the Schema checks them on the client; but a tuple
      // whose elements are all its rest (`Schema.NonEmptyArray`) is an array of that rest
      const sameAsRest = Array.isArray(node.prefixItems) && isObject(node.items) &&
        node.prefixItems.every((p) => JSON.stringify(p) === JSON.stringify(node.items))
      out.items = isObject(node.items) && (node.prefixItems === undefined || sameAsRest)
        ? convert(node.items, ctx)
        : preserve()
      // `uniqueItems` is not allowed in a structural schema; a set of scalars is (the server rejects duplicates)
      if (node.uniqueItems === true && isScalar(out.items as Json)) out["x-kubernetes-list-type"] = "set"
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
        // (`additionalProperties: true` only says that the struct is open, as every effect 4 struct is)
        if (isObject(node.additionalProperties) || isObject(node.patternProperties)) {
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
  return { ...(nullable ? nullableOf(out) : out), ...annotationsOf(node) }
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
 * Converts a JSON Schema document (draft 2020-12, definitions apart) to a
 * structural OpenAPI v3 schema.
 *
 * @internal
 */
export const toStructural = (document: {
  readonly schema: JsonSchema.JsonSchema
  readonly definitions: JsonSchema.Definitions
}): Json => convert(document.schema, { defs: document.definitions, seen: new Set() })

// -----------------------------------------------------------------------------
// defaults
// -----------------------------------------------------------------------------

/** A structural path: property names, `[]` for array items. */
type Path = ReadonlyArray<string>

/**
 * The encoded default of a struct property: what decoding the property's key
 * when it is absent gives, encoded back (`withDecodingDefault`,
 * `withDecodingDefaultKey`, …). Defaults needing services or failing give none.
 */
const defaultOf = (property: SchemaAST.PropertySignature): { readonly value: unknown } | undefined => {
  if (!SchemaAST.isOptional(SchemaAST.toEncoded(property.type))) return undefined
  try {
    const one = Schema.Struct({ [property.name]: Schema.make<Schema.Top>(property.type) }) as unknown as Schema.Codec<
      Record<PropertyKey, unknown>,
      Record<PropertyKey, unknown>
    >
    const decoded = Exit.getSuccess(Schema.decodeUnknownExit(one)({}))
    if (Option.isNone(decoded) || !Object.hasOwn(decoded.value, property.name)) return undefined
    const encoded = Exit.getSuccess(Schema.encodeUnknownExit(one)(decoded.value))
    if (Option.isNone(encoded) || !Object.hasOwn(encoded.value, property.name)) return undefined
    const value = encoded.value[property.name]
    // JSON values only (a default must be storable as is)
    return value === undefined || JSON.stringify(value) === undefined ? undefined : { value }
  } catch {
    return undefined
  }
}

/** The AST a node is encoded through (a class's struct, a transformation's source), when it is a struct or array. */
const shapeOf = (ast: SchemaAST.AST, depth = 0): SchemaAST.Objects | SchemaAST.Arrays | undefined => {
  if (ast._tag === "Objects" || ast._tag === "Arrays") return ast
  if (ast.encoding === undefined || depth > 8) return undefined
  return shapeOf(ast.encoding[ast.encoding.length - 1]!.to, depth + 1)
}

/** The property defaults of a Schema's structs, by path (not below recursion or unions). */
const collectDefaults = (ast: SchemaAST.AST, path: Path, out: Array<readonly [Path, unknown]>): void => {
  const shape = shapeOf(ast)
  if (shape === undefined || path.length > 32) return
  if (shape._tag === "Arrays") {
    if (shape.elements.length === 0 && shape.rest.length === 1) collectDefaults(shape.rest[0]!, [...path, "[]"], out)
    return
  }
  for (const property of shape.propertySignatures) {
    if (typeof property.name !== "string") continue
    const at = [...path, property.name]
    const d = defaultOf(property)
    if (d !== undefined) out.push([at, d.value])
    collectDefaults(property.type, at, out)
  }
}

/** Sets `default` at each path of a structural schema that has a node there. */
const applyDefaults = (schema: Json, defaults: ReadonlyArray<readonly [Path, unknown]>): Json => {
  for (const [path, value] of defaults) {
    let node: unknown = schema
    for (const segment of path) {
      if (!isObject(node)) break
      node = segment === "[]" ? node.items : isObject(node.properties) ? node.properties[segment] : undefined
    }
    if (isObject(node) && node.default === undefined) node.default = value
  }
  return schema
}

/**
 * The structural OpenAPI v3 schema of a Schema's encoded side, with the
 * encoded defaults of its struct properties (`default`, which the API server
 * applies on create, update and read).
 *
 * @internal
 */
export const openApiSchema = (schema: Schema.Top): Json => {
  const defaults: Array<readonly [Path, unknown]> = []
  collectDefaults(schema.ast, [], defaults)
  return applyDefaults(toStructural(jsonSchema(schema)), defaults)
}
