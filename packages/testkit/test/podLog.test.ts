/**
 * `pods/log`: the simulated containers' logs (written by tests through TestCluster.writePodLog), read with kubectl
 * logs (-c, --tail, --previous, -f until the pod is deleted), client-node and TestCluster in-process.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Kubectl from "./support/kubectl.js"

const { argv, env, run: kubectl } = Kubectl.make("testkit-logs-")

const pod = (name: string, containers: ReadonlyArray<string>): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { containers: containers.map((c) => ({ name: c, image: "busybox" })) }
  }) as KubeObject

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })(
  "pods/log (HTTP)",
  (it) => {
    it.effect("kubectl logs: empty by default, -c, --tail, --previous, errors as kube-apiserver words them", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const cluster = yield* TestCluster.TestCluster
        yield* cluster.create(pod("one", ["app"]))
        yield* cluster.create(pod("two", ["app", "sidecar"]))
        const empty = yield* kubectl(server, ["logs", "one"])
        assert.deepStrictEqual([empty.code, empty.stdout], [0, ""])
        yield* cluster.writePodLog({ namespace: "default", pod: "one", container: "app" }, "a\nb\nc\n")
        assert.strictEqual((yield* kubectl(server, ["logs", "one"])).stdout, "a\nb\nc\n")
        assert.strictEqual((yield* kubectl(server, ["logs", "one", "--tail=2"])).stdout, "b\nc\n")
        yield* cluster.writePodLog({ namespace: "default", pod: "two", container: "sidecar" }, "side\n")
        assert.strictEqual((yield* kubectl(server, ["logs", "two", "-c", "sidecar"])).stdout, "side\n")
        const previous = yield* kubectl(server, ["logs", "one", "--previous"])
        assert.strictEqual(previous.code, 1)
        assert.include(
          previous.stderr,
          "Error from server (BadRequest): previous terminated container \"app\" in pod \"one\" not found"
        )
        yield* cluster.writePodLog({ namespace: "default", pod: "one", container: "app" }, "crashed\n", {
          previous: true
        })
        assert.strictEqual((yield* kubectl(server, ["logs", "one", "-p"])).stdout, "crashed\n")
        const missing = yield* kubectl(server, ["logs", "nope"])
        assert.include(missing.stderr, "pods \"nope\" not found")
        // the raw API: container required for a multi-container pod, and must be one of the pod's
        const raw = (path: string) => kubectl(server, ["get", "--raw", path])
        assert.include(
          (yield* raw("/api/v1/namespaces/default/pods/two/log")).stderr,
          "a container name must be specified for pod two, choose one of: [app sidecar]"
        )
        assert.include(
          (yield* raw("/api/v1/namespaces/default/pods/two/log?container=x")).stderr,
          "container x is not valid for pod two"
        )
        assert.include(
          (yield* raw("/api/v1/namespaces/default/pods/one/log?tailLines=-3")).stderr,
          "PodLogOptions \"one\" is invalid: tailLines: Invalid value: -3: must be greater than or equal to 0"
        )
      }))

    it.effect("kubectl logs -f: lines written later arrive; the stream ends when the pod is deleted", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const cluster = yield* TestCluster.TestCluster
        yield* cluster.create(pod("tail", ["app"]))
        const ref = { namespace: "default", pod: "tail", container: "app" }
        yield* cluster.writePodLog(ref, "first\n")
        let out = ""
        const child = spawn(Kubectl.KUBECTL, argv(server, ["logs", "-f", "tail"]), { env })
        child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
        const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
        const until = (f: () => boolean) =>
          Effect.promise(async () => {
            const deadline = Date.now() + 10_000
            while (!f() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
          })
        yield* until(() => out.includes("first\n"))
        yield* cluster.writePodLog(ref, "second\nthird\n", { append: true })
        yield* until(() => out.includes("third\n"))
        yield* cluster.delete({ apiVersion: "v1", kind: "Pod", name: "tail", namespace: "default" })
        const code = yield* Effect.promise(() =>
          Promise.race([exited, new Promise<string>((r) => setTimeout(() => r("timeout"), 10_000))])
        )
        child.kill()
        assert.strictEqual(code, 0)
        assert.strictEqual(out, "first\nsecond\nthird\n")
      }))

    it.effect("client-node readNamespacedPodLog (text/plain), with tailLines and timestamps", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const cluster = yield* TestCluster.TestCluster
        yield* cluster.create(pod("cn", ["app"]))
        yield* cluster.writePodLog({ namespace: "default", pod: "cn", container: "app" }, "x\ny\n")
        const kc = new k8s.KubeConfig()
        kc.loadFromFile(server.kubeconfigPath)
        const core = kc.makeApiClient(k8s.CoreV1Api)
        yield* Effect.promise(async () => {
          assert.strictEqual(await core.readNamespacedPodLog({ name: "cn", namespace: "default" }), "x\ny\n")
          assert.strictEqual(await core.readNamespacedPodLog({ name: "cn", namespace: "default", tailLines: 1 }), "y\n")
          const stamped = await core.readNamespacedPodLog({ name: "cn", namespace: "default", timestamps: true })
          assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z x\n\S+ y\n$/)
        })
      }))
  }
)

describe("pods/log (TestCluster)", () => {
  it.effect("podLog reads what writePodLog wrote; options and errors as over HTTP", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create(pod("p", ["a", "b"]))
      const ref = { namespace: "default", pod: "p", container: "b" }
      yield* cluster.writePodLog(ref, "1\n2\n3")
      yield* cluster.writePodLog(ref, "4\n", { append: true })
      assert.strictEqual(yield* cluster.podLog({ namespace: "default", name: "p", container: "b" }), "1\n2\n3\n4\n")
      assert.strictEqual(
        yield* cluster.podLog({ namespace: "default", name: "p", container: "b", tailLines: 1 }),
        "4\n"
      )
      assert.strictEqual(
        yield* cluster.podLog({ namespace: "default", name: "p", container: "b", limitBytes: 3 }),
        "1\n2"
      )
      assert.strictEqual(yield* cluster.podLog({ namespace: "default", name: "p", container: "a" }), "")
      const noContainer = yield* Effect.flip(cluster.podLog({ namespace: "default", name: "p" }))
      assert.deepStrictEqual(
        [noContainer.status.code, noContainer.status.message],
        [400, "a container name must be specified for pod p, choose one of: [a b]"]
      )
      const gone = yield* Effect.flip(cluster.podLog({ namespace: "default", name: "q" }))
      assert.strictEqual(gone.status.message, "pods \"q\" not found")
      const wrong = yield* Effect.flip(cluster.writePodLog({ ...ref, container: "c" }, "x"))
      assert.strictEqual(wrong.status.message, "container c is not valid for pod p")
      // logs belong to the pod: one created again under the same name starts empty
      yield* cluster.delete({ apiVersion: "v1", kind: "Pod", name: "p", namespace: "default" })
      yield* cluster.create(pod("p", ["a", "b"]))
      assert.strictEqual(yield* cluster.podLog({ namespace: "default", name: "p", container: "b" }), "")
    }).pipe(Effect.provide(TestCluster.layer)))
})
