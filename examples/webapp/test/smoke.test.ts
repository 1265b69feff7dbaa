/**
 * The main job end to end: `npm start`'s embedded mode as a child process,
 * driven over the real HTTPS API with the kubeconfig it prints. With
 * `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`) the same scenario runs
 * `npm start -- --real`: the operator on a real control plane of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { registryName } from "../src/reconcile.js"
import { samples } from "../src/samples.js"
import { WebApp } from "../src/WebApp.js"
import { assertTryIt, runAll } from "./support/tryIt.js"

const root = path.join(import.meta.dirname, "..", "..", "..")
const real = process.env.RECONCILE_TEST_CLUSTER === "real"

/** Starts the main job; resolves with the process and the kubeconfig path once the sample is Ready. */
const startMainJob = Effect.acquireRelease(
  Effect.callback<{ readonly child: ChildProcess; readonly kubeconfig: string; output: () => string }, Error>(
    (resume) => {
      const child = spawn(process.execPath, [
        "--import",
        "tsx",
        "examples/webapp/src/main.ts",
        ...(real ? ["--real"] : [])
      ], {
        cwd: root,
        // as in a shell where KUBECONFIG points at a real cluster: the main job must not use it
        env: { ...process.env, KUBECONFIG: "/nonexistent/production-kubeconfig" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      const limit = real ? 60 : 20
      const timer = setTimeout(
        () => resume(Effect.fail(new Error(`main job not ready in ${limit} s:\n${out}`))),
        limit * 1000
      )
      const onData = (chunk: Buffer) => {
        out += chunk.toString()
        const match = /KUBECONFIG=(\S+) kubectl/.exec(out)
        if (match && out.includes("is Ready")) {
          clearTimeout(timer)
          resume(Effect.succeed({ child, kubeconfig: match[1]!, output: () => out }))
        }
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()))
      child.on("exit", (code) => resume(Effect.fail(new Error(`main job exited with ${code}:\n${out}`))))
    }
  ),
  ({ child }) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
)

/** Polls `check` (real time) until it yields true, for at most `seconds`. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = real ? 45 : 15) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      if (yield* check) return
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

describe(real ? "npm start -- --real (a real control plane)" : "npm start (embedded mode)", () => {
  it.live(
    "with KUBECONFIG set: the sample becomes Ready on its own cluster, follows an edit, is cleaned up on " +
      "delete; the printed kubectl lines show the webhooks; SIGTERM exits cleanly and removes the kubeconfig",
    () =>
      Effect.gen(function*() {
        const job = yield* startMainJob
        const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(job.kubeconfig))
        yield* Effect.gen(function*() {
          const app = yield* KubeClient.get(WebApp, "sample", { namespace: "default" })
          assert.isTrue(app.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
          assert.include(app.metadata.finalizers ?? [], "apps.reconcile.dev/registry")
          const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
          assert.strictEqual(registry.data?.sample, "nginx:1.27")

          // Edit: replicas 2 → 3; the Deployment follows and the app is Ready again at the new generation.
          yield* KubeClient.patch(WebApp, "sample", { spec: { replicas: 3 } }, { type: "merge", namespace: "default" })
          yield* eventually(
            "the Deployment follows the edit",
            Effect.map(
              KubeClient.get(Resource.Deployment, "sample", { namespace: "default" }),
              (d) => d.spec?.replicas === 3 && d.status?.readyReplicas === 3
            )
          )
          yield* eventually(
            "the app reports Ready for the new generation",
            Effect.map(KubeClient.get(WebApp, "sample", { namespace: "default" }), (a) =>
              a.status?.observedGeneration === a.metadata.generation &&
              a.status?.conditions?.some((c) =>
                  c.type === "Ready" && c.status === "True"
                ) === true)
          )

          // Delete: cleanup removes the registry entry, then the finalizer; owned objects are collected.
          yield* KubeClient.del(WebApp, "sample", { namespace: "default" })
          yield* eventually(
            "the app is gone",
            KubeClient.get(WebApp, "sample", { namespace: "default" }).pipe(
              Effect.as(false),
              Effect.catchTag("NotFound", () => Effect.succeed(true))
            )
          )
          const after = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
          assert.isUndefined(after.data?.sample, "cleanup removed the registry entry")
          yield* eventually(
            "the Deployment is garbage-collected",
            KubeClient.get(Resource.Deployment, "sample", { namespace: "default" }).pipe(
              Effect.as(false),
              Effect.catchTag("NotFound", () => Effect.succeed(true))
            )
          )

          // The "Try it" lines it printed, run as printed (bash, the real kubectl) on the sample again: the webhooks
          // it serves and installed default `replicas`, warn about an unpinned image and protect from deletion.
          yield* KubeClient.create(WebApp, samples("default")[0]!)
          const lines = [...job.output().matchAll(/^ {2}(KUBECONFIG=\S+ kubectl .*)$/gm)].map((m) => m[1]!)
          assertTryIt(yield* runAll(lines, "/nonexistent/kubeconfig"))
        }).pipe(Effect.provide(client))

        assert.include(job.output(), "Installed MutatingWebhookConfiguration webapp-operator-mutating")
        assert.include(job.output(), "Installed ValidatingWebhookConfiguration webapp-operator-validating")
        assert.include(job.output(), "KUBECONFIG is set but ignored")

        // SIGTERM: a graceful, clean exit, and the kubeconfig (it holds the server's token) is removed.
        assert.isTrue(fs.existsSync(job.kubeconfig))
        const code = yield* Effect.callback<number | null>((resume) => {
          job.child.on("exit", (c) => resume(Effect.succeed(c)))
          job.child.kill("SIGTERM")
        }).pipe(Effect.timeout("15 seconds"))
        assert.strictEqual(code, 0, job.output())
        assert.isFalse(fs.existsSync(job.kubeconfig), "the kubeconfig is removed on exit")
      }),
    { timeout: real ? 120_000 : 60_000 }
  )
})
