// The log annotations of a reconcile (set on the worker's fiber, not through Effect.annotateLogs): merged over what the
// controller inherited exactly as annotateLogs merges, present in the outcome's own log line, gone after the reconcile.
import { assert, describe, it } from "@effect/vitest"
import { Workqueue } from "@reconcile/workqueue"
import { Effect, Layer, Logger, References } from "effect"
import * as Reconcile from "../src/Reconcile.js"
import { start } from "./harness.js"

interface Line {
  readonly msg: string
  readonly annotations: Record<string, unknown>
}

/** Runs `body` with a logger that keeps each line's message and annotations. */
const withLines = <A, E, R>(body: (lines: Array<Line>) => Effect.Effect<A, E, R>) => {
  const lines: Array<Line> = []
  const capture = Logger.make(({ fiber, message }) => {
    lines.push({ msg: String(message), annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
  })
  return body(lines).pipe(
    Effect.provide(Layer.mergeAll(Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "All")))
  )
}

describe("reconcile log annotations", () => {
  it.effect("inherited annotations come first, the reconcile's override them, in annotateLogs' order", () =>
    Effect.gen(function*() {
      const seen: Array<Record<string, unknown>> = []
      const { name, send } = yield* start(() =>
        Effect.map(References.CurrentLogAnnotations, (annotations) => void seen.push({ ...annotations }))
      ).pipe(Effect.annotateLogs({ operator: "webapp", name: "outer", controller: "outer" }))
      yield* send("web")
      yield* send("db")
      assert.strictEqual(seen.length, 2)
      assert.deepStrictEqual(Object.keys(seen[0]!), ["operator", "name", "controller", "namespace", "reconcileID"])
      assert.deepStrictEqual({ ...seen[0]!, reconcileID: "" }, {
        operator: "webapp",
        name: "web",
        controller: name,
        namespace: "default",
        reconcileID: ""
      })
      assert.strictEqual(seen[1]!.name, "db")
      assert.notStrictEqual(seen[0]!.reconcileID, seen[1]!.reconcileID)
    }))

  it.effect("without inherited annotations: exactly controller, namespace, name, reconcileID", () =>
    Effect.gen(function*() {
      const seen: Array<Record<string, unknown>> = []
      yield* (yield* start(() =>
        Effect.map(References.CurrentLogAnnotations, (annotations) => void seen.push({ ...annotations }))
      )).send("web")
      assert.deepStrictEqual(Object.keys(seen[0]!), ["controller", "namespace", "name", "reconcileID"])
    }))

  it.effect("they end with the reconcile: the worker takes the next key with its own annotations", () =>
    Effect.gen(function*() {
      const atTake: Array<Record<string, unknown>> = []
      // A queue whose `take` records the annotations of the worker that takes.
      const recording: Workqueue.Make = {
        _tag: "Fifo",
        make: (options) =>
          Effect.map(Workqueue.make(options), (queue) => ({
            ...queue,
            take: Effect.tap(
              queue.take,
              () => Effect.map(References.CurrentLogAnnotations, (annotations) => void atTake.push({ ...annotations }))
            )
          }))
      }
      const { name, send } = yield* start(() => Effect.void, { queue: recording })
      yield* send("web")
      yield* send("db")
      assert.deepStrictEqual(atTake, [{ controller: name }, { controller: name }])
    }))

  it.effect("the outcome's log line carries them", () =>
    withLines((lines) =>
      Effect.gen(function*() {
        let n = 0
        const { name, send } = yield* start(() => n++ === 0 ? Reconcile.terminal("no") : Effect.void)
        yield* send("a")
        const terminal = lines.find((l) => l.msg.startsWith("Terminal reconciler error"))!
        assert.strictEqual(terminal.annotations.controller, name)
        assert.strictEqual(terminal.annotations.name, "a")
        assert.isString(terminal.annotations.reconcileID)
        // The next reconcile gets a fresh ID.
        yield* send("a")
        const success = lines.filter((l) => l.msg === "Reconcile successful")
        assert.strictEqual(success.length, 1)
        assert.notStrictEqual(success[0]!.annotations.reconcileID, terminal.annotations.reconcileID)
      })
    ))
})
