/**
 * `npm run fidelity`: the embedded API server (`TestApiServer.layerWithCluster()`, its controller manager on)
 * measured against a real control plane (`Envtest.layer()`: etcd, kube-apiserver, kube-controller-manager). Both
 * start in one Effect program; the same CRDs are installed on each; every scenario (scenarios/*.ts) runs in a
 * fresh namespace of the same name on both, its steps sent as raw HTTPS requests by one client; the answers are
 * normalised (compare.ts says what) and compared field by field. A scenario is identical when every step is.
 *
 * Writes bench/results/fidelity.json (the figure and every difference) and prints the figure. Both servers stop
 * with the program's scope. FIDELITY_ONLY=<substring> runs the matching scenarios only (not written);
 * FIDELITY_CONCURRENCY (default 6) scenarios run at once.
 */
import * as Envtest from "@reconcile/testkit/Envtest"
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { client, kubeconfigCredentials, type Target } from "./client.js"
import { crds } from "./crds.js"
import { type Outcome, runScenario } from "./run.js"
import type { Scenario } from "./scenario.js"
import { scenarios } from "./scenarios/index.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const ONLY = process.env.FIDELITY_ONLY
const CONCURRENCY = Number(process.env.FIDELITY_CONCURRENCY ?? 6)

const sleep = (millis: number) => new Promise<void>((r) => setTimeout(r, millis))

/** Applies the CRDs to a server through its API and waits until discovery lists each. */
const installCrds = async (target: Target, list: ReadonlyArray<unknown>): Promise<void> => {
  for (const crd of list) {
    const c = crd as { metadata: { name: string }; spec: { group: string; names: { plural: string } } }
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.metadata.name}`
    const applied = await target.request("PATCH", `${path}?fieldManager=fidelity&force=true`, JSON.stringify(crd), {
      "content-type": "application/apply-patch+yaml"
    })
    if (applied.status >= 300) throw new Error(`CRD ${c.metadata.name}: ${applied.status} ${applied.body}`)
    for (let i = 0;; i++) {
      const disc = await target.request("GET", `/apis/${c.spec.group}/v1`, undefined, {})
      if (disc.status === 200 && disc.body.toString().includes(`"name":"${c.spec.names.plural}"`)) break
      if (i > 300) throw new Error(`CRD ${c.metadata.name} was not served within 30 s`)
      await sleep(100)
    }
  }
}

const runAll = async (
  all: ReadonlyArray<Scenario>,
  targets: readonly [Target, Target]
): Promise<ReadonlyArray<Outcome>> => {
  const outcomes: Array<Outcome | undefined> = all.map(() => undefined)
  const indexed = all.map((s, i) => [s, i] as const)
  const queue = indexed.filter(([s]) => s.serial !== true)
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      outcomes[next[1]] = await runScenario(next[0], next[1], targets)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  for (const [s, i] of indexed.filter(([s]) => s.serial === true)) outcomes[i] = await runScenario(s, i, targets)
  return outcomes as ReadonlyArray<Outcome>
}

const program = Effect.gen(function*() {
  const started = Date.now()
  const real = yield* Envtest.Envtest
  const embedded = yield* TestApiServer.TestApiServer
  const cluster = yield* TestCluster.TestCluster
  const targets = [
    {
      name: "embedded",
      url: embedded.url,
      request: client({ url: embedded.url, ca: embedded.certificateAuthority, token: embedded.token }),
      compact: () => Effect.runPromise(cluster.compact)
    },
    {
      name: "real",
      url: real.url,
      request: client({ url: real.url, ca: real.certificateAuthority, ...kubeconfigCredentials(real.kubeconfig) }),
      compact: () => Effect.runPromise(Effect.asVoid(Effect.orDie(real.compactEtcd)))
    }
  ] as const satisfies readonly [Target, Target]
  yield* Effect.promise(() => installCrds(targets[0], crds))
  yield* real.installCrds(crds)
  const selected = ONLY === undefined ? scenarios : scenarios.filter((s) => s.name.includes(ONLY))
  const outcomes = yield* Effect.promise(() => runAll(selected, targets))
  const identical = outcomes.filter((o) => o.identical).length
  const result = {
    date: new Date().toISOString(),
    kubernetes: real.version,
    scenarios: outcomes.length,
    identical,
    ratio: outcomes.length === 0 ? 0 : Math.round((identical / outcomes.length) * 10_000) / 10_000,
    differences: outcomes.flatMap((o) => o.differences.map((d) => ({ scenario: o.scenario, ...d })))
  }
  for (const o of outcomes.filter((o) => !o.identical)) {
    console.log(`✗ [${o.area}] ${o.scenario}`)
    for (const d of o.differences) {
      console.log(
        `    step ${d.step} ${d.path}: embedded ${JSON.stringify(d.embedded)} | real ${JSON.stringify(d.real)}`
      )
    }
  }
  const areas = [...new Set(outcomes.map((o) => o.area))]
  for (const a of areas) {
    const of = outcomes.filter((o) => o.area === a)
    console.log(`${a.padEnd(16)} ${of.filter((o) => o.identical).length}/${of.length}`)
  }
  if (ONLY === undefined) {
    const file = Path.join(here, "..", "results", "fidelity.json")
    Fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`)
    console.log(`wrote ${Path.relative(process.cwd(), file)}`)
  }
  console.log(
    `fidelity against Kubernetes ${real.version}: ${identical}/${outcomes.length} scenarios identical (${
      (result.ratio * 100).toFixed(1)
    } %) in ${((Date.now() - started) / 1000).toFixed(0)} s`
  )
})

Effect.runPromise(
  program.pipe(Effect.provide(Layer.mergeAll(Envtest.layer(), TestApiServer.layerWithCluster())))
).then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
