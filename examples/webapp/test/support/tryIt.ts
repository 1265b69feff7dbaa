/**
 * The "Try it" lines of `npm start` (`src/samples.ts`), run as a reader runs them: each line in bash (they use a
 * here-string), with the real kubectl, `KUBECONFIG` pointing at the server and a HOME of its own (never the user's
 * ~/.kube). {@link assertTryIt} checks what kubectl printed: the webhooks' default, warning and denial.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { deletionProtection } from "../../src/webhooks.js"

/** What one line printed. */
export interface Ran {
  readonly line: string
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `line` in bash with `KUBECONFIG=kubeconfig` (a `KUBECONFIG=… ` prefix on the line wins, as in a shell). */
export const runLine = (line: string, kubeconfig: string): Effect.Effect<Ran> =>
  Effect.promise(() => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "webapp-try-it-"))
    return new Promise<Ran>((resolve) => {
      execFile(
        "/bin/bash",
        ["-c", line],
        {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig },
          timeout: 30_000
        },
        (error, stdout, stderr) => {
          fs.rmSync(home, { recursive: true, force: true })
          resolve({ line, code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
        }
      ).stdin?.end()
    })
  })

/** Runs every line in order. */
export const runAll = (lines: ReadonlyArray<string>, kubeconfig: string): Effect.Effect<ReadonlyArray<Ran>> =>
  Effect.forEach(lines, (line) => runLine(line, kubeconfig))

const show = (ran: ReadonlyArray<Ran>) =>
  ran.map((r) => `$ ${r.line}\n${r.stdout}${r.stderr}(exit ${r.code})`).join("\n")

/**
 * The lines did what their comments say: the sample listed and patched; `hello` created with a Warning naming
 * `spec.image` and stored with `replicas: 1`; the protected sample's delete denied, naming the annotation, and
 * allowed once it is removed.
 */
export const assertTryIt = (ran: ReadonlyArray<Ran>): void => {
  const all = show(ran)
  assert.strictEqual(ran.length, 8, all)
  const [get, patch, apply, replicas, protect, denied, unprotect, deleted] = ran as [
    Ran,
    Ran,
    Ran,
    Ran,
    Ran,
    Ran,
    Ran,
    Ran
  ]
  for (const r of [get, patch, apply, replicas, protect, unprotect, deleted]) assert.strictEqual(r.code, 0, all)
  assert.include(get.stdout, "webapp.apps.reconcile.dev/sample", all)
  assert.include(patch.stdout, "webapp.apps.reconcile.dev/sample patched", all)
  assert.include(apply.stdout, "webapp.apps.reconcile.dev/hello created", all)
  assert.include(apply.stderr, `Warning: spec.image: "nginx" has no pinned tag`, all)
  assert.strictEqual(replicas.stdout, "1\n", all)
  assert.include(protect.stdout, "webapp.apps.reconcile.dev/sample annotated", all)
  assert.notStrictEqual(denied.code, 0, all)
  assert.include(
    denied.stderr,
    `Error from server (Forbidden): admission webhook "vwebapp.apps.reconcile.dev" denied the request: ` +
      `WebApp default/sample is protected by the annotation ${deletionProtection}: "true"`,
    all
  )
  assert.include(deleted.stdout, `webapp.apps.reconcile.dev "sample" deleted`, all)
}
