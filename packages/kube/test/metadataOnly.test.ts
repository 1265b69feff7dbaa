/**
 * Metadata-only resources (controller-runtime's `OnlyMetadata`): through the real KubeClient against TestApiServer
 * (HTTPS). The requests ask for `PartialObjectMetadata`, the cache holds metadata only, and changes of owned
 * objects cached as metadata still enqueue their owner. Real time: every wait polls with a deadline.
 */
import { assert, describe, it as plainIt, layer } from "@effect/vitest"
import type { KubeObject } from "@reconcile/testkit/KubeObject"
import { Effect, Exit, Layer, References, Stream } from "effect"
import * as Cache from "../src/Cache.js"
import { informerKey } from "../src/internal/cache.js"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as MetadataOnly from "../src/MetadataOnly.js"
import * as Resource from "../src/Resource.js"
import {
  check,
  eventually,
  freshNamespace as freshNamespaceIn,
  kubeLayer,
  makeEnv,
  serverApply
} from "./support/env.js"
import { TestManager } from "./support/manager.js"

// every request the client makes, as given to Kube (to read its Accept header)
const sent: Array<Kube.Request> = []
const Recording = Layer.effect(
  Kube.Kube,
  Effect.map(Kube.Kube, (kube): Kube.Kube.Service => ({
    ...kube,
    request: (request) => Effect.suspend(() => (sent.push(request), kube.request(request))),
    stream: (request) => Stream.suspend(() => (sent.push(request), kube.stream(request)))
  }))
).pipe(Layer.provideMerge(kubeLayer()))

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(
  Layer.provideMerge(Recording),
  Layer.provideMerge(env.layer),
  Layer.merge(Layer.succeed(References.MinimumLogLevel, "Error"))
)

const freshNamespace = freshNamespaceIn("meta")

const apply = (object: KubeObject) => serverApply(object)

const configMap = (namespace: string, name: string, data: Record<string, string>, ownerReferences?: unknown) =>
  apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      ...(ownerReferences !== undefined ? { ownerReferences: ownerReferences as never } : {})
    },
    data
  })

const makeCache = Effect.flatMap(
  KubeClient.KubeClient,
  (client) =>
    Cache.make((resource, selection) => Cache.listWatch(client, resource, selection), {
      informer: { watcher: { initialBackoff: "10 millis", maxBackoff: "50 millis" } }
    })
)

const ConfigMapMeta = MetadataOnly.make(Resource.ConfigMap)

describe("MetadataOnly (no server)", () => {
  plainIt("the module's example compiles: owns takes a metadata-only resource", () => {
    const Controller = KubeController.layer(KubeController.make({
      name: "webapp",
      for: Resource.ConfigMap,
      owns: [MetadataOnly.make(Resource.Deployment)],
      reconcile: (_configMap) => Effect.void
    }))
    assert.isTrue(Layer.isLayer(Controller))
  })

  plainIt("keeps only metadata, under the kind's own apiVersion and kind", () => {
    const full = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "n" }, data: { k: "v" } }
    const partial = { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: { name: "a" } }
    assert.deepStrictEqual(Effect.runSync(ConfigMapMeta.decode(full)), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "n" }
    })
    assert.deepStrictEqual(Effect.runSync(ConfigMapMeta.decode(partial)), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a" }
    })
    const wrongKind = Effect.runSyncExit(ConfigMapMeta.decode({ ...full, kind: "Secret" }))
    assert.isTrue(Exit.isFailure(wrongKind))
    assert.isTrue(Exit.isFailure(Effect.runSyncExit(ConfigMapMeta.decode({ kind: "ConfigMap", metadata: 1 }))))
  })

  plainIt("is a resource of the same kind and path, not writable, idempotent, with an informer of its own", () => {
    assert.strictEqual(ConfigMapMeta.path({ namespace: "n", name: "a" }), "/api/v1/namespaces/n/configmaps/a")
    assert.strictEqual(ConfigMapMeta.of, Resource.ConfigMap)
    assert.isTrue(MetadataOnly.isMetadataOnly(ConfigMapMeta))
    assert.isFalse(MetadataOnly.isMetadataOnly(Resource.ConfigMap))
    assert.strictEqual<unknown>(MetadataOnly.make(ConfigMapMeta), ConfigMapMeta)
    assert.notStrictEqual(informerKey(ConfigMapMeta), informerKey(Resource.ConfigMap))
    const encoded = Effect.runSyncExit(ConfigMapMeta.encode({ apiVersion: "v1", kind: "ConfigMap", metadata: {} }))
    assert.isTrue(Exit.isFailure(encoded))
  })
})

layer(TestLayer, { excludeTestServices: true })("MetadataOnly over HTTP", (it) => {
  it.effect("patch and delete work on a metadata-only resource; create fails with Encode", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* configMap(ns, "a", { k: "v" })
      const client = yield* KubeClient.KubeClient
      const patched = yield* client.patch(ConfigMapMeta, "a", { metadata: { labels: { seen: "yes" } } }, {
        type: "merge",
        namespace: ns
      })
      assert.deepStrictEqual(Object.keys(patched).sort(), ["apiVersion", "kind", "metadata"])
      assert.strictEqual(patched.metadata.labels?.seen, "yes")
      const full = yield* client.get(Resource.ConfigMap, "a", { namespace: ns })
      assert.deepStrictEqual(full.data, { k: "v" }, "the patch left the data alone")
      const created = yield* Effect.flip(client.create(ConfigMapMeta, patched, { namespace: ns }))
      assert.strictEqual(created._tag, "Encode")
      yield* client.delete(ConfigMapMeta, "a", { namespace: ns })
      const gone = yield* Effect.flip(client.get(ConfigMapMeta, "a", { namespace: ns }))
      assert.strictEqual(gone._tag, "NotFound")
    }))

  it.effect("the server answers PartialObjectMetadata to the Accept header the client sends", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* configMap(ns, "raw", { secret: "value" })
      const kube = yield* Kube.Kube
      const one = (yield* kube.request({
        method: "GET",
        path: `/api/v1/namespaces/${ns}/configmaps/raw`,
        accept: MetadataOnly.acceptObject
      })) as Record<string, unknown>
      assert.strictEqual(one.kind, "PartialObjectMetadata")
      assert.isUndefined(one.data)
      const list = (yield* kube.request({
        method: "GET",
        path: `/api/v1/namespaces/${ns}/configmaps`,
        accept: MetadataOnly.acceptList
      })) as { kind: string; items: Array<Record<string, unknown>> }
      assert.strictEqual(list.kind, "PartialObjectMetadataList")
      assert.deepStrictEqual(list.items.map((i) => [i.kind, i.data]), [["PartialObjectMetadata", undefined]])
      const plain = (yield* kube.request({ method: "GET", path: `/api/v1/namespaces/${ns}/configmaps/raw` })) as {
        kind: string
      }
      assert.strictEqual(plain.kind, "ConfigMap")
    }))

  it.effect("a metadata-only informer lists and watches with the PartialObjectMetadata Accept headers", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* configMap(ns, "a", { big: "x".repeat(1000) })
      const cache = yield* makeCache
      const from = sent.length
      const informer = yield* cache.informer(ConfigMapMeta, { namespace: ns })
      yield* informer.synced
      yield* configMap(ns, "b", { big: "y" })
      yield* eventually(check(() => assert.isDefined(informer.store.get("b", ns))))
      const mine = sent.slice(from).filter((r) => r.path === `/api/v1/namespaces/${ns}/configmaps`)
      const lists = mine.filter((r) => r.query?.watch === undefined)
      const watches = mine.filter((r) => r.query?.watch === true)
      assert.isAbove(lists.length, 0)
      assert.isAbove(watches.length, 0)
      for (const r of lists) assert.strictEqual(r.accept, MetadataOnly.acceptList)
      for (const r of watches) assert.strictEqual(r.accept, MetadataOnly.acceptObject)
      assert.include(MetadataOnly.acceptList, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
      assert.include(MetadataOnly.acceptObject, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
      // a full resource still asks for plain JSON
      const before = sent.length
      yield* Effect.flatMap(KubeClient.KubeClient, (client) => client.get(Resource.ConfigMap, "a", { namespace: ns }))
      assert.isUndefined(sent[before]!.accept)
    }))

  it.effect("the cache holds metadata-only objects compact; KubeClient's are plain", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      // a real owner: on kube-controller-manager an invented owner uid is a deleted owner, its dependents collected
      const stored = yield* configMap(ns, "owner", { v: "0" })
      const owner = [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: stored.metadata.uid! }]
      yield* configMap(ns, "a", { v: "1" }, owner)
      yield* configMap(ns, "b", { v: "2" }, owner)
      const cache = yield* makeCache
      yield* cache.informer(ConfigMapMeta, { namespace: ns })
      const a = yield* cache.get(ConfigMapMeta, "a", { namespace: ns })
      const b = yield* cache.get(ConfigMapMeta, "b", { namespace: ns })
      // the server sent managedFields (server-side apply), the cache dropped them
      const fromServer = yield* Effect.flatMap(
        KubeClient.KubeClient,
        (client) => client.get(ConfigMapMeta, "a", { namespace: ns })
      )
      assert.isDefined((fromServer.metadata as { managedFields?: unknown }).managedFields)
      assert.isUndefined((a.metadata as { managedFields?: unknown }).managedFields)
      // the two children of one owner share one frozen owner list in the cache
      assert.strictEqual(a.metadata.ownerReferences, b.metadata.ownerReferences)
      assert.isTrue(Object.isFrozen(a.metadata.ownerReferences))
      assert.isFalse(Object.isFrozen(fromServer.metadata.ownerReferences))
      assert.deepStrictEqual(a.metadata.ownerReferences, fromServer.metadata.ownerReferences)
    }))

  it.effect("the cache holds metadata only, apart from a full informer of the same kind", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* configMap(ns, "a", { big: "x".repeat(1000) })
      const cache = yield* makeCache
      yield* cache.informer(ConfigMapMeta, { namespace: ns })
      const got = yield* cache.get(ConfigMapMeta, "a", { namespace: ns })
      assert.deepStrictEqual(Object.keys(got).sort(), ["apiVersion", "kind", "metadata"])
      assert.strictEqual(got.kind, "ConfigMap")
      assert.strictEqual(got.metadata.name, "a")
      yield* configMap(ns, "b", { v: "1" })
      yield* eventually(Effect.gen(function*() {
        const all = yield* cache.list(ConfigMapMeta, { namespace: ns })
        assert.deepStrictEqual(all.map((o) => o.metadata.name).sort(), ["a", "b"])
        for (const o of all) assert.deepStrictEqual(Object.keys(o).sort(), ["apiVersion", "kind", "metadata"])
      }))
      // a full informer of the kind is another informer, with the data
      yield* cache.informer(Resource.ConfigMap, { namespace: ns })
      assert.strictEqual(yield* cache.informers, 2)
      const full = yield* cache.get(Resource.ConfigMap, "a", { namespace: ns })
      assert.strictEqual(full.data?.big?.length, 1000)
    }))

  it.effect("owns with a metadata-only kind: a change of an owned object enqueues its controller owner", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const owner = yield* apply({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "owner", namespace: ns },
        stringData: { k: "v" }
      } as KubeObject)
      const ref = { apiVersion: "v1", kind: "Secret", name: "owner", uid: owner.metadata.uid!, controller: true }
      yield* configMap(ns, "child", { v: "1" }, [ref])
      yield* configMap(ns, "stray", { v: "1" })
      const cache = yield* makeCache
      const seen: Array<string> = []
      yield* KubeController.make({
        name: `meta-owns-${ns}`,
        for: Resource.Secret,
        selection: { namespace: ns },
        owns: [ConfigMapMeta],
        reconcileRequest: (request) => Effect.sync(() => void seen.push(request.name)),
        options: { maxConcurrentReconciles: 1 }
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* eventually(check(() => assert.include(seen, "owner")))
      const owned = yield* cache.get(ConfigMapMeta, "child", { namespace: ns })
      assert.isUndefined((owned as { data?: unknown }).data)
      const mark = seen.length
      yield* configMap(ns, "child", { v: "2" }, [ref])
      yield* eventually(check(() => assert.deepStrictEqual(seen.slice(mark), ["owner"])))
      yield* configMap(ns, "stray", { v: "2" })
      yield* configMap(ns, "child", { v: "3" }, [ref])
      yield* eventually(check(() => assert.isAtLeast(seen.length, mark + 2)))
      assert.deepStrictEqual([...new Set(seen.slice(mark))], ["owner"])
    }))
})
