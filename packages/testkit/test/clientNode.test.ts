/**
 * @kubernetes/client-node against TestApiServer with the written kubeconfig.
 */
import { assert, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { TestApiServer } from "../src/index.js"

const clientFor = (server: TestApiServer.TestApiServer.Service) => {
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(server.kubeconfigPath)
  return kc
}

const cm = (name: string, data: Record<string, string>): k8s.V1ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data
})

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("client-node", (it) => {
  it.effect("KubernetesObjectApi: create, read, list, replace, patch (merge, json, apply), delete", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const api = k8s.KubernetesObjectApi.makeApiClient(clientFor(server))
      yield* Effect.promise(async () => {
        const created = await api.create(cm("app", { a: "1" }))
        assert.isString(created.metadata?.uid)
        const read = await api.read<k8s.V1ConfigMap>({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "app", namespace: "default" }
        })
        assert.deepStrictEqual(read.data, { a: "1" })
        const replaced = await api.replace<k8s.V1ConfigMap>({ ...read, data: { a: "2" } })
        assert.notStrictEqual(replaced.metadata?.resourceVersion, read.metadata?.resourceVersion)
        const stale = await api.replace({ ...read, data: { a: "3" } }).then(() => undefined, (e: unknown) => e)
        assert.strictEqual((stale as { code?: number }).code, 409)
        await api.patch<k8s.V1ConfigMap>(
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "app", namespace: "default" }, data: { b: "2" } },
          undefined,
          undefined,
          undefined,
          undefined,
          k8s.PatchStrategy.MergePatch
        )
        const applied = await api.patch<k8s.V1ConfigMap>(
          cm("applied", { x: "1" }),
          undefined,
          undefined,
          "my-controller",
          true,
          k8s.PatchStrategy.ServerSideApply
        )
        assert.strictEqual(applied.metadata?.managedFields?.[0]?.manager, "my-controller")
        const list = await api.list<k8s.V1ConfigMap>("v1", "ConfigMap", "default")
        assert.deepStrictEqual(list.items.map((i) => i.metadata?.name), ["applied", "app"].sort())
        const app = list.items.find((i) => i.metadata?.name === "app")!
        assert.deepStrictEqual(app.data, { a: "2", b: "2" })
        await api.delete({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "app", namespace: "default" } })
        const missing = await api.read({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "app", namespace: "default" }
        })
          .then(() => undefined, (e: unknown) => e)
        assert.strictEqual((missing as { code?: number }).code, 404)
      })
    }))

  it.effect("makeInformer lists, then watches adds, updates and deletes", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const kc = clientFor(server)
      const core = kc.makeApiClient(k8s.CoreV1Api)
      yield* Effect.promise(async () => {
        await core.createNamespace({ body: { metadata: { name: "informed" } } })
        await core.createNamespacedConfigMap({
          namespace: "informed",
          body: { metadata: { name: "before" }, data: { v: "0" } }
        })
        const informer = k8s.makeInformer(kc, "/api/v1/namespaces/informed/configmaps", () =>
          core.listNamespacedConfigMap({ namespace: "informed" }))
        const seen: Array<string> = []
        const done = new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() =>
            reject(new Error(`informer saw only ${seen.join(", ")}`)), 10_000)
          const record = (type: string) => (obj: k8s.V1ConfigMap) => {
            seen.push(`${type}:${obj.metadata?.name}`)
            if (type === "delete") {
              clearTimeout(timer)
              resolve()
            }
          }
          informer.on("add", record("add"))
          informer.on("update", record("update"))
          informer.on("delete", record("delete"))
          informer.on("error", (e) =>
            reject(e))
        })
        await informer.start()
        assert.deepStrictEqual(informer.list("informed").map((o) => o.metadata?.name), ["before"])
        await core.createNamespacedConfigMap({
          namespace: "informed",
          body: { metadata: { name: "after" }, data: { v: "1" } }
        })
        await core.patchNamespacedConfigMap(
          { namespace: "informed", name: "after", body: { data: { v: "2" } } },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch)
        )
        await core.deleteNamespacedConfigMap({ namespace: "informed", name: "after" })
        await done
        await informer.stop()
        assert.deepStrictEqual(seen, ["add:before", "add:after", "update:after", "delete:after"])
      })
    }))
})
