/**
 * The API server (kube-apiserver, or the embedded cluster) calls our webhook server: a defaulter and a validator of
 * ConfigMaps (objects labelled `webhook-test: yes` only, so the control plane's own ConfigMaps are never
 * intercepted) and a defaulter of a small custom resource are served over HTTPS on 127.0.0.1, registered with
 * `Admission.configurations` (URL client config, our CA as caBundle), then objects are created, updated and deleted
 * through `KubeClient`: defaults are patched in, denials come back with kube-apiserver's message (`admission webhook
 * "<name>" denied the request: …`) and our code, a protected object cannot be deleted, and a dry run reaches the
 * handler with `dryRun: true`. The same tests run on both clusters (`support/env.ts`): the embedded cluster calls
 * webhooks as kube-apiserver does.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Schema } from "effect"
import * as Admission from "../src/Admission.js"
import * as Certificates from "../src/Certificates.js"
import * as KubeClient from "../src/KubeClient.js"
import type * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import * as WebhookServer from "../src/WebhookServer.js"
import { check, eventually, kubeLayer, serverApply, serverLayer } from "./support/env.js"

const Greeting = Resource.custom({
  group: "webhooks.reconcile.dev",
  version: "v1",
  kind: "Greeting",
  plural: "greetings",
  scope: "Namespaced",
  spec: Schema.Struct({ text: Schema.String, times: Schema.optional(Schema.Int) })
})

const selected = { "webhook-test": "yes" }

/** What the handlers saw: operation, object name, dryRun. */
const seen: Array<{ readonly operation: string; readonly name: string; readonly dryRun: boolean }> = []

const configMapDefaults = Admission.defaulter(Resource.ConfigMap, (cm, request) =>
  Effect.sync(() => {
    seen.push({ operation: `default ${request.operation}`, name: request.name, dryRun: request.dryRun })
    // a label key with a "/": its JSON pointer needs the ~1 escape
    return {
      ...cm,
      metadata: { ...cm.metadata, labels: { ...cm.metadata?.labels, "reconcile.dev/defaulted": "true" } },
      data: { tier: "standard", ...cm.data }
    }
  }), { objectSelector: { matchLabels: selected } })

const configMapChecks = Admission.validator(Resource.ConfigMap, {
  create: (cm, request) =>
    Effect.gen(function*() {
      seen.push({ operation: "validate CREATE", name: request.name, dryRun: request.dryRun })
      if (cm.data?.tier === "gold") {
        return yield* Admission.invalid([{ field: "data.tier", message: `"gold": sold out` }])
      }
      return cm.data?.legacy === undefined ? [] : ["data.legacy is deprecated"]
    }),
  update: (old, cm) => old.data?.owner !== cm.data?.owner ? Admission.deny("data.owner is immutable") : Effect.void,
  delete: (old) =>
    old.metadata?.labels?.protected === "true"
      ? Admission.deny("this ConfigMap is protected", { reason: "Forbidden", code: 403 })
      : Effect.void
}, { objectSelector: { matchLabels: selected } })

const greetingDefaults = Admission.defaulter(
  Greeting,
  (g) => Effect.succeed({ ...g, spec: { ...g.spec, times: g.spec.times ?? 3 } })
)

const webhooks = [configMapDefaults, configMapChecks, greetingDefaults]

const ca = Certificates.issue({ commonName: "webhook-real-ca", ca: true })
const serving = Certificates.issue({ commonName: "webhook", usages: ["server"], ips: ["127.0.0.1"], issuer: ca })

const Cluster = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(serverLayer()))

/** Our server, its configurations registered (and removed at the end), the Greeting CRD installed. */
const Registered = Layer.effectDiscard(Effect.gen(function*() {
  yield* serverApply(Resource.crdManifest(Greeting))
  yield* Effect.orDie(KubeClient.create(Resource.Namespace, { metadata: { name: namespace } }))
  const server = yield* WebhookServer.WebhookServer
  const configurations = Admission.configurations(webhooks, {
    name: "webhook-real",
    clientConfig: { url: `https://127.0.0.1:${server.address.port}`, caBundle: ca.cert }
  })
  for (const configuration of configurations) {
    const resource = configuration.kind === "MutatingWebhookConfiguration"
      ? Admission.MutatingWebhookConfiguration
      : Admission.ValidatingWebhookConfiguration
    yield* Effect.orDie(KubeClient.create(resource, configuration))
    yield* Effect.addFinalizer(() => Effect.ignore(KubeClient.del(resource, configuration.metadata.name)))
  }
})).pipe(
  Layer.provideMerge(WebhookServer.layer({ routes: webhooks, certificate: WebhookServer.fromPem(serving), port: 0 })),
  Layer.provideMerge(Cluster),
  Layer.orDie
)

const namespace = "webhooks"
const cm = (name: string, data: Record<string, string>, labels: Record<string, string> = {}): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, labels: { ...selected, ...labels } },
  data
})

const failure = <A, R>(effect: Effect.Effect<A, KubeError.KubeError, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    const error = Exit.findErrorOption(exit)
    assert(Option.isSome(error), `expected a failure, got ${String(exit)}`)
    return error.value as KubeError.StatusError
  })

/** kube-apiserver picks up new webhook configurations a moment after they are created. */
const active = eventually(
  Effect.gen(function*() {
    const made = yield* KubeClient.create(Resource.ConfigMap, cm("probe", {}), { namespace, dryRun: true })
    yield* check(() => assert.strictEqual(made.data?.tier, "standard"))
    const denied = yield* Effect.exit(
      KubeClient.create(Resource.ConfigMap, cm("probe", { tier: "gold" }), { namespace, dryRun: true })
    )
    yield* check(() => assert.isTrue(Exit.isFailure(denied)))
  }),
  30_000
)

// the embedded cluster's webhook calls are being built by another helper: real control plane only for now
describe("admission webhooks called by the API server", () => {
  layer(Registered, { timeout: 120_000, excludeTestServices: true })("our server, registered", (it) => {
    it.effect("a create gets the defaults (JSON patch), with the fields it had", () =>
      Effect.gen(function*() {
        yield* active
        const made = yield* KubeClient.create(Resource.ConfigMap, cm("plain", { a: "1" }, { "x.io/y": "2" }), {
          namespace
        })
        assert.deepStrictEqual(made.data, { tier: "standard", a: "1" })
        assert.deepStrictEqual(made.metadata?.labels, { ...selected, "x.io/y": "2", "reconcile.dev/defaulted": "true" })
        const kept = yield* KubeClient.create(Resource.ConfigMap, cm("kept", { tier: "silver" }), { namespace })
        assert.deepStrictEqual(kept.data, { tier: "silver" })
        // not selected: never sent to the webhooks
        const other = yield* KubeClient.create(Resource.ConfigMap, {
          metadata: { name: "other", namespace },
          data: { tier: "gold" }
        }, { namespace })
        assert.deepStrictEqual(other.data, { tier: "gold" })
      }))

    it.effect("a denial comes back with kube-apiserver's message, our code, reason and field causes", () =>
      Effect.gen(function*() {
        yield* active
        const error = yield* failure(
          KubeClient.create(Resource.ConfigMap, cm("gold", { tier: "gold" }), { namespace })
        )
        assert.strictEqual(error._tag, "Invalid")
        assert.strictEqual(error.code, 422)
        assert.strictEqual(
          error.status.message,
          `admission webhook "vconfigmap.core.k8s.io" denied the request: data.tier: Invalid value: "gold": sold out`
        )
        assert.deepStrictEqual(error.causes.map((c) => c.field), ["data.tier"])
        const immutable = yield* KubeClient.create(Resource.ConfigMap, cm("owned", { owner: "a" }), { namespace })
        const update = yield* failure(
          KubeClient.replace(Resource.ConfigMap, { ...immutable, data: { ...immutable.data, owner: "b" } }, {
            namespace
          })
        )
        assert.strictEqual(update._tag, "Forbidden")
        assert.strictEqual(update.code, 403)
        assert.strictEqual(
          update.status.message,
          `admission webhook "vconfigmap.core.k8s.io" denied the request: data.owner is immutable`
        )
      }))

    it.effect("a protected object cannot be deleted; another one can", () =>
      Effect.gen(function*() {
        yield* active
        yield* KubeClient.create(Resource.ConfigMap, cm("guarded", {}, { protected: "true" }), { namespace })
        const error = yield* failure(KubeClient.del(Resource.ConfigMap, "guarded", { namespace }))
        assert.strictEqual(error._tag, "Forbidden")
        assert.strictEqual(error.code, 403)
        assert.strictEqual(
          error.status.message,
          `admission webhook "vconfigmap.core.k8s.io" denied the request: this ConfigMap is protected`
        )
        const still = yield* KubeClient.get(Resource.ConfigMap, "guarded", { namespace })
        assert.strictEqual(still.metadata?.name, "guarded")
        yield* KubeClient.create(Resource.ConfigMap, cm("free", {}), { namespace })
        yield* KubeClient.del(Resource.ConfigMap, "free", { namespace })
      }))

    it.effect("a dry-run create reaches both handlers with dryRun: true and is not stored", () =>
      Effect.gen(function*() {
        yield* active
        seen.length = 0
        const made = yield* KubeClient.create(Resource.ConfigMap, cm("dry", { legacy: "1" }), {
          namespace,
          dryRun: true
        })
        assert.strictEqual(made.data?.tier, "standard")
        assert.deepStrictEqual(seen, [
          { operation: "default CREATE", name: "dry", dryRun: true },
          { operation: "validate CREATE", name: "dry", dryRun: true }
        ])
        const missing = yield* failure(KubeClient.get(Resource.ConfigMap, "dry", { namespace }))
        assert.strictEqual(missing._tag, "NotFound")
      }))

    it.effect("a custom resource's defaulter patches its spec", () =>
      Effect.gen(function*() {
        yield* active
        const hello = {
          apiVersion: "webhooks.reconcile.dev/v1",
          kind: "Greeting",
          metadata: { name: "hello", namespace },
          spec: { text: "hi" }
        }
        yield* eventually(
          Effect.gen(function*() {
            const dry = yield* KubeClient.create(Greeting, hello, { namespace, dryRun: true })
            yield* check(() => assert.strictEqual(dry.spec.times, 3))
          }),
          30_000
        )
        const made = yield* KubeClient.create(Greeting, hello, { namespace })
        assert.deepStrictEqual(made.spec, { text: "hi", times: 3 })
      }))
  })
})
