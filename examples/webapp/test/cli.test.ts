/**
 * The main job's options, its cluster mode and its errors, against a TestApiServer started here (standing in for
 * "your cluster"). The main job is `Main.run` of `@reconcile/cli` (its own tests cover every option).
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { Simulators, TestApiServer } from "@reconcile/testkit"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { WebApp } from "../src/WebApp.js"

const root = path.join(import.meta.dirname, "..", "..", "..")

/** Runs the main job with `args` until it exits or `until` matches its output (then SIGTERM). */
const run = (args: ReadonlyArray<string>, until?: RegExp) =>
  Effect.callback<{ readonly code: number | null; readonly output: string }>((resume) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "examples/webapp/src/main.ts", ...args],
      { cwd: root, env: { ...process.env, KUBECONFIG: "" }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    let stopping = false
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (!stopping && until !== undefined && until.test(output)) {
        stopping = true
        child.kill("SIGTERM")
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, output }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const cluster = Simulators.layerControllerManager({ podReadyDelay: "100 millis" }).pipe(
  Layer.provideMerge(TestApiServer.layerWithCluster())
)

describe("npm start -- [options]", () => {
  it.live("--help explains the options and exits 0", () =>
    Effect.gen(function*() {
      const { code, output } = yield* run(["--help"])
      assert.strictEqual(code, 0)
      for (const option of ["--kubeconfig", "--context", "--in-cluster", "--install-crds", "--namespace", "--help"]) {
        assert.include(output, option)
      }
      assert.include(output, "webapp-operator")
    }), { timeout: 30_000 })

  it.live("an unknown option is an error: exit 2", () =>
    Effect.gen(function*() {
      const unknown = yield* run(["--bogus"])
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.output, "unknown option --bogus")
    }), { timeout: 30_000 })

  it.live("a missing kubeconfig file is a readable error naming the file", () =>
    Effect.gen(function*() {
      const { code, output } = yield* run(["--kubeconfig", "/nonexistent/kubeconfig"])
      assert.strictEqual(code, 1)
      assert.include(output, "/nonexistent/kubeconfig")
    }), { timeout: 30_000 })

  it.live("an unreachable cluster is a readable error", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webapp-cli-"))
      const file = path.join(dir, "kubeconfig")
      fs.writeFileSync(
        file,
        [
          "apiVersion: v1",
          "kind: Config",
          "clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true } }]",
          "users: [{ name: u, user: { token: t } }]",
          "contexts: [{ name: x, context: { cluster: c, user: u } }]",
          "current-context: x"
        ].join("\n")
      )
      const { code, output } = yield* run(["--kubeconfig", file])
      assert.strictEqual(code, 1)
      assert.include(output, "error: cannot reach the API server")
      assert.strictEqual(output.match(/error:/g)?.length, 1, output)
    }), { timeout: 30_000 })

  it.live(
    "against a cluster without the CRD: the fix, once; with --install-crds it runs the operator",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const missing = yield* run(["--kubeconfig", server.kubeconfigPath])
        assert.strictEqual(missing.code, 1)
        assert.include(missing.output, "error: the CustomResourceDefinition webapps.apps.reconcile.dev")
        assert.include(missing.output, "is not installed")
        assert.strictEqual(missing.output.match(/error:/g)?.length, 1, missing.output)

        const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(server.kubeconfigPath))
        // Create the app before the operator starts: it must pick it up from the initial list.
        const created = Effect.gen(function*() {
          yield* KubeClient.patch(
            Resource.CustomResourceDefinition,
            "webapps.apps.reconcile.dev",
            Resource.crdManifest(WebApp),
            {
              type: "apply",
              fieldManager: "test"
            }
          )
          yield* KubeClient.create(WebApp, {
            apiVersion: WebApp.apiVersion,
            kind: WebApp.kind,
            metadata: { name: "shop", namespace: "default" },
            spec: { image: "shop:1", replicas: 1, port: 80 }
          }, { namespace: "default" })
        }).pipe(Effect.provide(client))
        yield* created
        const running = yield* run(
          ["--kubeconfig", server.kubeconfigPath, "--install-crds"],
          /reconcile default\/shop .*→ success/
        )
        assert.strictEqual(running.code, 0, running.output)
        const app = yield* KubeClient.get(WebApp, "shop", { namespace: "default" }).pipe(Effect.provide(client))
        assert.isTrue(app.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
      }).pipe(Effect.provide(cluster)),
    { timeout: 60_000 }
  )
})
