/**
 * `Resource.custom` carries its Schemas' constraints into the generated CRD: integer vs number, bounds, lengths,
 * patterns, enums, item counts, required, nullable, int-or-string, sets and defaults; checks with no OpenAPI form
 * leave only the type. The server (its structural validation) then enforces what the decoder expects.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { TestCluster } from "@reconcile/testkit"
import { Arbitrary, Effect, Exit, Layer, Schema } from "effect"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import { kubeLayer, makeEnv, waitServed } from "./support/env.js"
import { structuralIssues } from "./support/structural.js"

const specSchema = (spec: Schema.Codec<any, any>): Record<string, any> => {
  const r = Resource.custom({ group: "g.io", version: "v1", kind: "K", plural: "ks", scope: "Cluster", spec })
  const schema = Resource.crdManifest(r).spec.versions[0]!.schema!.openAPIV3Schema as Record<string, any>
  assert.deepStrictEqual(structuralIssues(schema), [])
  return schema.properties.spec
}

class Endpoint extends Schema.Class<Endpoint>("Endpoint")({
  host: Schema.String,
  port: Schema.Int.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(80)))
}) {}

describe("Resource.crdManifest: constraints", () => {
  it("numbers: integer vs number, inclusive and exclusive bounds, multipleOf, int32", () => {
    const p = specSchema(Schema.Struct({
      int: Schema.Int,
      num: Schema.Number,
      finite: Schema.Finite,
      min: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
      exclusive: Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThan(1)),
      between: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 })),
      betweenExcl: Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMaximum: true })),
      step: Schema.Int.check(Schema.isMultipleOf(5)),
      int32: Schema.Int.check(Schema.isInt32())
    })).properties
    assert.deepStrictEqual(p.int, { type: "integer", description: "an integer" })
    assert.deepStrictEqual(p.num, { type: "number" })
    assert.deepStrictEqual(p.finite, { type: "number", description: "a finite number" })
    assert.include(p.min, { type: "integer", minimum: 1 })
    assert.include(p.exclusive, {
      type: "number",
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1,
      exclusiveMaximum: true
    })
    assert.include(p.between, { type: "integer", minimum: 1, maximum: 10 })
    assert.deepStrictEqual(p.betweenExcl, {
      type: "number",
      minimum: 0,
      maximum: 1,
      exclusiveMaximum: true,
      description: "a number between 0 and 1 (excluded)"
    })
    assert.include(p.step, { type: "integer", multipleOf: 5 })
    assert.include(p.int32, { type: "integer", minimum: -2147483648, maximum: 2147483647 })
  })

  it("strings: lengths, patterns (RE2-compatible, no flags), formats", () => {
    const p = specSchema(Schema.Struct({
      nonEmpty: Schema.NonEmptyString,
      max: Schema.String.check(Schema.isMaxLength(63)),
      codePoints: Schema.String.check(Schema.isBetweenCodePoints(2, 4)),
      dns: Schema.String.check(Schema.isPattern(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)),
      prefix: Schema.String.check(Schema.isStartingWith("v")),
      uuid: Schema.String.check(Schema.isUUID()),
      caseless: Schema.String.check(Schema.isPattern(/^[a-z]+$/i))
    })).properties
    assert.include(p.nonEmpty, { type: "string", minLength: 1 })
    assert.include(p.max, { type: "string", maxLength: 63 })
    assert.include(p.codePoints, { type: "string", minLength: 2, maxLength: 4 })
    assert.include(p.dns, { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" })
    assert.include(p.prefix, { type: "string", pattern: "^v" })
    assert.include(p.uuid, { type: "string", format: "uuid" })
    // a flag changes what the pattern matches: no OpenAPI form, the type only
    assert.deepStrictEqual(p.caseless, { type: "string", description: "a string matching the pattern ^[a-z]+$" })
  })

  it("enums: string, integer and mixed literals; Schema.Enum; nullable literals", () => {
    const p = specSchema(Schema.Struct({
      mode: Schema.Literals(["rolling", "recreate"]),
      level: Schema.Literals([1, 2, 3]),
      ratio: Schema.Literals([0.5, 1]),
      size: Schema.Literals(["auto", 1, 2]),
      flag: Schema.Literal(true),
      color: Schema.Enum({ Red: "red", Blue: "blue" }),
      maybe: Schema.NullOr(Schema.Literals(["a", "b"])),
      maybeDotted: Schema.NullOr(Schema.Literals(["a.b", "c+"])),
      maybeLevel: Schema.NullOr(Schema.Literals([1, 2]))
    })).properties
    assert.deepStrictEqual(p.mode, { type: "string", enum: ["rolling", "recreate"] })
    assert.deepStrictEqual(p.level, { type: "integer", enum: [1, 2, 3] })
    assert.deepStrictEqual(p.ratio, { type: "number", enum: [0.5, 1] })
    assert.deepStrictEqual(p.size, { "x-kubernetes-int-or-string": true, enum: ["auto", 1, 2] })
    assert.deepStrictEqual(p.flag, { type: "boolean", enum: [true] })
    assert.deepStrictEqual(p.color, { type: "string", enum: ["red", "blue"] })
    // the server checks `enum` on null too (and null never matches): string literals become a pattern
    assert.deepStrictEqual(p.maybe, { type: "string", pattern: "^(?:a|b)$", nullable: true })
    assert.deepStrictEqual(p.maybeDotted, { type: "string", pattern: "^(?:a\\.b|c\\+)$", nullable: true })
    assert.deepStrictEqual(p.maybeLevel, { type: "integer", nullable: true })
  })

  it("arrays and maps: item counts, sets of scalars, non-empty arrays, property counts", () => {
    const p = specSchema(Schema.Struct({
      some: Schema.Array(Schema.String).check(Schema.isBetweenLength(1, 3)),
      nonEmpty: Schema.NonEmptyArray(Schema.Int),
      set: Schema.Array(Schema.String).check(Schema.isUnique()),
      // uniqueness of objects has no structural form (`uniqueItems` is forbidden)
      objects: Schema.Array(Schema.Struct({ a: Schema.String })).check(Schema.isUnique()),
      labels: Schema.Record(Schema.String, Schema.String).check(Schema.isMinProperties(1))
    })).properties
    assert.include(p.some, { type: "array", minItems: 1, maxItems: 3 })
    assert.deepStrictEqual(p.some.items, { type: "string" })
    assert.deepStrictEqual(p.nonEmpty, {
      type: "array",
      minItems: 1,
      items: { type: "integer", description: "an integer" }
    })
    assert.deepStrictEqual(p.set, { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" })
    assert.isUndefined(p.objects["x-kubernetes-list-type"])
    assert.isUndefined(p.objects.uniqueItems)
    assert.deepStrictEqual(p.labels, { type: "object", additionalProperties: { type: "string" }, minProperties: 1 })
  })

  it("required, optional, nullable, int-or-string", () => {
    const spec = specSchema(Schema.Struct({
      must: Schema.String,
      may: Schema.optional(Schema.String),
      mayKey: Schema.optionalKey(Schema.Int),
      orNull: Schema.NullOr(Schema.Int),
      port: Schema.Union([Schema.Int, Schema.String])
    }))
    assert.deepStrictEqual(spec.required, ["must", "orNull", "port"])
    assert.deepStrictEqual(spec.properties.may, { type: "string" })
    assert.deepStrictEqual(spec.properties.orNull, { type: "integer", description: "an integer", nullable: true })
    assert.deepStrictEqual(spec.properties.port, { "x-kubernetes-int-or-string": true })
  })

  it("defaults: decoding defaults (key and value), in classes and array items, encoded; annotations", () => {
    const spec = specSchema(Schema.Struct({
      replicas: Schema.Int.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(1))),
      image: Schema.optional(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed("nginx:1"))),
      // the default is written in the encoded form: a string here
      timeout: Schema.NumberFromString.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed("30"))),
      endpoint: Endpoint,
      rules: Schema.Array(
        Schema.Struct({
          allow: Schema.Boolean.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(false)))
        })
      ),
      annotated: Schema.String.annotate({ default: "x" }),
      // a constructor default is not a wire default: still required
      made: Schema.Int.pipe(Schema.withConstructorDefault(Effect.succeed(2)))
    }))
    const p = spec.properties
    assert.deepStrictEqual(p.replicas, { type: "integer", description: "an integer", default: 1 })
    assert.deepStrictEqual(p.image, { type: "string", default: "nginx:1" })
    assert.strictEqual(p.timeout.type, "string")
    assert.strictEqual(p.timeout.default, "30")
    assert.strictEqual(p.endpoint.properties.port.default, 80)
    assert.deepStrictEqual(p.endpoint.required, ["host"])
    assert.strictEqual(p.rules.items.properties.allow.default, false)
    assert.strictEqual(p.annotated.default, "x")
    assert.isUndefined(p.made.default)
    assert.deepStrictEqual(spec.required, ["endpoint", "rules", "annotated", "made"])
  })

  it("the decoder and the schema agree on defaults: decoding {} gives the defaults the CRD states", () => {
    const Spec = Schema.Struct({
      replicas: Schema.Int.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(1))),
      image: Schema.optional(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed("nginx:1")))
    })
    const p = specSchema(Spec).properties
    const decoded = Schema.decodeUnknownSync(Spec)({})
    assert.deepStrictEqual(decoded, { replicas: p.replicas.default, image: p.image.default })
  })
})

/** A kind whose Schema carries constraints and defaults; its CRD is generated from it. */
const Limited = Resource.custom({
  group: "constraints.example.com",
  version: "v1",
  kind: "Limited",
  plural: "limiteds",
  scope: "Namespaced",
  spec: Schema.Struct({
    name: Schema.String.check(Schema.isPattern(/^[a-z]+$/)),
    replicas: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10 })).pipe(
      Schema.optionalKey,
      Schema.withDecodingDefaultKey(Effect.succeed(1))
    ),
    mode: Schema.Literals(["fast", "safe"]).pipe(
      Schema.optionalKey,
      Schema.withDecodingDefaultKey(Effect.succeed("safe"))
    ),
    tags: Schema.optional(Schema.Array(Schema.String).check(Schema.isUnique(), Schema.isMaxLength(3))),
    port: Schema.optional(Schema.Union([Schema.Int, Schema.String]))
  })
})

const env = makeEnv()

layer(env.layer)("Resource.custom constraints against TestApiServer", (it) => {
  it.effect("the server enforces the Schema's constraints and stores its defaults; the decoder agrees", () =>
    Effect.gen(function*() {
      yield* KubeClient.create(Resource.CustomResourceDefinition, Resource.crdManifest(Limited))
      yield* waitServed(Limited)
      const object = (name: string, spec: Record<string, unknown>) => ({
        apiVersion: Limited.apiVersion,
        kind: Limited.kind,
        metadata: { name, namespace: "default" },
        spec
      })
      const created = yield* KubeClient.create(Limited, object("ok", { name: "web" }) as never)
      // defaulted by the server: the decoder's defaults
      assert.deepStrictEqual(created.spec, { name: "web", replicas: 1, mode: "safe" })
      const stored = yield* KubeClient.get(Limited, "ok", { namespace: "default" })
      assert.deepStrictEqual(stored.spec, { name: "web", replicas: 1, mode: "safe" })

      // raw JSON (the typed client would refuse to encode it)
      const kube = yield* Kube.Kube
      const exit = yield* Effect.exit(kube.request({
        method: "POST",
        path: Limited.path({ namespace: "default" }),
        body: object("bad", { name: "Web", replicas: 11, mode: "slow", tags: ["a", "a"], port: 1.5 })
      }))
      assert(Exit.isFailure(exit))
      const error = Exit.findErrorOption(exit)
      assert(error._tag === "Some" && error.value._tag === "Invalid", String(exit))
      const causes = Object.fromEntries(error.value.causes.map((c) => [c.field, c.reason]))
      assert.deepStrictEqual(causes, {
        "spec.name": "FieldValueInvalid",
        "spec.replicas": "FieldValueInvalid",
        "spec.mode": "FieldValueNotSupported",
        "spec.tags[1]": "FieldValueDuplicate",
        "spec.port": "FieldValueTypeInvalid"
      })
      // what the server rejects, the decoder rejects too
      for (
        const spec of [{ name: "Web" }, { name: "web", replicas: 11 }, { name: "web", mode: "slow" }, {
          name: "web",
          tags: ["a", "a"]
        }]
      ) {
        assert.isTrue(Exit.isFailure(yield* Effect.exit(Limited.decode(object("x", spec)))), JSON.stringify(spec))
      }
    }).pipe(Effect.provide(KubeClient.layer.pipe(Layer.provideMerge(kubeLayer())))))
})

/** Field Schemas whose checks all have an OpenAPI form, with values on both sides of each check. */
const fields: ReadonlyArray<{ readonly schema: Schema.Top; readonly values: ReadonlyArray<unknown> }> = [
  { schema: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10 })), values: [0, 10, 11, -1, 2.5, "3", null] },
  { schema: Schema.Number.check(Schema.isGreaterThan(0)), values: [0, 0.1, -1, 7, "x"] },
  { schema: Schema.Number.check(Schema.isMultipleOf(5)), values: [5, 0, 7, 12.5] },
  { schema: Schema.Int.check(Schema.isInt32()), values: [1, 2147483648, -2147483649] },
  { schema: Schema.String.check(Schema.isPattern(/^[a-z]+$/)), values: ["abc", "Abc", "", "a1", 3] },
  { schema: Schema.String.check(Schema.isMaxLength(3)), values: ["", "abc", "abcd", 4] },
  { schema: Schema.String.check(Schema.isBetweenCodePoints(1, 3)), values: ["", "a", "abc", "abcd", "éé"] },
  { schema: Schema.Literals(["a", "b"]), values: ["a", "b", "c", 1] },
  { schema: Schema.Literals([1, 2]), values: [1, 2, 3, "1"] },
  { schema: Schema.Literals(["auto", 1]), values: ["auto", 1, 2, "1"] },
  {
    schema: Schema.Array(Schema.String).check(Schema.isUnique(), Schema.isMaxLength(2)),
    values: [[], ["a"], ["a", "a"], ["a", "b", "c"], [1], "a"]
  },
  { schema: Schema.NonEmptyArray(Schema.Int), values: [[], [1], [1, 2], ["1"]] },
  { schema: Schema.NullOr(Schema.Int), values: [null, 1, "1", 1.5] },
  { schema: Schema.Union([Schema.Int, Schema.String]), values: [1, "x", 1.5, true] },
  { schema: Schema.Boolean, values: [true, false, "true"] },
  { schema: Schema.NullOr(Schema.Literals(["a", "b"])), values: [null, "a", "c", "a|b"] },
  { schema: Schema.Literals([0.5, 1]), values: [0.5, 1, 2] },
  {
    schema: Schema.Record(Schema.String, Schema.String).check(Schema.isMinProperties(1)),
    values: [{}, { a: "x" }, { a: 1 }]
  },
  {
    schema: Schema.Array(Schema.Struct({
      on: Schema.Boolean.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(false)))
    })),
    values: [[], [{}], [{ on: true }, {}], [{ on: "yes" }]]
  },
  { schema: Schema.Record(Schema.String, Schema.Int), values: [{}, { a: 1 }, { a: "1" }] },
  { schema: Schema.Struct({ x: Schema.Int }), values: [{ x: 1 }, {}, { x: "1" }, { x: 1, y: 2 }] },
  {
    schema: Schema.Int.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(3))),
    values: [0, "x"]
  },
  {
    schema: Schema.Struct({
      port: Schema.Int.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(80)))
    }),
    values: [{}, { port: 1 }, { port: "1" }]
  }
]

let kinds = 0

describe("Resource.custom constraints: the cluster accepts what the decoder accepts, and stores only what decodes", () => {
  // each case: 1–4 fields, each required or optional, each absent or one of its values
  const int = (minimum: number, maximum: number) =>
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))
  const picks = Arbitrary.array(
    Arbitrary.all({ field: int(0, fields.length - 1), required: Arbitrary.schema(Schema.Boolean), choice: int(0, 7) }),
    { minLength: 1, maxLength: 4 }
  )
  it.effect.prop(
    "random Schemas and values: decoder accepts ⇒ server accepts; what is stored decodes alike",
    [picks],
    ([
      picked
    ]) =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.TestCluster
        const shape: Record<string, Schema.Top> = {}
        const spec: Record<string, unknown> = {}
        for (const pick of picked) {
          const field = fields[pick.field]!
          // absent, or one of the field's values
          const choice = pick.choice % (field.values.length + 1) - 1
          const name = `f${pick.field}`
          const isDefaulted = field.schema.ast.encoding !== undefined
          shape[name] = pick.required || isDefaulted
            ? field.schema
            : Schema.optionalKey(field.schema as Schema.Codec<unknown>)
          if (choice >= 0) spec[name] = field.values[choice]
        }
        const n = ++kinds
        const resource = Resource.custom({
          group: "prop.example.com",
          version: "v1",
          kind: `P${n}`,
          plural: `p${n}s`,
          scope: "Cluster",
          spec: Schema.Struct(shape) as unknown as Schema.Codec<Record<string, unknown>, Record<string, unknown>>
        })
        yield* Effect.orDie(cluster.create(Resource.crdManifest(resource) as never))
        const decode = Schema.decodeUnknownExit(resource.spec)
        const decoded = decode(spec)
        const created = yield* Effect.exit(cluster.create({
          apiVersion: resource.apiVersion,
          kind: resource.kind,
          metadata: { name: "x" },
          spec
        } as never))
        const what = `${JSON.stringify(Object.keys(shape))} ${JSON.stringify(spec)}: decoder ${
          Exit.isSuccess(decoded) ? "accepts" : "rejects"
        }, server ${Exit.isSuccess(created) ? "accepts" : `rejects (${String(created)})`}`
        // what the decoder accepts, the server accepts
        if (Exit.isSuccess(decoded)) assert.isTrue(Exit.isSuccess(created), what)
        if (Exit.isSuccess(created)) {
          // what the server stores (pruned, defaulted) decodes: to what the original decodes to when it decodes
          // (the server may accept more: a `null` in a field that is not nullable is pruned, as upstream does)
          const stored = (created.value as unknown as { spec: unknown }).spec
          const again = decode(stored)
          assert.isTrue(Exit.isSuccess(again), `${what}; stored ${JSON.stringify(stored)} does not decode`)
          if (Exit.isSuccess(decoded)) {
            assert.deepStrictEqual(again, decoded, `${what}; stored ${JSON.stringify(stored)}`)
          } else assert.include(JSON.stringify(spec), "null", `${what}: accepted but the decoder rejects it`)
        }
      }).pipe(Effect.provide(TestCluster.layer)),
    { arbitrary: { runs: 300 } }
  )
})
