/**
 * The main job as a process (`Main.run`, test/fixtures/main.ts): SIGTERM and SIGINT stop it cleanly and remove the
 * embedded cluster's kubeconfig. (Exit codes 1 and 2 through `Main.run`: examples/webapp/test/cli.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..", "..", "..")
const main = path.join(import.meta.dirname, "fixtures", "main.ts")

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** The embedded cluster's kubeconfig, as the "Try it" text showed it (and whether it existed then). */
  readonly kubeconfig: string | undefined
  readonly existedWhileRunning: boolean
}

/** Runs the main job; once `until` matches its stdout, sends `signal`. */
const run = (
  args: ReadonlyArray<string>,
  options: { readonly until?: RegExp; readonly signal?: NodeJS.Signals } = {}
) =>
  Effect.callback<Run>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", main, ...args], {
      cwd: root,
      env: { ...process.env, KUBECONFIG: "", LOG_LEVEL: "error" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let kubeconfig: string | undefined
    let existedWhileRunning = false
    let signalled = false
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!signalled && options.until !== undefined && options.until.test(stdout)) {
        signalled = true
        kubeconfig = /KUBECONFIG=(\S+)/.exec(stdout)?.[1]
        existedWhileRunning = kubeconfig !== undefined && fs.existsSync(kubeconfig)
        child.kill(options.signal ?? "SIGTERM")
      }
    })
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr, kubeconfig, existedWhileRunning }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("Main.run as a process", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it.live(
      `${signal}: a clean stop (exit 0), and the kubeconfig (it holds a token) is removed`,
      () =>
        Effect.gen(function*() {
          const result = yield* run([], { until: /Try it[\s\S]*readyz/, signal })
          assert.strictEqual(result.code, 0, result.stdout + result.stderr)
          assert.isDefined(result.kubeconfig, result.stdout)
          assert.isTrue(result.existedWhileRunning)
          assert.isFalse(fs.existsSync(result.kubeconfig!), "the kubeconfig file is gone")
          assert.isFalse(fs.existsSync(path.dirname(result.kubeconfig!)), "its directory is gone")
          assert.include(result.stdout, "✓ default/hello is Ready")
        }),
      { timeout: 30_000 }
    )
  }
})
