/**
 * The real kubectl binary against TestApiServer. kubectl never sees the
 * user's ~/.kube: it gets --kubeconfig (the written file), --cache-dir and a
 * HOME in a temporary directory.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
import * as YAML from "yaml"
import { TestApiServer } from "../src/index.js"
import * as Kubectl from "./support/kubectl.js"

const { argv, env, ok, run: kubectl } = Kubectl.make("testkit-kubectl-")

const crdYaml = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webapps.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: webapps, singular: webapp, kind: WebApp, shortNames: [wa]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("kubectl", (it) => {
  it.effect("get namespaces as a table, as json and as yaml", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const table = yield* ok(server, ["get", "namespaces"])
      assert.match(table, /^NAME\s+STATUS\s+AGE/)
      assert.match(table, /default\s+Active/)
      const json = JSON.parse(yield* ok(server, ["get", "ns", "kube-system", "-o", "json"]))
      assert.strictEqual(json.metadata.name, "kube-system")
      const yaml = YAML.parse(yield* ok(server, ["get", "ns", "default", "-o", "yaml"]))
      assert.strictEqual(yaml.status.phase, "Active")
    }))

  it.effect("create -f, get -l, -A, label, annotate, patch (merge and json), delete", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, labels: {app: web}}\ndata: {a: \"1\"}\n"
      assert.match(yield* ok(server, ["create", "-f", "-"], manifest), /configmap\/web created/)
      assert.match(yield* ok(server, ["get", "cm", "-l", "app=web"]), /web\s+1\s+/)
      assert.match(yield* ok(server, ["get", "cm", "-A", "-l", "app=web"]), /default\s+web/)
      yield* ok(server, ["label", "cm", "web", "tier=front"])
      yield* ok(server, ["annotate", "cm", "web", "note=hello"])
      yield* ok(server, ["patch", "cm", "web", "--type", "merge", "-p", "{\"data\":{\"b\":\"2\"}}"])
      yield* ok(server, [
        "patch",
        "cm",
        "web",
        "--type",
        "json",
        "-p",
        "[{\"op\":\"add\",\"path\":\"/data/c\",\"value\":\"3\"}]"
      ])
      const failed = yield* kubectl(server, [
        "patch",
        "cm",
        "web",
        "--type",
        "json",
        "-p",
        "[{\"op\":\"test\",\"path\":\"/data/a\",\"value\":\"x\"}]"
      ])
      assert.notStrictEqual(failed.code, 0)
      const cm = JSON.parse(yield* ok(server, ["get", "cm", "web", "-o", "json"]))
      assert.deepStrictEqual(cm.data, { a: "1", b: "2", c: "3" })
      assert.strictEqual(cm.metadata.labels.tier, "front")
      assert.strictEqual(cm.metadata.annotations.note, "hello")
      assert.match(yield* ok(server, ["delete", "cm", "web"]), /configmap "web" deleted/)
      const gone = yield* kubectl(server, ["get", "cm", "web"])
      assert.match(gone.stderr, /NotFound|not found/)
    }))

  it.effect("apply --server-side for a built-in and a conflicting manager", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const dep = (replicas: number) =>
        `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: ${replicas}\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: app, image: nginx}]}\n`
      assert.match(yield* ok(server, ["apply", "--server-side", "-f", "-"], dep(2)), /serverside-applied/)
      const conflict = yield* kubectl(server, ["apply", "--server-side", "--field-manager", "other", "-f", "-"], dep(5))
      assert.notStrictEqual(conflict.code, 0)
      assert.match(conflict.stderr, /conflict/i)
      yield* ok(server, ["apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-"], dep(5))
      const json = JSON.parse(yield* ok(server, ["get", "deploy", "api", "-o", "json"]))
      assert.strictEqual(json.spec.replicas, 5)
      assert.strictEqual(json.metadata.generation, 2)
    }))

  it.effect("CRD kinds: apply the CRD, then create/get/label/patch/delete instances by short name", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["apply", "--server-side", "-f", "-"], crdYaml)
      const app = "apiVersion: example.com/v1\nkind: WebApp\nmetadata: {name: shop}\nspec: {replicas: 2}\n"
      yield* ok(server, ["create", "-f", "-"], app)
      // a version with printer columns prints those only (AGE is the default of a version that declares none)
      assert.match(yield* ok(server, ["get", "wa"]), /NAME\s+REPLICAS\s*\nshop\s+2\s*\n/)
      yield* ok(server, ["label", "webapp", "shop", "env=prod"])
      yield* ok(server, [
        "patch",
        "webapps.example.com",
        "shop",
        "--type",
        "merge",
        "-p",
        "{\"spec\":{\"replicas\":3}}"
      ])
      const json = JSON.parse(yield* ok(server, ["get", "wa", "-A", "-l", "env=prod", "-o", "json"]))
      assert.strictEqual(json.items[0].spec.replicas, 3)
      assert.strictEqual(json.items[0].metadata.generation, 2)
      yield* ok(server, ["delete", "wa", "shop"])
    }))

  it.effect("get -w prints changes as they happen (bounded by --request-timeout)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["create", "-f", "-"], "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\n")
      const output = yield* Effect.promise(() =>
        new Promise<string>((resolve) => {
          const child = spawn(
            Kubectl.KUBECTL,
            argv(server, ["get", "cm", "-w", "--request-timeout=8s", "-o", "name"]),
            { env }
          )
          let out = ""
          let changed = false
          const timer = setTimeout(() => child.kill("SIGTERM"), 10_000)
          child.stdout.on("data", (chunk: Buffer) => {
            out += chunk.toString("utf8")
            if (!changed && out.includes("configmap/watched")) {
              changed = true
              execFile(Kubectl.KUBECTL, argv(server, ["label", "cm", "watched", "x=y"]), { env })
            } else if (changed && out.split("configmap/watched").length > 2) {
              child.kill("SIGTERM")
            }
          })
          child.on("exit", () => {
            clearTimeout(timer)
            resolve(out)
          })
        })
      )
      assert.isAtLeast(output.split("configmap/watched").length - 1, 2, output)
    }))

  it.effect("requests without the token are refused", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const r = yield* kubectl(server, ["get", "ns", "--token", "wrong"])
      assert.notStrictEqual(r.code, 0)
      assert.match(r.stderr, /Unauthorized|provide credentials|logged in/)
    }))
})
