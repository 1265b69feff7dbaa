/**
 * The main job stops cleanly while reconciles are in flight: SIGTERM drains the
 * controller, and the writes it makes meanwhile still reach the API server
 * (the HTTP client is part of the launched Layer, so it closes after the
 * controllers). The API server runs here, with every PATCH delayed, so that
 * writes are certainly in flight when the signal comes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { Faults, Simulators, TestApiServer } from "@reconcile/testkit"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { WebApp } from "../src/WebApp.js"

const root = path.join(import.meta.dirname, "..", "..", "..")

/** A request the server answered: its log line, when it finished and how long it took (real time). */
interface Served {
  readonly line: string
  readonly finishedAt: number
  readonly millis: number
}

const served: Array<Served> = []
const cluster = Layer.mergeAll(Faults.layer, Simulators.layerControllerManager({ podReadyDelay: "100 millis" })).pipe(
  Layer.provideMerge(TestApiServer.layerWithCluster({
    log: (line) => served.push({ line, finishedAt: Date.now(), millis: Number(/ (\d+)ms$/.exec(line)?.[1] ?? 0) })
  }))
)

/**
 * Runs the main job in cluster mode; sends SIGTERM once `reconciles` reconcile lines were printed. Returns when
 * the signal was sent and how much output there was then.
 */
const runAndStop = (kubeconfig: string, reconciles: number) =>
  Effect.callback<{
    readonly code: number | null
    readonly output: string
    readonly stoppedAt: number
    readonly stoppedOutput: number
  }>((resume) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "examples/webapp/src/main.ts", "--kubeconfig", kubeconfig, "--install-crds"],
      { cwd: root, env: { ...process.env, KUBECONFIG: "" }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    let stoppedAt = 0
    let stoppedOutput = 0
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (stoppedAt === 0 && (output.match(/reconcile default\//g) ?? []).length >= reconciles) {
        stoppedAt = Date.now()
        stoppedOutput = output.length
        child.kill("SIGTERM")
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, output, stoppedAt, stoppedOutput }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("npm start: SIGTERM during in-flight reconciles", () => {
  it.live(
    "the controllers drain with a live client: in-flight writes complete, no ECONNRESET, exit 0",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const faults = yield* Faults.Faults
        const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(server.kubeconfigPath))
        yield* Effect.gen(function*() {
          yield* KubeClient.patch(
            Resource.CustomResourceDefinition,
            "webapps.apps.reconcile.dev",
            Resource.crdManifest(WebApp),
            { type: "apply", fieldManager: "test" }
          )
          yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => `app-${i}`), (name) =>
            KubeClient.create(WebApp, {
              apiVersion: WebApp.apiVersion,
              kind: WebApp.kind,
              metadata: { name, namespace: "default" },
              spec: { image: "shop:1", replicas: 1, port: 80 }
            }, { namespace: "default" }), { discard: true })
        }).pipe(Effect.provide(client))
        // Every write (finalizer, applies, registry, status) takes 300 ms: the two workers are almost always
        // waiting for one when the signal comes.
        yield* faults.addLatency({ latency: "300 millis", verbs: ["patch"] })

        const { code, output, stoppedAt, stoppedOutput } = yield* runAndStop(server.kubeconfigPath, 3)
        assert.isAbove(stoppedAt, 0, `never reconciled:\n${output}`)
        assert.strictEqual(code, 0, output)
        assert.notMatch(output, /ECONNRESET|socket hang up|transport error|interrupted|defect/i)

        // The reconciles running at SIGTERM (with 12 apps queued, both workers always have one) finished: their
        // writes after the signal were answered, not cut off, and they ended with an outcome.
        const after = served.filter((s) => s.line.startsWith("PATCH ") && s.finishedAt > stoppedAt)
        const timeline = served.map((s) => `${s.finishedAt - stoppedAt} ${s.line}`).join("\n")
        assert.isAtLeast(after.length, 1, timeline)
        for (const s of after) assert.match(s.line, / 20\d \d+ms$/, timeline)
        assert.match(output.slice(stoppedOutput), /reconcile default\/\S+ gen=1 → (success|requeue_after)/, output)
      }).pipe(Effect.provide(cluster)),
    { timeout: 60_000 }
  )
})
