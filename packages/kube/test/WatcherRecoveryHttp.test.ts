/**
 * Recovery over real HTTPS (TestApiServer, real time): a stalled watch noticed at the idle limit, a controller's
 * `/readyz` following its watch connection, and an API server restarted over another store (resourceVersions going
 * back) recovered by a relist. Waits poll with a deadline; watcher backoffs are 10–50 ms.
 */
import { assert, layer } from "@effect/vitest"
import * as LeaderElection from "@reconcile/core/LeaderElection"
import * as Manager from "@reconcile/core/Manager"
import { Faults, TestApiServer, TestCluster } from "@reconcile/testkit"
import type { KubeObject } from "@reconcile/testkit/KubeObject"
import { Context, Effect, Exit, Layer, Metric, References, Scope, Stream } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Cache from "../src/Cache.js"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import {
  check,
  eventually,
  fastRetry,
  freshNamespace as freshNamespaceIn,
  kubeLayer,
  makeEnv,
  onRealCluster
} from "./support/env.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(
  Layer.provideMerge(kubeLayer()),
  Layer.provideMerge(env.layer),
  Layer.merge(Layer.succeed(References.MinimumLogLevel, "Error")) // the watcher's retry warnings are expected here
)

const freshNamespace = freshNamespaceIn("recover")

const fast = { initialBackoff: "10 millis", maxBackoff: "50 millis" } as const

/** Creates or updates ConfigMap `name` in the cluster in context (in-process); returns the stored object. */
const put = (namespace: string, name: string, value: string) =>
  Effect.flatMap(TestCluster.TestCluster, (cluster) =>
    Effect.orDie(cluster.apply(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { value } } as KubeObject,
      { fieldManager: "test", force: true }
    )))

const valueOf = (o: Resource.ConfigMap | undefined) => o?.data?.value

// the watcher's counters, by name (as a scrape sees them)
const reconnectsTotal = Metric.counter("watcher_reconnects_total", {
  description: "Re-established lists and watches of a watcher after a failure, an idle connection, 410 Gone or a reset"
})
const reconnects = (watch: string, reason: string) =>
  Effect.map(Metric.value(Metric.withAttributes(reconnectsTotal, { watch, reason })), (state) => state.count)

const get = (port: number, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`)
    return { status: response.status, body: await response.text() }
  })

layer(TestLayer, { excludeTestServices: true })("Watcher recovery over HTTP", (it) => {
  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "a stalled watch (connection open, nothing forwarded) is dropped at the idle limit and resumed: a change made " +
      "meanwhile arrives long before the stall ends",
    () =>
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const faults = yield* Faults.Faults
        const ns = yield* freshNamespace
        yield* put(ns, "a", "1")
        const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), {
          informer: { watcher: { ...fast, idleTimeout: "1 second" } }
        })
        const informer = yield* cache.informer(Resource.ConfigMap, { namespace: ns })
        yield* informer.synced.pipe(Effect.timeout("5 seconds"), Effect.orDie)
        yield* put(ns, "a", "2")
        yield* eventually(check(() => assert.strictEqual(valueOf(informer.store.get("a", ns)), "2")))
        const before = yield* reconnects(informer.name, "idle")
        assert.strictEqual(yield* faults.stallWatches({ namespaces: [ns], duration: "20 seconds" }), 1)
        const stalledAt = Date.now()
        yield* put(ns, "a", "3")
        yield* Effect.sleep("300 millis")
        assert.strictEqual(valueOf(informer.store.get("a", ns)), "2", "nothing arrives through the stalled watch")
        yield* eventually(check(() => assert.strictEqual(valueOf(informer.store.get("a", ns)), "3")), 5_000)
        const took = Date.now() - stalledAt
        assert.isAtLeast(took, 700, "not before the idle limit (1 s from the last line)")
        assert.isBelow(took, 4_000, `resumed at the idle limit, not when the stall ends (${took} ms)`)
        assert.strictEqual((yield* reconnects(informer.name, "idle")) - before, 1)
        assert.strictEqual((yield* informer.health)._tag, "Connected")
      }),
    { timeout: 20_000 }
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "/readyz answers 503 once a controller's watch has failed for longer than sourceDisconnectLimit, and 200 again " +
      "when it reconnects; /metrics counts the reconnects",
    () =>
      Effect.gen(function*() {
        const faults = yield* Faults.Faults
        const ns = yield* freshNamespace
        yield* put(ns, "a", "1")
        const name = `ready-${ns}`
        const app = KubeController.layer(KubeController.make({
          name,
          for: Resource.ConfigMap,
          selection: { namespace: ns },
          reconcileRequest: () => Effect.void,
          options: { sourceDisconnectLimit: "1 second" }
        })).pipe(
          Layer.provideMerge(Cache.layer({ informer: { watcher: fast } })),
          Layer.provideMerge(Manager.layer({ healthPort: 0, metricsPort: 0 })),
          Layer.provide(LeaderElection.layerAlwaysLeader)
        )
        const context = yield* Layer.build(app)
        const manager = Context.get(context, Manager.Manager)
        const informer = yield* Context.get(context, Cache.Cache).informer(Resource.ConfigMap, { namespace: ns })
        const port = manager.healthAddress!.port
        yield* eventually(Effect.flatMap(get(port, "/readyz"), (r) => check(() => assert.strictEqual(r.status, 200))))

        // the server is last heard from when the informer gets this change
        yield* put(ns, "a", "2")
        yield* eventually(check(() => assert.strictEqual(valueOf(informer.store.get("a", ns)), "2")))
        const heard = Date.now()
        // then it answers 503 to every list and watch of the namespace: the watch cannot reconnect
        const block = yield* faults.failRequests({ verbs: ["list", "watch"], namespaces: [ns], code: 503 })
        yield* faults.dropWatches
        yield* Effect.andThen(
          Effect.sleep("300 millis"),
          Effect.flatMap(informer.health, (h) => check(() => assert.strictEqual(h._tag, "Disconnected")))
        )
        assert.strictEqual((yield* get(port, "/readyz")).status, 200, "a short disconnection is tolerated")
        yield* eventually(Effect.flatMap(get(port, "/readyz"), (r) => check(() => assert.strictEqual(r.status, 503))))
        assert.isAtLeast(Date.now() - heard, 950, "not ready only past the limit, counted from the last contact")

        yield* faults.removeRule(block)
        yield* eventually(Effect.flatMap(get(port, "/readyz"), (r) => check(() => assert.strictEqual(r.status, 200))))
        const metrics = yield* get(port, "/metrics")
        const line = metrics.body.split("\n").find((l) =>
          l.startsWith("watcher_reconnects_total{") && l.includes(`in ${ns}"`) && l.includes(`reason="error"`)
        )
        assert.isDefined(line, "watcher_reconnects_total{reason=\"error\", watch=…} is exported")
        assert.isAtLeast(Number(line!.split(" ").pop()), 1)
      }),
    { timeout: 20_000 }
  )
})

layer(Layer.succeed(References.MinimumLogLevel, "Error"), { excludeTestServices: true })("Reset API server", (it) => {
  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "an API server restarted over another store (same address, certificate and token; resourceVersions lower): " +
      "the watcher's check answers 504 Too large resource version, it relists, and the informer converges to the " +
      "new server's contents — Deletes for vanished objects, Creates for new ones, Updates for changed ones",
    () =>
      Effect.gen(function*() {
        const dir = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "reconcile-reset-")))
        yield* Effect.addFinalizer(() => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true })))
        const options = { stateDir: Path.join(dir, "state"), kubeconfigPath: Path.join(dir, "kubeconfig") }

        // the first server: a, b, c and many updates (its resourceVersions climb)
        const first = yield* Scope.make()
        const before = yield* TestCluster.make()
        const serverA = yield* TestApiServer.make(options).pipe(
          Effect.provideService(TestCluster.TestCluster, before),
          Scope.provide(first)
        )
        const onA = (effect: Effect.Effect<KubeObject, never, TestCluster.TestCluster>) =>
          Effect.provideService(effect, TestCluster.TestCluster, before)
        for (const name of ["a", "b", "c"]) yield* onA(put("default", name, "1"))
        for (let i = 2; i <= 10; i++) yield* onA(put("default", "a", String(i)))

        const context = yield* Layer.build(
          KubeClient.layer.pipe(Layer.provide(Kube.layerFromFile(serverA.kubeconfigPath, fastRetry)))
        )
        const client = Context.get(context, KubeClient.KubeClient)
        const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), { informer: { watcher: fast } })
        const informer = yield* cache.informer(Resource.ConfigMap, { namespace: "default" })
        const seen: Array<string> = []
        yield* informer.events.pipe(
          Stream.runForEach((e) =>
            Effect.sync(() => {
              const name = e.object.metadata?.name ?? ""
              seen.push(
                e._tag === "Update"
                  ? `Update:${name}=${valueOf(e.old)}->${valueOf(e.object)}`
                  : e._tag === "Delete"
                  ? `Delete:${name}`
                  : `${e._tag}:${name}=${valueOf(e.object)}`
              )
            })
          ),
          Effect.forkScoped
        )
        yield* informer.synced.pipe(Effect.timeout("5 seconds"), Effect.orDie)
        yield* eventually(check(() => assert.strictEqual(seen.length, 3)))
        const rvBefore = Number(informer.store.get("a", "default")!.metadata!.resourceVersion)
        const resets = yield* reconnects(informer.name, "reset")

        // the restart: the same state directory (port, certificate, token), an empty store
        yield* Scope.close(first, Exit.void)
        const after = yield* TestCluster.make()
        const onB = (effect: Effect.Effect<KubeObject, never, TestCluster.TestCluster>) =>
          Effect.provideService(effect, TestCluster.TestCluster, after)
        yield* onB(put("default", "b", "2"))
        yield* onB(put("default", "d", "1"))
        const serverB = yield* TestApiServer.make(options).pipe(Effect.provideService(TestCluster.TestCluster, after))
        assert.strictEqual(serverB.port, serverA.port, "the same address")
        assert.isBelow(Number(yield* after.resourceVersion), rvBefore, "the new server's resourceVersions are lower")

        yield* eventually(check(() =>
          assert.deepStrictEqual(
            informer.store.list().map((o) => `${o.metadata?.name}=${valueOf(o)}`).sort(),
            ["b=2", "d=1"]
          )
        ))
        assert.deepStrictEqual(seen.slice(3).sort(), ["Create:d=1", "Delete:a", "Delete:c", "Update:b=1->2"])
        assert.strictEqual((yield* reconnects(informer.name, "reset")) - resets, 1)

        // and it watches the new server from its resourceVersions
        yield* onB(put("default", "d", "2"))
        yield* eventually(check(() => assert.strictEqual(valueOf(informer.store.get("d", "default")), "2")))
        assert.strictEqual(seen[seen.length - 1], "Update:d=1->2")
      }),
    { timeout: 20_000 }
  )
})
