/**
 * The WebApp operator in-process (TestKube over TestCluster) with TestClock:
 * reconciles run in milliseconds and time is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import { LeaderElection, Manager } from "@reconcile/core"
import type * as Reconcile from "@reconcile/core/Reconcile"
import { Cache, KubeClient, Resource, type Undecodable } from "@reconcile/kube"
import { Faults, Simulators, TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, type Exit, Layer, type Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../src/controller.js"
import { registryName } from "../src/reconcile.js"
import { WebApp, WebAppAnySpec } from "../src/WebApp.js"
import { laxCrdPatch } from "./support/crd.js"

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up
/** Moves virtual time once every fiber has run (what effect 3's `TestClock.adjust` did first), then settles. */
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))

/**
 * A fresh cluster with the CRD installed, the Deployment simulator (1 s), its `Faults` and the operator; counts
 * cleanups, and records every reconcile's outcome (`Controller.describeExit`) per app in `outcomes`.
 */
const operator = (
  cleanups: Map<string, number>,
  options: {
    readonly outcomes?: Map<string, Array<string>> | undefined
    readonly maxConcurrentReconciles?: number | undefined
  } = {}
) =>
  Controller.layer({
    onCleanup: (app) =>
      Effect.sync(() => void cleanups.set(app.metadata.name!, (cleanups.get(app.metadata.name!) ?? 0) + 1)),
    onOutcome: (app: WebApp | Undecodable.Undecodable, exit: Exit.Exit<void, Reconcile.Outcome>) =>
      Effect.sync(() => {
        const list = options.outcomes?.get(app.metadata.name!) ?? []
        list.push(Controller.describeExit(exit))
        options.outcomes?.set(app.metadata.name!, list)
      }),
    maxConcurrentReconciles: options.maxConcurrentReconciles
  }).pipe(
    Layer.provide(Manager.layer()),
    Layer.provide(LeaderElection.layerAlwaysLeader),
    Layer.provide(Cache.layer()),
    Layer.provideMerge(Simulators.layerControllerManager({ podReadyDelay: "1 second" })),
    Layer.provideMerge(Layer.effectDiscard(
      KubeClient.patch(Resource.CustomResourceDefinition, "webapps.apps.reconcile.dev", Resource.crdManifest(WebApp), {
        type: "apply",
        fieldManager: "test"
      }).pipe(Effect.orDie)
    )),
    Layer.provideMerge(Faults.layer),
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

/** The reasons of the events.k8s.io events about an app (not about its Deployment of the same name). */
const eventReasons = (name: string) =>
  Effect.map(
    KubeClient.list(Resource.EventsV1Event, { namespace: "default" }),
    (list) =>
      list.items.filter((e) => e.regarding?.name === name && e.regarding?.kind === "WebApp").map((e) => e.reason ?? "")
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

  it.effect("an app stored without spec.replicas (no defaulting webhook registered) runs one replica", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(operator(new Map()))
      yield* Effect.gen(function*() {
        yield* KubeClient.create(WebApp, {
          apiVersion: WebApp.apiVersion,
          kind: WebApp.kind,
          metadata: { name: "bare", namespace: "default" },
          spec: { image: "nginx:1", port: 80 }
        })
        yield* advance(1_000)
        const deployment = yield* KubeClient.get(Resource.Deployment, "bare", { namespace: "default" })
        assert.strictEqual(deployment.spec?.replicas, 1)
        const bare = yield* KubeClient.get(WebApp, "bare", { namespace: "default" })
        assert.isUndefined(bare.spec.replicas, "the operator never writes the spec it reads")
        assert.strictEqual(readyCondition(bare)?.status, "True")
        assert.strictEqual(readyCondition(bare)?.message, "1/1 ready")
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("a child the API server rejects is Terminal: a ChildRejected condition, no retry storm, a spec fix clears it", () =>
    Effect.gen(function*() {
      const outcomes = new Map<string, Array<string>>()
      const ctx = yield* Layer.build(operator(new Map(), { outcomes }))
      yield* Effect.gen(function*() {
        // The image tag becomes the `app.kubernetes.io/version` label: 70 characters, more than a label may have.
        const longTag = `build-${"0123456789".repeat(7)}`
        yield* KubeClient.create(WebApp, app("tagged", { image: `shop:${longTag}`, replicas: 1, port: 80 }))
        yield* settle
        const rejected = yield* KubeClient.get(WebApp, "tagged", { namespace: "default" })
        const ready = readyCondition(rejected)
        assert.strictEqual(ready?.status, "False")
        assert.strictEqual(ready?.reason, "ChildRejected")
        assert.include(ready?.message ?? "", `Deployment.apps "tagged" is invalid`, "the API server's message")
        assert.include(ready?.message ?? "", `metadata.labels: Invalid value: "${longTag}"`)
        assert.strictEqual(ready?.observedGeneration, rejected.metadata.generation)
        assert.isTrue((yield* get(Resource.Deployment, "tagged"))._tag === "None")
        assert.deepStrictEqual(yield* eventReasons("tagged"), ["ChildRejected"])

        // No retry storm: over ten minutes, the attempts are the ones the app's own changes caused (the finalizer
        // and the condition each write the app once); a Retryable would have backed off and tried again ~17 times.
        const attempts = (outcomes.get("tagged") ?? []).length
        yield* advance(600_000)
        const after = outcomes.get("tagged") ?? []
        assert.strictEqual(after.length, attempts, `no attempt after the condition: ${after.join(" | ")}`)
        assert.isAtMost(after.length, 3, after.join(" | "))
        assert.isTrue(after.at(-1)!.startsWith("terminal: Deployment.apps \"tagged\" is invalid"), after.join(" | "))
        assert.isFalse(after.some((o) => o.startsWith("retryable")), after.join(" | "))
        assert.deepStrictEqual(yield* eventReasons("tagged"), ["ChildRejected"], "one event, not one per attempt")

        // The fix is a spec change: a short tag. The app is applied and becomes Ready; the condition is gone.
        yield* KubeClient.patch(WebApp, "tagged", { spec: { image: "shop:1.2" } }, {
          type: "merge",
          namespace: "default"
        })
        yield* advance(1_000)
        const fixed = yield* KubeClient.get(WebApp, "tagged", { namespace: "default" })
        assert.strictEqual(readyCondition(fixed)?.status, "True")
        assert.strictEqual(readyCondition(fixed)?.reason, "DeploymentAvailable")
        assert.strictEqual(fixed.status?.observedGeneration, fixed.metadata.generation)
        const deployment = yield* KubeClient.get(Resource.Deployment, "tagged", { namespace: "default" })
        assert.strictEqual(deployment.metadata?.labels?.["app.kubernetes.io/version"], "1.2")
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("a 253-character name (an invalid label) is ChildRejected, not retried, and still deletes cleanly", () =>
    Effect.gen(function*() {
      const cleanups = new Map<string, number>()
      const outcomes = new Map<string, Array<string>>()
      const ctx = yield* Layer.build(operator(cleanups, { outcomes }))
      yield* Effect.gen(function*() {
        const name = "a".repeat(253)
        yield* KubeClient.create(WebApp, app(name, { image: "nginx:1", replicas: 1, port: 80 }))
        yield* advance(600_000)
        const rejected = yield* KubeClient.get(WebApp, name, { namespace: "default" })
        assert.strictEqual(readyCondition(rejected)?.reason, "ChildRejected")
        assert.include(readyCondition(rejected)?.message ?? "", "metadata.labels")
        const attempts = outcomes.get(name) ?? []
        assert.isAtMost(attempts.length, 3, attempts.join(" | "))
        assert.isTrue(attempts.every((o) => o.startsWith("terminal:")), attempts.join(" | "))

        // The name cannot be fixed; deleting the app runs the cleanup and releases the finalizer.
        yield* KubeClient.del(WebApp, name, { namespace: "default" })
        yield* advance(1_000)
        assert.isTrue((yield* get(WebApp, name))._tag === "None")
        assert.strictEqual(cleanups.get(name), 1)
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("a spec that stops decoding: Ready=False InvalidSpec says why, no retry storm, deletion still cleans up", () =>
    Effect.gen(function*() {
      const cleanups = new Map<string, number>()
      const outcomes = new Map<string, Array<string>>()
      const ctx = yield* Layer.build(operator(cleanups, { outcomes }))
      yield* Effect.gen(function*() {
        yield* KubeClient.create(WebApp, app("three", { image: "nginx:1", replicas: 1, port: 80 }))
        yield* advance(1_000)
        assert.strictEqual(
          readyCondition(yield* KubeClient.get(WebApp, "three", { namespace: "default" }))?.status,
          "True"
        )

        // Someone edits the spec into a shape the Schema rejects. The API server validates against the CRD's
        // schema (generated from the Schema, so it would refuse): here the CRD is laxer, as an older release's may be.
        yield* KubeClient.patch(Resource.CustomResourceDefinition, "webapps.apps.reconcile.dev", laxCrdPatch, {
          type: "merge"
        })
        yield* KubeClient.patch(WebAppAnySpec, "three", { spec: { replicas: "three" } }, {
          type: "merge",
          namespace: "default"
        })
        yield* settle
        const broken = yield* KubeClient.get(WebAppAnySpec, "three", { namespace: "default" })
        const ready = broken.status?.conditions?.find((c) => c.type === "Ready")
        assert.strictEqual(ready?.status, "False", "no stale Ready=True")
        assert.strictEqual(ready?.reason, "InvalidSpec")
        assert.include(ready?.message ?? "", "spec does not decode")
        assert.include(ready?.message ?? "", "replicas")
        assert.strictEqual(ready?.observedGeneration, broken.metadata.generation)
        assert.deepStrictEqual(yield* eventReasons("three"), ["Ready", "InvalidSpec"])

        // The condition's write is a change of the app: it runs once more (and writes nothing), then never again.
        const before = (outcomes.get("three") ?? []).length
        yield* advance(1_000)
        const attempts = (outcomes.get("three") ?? []).length
        assert.isAtMost(attempts - before, 1)
        yield* advance(600_000)
        const after = outcomes.get("three") ?? []
        assert.strictEqual(after.length, attempts, `no attempt after the condition: ${after.join(" | ")}`)
        assert.isTrue(after.at(-1)!.startsWith("terminal: spec does not decode"), after.join(" | "))
        assert.deepStrictEqual(yield* eventReasons("three"), ["Ready", "InvalidSpec"], "one event, not one per attempt")

        // Deleting it runs the cleanup (from the metadata) and releases the finalizer: it is not stuck Terminating.
        yield* KubeClient.del(WebAppAnySpec, "three", { namespace: "default" }) // (its answer would not decode as a WebApp)
        yield* advance(1_000)
        assert.isTrue((yield* get(WebAppAnySpec, "three"))._tag === "None", "the app is gone")
        assert.strictEqual(cleanups.get("three"), 1)
        const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
        assert.isUndefined(registry.data?.three, "its registry entry is removed")
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("workers racing to create the registry ConfigMap: no AlreadyExists, every entry recorded", () =>
    Effect.gen(function*() {
      const outcomes = new Map<string, Array<string>>()
      const ctx = yield* Layer.build(operator(new Map(), { outcomes, maxConcurrentReconciles: 4 }))
      yield* Effect.gen(function*() {
        // Registry writes take 10 ms, so every worker finds the registry missing and creates it at the same time.
        const faults = yield* Faults.Faults
        yield* faults.addLatency({ latency: "10 millis", resources: ["configmaps"], verbs: ["patch", "create"] })
        const names = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"]
        for (const name of names) {
          yield* KubeClient.create(WebApp, app(name, { image: `img:${name}`, replicas: 1, port: 80 }))
        }
        for (let i = 0; i < 30; i++) yield* advance(100)
        const all = [...outcomes.values()].flat()
        assert.isAbove(all.length, names.length)
        assert.deepStrictEqual(all.filter((o) => !(o === "success" || o.startsWith("requeue_after"))), [])
        const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
        assert.deepStrictEqual(registry.data, Object.fromEntries(names.map((n) => [n, `img:${n}`])))
        for (const name of names) {
          const ready = yield* KubeClient.get(WebApp, name, { namespace: "default" })
          assert.strictEqual(readyCondition(ready)?.status, "True", name)
        }
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
