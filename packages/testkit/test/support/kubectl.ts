/**
 * The real kubectl binary, run by the tests against a TestApiServer (or any kubeconfig file).
 *
 * kubectl never sees the user's ~/.kube (nor $KUBECONFIG): every run gets an explicit --kubeconfig, a --cache-dir
 * and a HOME in a temporary directory of its own, and an environment holding only PATH and that HOME. A developer's
 * real clusters, contexts and discovery cache can neither leak into a test nor be touched by one.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TestApiServer } from "../../src/index.js"

export const KUBECTL = "/usr/bin/kubectl"

/** A TestApiServer (its written kubeconfig is used) or the path of a kubeconfig file. */
export type Target = TestApiServer.TestApiServer.Service | string

export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface Options {
  /** An existing HOME to use; otherwise a fresh one is made under the OS temp dir with `prefix`. */
  readonly home?: string
  /** The temp dir prefix of a fresh HOME (default `testkit-kubectl-`). */
  readonly prefix?: string
  /** Milliseconds before kubectl is killed (default 20 s). */
  readonly timeout?: number
  /** Bytes of stdout/stderr kept (Node's default if unset). */
  readonly maxBuffer?: number
}

export interface Kubectl {
  /** kubectl's HOME; `<home>/cache` is its --cache-dir. */
  readonly home: string
  /** The environment kubectl runs in: PATH and HOME only. */
  readonly env: Record<string, string>
  /** The full argument list (--kubeconfig, --cache-dir, then `args`), for `spawn` of long-running commands. */
  readonly argv: (target: Target, args: ReadonlyArray<string>) => Array<string>
  /** Runs kubectl to its exit (stdin, if given, is written and closed); never fails, the exit code is in the result. */
  readonly run: (target: Target, args: ReadonlyArray<string>, stdin?: string) => Effect.Effect<Result>
  /** Runs kubectl and asserts exit code 0: its stdout. */
  readonly ok: (target: Target, args: ReadonlyArray<string>, stdin?: string) => Effect.Effect<string>
}

/** A kubectl runner with a HOME of its own: `make("testkit-foo-")` or `make({ prefix, timeout, ... })`. */
export const make = (options: string | Options = {}): Kubectl => {
  const o: Options = typeof options === "string" ? { prefix: options } : options
  const home = o.home ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), o.prefix ?? "testkit-kubectl-"))
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }
  const argv = (target: Target, args: ReadonlyArray<string>) => [
    "--kubeconfig",
    typeof target === "string" ? target : target.kubeconfigPath,
    "--cache-dir",
    Path.join(home, "cache"),
    ...args
  ]
  const run = (target: Target, args: ReadonlyArray<string>, stdin?: string) =>
    Effect.promise(() =>
      new Promise<Result>((resolve) => {
        const child = execFile(
          KUBECTL,
          argv(target, args),
          {
            env,
            timeout: o.timeout ?? 20_000,
            ...(o.maxBuffer === undefined ? {} : { maxBuffer: o.maxBuffer })
          },
          (error, stdout, stderr) =>
            resolve({ code: error === null ? 0 : (typeof error.code === "number" ? error.code : 1), stdout, stderr })
        )
        child.stdin?.end(stdin ?? "")
      })
    )
  const ok = (target: Target, args: ReadonlyArray<string>, stdin?: string) =>
    Effect.map(run(target, args, stdin), (r) => {
      assert.strictEqual(r.code, 0, `kubectl ${args.join(" ")} failed (${r.code}): ${r.stderr}${r.stdout}`)
      return r.stdout
    })
  return { home, env, argv, run, ok }
}
