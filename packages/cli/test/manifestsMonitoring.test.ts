/**
 * `reconcile manifests --dashboard --alerts`: the Grafana dashboard, the PrometheusRule and the ServiceMonitor, in
 * `DIR/monitoring/` (which `kubectl apply -f DIR` leaves out) and the dashboard's JSON in `DIR/grafana/`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Manifests } from "@reconcile/kube"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseAllDocuments } from "yaml"
import { main } from "../src/internal/manifestsCommand.js"
import { operator } from "./fixtures/greeting.js"
import { root } from "./support/processes.js"

const command = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const code = yield* main(argv, {
      cwd: root,
      stdout: (text) => Effect.sync(() => void (stdout += text)),
      stderr: (text) => Effect.sync(() => void (stderr += text))
    })
    return { code, stdout, stderr }
  })

const entry = "packages/cli/test/fixtures/greeting.ts"

/** Every file under `dir`, relative to it. */
const listing = (dir: string) =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((f) => fs.statSync(path.join(dir, f)).isFile())

describe("reconcile manifests --dashboard --alerts", () => {
  it.effect(
    "--out DIR: the files of Manifests.files with both options, the monitoring ones in subdirectories",
    () =>
      Effect.gen(function*() {
        const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cli-monitoring-")), "config")
        const result = yield* command(["manifests", "--entry", entry, "--out", out, "--dashboard", "--alerts"])
        assert.strictEqual(result.code, 0, result.stderr)
        const expected = Manifests.files(yield* Manifests.generate(operator, { dashboard: true, alerts: true }))
        assert.deepStrictEqual(listing(out).sort(), Object.keys(expected).sort())
        for (const [file, text] of Object.entries(expected)) {
          assert.strictEqual(fs.readFileSync(path.join(out, file), "utf8"), text, file)
        }
        assert.include(result.stderr, `wrote ${path.join(out, "grafana", "greeting-operator.json")}`)
        const monitoring = parseAllDocuments(fs.readFileSync(path.join(out, "monitoring", "prometheus.yaml"), "utf8"))
          .map((d) => d.toJS().kind)
        assert.deepStrictEqual(monitoring, ["ServiceMonitor", "PrometheusRule"])
        // the JSON Grafana imports
        const dashboard = JSON.parse(fs.readFileSync(path.join(out, "grafana", "greeting-operator.json"), "utf8"))
        assert.deepStrictEqual(dashboard, yield* Manifests.dashboard(operator))
        fs.rmSync(path.dirname(out), { recursive: true, force: true })
      }),
    { timeout: 60_000 }
  )

  it.effect("on standard output: the objects of each flag", () =>
    Effect.gen(function*() {
      const kindsOf = (text: string) =>
        parseAllDocuments(text).map((d) => d.toJS().kind as string).filter((k) =>
          ["ServiceMonitor", "ConfigMap", "PrometheusRule"].includes(k)
        )
      assert.deepStrictEqual(kindsOf((yield* command(["manifests", "--entry", entry, "--dashboard"])).stdout), [
        "ServiceMonitor",
        "ConfigMap"
      ])
      assert.deepStrictEqual(kindsOf((yield* command(["manifests", "--entry", entry, "--alerts"])).stdout), [
        "ServiceMonitor",
        "PrometheusRule"
      ])
      const given = yield* command(["manifests", "--entry", entry, "--alerts=yes"])
      assert.strictEqual(given.code, 2)
      assert.include(given.stderr, "--alerts takes no value")
    }), { timeout: 60_000 })

  it.effect("--help describes both", () =>
    Effect.gen(function*() {
      const help = yield* command(["manifests", "--help"])
      assert.include(help.stdout, "--dashboard")
      assert.include(help.stdout, "--alerts")
    }))
})
