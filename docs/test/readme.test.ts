/**
 * The README's code, run: "Testing a controller in one screen" as it is written (its test registers here), and the
 * promise of "A controller in one screen" that `owns: [Resource.ConfigMap]` repairs a deleted ConfigMap, checked on
 * the README's own `Greeting` and `GreetingController`. Both are extracted from README.md when loaded (the
 * `readme:` modules of docs/vitest.config.ts), never copied.
 */
import { assert, describe, it } from "@effect/vitest"
import { LeaderElection, Manager } from "@reconcile/core"
import { Cache, KubeClient, KubeController, OwnerReference, Resource } from "@reconcile/kube"
import { Envtest, TestKube } from "@reconcile/testkit"
import { Effect, Layer } from "effect"
import { Greeting, GreetingController } from "readme:greeting"

/** The README's controller running under a Manager (no endpoints, always the leader) over the Cache. */
const Running = KubeController.layer(GreetingController).pipe(
  Layer.provide(Manager.layer()),
  Layer.provide(LeaderElection.layerAlwaysLeader),
  Layer.provide(Cache.layer())
)

describe("README: Testing a controller in one screen", async () => {
  // registers the README's own test in this suite
  await import("readme:testing")
})

describe("README: A controller in one screen", () => {
  const greeting = (name: string, message: string) => ({
    apiVersion: Greeting.apiVersion,
    kind: Greeting.kind,
    metadata: { name, namespace: "default" },
    spec: { message }
  })
  const start = Effect.gen(function*() {
    yield* KubeClient.patch(
      Resource.CustomResourceDefinition,
      "greetings.example.com",
      Resource.crdManifest(Greeting),
      { type: "apply", fieldManager: "test" }
    )
    yield* Layer.build(Running)
  })

  it.effect("the ConfigMap is owned by its Greeting, and re-created after each deletion", () =>
    Effect.gen(function*() {
      yield* start
      const owner = yield* KubeClient.create(Greeting, greeting("hello", "hi"))
      yield* TestKube.settle
      for (let round = 0; round < 3; round++) {
        const cm = yield* KubeClient.get(Resource.ConfigMap, "hello", { namespace: "default" })
        assert.strictEqual(cm.data?.message, "hi")
        assert.isTrue(OwnerReference.isControlledBy(cm, owner), "the Greeting is the ConfigMap's controller")
        yield* KubeClient.del(Resource.ConfigMap, "hello", { namespace: "default" })
        yield* TestKube.settle
      }
      const repaired = yield* KubeClient.get(Resource.ConfigMap, "hello", { namespace: "default" })
      assert.strictEqual(repaired.data?.message, "hi")
    }).pipe(Effect.provide(TestKube.layerWithCluster())))

  it.effect("the ConfigMap goes with its Greeting (garbage collection through the owner reference)", () =>
    Effect.gen(function*() {
      yield* start
      yield* KubeClient.create(Greeting, greeting("hello", "hi"))
      yield* KubeClient.create(Greeting, greeting("other", "ho"))
      yield* TestKube.settle
      yield* KubeClient.del(Greeting, "hello", { namespace: "default" })
      yield* TestKube.settle
      const left = yield* KubeClient.list(Resource.ConfigMap, { namespace: "default" })
      const names = left.items.map((c) => c.metadata?.name)
      assert.isFalse(names.includes("hello"), "the deleted Greeting's ConfigMap is collected")
      assert.isTrue(names.includes("other"), "the other Greeting's ConfigMap stays")
    }).pipe(Effect.provide(TestKube.layerWithCluster())))
})

/**
 * The same promise on a real control plane (`npm run test:envtest`): kube-apiserver serves the README's CRD,
 * the controller repairs its deleted ConfigMap, and kube-controller-manager's garbage collector takes the ConfigMap
 * with its Greeting. Real time: bounded polling instead of `TestKube.settle`.
 */
describe.skipIf(process.env.RECONCILE_TEST_CLUSTER !== "real")(
  "README: A controller in one screen, on kube-apiserver",
  () => {
    const greeting = (name: string, message: string) => ({
      apiVersion: Greeting.apiVersion,
      kind: Greeting.kind,
      metadata: { name, namespace: "default" },
      spec: { message }
    })
    // kube-controller-manager's garbage collector learns a new CRD's kind at its discovery resync (every 30 s): a
    // Greeting's dependents are collected up to that long after the CRD is installed
    const eventually = <A, E, R>(check: Effect.Effect<A, E, R>, seconds = 30) =>
      Effect.gen(function*() {
        const deadline = Date.now() + seconds * 1000
        for (;;) {
          const exit = yield* Effect.exit(check)
          if (exit._tag === "Success" || Date.now() > deadline) return yield* exit
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
        }
      })
    const Real = KubeClient.layer.pipe(
      Layer.provideMerge(Envtest.layerKube({ crds: [Resource.crdManifest(Greeting)] })),
      Layer.orDie
    )

    it.live(
      "its ConfigMap is re-created after each deletion, and goes with its Greeting",
      () =>
        Effect.gen(function*() {
          yield* Layer.build(Running)
          const owner = yield* KubeClient.create(Greeting, greeting("hello", "hi"))
          yield* KubeClient.create(Greeting, greeting("other", "ho"))
          for (let round = 0; round < 3; round++) {
            const cm = yield* eventually(Effect.gen(function*() {
              const cm = yield* KubeClient.get(Resource.ConfigMap, "hello", { namespace: "default" })
              assert.strictEqual(cm.data?.message, "hi")
              return cm
            }))
            assert.isTrue(OwnerReference.isControlledBy(cm, owner), "the Greeting is the ConfigMap's controller")
            yield* KubeClient.del(Resource.ConfigMap, "hello", { namespace: "default" })
          }
          yield* eventually(KubeClient.get(Resource.ConfigMap, "hello", { namespace: "default" }))
          yield* KubeClient.del(Greeting, "hello", { namespace: "default" })
          yield* eventually(
            Effect.gen(function*() {
              const names = (yield* KubeClient.list(Resource.ConfigMap, { namespace: "default" })).items.map((c) =>
                c.metadata?.name
              )
              assert.isFalse(names.includes("hello"), "the deleted Greeting's ConfigMap is collected")
              assert.isTrue(names.includes("other"), "the other Greeting's ConfigMap stays")
            }),
            90
          )
        }).pipe(Effect.scoped, Effect.provide(Real)),
      120_000
    )
  }
)
