/**
 * The WebApp operator in-process (TestKube over TestCluster) with TestClock:
 * reconciles run in milliseconds and time is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cache, KubeClient, Resource } from "@reconcile/kube"
import { Simulators, TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, Layer, type Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../src/controller.js"
import { registryName } from "../src/reconcile.js"
import { WebApp } from "../src/WebApp.js"

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up
/** Moves virtual time once every fiber has run (what effect 3's `TestClock.adjust` did first), then settles. */
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))

/** A fresh cluster with the CRD installed, the Deployment simulator (1 s) and the operator; counts cleanups. */
const operator = (cleanups: Map<string, number>) =>
  Controller.layer({
    onCleanup: (app) =>
      Effect.sync(() => void cleanups.set(app.metadata.name!, (cleanups.get(app.metadata.name!) ?? 0) + 1))
  }).pipe(
    Layer.provide(Cache.layer()),
    Layer.provideMerge(Simulators.layerDeploymentStatus({ delay: "1 second" })),
    Layer.provideMerge(Layer.effectDiscard(
      KubeClient.patch(Resource.CustomResourceDefinition, "webapps.apps.reconcile.dev", Resource.crdManifest(WebApp), {
        type: "apply",
        fieldManager: "test"
      }).pipe(Effect.orDie)
    )),
    Layer.provideMerge(TestKube.layerWithCluster())
  )

const app = (name: string, spec: { image: string; replicas: number; port: number }) => ({
  apiVersion: WebApp.apiVersion,
  kind: WebApp.kind,
  metadata: { name, namespace: "default" },
  spec
})

const get = <A extends { readonly metadata?: unknown }>(resource: Resource.Resource<any>, name: string) =>
  KubeClient.get(resource, name, { namespace: "default" }).pipe(Effect.option) as Effect.Effect<
    Option.Option<A>,
    never,
    KubeClient.KubeClient
  >

/** The reasons of the events.k8s.io events about an app. */
const eventReasons = (name: string) =>
  Effect.map(
    KubeClient.list(Resource.EventsV1Event, { namespace: "default" }),
    (list) => list.items.filter((e) => e.regarding?.name === name).map((e) => e.reason ?? "")
  )

const readyCondition = (a: WebApp) => a.status?.conditions?.find((c) => c.type === "Ready")

describe("WebApp operator (in-process, TestClock)", () => {
  it.effect("creates an owned Deployment and Service, then reports Ready once the Deployment is", () =>
    Effect.gen(function*() {
      const cleanups = new Map<string, number>()
      yield* Layer.build(operator(cleanups)).pipe(Effect.flatMap((ctx) =>
        Effect.gen(function*() {
          yield* KubeClient.create(WebApp, app("web", { image: "nginx:1", replicas: 2, port: 8080 }))
          yield* settle
          const deployment = yield* KubeClient.get(Resource.Deployment, "web", { namespace: "default" })
          assert.strictEqual(deployment.spec?.replicas, 2)
          assert.strictEqual(deployment.spec?.template?.spec?.containers?.[0]?.image, "nginx:1")
          assert.strictEqual(deployment.metadata?.ownerReferences?.[0]?.kind, "WebApp")
          const service = yield* KubeClient.get(Resource.Service, "web", { namespace: "default" })
          assert.strictEqual(service.spec?.ports?.[0]?.port, 8080)
          const waiting = yield* KubeClient.get(WebApp, "web", { namespace: "default" })
          assert.strictEqual(readyCondition(waiting)?.status, "False", "not ready before the Deployment is")
          assert.strictEqual(readyCondition(waiting)?.reason, "RollingOut")
          assert.include(waiting.metadata.finalizers ?? [], Controller.finalizerName)

          yield* advance(1_000) // the simulator reports the Deployment ready
          const ready = yield* KubeClient.get(WebApp, "web", { namespace: "default" })
          assert.strictEqual(readyCondition(ready)?.status, "True")
          assert.strictEqual(ready.status?.observedGeneration, ready.metadata.generation)
          assert.strictEqual(ready.status?.readyReplicas, 2)
          const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
          assert.strictEqual(registry.data?.web, "nginx:1")
          assert.deepStrictEqual(yield* eventReasons("web"), ["Ready"], "one event for the transition to Ready")
          yield* advance(10_000)
          assert.deepStrictEqual(yield* eventReasons("web"), ["Ready"], "no repeat while it stays Ready")
        }).pipe(Effect.provide(ctx))
      ))
    }))

  it.effect("an invalid spec is Terminal: a Ready=False condition says why and nothing is created", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(operator(new Map()))
      yield* Effect.gen(function*() {
        yield* KubeClient.create(WebApp, app("bad", { image: "nginx", replicas: 99, port: 80 }))
        yield* advance(60_000)
        const bad = yield* KubeClient.get(WebApp, "bad", { namespace: "default" })
        assert.strictEqual(readyCondition(bad)?.reason, "InvalidSpec")
        assert.include(readyCondition(bad)?.message ?? "", "spec.replicas must be 0–20")
        const deployment = yield* get(Resource.Deployment, "bad")
        assert.isTrue(deployment._tag === "None")
        assert.deepStrictEqual(yield* eventReasons("bad"), ["InvalidSpec"])
        // Fixing the spec is the next change: it reconciles again.
        yield* KubeClient.patch(WebApp, "bad", { spec: { replicas: 1 } }, { type: "merge", namespace: "default" })
        yield* advance(1_000)
        const fixed = yield* KubeClient.get(WebApp, "bad", { namespace: "default" })
        assert.strictEqual(readyCondition(fixed)?.status, "True")
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("deleting runs the cleanup once, removes the registry entry, then the object goes", () =>
    Effect.gen(function*() {
      const cleanups = new Map<string, number>()
      const ctx = yield* Layer.build(operator(cleanups))
      yield* Effect.gen(function*() {
        yield* KubeClient.create(WebApp, app("gone", { image: "nginx", replicas: 1, port: 80 }))
        yield* advance(1_000)
        yield* KubeClient.del(WebApp, "gone", { namespace: "default" })
        yield* advance(1_000)
        assert.isTrue((yield* get(WebApp, "gone"))._tag === "None")
        const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
        assert.isUndefined(registry.data?.gone)
        assert.strictEqual(cleanups.get("gone"), 1)
      }).pipe(Effect.provide(ctx))
    }))

  // effect 4 has no FastCheck: the same generators as Schemas (effect's Arbitrary derives them).
  const Spec = Schema.Struct({
    image: Schema.Literals(["nginx:1", "nginx:2", "httpd:2"]),
    replicas: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 })),
    port: Schema.Literals([80, 8080, 9000])
  })
  const Step = Schema.Union([
    Schema.Struct({ op: Schema.Literal("edit"), spec: Spec }),
    Schema.Struct({ op: Schema.Literal("delete") }),
    Schema.Struct({
      op: Schema.Literal("wait"),
      millis: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3_000 }))
    })
  ])

  it.effect.prop(
    "random edits and deletions: owned objects converge to the last spec; cleanup runs exactly once per deletion",
    [Arbitrary.array(Arbitrary.schema(Step), { minLength: 1, maxLength: 12 })],
    ([steps]) =>
      Effect.gen(function*() {
        const cleanups = new Map<string, number>()
        const ctx = yield* Layer.build(operator(cleanups))
        yield* Effect.gen(function*() {
          let last: { image: string; replicas: number; port: number } | undefined
          let deletions = 0
          for (const s of steps) {
            if (s.op === "edit") {
              yield* KubeClient.patch(WebApp, "prop", app("prop", s.spec), {
                type: "apply",
                namespace: "default",
                fieldManager: "user",
                force: true
              })
              last = s.spec
            } else if (s.op === "delete") {
              if (last !== undefined) {
                yield* KubeClient.del(WebApp, "prop", { namespace: "default" })
                // A deletion completes once cleanup has run; wait for it before the next create.
                for (let i = 0; i < 50 && (yield* get(WebApp, "prop"))._tag === "Some"; i++) yield* advance(100)
                deletions++
                last = undefined
              }
            } else {
              yield* advance(s.millis)
            }
            yield* settle
          }
          yield* advance(10_000)
          const registry = yield* get<Resource.ConfigMap>(Resource.ConfigMap, registryName)
          const entry = registry._tag === "Some" ? registry.value.data?.prop : undefined
          if (last === undefined) {
            assert.isUndefined(entry, "no registry entry after the last deletion")
          } else {
            const d = yield* KubeClient.get(Resource.Deployment, "prop", { namespace: "default" })
            assert.strictEqual(d.spec?.replicas, last.replicas)
            assert.strictEqual(d.spec?.template?.spec?.containers?.[0]?.image, last.image)
            assert.strictEqual(d.spec?.template?.spec?.containers?.[0]?.ports?.[0]?.containerPort, last.port)
            const svc = yield* KubeClient.get(Resource.Service, "prop", { namespace: "default" })
            assert.strictEqual(svc.spec?.ports?.length, 1)
            assert.strictEqual(svc.spec?.ports?.[0]?.port, last.port)
            assert.strictEqual(entry, last.image)
            const current = yield* KubeClient.get(WebApp, "prop", { namespace: "default" })
            assert.strictEqual(readyCondition(current)?.status, "True")
            assert.strictEqual(current.status?.observedGeneration, current.metadata.generation)
          }
          assert.strictEqual(cleanups.get("prop") ?? 0, deletions, "cleanup ran exactly once per deletion")
        }).pipe(Effect.provide(ctx))
      }),
    { timeout: 120_000, arbitrary: { runs: 25 } }
  )
})
