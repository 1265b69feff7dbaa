/**
 * `Cache.layer({ namespace })` (controller-runtime's `DefaultNamespaces`): informers of namespaced kinds watch that
 * namespace only, reads without a namespace read it, cluster-scoped kinds are watched as before.
 */
import { assert, describe, it } from "@effect/vitest"
import { TestKube } from "@reconcile/testkit"
import { Effect } from "effect"
import * as Cache from "../src/Cache.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"

const cm = (name: string, namespace: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data: { v: "1" }
})

describe("Cache restricted to a namespace", () => {
  it.effect("namespaced kinds: only that namespace is watched and read; cluster-scoped kinds: all", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      for (const ns of ["a", "b"]) {
        yield* client.create(Resource.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } })
        yield* client.create(Resource.ConfigMap, cm(`in-${ns}`, ns))
      }
      const cache = yield* Cache.Cache
      const informer = yield* cache.informer(Resource.ConfigMap)
      yield* informer.synced
      assert.deepStrictEqual(informer.store.list().map((c) => c.metadata?.name), ["in-a"])
      assert.deepStrictEqual((yield* cache.list(Resource.ConfigMap)).map((c) => c.metadata?.name), ["in-a"])
      assert.strictEqual((yield* cache.get(Resource.ConfigMap, "in-a")).metadata?.namespace, "a")
      // asking for the same informer with a namespace of its own still gets the cache's namespace
      assert.strictEqual(yield* cache.informer(Resource.ConfigMap, { namespace: "b" }), informer)

      const namespaces = yield* cache.informer(Resource.Namespace)
      yield* namespaces.synced
      const names = namespaces.store.list().map((n) => n.metadata?.name)
      assert.isTrue(names.includes("a") && names.includes("b"))
    }).pipe(Effect.provide(Cache.layer({ namespace: "a" })), Effect.provide(TestKube.layerWithCluster())))
})
