/**
 * `--profiling-port N` and `--profiling-bind-address ADDR`: the profiling server is off unless asked for, on
 * 127.0.0.1 unless told otherwise, in every mode. (The server: packages/core/test/ProfilingServer.test.ts; the main
 * job serving it and naming it in "Try it": test/jsonLogs.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Main } from "../src/index.js"

const parse = (argv: ReadonlyArray<string>) => Effect.exit(Main.parseArgs(argv, {}, "npm start --"))

describe("--profiling-port, --profiling-bind-address", () => {
  it.effect("off by default; a port (0: a free one) in every mode, with the address given or none", () =>
    Effect.gen(function*() {
      const none = yield* parse([])
      assert.isTrue(Exit.isSuccess(none) && none.value.profiling === undefined)
      for (const mode of [[], ["--kubeconfig", "/tmp/kubeconfig"], ["--in-cluster"]]) {
        const port = yield* parse([...mode, "--profiling-port", "6060"])
        assert.deepStrictEqual(Exit.isSuccess(port) && port.value.profiling, { port: 6060, host: undefined })
      }
      const bound = yield* parse(["--profiling-port=0", "--profiling-bind-address", "0.0.0.0"])
      assert.deepStrictEqual(Exit.isSuccess(bound) && bound.value.profiling, { port: 0, host: "0.0.0.0" })
      const ipv6 = yield* parse(["--profiling-port", "6060", "--profiling-bind-address=::1"])
      assert.deepStrictEqual(Exit.isSuccess(ipv6) && ipv6.value.profiling, { port: 6060, host: "::1" })
    }))

  it.effect("refused: an address without a port, an address that is not an IP, a port out of range", () =>
    Effect.gen(function*() {
      for (
        const [argv, message] of [
          [["--profiling-bind-address", "0.0.0.0"], "--profiling-bind-address does nothing without --profiling-port"],
          [
            ["--profiling-port", "6060", "--profiling-bind-address", "example.com"],
            `--profiling-bind-address must be an IP address (127.0.0.1, 0.0.0.0, ::), not "example.com"`
          ],
          [["--profiling-port", "70000"], `--profiling-port must be a port number from 0 to 65535`]
        ] as const
      ) {
        const exit = yield* parse(argv)
        assert.isTrue(Exit.isFailure(exit), argv.join(" "))
        assert.include(String(Exit.isFailure(exit) && exit.cause.reasons[0]), message)
      }
    }))
})
