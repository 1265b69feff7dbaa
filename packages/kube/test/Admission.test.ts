/**
 * Typed admission, in process (no sockets): a review goes into a webhook's `handle` and its answer is checked as
 * kube-apiserver reads it — the JSON patch of a defaulter (applied to the object as received), denials with their
 * Status, warnings, the objects and request a handler sees, undecodable objects, defects and timeouts (under
 * TestClock), and every malformed review. The webhook values (paths, names, rules) and their configurations too.
 */
import { assert, describe, it } from "@effect/vitest"
import { Prometheus } from "@reconcile/core"
import type { Layer } from "effect"
import { Arbitrary, Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import jsonpatch from "fast-json-patch"
import { isDeepStrictEqual } from "node:util"
import * as Admission from "../src/Admission.js"
import * as internal from "../src/internal/admission.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import * as WebhookServer from "../src/WebhookServer.js"

type Json = Record<string, any>

const WebApp = Resource.custom({
  group: "apps.reconcile.dev",
  version: "v1",
  kind: "WebApp",
  plural: "webapps",
  scope: "Namespaced",
  spec: Schema.Struct({
    image: Schema.String,
    replicas: Schema.optional(Schema.Int)
  })
})

let uids = 0
/** An AdmissionReview of `resource` as kube-apiserver sends it. */
const reviewOf = (
  resource: Resource.Resource<any>,
  operation: Admission.Operation,
  objects: { readonly object?: unknown; readonly oldObject?: unknown },
  extra: Json = {}
) => {
  const uid = `uid-${++uids}`
  const object = (objects.object ?? objects.oldObject) as Json | undefined
  return {
    uid,
    review: {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid,
        kind: { group: resource.group, version: resource.version, kind: resource.kind },
        resource: { group: resource.group, version: resource.version, resource: resource.plural },
        requestKind: { group: resource.group, version: resource.version, kind: resource.kind },
        name: object?.metadata?.name ?? "",
        namespace: "default",
        operation,
        userInfo: { username: "alice", groups: ["system:authenticated"] },
        object: objects.object ?? null,
        oldObject: objects.oldObject ?? null,
        dryRun: false,
        options: { apiVersion: "meta.k8s.io/v1", kind: `${operation[0]}${operation.slice(1).toLowerCase()}Options` },
        ...extra
      }
    }
  }
}

/** The `response` of a webhook's answer, checked to be an AdmissionReview. */
const answer = <R>(webhook: Admission.Webhook<R>, review: unknown) =>
  Effect.map(webhook.handle(review), (out) => {
    const reply = out as Json
    assert.strictEqual(reply.apiVersion, "admission.k8s.io/v1")
    assert.strictEqual(reply.kind, "AdmissionReview")
    return reply.response as Json
  })

const patchOf = (response: Json): Array<jsonpatch.Operation> | undefined => {
  if (response.patch === undefined) return undefined
  assert.strictEqual(response.patchType, "JSONPatch")
  return JSON.parse(Buffer.from(response.patch, "base64").toString("utf8"))
}

const applied = (raw: unknown, response: Json): unknown => {
  const patch = patchOf(response) ?? []
  return jsonpatch.applyPatch(jsonpatch.deepClone(raw), patch, true, false).newDocument
}

const cm = (name: string, data?: Record<string, string>, rest: Json = {}): Json => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  ...(data === undefined ? {} : { data }),
  ...rest
})

// effect 4.1 bundles no FastCheck: JSON values drawn with effect/Arbitrary (what it.prop runs)
const pick = <const A extends ReadonlyArray<unknown>>(values: A): Arbitrary.Arbitrary<A[number]> =>
  Arbitrary.map(
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: values.length - 1 }))),
    (i) => values[i]
  )
const dictionary = <A>(keys: ReadonlyArray<string>, value: Arbitrary.Arbitrary<A>, maxKeys: number) =>
  Arbitrary.map(
    Arbitrary.array(Arbitrary.all([pick(keys), value]), { maxLength: maxKeys }),
    (entries): Record<string, A> => Object.fromEntries(entries)
  )
/** Keys that need `~0`/`~1` escapes in a JSON pointer, and plain ones. */
const keys = ["a", "b", "a/b", "m~n", "~1", "/", "~", "app.kubernetes.io/name", ""]
const leaf = pick([null, 0, 1, "", "x", true, false])
const value = (depth: number): Arbitrary.Arbitrary<unknown> =>
  depth === 0 ? leaf : Arbitrary.flatMap(pick([0, 1, 2]), (branch): Arbitrary.Arbitrary<unknown> =>
    branch === 0
      ? leaf
      : branch === 1
      ? Arbitrary.array(value(depth - 1), { maxLength: 3 })
      : dictionary(keys, value(depth - 1), 3))
const strings = dictionary(keys, pick(["", "1", "x", "a/b", "~0"]), 4)
/** A ConfigMap as received: data, labels, and fields no Schema knows (top level and in metadata). */
const configMap = Arbitrary.map(
  Arbitrary.all([strings, strings, value(3), value(2)]),
  ([data, labels, unknown, unknownMeta]) => ({
    ...cm("c", data),
    metadata: { name: "c", namespace: "default", labels, "x-unknown": unknownMeta },
    "x-unknown": unknown
  })
)

/** Values a review's copies may meet: JSON, and what a JSON round trip or `structuredClone` treats specially. */
const oddLeaf = pick([null, 0, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, undefined, "", "x", true, new Date(0)])
const oddValue = (depth: number): Arbitrary.Arbitrary<unknown> =>
  depth === 0 ? oddLeaf : Arbitrary.flatMap(pick([0, 1, 2]), (branch): Arbitrary.Arbitrary<unknown> =>
    branch === 0
      ? oddLeaf
      : branch === 1
      ? Arbitrary.array(oddValue(depth - 1), { maxLength: 3 })
      : dictionary([...keys, "__proto__", "toJSON"], oddValue(depth - 1), 3))

describe("the copies a review makes", () => {
  it.prop(
    "toJson is a JSON round trip and clone is structuredClone, sharing nothing with the original",
    [oddValue(4)],
    ([v]) => {
      const json = internal.toJson(v)
      assert.isTrue(isDeepStrictEqual(json, JSON.parse(JSON.stringify(v) ?? "null")))
      const copy = internal.clone(v)
      assert.isTrue(isDeepStrictEqual(copy, structuredClone(v)))
      if (typeof v === "object" && v !== null) {
        assert.notStrictEqual(json, v)
        assert.notStrictEqual(copy, v)
      }
    }
  )
})

describe("Admission.defaulter: the JSON patch", () => {
  it.effect.prop(
    "applying the patch to the object as received gives the defaulted object (built-in kind: all of it)",
    [configMap, strings, strings, value(3)],
    ([raw, data, labels, unknown]) =>
      Effect.gen(function*() {
        const target = {
          ...raw,
          metadata: { ...raw.metadata, labels },
          data,
          "x-unknown": unknown
        }
        const webhook = Admission.defaulter(Resource.ConfigMap, () => Effect.succeed(target as Resource.ConfigMap))
        const { review } = reviewOf(Resource.ConfigMap, "CREATE", { object: raw })
        const response = yield* answer(webhook, review)
        assert.isTrue(response.allowed)
        assert.deepStrictEqual(applied(raw, response), target)
        // no patch exactly when nothing changed
        assert.strictEqual(response.patch === undefined, isDeepStrictEqual(target, raw))
      })
  )

  it.effect.prop(
    "a defaulter that changes nothing sends no patch, whatever the object holds",
    [configMap],
    ([raw]) =>
      Effect.gen(function*() {
        const webhook = Admission.defaulter(Resource.ConfigMap, (obj) => Effect.succeed(obj))
        const response = yield* answer(webhook, reviewOf(Resource.ConfigMap, "UPDATE", { object: raw }).review)
        assert.isTrue(response.allowed)
        assert.isUndefined(response.patch)
        assert.isUndefined(response.patchType)
      })
  )

  it.effect.prop(
    "fields the Schema does not know (dropped on decode) are never removed by the patch",
    [value(3), pick([undefined, 0, 2]), pick(["nginx", "httpd"])],
    ([unknown, replicas, image]) =>
      Effect.gen(function*() {
        const raw = {
          apiVersion: "apps.reconcile.dev/v1",
          kind: "WebApp",
          metadata: { name: "w", namespace: "default" },
          spec: { image: "nginx", ...(replicas === undefined ? {} : { replicas }), "x-unknown": unknown }
        }
        const webhook = Admission.defaulter(WebApp, (app) =>
          Effect.succeed({ ...app, spec: { image, replicas: app.spec.replicas ?? 1 } }))
        const response = yield* answer(webhook, reviewOf(WebApp, "CREATE", { object: raw }).review)
        const out = applied(raw, response) as Json
        assert.deepStrictEqual(out, {
          ...raw,
          spec: { image, replicas: replicas ?? 1, "x-unknown": unknown }
        })
      })
  )

  it.effect("the patch is RFC 6902 with escaped pointers; DELETE is allowed untouched; the request is seen", () =>
    Effect.gen(function*() {
      const seen: Array<Admission.Request<Resource.ConfigMap>> = []
      const webhook = Admission.defaulter(Resource.ConfigMap, (obj, request) => {
        seen.push(request)
        return Effect.succeed({ ...obj, data: { ...obj.data, "a/b": "1", "m~n": "2" } })
      })
      const { review, uid } = reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c", { x: "0" }) }, {
        dryRun: true
      })
      const response = yield* answer(webhook, review)
      assert.strictEqual(response.uid, uid)
      const ops = patchOf(response)!
      assert.sameDeepMembers(ops, [
        { op: "add", path: "/data/a~1b", value: "1" },
        { op: "add", path: "/data/m~0n", value: "2" }
      ])
      assert.strictEqual(seen[0]!.dryRun, true)
      assert.strictEqual(seen[0]!.operation, "CREATE")
      assert.strictEqual(seen[0]!.userInfo.username, "alice")
      assert.strictEqual(seen[0]!.namespace, "default")
      assert.deepStrictEqual(seen[0]!.kind, { group: "", version: "v1", kind: "ConfigMap" })
      const deleted = yield* answer(webhook, reviewOf(Resource.ConfigMap, "DELETE", { oldObject: cm("c") }).review)
      assert.deepStrictEqual(Object.keys(deleted).sort(), ["allowed", "uid"])
      assert.strictEqual(seen.length, 1)
    }))

  it.effect("a defaulter may deny", () =>
    Effect.gen(function*() {
      const webhook = Admission.defaulter(Resource.ConfigMap, () => Admission.deny("no defaults for you"))
      const response = yield* answer(webhook, reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c") }).review)
      assert.isFalse(response.allowed)
      assert.deepStrictEqual(response.status, {
        status: "Failure",
        code: 403,
        message: "no defaults for you",
        reason: "Forbidden"
      })
    }))
})

describe("Admission.validator", () => {
  const protectedCm = (name: string) => cm(name, { a: "1" }, { metadata: { name, labels: { protected: "true" } } })
  const seen: Array<{ readonly op: string; readonly objects: ReadonlyArray<unknown>; readonly dryRun: boolean }> = []
  const webhook = Admission.validator(Resource.ConfigMap, {
    create: (obj, request) => {
      seen.push({ op: "create", objects: [obj], dryRun: request.dryRun })
      if (obj.data?.tier === "gold") {
        return Admission.invalid([{ field: "data.tier", message: `"gold": sold out` }])
      }
      if (obj.data?.code !== undefined) {
        return Admission.deny("quota exceeded", { reason: "Conflict", code: 409 })
      }
      return Effect.succeed(obj.data?.old === undefined ? [] : ["data.old is deprecated"])
    },
    update: (old, obj, request) => {
      seen.push({ op: "update", objects: [old, obj], dryRun: request.dryRun })
      return old.data?.a !== obj.data?.a ? Admission.deny("data.a is immutable") : Effect.void
    },
    delete: (old, request) => {
      seen.push({ op: "delete", objects: [old], dryRun: request.dryRun })
      return old.metadata?.labels?.protected === "true" ? Admission.deny("this ConfigMap is protected") : Effect.void
    }
  })

  it.effect("denials carry code, reason, message and field causes", () =>
    Effect.gen(function*() {
      const invalid = yield* answer(
        webhook,
        reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c", { tier: "gold" }) }).review
      )
      assert.isFalse(invalid.allowed)
      assert.deepStrictEqual(invalid.status, {
        status: "Failure",
        code: 422,
        reason: "Invalid",
        message: `data.tier: Invalid value: "gold": sold out`,
        details: { causes: [{ field: "data.tier", message: `"gold": sold out`, reason: "FieldValueInvalid" }] }
      })
      const conflict = yield* answer(
        webhook,
        reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c", { code: "1" }) }).review
      )
      assert.deepStrictEqual(conflict.status, {
        status: "Failure",
        code: 409,
        reason: "Conflict",
        message: "quota exceeded"
      })
    }))

  it.effect("warnings are returned with an allowed answer; none when there are none", () =>
    Effect.gen(function*() {
      const warned = yield* answer(
        webhook,
        reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c", { old: "1" }) }).review
      )
      assert.isTrue(warned.allowed)
      assert.deepStrictEqual(warned.warnings, ["data.old is deprecated"])
      const plain = yield* answer(webhook, reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c", {}) }).review)
      assert.deepStrictEqual(Object.keys(plain).sort(), ["allowed", "uid"])
    }))

  it.effect("UPDATE sees old and new; DELETE sees the old object; dryRun is visible", () =>
    Effect.gen(function*() {
      seen.length = 0
      const updated = yield* answer(
        webhook,
        reviewOf(Resource.ConfigMap, "UPDATE", { object: cm("c", { a: "2" }), oldObject: cm("c", { a: "1" }) }, {
          dryRun: true
        }).review
      )
      assert.strictEqual(updated.status.message, "data.a is immutable")
      assert.deepStrictEqual(seen[0], {
        op: "update",
        objects: [cm("c", { a: "1" }), cm("c", { a: "2" })],
        dryRun: true
      })
      const denied = yield* answer(
        webhook,
        reviewOf(Resource.ConfigMap, "DELETE", { oldObject: protectedCm("p") }).review
      )
      assert.isFalse(denied.allowed)
      assert.strictEqual(denied.status.message, "this ConfigMap is protected")
      assert.deepStrictEqual(seen[1]!.objects, [protectedCm("p")])
      const allowed = yield* answer(webhook, reviewOf(Resource.ConfigMap, "DELETE", { oldObject: cm("q") }).review)
      assert.isTrue(allowed.allowed)
    }))

  it.effect("an object that does not decode is denied naming the field (or allowed with undecodable: allow)", () =>
    Effect.gen(function*() {
      let calls = 0
      const handlers = { create: () => Effect.sync(() => void calls++) }
      const bad = {
        apiVersion: "apps.reconcile.dev/v1",
        kind: "WebApp",
        metadata: { name: "w", namespace: "default" },
        spec: { image: 42 }
      }
      const denied = yield* answer(
        Admission.validator(WebApp, handlers),
        reviewOf(WebApp, "CREATE", { object: bad }).review
      )
      assert.isFalse(denied.allowed)
      assert.strictEqual(denied.status.code, 400)
      assert.match(denied.status.message, /spec: image: .*string/i)
      const allowed = yield* answer(
        Admission.validator(WebApp, handlers, { undecodable: "allow" }),
        reviewOf(WebApp, "CREATE", { object: bad }).review
      )
      assert.isTrue(allowed.allowed)
      const defaulted = yield* answer(
        Admission.defaulter(WebApp, (app) => Effect.succeed(app)),
        reviewOf(WebApp, "CREATE", { object: bad }).review
      )
      assert.strictEqual(defaulted.status.code, 400)
      assert.strictEqual(calls, 0)
      // an old object that does not decode never blocks its deletion
      const deleted = yield* answer(
        Admission.validator(WebApp, { delete: () => Admission.deny("never") }),
        reviewOf(WebApp, "DELETE", { oldObject: bad }).review
      )
      assert.isTrue(deleted.allowed)
      assert.strictEqual(deleted.warnings.length, 1)
    }))

  it.effect("a defect in a handler is a 500 answer, logged and counted, and the next review is served", () =>
    Effect.gen(function*() {
      const failing = Admission.validator(Resource.ConfigMap, {
        create: (obj) => obj.data?.boom !== undefined ? Effect.die(new Error("boom")) : Effect.void
      }, { name: "vdefect.configmaps.test.dev" })
      const { review, uid } = reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c", { boom: "1" }) })
      const response = yield* answer(failing, review)
      assert.strictEqual(response.uid, uid)
      assert.isFalse(response.allowed)
      assert.strictEqual(response.status.code, 500)
      assert.strictEqual(response.status.reason, "InternalError")
      assert.notInclude(response.status.message, "boom") // the defect is logged, not sent
      const next = yield* answer(failing, reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c") }).review)
      assert.isTrue(next.allowed)
      const text = yield* Prometheus.text({ processMetrics: false })
      assert.include(text, `controller_runtime_webhook_panics_total{webhook="vdefect.configmaps.test.dev"} 1`)
    }))

  it.effect("a handler that does not answer in time is a 500 answer, a second before timeoutSeconds", () =>
    Effect.gen(function*() {
      const slow = Admission.validator(Resource.ConfigMap, { create: () => Effect.never }, {
        name: "vslow.configmaps.test.dev",
        timeoutSeconds: 5
      })
      const fiber = yield* Effect.forkChild(
        answer(slow, reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c") }).review)
      )
      yield* TestClock.adjust("3999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      assert.isFalse(response.allowed)
      assert.strictEqual(response.status.code, 500)
      assert.match(response.status.message, /did not answer within 4s/)
      const text = yield* Prometheus.text({ processMetrics: false })
      assert.include(text, `reconcile_webhook_timeouts_total{webhook="vslow.configmaps.test.dev"} 1`)
    }))
})

describe("malformed reviews", () => {
  const webhook = Admission.validator(Resource.ConfigMap, { create: () => Effect.void })
  const good = reviewOf(Resource.ConfigMap, "CREATE", { object: cm("c") })
  const cases: ReadonlyArray<readonly [string, unknown, string, RegExp]> = [
    ["not an object", "hello", "", /not a JSON object \(got string\)/],
    ["an array", [good.review], "", /not a JSON object \(got an array\)/],
    ["null", null, "", /not a JSON object/],
    [
      "an older apiVersion",
      { ...good.review, apiVersion: "admission.k8s.io/v1beta1" },
      good.uid,
      /expected apiVersion admission\.k8s\.io\/v1 and kind AdmissionReview, got apiVersion ".*v1beta1"/
    ],
    ["another kind", { ...good.review, kind: "TokenReview" }, good.uid, /got apiVersion .* and kind "TokenReview"/],
    ["no request", { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }, "", /has no request/],
    ["no uid", { ...good.review, request: { ...good.review.request, uid: undefined } }, "", /has no uid/],
    [
      "an unknown operation",
      { ...good.review, request: { ...good.review.request, operation: "PATCH" } },
      good.uid,
      /unknown operation "PATCH"/
    ],
    [
      "a kind the webhook was not built for",
      reviewOf(Resource.Secret, "CREATE", { object: { metadata: { name: "s" } } }).review,
      "",
      /admits v1, Kind=ConfigMap, not v1, Kind=Secret/
    ]
  ]
  for (const [name, review, uid, message] of cases) {
    it.effect(`${name}: allowed false, a Status of code 400 naming the problem`, () =>
      Effect.gen(function*() {
        const response = yield* answer(webhook, review)
        assert.isFalse(response.allowed)
        if (uid !== "") assert.strictEqual(response.uid, uid)
        else assert.isString(response.uid)
        assert.strictEqual(response.status.code, 400)
        assert.match(response.status.message, message)
      }))
  }
})

describe("webhook values and configurations", () => {
  it("paths, names and rules follow controller-runtime's conventions", () => {
    const mutating = Admission.defaulter(WebApp, (a) => Effect.succeed(a))
    assert.strictEqual(mutating.kind, "Mutating")
    assert.strictEqual(mutating.path, "/mutate-apps-reconcile-dev-v1-webapp")
    assert.strictEqual(mutating.name, "mwebapp.apps.reconcile.dev")
    assert.deepStrictEqual(mutating.rules, [{
      operations: ["CREATE", "UPDATE"],
      apiGroups: ["apps.reconcile.dev"],
      apiVersions: ["v1"],
      resources: ["webapps"],
      scope: "Namespaced"
    }])
    assert.strictEqual(mutating.reinvocationPolicy, "Never")
    const validating = Admission.validator(Resource.ConfigMap, { create: () => Effect.void, update: () => Effect.void })
    assert.strictEqual(validating.path, "/validate-core-v1-configmap")
    assert.strictEqual(validating.name, "vconfigmap.core.k8s.io")
    assert.deepStrictEqual(validating.rules[0]!.operations, ["CREATE", "UPDATE"]) // no delete handler: no DELETE
    assert.strictEqual(validating.failurePolicy, "Fail")
    assert.strictEqual(validating.sideEffects, "None")
    assert.strictEqual(validating.timeoutSeconds, 10)
    assert.strictEqual(
      Admission.validator(Resource.Deployment, { delete: () => Effect.void }).name,
      "vdeployment.apps.k8s.io"
    )
    assert.throws(() => Admission.validator(Resource.ConfigMap, {}), /at least one/)
    assert.throws(() => Admission.validator(Resource.ConfigMap, { create: () => Effect.void }, { timeoutSeconds: 31 }))
  })

  it("configurations: one of each kind, client config with the paths, CA bundle base64, v1 reviews", () => {
    const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    const mutating = Admission.defaulter(WebApp, (a) => Effect.succeed(a), {
      objectSelector: { matchLabels: { managed: "yes" } }
    })
    const validating = Admission.validator(WebApp, { delete: () => Effect.void }, { failurePolicy: "Ignore" })
    const [m, v] = Admission.configurations([mutating, validating], {
      name: "webapp",
      clientConfig: { url: "https://127.0.0.1:9443/", caBundle: ca }
    })
    assert.strictEqual(m!.kind, "MutatingWebhookConfiguration")
    assert.strictEqual(m!.metadata.name, "webapp-mutating")
    assert.deepStrictEqual(m!.webhooks[0], {
      name: "mwebapp.apps.reconcile.dev",
      admissionReviewVersions: ["v1"],
      clientConfig: {
        url: "https://127.0.0.1:9443/mutate-apps-reconcile-dev-v1-webapp",
        caBundle: Buffer.from(ca).toString("base64")
      },
      rules: mutating.rules,
      failurePolicy: "Fail",
      sideEffects: "None",
      timeoutSeconds: 10,
      matchPolicy: "Equivalent",
      objectSelector: { matchLabels: { managed: "yes" } },
      reinvocationPolicy: "Never"
    })
    assert.strictEqual(v!.kind, "ValidatingWebhookConfiguration")
    assert.strictEqual(v!.webhooks[0]!.failurePolicy, "Ignore")
    assert.deepStrictEqual((v!.webhooks[0]!.rules as any)[0].operations, ["DELETE"])
    assert.notProperty(v!.webhooks[0], "reinvocationPolicy")
    const [onlyV] = Admission.configurations([validating], {
      clientConfig: { service: { name: "hooks", namespace: "ops", port: 443 }, caBundle: "Y2E=" }
    })
    assert.strictEqual(onlyV!.kind, "ValidatingWebhookConfiguration")
    assert.deepStrictEqual(onlyV!.webhooks[0]!.clientConfig, {
      service: { name: "hooks", namespace: "ops", port: 443, path: "/validate-apps-reconcile-dev-v1-webapp" },
      caBundle: "Y2E="
    })
  })

  it("a handler's requirements are the webhook's and the server Layer's (checked by the compiler)", () => {
    const needsClient = Admission.validator(Resource.ConfigMap, {
      create: () => Effect.asVoid(Effect.service(KubeClient.KubeClient))
    })
    const typed: Admission.Webhook<KubeClient.KubeClient> = needsClient
    const server = WebhookServer.layer({ routes: [typed], certificate: WebhookServer.fromPem({ cert: "", key: "" }) })
    const requires: Layer.Layer<WebhookServer.WebhookServer, WebhookServer.WebhookServerError, KubeClient.KubeClient> =
      server
    // @ts-expect-error the server cannot be built without the KubeClient its validator needs
    const alone: Layer.Layer<WebhookServer.WebhookServer, WebhookServer.WebhookServerError> = server
    // @ts-expect-error a handler may fail only with Denied
    Admission.validator(Resource.ConfigMap, { create: () => Effect.fail(new Error("no")) })
    assert.isDefined(requires)
    assert.isDefined(alone)
  })
})
