/**
 * What only the real control plane can show (`npm run test:envtest`; skipped in `npm test`): etcd compaction and
 * the 410s it causes, kube-apiserver and etcd restarts under an informer, limit/continue pages served by etcd,
 * and kube-controller-manager's garbage collector and namespace controller (asynchronous, unlike the in-memory
 * cluster's). The in-memory cluster's versions of these are the fault-injection tests of WatcherHttp.test.ts and
 * KubeClient.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Envtest } from "@reconcile/testkit"
import { Effect, Exit, Layer, Option, Stream } from "effect"
import * as Cache from "../src/Cache.js"
import * as Informer from "../src/Informer.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import { check, eventually, fastRetry, onRealCluster } from "./support/env.js"

const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(Envtest.layerKube(undefined, fastRetry)), Layer.orDie)

let counter = 0
const freshNamespace = Effect.gen(function*() {
  const name = `real-${++counter}`
  yield* KubeClient.create(Resource.Namespace, { metadata: { name } })
  return name
})

// every namespace of a real cluster also holds kube-root-ca.crt (kube-controller-manager's publisher): the tests
// look at their own ConfigMaps by this label
const mine = "test=real-cluster"
const cm = (name: string, a = "1"): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels: { test: "real-cluster" } },
  data: { a }
})

const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    const error = Exit.findErrorOption(exit)
    assert(Option.isSome(error), `expected a failure, got ${String(exit)}`)
    return error.value
  })

describe.skipIf(!onRealCluster)("on the real control plane", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })(
    "kube-apiserver, etcd, kube-controller-manager",
    (it) => {
      it.effect("etcd compaction does not cut the watch cache: a watch from a compacted version still replays", () =>
        Effect.gen(function*() {
          const ns = yield* freshNamespace
          const first = yield* KubeClient.create(Resource.ConfigMap, cm("old"), { namespace: ns })
          yield* KubeClient.patch(Resource.ConfigMap, "old", { data: { a: "2" } }, { type: "merge", namespace: ns })
          const plane = yield* Envtest.Envtest
          const revision = yield* plane.compactEtcd
          assert.isAbove(revision, Number(first.metadata!.resourceVersion!))
          // kube-apiserver answers watches (and, in 1.36, Exact lists) of recent versions from its watch cache, which
          // etcd's compaction does not touch: a 410 there comes from the cache's own window (docs/testkit.md lists
          // this among what the in-memory cluster does differently, where Faults.compactNow is a 410 at once)
          const events = yield* KubeClient.watch(Resource.ConfigMap, {
            namespace: ns,
            labelSelector: mine,
            resourceVersion: first.metadata!.resourceVersion!
          }).pipe(Stream.take(1), Stream.runCollect)
          const modified = events[0]!
          assert(modified._tag === "Modified", JSON.stringify(events))
          assert.strictEqual(modified.object.data?.a, "2")
        }))

      it.effect("limit/continue pages come from etcd; listAll follows continue to every object", () =>
        Effect.gen(function*() {
          const ns = yield* freshNamespace
          yield* Effect.forEach(
            Array.from({ length: 7 }, (_, i) => `p-${i}`),
            (name) => KubeClient.create(Resource.ConfigMap, cm(name), { namespace: ns }),
            { discard: true }
          )
          const page = yield* KubeClient.list(Resource.ConfigMap, { namespace: ns, limit: 3, labelSelector: mine })
          assert.strictEqual(page.items.length, 3)
          assert.isString(page.continue)
          // no remainingItemCount with a label selector (etcd cannot count what matches)
          assert.isUndefined(page.remainingItemCount)
          const all = yield* KubeClient.listAll(Resource.ConfigMap, { namespace: ns, limit: 3, labelSelector: mine })
          assert.deepStrictEqual(
            all.items.map((c) => c.metadata!.name).sort(),
            [0, 1, 2, 3, 4, 5, 6].map((i) => `p-${i}`)
          )
        }))

      it.effect(
        "an informer keeps the server's state across a compaction, a kube-apiserver restart and an etcd crash",
        () =>
          Effect.gen(function*() {
            const ns = yield* freshNamespace
            const client = yield* KubeClient.KubeClient
            const plane = yield* Envtest.Envtest
            yield* KubeClient.create(Resource.ConfigMap, cm("kept"), { namespace: ns })
            yield* KubeClient.create(Resource.ConfigMap, cm("removed"), { namespace: ns })
            const informer = yield* Informer.make(
              Cache.listWatch(client, Resource.ConfigMap, { namespace: ns, labelSelector: mine }),
              {
                watcher: { initialBackoff: "100 millis", maxBackoff: "1 second", timeoutSeconds: 5 }
              }
            )
            yield* informer.synced
            const names = () => informer.store.list().map((c) => `${c.metadata!.name}=${c.data?.a}`).sort()
            assert.deepStrictEqual(names(), ["kept=1", "removed=1"])

            yield* plane.restartApiServer()
            yield* KubeClient.patch(Resource.ConfigMap, "kept", { data: { a: "2" } }, { type: "merge", namespace: ns })
            yield* eventually(check(() => assert.deepStrictEqual(names(), ["kept=2", "removed=1"])), 30_000)

            yield* plane.restartEtcd("1 second")
            yield* eventually(KubeClient.del(Resource.ConfigMap, "removed", { namespace: ns }), 30_000)
            yield* plane.compactEtcd
            yield* KubeClient.create(Resource.ConfigMap, cm("added"), { namespace: ns })
            yield* eventually(check(() => assert.deepStrictEqual(names(), ["added=1", "kept=2"])), 30_000)
          }),
        120_000
      )

      it.effect(
        "the garbage collector: Background deletes dependents, Foreground waits for them, Orphan keeps them",
        () =>
          Effect.gen(function*() {
            const ns = yield* freshNamespace
            const owner = (name: string) => KubeClient.create(Resource.ConfigMap, cm(name), { namespace: ns })
            const dependent = (name: string, of: Resource.ConfigMap, finalizers?: ReadonlyArray<string>) =>
              KubeClient.create(Resource.ConfigMap, {
                ...cm(name),
                metadata: {
                  name,
                  ...(finalizers !== undefined ? { finalizers: [...finalizers] } : {}),
                  ownerReferences: [{
                    apiVersion: "v1",
                    kind: "ConfigMap",
                    name: of.metadata!.name!,
                    uid: of.metadata!.uid!,
                    blockOwnerDeletion: true
                  }]
                }
              }, { namespace: ns })
            const exists = (name: string) =>
              Effect.map(Effect.option(KubeClient.get(Resource.ConfigMap, name, { namespace: ns })), Option.isSome)

            const bg = yield* owner("bg")
            yield* dependent("bg-child", bg)
            yield* KubeClient.del(Resource.ConfigMap, "bg", { namespace: ns, propagationPolicy: "Background" })
            yield* eventually(Effect.flatMap(exists("bg-child"), (e) => check(() => assert.isFalse(e))), 30_000)

            const fg = yield* owner("fg")
            yield* dependent("fg-child", fg, ["example.com/hold"])
            const pending = yield* KubeClient.del(Resource.ConfigMap, "fg", {
              namespace: ns,
              propagationPolicy: "Foreground"
            })
            assert(pending._tag === "Pending")
            assert.include(pending.object.metadata?.finalizers ?? [], "foregroundDeletion")
            // the collector deletes the child (held by its finalizer); the owner waits for it
            yield* eventually(
              Effect.flatMap(
                KubeClient.get(Resource.ConfigMap, "fg-child", { namespace: ns }),
                (c) => check(() => assert.isString(c.metadata?.deletionTimestamp))
              ),
              30_000
            )
            assert.isTrue(yield* exists("fg"))
            yield* KubeClient.patch(Resource.ConfigMap, "fg-child", { metadata: { finalizers: null } }, {
              type: "merge",
              namespace: ns
            })
            yield* eventually(Effect.flatMap(exists("fg"), (e) => check(() => assert.isFalse(e))), 30_000)

            const orphan = yield* owner("orphan")
            yield* dependent("orphan-child", orphan)
            yield* KubeClient.del(Resource.ConfigMap, "orphan", { namespace: ns, propagationPolicy: "Orphan" })
            yield* eventually(
              Effect.flatMap(
                KubeClient.get(Resource.ConfigMap, "orphan-child", { namespace: ns }),
                (c) => check(() => assert.isUndefined(c.metadata?.ownerReferences))
              ),
              30_000
            )
          }),
        120_000
      )

      it.effect(
        "the namespace controller: a deleted namespace is Terminating until its objects are gone, then gone",
        () =>
          Effect.gen(function*() {
            const ns = yield* freshNamespace
            yield* KubeClient.create(Resource.ConfigMap, {
              ...cm("held"),
              metadata: { name: "held", finalizers: ["example.com/hold"] }
            }, { namespace: ns })
            yield* KubeClient.del(Resource.Namespace, ns)
            yield* eventually(
              Effect.flatMap(KubeClient.get(Resource.Namespace, ns), (n) =>
                check(() => {
                  assert.strictEqual(n.status?.phase, "Terminating")
                  // the controller reports what it waits for
                  assert.isTrue(
                    (n.status?.conditions ?? []).some((c) =>
                      c.type === "NamespaceFinalizersRemaining" && c.status === "True"
                    ),
                    JSON.stringify(n.status)
                  )
                })),
              30_000
            )
            const refused = yield* failure(KubeClient.create(Resource.ConfigMap, cm("late"), { namespace: ns }))
            assert.strictEqual(refused._tag, "Forbidden")
            yield* KubeClient.patch(Resource.ConfigMap, "held", { metadata: { finalizers: null } }, {
              type: "merge",
              namespace: ns
            })
            yield* eventually(
              Effect.flatMap(
                failure(KubeClient.get(Resource.Namespace, ns)),
                (e) => check(() => assert.strictEqual(e._tag, "NotFound"))
              ),
              60_000
            )
          }),
        120_000
      )
    }
  )
})
