/**
 * Status against TestApiServer over HTTPS: observedGeneration, no-op patches, the condition transition-time rule.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Conditions from "../src/Conditions.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import * as Status from "../src/Status.js"
import { countRequests, kubeLayer, makeEnv, onRealCluster, waitServed } from "./support/env.js"
import { WebApp } from "./support/fixtures.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const Widget = Resource.custom({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  scope: "Namespaced",
  spec: Schema.Struct({ size: Schema.Int }),
  status: Conditions.status({ phase: Schema.optional(Schema.String) })
})

let counter = 0
const setup = Effect.gen(function*() {
  yield* KubeClient.create(Resource.CustomResourceDefinition, Resource.crdManifest(Widget)).pipe(
    KubeError.ignoreAlreadyExists
  )
  yield* KubeClient.create(Resource.CustomResourceDefinition, Resource.crdManifest(WebApp)).pipe(
    KubeError.ignoreAlreadyExists
  )
  yield* waitServed(Widget)
  yield* waitServed(WebApp)
  const ns = `status-${++counter}`
  yield* KubeClient.create(Resource.Namespace, { metadata: { name: ns } })
  const widget = yield* KubeClient.create(Widget, {
    apiVersion: Widget.apiVersion,
    kind: Widget.kind,
    metadata: { name: "w", namespace: ns },
    spec: { size: 1 }
  })
  return { ns, widget }
})

const statusWrites = (from: number) => countRequests(env.log, from, "PATCH ", "/status")
const allWrites = (from: number) => ["POST ", "PUT ", "PATCH "].reduce((n, v) => n + countRequests(env.log, from, v), 0)

const at = (iso: string) => TestClock.setTime(new Date(iso).getTime())

layer(TestLayer)("Status against TestApiServer", (it) => {
  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "writes observedGeneration from metadata.generation, and again after the spec changes",
    () =>
      Effect.gen(function*() {
        const { ns, widget } = yield* setup
        assert.strictEqual(widget.metadata.generation, 1)
        let from = env.log.lines.length
        const first = yield* Status.patch(Widget, widget, { phase: "Running" })
        assert.strictEqual(statusWrites(from), 1)
        assert.deepStrictEqual(first.status, { observedGeneration: 1, phase: "Running" })

        const respec = yield* KubeClient.patch(Widget, "w", { spec: { size: 2 } }, { type: "merge", namespace: ns })
        assert.strictEqual(respec.metadata.generation, 2)
        from = env.log.lines.length
        const second = yield* Status.patch(Widget, respec, { phase: "Running" })
        assert.strictEqual(statusWrites(from), 1, "only observedGeneration changed: still a write")
        assert.deepStrictEqual(second.status, { observedGeneration: 2, phase: "Running" })
        const live = yield* KubeClient.get(Widget, "w", { namespace: ns })
        assert.strictEqual(live.status?.observedGeneration, 2)
      })
  )

  it.effect("a no-op status patch makes no write and returns the object as given", () =>
    Effect.gen(function*() {
      const { widget } = yield* setup
      const written = yield* Status.patch(Widget, widget, { phase: "Running" })
      const from = env.log.lines.length
      const same = yield* Status.patch(Widget, written, { phase: "Running" })
      assert.strictEqual(same, written)
      const empty = yield* Status.patch(Widget, written, {})
      assert.strictEqual(empty, written)
      assert.strictEqual(allWrites(from), 0)
    }))

  it.effect("a field set to undefined is removed; other status fields are kept", () =>
    Effect.gen(function*() {
      const { ns, widget } = yield* setup
      const running = yield* Status.patch(Widget, widget, { phase: "Running" })
      const cleared = yield* Status.patch(Widget, running, { phase: undefined })
      assert.deepStrictEqual(cleared.status, { observedGeneration: 1 })
      const live = yield* KubeClient.get(Widget, "w", { namespace: ns })
      assert.deepStrictEqual(live.status, { observedGeneration: 1 })
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "conditions: lastTransitionTime changes only when status changes, across writes; stable order",
    () =>
      Effect.gen(function*() {
        const { widget } = yield* setup
        yield* at("2024-05-01T10:00:00Z")
        const w1 = yield* Status.setConditions(Widget, widget, [
          { type: "Ready", status: "False", reason: "Starting" }
        ])
        const ready1 = w1.status?.conditions?.[0]
        assert.strictEqual(ready1?.lastTransitionTime, "2024-05-01T10:00:00Z")
        assert.strictEqual(ready1?.observedGeneration, 1)
        assert.strictEqual(w1.status?.observedGeneration, 1)

        yield* at("2024-05-01T10:01:00Z")
        // same status, new reason and message: one write, transition time kept; a new type is appended
        let from = env.log.lines.length
        const w2 = yield* Status.patch(Widget, w1, { phase: "Pending" }, {
          conditions: [
            { type: "Ready", status: "False", reason: "PullingImage", message: "pulling" },
            { type: "Progressing", status: "True", reason: "NewReplicaSet" }
          ]
        })
        assert.strictEqual(statusWrites(from), 1)
        assert.deepStrictEqual(w2.status?.conditions?.map((c) => c.type), ["Ready", "Progressing"])
        assert.strictEqual(w2.status?.conditions?.[0]?.lastTransitionTime, "2024-05-01T10:00:00Z")
        assert.strictEqual(w2.status?.conditions?.[0]?.reason, "PullingImage")
        assert.strictEqual(w2.status?.conditions?.[1]?.lastTransitionTime, "2024-05-01T10:01:00Z")
        assert.strictEqual(w2.status?.phase, "Pending")

        yield* at("2024-05-01T10:02:00Z")
        const w3 = yield* Status.setConditions(Widget, w2, [{ type: "Ready", status: "True", reason: "Available" }])
        assert.deepStrictEqual(w3.status?.conditions?.map((c) => [c.type, c.status, c.lastTransitionTime]), [
          ["Ready", "True", "2024-05-01T10:02:00Z"],
          ["Progressing", "True", "2024-05-01T10:01:00Z"]
        ])

        // the same conditions later: nothing to write (the transition times would not move)
        yield* at("2024-05-01T11:00:00Z")
        from = env.log.lines.length
        const w4 = yield* Status.setConditions(Widget, w3, [
          { type: "Ready", status: "True", reason: "Available" },
          { type: "Progressing", status: "True", reason: "NewReplicaSet" }
        ])
        assert.strictEqual(w4, w3)
        assert.strictEqual(allWrites(from), 0)
        assert.strictEqual(w4.status?.phase, "Pending", "fields other than conditions are kept")
      })
  )

  it.effect("observedGeneration is not written when the status type lacks it", () =>
    Effect.gen(function*() {
      const { ns } = yield* setup
      const app = yield* KubeClient.create(WebApp, {
        apiVersion: WebApp.apiVersion,
        kind: WebApp.kind,
        metadata: { name: "shop", namespace: ns },
        spec: { image: "shop:1", ports: [] }
      })
      const patched = yield* Status.patch(WebApp, app, { readyReplicas: 3 })
      assert.deepStrictEqual(patched.status, { readyReplicas: 3 })
      // Schema-typed status: a field the Schema lacks is never sent, even when asked for
      const from = env.log.lines.length
      const asked = yield* Status.patch(WebApp, patched, {}, { observedGeneration: true })
      assert.strictEqual(asked, patched)
      assert.strictEqual(allWrites(from), 0)
    }))

  it.effect("built-in kinds: observedGeneration on request, then kept up to date once present", () =>
    Effect.gen(function*() {
      const { ns } = yield* setup
      const deployment = yield* KubeClient.create(Resource.Deployment, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: ns },
        spec: {
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx:1" }] } }
        }
      })
      const plain = yield* Status.patch(Resource.Deployment, deployment, { replicas: 1 })
      assert.isUndefined(plain.status?.observedGeneration)
      const asked = yield* Status.patch(Resource.Deployment, plain, {}, { observedGeneration: true })
      assert.strictEqual(asked.status?.observedGeneration, asked.metadata?.generation)
      const respec = yield* KubeClient.patch(Resource.Deployment, "web", { spec: { replicas: 3 } }, {
        type: "merge",
        namespace: ns
      })
      const next = yield* Status.patch(Resource.Deployment, respec, { replicas: 3 })
      assert.strictEqual(next.status?.observedGeneration, respec.metadata?.generation)
      assert.notStrictEqual(respec.metadata?.generation, asked.metadata?.generation)
    }))
})
