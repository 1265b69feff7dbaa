/**
 * `npm run test:envtest`: the integration suites on a real control plane (etcd, kube-apiserver and
 * kube-controller-manager from `npm run envtest:setup`, one per test file: the testkit's `Envtest`).
 *
 * 1. `reconcile-envtest setup`: builds the binaries with Go into the cache, or finds them there (seconds), or takes
 *    `KUBEBUILDER_ASSETS` (controller-runtime's setup-envtest folder). Without Go and without assets it stops with
 *    the message saying both ways.
 * 2. vitest over {@link suites} with `RECONCILE_TEST_CLUSTER=real`: each file's server comes from its test support
 *    (`serverLayer`/`makeEnv` in packages/kube/test/support/env.ts) or, for the main job and the acceptance tour,
 *    from `--real` on the command line. What a file cannot check there (fault injection, the in-memory request log)
 *    is marked `skipIf(onRealCluster)` in the file; docs/testkit.md ("On a real control plane") says why.
 *
 * Before them, the slow end-to-end files that `npm test` leaves out (`endToEnd` in vitest.shared.ts: the acceptance
 * tour, the apiserver bin's restarts, the main job's cluster mode and signals, `reconcile manifests`, the scaffolded
 * project's own tests) run on the embedded cluster
 * (`RECONCILE_E2E=1`); the tour runs again on the real one.
 *
 * `--embedded` runs the real-cluster files on the in-memory cluster instead (to compare the times); other arguments
 * go to vitest (e.g. a file filter: then only that runs).
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")

/** The suites that run on both clusters (`npm test` runs them on the embedded one). */
export const suites: ReadonlyArray<string> = [
  "packages/kube/test/Apply.test.ts",
  "packages/kube/test/CertificateManagerReal.test.ts",
  "packages/kube/test/EventRecorder.test.ts",
  "packages/kube/test/Finalizer.test.ts",
  "packages/kube/test/Kube.test.ts",
  "packages/kube/test/KubeClient.test.ts",
  "packages/kube/test/KubeControllerHttp.test.ts",
  "packages/kube/test/KubeOutcome.test.ts",
  "packages/kube/test/LeaseLeaderElectionHttp.test.ts",
  "packages/kube/test/ShardingHttp.test.ts",
  "packages/kube/test/ShardSelectorHttp.test.ts",
  "packages/kube/test/Resource.test.ts",
  "packages/kube/test/ResourceConstraints.test.ts",
  "packages/kube/test/Status.test.ts",
  "packages/kube/test/Undecodable.test.ts",
  "packages/kube/test/clientRateLimit.test.ts",
  "packages/kube/test/metadataOnly.test.ts",
  // real-only: compaction, restarts, paging by etcd, kube-controller-manager's GC and namespace controller
  "packages/kube/test/RealCluster.test.ts",
  // the API server calls our webhook server for admission and conversion
  "packages/kube/test/WebhookReal.test.ts",
  "packages/kube/test/ConversionReal.test.ts",
  // an operator's webhooks: the generated manifests accepted by kube-apiserver; the main job's local wiring
  "packages/kube/test/OperatorWebhooksReal.test.ts",
  "packages/cli/test/webhooks.test.ts",
  // the main job as two shards of one ring (--sharding)
  "packages/cli/test/sharding.test.ts",
  // the control plane itself: version, kubeconfig, no process left behind (scope close, SIGKILL)
  "packages/testkit/test/EnvtestReal.test.ts",
  // admission and conversion webhooks: the same scenarios and answers as on the embedded cluster
  "packages/testkit/test/AdmissionWebhooks.test.ts",
  "packages/testkit/test/ConversionWebhooks.test.ts",
  // the README's controller: repairs its ConfigMap, which goes with its Greeting (the real garbage collector)
  "docs/test/readme.test.ts",
  // the webapp operator end to end through `npm start -- --real`
  "examples/webapp/test/smoke.test.ts",
  // kubectl, the Python client and a client-go program against `npm run apiserver -- --real` and `npm start -- --real`
  "packages/testkit/test/tour.test.ts",
  // a scaffolded project's own real-control-plane tests (test/<kind>Controller.real.test.ts, on Envtest)
  "packages/create-reconcile/test/generatedTests.test.ts"
]

const argv = process.argv.slice(2)
const embedded = argv.includes("--embedded")
const rest = argv.filter((a) => a !== "--embedded")
const started = Date.now()

if (!embedded) {
  const setup = spawnSync(process.execPath, ["--import", "tsx", "packages/testkit/src/bin/envtest.ts", "setup"], {
    cwd: root,
    stdio: "inherit"
  })
  if (setup.status !== 0) process.exit(setup.status ?? 1)
}

const vitestRun = (files: ReadonlyArray<string>, env: Record<string, string>) =>
  spawnSync(
    process.execPath,
    ["node_modules/vitest/vitest.mjs", "run", "--testTimeout=90000", "--hookTimeout=90000", ...files],
    { cwd: root, stdio: "inherit", env: { ...process.env, RECONCILE_E2E: "1", ...env } }
  )

const filtered = rest.some((a) => !a.startsWith("-"))
if (!filtered && !embedded) {
  const e2e = vitestRun([
    "packages/core/test/inspectorPage.browser.test.ts",
    "packages/testkit/test/tour.test.ts",
    "packages/testkit/test/apiserverBin.test.ts",
    "examples/webapp/test/cli.test.ts",
    "examples/webapp/test/smoke.test.ts",
    "examples/webapp/test/shutdown.test.ts",
    "examples/webapp/test/jsonLogs.test.ts",
    // the inspector's page in headless Chromium on the main job (skipped, saying so, without /usr/bin/chromium)
    "examples/webapp/test/inspector.browser.test.ts",
    "packages/cli/test/manifests.test.ts",
    "packages/cli/test/process.test.ts",
    "packages/cli/test/loading.test.ts",
    "packages/cli/test/telemetry.test.ts",
    "packages/create-reconcile/test/generatedTests.test.ts",
    "packages/create-reconcile/test/generatedStart.test.ts"
  ], {})
  console.log(`test:envtest: end-to-end files on the embedded cluster, ${((Date.now() - started) / 1000).toFixed(0)} s`)
  if (e2e.status !== 0) process.exit(e2e.status ?? 1)
}

const vitest = spawnSync(
  process.execPath,
  [
    "node_modules/vitest/vitest.mjs",
    "run",
    "--testTimeout=90000",
    "--hookTimeout=90000",
    ...(rest.some((a) => !a.startsWith("-")) ? [] : suites),
    ...rest
  ],
  {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, RECONCILE_E2E: "1", ...(embedded ? {} : { RECONCILE_TEST_CLUSTER: "real" }) }
  }
)
console.log(
  `test:envtest: ${embedded ? "embedded" : "real"} cluster, ${((Date.now() - started) / 1000).toFixed(0)} s in all`
)
process.exit(vitest.status ?? 1)
