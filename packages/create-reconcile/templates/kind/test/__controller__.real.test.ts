/**
 * The __Kind__ controller on a real control plane: etcd, kube-apiserver and
 * kube-controller-manager (the testkit's `Envtest`, as controller-runtime's
 * envtest), so the finalizer, the status subresource and the garbage
 * collector are Kubernetes' own. Skipped unless `RECONCILE_TEST_CLUSTER=real`
 * (`npm run test:envtest`, which first builds or finds the binaries:
 * `reconcile-envtest setup` builds them with Go, once; `KUBEBUILDER_ASSETS`
 * is taken when set). Real time: each check is polled until it holds.
 */
import { assert, describe, layer } from "@effect/vitest"
import { LeaderElection, Manager } from "@reconcile/core"
import { Cache, KubeClient, Resource } from "@reconcile/kube"
import { Envtest } from "@reconcile/testkit"
import { Effect, Layer, Option } from "effect"
import { __Kind__ } from "../src/__Kind__.js"
import * as Controller from "../src/__controller__.js"

/** One control plane for this file, the CRD installed, the controller running on it. */
const Real = Controller.layer.pipe(
  Layer.provide(Manager.layer()),
  Layer.provide(LeaderElection.layerAlwaysLeader),
  Layer.provide(Cache.layer()),
  Layer.provideMerge(KubeClient.layer),
  Layer.provideMerge(Envtest.layerKube({ crds: [Resource.crdManifest(__Kind__)] })),
  Layer.orDie
)

/** Runs `check` every 100 ms (wall clock) until it succeeds; after `seconds` its last failure is the test's. */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>, seconds = 30) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    for (;;) {
      const exit = yield* Effect.exit(check)
      if (exit._tag === "Success" || Date.now() > deadline) return yield* exit
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
    }
  })

const make = (name: string, message: string) => ({
  apiVersion: __Kind__.apiVersion,
  kind: __Kind__.kind,
  metadata: { name, namespace: "default" },
  spec: { message }
})

const get = (name: string) => KubeClient.get(__Kind__, name, { namespace: "default" })
const configMap = (name: string) =>
  KubeClient.get(Resource.ConfigMap, `${name}-__lower__`, { namespace: "default" }).pipe(Effect.option)
const ready = (object: __Kind__) => object.status?.conditions?.find((c) => c.type === "Ready")
const eventReasons = (name: string) =>
  Effect.map(
    KubeClient.list(Resource.EventsV1Event, { namespace: "default" }),
    (list) =>
      list.items.filter((e) => e.regarding?.kind === __Kind__.kind && e.regarding?.name === name).map((e) => e.reason)
  )

describe.skipIf(process.env.RECONCILE_TEST_CLUSTER !== "real")("__Kind__ controller on a real control plane", () => {
  layer(Real, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("applies an owned ConfigMap, reports Ready, and repairs the ConfigMap when it is deleted", () =>
      Effect.gen(function*() {
        yield* KubeClient.create(__Kind__, make("hello", "hi"))
        const object = yield* eventually(Effect.gen(function*() {
          const object = yield* get("hello")
          assert.strictEqual(ready(object)?.status, "True")
          assert.strictEqual(ready(object)?.observedGeneration, object.metadata.generation)
          return object
        }))
        assert.include(object.metadata.finalizers ?? [], Controller.finalizerName)
        const owned = yield* eventually(Effect.flatMap(configMap("hello"), (cm) => Effect.fromOption(cm)))
        assert.strictEqual(owned.data?.message, "hi")
        assert.strictEqual(owned.metadata?.ownerReferences?.[0]?.uid, object.metadata.uid)
        yield* KubeClient.del(Resource.ConfigMap, "hello-__lower__", { namespace: "default" })
        yield* eventually(Effect.gen(function*() {
          const repaired = yield* configMap("hello")
          assert.isTrue(Option.isSome(repaired) && repaired.value.metadata?.uid !== owned.metadata?.uid)
        }))
      }), 120_000)

    it.effect("deleting runs the cleanup; kube-controller-manager's garbage collector takes the ConfigMap", () =>
      Effect.gen(function*() {
        yield* KubeClient.create(__Kind__, make("bye", "ciao"))
        yield* eventually(Effect.flatMap(configMap("bye"), (cm) => Effect.fromOption(cm)))
        yield* KubeClient.del(__Kind__, "bye", { namespace: "default" })
        yield* eventually(Effect.gen(function*() {
          assert.isTrue(Option.isNone(yield* Effect.option(get("bye"))))
          assert.include(yield* eventReasons("bye"), "CleanedUp")
        }))
        // the collector learns a new CRD's kind at its discovery resync (every 30 s)
        yield* eventually(Effect.map(configMap("bye"), (cm) => assert.isTrue(Option.isNone(cm))), 90)
      }), 120_000)
  })
})
