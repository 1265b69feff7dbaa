/**
 * Custom resources against their CRD's structural schema: the pure functions (pruning, defaulting, validation with
 * upstream's wording), the same through `TestCluster` (create, update, patch, /status), and a property: for random
 * structural schemas and random objects built valid or invalid, the cluster accepts exactly the valid ones and
 * stores them pruned and defaulted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Result, Schema } from "effect"
import type { ApiError } from "../src/ApiError.js"
import { TestCluster } from "../src/index.js"
import * as Structural from "../src/internal/structural.js"
import type { KubeObject } from "../src/KubeObject.js"
import type { ResourceType } from "../src/ResourceType.js"

type Obj = Record<string, any>

const rt = (schema: Obj): ResourceType => ({
  group: "example.com",
  version: "v1",
  plural: "widgets",
  singular: "widget",
  kind: "Widget",
  listKind: "WidgetList",
  scope: "Namespaced",
  shortNames: [],
  categories: [],
  hasStatus: true,
  tracksGeneration: true,
  listKeys: new Map(),
  printerColumns: [],
  schema
})

const widgetSchema: Obj = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      required: ["image"],
      properties: {
        image: { type: "string", minLength: 1 },
        replicas: { type: "integer", minimum: 0, maximum: 10, default: 1 },
        mode: { type: "string", enum: ["fast", "safe"] },
        name: { type: "string", maxLength: 5, pattern: "^[a-z]+$" },
        ratio: { type: "number", exclusiveMaximum: true, maximum: 1, multipleOf: 0.25 },
        port: { "x-kubernetes-int-or-string": true },
        tags: { type: "array", maxItems: 2, items: { type: "string" }, "x-kubernetes-list-type": "set" },
        labels: { type: "object", additionalProperties: { type: "string" }, maxProperties: 2 },
        when: { type: "string", format: "date-time" },
        extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true
        },
        nullable: { type: "string", nullable: true },
        limits: {
          type: "object",
          properties: { min: { type: "integer" }, max: { type: "integer" } },
          "x-kubernetes-validations": [
            { rule: "self.min <= self.max", message: "min must not exceed max" },
            { rule: "self.max < 100", messageExpression: "'max is ' + string(self.max)" }
          ]
        },
        immutable: {
          type: "string",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "is immutable" }]
        }
      }
    },
    status: { type: "object", properties: { ready: { type: "boolean" } } }
  }
}

const causesOf = (obj: Obj, old?: Obj) => Structural.admit(rt(widgetSchema), obj, old)

describe("structural schemas: pruning, defaulting, validation", () => {
  it("prunes unknown fields (root apiVersion/kind/metadata kept, unknown metadata dropped) and lists their paths", () => {
    const obj: Obj = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "a", bogus: 1 },
      spec: { image: "x", foo: 1, extra: { anything: { goes: true } }, labels: { a: "b" }, template: { z: 1 } },
      top: "level"
    }
    assert.deepStrictEqual(Structural.unknownFields(rt(widgetSchema), obj), ["metadata.bogus", "spec.foo", "top"])
    assert.strictEqual(obj.top, "level", "unknownFields does not change its argument")
    Structural.decode(rt(widgetSchema), obj)
    assert.deepStrictEqual(obj, {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "a" },
      spec: {
        image: "x",
        replicas: 1,
        extra: { anything: { goes: true } },
        labels: { a: "b" },
        template: { z: 1 }
      }
    })
  })

  it("defaults missing and null fields, drops nulls of non-nullable fields without default, keeps nullable nulls", () => {
    const obj: Obj = { spec: { image: "x", replicas: null, mode: null, nullable: null } }
    Structural.decode(rt(widgetSchema), obj)
    assert.deepStrictEqual(obj.spec, { image: "x", replicas: 1, nullable: null })
  })

  it("a valid object has no causes", () => {
    const obj: Obj = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "a" },
      spec: {
        image: "x",
        replicas: 3,
        mode: "safe",
        name: "abc",
        ratio: 0.5,
        port: "http",
        tags: ["a", "b"],
        when: "2024-01-02T03:04:05Z",
        limits: { min: 1, max: 2 },
        template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }
      }
    }
    assert.deepStrictEqual(causesOf(obj), [])
  })

  it("one cause per field, worded as kube-apiserver words them", () => {
    const obj: Obj = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "a" },
      spec: {
        replicas: "three",
        mode: "slow",
        name: "toolong",
        ratio: 1,
        port: true,
        tags: ["a", "b", "a"],
        labels: { a: "1", b: "2", c: 3 },
        when: "yesterday",
        template: { kind: "Pod" },
        limits: { min: 300, max: 200 }
      }
    }
    const causes = causesOf(obj)
    const messages = causes.map((c) => `${c.reason} ${c.field}: ${c.message}`)
    for (
      const expected of [
        "FieldValueTypeInvalid spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
        "FieldValueNotSupported spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\"",
        "FieldValueTooLong spec.name: Too long: may not be more than 5 bytes",
        "FieldValueInvalid spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1",
        "FieldValueTypeInvalid spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
        "FieldValueTooMany spec.tags: Too many: 3: must have at most 2 items",
        "FieldValueTooMany spec.labels: Too many: 3: must have at most 2 items",
        "FieldValueTypeInvalid spec.labels.c: Invalid value: \"integer\": spec.labels.c in body must be of type string: \"integer\"",
        "FieldValueTypeInvalid spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\"",
        "FieldValueRequired spec.image: Required value",
        "FieldValueRequired spec.template.apiVersion: Required value: must not be empty",
        "FieldValueDuplicate spec.tags[2]: Duplicate value: \"a\"",
        // CEL rules do not run on an object with such errors (the custom resource strategy's hasBlockingErr)
        "FieldValueInvalid <nil>: Invalid value: null: some validation rules were not checked because the " +
        "object was invalid; correct the existing errors to complete validation"
      ]
    ) assert.include(messages, expected, messages.join("\n"))
    assert.strictEqual(causes.length, 13, messages.join("\n"))
  })

  it("CEL rules: message, messageExpression, fieldPath, reason, runtime errors", () => {
    const schema: Obj = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            min: { type: "integer" },
            max: { type: "integer" },
            names: { type: "array", items: { type: "string" } },
            opt: { type: "object", properties: { a: { type: "string" } } }
          },
          "x-kubernetes-validations": [
            { rule: "self.min <= self.max", message: "min must not exceed max" },
            { rule: "self.max < 100", messageExpression: "'max is ' + string(self.max)" },
            { rule: "self.names.all(n, n.startsWith('x'))", fieldPath: ".names", reason: "FieldValueForbidden" },
            { rule: "self.opt.a == 'y'" },
            { rule: "size(self.names) < 2 && self.names.exists(n, n.matches('^x[0-9]$'))" }
          ]
        }
      }
    }
    const causes = Structural.admit(
      rt(schema),
      { spec: { min: 300, max: 200, names: ["xa", "b"], opt: {} } },
      undefined
    )
    assert.deepStrictEqual(causes.map((c) => `${c.reason} ${c.field}: ${c.message}`), [
      // 1.36 omits an object's value in a rule's message
      "FieldValueInvalid spec: Invalid value: min must not exceed max",
      "FieldValueInvalid spec: Invalid value: max is 200",
      "FieldValueForbidden spec.names: Forbidden: failed rule: self.names.all(n, n.startsWith('x'))",
      "FieldValueInvalid spec: Invalid value: \"object\": no such key: a evaluating rule: self.opt.a == 'y'",
      "FieldValueInvalid spec: Invalid value: failed rule: size(self.names) < 2 && " +
      "self.names.exists(n, n.matches('^x[0-9]$'))"
    ])
  })

  it("ratcheting: an update does not fail on values it left unchanged", () => {
    const schema: Obj = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: { a: { type: "integer", maximum: 5 }, b: { type: "integer", maximum: 5 } },
          "x-kubernetes-validations": [{ rule: "self.a < 5", message: "a below 5" }]
        }
      }
    }
    const old = { spec: { a: 9, b: 1 } }
    assert.deepStrictEqual(Structural.admit(rt(schema), { spec: { a: 9, b: 1 } }, old), [])
    assert.deepStrictEqual(
      Structural.admit(rt(schema), { spec: { a: 9, b: 7 } }, old).map((c) => `${c.field}: ${c.message}`),
      [
        "spec.b: Invalid value: 7: spec.b in body should be less than or equal to 5",
        "spec: Invalid value: a below 5"
      ]
    )
  })

  it("more checks: minimum, pattern, minItems, minLength, multipleOf, a number for an integer, null items", () => {
    const schema: Obj = {
      type: "object",
      properties: {
        a: { type: "integer", minimum: 2, exclusiveMinimum: true },
        b: { type: "string", pattern: "^[a-z]+$" },
        c: { type: "array", minItems: 1, items: { type: "string" } },
        d: { type: "string", minLength: 2 },
        e: { type: "integer", multipleOf: 3 },
        f: { type: "integer" },
        g: { type: "array", items: { type: "string" } },
        h: { type: "object", minProperties: 1 }
      }
    }
    const causes = Structural.admit(
      rt(schema),
      { a: 2, b: "A1", c: [], d: "x", e: 4, f: 1.5, g: [null], h: {} },
      undefined
    )
    assert.deepStrictEqual(causes.map((c) => `${c.field}: ${c.message}`), [
      "a: Invalid value: 2: a in body should be greater than 2",
      "b: Invalid value: \"A1\": b in body should match '^[a-z]+$'",
      "c: Invalid value: 0: c in body should have at least 1 items",
      "d: Invalid value: \"x\": d in body should be at least 2 chars long",
      "e: Invalid value: 4: e in body should be a multiple of 3",
      "f: Invalid value: \"number\": f in body must be of type integer: \"number\"",
      "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in f",
      "g[0]: Invalid value: \"null\": g[0] in body must be of type string: \"null\"",
      "h: Invalid value: 0: h in body should have at least 1 properties"
    ])
  })

  it("transition rules run only on updates, against the old value", () => {
    const base = { metadata: { name: "a" }, spec: { image: "x", immutable: "one" } }
    assert.deepStrictEqual(causesOf(structuredClone(base)), [])
    assert.deepStrictEqual(causesOf(structuredClone(base), structuredClone(base)), [])
    const changed = { ...base, spec: { image: "x", immutable: "two" } }
    assert.deepStrictEqual(causesOf(changed, structuredClone(base)), [{
      reason: "FieldValueInvalid",
      message: "Invalid value: \"two\": is immutable",
      field: "spec.immutable"
    }])
  })

  it("the 422 message aggregates as upstream: one error bare, several in brackets", () => {
    const one = [{ reason: "FieldValueRequired", message: "Required value", field: "spec.image" }]
    assert.strictEqual(
      Structural.invalidMessage("Widget.example.com", "a", one),
      "Widget.example.com \"a\" is invalid: spec.image: Required value"
    )
    assert.strictEqual(
      Structural.invalidMessage("Widget.example.com", "a", [...one, { ...one[0]!, field: "spec.x" }, one[0]!]),
      "Widget.example.com \"a\" is invalid: [spec.image: Required value, spec.x: Required value]"
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// through TestCluster

const crdFor = (schema: Obj, plural = "widgets"): KubeObject =>
  ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names: { plural, singular: plural.slice(0, -1), kind: "Widget" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: schema }
      }]
    }
  }) as KubeObject

const widget = (name: string, spec: Obj, extra: Obj = {}): KubeObject =>
  ({
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "default" },
    spec,
    ...extra
  }) as KubeObject

const ref = (name: string) => ({ apiVersion: "example.com/v1", kind: "Widget", namespace: "default", name })

describe("structural schemas through TestCluster", () => {
  it.effect("a CRD whose CEL rule does not compile is refused (422 naming the rule), as kube-apiserver does", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const schema = {
        type: "object",
        properties: {
          spec: {
            type: "object",
            "x-kubernetes-validations": [{ rule: "self.a > 0" }, { rule: "self.a +* 2" }],
            properties: { a: { type: "integer" } }
          }
        }
      }
      const error = yield* Effect.flip(cluster.create(crdFor(schema)))
      assert.strictEqual(error.status.code, 422)
      const causes = error.status.details?.causes ?? []
      assert.strictEqual(causes.length, 1)
      assert.strictEqual(
        causes[0]!.field,
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule"
      )
      assert.match(causes[0]!.message ?? "", /^Invalid value: "self\.a \+\* 2": compilation failed: ERROR: /)
      // the same CRD with a rule that compiles is accepted and enforced
      yield* cluster.create(
        crdFor({
          ...schema,
          properties: { spec: { ...schema.properties.spec, "x-kubernetes-validations": [{ rule: "self.a > 0" }] } }
        })
      )
      const refused = yield* Effect.flip(cluster.create(widget("w", { a: 0 })))
      assert.strictEqual(refused.status.code, 422)
    }))

  it.effect("create prunes and defaults; an invalid object gets 422 with one cause per field", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      yield* cluster.create(crdFor(widgetSchema))
      const created = yield* cluster.create(widget("a", { image: "x", unknown: 1 }, { junk: true }))
      assert.deepStrictEqual(created.spec, { image: "x", replicas: 1 })
      assert.isUndefined((created as Obj).junk)
      const got = yield* cluster.get(ref("a"))
      assert.deepStrictEqual(got.spec, { image: "x", replicas: 1 })

      const error = yield* Effect.flip(cluster.create(widget("b", { image: "x", replicas: "three", mode: "slow" })))
      assert.strictEqual(error.status.code, 422)
      assert.strictEqual(error.status.reason, "Invalid")
      assert.strictEqual(
        error.status.message,
        "Widget.example.com \"b\" is invalid: [spec.replicas: Invalid value: \"string\": spec.replicas in body must be " +
          "of type integer: \"string\", spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\", " +
          "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; " +
          "correct the existing errors to complete validation]"
      )
      assert.deepStrictEqual(error.status.details, {
        name: "b",
        group: "example.com",
        kind: "Widget",
        causes: [
          {
            reason: "FieldValueTypeInvalid",
            message: "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
            field: "spec.replicas"
          },
          {
            reason: "FieldValueNotSupported",
            message: "Unsupported value: \"slow\": supported values: \"fast\", \"safe\"",
            field: "spec.mode"
          },
          {
            reason: "FieldValueInvalid",
            message: "Invalid value: null: some validation rules were not checked because the object was invalid; " +
              "correct the existing errors to complete validation",
            field: "<nil>"
          }
        ]
      })
      const missing = yield* Effect.flip(cluster.get(ref("b")))
      assert.strictEqual(missing.status.code, 404)
    }))

  it.effect("update, merge patch and /status are validated; status is checked against its schema", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      yield* cluster.create(crdFor(widgetSchema))
      const a = yield* cluster.create(widget("a", { image: "x", immutable: "one" }))
      const bad = yield* Effect.flip(cluster.update({ ...a, spec: { ...(a.spec as Obj), replicas: 11 } } as KubeObject))
      assert.strictEqual(
        bad.status.message,
        "Widget.example.com \"a\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less " +
          "than or equal to 10"
      )
      const transition = yield* Effect.flip(
        cluster.patch(ref("a"), { type: "merge", patch: { spec: { immutable: "two" } } })
      )
      assert.strictEqual(
        transition.status.message,
        "Widget.example.com \"a\" is invalid: spec.immutable: Invalid value: \"two\": is immutable"
      )
      const patched = yield* cluster.patch(ref("a"), { type: "merge", patch: { spec: { replicas: 4, bogus: 1 } } })
      assert.deepStrictEqual(patched.spec, { image: "x", immutable: "one", replicas: 4 })
      const status = yield* Effect.flip(
        cluster.update({ ...patched, status: { ready: "yes" } } as KubeObject, { subresource: "status" })
      )
      assert.strictEqual(status.status.details?.causes?.[0]?.field, "status.ready")
      const ok = yield* cluster.update({ ...patched, status: { ready: true, gone: 1 } } as KubeObject, {
        subresource: "status"
      })
      assert.deepStrictEqual(ok.status, { ready: true })
    }))

  it.effect("a schema default added later shows on read (defaulting on read, as from etcd)", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const crd = yield* cluster.create(
        crdFor({ type: "object", properties: { spec: { type: "object", properties: { a: { type: "string" } } } } })
      )
      yield* cluster.create(widget("a", { a: "x" }))
      const next = structuredClone(crd) as Obj
      next.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.b = { type: "string", default: "dflt" }
      yield* cluster.update(next as KubeObject)
      const got = yield* cluster.get(ref("a"))
      assert.deepStrictEqual(got.spec, { a: "x", b: "dflt" })
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// property: random structural schemas, random valid/invalid objects

/** A small deterministic PRNG (mulberry32) so each property run builds its schema and object from one seed. */
const prng = (seed: number) => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number): boolean => next() < p
  }
}
type Rng = ReturnType<typeof prng>

/** A generated schema node with generators of a valid and an invalid value (or none when all values are valid). */
interface Gen {
  readonly schema: Obj
  readonly valid: (
    r: Rng
  ) => { readonly sent: unknown; readonly stored: unknown; readonly unknown?: ReadonlyArray<string> }
  readonly invalid: ((r: Rng) => unknown) | undefined
}

const leaf = (r: Rng): Gen => {
  switch (r.int(0, 6)) {
    case 0: {
      const min = r.int(-5, 5)
      const max = min + r.int(0, 10)
      return {
        schema: { type: "integer", minimum: min, maximum: max },
        valid: (r) => {
          const v = r.int(min, max)
          return { sent: v, stored: v }
        },
        invalid: (r) => r.pick([max + r.int(1, 5), min - r.int(1, 5), "x", 1.5, true])
      }
    }
    case 1: {
      const n = r.int(1, 6)
      return {
        schema: { type: "string", maxLength: n },
        valid: (r) => {
          const v = "a".repeat(r.int(0, n))
          return { sent: v, stored: v }
        },
        invalid: (r) => r.pick(["b".repeat(n + r.int(1, 3)), 7, false])
      }
    }
    case 2:
      return {
        schema: { type: "string", enum: ["red", "green"] },
        valid: (r) => {
          const v = r.pick(["red", "green"])
          return { sent: v, stored: v }
        },
        invalid: (r) => r.pick(["blue", "", 1])
      }
    case 3:
      return {
        schema: { type: "string", pattern: "^[a-z]+$" },
        valid: (r) => {
          const v = r.pick(["abc", "z"])
          return { sent: v, stored: v }
        },
        invalid: (r) => r.pick(["A", "a1", ""])
      }
    case 4:
      return {
        schema: { type: "boolean" },
        valid: (r) => {
          const v = r.chance(0.5)
          return { sent: v, stored: v }
        },
        invalid: (r) => r.pick(["true", 0])
      }
    case 5:
      return {
        schema: { "x-kubernetes-int-or-string": true },
        valid: (r) => {
          const v = r.pick([8080, "http"])
          return { sent: v, stored: v }
        },
        invalid: (r) => r.pick([true, 1.5, ["a"]])
      }
    default: {
      const max = r.int(1, 3)
      return {
        schema: { type: "array", maxItems: max, items: { type: "integer" } },
        valid: (r) => {
          const v = Array.from({ length: r.int(0, max) }, () => r.int(0, 9))
          return { sent: v, stored: v }
        },
        invalid: (r) => r.chance(0.5) ? Array.from({ length: max + 1 }, () => 1) : [r.pick(["s", 1.5, null])]
      }
    }
  }
}

/** An object schema: some properties required, some defaulted, maybe a preserved subtree or a map. */
const objectGen = (r: Rng, depth: number): Gen => {
  if (depth > 0 && r.chance(0.15)) {
    return {
      schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      valid: () => ({ sent: { any: { thing: [1, "x"] } }, stored: { any: { thing: [1, "x"] } } }),
      invalid: () => "not an object"
    }
  }
  if (depth > 0 && r.chance(0.15)) {
    return {
      schema: { type: "object", additionalProperties: { type: "string" } },
      valid: () => ({ sent: { a: "1", b: "2" }, stored: { a: "1", b: "2" } }),
      invalid: () => ({ a: 1 })
    }
  }
  const names = ["alpha", "beta", "gamma", "delta"].slice(0, r.int(1, 4))
  const props = names.map((name) => {
    const gen = depth < 2 && r.chance(0.25) ? objectGen(r, depth + 1) : leaf(r)
    const withDefault = r.chance(0.3)
    const dflt = withDefault ? gen.valid(r).stored : undefined
    return { name, gen, required: !withDefault && r.chance(0.3), dflt }
  })
  const schema: Obj = {
    type: "object",
    properties: Object.fromEntries(
      props.map((p) => [p.name, p.dflt === undefined ? p.gen.schema : { ...p.gen.schema, default: p.dflt }])
    )
  }
  const required = props.filter((p) => p.required).map((p) => p.name)
  if (required.length > 0) schema.required = required
  const build = (r: Rng, breakOne: boolean) => {
    const sent: Obj = {}
    const stored: Obj = {}
    const unknown: Array<string> = []
    const candidates = props.filter((p) => p.gen.invalid !== undefined)
    const broken = breakOne ? r.pick(candidates.length > 0 ? candidates : props) : undefined
    for (const p of props) {
      if (p === broken) {
        if (p.gen.invalid !== undefined) sent[p.name] = p.gen.invalid(r)
        continue
      }
      if (!p.required && r.chance(0.4)) {
        if (p.dflt !== undefined) stored[p.name] = structuredClone(p.dflt)
        continue
      }
      const v = p.gen.valid(r)
      for (const u of v.unknown ?? []) unknown.push(`${p.name}.${u}`)
      sent[p.name] = v.sent
      stored[p.name] = v.stored
    }
    if (r.chance(0.5)) {
      sent.unknownField = r.pick([1, "x", { nested: true }])
      unknown.push("unknownField")
    }
    return { sent, stored, unknown, broken }
  }
  return {
    schema,
    valid: (r) => build(r, false),
    invalid: (r) => {
      const { broken, sent } = build(r, true)
      // a required property left out is invalid too (when the broken one had no invalid value)
      if (broken !== undefined && broken.gen.invalid === undefined) {
        if (broken.required) delete sent[broken.name]
        else return 5
      }
      return sent
    }
  }
}

describe("structural schemas: property", () => {
  it.effect.prop(
    "the cluster accepts exactly the valid custom resources and stores them pruned and defaulted",
    [Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 ** 31 - 1 })))],
    ([seed]) =>
      Effect.gen(function*() {
        const r = prng(seed)
        const spec = objectGen(r, 0)
        const schema = { type: "object", properties: { spec: spec.schema } }
        const cluster = yield* TestCluster.make()
        yield* cluster.create(crdFor(schema))
        const makeValid = r.chance(0.5)
        const built = makeValid ? spec.valid(r) : undefined
        const sent = built !== undefined ? built.sent : spec.invalid!(r)
        const result = yield* Effect.result(cluster.create(widget("w", sent as Obj)))
        if (built !== undefined) {
          assert.isTrue(Result.isSuccess(result), `valid object refused: ${JSON.stringify({ schema, sent, result })}`)
          const stored = yield* cluster.get(ref("w"))
          assert.deepStrictEqual(stored.spec, built.stored, JSON.stringify({ schema, sent }))
          // what fieldValidation=Strict reports: exactly the unknown fields put in
          assert.deepStrictEqual(
            Structural.unknownFields(rt(schema), widget("w", sent as Obj)),
            (built.unknown ?? []).map((u) => `spec.${u}`).sort()
          )
        } else {
          assert.isTrue(Result.isFailure(result), `invalid object accepted: ${JSON.stringify({ schema, sent })}`)
          const error = (result as Result.Failure<KubeObject, ApiError>).failure
          assert.strictEqual(error.status.code, 422, JSON.stringify(error.status))
          assert.isAbove(error.status.details?.causes?.length ?? 0, 0)
        }
      }),
    { timeout: 30_000, arbitrary: { runs: 200 } }
  )
})
