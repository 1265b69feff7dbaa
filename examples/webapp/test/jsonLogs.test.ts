/**
 * `npm start -- --log-format json` as a process: every line it writes on stdout and stderr, from the start to the
 * stop by SIGTERM, parses as a JSON record — the embedded cluster, the webhooks, the sample's reconciles
 * (`reconcile default/sample gen=1 → success` in text mode), its status, the "Try it" text — and carries the facts of
 * the text as fields. (In-process, the same for each narration line: packages/cli/test/jsonLogs.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..", "..", "..")

type Line = { readonly time: string; readonly level: string; readonly msg: string } & Record<string, unknown>

/** Runs the main job with `args` until its stdout has a line matching `until`, then SIGTERM; what it wrote. */
const run = (args: ReadonlyArray<string>, until: RegExp) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/webapp/src/main.ts", ...args], {
      cwd: root,
      env: { ...process.env, KUBECONFIG: "", LOG_FORMAT: "", LOG_LEVEL: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let stopping = false
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!stopping && until.test(stdout)) {
        stopping = true
        child.kill("SIGTERM")
      }
    })
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const parse = (text: string): ReadonlyArray<Line> =>
  text.split("\n").filter((line) => line !== "").map((line) => {
    let record: Line
    try {
      record = JSON.parse(line) as Line
    } catch {
      return assert.fail(`not a JSON record: ${line}`)
    }
    assert.isString(record.time, line)
    assert.isString(record.level, line)
    assert.isString(record.msg, line)
    return record
  })

describe("npm start -- --log-format json", () => {
  it.live(
    "every line of stdout and stderr is a JSON record, the narration's facts are fields, until SIGTERM stops it",
    () =>
      Effect.gen(function*() {
        const result = yield* run(["--log-format", "json"], /"msg":"try it"[^\n]*\n[\s\S]*"msg":"reconciled"/)
        assert.strictEqual(result.code, 0, result.stdout + result.stderr)
        const out = parse(result.stdout)
        const err = parse(result.stderr)
        assert.deepStrictEqual(err, [])
        const has = (msg: string, fields: Record<string, unknown> = {}) =>
          assert.isDefined(
            out.find((l) => l.msg === msg && Object.entries(fields).every(([k, v]) => l[k] === v)),
            `${msg} ${JSON.stringify(fields)}`
          )
        has("started the embedded Kubernetes API server")
        has("installed", { kind: "CustomResourceDefinition", name: "webapps.apps.reconcile.dev" })
        has("serving webhooks")
        has("installed", { kind: "MutatingWebhookConfiguration", name: "webapp-operator-mutating" })
        has("installed", { kind: "ValidatingWebhookConfiguration", name: "webapp-operator-validating" })
        has("installed the conversion webhook", { name: "webapps.apps.reconcile.dev" })
        has("applied", { kind: "WebApp", object: "default/sample" })
        has("reconciled", {
          object: "default/sample",
          generation: 1,
          outcome: "success",
          controller: "webapp-controller"
        })
        has("ready", { kind: "WebApp", object: "default/sample" })
        has("try it")
        const reconciled = out.find((l) => l.msg === "reconciled")!
        assert.isNumber(reconciled.queueDepth)
        assert.isString(reconciled.reconcileID)
      }),
    { timeout: 60_000 }
  )
})
