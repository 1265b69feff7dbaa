/**
 * The `/scale` subresource (autoscaling/v1 Scale): kubectl scale, client-node's typed scale calls, the Python
 * client's (when python3-kubernetes is installed), a CRD declaring `subresources.scale`, and TestCluster in-process.
 * The controller manager is off: spec, generation and resourceVersion are the server's own doing.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect, Exit } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Kubectl from "./support/kubectl.js"

const { ok, run: kubectl } = Kubectl.make("testkit-scale-")

/** A python3 with the official client (Debian's python3-kubernetes), if any. */
const python = ["python3", "/usr/bin/python3"].find((bin) => {
  try {
    execFileSync(bin, ["-c", "import kubernetes"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})

const deployment = (name: string, replicas: number): KubeObject =>
  ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default" },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx" }] } }
    }
  }) as KubeObject

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: workers.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: workers, singular: worker, kind: Worker}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.count, statusReplicasPath: .status.count, labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("scale (HTTP)", (it) => {
  it.effect("kubectl scale deployment, replicaset, statefulset; preconditions; generation", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create(deployment("web", 1))
      assert.match(yield* ok(server, ["scale", "deployment/web", "--replicas=3"]), /deployment.apps\/web scaled/)
      const dep = yield* cluster.get({ apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" })
      assert.strictEqual((dep as any).spec.replicas, 3)
      assert.strictEqual(dep.metadata.generation, 2)
      const entry = dep.metadata.managedFields?.find((e) => e.subresource === "scale")
      assert.deepStrictEqual([entry?.manager, entry?.operation, entry?.apiVersion], ["kubectl", "Update", "apps/v1"])
      assert.deepStrictEqual(entry?.fieldsV1, { "f:spec": { "f:replicas": {} } })
      const scale = JSON.parse(
        yield* ok(server, ["get", "--raw", "/apis/apps/v1/namespaces/default/deployments/web/scale"])
      )
      assert.deepStrictEqual(scale, {
        kind: "Scale",
        apiVersion: "autoscaling/v1",
        metadata: {
          name: "web",
          namespace: "default",
          uid: dep.metadata.uid,
          resourceVersion: dep.metadata.resourceVersion,
          creationTimestamp: dep.metadata.creationTimestamp
        },
        spec: { replicas: 3 },
        status: { replicas: 0, selector: "app=web" }
      })
      // dryRun=All: the would-be Scale, nothing stored
      assert.match(
        yield* ok(server, ["scale", "deployment/web", "--replicas=9", "--dry-run=server"]),
        /deployment.apps\/web scaled \(server dry run\)/
      )
      const after = yield* cluster.get({ apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" })
      assert.deepStrictEqual([(after as any).spec.replicas, after.metadata.resourceVersion], [
        3,
        dep.metadata.resourceVersion
      ])
      // --current-replicas and --resource-version are preconditions
      const wrong = yield* kubectl(server, ["scale", "deployment/web", "--current-replicas=2", "--replicas=4"])
      assert.match(wrong.stderr, /Expected replicas to be 2, was 3/)
      const stale = yield* kubectl(server, ["scale", "deployment/web", "--resource-version=1", "--replicas=4"])
      assert.match(stale.stderr, /Expected resource version to be 1, was \d+/)
      yield* ok(server, [
        "scale",
        "deployment/web",
        `--resource-version=${dep.metadata.resourceVersion}`,
        "--replicas=0"
      ])
      assert.deepStrictEqual(
        JSON.parse(yield* ok(server, ["get", "--raw", "/apis/apps/v1/namespaces/default/deployments/web/scale"])).spec,
        {}
      )

      yield* ok(
        server,
        ["create", "-f", "-"],
        `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchExpressions: [{key: app, operator: In, values: [db, cache]}]}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: postgres}]}}
`
      )
      yield* ok(server, ["scale", "sts", "db", "--replicas=2"])
      const sts = JSON.parse(
        yield* ok(server, ["get", "--raw", "/apis/apps/v1/namespaces/default/statefulsets/db/scale"])
      )
      assert.deepStrictEqual([sts.spec.replicas, sts.status.selector], [2, "app in (cache,db)"])
      // a kind without /scale: 404 as for any unknown path
      const none = yield* kubectl(server, ["get", "--raw", "/api/v1/namespaces/default/configmaps/x/scale"])
      assert.match(none.stderr, /NotFound|could not find the requested resource/)
    }))

  it.effect("client-node: read, replace and patch a deployment's Scale; 422 for negative replicas", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create(deployment("api", 2))
      const kc = new k8s.KubeConfig()
      kc.loadFromFile(server.kubeconfigPath)
      const apps = kc.makeApiClient(k8s.AppsV1Api)
      yield* Effect.promise(async () => {
        const scale = await apps.readNamespacedDeploymentScale({ name: "api", namespace: "default" })
        assert.strictEqual(scale.spec?.replicas, 2)
        assert.strictEqual(scale.status?.selector, "app=api")
        const replaced = await apps.replaceNamespacedDeploymentScale({
          name: "api",
          namespace: "default",
          body: { ...scale, spec: { replicas: 5 } }
        })
        assert.strictEqual(replaced.spec?.replicas, 5)
        assert.notStrictEqual(replaced.metadata?.resourceVersion, scale.metadata?.resourceVersion)
        // the old resourceVersion is a precondition
        const conflict = await apps.replaceNamespacedDeploymentScale({
          name: "api",
          namespace: "default",
          body: { ...scale, spec: { replicas: 6 } }
        }).then(() => undefined, (e: unknown) => e as { code?: number })
        assert.strictEqual(conflict?.code, 409)
        const patched = await apps.patchNamespacedDeploymentScale({
          name: "api",
          namespace: "default",
          body: [{ op: "replace", path: "/spec/replicas", value: 1 }]
        })
        assert.strictEqual(patched.spec?.replicas, 1)
        const invalid = await apps.replaceNamespacedDeploymentScale({
          name: "api",
          namespace: "default",
          body: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "api" }, spec: { replicas: -1 } }
        }).then(() => undefined, (e: unknown) => e as { code?: number; body?: string })
        assert.strictEqual(invalid?.code, 422)
        const status = JSON.parse(String(invalid?.body))
        assert.strictEqual(
          status.message,
          "Scale.autoscaling \"api\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        )
        assert.deepStrictEqual(status.details.causes, [{
          reason: "FieldValueInvalid",
          message: "Invalid value: -1: must be greater than or equal to 0",
          field: "spec.replicas"
        }])
      })
    }))

  it.effect("a CRD's subresources.scale: discovery, kubectl scale, the spec/status/selector paths", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["apply", "--server-side", "-f", "-"], crd)
      yield* ok(
        server,
        ["create", "-f", "-"],
        "apiVersion: example.com/v1\nkind: Worker\nmetadata: {name: w}\nspec: {count: 1}\n"
      )
      yield* ok(server, [
        "patch",
        "worker",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        "{\"status\":{\"count\":1,\"selector\":\"app=w\"}}"
      ])
      assert.match(yield* ok(server, ["scale", "worker/w", "--replicas=4"]), /worker.example.com\/w scaled/)
      const worker = JSON.parse(yield* ok(server, ["get", "worker", "w", "-o", "json"]))
      assert.deepStrictEqual([worker.spec.count, worker.metadata.generation], [4, 2])
      const scale = JSON.parse(
        yield* ok(server, ["get", "--raw", "/apis/example.com/v1/namespaces/default/workers/w/scale"])
      )
      assert.deepStrictEqual([scale.spec, scale.status], [{ replicas: 4 }, { replicas: 1, selector: "app=w" }])
      const discovery = JSON.parse(yield* ok(server, ["get", "--raw", "/apis/example.com/v1"]))
      assert.deepStrictEqual(discovery.resources.map((r: { name: string }) => r.name), [
        // apiextensions-apiserver lists status before scale
        "workers",
        "workers/status",
        "workers/scale"
      ])
    }))

  it.effect.skipIf(python === undefined)("the Python client's scale calls", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create(deployment("py", 1))
      const script = `
from kubernetes import client, config
config.load_kube_config(${JSON.stringify(server.kubeconfigPath)})
api = client.AppsV1Api()
s = api.read_namespaced_deployment_scale("py", "default")
print(s.spec.replicas, s.status.selector)
print(api.patch_namespaced_deployment_scale("py", "default", {"spec": {"replicas": 3}}).spec.replicas)
`
      const out = yield* Effect.promise(() =>
        new Promise<string>((resolve, reject) =>
          execFile(python!, ["-c", script], { timeout: 20_000 }, (e, stdout, stderr) =>
            e === null ? resolve(stdout) : reject(new Error(stderr)))
        )
      )
      assert.strictEqual(out, "1 app=py\n3\n")
    }))
})

describe("scale (TestCluster)", () => {
  it.effect("getScale / updateScale: replicas, generation, resourceVersion precondition, 404 without /scale", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(deployment("web", 2))
      const ref = { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default" }
      const scale = yield* cluster.getScale(ref)
      assert.deepStrictEqual((scale as any).spec, { replicas: 2 })
      assert.strictEqual(scale.metadata.resourceVersion, created.metadata.resourceVersion)
      const updated = yield* cluster.updateScale(ref, { ...scale, spec: { replicas: 7 } } as KubeObject)
      assert.deepStrictEqual((updated as any).spec, { replicas: 7 })
      const dep = yield* cluster.get(ref)
      assert.deepStrictEqual([(dep as any).spec.replicas, dep.metadata.generation], [7, 2])
      const stale = yield* Effect.exit(cluster.updateScale(ref, { ...scale, spec: { replicas: 1 } } as KubeObject))
      assert.isTrue(Exit.isFailure(stale))
      const error = yield* Effect.flip(cluster.updateScale(ref, { ...scale, spec: { replicas: 1 } } as KubeObject))
      assert.strictEqual(error.status.code, 409)
      const missing = yield* Effect.flip(
        cluster.getScale({ apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: "default" })
      )
      assert.strictEqual(missing.status.code, 404)
    }).pipe(Effect.provide(TestCluster.layer)))
})
