/**
 * Conversion webhooks: the round-trip laws over arbitrary objects (hub → spoke → hub, spoke → hub → spoke, spoke →
 * spoke through the hub, a spoke's edits), the ConversionReview handler (several objects; every malformed input
 * answered with a `Failure` naming what is wrong) and the CRD's conversion stanza.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Result, Schema } from "effect"
import * as Conversion from "../src/Conversion.js"
import * as Resource from "../src/Resource.js"

const common = { group: "example.com", kind: "WebApp", plural: "webapps", scope: "Namespaced" } as const

/** The hub: says everything the spokes say, and more (`paused`, `labels`, `status.phase`). */
const V1 = Resource.custom({
  ...common,
  version: "v1",
  storage: true,
  spec: Schema.Struct({
    image: Schema.String,
    replicas: Schema.Int,
    paused: Schema.optional(Schema.Boolean),
    labels: Schema.optional(Schema.Record(Schema.String, Schema.String))
  }),
  status: Schema.Struct({
    readyReplicas: Schema.optional(Schema.Int),
    phase: Schema.optional(Schema.Literals(["Pending", "Running"]))
  })
})

/** A spoke with another shape (`image: { repository, tag }`, `instances`) and no status. */
const V1alpha1 = Resource.custom({
  ...common,
  version: "v1alpha1",
  spec: Schema.Struct({
    image: Schema.Struct({ repository: Schema.String, tag: Schema.String }),
    instances: Schema.Int
  })
})

/** A spoke with a required `paused` the hub may lack, and part of the status. */
const V1beta1 = Resource.custom({
  ...common,
  version: "v1beta1",
  spec: Schema.Struct({ image: Schema.String, replicas: Schema.Int, paused: Schema.Boolean }),
  status: Schema.Struct({ readyReplicas: Schema.optional(Schema.Int) })
})

const splitImage = (image: string) => {
  const at = image.lastIndexOf(":")
  return at < 0 ? { repository: image, tag: "" } : { repository: image.slice(0, at), tag: image.slice(at + 1) }
}

const alpha: Conversion.Spoke<typeof V1, typeof V1alpha1> = {
  resource: V1alpha1,
  toHub: (o) => ({ spec: { image: `${o.spec.image.repository}:${o.spec.image.tag}`, replicas: o.spec.instances } }),
  fromHub: (o) => ({ spec: { image: splitImage(o.spec.image), instances: o.spec.replicas } })
}

const WebApps = Conversion.webhook({
  hub: V1,
  spokes: [alpha, {
    resource: V1beta1,
    toHub: (o) => ({
      spec: { image: o.spec.image, replicas: o.spec.replicas, paused: o.spec.paused },
      ...(o.status === undefined ? {} : { status: { ...o.status } })
    }),
    fromHub: (o) => ({
      spec: { image: o.spec.image, replicas: o.spec.replicas, paused: o.spec.paused ?? false },
      ...(o.status === undefined ? {} : {
        status: o.status.readyReplicas === undefined ? {} : { readyReplicas: o.status.readyReplicas }
      })
    })
  }]
})

// the functions are checked against the two versions' Schemas
Conversion.webhook({
  hub: V1,
  spokes: [{
    resource: V1alpha1,
    // @ts-expect-error: the hub's image is a string
    toHub: (o) => ({ spec: { image: o.spec.image, replicas: o.spec.instances } }),
    fromHub: (o) => ({ spec: { image: splitImage(o.spec.image), instances: o.spec.replicas } })
  }]
})
Conversion.webhook({
  hub: V1,
  spokes: [{
    resource: V1alpha1,
    toHub: (o) => ({ spec: { image: o.spec.image.repository, replicas: o.spec.instances } }),
    // @ts-expect-error: v1alpha1 has no replicas
    fromHub: (o) => ({ spec: { image: splitImage(o.spec.image), replicas: o.spec.replicas } })
  }]
})

type Json = Record<string, any>

const convert = (object: unknown, apiVersion: string): Json => {
  const result = WebApps.convert(object, apiVersion)
  if (Result.isFailure(result)) assert.fail(result.failure.message)
  return JSON.parse(JSON.stringify(result.success))
}

// generators, as Schemas (effect 4.1 bundles no FastCheck; it.prop draws from effect/Arbitrary)
const Name = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9-]{0,20}$/))
const Metadata = Schema.Struct({
  name: Name,
  namespace: Name,
  uid: Schema.optional(Schema.String),
  resourceVersion: Schema.optional(Schema.String),
  labels: Schema.optional(Schema.Record(Name, Schema.String)),
  // what the API server sends: no empty map, and never the webhook's own annotation on a hub object
  annotations: Schema.optional(
    Schema.Record(Schema.String.check(Schema.isPattern(/^[a-z]{1,10}\.io\/[a-z]{1,10}$/)), Schema.String)
      .check(Schema.isMinProperties(1))
  )
})
const HubObject = Schema.Struct({
  metadata: Metadata,
  spec: V1.spec,
  status: Schema.optional(V1.status!)
})
/** A v1alpha1 tag has no `:` (its `toHub` joins repository and tag with one: `fromHub` splits at the last). */
const AlphaObject = Schema.Struct({
  metadata: Metadata,
  spec: Schema.Struct({
    image: Schema.Struct({ repository: Schema.String, tag: Schema.String.check(Schema.isPattern(/^[^:]*$/)) }),
    instances: Schema.Int
  })
})
const BetaObject = Schema.Struct({ metadata: Metadata, spec: V1beta1.spec, status: Schema.optional(V1beta1.status!) })

const wire = (apiVersion: string, o: object): Json => JSON.parse(JSON.stringify({ apiVersion, kind: "WebApp", ...o }))

describe("Conversion: round trips", () => {
  it.prop(
    "hub → spoke → hub is the identity, with what the spoke cannot say kept in its annotation",
    [Arbitrary.schema(HubObject)],
    ([o]) => {
      const hub = wire("example.com/v1", o)
      for (const spoke of ["example.com/v1alpha1", "example.com/v1beta1"]) {
        const converted = convert(hub, spoke)
        assert.strictEqual(converted.apiVersion, spoke)
        assert.strictEqual(converted.kind, "WebApp")
        // the spoke's object decodes as its version
        const decodes = spoke.endsWith("alpha1")
          ? Result.isSuccess(Effect.runSync(Effect.result(V1alpha1.decode(converted))))
          : Result.isSuccess(Effect.runSync(Effect.result(V1beta1.decode(converted))))
        assert.isTrue(decodes, JSON.stringify(converted))
        // metadata untouched but for the annotation
        const { [WebApps.annotation]: _kept, ...annotations } = converted.metadata.annotations ?? {}
        assert.deepStrictEqual(
          { ...converted.metadata, annotations: Object.keys(annotations).length === 0 ? undefined : annotations },
          { ...hub.metadata, annotations: hub.metadata.annotations }
        )
        assert.deepStrictEqual(convert(converted, "example.com/v1"), hub)
      }
    }
  )

  it.prop(
    "spoke → hub → spoke is the identity (no annotation on either side when the hub says it all)",
    [Arbitrary.schema(AlphaObject), Arbitrary.schema(BetaObject)],
    ([a, b]) => {
      for (const spoke of [wire("example.com/v1alpha1", a), wire("example.com/v1beta1", b)]) {
        const hub = convert(spoke, "example.com/v1")
        assert.strictEqual(hub.apiVersion, "example.com/v1")
        assert.deepStrictEqual(hub.metadata, spoke.metadata)
        assert.deepStrictEqual(convert(hub, spoke.apiVersion), spoke)
      }
    }
  )

  it.prop(
    "spoke → spoke goes through the hub: the same object as from the hub, and back to the hub unchanged",
    [Arbitrary.schema(HubObject)],
    ([o]) => {
      const hub = wire("example.com/v1", o)
      const alpha = convert(hub, "example.com/v1alpha1")
      const beta = convert(alpha, "example.com/v1beta1")
      assert.deepStrictEqual(beta, convert(hub, "example.com/v1beta1"))
      assert.deepStrictEqual(convert(beta, "example.com/v1alpha1"), alpha)
      assert.deepStrictEqual(convert(beta, "example.com/v1"), hub)
    }
  )

  it.prop(
    "a spoke's edits win; the rest of the hub's object survives them",
    [
      Arbitrary.schema(HubObject),
      Arbitrary.schema(Schema.Int),
      Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[a-z0-9.]{1,10}$/)))
    ],
    ([o, instances, tag]) => {
      const hub = wire("example.com/v1", o)
      const spoke = convert(hub, "example.com/v1alpha1")
      // (-0 is 0 on the wire)
      const edited = { ...spoke, spec: { image: { ...spoke.spec.image, tag }, instances: instances + 0 } }
      const back = convert(edited, "example.com/v1")
      assert.deepStrictEqual(back, {
        ...hub,
        spec: { ...hub.spec, image: `${spoke.spec.image.repository}:${tag}`, replicas: instances + 0 }
      })
    }
  )

  it("keeps a field only the hub has in the spoke's annotation, and nothing else", () => {
    const hub = wire("example.com/v1", {
      metadata: { name: "web", namespace: "default" },
      spec: { image: "nginx:1.27", replicas: 2, paused: true },
      status: { readyReplicas: 2 }
    })
    const spoke = convert(hub, "example.com/v1alpha1")
    assert.deepStrictEqual(spoke.spec, { image: { repository: "nginx", tag: "1.27" }, instances: 2 })
    assert.isUndefined(spoke.status)
    assert.deepStrictEqual(Object.keys(spoke.metadata.annotations), ["conversion.reconcile.dev/v1"])
    assert.deepStrictEqual(JSON.parse(spoke.metadata.annotations["conversion.reconcile.dev/v1"]), [
      { path: ["spec", "paused"], value: true },
      { path: ["status"], value: { readyReplicas: 2 } }
    ])
    const back = convert(spoke, "example.com/v1")
    assert.deepStrictEqual(back, hub)
    assert.isUndefined(back.metadata.annotations)
    // a hub the spoke says in full gets no annotation
    const plain = convert(
      { ...hub, spec: { image: "nginx:1.27", replicas: 2 }, status: undefined },
      "example.com/v1alpha1"
    )
    assert.isUndefined(plain.metadata.annotations)
  })

  it("a key named __proto__ is data: kept through the annotation like any other", () => {
    const hub = JSON.parse(
      `{"apiVersion":"example.com/v1","kind":"WebApp","metadata":{"name":"p","namespace":"n"},` +
        `"spec":{"image":"a:b","replicas":1,"labels":{"__proto__":"x","constructor":"y"}}}`
    )
    const spoke = convert(hub, "example.com/v1alpha1")
    const back = WebApps.convert(spoke, "example.com/v1").pipe(Result.getOrThrow) as Json
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(back.spec.labels, "__proto__")?.value, "x")
    assert.strictEqual(Object.getPrototypeOf(back.spec.labels), Object.prototype)
    assert.deepStrictEqual(JSON.stringify(back), JSON.stringify(hub))
  })

  it("an object already in the desired version is returned as it is", () => {
    const spoke = wire("example.com/v1alpha1", {
      metadata: { name: "a", namespace: "n" },
      spec: { image: { repository: "r", tag: "t" }, instances: 1 }
    })
    assert.strictEqual(WebApps.convert(spoke, "example.com/v1alpha1").pipe(Result.getOrThrow), spoke)
  })
})

const review = (objects: ReadonlyArray<unknown>, desiredAPIVersion = "example.com/v1", uid = "0a1b") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "ConversionReview",
  request: { uid, desiredAPIVersion, objects }
})

const alphaObject = (name: string, instances = 1) =>
  wire("example.com/v1alpha1", {
    metadata: { name, namespace: "default" },
    spec: { image: { repository: "nginx", tag: "1.27" }, instances }
  })

const failure = (body: unknown): string => {
  const answer = WebApps.review(body)
  assert.strictEqual(answer.apiVersion, "apiextensions.k8s.io/v1")
  assert.strictEqual(answer.kind, "ConversionReview")
  const result = answer.response.result
  assert(result.status === "Failure", JSON.stringify(answer))
  assert.deepStrictEqual(answer.response.convertedObjects, [])
  return result.message
}

describe("Conversion: the ConversionReview handler", () => {
  it.effect("converts several objects of several versions in order, echoing the uid, through its route", () =>
    Effect.gen(function*() {
      assert.strictEqual(WebApps.route.path, "/convert-example-com-webapp")
      assert.strictEqual(WebApps.route.name, "convert-example-com-webapp")
      const objects = [
        alphaObject("a", 1),
        wire("example.com/v1beta1", {
          metadata: { name: "b", namespace: "default" },
          spec: { image: "nginx:1.28", replicas: 2, paused: true }
        }),
        wire("example.com/v1", { metadata: { name: "c", namespace: "default" }, spec: { image: "x", replicas: 3 } })
      ]
      const answer =
        (yield* WebApps.route.handle(review(objects, "example.com/v1", "uid-7"))) as Conversion.ConversionReview
      assert.deepStrictEqual(answer.response.result, { status: "Success" })
      assert.strictEqual(answer.response.uid, "uid-7")
      assert.deepStrictEqual(
        JSON.parse(JSON.stringify(answer.response.convertedObjects)),
        [
          wire("example.com/v1", {
            metadata: { name: "a", namespace: "default" },
            spec: { image: "nginx:1.27", replicas: 1 }
          }),
          wire("example.com/v1", {
            metadata: { name: "b", namespace: "default" },
            spec: { image: "nginx:1.28", replicas: 2, paused: true }
          }),
          objects[2]
        ]
      )
      const none = WebApps.review(review([], "example.com/v1alpha1"))
      assert.deepStrictEqual(none.response, { uid: "0a1b", convertedObjects: [], result: { status: "Success" } })
    }))

  it.prop(
    "a review of several objects in several versions converts each as alone, in order",
    [Arbitrary.schema(Schema.Array(Schema.Tuple([HubObject, Schema.Literals(["v1", "v1alpha1", "v1beta1"])])))],
    ([drawn]) => {
      const objects = drawn.map(([o, version]) => convert(wire("example.com/v1", o), `example.com/${version}`))
      for (const desired of ["example.com/v1", "example.com/v1alpha1", "example.com/v1beta1"]) {
        const answer = WebApps.review(review(objects, desired, "uid-p"))
        assert.deepStrictEqual(answer.response.result, { status: "Success" })
        assert.strictEqual(answer.response.uid, "uid-p")
        assert.deepStrictEqual(
          JSON.parse(JSON.stringify(answer.response.convertedObjects)),
          objects.map((o) => convert(o, desired))
        )
      }
    }
  )

  it.prop(
    "any JSON body is answered with a ConversionReview, never a throw",
    [Arbitrary.schema(Schema.Json), Arbitrary.schema(Schema.Json)],
    ([body, object]) => {
      for (const candidate of [body, review([object]), { ...review([]), request: body }]) {
        const answer = WebApps.review(candidate)
        assert.strictEqual(answer.kind, "ConversionReview")
        assert.isString(answer.response.uid)
        const result = answer.response.result
        if (result.status === "Failure") assert.isAbove(result.message.length, 10)
      }
    }
  )

  it("answers a body that is no ConversionReview with a Failure saying so (uid empty when unreadable)", () => {
    assert.include(failure(null), "expected a ConversionReview (a JSON object), got null")
    assert.include(failure("text"), "got \"text\"")
    assert.include(failure([review([])]), "got an array")
    assert.include(
      failure({ ...review([]), apiVersion: "apiextensions.k8s.io/v1beta1" }),
      "expected apiVersion apiextensions.k8s.io/v1 and kind ConversionReview, got apiVersion " +
        "\"apiextensions.k8s.io/v1beta1\""
    )
    assert.include(failure({ ...review([]), kind: "AdmissionReview" }), "kind \"AdmissionReview\"")
    assert.include(
      failure({ apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview" }),
      "request: expected an object, got nothing"
    )
    assert.include(
      failure({ ...review([]), request: { desiredAPIVersion: "example.com/v1", objects: [] } }),
      "request.uid: expected a non-empty string, got nothing"
    )
    assert.include(failure(review([], "example.com/v1", "")), "request.uid: expected a non-empty string")
    assert.include(
      failure({ ...review([]), request: { uid: "u", objects: [] } }),
      "request.desiredAPIVersion: expected a string"
    )
    assert.include(
      failure({ ...review([]), request: { uid: "u", desiredAPIVersion: "example.com/v1" } }),
      "request.objects: expected an array, got nothing"
    )
    // the uid is echoed whenever it is readable
    assert.strictEqual(WebApps.review(review([], "example.com/v2", "u-9")).response.uid, "u-9")
    assert.strictEqual(WebApps.review({ request: { uid: 3 } }).response.uid, "")
  })

  it("answers a desired version it does not convert with a Failure listing those it does", () => {
    assert.strictEqual(
      failure(review([alphaObject("a")], "example.com/v2")),
      "request.desiredAPIVersion: \"example.com/v2\" is not a version of WebApp this webhook converts " +
        "(example.com/v1, example.com/v1alpha1, example.com/v1beta1)"
    )
    assert.include(failure(review([alphaObject("a")], "apps/v1")), "\"apps/v1\" is not a version of WebApp")
  })

  it("answers an object it cannot convert with a Failure naming the object and the field", () => {
    const good = alphaObject("good")
    const bad = (object: unknown) => failure(review([good, object]))
    assert.strictEqual(bad(42), "request.objects[1]: expected a JSON object, got number")
    assert.strictEqual(
      bad({ ...alphaObject("cm"), kind: "ConfigMap" }),
      "request.objects[1] (default/cm): kind: expected WebApp, got \"ConfigMap\""
    )
    assert.strictEqual(
      bad({ ...alphaObject("old"), apiVersion: "example.com/v1alpha0" }),
      "request.objects[1] (default/old): apiVersion: \"example.com/v1alpha0\" is not a version of WebApp this " +
        "webhook converts (example.com/v1, example.com/v1alpha1, example.com/v1beta1)"
    )
    assert.strictEqual(
      bad({ ...alphaObject("meta"), metadata: "m" }),
      "request.objects[1] (<unnamed>): metadata: expected an object"
    )
    const tag = bad({ ...alphaObject("web"), spec: { image: { repository: "nginx", tag: 3 }, instances: 1 } })
    assert.match(tag, /^request\.objects\[1\] \(default\/web\): spec: image\.tag: /)
    assert.include(tag, "string")
    assert.match(bad({ ...alphaObject("web"), spec: undefined }), /^request\.objects\[1\] \(default\/web\): spec: /)
    assert.match(
      failure(
        review(
          [{ ...alphaObject("h"), apiVersion: "example.com/v1", spec: { image: "x", replicas: 1.5 } }],
          "example.com/v1alpha1"
        )
      ),
      /^request\.objects\[0\] \(default\/h\): spec: replicas: /
    )
    const annotated = alphaObject("ann")
    annotated.metadata.annotations = { "conversion.reconcile.dev/v1": "{not json" }
    assert.strictEqual(
      bad(annotated),
      "request.objects[1] (default/ann): metadata.annotations[conversion.reconcile.dev/v1]: not what a conversion " +
        "to v1alpha1 wrote (a JSON array of { path, value, rebuilt })"
    )
  })

  it("answers a conversion function that throws, or makes what its Schema does not encode, with a Failure", () => {
    const Throwing = Conversion.webhook({
      hub: V1,
      spokes: [{
        resource: V1alpha1,
        toHub: () => {
          throw new Error("no image")
        },
        fromHub: (o) => ({ spec: { image: splitImage(o.spec.image), instances: o.spec.replicas + 0.5 } })
      }]
    })
    const message = (object: unknown, desired: string) => {
      const answer = Throwing.review(review([object], desired))
      const result = answer.response.result
      assert(result.status === "Failure")
      return result.message
    }
    assert.strictEqual(
      message(alphaObject("t"), "example.com/v1"),
      "request.objects[0] (default/t): v1alpha1 toHub threw: no image"
    )
    assert.match(
      message(
        wire("example.com/v1", { metadata: { name: "h" }, spec: { image: "a:b", replicas: 1 } }),
        "example.com/v1alpha1"
      ),
      /^request\.objects\[0\] \(h\): the example\.com\/v1alpha1 spec it made: instances: /
    )
  })

  it("refuses at definition a spoke of another kind, or a version listed twice", () => {
    const Other = Resource.custom({
      ...common,
      kind: "Other",
      plural: "others",
      version: "v1alpha1",
      spec: V1alpha1.spec
    })
    assert.throws(
      () => Conversion.webhook({ hub: V1, spokes: [{ ...alpha, resource: Other } as never] }),
      /spoke example\.com\/v1alpha1 Other \(others\) is not the hub's kind/
    )
    assert.throws(
      () => Conversion.webhook({ hub: V1, spokes: [alpha, alpha] }),
      /version v1alpha1 of WebApp is listed twice/
    )
  })
})

describe("Conversion: the CRD's conversion stanza", () => {
  const Other = Resource.custom({
    group: "example.com",
    kind: "Other",
    plural: "others",
    scope: "Cluster",
    version: "v1",
    spec: Schema.Struct({ a: Schema.String })
  })
  const crds = Result.getOrThrow(Resource.crdManifests([V1alpha1, V1beta1, V1, Other]))
  const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

  it("adds spec.conversion to the webhook's CRD (Service), leaving the CRD's other fields and other CRDs as they were", () => {
    const out = Result.getOrThrow(
      Conversion.withConversion(crds, [WebApps], { service: { name: "webhooks", namespace: "ops" }, caBundle: ca })
    )
    assert.strictEqual(out.length, 2)
    const [others, webapps] = [
      out.find((c) => c.metadata?.name === "others.example.com")!,
      out.find((c) => c.metadata?.name === "webapps.example.com")!
    ]
    assert.strictEqual(others, crds.find((c) => c.metadata?.name === "others.example.com"))
    const { conversion, ...spec } = webapps.spec
    assert.deepStrictEqual(spec, crds.find((c) => c.metadata?.name === "webapps.example.com")!.spec)
    assert.deepStrictEqual(conversion as unknown, {
      strategy: "Webhook",
      webhook: {
        conversionReviewVersions: ["v1"],
        clientConfig: {
          service: { name: "webhooks", namespace: "ops", path: "/convert-example-com-webapp", port: 443 },
          caBundle: Buffer.from(ca).toString("base64")
        }
      }
    })
    // crdManifests itself is unchanged: no conversion stanza without a webhook
    assert.isUndefined(Result.getOrThrow(Resource.crdManifests([V1alpha1, V1beta1, V1]))[0]!.spec.conversion)
  })

  it("a URL client config gets the route's path appended", () => {
    assert.deepStrictEqual(Conversion.stanza(WebApps, { url: "https://127.0.0.1:9443/" }), {
      strategy: "Webhook",
      webhook: {
        conversionReviewVersions: ["v1"],
        clientConfig: { url: "https://127.0.0.1:9443/convert-example-com-webapp" }
      }
    })
    const service = Conversion.stanza(WebApps, { service: { name: "w", namespace: "n", port: 9443 } })
    assert.deepStrictEqual(service.webhook.clientConfig, {
      service: { name: "w", namespace: "n", path: "/convert-example-com-webapp", port: 9443 }
    })
  })

  it("fails when a webhook's CRD is missing or serves a version the webhook does not convert", () => {
    const config = { url: "https://127.0.0.1:9443" }
    const missing = Conversion.withConversion(
      crds.filter((c) => c.metadata?.name !== "webapps.example.com"),
      [WebApps],
      config
    )
    assert(Result.isFailure(missing))
    assert.strictEqual(missing.failure.reason, "CrdMismatch")
    assert.include(missing.failure.message, "no CRD webapps.example.com")
    const partial = Conversion.webhook({ hub: V1, spokes: [alpha] })
    const unknown = Conversion.withConversion(crds, [partial], config)
    assert(Result.isFailure(unknown))
    assert.strictEqual(
      unknown.failure.message,
      "CRD webapps.example.com: version v1beta1 has no conversion (the webhook converts v1, v1alpha1)"
    )
    const twice = Conversion.withConversion(crds, [WebApps, partial], config)
    assert(Result.isFailure(twice))
    assert.include(twice.failure.message, "two conversion webhooks for one kind")
  })
})
