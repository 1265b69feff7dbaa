/**
 * KubeController over the shared Cache, through the real KubeClient against TestApiServer (HTTPS): sharing of
 * watches between controllers, `owns` and `watches`. Real time: every wait polls with a deadline.
 */
import { assert, layer } from "@effect/vitest"
import * as Request from "@reconcile/core/Request"
import { Faults } from "@reconcile/testkit"
import type { KubeObject } from "@reconcile/testkit/KubeObject"
import { Effect, Layer, References } from "effect"
import * as Cache from "../src/Cache.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import * as Undecodable from "../src/Undecodable.js"
import {
  check,
  eventually,
  freshNamespace as freshNamespaceIn,
  kubeLayer,
  makeEnv,
  onRealCluster,
  serverApply
} from "./support/env.js"
import { WebApp } from "./support/fixtures.js"
import { TestManager } from "./support/manager.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(
  Layer.provideMerge(kubeLayer()),
  Layer.provideMerge(env.layer),
  Layer.merge(Layer.succeed(References.MinimumLogLevel, "Error"))
)

const freshNamespace = freshNamespaceIn("ctrl")

/** Server-side apply in-process (create or update); returns the stored object. */
const apply = (object: KubeObject) => serverApply(object)

const configMap = (
  namespace: string,
  name: string,
  data: Record<string, string>,
  annotations?: Record<string, string>
) =>
  apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, ...(annotations !== undefined ? { annotations } : {}) },
    data
  })

const deployment = (namespace: string, name: string, replicas: number, ownerReferences: ReadonlyArray<unknown> = []) =>
  apply({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, ownerReferences: ownerReferences as never },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx:1" }] } }
    }
  })

/** A fresh cache over the real client, with fast watcher backoffs. */
const makeCache = Effect.flatMap(
  KubeClient.KubeClient,
  (client) =>
    Cache.make((resource, selection) => Cache.listWatch(client, resource, selection), {
      informer: { watcher: { initialBackoff: "10 millis", maxBackoff: "50 millis" } }
    })
)

layer(TestLayer, { excludeTestServices: true })("KubeController over HTTP", (it) => {
  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "two controllers of the same kind share one informer: one list and one open watch on the server",
    () =>
      Effect.gen(function*() {
        const faults = yield* Faults.Faults
        const ns = yield* freshNamespace
        yield* configMap(ns, "web", { v: "1" })
        const cache = yield* makeCache
        const from = env.log.lines.length
        const seen = { a: [] as Array<string>, b: [] as Array<string> }
        for (const id of ["a", "b"] as const) {
          yield* KubeController.make({
            name: `share-${id}-${ns}`,
            for: Resource.ConfigMap,
            selection: { namespace: ns },
            reconcile: (cm) => Effect.sync(() => void seen[id].push(`${cm.metadata?.name}=${cm.data?.v}`)),
            onUndecodable: Undecodable.terminal
          }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
        }
        const bothSaw = (entry: string) =>
          eventually(check(() => {
            assert.include(seen.a, entry)
            assert.include(seen.b, entry)
          }))
        yield* bothSaw("web=1")
        yield* configMap(ns, "web", { v: "2" })
        yield* bothSaw("web=2") // the watch is open and delivering to both
        assert.strictEqual(yield* cache.informers, 1)
        const lists = env.log.lines.slice(from).filter((l) =>
          l.includes(`/api/v1/namespaces/${ns}/configmaps?`) && !l.includes("watch=true")
        )
        assert.strictEqual(lists.length, 1, `one list: ${lists.join("; ")}`)
        assert.strictEqual(yield* faults.dropWatches, 1, "one watch connection on the server for both controllers")
        // the one watch resumes and still feeds both
        yield* configMap(ns, "web", { v: "3" })
        yield* bothSaw("web=3")
        assert.strictEqual(yield* faults.dropWatches, 1)
      })
  )

  it.effect("owns: a change to a Deployment controlled by a WebApp enqueues that WebApp, and nothing else", () =>
    Effect.gen(function*() {
      yield* serverApply(Resource.crdManifest(WebApp))
      const ns = yield* freshNamespace
      const app = (name: string) =>
        apply({
          apiVersion: "example.com/v1",
          kind: "WebApp",
          metadata: { name, namespace: ns },
          spec: { image: name }
        })
      const shop = yield* app("shop")
      const other = yield* app("other")
      const ref = (o: KubeObject, controller: boolean) => ({
        apiVersion: "example.com/v1",
        kind: "WebApp",
        name: o.metadata.name!,
        uid: o.metadata.uid!,
        controller
      })
      yield* deployment(ns, "shop", 1, [ref(shop, true)])
      yield* deployment(ns, "loose", 1, [ref(other, false)]) // owned, not controlled
      const foreign = { apiVersion: "v1", kind: "ConfigMap", name: "cfg", uid: "u-1", controller: true }
      yield* deployment(ns, "foreign", 1, [foreign]) // controlled by another kind

      const cache = yield* makeCache
      const deployments = yield* cache.informer(Resource.Deployment, { namespace: ns })
      const seen: Array<string> = []
      yield* KubeController.make({
        name: `webapp-owns-${ns}`,
        for: WebApp,
        selection: { namespace: ns },
        owns: [Resource.Deployment],
        reconcileRequest: (request) =>
          Effect.sync(() => {
            const replicas = deployments.store.get(request.name, ns)?.spec?.replicas
            seen.push(`${request.name}:${replicas ?? "-"}`)
          }),
        options: { maxConcurrentReconciles: 1 }
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* eventually(check(() => assert.includeMembers(seen, ["shop:1", "other:-"])))
      const mark = seen.length

      yield* deployment(ns, "loose", 2, [ref(other, false)])
      yield* deployment(ns, "foreign", 2, [foreign])
      yield* deployment(ns, "shop", 3, [ref(shop, true)])
      // the three changes come in this order on one watch, and one worker takes the queue in order: anything the
      // first two had enqueued is reconciled before "shop:3"
      yield* eventually(check(() => assert.include(seen.slice(mark), "shop:3")))
      assert.deepStrictEqual(
        [...new Set(seen.slice(mark).map((s) => s.split(":")[0]))],
        ["shop"],
        "neither the owned-but-not-controlled nor the foreign-controlled Deployment enqueued anything"
      )
    }))

  it.effect("watches: a map function over a cache index enqueues exactly the objects it maps to", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const secretRef = "example.com/secret"
      yield* configMap(ns, "app-1", {}, { [secretRef]: "db" })
      yield* configMap(ns, "app-2", {}, { [secretRef]: "db" })
      yield* configMap(ns, "app-3", {}, { [secretRef]: "other" })
      yield* configMap(ns, "sentinel", {})
      const secret = (name: string, version: string) =>
        apply({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns, labels: { version } } })
      yield* secret("db", "1")
      yield* secret("other", "1")

      const cache = yield* makeCache
      const configMaps = yield* cache.informer(Resource.ConfigMap, { namespace: ns })
      configMaps.store.addIndex("secret", (cm) => {
        const name = cm.metadata?.annotations?.[secretRef]
        return name === undefined ? [] : [name]
      })
      const secrets = yield* cache.informer(Resource.Secret, { namespace: ns })
      const seen: Array<string> = []
      yield* KubeController.make({
        name: `configmaps-watch-secrets-${ns}`,
        for: Resource.ConfigMap,
        selection: { namespace: ns },
        watches: [KubeController.watches({
          resource: Resource.Secret,
          selection: { namespace: ns },
          map: (secret: Resource.Secret) =>
            Effect.succeed(
              configMaps.store.byIndex("secret", secret.metadata?.name ?? "").map((cm) =>
                Request.make(cm.metadata?.name ?? "", ns)
              )
            )
        })],
        reconcileRequest: (request) =>
          Effect.sync(() => {
            const ref = configMaps.store.get(request.name, ns)?.metadata?.annotations?.[secretRef]
            const version = ref === undefined ? "-" : secrets.store.get(ref, ns)?.metadata?.labels?.version
            seen.push(`${request.name}:${version}`)
          }),
        options: { maxConcurrentReconciles: 1 }
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* eventually(check(() => assert.includeMembers(seen, ["app-1:1", "app-2:1", "app-3:1", "sentinel:-"])))
      const mark = seen.length

      yield* secret("db", "2")
      yield* eventually(check(() => assert.includeMembers(seen.slice(mark), ["app-1:2", "app-2:2"])))
      yield* configMap(ns, "sentinel", { v: "2" })
      yield* eventually(check(() => assert.include(seen.slice(mark), "sentinel:-")))
      assert.deepStrictEqual(
        [...new Set(seen.slice(mark).map((s) => s.split(":")[0]))].sort(),
        ["app-1", "app-2", "sentinel"],
        "app-3 (another secret) was not enqueued"
      )
    }))
})
