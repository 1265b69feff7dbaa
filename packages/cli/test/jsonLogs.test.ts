/**
 * `--log-format json` means every line: the main job's narration (`Installed …`, `Applied …`, the "Try it" text, an
 * operator's own `Main.narrate` lines), its warnings and its `error: …` lines become JSON records with the same facts
 * as fields; in text mode they stay as they are. In-process (`Main.program` with a console of its own); the process
 * as a whole (every byte of stdout and stderr): examples/webapp/test/jsonLogs.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Reconcile } from "@reconcile/core"
import { KubeController, Operator, Status, Undecodable } from "@reconcile/kube"
import { Console, Effect, Fiber } from "effect"
import { TestConsole } from "effect/testing"
import { Main } from "../src/index.js"
import { Greeting, samples } from "./fixtures/greeting.js"

/** The Greeting operator, whose reconciles narrate themselves with `Main.narrate`. */
const operator = Operator.make({
  name: "greeting-operator",
  resources: [Greeting],
  controllers: [KubeController.make({
    name: "greeting",
    for: Greeting,
    reconcile: (greeting) =>
      Main.narrate(
        `reconciled ${greeting.metadata.namespace}/${greeting.metadata.name}`,
        "reconciled",
        { object: `${greeting.metadata.namespace}/${greeting.metadata.name}`, generation: greeting.metadata.generation }
      ).pipe(
        Effect.andThen(
          Status.setConditions(Greeting, greeting, [{ type: "Ready", status: "True", reason: "Greeted" }])
        ),
        Reconcile.asRetryable
      ),
    onUndecodable: Undecodable.terminal
  })]
})

type Line = { readonly time: string; readonly level: string; readonly msg: string } & Record<string, unknown>

/** Runs the program in the background with a console of its own. */
const start = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const console = yield* TestConsole.make
    const fiber = yield* Main.program(operator, { argv, env, samples }).pipe(
      Effect.provideService(Console.Console, console),
      Effect.forkScoped
    )
    const out = Effect.map(console.logLines, (lines) => lines.map(String))
    const err = Effect.map(console.errorLines, (lines) => lines.map(String))
    return { fiber, out, err }
  })

/** Every line as a JSON record (each console call is one line: none holds a newline). */
const records = (lines: ReadonlyArray<string>): ReadonlyArray<Line> =>
  lines.map((line) => {
    assert.notInclude(line, "\n", "one record per line")
    const record = JSON.parse(line) as Line
    assert.isString(record.time, line)
    assert.isString(record.level, line)
    assert.isString(record.msg, line)
    return record
  })

/** Polls (real time) until `check` holds. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = 20) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      if (yield* check) return
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

const find = (lines: ReadonlyArray<Line>, msg: string, fields: Record<string, unknown> = {}): Line => {
  const found = lines.find((l) => l.msg === msg && Object.entries(fields).every(([k, v]) => l[k] === v))
  assert.isDefined(
    found,
    `a record ${msg} ${JSON.stringify(fields)} in\n${lines.map((l) => JSON.stringify(l)).join("\n")}`
  )
  return found!
}

describe("--log-format json: every line the main job writes is a JSON record", () => {
  it.live(
    "the embedded run: its narration as records with the same facts; the KUBECONFIG warning on stderr; profiles",
    () =>
      Effect.gen(function*() {
        const program = yield* start(
          ["--log-format", "json", "--namespace", "demo", "--profiling-port", "0"],
          { KUBECONFIG: "/home/someone/.kube/production" }
        )
        yield* eventually(
          "the try it record",
          Effect.map(program.out, (lines) => lines.some((l) => l.includes(`"msg":"try it"`)))
        )
        const out = records(yield* program.out)
        find(out, "started the embedded Kubernetes API server")
        find(out, "installed", { kind: "CustomResourceDefinition", name: "greetings.example.com" })
        find(out, "created", { kind: "Namespace", name: "demo" })
        find(out, "applied", { kind: "Greeting", object: "demo/hello" })
        find(out, "ready", { kind: "Greeting", object: "demo/hello" })
        const status = find(out, "status", { object: "demo/hello" })
        assert.deepStrictEqual(status.conditions, [{ type: "Ready", status: "True", reason: "Greeted" }])
        // the operator's own narration, with the reconcile's log annotations
        const reconciled = find(out, "reconciled", { object: "demo/hello", generation: 1 })
        assert.strictEqual(reconciled.controller, "greeting")
        assert.isString(reconciled.reconcileID)

        const tryIt = find(out, "try it")
        assert.match(String(tryIt.kubeconfig), /\/kubeconfig$/)
        assert.deepStrictEqual(tryIt.commands, ["kubectl get greetings -n demo"])
        assert.match(String(tryIt.metrics), /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
        assert.match(String(tryIt.profiles), /^http:\/\/127\.0\.0\.1:\d+\/debug\/pprof\/$/)
        assert.strictEqual(find(out, "serving profiles").address, tryIt.profiles)
        const index = yield* Effect.promise(() => fetch(String(tryIt.profiles)).then((r) => r.text()))
        assert.include(index, "/debug/pprof/heap")
        // no text in between: the "Try it" block and the narration lines are not printed as they are in text mode
        assert.isUndefined(out.find((l) => l.msg.startsWith("Try it") || l.msg.startsWith("Applied")))

        const err = records(yield* program.err)
        assert.strictEqual(err.length, 1, JSON.stringify(err))
        assert.strictEqual(err[0]!.level, "warn")
        assert.strictEqual(err[0]!.msg, "KUBECONFIG is set but ignored")
        assert.strictEqual(err[0]!.kubeconfig, "/home/someone/.kube/production")
        yield* Fiber.interrupt(program.fiber)
      }),
    { timeout: 40_000 }
  )

  it.live("a failure: one error record on stderr (exit code 1), nothing else", () =>
    Effect.gen(function*() {
      const program = yield* start(["--log-format", "json", "--kubeconfig", "/nonexistent/kubeconfig"])
      assert.strictEqual(yield* Fiber.join(program.fiber), 1)
      assert.deepStrictEqual(yield* program.out, [])
      const err = records(yield* program.err)
      assert.strictEqual(err.length, 1)
      assert.include(err[0], {
        level: "error",
        msg: "kubeconfig /nonexistent/kubeconfig: file not found",
        exitCode: 1
      })
    }))

  it.live("an invalid command line: a record when it (or LOG_FORMAT) asks for JSON, else the text line; exit 2", () =>
    Effect.gen(function*() {
      for (
        const [argv, env] of [
          [["--log-format", "json", "--install-crds"], {}],
          [["--log-format=json", "--bogus"], {}],
          [["--install-crds"], { LOG_FORMAT: "json" }]
        ] as const
      ) {
        const program = yield* start(argv, env)
        assert.strictEqual(yield* Fiber.join(program.fiber), 2)
        const err = records(yield* program.err)
        assert.strictEqual(err.length, 1)
        assert.strictEqual(err[0]!.level, "error")
        assert.strictEqual(err[0]!.exitCode, 2)
        const bogus = (argv as ReadonlyArray<string>).includes("--bogus")
        assert.include(err[0]!.msg, bogus ? "unknown option --bogus" : "--install-crds does nothing")
      }
      const text = yield* start(["--install-crds"])
      assert.strictEqual(yield* Fiber.join(text.fiber), 2)
      assert.match((yield* text.err)[0]!, /^error: --install-crds does nothing on the embedded cluster/)
    }))
})

describe("text mode: the narration as it was", () => {
  it.live(
    "logfmt (the default): the lines, an operator's Main.narrate text, the Profiles address in Try it",
    () =>
      Effect.gen(function*() {
        const program = yield* start(["--profiling-port", "0"], { LOG_LEVEL: "error" })
        yield* eventually("Try it", Effect.map(program.out, (lines) => lines.some((l) => l.startsWith("Try it"))))
        const out = (yield* program.out).join("\n")
        assert.include(out, "Installed CustomResourceDefinition greetings.example.com\n")
        assert.include(out, "Applied Greeting default/hello\n")
        assert.include(out, "reconciled default/hello\n")
        assert.include(out, "  default/hello status: Ready=True (Greeted)\n")
        assert.include(out, "\n✓ default/hello is Ready\n")
        const endpoint = (name: string, path: string) => `${name}: http://127\\.0\\.0\\.1:\\d+${path}`
        const endpoints = [
          endpoint("Metrics", "/metrics"),
          endpoint("Health", "/readyz"),
          endpoint("Profiles", "/debug/pprof/"),
          endpoint("Inspector", "/")
        ]
        assert.match(out, new RegExp(`\\n${endpoints.join("   ")}\\n`))
        assert.deepStrictEqual(yield* program.err, [])
        yield* Fiber.interrupt(program.fiber)
      }),
    { timeout: 40_000 }
  )
})
