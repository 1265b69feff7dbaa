import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Simulators, TestCluster } from "../src/index.js"
import { deployment, ref } from "./support/fixtures.js"

describe("Simulators.controllerManager", () => {
  // v4: it.effect is scoped (it.scoped is gone)
  it.effect("status follows spec.replicas after the delay (TestClock)", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(deployment("web", 3) as any)
      yield* TestClock.adjust("4 seconds")
      // the controller manager: ReplicaSet and Pods at once, Ready after the delay
      const pending: any = yield* cluster.get(ref(created))
      assert.strictEqual(pending.status.updatedReplicas, 3)
      assert.isUndefined(pending.status.readyReplicas)
      yield* TestClock.adjust("1 second")
      const ready: any = yield* cluster.get(ref(created))
      assert.strictEqual(ready.status.observedGeneration, 1)
      assert.strictEqual(ready.status.readyReplicas, 3)
      assert.strictEqual(ready.status.availableReplicas, 3)
      yield* cluster.patch(ref(created), { type: "merge", patch: { spec: { replicas: 5 } } })
      yield* TestClock.adjust("5 seconds")
      const scaled: any = yield* cluster.get(ref(created))
      assert.strictEqual(scaled.status.observedGeneration, 2)
      assert.strictEqual(scaled.status.replicas, 5)
    }).pipe(
      Effect.provide(
        Simulators.layerControllerManager({ podReadyDelay: "5 seconds" }).pipe(Layer.provideMerge(TestCluster.layer))
      )
    ))
})
