/**
 * Child processes for the tests: the `reconcile` bin from its TypeScript source, and the real kubectl against a
 * TestApiServer (never the user's ~/.kube: an explicit --kubeconfig, a HOME and cache of its own).
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const root = path.join(import.meta.dirname, "..", "..", "..", "..")
const bin = path.join(root, "packages", "cli", "src", "bin", "reconcile.ts")

export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const exec = (file: string, args: ReadonlyArray<string>, options: {
  readonly cwd?: string
  readonly env?: Record<string, string>
  readonly stdin?: string
}) =>
  Effect.callback<Result>((resume) => {
    const child = execFile(
      file,
      [...args],
      { cwd: options.cwd ?? root, env: options.env ?? process.env, timeout: 20_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resume(Effect.succeed({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
          stdout,
          stderr
        }))
    )
    child.stdin?.end(options.stdin ?? "")
  })

/** `reconcile <args>` run from `cwd` (default the repository root). */
export const reconcile = (args: ReadonlyArray<string>, cwd?: string) =>
  exec(process.execPath, ["--import", "tsx", bin, ...args], cwd === undefined ? {} : { cwd })

/** `kubectl --kubeconfig <kubeconfig> <args>` with its own HOME. */
export const kubectl = (kubeconfig: string, args: ReadonlyArray<string>, stdin?: string) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "cli-kubectl-"))
  return exec(
    "/usr/bin/kubectl",
    ["--kubeconfig", kubeconfig, "--cache-dir", path.join(home, "cache"), ...args],
    { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, ...(stdin === undefined ? {} : { stdin }) }
  ).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(home, { recursive: true, force: true }))))
}
