/**
 * kubectl's typed clients (`create namespace|configmap|secret|deployment`, `scale`, `auth can-i`) send
 * `application/vnd.kubernetes.protobuf` bodies and ask for protobuf answers first: the real kubectl against
 * TestApiServer, with the results read back as JSON.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { TestApiServer } from "../src/index.js"
import * as Kubectl from "./support/kubectl.js"

const { argv, env, home, ok, run: kubectl } = Kubectl.make("testkit-kubectl-proto-")

const getJson = (server: TestApiServer.TestApiServer.Service, args: ReadonlyArray<string>) =>
  Effect.map(ok(server, ["get", ...args, "-o", "json"]), (out) => JSON.parse(out))

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("kubectl over protobuf", (it) => {
  it.effect("create namespace, then objects in it", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      assert.match(yield* ok(server, ["create", "namespace", "demo"]), /namespace\/demo created/)
      const ns = yield* getJson(server, ["namespace", "demo"])
      assert.strictEqual(ns.metadata.name, "demo")
      assert.strictEqual(ns.status.phase, "Active")
      assert.isString(ns.metadata.uid)
    }))

  it.effect("create configmap with literals, a file and binary data", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const dir = Fs.mkdtempSync(Path.join(home, "files-"))
      Fs.writeFileSync(Path.join(dir, "blob.bin"), Buffer.from([0, 1, 2, 255, 254]))
      Fs.writeFileSync(Path.join(dir, "conf.txt"), "key = välue\n")
      assert.match(
        yield* ok(server, [
          "create",
          "configmap",
          "settings",
          "-n",
          "default",
          "--from-literal=mode=fast",
          "--from-literal=empty=",
          `--from-file=${Path.join(dir, "conf.txt")}`,
          `--from-file=${Path.join(dir, "blob.bin")}`
        ]),
        /configmap\/settings created/
      )
      const cm = yield* getJson(server, ["configmap", "settings", "-n", "default"])
      assert.deepStrictEqual(cm.data, { mode: "fast", empty: "", "conf.txt": "key = välue\n" })
      assert.deepStrictEqual(cm.binaryData, { "blob.bin": Buffer.from([0, 1, 2, 255, 254]).toString("base64") })
      assert.isUndefined(cm.metadata.generateName)
    }))

  it.effect("create secret generic keeps the bytes exact", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      assert.match(
        yield* ok(server, ["create", "secret", "generic", "creds", "--from-literal=password=s3cr€t", "-n", "default"]),
        /secret\/creds created/
      )
      const secret = yield* getJson(server, ["secret", "creds", "-n", "default"])
      assert.strictEqual(secret.type, "Opaque")
      assert.strictEqual(Buffer.from(secret.data.password, "base64").toString("utf8"), "s3cr€t")
    }))

  it.effect("create deployment; auth can-i (a SelfSubjectAccessReview over protobuf)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      assert.match(
        yield* ok(server, ["create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80"]),
        /deployment.apps\/web created/
      )
      const d = yield* getJson(server, ["deployment", "web"])
      assert.strictEqual(d.spec.replicas, 2)
      assert.deepStrictEqual(d.spec.selector, { matchLabels: { app: "web" } })
      const container = d.spec.template.spec.containers[0]
      assert.strictEqual(container.image, "nginx:1.27")
      assert.deepStrictEqual(container.ports[0].containerPort, 80)
      assert.deepStrictEqual(d.spec.template.metadata.labels, { app: "web" })
      assert.strictEqual((yield* ok(server, ["auth", "can-i", "create", "deployments"])).trim(), "yes")
    }))

  it.effect("label an object created over protobuf, read it back as JSON", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["create", "configmap", "shown", "--from-literal=a=1"])
      yield* ok(server, ["label", "configmap", "shown", "tier=front"])
      const cm = yield* getJson(server, ["configmap", "shown"])
      assert.deepStrictEqual(cm.metadata.labels, { tier: "front" })
      assert.match(cm.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    }))

  it.effect("delete a namespaced object created over protobuf", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["create", "configmap", "gone", "--from-literal=a=1"])
      assert.match(yield* ok(server, ["delete", "configmap", "gone"]), /configmap "gone" deleted/)
      const r = yield* kubectl(server, ["get", "configmap", "gone"])
      assert.notStrictEqual(r.code, 0)
      assert.match(r.stderr, /configmaps "gone" not found/)
    }))

  it.effect("run a pod, create a service; describe reads them (typed protobuf GETs)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      assert.match(
        yield* ok(server, [
          "run",
          "runner",
          "--image=busybox:1.36",
          "--labels=role=runner",
          "--env=MODE=fast",
          "--port=8080"
        ]),
        /pod\/runner created/
      )
      assert.match(
        yield* ok(server, ["create", "service", "clusterip", "front", "--tcp=80:8080"]),
        /service\/front created/
      )
      const pod = yield* ok(server, ["describe", "pod", "runner"])
      assert.match(pod, /^Name:\s+runner$/m)
      assert.match(pod, /Image:\s+busybox:1\.36/)
      assert.match(pod, /MODE:\s+fast/)
      assert.match(pod, /Port:\s+8080\/TCP/)
      const svc = yield* ok(server, ["describe", "service", "front"])
      assert.match(svc, /Type:\s+ClusterIP/)
      assert.match(svc, /TargetPort:\s+8080\/TCP/)
    }))

  it.effect("kubectl events --watch streams protobuf watch frames", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["create", "namespace", "watched"])
      const event = (name: string, message: string) => ({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name, namespace: "watched" },
        involvedObject: { apiVersion: "v1", kind: "ConfigMap", name: "target", namespace: "watched" },
        reason: "Checked",
        message,
        type: "Normal",
        count: 1,
        source: { component: "h1-test" }
      })
      yield* server.cluster.create(event("first", "first-message") as any)
      const child = spawn(
        Kubectl.KUBECTL,
        argv(server, ["events", "-n", "watched", "--watch", "--request-timeout=15s"]),
        { env }
      )
      let out = ""
      child.stdout.on("data", (c: Buffer) => out += c.toString("utf8"))
      const until = (pattern: RegExp) =>
        Effect.promise(() =>
          new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${out}`)), 10_000)
            const check = () => {
              if (pattern.test(out)) {
                clearTimeout(timer)
                child.stdout.off("data", check)
                resolve()
              }
            }
            child.stdout.on("data", check)
            check()
          })
        )
      yield* until(/first-message/)
      yield* server.cluster.create(event("second", "second-message") as any)
      yield* until(/second-message/)
      child.kill()
      assert.match(out, /Normal\s+Checked\s+ConfigMap\/target\s+second-message/)
    }))
})
