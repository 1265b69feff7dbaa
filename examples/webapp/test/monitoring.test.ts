/**
 * The generated Grafana dashboard and PrometheusRule (`config/monitoring/`, `config/grafana/`) query only series the
 * operator exposes: the webapp operator runs (the main job, `npm start -- --kubeconfig … --leader-elect`) against a
 * TestApiServer, reconciles an app, serves admission requests, meets an undecodable app and a dropped watch; then
 * its `/metrics` is scraped and every query of the dashboard (panels and variables) and of the alerts is parsed
 * with Prometheus's grammar: each metric it selects must be in the scrape, with each label it uses.
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { Faults, Simulators, TestApiServer } from "@reconcile/testkit"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import * as path from "node:path"
import { parseAllDocuments } from "yaml"
import { WebApp, WebAppAnySpec } from "../src/WebApp.js"
import { laxCrdPatch } from "./support/crd.js"
import { dashboardQueries, parseExposition, problems, ruleQueries, selectors } from "./support/promql.js"

const root = path.join(import.meta.dirname, "..", "..", "..")

const config = path.join(import.meta.dirname, "..", "config")

/**
 * The committed dashboard and PrometheusRule (`test/manifests.test.ts` checks they are what the code generates): the
 * dashboard's JSON file, which must be the JSON of its ConfigMap.
 */
const committed = () => {
  const read = (file: string) => fs.readFileSync(path.join(config, file), "utf8")
  const docs = (file: string) => parseAllDocuments(read(file)).map((d) => d.toJS())
  const dashboard = JSON.parse(read("grafana/webapp-operator.json"))
  const configMap = docs("monitoring/grafana-dashboard.yaml").find((o) => o.kind === "ConfigMap")
  assert.deepStrictEqual(JSON.parse(configMap.data["webapp-operator.json"]), dashboard)
  const rule = docs("monitoring/prometheus.yaml").find((o) => o.kind === "PrometheusRule")
  return { dashboard, rule }
}

const exposition = [
  "# HELP controller_runtime_reconcile_total Total number of reconciliations per controller",
  "# TYPE controller_runtime_reconcile_total counter",
  `controller_runtime_reconcile_total{controller="webapp",result="success"} 3`,
  `controller_runtime_reconcile_time_seconds_bucket{controller="webapp",le="0.005"} 1`,
  `controller_runtime_reconcile_time_seconds_bucket{controller="webapp",le="+Inf"} 3`,
  `controller_runtime_reconcile_time_seconds_count{controller="webapp"} 3`,
  "process_resident_memory_bytes 52428800",
  ""
].join("\n")

describe("the PromQL check", () => {
  const exposed = parseExposition(exposition)

  it("reads the exposition's sample names and their labels", () => {
    assert.deepStrictEqual([...exposed.get("controller_runtime_reconcile_total")!].sort(), ["controller", "result"])
    assert.deepStrictEqual([...exposed.get("controller_runtime_reconcile_time_seconds_bucket")!].sort(), [
      "controller",
      "le"
    ])
    assert.strictEqual(exposed.get("process_resident_memory_bytes")!.size, 0)
  })

  it("finds the labels of matchers, by (...) and on (...) on the selectors they apply to", () => {
    const found = selectors(
      `histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{` +
        `namespace="$namespace", job=~"$job"}[$__rate_interval]))) > on (job) group_left max(up)`
    )
    assert.deepStrictEqual(found.map((s) => [s.metric, [...s.labels].sort()]), [
      ["controller_runtime_reconcile_time_seconds_bucket", ["controller", "job", "le", "namespace"]],
      ["up", ["job"]]
    ])
  })

  it("passes queries of exposed metrics and labels (and Prometheus's target labels)", () => {
    for (
      const query of [
        `sum by (controller, result) (rate(controller_runtime_reconcile_total{job="x"}[5m]))`,
        `histogram_quantile(0.5, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket[$__rate_interval])))`,
        `sum by (instance) (process_resident_memory_bytes{namespace="$namespace"})`,
        `label_values(controller_runtime_reconcile_total{namespace="$namespace"}, job)`
      ]
    ) assert.deepStrictEqual(problems(query, exposed), [], query)
  })

  it("fails a misspelled metric, a label the metric lacks, a misspelled label in by (...), and a syntax error", () => {
    assert.deepStrictEqual(problems(`sum(rate(controller_runtime_reconcile_totals[5m]))`, exposed), [
      "controller_runtime_reconcile_totals is not exposed (in: sum(rate(controller_runtime_reconcile_totals[5m])))"
    ])
    assert.match(problems(`controller_runtime_reconcile_total{webhook="x"}`, exposed)[0]!, /has no label webhook/)
    assert.match(
      problems(`sum by (controler) (rate(controller_runtime_reconcile_total[5m]))`, exposed)[0]!,
      /controller_runtime_reconcile_total has no label controler/
    )
    assert.match(
      problems(`label_values(process_resident_memory_bytes, controller)`, exposed)[0]!,
      /no label controller/
    )
    assert.match(problems(`sum(rate(controller_runtime_reconcile_total[5m])`, exposed)[0]!, /does not parse/)
  })

  it("fails the generated dashboard when one of its panels queries a misspelled metric", () => {
    const { dashboard } = committed()
    const panel = dashboard.panels.find((p: any) => p.title === "Reconcile rate")
    panel.targets[0].expr = panel.targets[0].expr.replace(
      "controller_runtime_reconcile_total",
      "controller_runtime_reconcile_count"
    )
    const found = dashboardQueries(dashboard).flatMap((q) => problems(q, exposed))
    assert.isTrue(
      found.some((p) => p.startsWith("controller_runtime_reconcile_count is not exposed")),
      found.join("\n")
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// the running operator

interface Running {
  readonly output: () => string
  readonly stop: Effect.Effect<number | null>
}

/** Starts the main job with `args`; stopped (SIGTERM, then SIGKILL) by the scope or `stop`. */
const start = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync((): Running & { readonly kill: () => void } => {
      const child = spawn(process.execPath, ["--import", "tsx", "examples/webapp/src/main.ts", ...args], {
        cwd: root,
        env: { ...process.env, KUBECONFIG: "" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      return {
        output: () => output,
        stop: Effect.promise(() => {
          child.kill("SIGTERM")
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
          return exited.finally(() => clearTimeout(timer))
        }),
        kill: () => child.kill("SIGKILL")
      }
    }),
    (running) => Effect.sync(running.kill)
  )

/** Waits (polling every 100 ms, up to `seconds`) until `find` returns something. */
const waitFor = <A>(what: string, find: () => A | undefined, output: () => string, seconds = 30) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds * 10; i++) {
      const found = find()
      if (found !== undefined) return found
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`${what} did not happen within ${seconds} s; the operator wrote:\n${output()}`))
  })

/** A port nothing listens on now (the operator's, given on its command line). */
const freePort = Effect.promise(() =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
)

const request = (url: string, body?: unknown) =>
  Effect.promise(() =>
    new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
      const req = (url.startsWith("https:") ? https : http).request(url, {
        method: body === undefined ? "GET" : "POST",
        headers: body === undefined ? {} : { "content-type": "application/json" },
        // the operator's own certificate of this run (nothing in the cluster calls it here)
        rejectUnauthorized: false
      }, (res) => {
        let text = ""
        res.on("data", (chunk: Buffer) => (text += chunk.toString()))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      })
      req.on("error", reject)
      req.end(body === undefined ? undefined : JSON.stringify(body))
    })
  )

/** An AdmissionReview of the creation of a WebApp, as kube-apiserver sends it. */
const review = (uid: string, spec: unknown) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid,
    kind: { group: "apps.reconcile.dev", version: "v1", kind: "WebApp" },
    resource: { group: "apps.reconcile.dev", version: "v1", resource: "webapps" },
    requestKind: { group: "apps.reconcile.dev", version: "v1", kind: "WebApp" },
    requestResource: { group: "apps.reconcile.dev", version: "v1", resource: "webapps" },
    name: "checked",
    namespace: "default",
    operation: "CREATE",
    userInfo: { username: "test" },
    object: {
      apiVersion: WebApp.apiVersion,
      kind: WebApp.kind,
      metadata: { name: "checked", namespace: "default" },
      spec
    },
    oldObject: null,
    dryRun: false,
    options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" }
  }
})

const cluster = Layer.mergeAll(
  Simulators.layerControllerManager({ podReadyDelay: "100 millis" }),
  Faults.layer
).pipe(Layer.provideMerge(TestApiServer.layerWithCluster()))

describe("the dashboard and the alerts against the running operator", () => {
  it.live(
    "every metric and label they query is in the operator's /metrics",
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
          yield* KubeClient.create(WebApp, {
            apiVersion: WebApp.apiVersion,
            kind: WebApp.kind,
            metadata: { name: "shop", namespace: "default" },
            spec: { image: "shop:1", replicas: 1, port: 80 }
          }, { namespace: "default" })
        }).pipe(Effect.provide(client))

        const [metricsPort, webhookPort] = [yield* freePort, yield* freePort]
        const operator = yield* start([
          "--kubeconfig",
          server.kubeconfigPath,
          "--install-crds",
          "--leader-elect",
          `--metrics-port=${metricsPort}`,
          `--webhook-port=${webhookPort}`
        ])
        yield* waitFor("a successful reconcile", () =>
          /reconcile default\/shop .*→ success/.exec(operator.output()) ?? undefined, operator.output)
        const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
        const webhooksUrl = `https://127.0.0.1:${webhookPort}`

        // admission requests, as the API server would send them: a validation, a defaulting, a malformed review
        const allowed = yield* request(
          `${webhooksUrl}/validate-apps-reconcile-dev-v1-webapp`,
          review("a", { image: "nginx:1", replicas: 1, port: 80 })
        )
        assert.strictEqual(allowed.status, 200, allowed.text)
        yield* request(`${webhooksUrl}/mutate-apps-reconcile-dev-v1-webapp`, review("b", { image: "nginx", port: 80 }))
        yield* request(`${webhooksUrl}/validate-apps-reconcile-dev-v1-webapp`, { kind: "nonsense" })

        // an app whose spec does not decode (the CRD made laxer, as an older release's may be), and a dropped watch
        yield* Effect.gen(function*() {
          yield* KubeClient.patch(Resource.CustomResourceDefinition, "webapps.apps.reconcile.dev", laxCrdPatch, {
            type: "merge"
          })
          yield* KubeClient.patch(WebAppAnySpec, "shop", { spec: { replicas: "three" } }, {
            type: "merge",
            namespace: "default"
          })
        }).pipe(Effect.provide(client))
        yield* waitFor("the undecodable app", () =>
          /InvalidSpec|does not decode|undecodable/i.exec(operator.output()) ?? undefined, operator.output)
        yield* faults.dropWatches

        const { dashboard, rule } = committed()
        const queries = [...dashboardQueries(dashboard), ...ruleQueries(rule)]
        assert.isAtLeast(dashboardQueries(dashboard).length, 30)
        assert.isAtLeast(ruleQueries(rule).length, 8)
        // the series appear as the operator meets the events above: scrape until nothing is missing (or 30 s)
        let last: ReadonlyArray<string> = []
        for (let attempt = 0; attempt < 60; attempt++) {
          const scraped = yield* request(metricsUrl)
          assert.strictEqual(scraped.status, 200)
          const exposed = parseExposition(scraped.text)
          last = queries.flatMap((q) =>
            problems(q, exposed)
          )
          if (last.length === 0) {
            break
          }
          yield* Effect.sleep("500 millis")
        }
        assert.deepStrictEqual(last, [], `the operator wrote:\n${operator.output()}`)

        assert.strictEqual(yield* operator.stop, 0, operator.output())
      }).pipe(Effect.provide(cluster), Effect.scoped),
    { timeout: 90_000 }
  )
})
