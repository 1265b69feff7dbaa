import { assert, describe, it } from "@effect/vitest"
import { TestKube } from "@reconcile/testkit"
import { Effect } from "effect"
import * as Cache from "../src/Cache.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"

const cm = (name: string, namespace: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, labels },
  data: { v: "1" }
})

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up

describe("Cache reads", () => {
  it.effect("watched kinds are read from the store (after sync); others live", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      yield* client.create(Resource.ConfigMap, cm("a", "default", { app: "x" }))
      yield* client.create(Resource.ConfigMap, cm("b", "default"))
      yield* client.create(Resource.Secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s", namespace: "default" }
      })
      const cache = yield* Cache.Cache
      yield* cache.informer(Resource.ConfigMap)

      // Cached: the store answers; an object created behind the cache's back shows up once the watch delivers it.
      assert.strictEqual((yield* cache.get(Resource.ConfigMap, "a", { namespace: "default" })).metadata?.name, "a")
      assert.deepStrictEqual(
        (yield* cache.list(Resource.ConfigMap, { labels: { app: "x" } })).map((c) => c.metadata?.name),
        ["a"]
      )
      const missing = yield* Effect.flip(cache.get(Resource.ConfigMap, "nope", { namespace: "default" }))
      assert.strictEqual(missing._tag, "NotFound")
      yield* client.create(Resource.ConfigMap, cm("c", "default"))
      yield* settle
      assert.strictEqual((yield* cache.get(Resource.ConfigMap, "c", { namespace: "default" })).metadata?.name, "c")

      // Not watched: a live read, and no informer is started for it.
      const before = yield* cache.informers
      assert.strictEqual((yield* cache.get(Resource.Secret, "s", { namespace: "default" })).metadata?.name, "s")
      assert.strictEqual((yield* cache.list(Resource.Secret, { namespace: "default" })).length, 1)
      assert.strictEqual(yield* cache.informers, before)
      assert.strictEqual(
        (yield* Effect.flip(cache.get(Resource.Secret, "nope", { namespace: "default" })))._tag,
        "NotFound"
      )
    }).pipe(Effect.provide(Cache.layer()), Effect.provide(TestKube.layerWithCluster())))
})
