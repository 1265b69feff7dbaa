/**
 * Shell completions (effect/cli's `--completions`) and the one-line errors of a bad command line, for both the
 * `reconcile` command and the main job.
 */
import { assert, describe, it } from "@effect/vitest"
import { Console, Effect } from "effect"
import { TestConsole } from "effect/testing"
import { Main } from "../src/index.js"
import { main } from "../src/internal/manifestsCommand.js"
import { operator } from "./fixtures/greeting.js"

/** `reconcile <argv>` in-process: its exit code and output. */
const reconcile = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const code = yield* main(argv, {
      cwd: process.cwd(),
      stdout: (text) => Effect.sync(() => void (stdout += text)),
      stderr: (text) => Effect.sync(() => void (stderr += text))
    })
    return { code, stdout, stderr }
  })

/** The main job in-process, to its end (nothing here starts an operator). */
const program = (argv: ReadonlyArray<string>, command?: string) =>
  Effect.gen(function*() {
    const console = yield* TestConsole.make
    const code = yield* Main.program(operator, { argv, env: {}, ...(command === undefined ? {} : { command }) }).pipe(
      Effect.provideService(Console.Console, console)
    )
    const out = (yield* console.logLines).map(String).join("\n")
    const err = (yield* console.errorLines).map(String)
    return { code, out, err }
  })

describe("reconcile --completions", () => {
  it.effect("a script for each shell, naming the command, its subcommand and their flags", () =>
    Effect.gen(function*() {
      const bash = yield* reconcile(["--completions", "bash"])
      assert.strictEqual(bash.code, 0, bash.stderr)
      assert.include(bash.stdout, "complete -F _reconcile reconcile")
      assert.include(bash.stdout, "manifests")
      assert.include(bash.stdout, "--replicas")
      const zsh = yield* reconcile(["--completions", "zsh"])
      assert.isTrue(zsh.stdout.startsWith("#compdef reconcile"))
      const fish = yield* reconcile(["--completions", "fish"])
      assert.include(fish.stdout, "complete -c reconcile")
      const unknown = yield* reconcile(["--completions", "tcsh"])
      assert.strictEqual(unknown.code, 2)
    }))

  it.effect("a bad command line: one error line naming the command to ask for help, exit 2", () =>
    Effect.gen(function*() {
      const none = yield* reconcile([])
      assert.deepStrictEqual([none.code, none.stdout], [2, ""])
      assert.strictEqual(none.stderr, "error: no command given (see reconcile --help)\n")
      const typo = yield* reconcile(["manifest"])
      assert.include(typo.stderr, `unknown command "manifest" (did you mean manifests?)`)
      const flag = yield* reconcile(["manifests", "--replica", "2"])
      assert.strictEqual(flag.code, 2)
      assert.strictEqual(
        flag.stderr,
        "error: unknown option --replica (did you mean --replicas?) (see reconcile manifests --help)\n"
      )
    }))
})

describe("the main job's --completions", () => {
  it.effect("run by one name (Main.Options.command): the script for that executable", () =>
    Effect.gen(function*() {
      const result = yield* program(["--completions", "bash"], "greeting-operator")
      assert.strictEqual(result.code, 0, result.err.join("\n"))
      assert.include(result.out, "complete -F _greeting_operator greeting-operator")
      assert.include(result.out, "--leader-election-namespace")
    }))

  it.effect("run as `npm start --`: none, and the error says why", () =>
    Effect.gen(function*() {
      const result = yield* program(["--completions", "bash"])
      assert.strictEqual(result.code, 2)
      assert.strictEqual(result.out, "")
      assert.strictEqual(result.err.length, 1)
      assert.include(result.err[0], `--completions is for a program run by one name`)
    }))

  it.effect("a switch takes no value, in either form", () =>
    Effect.gen(function*() {
      for (const argv of [["--leader-elect=false"], ["--in-cluster", "true"]]) {
        const result = yield* program(argv)
        assert.strictEqual(result.code, 2)
        assert.match(result.err[0]!, /^error: --(leader-elect|in-cluster) takes no value/)
      }
    }))
})
