/**
 * `--inspector-port N` and `--inspector-bind-address ADDR`: the inspector is off unless asked for, on 127.0.0.1
 * unless told otherwise, in every mode; on the embedded cluster its URL is in "Try it" and its API shows the
 * operator's controller and the sample's reconciles. (The server and the recording: packages/core/test/Inspector*.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Reconcile } from "@reconcile/core"
import { KubeController, Operator, Status, Undecodable } from "@reconcile/kube"
import { Console, Effect, Exit, Fiber } from "effect"
import { TestConsole } from "effect/testing"
import { Main } from "../src/index.js"
import { Greeting, samples } from "./fixtures/greeting.js"

const parse = (argv: ReadonlyArray<string>) => Effect.exit(Main.parseArgs(argv, {}, "npm start --"))

const operator = Operator.make({
  name: "greeting-operator",
  resources: [Greeting],
  controllers: [KubeController.make({
    name: "greeting",
    for: Greeting,
    reconcile: (greeting) =>
      Status.setConditions(Greeting, greeting, [{ type: "Ready", status: "True", reason: "Greeted" }]).pipe(
        Reconcile.asRetryable
      ),
    onUndecodable: Undecodable.terminal
  })]
})

/** Polls (real time) until `check` gives a value. */
const eventually = <A>(what: string, check: Effect.Effect<A | undefined>, seconds = 20) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

const getJson = (url: string) => Effect.promise(() => fetch(url).then((r) => r.json() as Promise<any>))

describe("--inspector-port, --inspector-bind-address", () => {
  it.effect("on a free loopback port on a local cluster, off on a named one; a port in every mode", () =>
    Effect.gen(function*() {
      const embedded = yield* parse([])
      assert.deepStrictEqual(Exit.isSuccess(embedded) && embedded.value.inspector, { port: 0, host: undefined })
      for (const named of [["--kubeconfig", "/tmp/kubeconfig"], ["--in-cluster"]]) {
        const off = yield* parse(named)
        assert.isTrue(Exit.isSuccess(off) && off.value.inspector === undefined, named.join(" "))
      }
      for (const mode of [[], ["--kubeconfig", "/tmp/kubeconfig"], ["--in-cluster"]]) {
        const port = yield* parse([...mode, "--inspector-port", "9090"])
        assert.deepStrictEqual(Exit.isSuccess(port) && port.value.inspector, { port: 9090, host: undefined })
      }
      const bound = yield* parse(["--inspector-port=0", "--inspector-bind-address", "0.0.0.0"])
      assert.deepStrictEqual(Exit.isSuccess(bound) && bound.value.inspector, { port: 0, host: "0.0.0.0" })
    }))

  it.effect("refused: an address without a port, an address that is not an IP, a port out of range", () =>
    Effect.gen(function*() {
      for (
        const [argv, message] of [
          [["--inspector-bind-address", "0.0.0.0"], "--inspector-bind-address does nothing without --inspector-port"],
          [
            ["--inspector-port", "9090", "--inspector-bind-address", "example.com"],
            `--inspector-bind-address must be an IP address (127.0.0.1, 0.0.0.0, ::), not "example.com"`
          ],
          [["--inspector-port", "70000"], `--inspector-port must be a port number from 0 to 65535`]
        ] as const
      ) {
        const exit = yield* parse(argv)
        assert.isTrue(Exit.isFailure(exit), argv.join(" "))
        assert.include(String(Exit.isFailure(exit) && exit.cause.reasons[0]), message)
      }
    }))

  it.live(
    "embedded: Inspector: URL in Try it, `serving the inspector` logged, the API shows the sample's reconcile",
    () =>
      Effect.gen(function*() {
        const console = yield* TestConsole.make
        const fiber = yield* Main.program(operator, {
          argv: ["--inspector-port", "0"],
          env: { LOG_LEVEL: "info" },
          samples
        }).pipe(Effect.provideService(Console.Console, console), Effect.forkScoped)
        const out = Effect.map(console.logLines, (lines) => lines.map(String).join("\n"))
        const url = yield* eventually(
          "Inspector: in Try it",
          Effect.map(out, (text) => /Inspector: (http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(text)?.[1])
        )
        assert.match(yield* out, /serving the inspector.*address=http:\/\/127\.0\.0\.1:\d+\//)
        const controllers = yield* getJson(`${url}api/controllers`)
        assert.deepStrictEqual(controllers.controllers.map((c: { name: string }) => c.name), ["greeting"])
        const key = yield* eventually(
          "the sample's reconcile",
          Effect.map(
            getJson(`${url}api/controllers/greeting/keys/default%2Fhello`),
            (k) => k.reconciles?.some((r: { outcome?: string }) => r.outcome === "success") ? k : undefined
          )
        )
        assert.strictEqual(key.key, "default/hello")
        assert.strictEqual(key.events[0].type, "Create")
        yield* Fiber.interrupt(fiber)
      }),
    { timeout: 40_000 }
  )
})
