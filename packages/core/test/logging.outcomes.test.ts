// @effect/vitest 4: `it.effect` runs scoped with a TestClock, so retries and requeues are driven by `advance`.
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import { Data, Effect, Exit, Fiber, Layer, Logger, References, Scope } from "effect"
import * as Logging from "../src/Logging.js"
import * as Reconcile from "../src/Reconcile.js"
import { advance, start } from "./harness.js"

class Conflict extends Data.TaggedError("Conflict")<{ readonly message: string }> {}
class InvalidSpec extends Data.TaggedError("InvalidSpec")<{ readonly message: string }> {}

interface Line {
  readonly level: string
  readonly msg: string
  readonly [field: string]: unknown
}

/**
 * Runs `body` with a JSON logger at every level; returns the records the controller logged about reconciles' outcomes
 * (`starts` gets each reconcile's first line, `Reconcile started`).
 */
const withLines = <A, E, R>(body: (lines: Array<Line>, starts: Array<Line>) => Effect.Effect<A, E, R>) => {
  const lines: Array<Line> = []
  const starts: Array<Line> = []
  const capture = Logger.map(Logging.formatJson, (line) => {
    const record = JSON.parse(line) as Line
    // Only the records of a reconcile (they carry its reconcileID), not the controller's start-up lines.
    if (record.reconcileID === undefined) return
    if (record.msg === "Reconcile started") starts.push(record)
    else lines.push(record)
  })
  return body(lines, starts).pipe(
    Effect.provide(Layer.mergeAll(Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "All")))
  )
}

const slow = RateLimiter.exponential({ base: "1 second", max: "100 seconds" })

/** The fields every reconcile's records carry (controller-runtime's). */
const assertAnnotations = (line: Line, controller: string) => {
  assert.strictEqual(line.controller, controller)
  assert.strictEqual(line.namespace, "default")
  assert.strictEqual(line.name, "a")
  assert.match(String(line.reconcileID), /^[0-9a-f-]{36}$/)
}

describe("Controller outcome logging: once per reconcile, at the outcome's level, on one line", () => {
  it.effect("every reconcile's first line is Reconcile started at debug, with the reconcileID of its last", () =>
    withLines((lines, starts) =>
      Effect.gen(function*() {
        let n = 0
        const { name, send } = yield* start(() => n++ === 0 ? Reconcile.requeueAfter("1 second") : Effect.void)
        yield* send("a")
        yield* advance(1_000)
        assert.deepStrictEqual(starts.map((l) => [l.level, l.msg]), [["debug", "Reconcile started"], [
          "debug",
          "Reconcile started"
        ]])
        for (const line of starts) assertAnnotations(line, name)
        assert.deepStrictEqual(starts.map((l) => l.reconcileID), lines.map((l) => l.reconcileID))
      })
    ))

  it.effect("a reconcile interrupted by shutdown past its grace period ends with Reconcile interrupted", () =>
    withLines((lines, starts) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const { send } = yield* Scope.provide(start(() => Effect.never, { gracefulShutdownTimeout: "1 second" }), scope)
        yield* send("a")
        assert.strictEqual(starts.length, 1)
        assert.deepStrictEqual(lines, [])
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
        yield* advance(1_000)
        yield* Fiber.join(closing)
        assert.deepStrictEqual(
          lines.filter((l) => l.msg.startsWith("Reconcile")).map((l) => [l.level, l.msg]),
          [["debug", "Reconcile interrupted"]]
        )
        assert.strictEqual(lines.find((l) => l.msg === "Reconcile interrupted")!.reconcileID, starts[0]!.reconcileID)
      })
    ))

  it.effect("success is logged at debug", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        const { name, send } = yield* start(() => Effect.void)
        yield* send("a")
        assert.deepStrictEqual(lines.map((l) => [l.level, l.msg]), [["debug", "Reconcile successful"]])
        assertAnnotations(lines[0]!, name)
      })
    ))

  it.effect("RequeueAfter is logged at debug with the delay", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        let n = 0
        const { send } = yield* start(() => n++ === 0 ? Reconcile.requeueAfter("30 seconds") : Effect.void)
        yield* send("a")
        assert.deepStrictEqual(lines.map((l) => [l.level, l.msg, l.requeueAfter]), [
          ["debug", "Reconcile done, requeueing after", "30s"]
        ])
        yield* advance(30_000)
        assert.deepStrictEqual(lines.map((l) => l.msg), ["Reconcile done, requeueing after", "Reconcile successful"])
      })
    ))

  it.effect("Retryable is logged at error with the error's message, no stack, once per attempt", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        const { name, send } = yield* start(
          () => Reconcile.retryable(new Conflict({ message: "the object has been modified" })),
          { rateLimiter: slow }
        )
        yield* send("a")
        assert.strictEqual(lines.length, 1)
        const line = lines[0]!
        assert.strictEqual(line.level, "error")
        assert.strictEqual(line.msg, "Reconciler error")
        assert.strictEqual(line.error, "Conflict: the object has been modified")
        assert.isUndefined(line.stack)
        assertAnnotations(line, name)
        yield* advance(1_000)
        assert.strictEqual(lines.length, 2, "the retry logs again")
      })
    ))

  it.effect("a Retryable with a message of its own says both", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        const { send } = yield* start(
          () => Reconcile.retryable(new Conflict({ message: "modified" }), "could not apply the Deployment"),
          { rateLimiter: slow }
        )
        yield* send("a")
        assert.strictEqual(lines[0]!.error, "could not apply the Deployment: Conflict: modified")
      })
    ))

  it.effect("Terminal is logged at error once, with its cause and no stack; nothing more until the next event", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        const { send } = yield* start(
          () => Reconcile.terminal(new InvalidSpec({ message: "spec.replicas must be at least 1" })),
          { rateLimiter: slow }
        )
        yield* send("a")
        yield* advance(600_000)
        assert.deepStrictEqual(lines.map((l) => [l.level, l.msg, l.error, l.stack]), [
          [
            "error",
            "Terminal reconciler error: no retry until the next change",
            "InvalidSpec: spec.replicas must be at least 1",
            undefined
          ]
        ])
      })
    ))

  it.effect("a panic is logged at error with its stack (one line, no Effect frames), and retried", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        const { send } = yield* start(() =>
          Effect.sync(() => {
            throw new TypeError("cannot read properties of undefined")
          }), { rateLimiter: slow })
        yield* send("a")
        assert.strictEqual(lines.length, 1)
        const line = lines[0]!
        assert.strictEqual(line.level, "error")
        assert.strictEqual(line.msg, "Observed a panic in reconciler")
        assert.strictEqual(line.error, "TypeError: cannot read properties of undefined")
        const stack = String(line.stack)
        assert.include(stack, "logging.outcomes.test.ts")
        assert.notInclude(stack, "node_modules/effect")
        yield* advance(1_000)
        assert.strictEqual(lines.length, 2, "recovered as Retryable")
      })
    ))

  it.effect("a reconcile timeout is logged at error, without a stack", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        const { send } = yield* start(() => Effect.never, { rateLimiter: slow, reconcileTimeout: "5 seconds" })
        yield* send("a")
        yield* advance(5_000)
        assert.deepStrictEqual(lines.map((l) => [l.level, l.msg, l.error, l.stack]), [
          ["error", "Reconcile timed out", "reconcileTimeout 5s exceeded", undefined]
        ])
      })
    ))

  it.effect("with the default level (info), a healthy controller logs nothing per reconcile", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.map(Logging.formatLogfmt, (line) => {
        lines.push(line)
      })
      yield* Effect.gen(function*() {
        let n = 0
        const { send } = yield* start(() => n++ % 2 === 0 ? Reconcile.requeueAfter("1 second") : Effect.void)
        yield* send("a")
        yield* advance(1_000)
      }).pipe(Effect.provide(Logger.layer([capture])))
      assert.deepStrictEqual(lines.filter((l) => l.includes("reconcileID=")), [])
    }))
})
