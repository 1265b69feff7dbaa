/**
 * Resource descriptors: paths, decoding of built-ins and custom resources, and CRD manifests from Schemas.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ObjectMeta } from "@reconcile/core"
import { Arbitrary, Effect, Exit, Option, Schema } from "effect"
import * as Kube from "../src/Kube.js"
import * as Resource from "../src/Resource.js"
import { kubeLayer, makeEnv, waitServed } from "./support/env.js"
import { WebApp } from "./support/fixtures.js"
import { structuralIssues } from "./support/structural.js"

/** The typed error of a failed Exit (effect 4's Cause is a flat list of reasons, no `_tag: "Fail"`). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>, message?: string): E => {
  // one reason, a Fail: what effect 3's `cause._tag === "Fail"` checked
  assert(Exit.isFailure(exit) && exit.cause.reasons.length === 1, `expected one failure, got ${String(exit)}`)
  const error = Exit.findErrorOption(exit)
  assert(Option.isSome(error), message ?? `expected a failure, got ${String(exit)}`)
  return error.value
}

const Gadget = Resource.custom({
  group: "example.com",
  version: "v1alpha1",
  kind: "Gadget",
  plural: "gadgets",
  scope: "Cluster",
  spec: Schema.Struct({ size: Schema.Number })
})

describe("Resource paths", () => {
  it("core, grouped, namespaced, cluster-scoped, subresources", () => {
    assert.strictEqual(Resource.ConfigMap.path(), "/api/v1/configmaps")
    assert.strictEqual(Resource.ConfigMap.path({ namespace: "ns" }), "/api/v1/namespaces/ns/configmaps")
    assert.strictEqual(Resource.ConfigMap.path({ namespace: "ns", name: "a" }), "/api/v1/namespaces/ns/configmaps/a")
    assert.strictEqual(
      Resource.Deployment.path({ namespace: "ns", name: "web", subresource: "status" }),
      "/apis/apps/v1/namespaces/ns/deployments/web/status"
    )
    assert.strictEqual(
      Resource.Namespace.path({ namespace: "ignored", name: "kube-system" }),
      "/api/v1/namespaces/kube-system"
    )
    assert.strictEqual(
      Resource.Lease.path({ namespace: "kube-system" }),
      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    )
    assert.strictEqual(Resource.EventsV1Event.apiVersion, "events.k8s.io/v1")
    assert.strictEqual(Resource.Event.apiVersion, "v1")
    assert.strictEqual(
      Resource.CustomResourceDefinition.path({ name: "webapps.example.com" }),
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/webapps.example.com"
    )
    assert.strictEqual(
      WebApp.path({ namespace: "a b", name: "x/y" }),
      "/apis/example.com/v1/namespaces/a%20b/webapps/x%2Fy"
    )
    assert.strictEqual(Gadget.path({ namespace: "ns", name: "g" }), "/apis/example.com/v1alpha1/gadgets/g")
    assert.isTrue(Resource.isCustom(WebApp))
    assert.isFalse(Resource.isCustom(Resource.Pod))
  })

  // FastCheck.string({ minLength: 1 }) (printable ASCII) → effect 4's String arbitrary, which also makes lone UTF-16
  // surrogates: those are no text (no Kubernetes name has one; a path maps them to U+FFFD, tested below), so they are
  // left out of this round-trip
  const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
  const names = Arbitrary.schema(Schema.String.check(Schema.isMinLength(1))).pipe(
    Arbitrary.filter((name) => !loneSurrogate.test(name))
  )
  it.prop("paths of names round-trip through URL decoding", [names], ([name]) => {
    const path = Resource.ConfigMap.path({ namespace: "ns", name })
    const last = path.split("/").pop()!
    assert.strictEqual(decodeURIComponent(last), name)
  })

  it("a name with a lone surrogate still gives a path (U+FFFD), never a throw", () => {
    assert.strictEqual(
      Resource.ConfigMap.path({ namespace: "ns", name: "a\uD800b" }),
      "/api/v1/namespaces/ns/configmaps/a%EF%BF%BDb"
    )
  })

  it("built-in and custom objects satisfy core's HasMetadata", () => {
    const meta = (o: ObjectMeta.HasMetadata) => o.metadata?.name
    const cm: Resource.ConfigMap = { metadata: { name: "x", creationTimestamp: "2024-01-01T00:00:00Z" } }
    assert.strictEqual(meta(cm), "x")
    const app: Resource.Type<typeof WebApp> = {
      apiVersion: "example.com/v1",
      kind: "WebApp",
      metadata: { name: "w" },
      spec: { image: "nginx", ports: [] }
    }
    assert.strictEqual(meta(app), "w")
  })
})

describe("Resource decoding", () => {
  it.effect("built-ins: objects pass (list items get apiVersion/kind), other values are Decode errors", () =>
    Effect.gen(function*() {
      const item = yield* Resource.ConfigMap.decode({ metadata: { name: "a" }, data: { k: "v" } })
      assert.strictEqual(item.kind, "ConfigMap")
      assert.strictEqual(item.apiVersion, "v1")
      for (
        const bad of [null, 42, "x", [1], { kind: "Secret" }, { apiVersion: "apps/v1", kind: "ConfigMap" }, {
          metadata: 3
        }]
      ) {
        const error = failureOf(yield* Effect.exit(Resource.ConfigMap.decode(bad)), JSON.stringify(bad))
        assert.strictEqual(error._tag, "Decode")
        assert.strictEqual(error.kind, "ConfigMap")
      }
    }))

  it.effect("Secrets: undecodable text is redacted", () =>
    Effect.gen(function*() {
      const error = failureOf(
        yield* Effect.exit(Resource.Secret.decode({ kind: "Other", data: { password: "aHVudGVyMg==" } }))
      )
      assert.notInclude(error.raw, "aHVudGVyMg")
      assert.notInclude(error.message, "aHVudGVyMg")
    }))

  it.effect("custom: spec and status are decoded by their Schemas; failures name the object and field", () =>
    Effect.gen(function*() {
      const ok = yield* WebApp.decode({
        apiVersion: "example.com/v1",
        kind: "WebApp",
        metadata: { name: "w", namespace: "ns" },
        spec: { image: "nginx", startAt: "2024-05-01T00:00:00.000Z" },
        status: { readyReplicas: 2 }
      })
      assert.deepStrictEqual(ok.spec.ports, [])
      assert.instanceOf(ok.spec.startAt, Date)
      assert.strictEqual(ok.status?.readyReplicas, 2)
      const error = failureOf(
        yield* Effect.exit(WebApp.decode({
          kind: "WebApp",
          metadata: { name: "w", namespace: "ns" },
          spec: { image: "nginx", replicas: "three" }
        }))
      )
      assert.strictEqual(error._tag, "Decode")
      assert.include(error.message, "ns/w")
      assert.include(error.message, "spec: replicas")
      assert.include(error.raw, "three")
      const badStatus = failureOf(
        yield* Effect.exit(WebApp.decode({
          metadata: { name: "w" },
          spec: { image: "nginx" },
          status: { readyReplicas: 1.5 }
        }))
      )
      assert.include(badStatus.message, "status: readyReplicas")
    }))

  it.effect("custom: encode writes the Schema's encoded form", () =>
    Effect.gen(function*() {
      const encoded = yield* WebApp.encode({
        apiVersion: "example.com/v1",
        kind: "WebApp",
        metadata: { name: "w" },
        spec: { image: "nginx", ports: [], startAt: new Date("2024-05-01T00:00:00.000Z") }
      })
      assert.deepStrictEqual((encoded as { spec: unknown }).spec, {
        image: "nginx",
        ports: [],
        startAt: "2024-05-01T00:00:00.000Z"
      })
    }))
})

describe("Resource.crdManifest", () => {
  it("names, scope, version, status subresource", () => {
    const crd = Resource.crdManifest(WebApp)
    assert.strictEqual(crd.metadata?.name, "webapps.example.com")
    assert.strictEqual(crd.spec.scope, "Namespaced")
    assert.deepStrictEqual(crd.spec.names, {
      kind: "WebApp",
      listKind: "WebAppList",
      plural: "webapps",
      singular: "webapp",
      shortNames: ["wa"]
    })
    const version = crd.spec.versions[0]!
    assert.strictEqual(version.name, "v1")
    assert.deepStrictEqual(version.subresources, { status: {} })
    assert.isUndefined(Resource.crdManifest(Gadget).spec.versions[0]!.subresources)
    assert.strictEqual(Resource.crdManifest(Gadget).spec.scope, "Cluster")
  })

  it("openAPIV3Schema is structural and says what the Schema says", () => {
    const schema = Resource.crdManifest(WebApp).spec.versions[0]!.schema!.openAPIV3Schema as Record<string, any>
    assert.deepStrictEqual(structuralIssues(schema), [])
    const spec = schema.properties.spec
    assert.deepStrictEqual(spec.required, ["image"])
    assert.deepStrictEqual(spec.properties.image, {
      type: "string",
      minLength: 1,
      description: "a string at least 1 character(s) long"
    })
    assert.strictEqual(spec.properties.replicas.type, "integer")
    assert.strictEqual(spec.properties.replicas.minimum, 0)
    assert.strictEqual(spec.properties.ports.items.type, "object")
    assert.deepStrictEqual(spec.properties.ports.items.required, ["name", "port"])
    assert.strictEqual(spec.properties.ports.items.description, "a named port")
    assert.include(spec.properties.ports.items.properties.port, { type: "integer", minimum: 1, maximum: 65535 })
    assert.deepStrictEqual(spec.properties.mode, { type: "string", enum: ["rolling", "recreate"] })
    assert.deepStrictEqual(spec.properties.labels, { type: "object", additionalProperties: { type: "string" } })
    assert.strictEqual(spec.properties.startAt.type, "string")
    assert.include(spec.properties.weight, { type: "number", nullable: true, minimum: 0, exclusiveMinimum: true })
    assert.deepStrictEqual(spec.properties.target, { "x-kubernetes-int-or-string": true })
    assert.deepStrictEqual(spec.properties.extra, { "x-kubernetes-preserve-unknown-fields": true })
    assert.deepStrictEqual(spec.properties.strategy.properties._tag, { type: "string", enum: ["Canary", "BlueGreen"] })
    assert.deepStrictEqual(spec.properties.strategy.required, ["_tag"])
    assert.strictEqual(spec.properties.pair.type, "array")
    assert.strictEqual(schema.properties.status.properties.conditions.items.properties.type.type, "string")
  })

  it("pins the generated spec schema (effect 4's JSON Schema, normalised to what effect 3 generated)", () => {
    const schema = Resource.crdManifest(WebApp).spec.versions[0]!.schema!.openAPIV3Schema as Record<string, any>
    assert.deepStrictEqual(schema.properties.spec, {
      type: "object",
      properties: {
        image: { type: "string", minLength: 1, description: "a string at least 1 character(s) long" },
        // effect 4 writes Schema.Int's safe-integer range; effect 3 wrote no bounds
        replicas: { type: "integer", minimum: 0, description: "a number greater than or equal to 0" },
        // `withDecodingDefaultType(Effect.succeed([]))`: the server stores what the decoder fills in
        ports: {
          type: "array",
          default: [],
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              port: { type: "integer", minimum: 1, maximum: 65535, description: "a number between 1 and 65535" }
            },
            required: ["name", "port"],
            description: "a named port"
          }
        },
        // optional fields are not nullable (effect 4 writes `undefined` as a null branch)
        mode: { type: "string", enum: ["rolling", "recreate"] },
        labels: { type: "object", additionalProperties: { type: "string" } },
        startAt: { type: "string" },
        // Schema.Number without its "NaN"/"Infinity" string branch
        weight: {
          type: "number",
          minimum: 0,
          exclusiveMinimum: true,
          description: "a number greater than 0",
          nullable: true
        },
        target: { "x-kubernetes-int-or-string": true },
        extra: { "x-kubernetes-preserve-unknown-fields": true },
        strategy: {
          type: "object",
          properties: {
            _tag: { type: "string", enum: ["Canary", "BlueGreen"] },
            percent: { type: "integer", description: "an integer" },
            preview: { type: "boolean" }
          },
          required: ["_tag"]
        },
        pair: { type: "array", minItems: 2, maxItems: 2, items: { "x-kubernetes-preserve-unknown-fields": true } }
      },
      required: ["image"]
    })
  })

  it("effect 4 JSON Schema differences are normalised", () => {
    const specOf = (spec: Schema.Codec<any, any>) => {
      const r = Resource.custom({ group: "g.io", version: "v1", kind: "K", plural: "ks", scope: "Cluster", spec })
      const schema = Resource.crdManifest(r).spec.versions[0]!.schema!.openAPIV3Schema as Record<string, any>
      return schema.properties.spec.properties
    }
    const p = specOf(Schema.Struct({
      optional: Schema.optional(Schema.String),
      optionalKey: Schema.optionalKey(Schema.String),
      nullable: Schema.NullOr(Schema.String),
      optionalNullable: Schema.optional(Schema.NullOr(Schema.Boolean)),
      number: Schema.Number,
      int: Schema.Int,
      // effect 4 exports patterns only with the `u` flag; effect 3 exported them all
      pattern: Schema.String.check(Schema.isPattern(/^[a-z]+$/)),
      unicode: Schema.String.check(Schema.isPattern(/^[a-z]+$/u)),
      caseless: Schema.String.check(Schema.isPattern(/^[a-z]+$/i)),
      // JSON Schema counts code points, effect UTF-16 units: minLength 3 can be 2 code points (kept from effect 4)
      min3: Schema.String.check(Schema.isMinLength(3)),
      both: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(5)),
      described: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "mine" }),
      items: Schema.Array(Schema.String).check(Schema.isMinLength(2))
    }))
    assert.deepStrictEqual(p.optional, { type: "string" })
    assert.deepStrictEqual(p.optionalKey, { type: "string" })
    assert.deepStrictEqual(p.nullable, { type: "string", nullable: true })
    assert.deepStrictEqual(p.optionalNullable, { type: "boolean", nullable: true })
    assert.deepStrictEqual(p.number, { type: "number" })
    assert.deepStrictEqual(p.int, { type: "integer", description: "an integer" })
    assert.deepStrictEqual(p.pattern, {
      type: "string",
      pattern: "^[a-z]+$",
      description: "a string matching the pattern ^[a-z]+$"
    })
    assert.deepStrictEqual(p.unicode, {
      type: "string",
      pattern: "^[a-z]+$",
      description: "a string matching the pattern ^[a-z]+$"
    })
    assert.isUndefined(p.caseless.pattern)
    assert.deepStrictEqual(p.min3, {
      type: "string",
      minLength: 2,
      description: "a string at least 3 character(s) long"
    })
    assert.deepStrictEqual(p.both, {
      type: "string",
      minLength: 1,
      maxLength: 5,
      description: "a string at most 5 character(s) long"
    })
    assert.deepStrictEqual(p.described, { type: "string", minLength: 1, description: "mine" })
    assert.deepStrictEqual(p.items, {
      type: "array",
      minItems: 2,
      items: { type: "string" },
      description: "an array of at least 2 item(s)"
    })
  })

  it("recursive, class and transformed Schemas still give structural schemas", () => {
    interface Tree {
      readonly name: string
      readonly children: ReadonlyArray<Tree>
    }
    const Tree: Schema.Codec<Tree> = Schema.Struct({
      name: Schema.String,
      children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree))
    }).annotate({ identifier: "Tree" })
    class Limits extends Schema.Class<Limits>("Limits")({ cpu: Schema.NumberFromString, memory: Schema.String }) {}
    const Odd = Resource.custom({
      group: "example.com",
      version: "v1",
      kind: "Odd",
      plural: "odds",
      scope: "Namespaced",
      spec: Schema.Struct({
        tree: Tree,
        limits: Limits,
        trimmed: Schema.Trim,
        // effect 3's Schema.BigInt (a string decoded to a bigint)
        big: Schema.BigIntFromString,
        opt: Schema.OptionFromNullOr(Schema.String),
        either: Schema.Union([Schema.String, Schema.Struct({ a: Schema.Number })])
      })
    })
    const schema = Resource.crdManifest(Odd).spec.versions[0]!.schema!.openAPIV3Schema as Record<string, any>
    assert.deepStrictEqual(structuralIssues(schema), [])
    assert.strictEqual(schema.properties.spec.properties.tree.properties.children.type, "array")
    assert.strictEqual(schema.properties.spec.properties.limits.properties.cpu.type, "string")
  })

  const fieldSchemas: ReadonlyArray<Schema.Codec<any, any>> = [
    Schema.String,
    Schema.Number,
    Schema.Int,
    Schema.Boolean,
    Schema.Array(Schema.String),
    Schema.Literals(["a", "b"]),
    Schema.NullOr(Schema.Int),
    Schema.Record(Schema.String, Schema.Number),
    Schema.Struct({ x: Schema.String }),
    Schema.Unknown,
    Schema.Union([Schema.Int, Schema.String]),
    Schema.Tuple([Schema.String]),
    Schema.DateFromString
  ]
  it.prop(
    "manifests of generated struct Schemas are structural",
    // FastCheck.array(FastCheck.constantFrom(...), { maxLength: 8 }) → indices drawn by an effect 4 Arbitrary
    [
      Arbitrary.array(
        Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: fieldSchemas.length - 1 }))),
        { maxLength: 8 }
      ).pipe(Arbitrary.map((indices) => indices.map((i) => fieldSchemas[i]!)))
    ],
    ([fields]) => {
      const spec = Schema.Struct(
        Object.fromEntries(fields.map((s, i) => [`f${i}`, i % 2 === 0 ? s : Schema.optional(s)]))
      )
      const r = Resource.custom({ group: "g.io", version: "v1", kind: "K", plural: "ks", scope: "Cluster", spec })
      const schema = Resource.crdManifest(r).spec.versions[0]!.schema!.openAPIV3Schema as Record<string, any>
      assert.deepStrictEqual(structuralIssues(schema), [])
    }
  )
})

const env = makeEnv()

layer(env.layer)("Resource against TestApiServer", (it) => {
  it.effect("the generated CRD is accepted and its kind is then served", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const crd = Resource.crdManifest(WebApp)
      yield* kube.request({ method: "POST", path: Resource.CustomResourceDefinition.path(), body: crd })
      yield* waitServed(WebApp)
      const created = yield* kube.request({
        method: "POST",
        path: WebApp.path({ namespace: "default" }),
        body: yield* WebApp.encode({
          apiVersion: WebApp.apiVersion,
          kind: WebApp.kind,
          metadata: { name: "served" },
          spec: { image: "nginx:1", ports: [{ name: "http", port: 80 }] }
        })
      })
      const app = yield* WebApp.decode(created)
      assert.strictEqual(app.metadata.name, "served")
      assert.deepStrictEqual(app.spec.ports, [{ name: "http", port: 80 }])
      const viaShortName = yield* kube.request({ method: "GET", path: "/apis/example.com/v1" })
      const names = (viaShortName as { resources: Array<{ name: string; shortNames?: Array<string> }> }).resources
      assert.deepStrictEqual(names.find((r) => r.name === "webapps")?.shortNames, ["wa"])
      // a spec the Schema rejects is rejected by the server too: the CRD carries the Schema's constraints
      const rejected = failureOf(
        yield* Effect.exit(kube.request({
          method: "POST",
          path: WebApp.path({ namespace: "default" }),
          body: {
            apiVersion: "example.com/v1",
            kind: "WebApp",
            metadata: { name: "broken" },
            spec: { image: 7, replicas: -1 }
          }
        }))
      )
      assert.strictEqual(rejected._tag, "Invalid")
      assert.include(rejected.message, `WebApp.example.com "broken" is invalid`)
      assert.include(
        rejected.message,
        `spec.image: Invalid value: "integer": spec.image in body must be of type string`
      )
      assert.include(rejected.message, "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than")
      // a stored object the Schema rejects (from an older, looser CRD) is a Decode error on read
      const raw = { apiVersion: "example.com/v1", kind: "WebApp", metadata: { name: "broken" }, spec: { image: 7 } }
      const decoded = failureOf(yield* Effect.exit(WebApp.decode(raw)))
      assert.strictEqual(decoded._tag, "Decode")
      assert.include(decoded.issue, "broken: spec: image")
    }).pipe(Effect.provide(kubeLayer())))
})
