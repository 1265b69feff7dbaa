import { assert, describe, it } from "@effect/vitest"
import { ControllerMetrics, LeaderElection, Manager } from "@reconcile/core"
import { Cache, Kube, KubeClient, Resource } from "@reconcile/kube"
import { TestApiServer } from "@reconcile/testkit"
import { Effect, Layer, Metric } from "effect"
import * as Rollout from "../src/rollout.js"

const env = Layer.mergeAll(
  Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader)),
  Layer.unwrap(
    Effect.map(
      TestApiServer.TestApiServer,
      (server) =>
        Cache.layer({ informer: { watcher: { initialBackoff: "10 millis", maxBackoff: "50 millis" } } }).pipe(
          Layer.provideMerge(KubeClient.layer),
          Layer.provide(Kube.layerFromFile(server.kubeconfigPath))
        )
    )
  )
).pipe(Layer.provide(TestApiServer.layerWithCluster()))

const deployment = (name: string, configMap: string | undefined) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [{
          name: "app",
          image: "nginx",
          ...(configMap === undefined ? {} : { envFrom: [{ configMapRef: { name: configMap } }] })
        }]
      }
    }
  }
})

const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data
})

/** Polls (real time, bounded) until the Deployment's hash annotation satisfies `ok`. */
const awaitHash = (name: string, ok: (hash: string | undefined) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const d = yield* KubeClient.get(Resource.Deployment, name, { namespace: "default" })
      const hash = d.spec?.template?.metadata?.annotations?.[Rollout.hashAnnotation]
      if (ok(hash)) return hash
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for the hash of ${name}`))
  })

describe("config-rollout", () => {
  it("finds ConfigMaps in volumes, envFrom and env", () => {
    const d = {
      spec: {
        template: {
          spec: {
            volumes: [{ name: "v", configMap: { name: "files" } }],
            containers: [{
              name: "c",
              envFrom: [{ configMapRef: { name: "env" } }],
              env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "single", key: "x" } } }]
            }]
          }
        }
      }
    } as Resource.Deployment
    assert.deepStrictEqual(Rollout.referencedConfigMaps(d), ["env", "files", "single"])
  })

  it.live("a ConfigMap change rolls exactly the Deployments that reference it", () =>
    Effect.gen(function*() {
      yield* KubeClient.create(Resource.ConfigMap, configMap("settings", { mode: "a" }), { namespace: "default" })
      yield* KubeClient.create(Resource.Deployment, deployment("web", "settings"), { namespace: "default" })
      yield* KubeClient.create(Resource.Deployment, deployment("other", undefined), { namespace: "default" })
      const controller = yield* Rollout.make
      assert.strictEqual(controller.name, "config-rollout")
      const first = yield* awaitHash("web", (h) => h !== undefined)

      yield* KubeClient.patch(Resource.ConfigMap, "settings", { data: { mode: "b" } }, {
        type: "merge",
        namespace: "default"
      })
      const second = yield* awaitHash("web", (h) => h !== first)
      assert.notStrictEqual(second, first)

      const other = yield* KubeClient.get(Resource.Deployment, "other", { namespace: "default" })
      assert.isUndefined(other.spec?.template?.metadata?.annotations?.[Rollout.hashAnnotation])

      // A metadata-only change of the ConfigMap is reconciled, but leaves the hash (and the Deployment) alone.
      const before = yield* KubeClient.get(Resource.Deployment, "web", { namespace: "default" })
      const successes = Metric.value(ControllerMetrics.forController("config-rollout").total.success)
      const reconciled = (yield* successes).count
      yield* KubeClient.patch(Resource.ConfigMap, "settings", { metadata: { labels: { touched: "yes" } } }, {
        type: "merge",
        namespace: "default"
      })
      for (let i = 0; i < 200 && (yield* successes).count === reconciled; i++) yield* Effect.sleep("20 millis")
      assert.isAbove((yield* successes).count, reconciled, "the ConfigMap event reached the Deployment's reconcile")
      const after = yield* KubeClient.get(Resource.Deployment, "web", { namespace: "default" })
      assert.strictEqual(after.metadata?.generation, before.metadata?.generation, "no rollout without a data change")
    }).pipe(Effect.provide(env)))
})
