#!/usr/bin/env node
/**
 * The real control plane's command: `reconcile-envtest setup | path | start`.
 *
 * - `setup [--force]`: builds kube-apiserver, kube-controller-manager (k8s.io/kubernetes) and etcd
 *   (go.etcd.io/etcd/server/v3) with Go into the cache (`RECONCILE_ENVTEST_CACHE`, default
 *   `~/.cache/reconcile-envtest/kubernetes-vX-etcd-vY`), or finds them there (then it takes seconds). Prints the
 *   folder, the time taken and the disk used. `RECONCILE_ENVTEST_KUBERNETES` / `RECONCILE_ENVTEST_ETCD` choose
 *   other versions.
 * - `path`: prints the folder of the binaries that would be used (`KUBEBUILDER_ASSETS` first), or why there is none.
 * - `start [--kubeconfig PATH] [--no-controllers]`: starts a control plane, writes its admin kubeconfig once
 *   `/readyz` answers, and stops everything on SIGINT/SIGTERM (also `npm run apiserver -- --real`).
 *
 * Exit codes: 2 for bad arguments, 1 for everything else that failed (the message says what to do).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Envtest from "../Envtest.js"
import { startReal } from "./real.js"

const usage = [
  "usage: reconcile-envtest setup [--force]",
  "       reconcile-envtest path",
  "       reconcile-envtest start [--kubeconfig PATH] [--no-controllers]"
].join("\n")

const [command, ...rest] = process.argv.slice(2)

const refuse = (e: Envtest.EnvtestError) =>
  Effect.sync(() => {
    console.error(`reconcile-envtest: ${e.message}`)
    process.exitCode = 1
  })

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`

if (command === "setup" && rest.every((a) => a === "--force")) {
  NodeRuntime.runMain(
    Effect.gen(function*() {
      const assets = yield* Envtest.setup({
        force: rest.includes("--force"),
        progress: (line) => console.log(`envtest setup: ${line}`)
      })
      yield* Console.log(
        `${assets.built ? "built" : "already built"} in ${assets.seconds.toFixed(1)} s: ${assets.dir} (${
          mib(assets.bytes)
        })`
      )
      yield* Console.log(`  kube-apiserver, kube-controller-manager, etcd; use them with Envtest.layer or`)
      yield* Console.log(`  KUBEBUILDER_ASSETS=${assets.dir} (controller-runtime's envtest reads the same folder)`)
    }).pipe(Effect.catchTag("EnvtestError", refuse))
  )
} else if (command === "path" && rest.length === 0) {
  NodeRuntime.runMain(
    Envtest.findAssets().pipe(
      Effect.flatMap((assets) => Console.log(assets.dir)),
      Effect.catchTag("EnvtestError", refuse)
    )
  )
} else if (command === "start") {
  const code = startReal(rest, "reconcile-envtest start")
  if (code !== undefined) process.exitCode = code
} else {
  console.error(usage)
  process.exitCode = command === undefined || command === "--help" || command === "-h" ? 0 : 2
}
