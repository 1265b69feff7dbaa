/**
 * `dryRun=All` on every write: full validation and defaulting, the would-be object returned (a create gets its uid
 * and creationTimestamp, never a resourceVersion; an update keeps the stored one), nothing stored, no watch event,
 * the cluster's resourceVersion unchanged. In-process (TestCluster), over HTTP, and with kubectl's server-side dry
 * runs (`create|apply|delete --dry-run=server`, `diff`).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { ApiError, TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import { request } from "./support/drivers.js"
import * as Kubectl from "./support/kubectl.js"

type Obj = Record<string, any>

const cm = (name: string, data: Record<string, string> = { a: "1" }, extra: Obj = {}): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default", ...extra },
    data
  }) as KubeObject

const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name })

describe("TestCluster dryRun", () => {
  it.effect("create, update, patch (all four types), apply and delete store nothing and send no event", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const stored = yield* cluster.create(cm("kept", { a: "1" }, { finalizers: ["example.com/hold"] }))
      const rv = yield* cluster.resourceVersion
      const events: Array<string> = []
      yield* Effect.forkScoped(
        cluster.watch({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", resourceVersion: rv }).pipe(
          Stream.runForEach((e) => Effect.sync(() => events.push(`${e.type} ${e.object.metadata.name}`)))
        ),
        { startImmediately: true }
      )

      const created = yield* cluster.create(cm("dry"), { dryRun: true })
      assert.strictEqual(created.metadata.name, "dry")
      assert.isString(created.metadata.uid)
      assert.isString(created.metadata.creationTimestamp)
      assert.isUndefined(created.metadata.resourceVersion)
      const missing = yield* Effect.flip(cluster.get(ref("dry")))
      assert.isTrue(ApiError.isNotFound(missing))
      // validation still runs: an invalid name is a 422, an existing one a 409
      assert.isTrue(ApiError.isInvalid(yield* Effect.flip(cluster.create(cm("Bad_Name"), { dryRun: true }))))
      assert.isTrue(ApiError.isAlreadyExists(yield* Effect.flip(cluster.create(cm("kept"), { dryRun: true }))))

      const updated = yield* cluster.update({ ...stored, data: { a: "2" } }, { dryRun: true })
      assert.strictEqual((updated as Obj).data.a, "2")
      assert.strictEqual(updated.metadata.resourceVersion, stored.metadata.resourceVersion)
      assert.strictEqual(updated.metadata.uid, stored.metadata.uid)

      const merged = yield* cluster.patch(ref("kept"), { type: "merge", patch: { data: { b: "1" } } }, { dryRun: true })
      assert.deepStrictEqual(merged.data, { a: "1", b: "1" })
      const jsonPatched = yield* cluster.patch(
        ref("kept"),
        { type: "json", patch: [{ op: "add", path: "/data/c", value: "1" }] },
        { dryRun: true }
      )
      assert.deepStrictEqual(jsonPatched.data, { a: "1", c: "1" })
      const strategic = yield* cluster.patch(ref("kept"), { type: "strategic", patch: { data: { d: "1" } } }, {
        dryRun: true
      })
      assert.deepStrictEqual(strategic.data, { a: "1", d: "1" })
      const applied = yield* cluster.apply(cm("kept", { e: "1" }), { fieldManager: "dry", dryRun: true })
      assert.strictEqual((applied as Obj).data.e, "1")
      assert.isTrue(applied.metadata.managedFields?.some((m) => m.manager === "dry"))
      const applyCreated = yield* cluster.apply(cm("applied"), { fieldManager: "dry", dryRun: true })
      assert.isUndefined(applyCreated.metadata.resourceVersion)

      // a finalizer keeps the object: the answer shows the deletionTimestamp it would get; the store does not
      const held = yield* cluster.delete(ref("kept"), { dryRun: true })
      assert.isFalse(held.deleted)
      assert.isString(held.object.metadata.deletionTimestamp)

      const after = yield* cluster.get(ref("kept"))
      assert.deepStrictEqual(after, stored)
      assert.strictEqual(yield* cluster.resourceVersion, rv)
      assert.isTrue(ApiError.isNotFound(yield* Effect.flip(cluster.get(ref("applied")))))

      // the first event the watch sees is a real write's
      yield* cluster.create(cm("real"))
      yield* Effect.yieldNow
      yield* Effect.yieldNow
      assert.deepStrictEqual(events, ["ADDED real"])
    }))

  it.effect("a dry-run delete of an object without finalizers leaves it in place", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      yield* cluster.create(cm("plain"))
      const rv = yield* cluster.resourceVersion
      const result = yield* cluster.delete(ref("plain"), { dryRun: true })
      assert.isTrue(result.deleted)
      assert.strictEqual((yield* cluster.get(ref("plain"))).metadata.name, "plain")
      assert.strictEqual(yield* cluster.resourceVersion, rv)
    }))
})

const { ok: kubectlOk, run: kubectl } = Kubectl.make("testkit-dryrun-")

/** A python3 with the official client (Debian's python3-kubernetes), if any. */
const python = ["python3", "/usr/bin/python3"].find((bin) => {
  try {
    execFileSync(bin, ["-c", "import kubernetes"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})

const base = "/api/v1/namespaces/default/configmaps"
const json = (obj: unknown) => ({ contentType: "application/json", body: JSON.stringify(obj) })

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("TestApiServer dryRun", (it) => {
  it.effect("POST, PUT, PATCH and DELETE with dryRun=All change nothing; a bad dryRun value is a 422", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const http = (method: string, path: string, options: Parameters<typeof request>[3] = {}) =>
        Effect.promise(() => request(server, method, path, options))
      const stored = JSON.parse((yield* http("POST", base, json(cm("h1")))).body)
      const rv = yield* server.cluster.resourceVersion

      const created = yield* http("POST", `${base}?dryRun=All`, json(cm("h2")))
      assert.strictEqual(created.status, 201)
      const body = JSON.parse(created.body)
      assert.isString(body.metadata.uid)
      assert.isUndefined(body.metadata.resourceVersion)
      assert.strictEqual((yield* http("GET", `${base}/h2`)).status, 404)

      const put = yield* http("PUT", `${base}/h1?dryRun=All`, json({ ...stored, data: { a: "2" } }))
      assert.strictEqual(put.status, 200)
      assert.strictEqual(JSON.parse(put.body).data.a, "2")
      assert.strictEqual(JSON.parse(put.body).metadata.resourceVersion, stored.metadata.resourceVersion)

      const patches: ReadonlyArray<readonly [string, unknown]> = [
        ["application/merge-patch+json", { data: { m: "1" } }],
        ["application/strategic-merge-patch+json", { data: { s: "1" } }],
        ["application/json-patch+json", [{ op: "add", path: "/data/j", value: "1" }]]
      ]
      for (const [contentType, patch] of patches) {
        const r = yield* http("PATCH", `${base}/h1?dryRun=All`, { contentType, body: JSON.stringify(patch) })
        assert.strictEqual(r.status, 200, `${contentType}: ${r.body}`)
      }
      const apply = yield* http("PATCH", `${base}/h1?dryRun=All&fieldManager=t`, {
        contentType: "application/apply-patch+yaml",
        body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: h1}\ndata: {x: \"1\"}\n"
      })
      assert.strictEqual(apply.status, 200)
      assert.strictEqual(JSON.parse(apply.body).data.x, "1")

      const del = yield* http(
        "DELETE",
        `${base}/h1`,
        json({ kind: "DeleteOptions", apiVersion: "v1", dryRun: ["All"] })
      )
      assert.strictEqual(del.status, 200)
      assert.strictEqual(JSON.parse(del.body).status, "Success")
      const collection = yield* http("DELETE", `${base}?dryRun=All`)
      assert.strictEqual(collection.status, 200)
      assert.include(JSON.parse(collection.body).items.map((i: Obj) => i.metadata.name), "h1")

      const now = JSON.parse((yield* http("GET", `${base}/h1`)).body)
      assert.deepStrictEqual(now, stored)
      assert.strictEqual(yield* server.cluster.resourceVersion, rv)

      const bad = yield* http("POST", `${base}?dryRun=Some`, json(cm("h3")))
      assert.strictEqual(bad.status, 422)
      assert.deepStrictEqual(JSON.parse(bad.body), {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Some\"]: " +
          "supported values: \"All\"",
        reason: "Invalid",
        details: {
          group: "meta.k8s.io",
          kind: "CreateOptions",
          causes: [{
            reason: "FieldValueNotSupported",
            message: "Unsupported value: [\"Some\"]: supported values: \"All\"",
            field: "dryRun"
          }]
        },
        code: 422
      })
      const badDelete = yield* http("DELETE", `${base}/h1?dryRun=`)
      assert.strictEqual(badDelete.status, 422)
      assert.include(JSON.parse(badDelete.body).message, "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun")
    }))

  it.effect(
    "kubectl create, apply (client- and server-side), delete with --dry-run=server, and diff",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const manifest = (value: string) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata: {key: "${value}"}\n`
        const rv0 = yield* server.cluster.resourceVersion
        const create = yield* kubectl(server, ["create", "-f", "-", "--dry-run=server", "-o", "json"], manifest("1"))
        assert.strictEqual(create.code, 0, create.stderr)
        assert.isString(JSON.parse(create.stdout).metadata.uid)
        const apply = yield* kubectl(server, ["apply", "-f", "-", "--dry-run=server"], manifest("1"))
        assert.strictEqual(apply.code, 0, apply.stderr)
        assert.match(apply.stdout, /configmap\/web created \(server dry run\)/)
        assert.strictEqual(yield* server.cluster.resourceVersion, rv0)
        assert.strictEqual((yield* kubectl(server, ["get", "cm", "web"])).code, 1)

        // diff of an object that does not exist yet: exit 1 and the would-be object
        const diffNew = yield* kubectl(server, ["diff", "-f", "-"], manifest("1"))
        assert.strictEqual(diffNew.code, 1, diffNew.stderr)
        assert.match(diffNew.stdout, /\+\s+key: "1"/)

        assert.strictEqual((yield* kubectl(server, ["apply", "-f", "-"], manifest("1"))).code, 0)
        const rv1 = yield* server.cluster.resourceVersion
        const same = yield* kubectl(server, ["diff", "-f", "-"], manifest("1"))
        assert.strictEqual(same.code, 0, `${same.stdout}${same.stderr}`)
        const changed = yield* kubectl(server, ["diff", "-f", "-"], manifest("2"))
        assert.strictEqual(changed.code, 1, changed.stderr)
        assert.match(changed.stdout, /-\s+key: "1"/)
        assert.match(changed.stdout, /\+\s+key: "2"/)
        const serverSide = yield* kubectl(
          server,
          ["diff", "--server-side", "--force-conflicts", "-f", "-"],
          manifest("3")
        )
        assert.strictEqual(serverSide.code, 1, serverSide.stderr)
        assert.match(serverSide.stdout, /\+\s+key: "3"/)
        const ssa = yield* kubectl(server, [
          "apply",
          "--server-side",
          "--force-conflicts",
          "--dry-run=server",
          "-f",
          "-"
        ], manifest("4"))
        assert.strictEqual(ssa.code, 0, ssa.stderr)
        assert.match(ssa.stdout, /configmap\/web serverside-applied \(server dry run\)/)

        const del = yield* kubectl(server, ["delete", "cm", "web", "--dry-run=server"])
        assert.strictEqual(del.code, 0, del.stderr)
        assert.match(del.stdout, /configmap "web" deleted \(server dry run\)/)
        const kept = JSON.parse((yield* kubectl(server, ["get", "cm", "web", "-o", "json"])).stdout)
        assert.strictEqual(kept.data.key, "1")
        assert.strictEqual(yield* server.cluster.resourceVersion, rv1)
      }),
    { timeout: 60_000 }
  )

  it.effect(
    "typed kubectl commands (protobuf bodies) with --dry-run=server store nothing",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const ok = (args: ReadonlyArray<string>) => kubectlOk(server, args)
        const rv0 = yield* server.cluster.resourceVersion
        const ns = yield* ok([
          "create",
          "namespace",
          "demo",
          "--dry-run=server",
          "-o",
          "jsonpath={.metadata.name}|{.metadata.uid}|{.metadata.resourceVersion}"
        ])
        assert.match(ns, /^demo\|[0-9a-f-]{36}\|$/)
        assert.strictEqual(
          yield* ok(["create", "configmap", "c1", "--from-literal=a=b", "--dry-run=server"]),
          "configmap/c1 created (server dry run)\n"
        )
        assert.strictEqual(
          yield* ok([
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=a=b",
            "--dry-run=server",
            "-o",
            "jsonpath={.data.a}"
          ]),
          "Yg=="
        )
        // defaulting runs on a dry run
        const strategy = yield* ok(
          ["create", "deployment", "dry", "--image=nginx", "--dry-run=server", "-o", "jsonpath={.spec.strategy.type}"]
        )
        assert.strictEqual(strategy, "RollingUpdate")
        assert.strictEqual(yield* server.cluster.resourceVersion, rv0)

        yield* ok(["create", "namespace", "n2"])
        const rv1 = yield* server.cluster.resourceVersion
        assert.strictEqual(
          yield* ok(["delete", "namespace", "n2", "--dry-run=server"]),
          "namespace \"n2\" deleted (server dry run)\n"
        )
        assert.strictEqual(yield* ok(["get", "namespace", "n2", "-o", "jsonpath={.status.phase}"]), "Active")
        const refused = yield* kubectl(server, ["delete", "namespace", "default", "--dry-run=server"])
        assert.strictEqual(refused.code, 1)
        assert.strictEqual(
          refused.stderr,
          "Error from server (Forbidden): namespaces \"default\" is forbidden: this namespace may not be deleted\n"
        )
        assert.strictEqual(yield* server.cluster.resourceVersion, rv1)
      }),
    { timeout: 60_000 }
  )

  it.effect.skipIf(python === undefined)(
    "the Python client's dry_run=\"All\" create, patch and delete",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* server.cluster.create(cm("py"))
        const rv = yield* server.cluster.resourceVersion
        const script = `
from kubernetes import client, config
config.load_kube_config(${JSON.stringify(server.kubeconfigPath)})
api = client.CoreV1Api()
body = {"metadata": {"name": "py-dry"}, "data": {"a": "1"}}
c = api.create_namespaced_config_map("default", body, dry_run="All")
print(c.metadata.name, c.metadata.uid is not None, c.metadata.resource_version)
p = api.patch_namespaced_config_map("py", "default", {"data": {"a": "2"}}, dry_run="All")
print(p.data["a"])
d = api.delete_namespaced_config_map("py", "default", dry_run="All")
print(d.status)
print(api.read_namespaced_config_map("py", "default").data["a"])
`
        const out = yield* Effect.promise(() =>
          new Promise<string>((resolve, reject) =>
            execFile(
              python!,
              ["-c", script],
              { timeout: 20_000 },
              (e, stdout, stderr) => e === null ? resolve(stdout) : reject(new Error(stderr))
            )
          )
        )
        assert.strictEqual(out, "py-dry True None\n2\nSuccess\n1\n")
        assert.strictEqual(yield* server.cluster.resourceVersion, rv)
      }),
    { timeout: 30_000 }
  )
})
