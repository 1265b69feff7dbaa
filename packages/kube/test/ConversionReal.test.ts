/**
 * The conversion webhook called by a real kube-apiserver over TLS: a CRD with two versions (v1alpha1 with
 * `image: { repository, tag }` and `instances`; v1, stored, with `image: string`, `replicas` and a `paused` only it
 * has) and the conversion stanza pointing at the route, served by the `WebhookServer` (127.0.0.1, a certificate
 * from `Certificates`). Objects written in one version read back the same in the other, through get, list and
 * watch.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Envtest } from "@reconcile/testkit"
import { Effect, Layer, Result, Schema, Stream } from "effect"
import * as Certificates from "../src/Certificates.js"
import * as Conversion from "../src/Conversion.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import * as WebhookServer from "../src/WebhookServer.js"
import { fastRetry } from "./support/env.js"

const common = { group: "conversion.example.com", kind: "WebApp", plural: "webapps", scope: "Namespaced" } as const

const V1alpha1 = Resource.custom({
  ...common,
  version: "v1alpha1",
  spec: Schema.Struct({
    image: Schema.Struct({ repository: Schema.String, tag: Schema.String }),
    instances: Schema.Int
  })
})

const V1 = Resource.custom({
  ...common,
  version: "v1",
  storage: true,
  spec: Schema.Struct({ image: Schema.String, replicas: Schema.Int, paused: Schema.optional(Schema.Boolean) })
})

const WebApps = Conversion.webhook({
  hub: V1,
  spokes: [{
    resource: V1alpha1,
    toHub: (o) => ({ spec: { image: `${o.spec.image.repository}:${o.spec.image.tag}`, replicas: o.spec.instances } }),
    fromHub: (o) => {
      const at = o.spec.image.lastIndexOf(":")
      const image = at < 0
        ? { repository: o.spec.image, tag: "" }
        : { repository: o.spec.image.slice(0, at), tag: o.spec.image.slice(at + 1) }
      return { spec: { image, instances: o.spec.replicas } }
    }
  }]
})

/** The desired version of each review the server answered. */
const reviews: Array<string> = []

/**
 * Serves the route with the `WebhookServer` over TLS on 127.0.0.1 (a fresh CA and serving certificate), noting each
 * review's desired version; its URL and CA.
 */
const webhookServer = Effect.gen(function*() {
  const ca = Certificates.issue({ commonName: "conversion-test-ca", ca: true })
  const serving = Certificates.issue({
    commonName: "conversion-webhook",
    usages: ["server"],
    ips: ["127.0.0.1"],
    issuer: ca
  })
  const route: WebhookServer.Route = {
    ...WebApps.route,
    handle: (body) =>
      Effect.andThen(
        Effect.sync(() => {
          reviews.push(String((body as { request?: { desiredAPIVersion?: unknown } }).request?.desiredAPIVersion))
        }),
        WebApps.route.handle(body)
      )
  }
  const server = yield* WebhookServer.make({ routes: [route], certificate: WebhookServer.fromPem(serving), port: 0 })
  return { url: `https://127.0.0.1:${server.address.port}`, ca: ca.cert }
})

const ns = "conversion"

/** The control plane, the webhook's server, the CRD (with the stanza pointing at it) and a namespace. */
const TestLayer = Layer.effectDiscard(
  Effect.gen(function*() {
    const plane = yield* Envtest.Envtest
    const webhook = yield* webhookServer
    const crds = yield* Effect.fromResult(Result.flatMap(
      Resource.crdManifests([V1alpha1, V1]),
      (crds) => Conversion.withConversion(crds, [WebApps], { url: webhook.url, caBundle: webhook.ca })
    ))
    yield* plane.installCrds(crds)
    yield* KubeClient.create(Resource.Namespace, { metadata: { name: ns } })
  })
).pipe(
  Layer.provideMerge(KubeClient.layer),
  Layer.provideMerge(Envtest.layerKube({ controllers: false }, fastRetry)),
  Layer.orDie
)

// The same on both clusters: the embedded one calls the webhook as kube-apiserver does (`npm run test:envtest` runs
// it on the real control plane).
describe("conversion webhook, called by the API server", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("a CRD with v1alpha1 and v1 (stored)", (it) => {
    it.effect("writes in one version read back the same in the other: get, list and watch", () =>
      Effect.gen(function*() {
        const plane = yield* Envtest.Envtest

        // written as v1alpha1: stored (and read) as v1, read back as v1alpha1 the same
        const alphaSpec = { image: { repository: "registry.local:5000/nginx", tag: "1.27" }, instances: 2 }
        yield* KubeClient.create(V1alpha1, {
          apiVersion: V1alpha1.apiVersion,
          kind: "WebApp",
          metadata: { name: "from-alpha", labels: { app: "web" } },
          spec: alphaSpec
        }, { namespace: ns })
        assert.isTrue(reviews.includes("conversion.example.com/v1"), JSON.stringify(reviews))
        const asV1 = yield* KubeClient.get(V1, "from-alpha", { namespace: ns })
        assert.strictEqual(asV1.apiVersion, "conversion.example.com/v1")
        assert.deepStrictEqual(asV1.spec, { image: "registry.local:5000/nginx:1.27", replicas: 2 })
        assert.deepStrictEqual(asV1.metadata.labels, { app: "web" })
        assert.isUndefined(asV1.metadata.annotations)
        const asAlpha = yield* KubeClient.get(V1alpha1, "from-alpha", { namespace: ns })
        assert.deepStrictEqual(asAlpha.spec, alphaSpec)
        assert.isUndefined(asAlpha.metadata.annotations)
        assert.strictEqual(asAlpha.metadata.uid, asV1.metadata.uid)
        assert.strictEqual(asAlpha.metadata.resourceVersion, asV1.metadata.resourceVersion)

        // written as v1 with a field only v1 has: v1alpha1 carries it in the annotation through an update
        yield* KubeClient.create(V1, {
          apiVersion: V1.apiVersion,
          kind: "WebApp",
          metadata: { name: "from-v1" },
          spec: { image: "nginx@sha256:abc", replicas: 1, paused: true }
        }, { namespace: ns })
        const alpha = yield* KubeClient.get(V1alpha1, "from-v1", { namespace: ns })
        assert.deepStrictEqual(alpha.spec, { image: { repository: "nginx@sha256", tag: "abc" }, instances: 1 })
        assert.deepStrictEqual(JSON.parse(alpha.metadata.annotations?.[WebApps.annotation] ?? "[]"), [
          { path: ["spec", "paused"], value: true }
        ])
        yield* KubeClient.replace(V1alpha1, { ...alpha, spec: { ...alpha.spec, instances: 3 } }, { namespace: ns })
        const v1 = yield* KubeClient.get(V1, "from-v1", { namespace: ns })
        assert.deepStrictEqual(v1.spec, { image: "nginx@sha256:abc", replicas: 3, paused: true })
        assert.isUndefined(v1.metadata.annotations)
        // stored without the annotation: etcd's copy (read in the stored version) has none either
        const raw = yield* plane.request("GET", V1.path({ namespace: ns, name: "from-v1" }))
        assert.notInclude(raw.body, "conversion.reconcile.dev")

        // list and watch in the version that is not stored
        const list = yield* KubeClient.list(V1alpha1, { namespace: ns })
        assert.deepStrictEqual(
          list.items.map((o) => [o.metadata.name, o.spec]),
          [
            ["from-alpha", alphaSpec],
            ["from-v1", { image: { repository: "nginx@sha256", tag: "abc" }, instances: 3 }]
          ]
        )
        // (served from the watch cache, a list's items are converted one review each)
        assert.isTrue(reviews.includes("conversion.example.com/v1alpha1"), JSON.stringify(reviews))
        const events = KubeClient.watch(V1alpha1, { namespace: ns, resourceVersion: list.resourceVersion })
        yield* KubeClient.create(V1, {
          apiVersion: V1.apiVersion,
          kind: "WebApp",
          metadata: { name: "watched" },
          spec: { image: "busybox:1.36", replicas: 5 }
        }, { namespace: ns })
        const [added] = yield* events.pipe(Stream.take(1), Stream.runCollect)
        assert(added?._tag === "Added", JSON.stringify(added))
        assert.strictEqual(added.object.apiVersion, "conversion.example.com/v1alpha1")
        assert.strictEqual(added.object.metadata.name, "watched")
        assert.deepStrictEqual(added.object.spec, { image: { repository: "busybox", tag: "1.36" }, instances: 5 })
        const v1List = yield* KubeClient.list(V1, { namespace: ns })
        assert.deepStrictEqual(v1List.items.map((o) => o.spec.replicas), [2, 3, 5])
      }))

    it.effect("the webhook's Failure reaches the client with its message", () =>
      Effect.gen(function*() {
        const plane = yield* Envtest.Envtest
        // the CRD's schema accepts the object; the webhook refuses its annotation (not what a conversion wrote)
        const answer = yield* plane.request("POST", V1alpha1.path({ namespace: ns }), {
          apiVersion: V1alpha1.apiVersion,
          kind: "WebApp",
          metadata: { name: "tampered", annotations: { [WebApps.annotation]: "{not json" } },
          spec: { image: { repository: "nginx", tag: "1" }, instances: 1 }
        })
        assert.isAtLeast(answer.status, 400, answer.body)
        assert.include(answer.body, "(conversion/tampered): metadata.annotations[conversion.reconcile.dev/v1]")
        const gone = yield* plane.request("GET", V1.path({ namespace: ns, name: "tampered" }))
        assert.strictEqual(gone.status, 404)
      }))
  })
})
