/**
 * The WebApp's admission webhooks (`src/webhooks.ts`):
 *
 * - through the API server, as a client sees them: the embedded cluster (`TestKube` over `TestCluster`, in process)
 *   calls the example's webhook server (HTTPS on 127.0.0.1, registered with `Admission.configurations`, as the main
 *   job does on `npm start`): a WebApp created (or updated) without `spec.replicas` is stored with 1, an unpinned
 *   image comes back as a `Warning` header naming `spec.image`, a protected WebApp cannot be deleted until its
 *   annotation goes, and a misspelt protection is refused;
 * - in process, with `WebhookChecks`: defaulting is idempotent and the validator admits every defaulted WebApp, over
 *   WebApps drawn from the Schemas; which images count as pinned.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Admission, Certificates, Kube, KubeClient, type KubeError, Resource, WebhookServer } from "@reconcile/kube"
import { TestApiServer, TestKube, WebhookChecks } from "@reconcile/testkit"
import { Effect, Exit, Layer, Option } from "effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { samples, tryIt } from "../src/samples.js"
import { WebApp } from "../src/WebApp.js"
import { admission, checks, defaults, deletionProtection, isPinned, unpinnedWarning } from "../src/webhooks.js"
import { assertTryIt, runAll } from "./support/tryIt.js"

const ca = Certificates.issue({ commonName: "webapp-test-ca", ca: true })
const serving = Certificates.issue({ commonName: "127.0.0.1", usages: ["server"], ips: ["127.0.0.1"], issuer: ca })

/** The WebApp CRD, and the example's webhooks served and registered (as `npm start` does), on the cluster given. */
const Registered = Layer.effectDiscard(Effect.gen(function*() {
  yield* KubeClient.patch(
    Resource.CustomResourceDefinition,
    "webapps.apps.reconcile.dev",
    Resource.crdManifest(WebApp),
    {
      type: "apply",
      fieldManager: "test"
    }
  )
  const server = yield* WebhookServer.WebhookServer
  const configurations = Admission.configurations(admission, {
    name: "webapp-operator",
    clientConfig: { url: `https://127.0.0.1:${server.address.port}`, caBundle: ca.cert }
  })
  for (const configuration of configurations) {
    const resource = configuration.kind === "MutatingWebhookConfiguration"
      ? Admission.MutatingWebhookConfiguration
      : Admission.ValidatingWebhookConfiguration
    yield* KubeClient.create(resource, configuration)
  }
})).pipe(
  Layer.provideMerge(WebhookServer.layer({ routes: admission, certificate: WebhookServer.fromPem(serving), port: 0 }))
)

/** The embedded cluster in process (`TestKube`), with a `Kube` for raw requests. */
const Cluster = Registered.pipe(
  Layer.provideMerge(TestKube.layerKube()),
  Layer.provideMerge(TestKube.layerWithCluster()),
  Layer.orDie
)

/** The embedded cluster over HTTPS (`TestApiServer`), for kubectl; no controllers, no operator: the webhooks only. */
const Served = Layer.effectDiscard(Effect.forEach(samples("default"), (sample) => KubeClient.create(WebApp, sample)))
  .pipe(
    Layer.provideMerge(Registered),
    Layer.provideMerge(TestKube.layer),
    Layer.provideMerge(TestApiServer.layerWithCluster({ controllers: false })),
    Layer.orDie
  )

const webApp = (name: string, spec: { readonly image: string; readonly replicas?: number; readonly port: number }) => ({
  apiVersion: WebApp.apiVersion,
  kind: WebApp.kind,
  metadata: { name, namespace: "default" },
  spec
})

const failure = <A, R>(effect: Effect.Effect<A, KubeError.KubeError, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    const error = Exit.findErrorOption(exit)
    assert(Option.isSome(error), `expected a failure, got ${String(exit)}`)
    return error.value as KubeError.StatusError
  })

/** Creates `object` with a plain POST, as kubectl does: the status and the `Warning` headers' texts. */
const createWithWarnings = (object: unknown) =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const response = yield* kube.httpClient.execute(
      HttpClientRequest.post(`/apis/${WebApp.apiVersion}/namespaces/default/${WebApp.plural}`).pipe(
        HttpClientRequest.bodyJsonUnsafe(object)
      )
    )
    const header = response.headers["warning"] ?? ""
    // `299 - "<text>"`, comma-separated when there are several
    const warnings = [...header.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string)
    return { status: response.status, warnings }
  }).pipe(Effect.orDie)

layer(Cluster, { excludeTestServices: true })("through the API server (embedded cluster, in process)", (it) => {
  it.effect("a WebApp created without spec.replicas is stored with replicas: 1; an explicit 0 is kept", () =>
    Effect.gen(function*() {
      const made = yield* KubeClient.create(WebApp, webApp("plain", { image: "nginx:1.27", port: 80 }))
      assert.strictEqual(made.spec.replicas, 1)
      const stored = yield* KubeClient.get(WebApp, "plain", { namespace: "default" })
      assert.strictEqual(stored.spec.replicas, 1, "the default is stored, not only answered")
      const zero = yield* KubeClient.create(WebApp, webApp("zero", { image: "nginx:1.27", replicas: 0, port: 80 }))
      assert.strictEqual(zero.spec.replicas, 0, "a value given is never replaced")
    }))

  it.effect("an update that removes spec.replicas gets the default back", () =>
    Effect.gen(function*() {
      yield* KubeClient.create(WebApp, webApp("scaled", { image: "nginx:1.27", replicas: 4, port: 80 }))
      const patched = yield* KubeClient.patch(WebApp, "scaled", { spec: { replicas: null } }, {
        type: "merge",
        namespace: "default"
      })
      assert.strictEqual(patched.spec.replicas, 1)
    }))

  it.effect("an unpinned image is admitted with a Warning naming spec.image; a pinned one with none", () =>
    Effect.gen(function*() {
      for (const [name, image] of [["untagged", "nginx"], ["latest", "nginx:latest"]] as const) {
        const answer = yield* createWithWarnings(webApp(name, { image, port: 80 }))
        assert.strictEqual(answer.status, 201, name)
        assert.deepStrictEqual(answer.warnings, [unpinnedWarning(image)], name)
        assert.isTrue(answer.warnings[0]!.startsWith("spec.image: "))
      }
      const pinned = yield* createWithWarnings(webApp("pinned", { image: "nginx:1.27", port: 80 }))
      assert.strictEqual(pinned.status, 201)
      assert.deepStrictEqual(pinned.warnings, [])
      const stored = yield* KubeClient.get(WebApp, "untagged", { namespace: "default" })
      assert.strictEqual(stored.spec.replicas, 1, "defaulted too")
    }))

  it.effect(`a WebApp annotated ${deletionProtection}: "true" cannot be deleted; without it, it can`, () =>
    Effect.gen(function*() {
      yield* KubeClient.create(WebApp, webApp("guarded", { image: "nginx:1.27", port: 80 }))
      yield* KubeClient.patch(WebApp, "guarded", { metadata: { annotations: { [deletionProtection]: "true" } } }, {
        type: "merge",
        namespace: "default"
      })
      const denied = yield* failure(KubeClient.del(WebApp, "guarded", { namespace: "default" }))
      assert.strictEqual(denied._tag, "Forbidden")
      assert.strictEqual(denied.code, 403)
      assert.include(
        denied.status.message,
        `admission webhook "vwebapp.apps.reconcile.dev" denied the request: WebApp default/guarded is protected`
      )
      assert.include(denied.status.message, `${deletionProtection}: "true"`)
      const still = yield* KubeClient.get(WebApp, "guarded", { namespace: "default" })
      assert.isUndefined(still.metadata.deletionTimestamp)

      // "false" protects nothing; removing the annotation neither
      yield* KubeClient.patch(WebApp, "guarded", { metadata: { annotations: { [deletionProtection]: "false" } } }, {
        type: "merge",
        namespace: "default"
      })
      yield* KubeClient.patch(WebApp, "guarded", { metadata: { annotations: { [deletionProtection]: "true" } } }, {
        type: "merge",
        namespace: "default"
      })
      yield* KubeClient.patch(WebApp, "guarded", { metadata: { annotations: { [deletionProtection]: null } } }, {
        type: "merge",
        namespace: "default"
      })
      yield* KubeClient.del(WebApp, "guarded", { namespace: "default" })
      const gone = yield* failure(KubeClient.get(WebApp, "guarded", { namespace: "default" }))
      assert.strictEqual(gone._tag, "NotFound")
    }))

  it.effect("a protection that is neither \"true\" nor \"false\" is refused (422), naming the annotation", () =>
    Effect.gen(function*() {
      const typo = { ...webApp("typo", { image: "nginx:1.27", port: 80 }) }
      const refused = yield* failure(KubeClient.create(WebApp, {
        ...typo,
        metadata: { ...typo.metadata, annotations: { [deletionProtection]: "yes" } }
      }))
      assert.strictEqual(refused._tag, "Invalid")
      assert.strictEqual(refused.code, 422)
      assert.deepStrictEqual(refused.causes.map((c) => c.field), [`metadata.annotations[${deletionProtection}]`])
      assert.include(refused.status.message, `"yes": must be "true" or "false"`)
    }))
})

layer(Served, { excludeTestServices: true })("npm start's Try it lines, with the real kubectl", (it) => {
  it.effect(
    "the default, the warning and the deletion protection, as kubectl prints them",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        assertTryIt(yield* runAll(tryIt("default"), server.kubeconfigPath))
      }),
    { timeout: 60_000 }
  )
})

// ---------------------------------------------------------------------------------------------------------------
// the handlers' properties (in process, no server)

describe("the handlers (WebhookChecks)", () => {
  const webApps = WebhookChecks.objects(WebApp)

  it.effect("defaulting is idempotent", () => WebhookChecks.defaultingIsIdempotent(defaults, webApps, { runs: 200 }))

  it.effect("the validator admits every defaulted WebApp", () =>
    WebhookChecks.validatorAdmitsDefaulted(defaults, checks, webApps, { runs: 200 }))

  it.effect("the defaulter sets replicas only where it is missing; the validator's warning names an unpinned image", () =>
    Effect.gen(function*() {
      const bare = webApp("bare", { image: "nginx", port: 80 })
      const defaulted = yield* WebhookChecks.admit(defaults, { operation: "CREATE", object: bare })
      assert.deepStrictEqual(defaulted.patch, [{ op: "add", path: "/spec/replicas", value: 1 }])
      const checked = yield* WebhookChecks.admit(checks, { operation: "CREATE", object: defaulted.object })
      assert.isTrue(checked.allowed)
      assert.deepStrictEqual(checked.warnings, [unpinnedWarning("nginx")])
      // a deletion of an app that does not decode is never held up (nor its finalizer's removal)
      const broken = { ...bare, spec: { image: "nginx", replicas: "three", port: 80 } }
      const deleted = yield* WebhookChecks.admit(checks, {
        operation: "DELETE",
        oldObject: { ...broken, metadata: { ...broken.metadata, annotations: { [deletionProtection]: "true" } } }
      })
      assert.isTrue(deleted.allowed)
      const updated = yield* WebhookChecks.admit(defaults, { operation: "UPDATE", oldObject: broken, object: broken })
      assert.isTrue(updated.allowed)
      assert.deepStrictEqual(updated.patch, [])
    }))

  it.effect("a misspelt protection already stored does not block updates (the finalizer's removal): only a new one", () =>
    Effect.gen(function*() {
      const bare = webApp("old", { image: "nginx:1.27", replicas: 1, port: 80 })
      const typo = { ...bare, metadata: { ...bare.metadata, annotations: { [deletionProtection]: "yes" } } }
      const kept = yield* WebhookChecks.admit(checks, {
        operation: "UPDATE",
        oldObject: typo,
        object: { ...typo, metadata: { ...typo.metadata, finalizers: [] } }
      })
      assert.isTrue(kept.allowed)
      const changed = yield* WebhookChecks.admit(checks, { operation: "UPDATE", oldObject: bare, object: typo })
      assert.isFalse(changed.allowed)
      assert.strictEqual(changed.status?.code, 422)
    }))

  it("which images are pinned: a version tag or a digest", () => {
    for (const image of ["nginx:1.27", "registry:5000/app:v2", "nginx@sha256:0123abcd", "nginx:latest@sha256:0a"]) {
      assert.isTrue(isPinned(image), image)
    }
    for (const image of ["nginx", "nginx:latest", "registry:5000/app", "ghcr.io/org/app:latest"]) {
      assert.isFalse(isPinned(image), image)
    }
  })
})
