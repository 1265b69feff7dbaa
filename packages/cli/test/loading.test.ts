/**
 * A main job on a named cluster never loads the testkit: the in-memory API server, its CEL engine and protobuf
 * tables, Envtest. main.ts imports the local clusters (`localClusterLive.ts`) dynamically, in the embedded and
 * `--real` modes only. The main job runs as a process on a `--kubeconfig` until its Manager runs, its module
 * loads recorded by Node's module hooks (test/fixtures/recordModules.ts); the embedded mode, for contrast, loads it.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { TestApiServer } from "@reconcile/testkit"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..", "..", "..")
const fixtures = path.join(import.meta.dirname, "fixtures")

/** Runs the fixture's main job with `args` until stdout matches `until`, then SIGTERM; the module URLs it loaded. */
const loaded = (args: ReadonlyArray<string>, until: RegExp) =>
  Effect.callback<{ readonly code: number | null; readonly output: string; readonly urls: ReadonlyArray<string> }>(
    (resume) => {
      const record = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "modules-")), "loaded")
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          "--import",
          path.join(fixtures, "recordModules.ts"),
          path.join(fixtures, "main.ts"),
          ...args
        ],
        {
          cwd: root,
          env: { ...process.env, KUBECONFIG: "", RECORD_MODULES: record },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let output = ""
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (until.test(output)) child.kill("SIGTERM")
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", onData)
      const timer = setTimeout(() => child.kill("SIGKILL"), 40_000)
      child.on("exit", (code) => {
        clearTimeout(timer)
        const urls = fs.existsSync(record) ? fs.readFileSync(record, "utf8").split("\n").filter((l) => l !== "") : []
        fs.rmSync(path.dirname(record), { recursive: true, force: true })
        resume(Effect.succeed({ code, output, urls }))
      })
      return Effect.sync(() => child.kill("SIGKILL"))
    }
  )

const testkitModules = (urls: ReadonlyArray<string>) =>
  urls.filter((u) => u.includes("/packages/testkit/") || u.includes("/@reconcile/testkit/"))

describe("what the main job loads", () => {
  layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("on a named cluster", (it) => {
    it.effect(
      "--kubeconfig: the operator runs, and not one module of the testkit was loaded",
      () =>
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const run = yield* loaded(["--kubeconfig", server.kubeconfigPath, "--install-crds"], /running/)
          assert.strictEqual(run.code, 0, run.output)
          assert.isNotEmpty(run.urls.filter((u) => u.includes("/packages/kube/src/")), "the hooks saw the kube package")
          assert.deepStrictEqual(testkitModules(run.urls), [])
        }),
      { timeout: 60_000 }
    )
  })

  it.live(
    "the embedded mode loads the testkit (dynamically, after the arguments were read)",
    () =>
      Effect.gen(function*() {
        const run = yield* loaded([], /Try it/)
        assert.strictEqual(run.code, 0, run.output)
        assert.isNotEmpty(testkitModules(run.urls))
        assert.isNotEmpty(run.urls.filter((u) => u.endsWith("/localClusterLive.ts")))
      }),
    { timeout: 60_000 }
  )
})
