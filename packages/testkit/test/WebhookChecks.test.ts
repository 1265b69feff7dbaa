/**
 * The webhook checks users run on their own handlers: each passes on correct handlers and fails, with the field
 * that differed and a counterexample, on broken ones (a defaulter that is not idempotent, a validator that refuses
 * what the defaulter makes, a lossy conversion); the in-process call reads answers as kube-apiserver does; the
 * objects drawn from a Resource's Schemas decode and carry valid metadata.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Admission from "@reconcile/kube/Admission"
import * as Conversion from "@reconcile/kube/Conversion"
import * as Resource from "@reconcile/kube/Resource"
import { Arbitrary, Context, Effect, Schema } from "effect"
import * as WebhookChecks from "../src/WebhookChecks.js"

type Json = Record<string, any>

const WebApp = Resource.custom({
  group: "apps.reconcile.dev",
  version: "v1",
  kind: "WebApp",
  plural: "webapps",
  scope: "Namespaced",
  spec: Schema.Struct({ image: Schema.String, replicas: Schema.optional(Schema.Int) }),
  status: Schema.Struct({ readyReplicas: Schema.optional(Schema.Int) })
})

const webApps = WebhookChecks.objects(WebApp)

const defaults = Admission.defaulter(
  WebApp,
  (app) => Effect.succeed({ ...app, spec: { ...app.spec, replicas: app.spec.replicas ?? 1 } })
)

/** Adds a replica every time: defaulting twice changes `spec.replicas` again. */
const addsReplica = Admission.defaulter(
  WebApp,
  (app) => Effect.succeed({ ...app, spec: { ...app.spec, replicas: (app.spec.replicas ?? 0) + 1 } })
)

const requiresReplicas = Admission.validator(WebApp, {
  create: (app) =>
    app.spec.replicas === undefined
      ? Admission.invalid([{ field: "spec.replicas", message: "required" }])
      : Effect.succeed(app.spec.replicas > 10 ? ["more than 10 replicas"] : undefined)
})

/** Refuses the default itself (one replica): what the defaulter makes is refused. */
const refusesOne = Admission.validator(WebApp, {
  create: (app) =>
    app.spec.replicas === 1
      ? Admission.invalid([{ field: "spec.replicas", message: "one replica is not highly available" }])
      : Effect.void
})

const run = <A, E>(self: Effect.Effect<A, E>) => Effect.flip(self)

describe("WebhookChecks.admit", () => {
  const app = {
    apiVersion: "apps.reconcile.dev/v1",
    kind: "WebApp",
    metadata: { name: "web", namespace: "shop" },
    spec: { image: "nginx", unknown: "kept" }
  }

  it.effect("a defaulter's answer: the patch applied to the object as sent, unknown fields kept", () =>
    Effect.gen(function*() {
      const answer = yield* WebhookChecks.admit(defaults, { operation: "CREATE", object: app })
      assert.isTrue(answer.allowed)
      assert.deepStrictEqual(answer.patch, [{ op: "add", path: "/spec/replicas", value: 1 }])
      assert.deepStrictEqual((answer.object as Json).spec, { image: "nginx", unknown: "kept", replicas: 1 })
      const again = yield* WebhookChecks.admit(defaults, { operation: "CREATE", object: answer.object })
      assert.deepStrictEqual(again.patch, [])
      assert.deepStrictEqual(again.object, answer.object)
    }))

  it.effect("a refusal's Status and causes; warnings on an admission", () =>
    Effect.gen(function*() {
      const refused = yield* WebhookChecks.admit(requiresReplicas, { operation: "CREATE", object: app })
      assert.isFalse(refused.allowed)
      assert.strictEqual(refused.status?.code, 422)
      assert.strictEqual(refused.status?.reason, "Invalid")
      assert.deepStrictEqual(refused.status?.causes, [
        { field: "spec.replicas", message: "required", reason: "FieldValueInvalid" }
      ])
      const many = { ...app, spec: { image: "nginx", replicas: 11 } }
      const warned = yield* WebhookChecks.admit(requiresReplicas, { operation: "CREATE", object: many })
      assert.isTrue(warned.allowed)
      assert.deepStrictEqual(warned.warnings, ["more than 10 replicas"])
      assert.strictEqual(warned.status, undefined)
    }))

  it.effect("the request a handler sees: operation, name, namespace, dry run, user, old object", () =>
    Effect.gen(function*() {
      const seen: Array<Admission.Request<any>> = []
      const olds: Array<unknown> = []
      const recorder = Admission.validator(WebApp, {
        update: (old, _obj, request) => Effect.sync(() => void (seen.push(request), olds.push(old.spec))),
        delete: (old, request) => Effect.sync(() => void (seen.push(request), olds.push(old.spec)))
      })
      const newer = { ...app, spec: { image: "nginx:2" } }
      yield* WebhookChecks.admit(recorder, { operation: "UPDATE", oldObject: app, object: newer }, {
        dryRun: true,
        userInfo: { username: "bob", groups: ["ops"] }
      })
      const deleted = yield* WebhookChecks.admit(recorder, { operation: "DELETE", oldObject: app })
      assert.strictEqual(deleted.object, undefined)
      assert.deepStrictEqual(seen.map((r) => [r.operation, r.name, r.namespace, r.dryRun, r.userInfo.username]), [
        ["UPDATE", "web", "shop", true, "bob"],
        ["DELETE", "web", "shop", false, "alice"]
      ])
      assert.deepStrictEqual(seen[0]!.options, { apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions", dryRun: ["All"] })
      assert.deepStrictEqual(seen[0]!.resource, { group: "apps.reconcile.dev", version: "v1", resource: "webapps" })
      assert.deepStrictEqual(olds, [{ image: "nginx" }, { image: "nginx" }])
    }))

  it.effect("an answer kube-apiserver would reject fails with InvalidResponse", () =>
    Effect.gen(function*() {
      const wrongUid: Admission.Webhook = {
        ...defaults,
        handle: () =>
          Effect.succeed({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: { uid: "other", allowed: true }
          })
      }
      const e1 = yield* run(WebhookChecks.admit(wrongUid, { operation: "CREATE", object: app }))
      assert.strictEqual(e1.reason, "InvalidResponse")
      assert.include(e1.message, `"other" is not the request's`)
      const badPatch: Admission.Webhook = {
        ...defaults,
        handle: (review) =>
          Effect.succeed({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: {
              uid: (review as Json).request.uid,
              allowed: true,
              patchType: "JSONPatch",
              patch: Buffer.from(JSON.stringify([{ op: "replace", path: "/spec/missing/x", value: 1 }])).toString(
                "base64"
              )
            }
          })
      }
      const e2 = yield* run(WebhookChecks.admit(badPatch, { operation: "CREATE", object: app }))
      assert.strictEqual(e2.reason, "InvalidResponse")
      assert.include(e2.message, "does not apply to the object as sent")
    }))
})

describe("WebhookChecks.objects", () => {
  const Cluster = Resource.custom({
    group: "example.com",
    version: "v1",
    kind: "Gadget",
    plural: "gadgets",
    scope: "Cluster",
    spec: Schema.Struct({ size: Schema.Number, tags: Schema.Array(Schema.String) })
  })

  it.effect("objects decode with their Schemas, survive JSON, and have valid metadata", () =>
    Effect.gen(function*() {
      const dns1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
      const namespaced = yield* Arbitrary.sampleEffect(webApps, { count: 50, seed: 1 })
      const cluster = yield* Arbitrary.sampleEffect(WebhookChecks.objects(Cluster), { count: 50, seed: 2 })
      for (const [resource, objects] of [[WebApp, namespaced], [Cluster, cluster]] as const) {
        for (const o of objects) {
          assert.deepStrictEqual(JSON.parse(JSON.stringify(o)), o)
          yield* (resource as Resource.Resource<any>).decode(o)
          assert.strictEqual(o.apiVersion, resource.apiVersion)
          const metadata = o.metadata as Json
          assert.match(metadata.name, dns1123)
          assert.strictEqual(metadata.namespace, resource === WebApp ? "default" : undefined)
        }
      }
      // status sometimes (the Resource has a status Schema), never for a kind without one
      assert.isTrue(namespaced.some((o) => "status" in o) && namespaced.some((o) => !("status" in o)))
      assert.isTrue(cluster.every((o) => !("status" in o)))
    }))
})

describe("WebhookChecks.defaultingIsIdempotent", () => {
  it.effect("holds for a defaulter that only fills in what is missing", () =>
    WebhookChecks.defaultingIsIdempotent(defaults, webApps))

  it.effect("fails on a defaulter that changes its own output, naming the field and a counterexample", () =>
    Effect.gen(function*() {
      const e = yield* run(WebhookChecks.defaultingIsIdempotent(addsReplica, webApps))
      assert.strictEqual(e.reason, "NotIdempotent")
      assert.deepStrictEqual(e.paths, ["spec.replicas"])
      assert.match(e.message, /^defaulting by mwebapp\.apps\.reconcile\.dev is idempotent does not hold: /)
      assert.include(e.message, "does not hold: defaulting the defaulted object patched it again:\n  spec.replicas: ")
      assert.match(e.message, /spec\.replicas: (\d+) → (\d+)/)
      const [, first, second] = /spec\.replicas: (\d+) → (\d+)/.exec(e.message)!
      assert.strictEqual(Number(second), Number(first) + 1)
      assert.include(e.message, "counterexample")
      assert.strictEqual((e.object as Json).kind, "WebApp")
      // the replay token reproduces the same counterexample
      const again = yield* run(WebhookChecks.defaultingIsIdempotent(addsReplica, webApps, { replay: e.replay }))
      assert.deepStrictEqual(again.object, e.object)
    }))

  it.effect("the handlers' requirements are the check's, provided by the test", () => {
    class Replicas extends Context.Service<Replicas, { readonly default: number }>()("test/Replicas") {}
    const configured = Admission.defaulter(WebApp, (app) =>
      Effect.gen(function*() {
        const replicas = yield* Replicas
        return { ...app, spec: { ...app.spec, replicas: app.spec.replicas ?? replicas.default } }
      }))
    const check: Effect.Effect<void, WebhookChecks.WebhookCheckError, Replicas> = WebhookChecks.defaultingIsIdempotent(
      configured,
      webApps,
      { runs: 20 }
    )
    return Effect.provideService(check, Replicas, { default: 3 })
  })

  it.effect("a defaulter defect is a counterexample (Errored); denying every input is Inconclusive", () =>
    Effect.gen(function*() {
      const dies = Admission.defaulter(
        WebApp,
        (app) => app.spec.image.length > 3 ? Effect.die("boom") : Effect.succeed(app)
      )
      const e1 = yield* run(WebhookChecks.defaultingIsIdempotent(dies, webApps))
      assert.strictEqual(e1.reason, "Errored")
      assert.include(e1.message, "the defaulter failed on the input (500 InternalError)")
      // the cause the webhook logged, so the failure says what went wrong
      assert.include(e1.message, "the webhook logged:\nadmission webhook mwebapp.apps.reconcile.dev failed")
      assert.include(e1.message, "boom")
      assert.strictEqual(((e1.object as Json).spec.image as string).length, 4) // shrunk to the smallest failing image
      const deniesAll = Admission.defaulter(WebApp, () => Admission.deny("no"))
      const e2 = yield* run(WebhookChecks.defaultingIsIdempotent(deniesAll, webApps, { runs: 10 }))
      assert.strictEqual(e2.reason, "Inconclusive")
      assert.include(e2.message, "the defaulter denied each of the 10 object(s) drawn")
    }))
})

describe("WebhookChecks.validatorAdmitsDefaulted", () => {
  it.effect("holds when the defaulter fills in what the validator requires", () =>
    WebhookChecks.validatorAdmitsDefaulted(defaults, requiresReplicas, webApps))

  it.effect("fails on a validator that refuses the defaulted object, with its Status and field", () =>
    Effect.gen(function*() {
      const e = yield* run(WebhookChecks.validatorAdmitsDefaulted(defaults, refusesOne, webApps))
      assert.strictEqual(e.reason, "Denied")
      assert.deepStrictEqual(e.paths, ["spec.replicas"])
      assert.match(
        e.message,
        /^vwebapp\.apps\.reconcile\.dev admits what mwebapp\.apps\.reconcile\.dev defaults does not hold/
      )
      assert.include(
        e.message,
        "the validator refused the defaulted object (422 Invalid): spec.replicas: Invalid value: one replica"
      )
      // the smallest counterexample: an input without replicas, which the defaulter sets to 1
      assert.include(e.message, "the defaulter had changed:\n  spec.replicas: (absent) → 1")
      assert.strictEqual((e.object as Json).spec.replicas, undefined)
    }))

  it.effect("without the defaulter's default, the validator's own requirement is found", () =>
    Effect.gen(function*() {
      const noop = Admission.defaulter(WebApp, (app) => Effect.succeed(app))
      const e = yield* run(WebhookChecks.validatorAdmitsDefaulted(noop, requiresReplicas, webApps))
      assert.strictEqual(e.reason, "Denied")
      assert.include(e.message, "spec.replicas: Invalid value: required")
    }))
})

describe("WebhookChecks.conversionRoundTrips", () => {
  const common = { group: "example.com", kind: "Greeting", plural: "greetings", scope: "Namespaced" } as const
  const Status = Schema.Struct({ delivered: Schema.Boolean })
  const V2 = Resource.custom({
    ...common,
    version: "v2",
    storage: true,
    spec: Schema.Struct({ text: Schema.String, lang: Schema.String, loud: Schema.optional(Schema.Boolean) }),
    status: Status
  })
  const V1 = Resource.custom({
    ...common,
    version: "v1",
    spec: Schema.Struct({ message: Schema.String }),
    status: Status
  })
  const V1beta1 = Resource.custom({
    ...common,
    version: "v1beta1",
    spec: Schema.Struct({ message: Schema.String, note: Schema.optional(Schema.String) }),
    status: Status
  })

  const lossless = Conversion.webhook({
    hub: V2,
    spokes: [{
      resource: V1,
      toHub: (o) => ({ spec: { text: o.spec.message, lang: "en" }, status: o.status }),
      fromHub: (o) => ({ spec: { message: o.spec.text }, status: o.status }) // `lang`, `loud`: in the annotation
    }]
  })

  it.effect("holds for a spoke whose losses the annotation keeps", () =>
    WebhookChecks.conversionRoundTrips(lossless, { resources: [V1] }))

  it.effect("fails on a spoke field the hub cannot say (spoke → hub → spoke), naming it", () =>
    Effect.gen(function*() {
      const lossy = Conversion.webhook({
        hub: V2,
        spokes: [{
          resource: V1beta1,
          toHub: (o) => ({ spec: { text: o.spec.message, lang: "en" }, status: o.status }), // `note` is dropped
          fromHub: (o) => ({ spec: { message: o.spec.text }, status: o.status })
        }]
      })
      const e = yield* run(WebhookChecks.conversionRoundTrips(lossy, { resources: [V1beta1] }))
      assert.strictEqual(e.reason, "NotRoundTrip")
      assert.deepStrictEqual(e.paths, ["spec.note"])
      assert.match(e.message, /^v1beta1 → v2 → v1beta1 is the identity does not hold: the object came back different/)
      assert.match(e.message, /spec\.note: ".*" → \(absent\)/)
      assert.strictEqual((e.object as Json).apiVersion, "example.com/v1beta1")
    }))

  it.effect("a fromHub that garbles a field fails spoke → hub → spoke (the annotation repairs hub → spoke → hub)", () =>
    Effect.gen(function*() {
      const garbles = Conversion.webhook({
        hub: V2,
        spokes: [{
          resource: V1,
          toHub: (o) => ({ spec: { text: o.spec.message, lang: "en" }, status: o.status }),
          // the status comes back inverted: the spoke's object says what the hub's did not
          fromHub: (o) => ({
            spec: { message: o.spec.text },
            ...(o.status === undefined ? {} : { status: { delivered: !o.status.delivered } })
          })
        }]
      })
      const e = yield* run(WebhookChecks.conversionRoundTrips(garbles, { resources: [V1] }))
      assert.strictEqual(e.reason, "NotRoundTrip")
      assert.match(e.message, /^v1 → v2 → v1 is the identity does not hold/)
      assert.match(e.message, /status\.delivered: (true|false) → (true|false)/)
      // the spoke's object also came back with the annotation keeping the hub's status
      assert.deepStrictEqual(e.paths, ["metadata.annotations[conversion.reconcile.dev/v2]", "status.delivered"])
    }))

  it.effect("a spoke without objects to draw is MissingVersion; a throwing conversion is Unconvertible", () =>
    Effect.gen(function*() {
      const e1 = yield* run(WebhookChecks.conversionRoundTrips(lossless))
      assert.strictEqual(e1.reason, "MissingVersion")
      assert.include(e1.message, "version v1 of Greeting.example.com")
      const throws = Conversion.webhook({
        hub: V2,
        spokes: [{
          resource: V1,
          toHub: () => {
            throw new Error("not yet")
          },
          fromHub: (o) => ({ spec: { message: o.spec.text } })
        }]
      })
      const e2 = yield* run(WebhookChecks.conversionRoundTrips(throws, { resources: [V1], runs: 5 }))
      assert.strictEqual(e2.reason, "Unconvertible")
      assert.include(e2.message, "not yet")
    }))

  it.effect("arbitraries replace a version's Schema-drawn objects", () =>
    WebhookChecks.conversionRoundTrips(lossless, {
      arbitraries: {
        v1: Arbitrary.map(Arbitrary.schema(Schema.String), (message) => ({
          apiVersion: "example.com/v1",
          kind: "Greeting",
          metadata: { name: "hello", namespace: "default" },
          spec: { message }
        }))
      },
      runs: 20
    }))
})
