import { assert, describe, expectTypeOf, it } from "@effect/vitest"
import { Data, Duration, Effect, Exit, pipe } from "effect"
import * as Reconcile from "../src/Reconcile.js"
import type * as Request from "../src/Request.js"

class NotFound extends Data.TaggedError("NotFound")<{ readonly name: string }> {}
class Conflict extends Data.TaggedError("Conflict")<{}> {}

const failWith = <E>(e: E): Effect.Effect<void, E> => Effect.fail(e)

describe("Reconcile constructors", () => {
  it("retryable and terminal keep the cause and take their message from it", () => {
    const cause = new Error("connection refused")
    const r = Reconcile.retryable(cause)
    assert.strictEqual(r._tag, "Retryable")
    assert.strictEqual(r.cause, cause)
    assert.strictEqual(r.message, "connection refused")
    assert.strictEqual(Reconcile.retryable("plain text").message, "plain text")
    assert.strictEqual(Reconcile.retryable({ code: 1 }).message, "")
    const t = Reconcile.terminal(new NotFound({ name: "x" }), "spec.image is empty")
    assert.strictEqual(t._tag, "Terminal")
    assert.strictEqual(t.message, "spec.image is empty")
    assert.instanceOf(t.cause, NotFound)
  })

  it("requeueAfter decodes the duration; negative and NaN clamp to zero, infinity stays", () => {
    assert.isTrue(Duration.equals(Reconcile.requeueAfter("30 seconds").after, Duration.seconds(30)))
    assert.isTrue(Duration.equals(Reconcile.requeueAfter(1500).after, Duration.millis(1500)))
    for (const input of [-5, Number.NaN, "-3 seconds", Duration.millis(-1), -1n, 0] as const) {
      assert.isTrue(Duration.isZero(Reconcile.requeueAfter(input).after), String(input))
    }
    assert.isFalse(Duration.isFinite(Reconcile.requeueAfter(Infinity).after))
  })

  it.effect("each outcome is an Effect failing with itself (yield*, Effect.exit)", () =>
    Effect.gen(function*() {
      const outcome = Reconcile.requeueAfter("1 second")
      assert.deepStrictEqual(yield* Effect.exit(outcome), Exit.fail(outcome))
      const viaGen = Effect.gen(function*() {
        return yield* Reconcile.retryable("boom")
      })
      const exit = yield* Effect.exit(viaGen)
      // effect 4's Cause is a flat list of reasons (effect 3: a tree whose root was the Fail).
      const reasons = Exit.isFailure(exit) ? exit.cause.reasons : []
      assert.isTrue(reasons.length === 1 && reasons[0]!._tag === "Fail" && Reconcile.isRetryable(reasons[0]!.error))
    }))

  it("guards recognise the three outcomes only", () => {
    const outcomes = [Reconcile.retryable(1), Reconcile.terminal(1), Reconcile.requeueAfter(1)]
    assert.deepStrictEqual(outcomes.map(Reconcile.isOutcome), [true, true, true])
    assert.deepStrictEqual(outcomes.map(Reconcile.isRetryable), [true, false, false])
    assert.deepStrictEqual(outcomes.map(Reconcile.isTerminal), [false, true, false])
    assert.deepStrictEqual(outcomes.map(Reconcile.isRequeueAfter), [false, false, true])
    assert.isFalse(Reconcile.isOutcome(new Conflict()))
    assert.isFalse(Reconcile.isOutcome({ _tag: "Retryable", cause: 1 }))
  })

  it("guards read the TypeId (a global symbol), not the class: an outcome from another copy of the module counts", () => {
    const foreign = { [Symbol.for("@reconcile/core/Reconcile/Outcome")]: Reconcile.TypeId, _tag: "Terminal", cause: 1 }
    assert.isTrue(Reconcile.isOutcome(foreign))
    assert.isTrue(Reconcile.isTerminal(foreign))
    assert.isFalse(Reconcile.isRetryable(foreign))
  })
})

describe("Reconcile.classify", () => {
  const decide = (e: NotFound | Conflict) => e._tag === "Conflict" ? Reconcile.retryable(e) : Reconcile.terminal(e)

  it.effect("maps each domain error with f, pipeable and data-first", () =>
    Effect.gen(function*() {
      const conflict = new Conflict()
      const e1 = yield* Effect.flip(pipe(failWith<NotFound | Conflict>(conflict), Reconcile.classify(decide)))
      assert.isTrue(Reconcile.isRetryable(e1))
      assert.strictEqual((e1 as Reconcile.Retryable).cause, conflict)
      const notFound = failWith<NotFound | Conflict>(new NotFound({ name: "a" }))
      const e2 = yield* Effect.flip(Reconcile.classify(notFound, decide))
      assert.isTrue(Reconcile.isTerminal(e2))
    }))

  it.effect("success is untouched and f is not called", () =>
    Effect.gen(function*() {
      let calls = 0
      const value = yield* Reconcile.classify(Effect.succeed(42) as Effect.Effect<number, Conflict>, (e) => {
        calls++
        return Reconcile.retryable(e)
      })
      assert.strictEqual(value, 42)
      assert.strictEqual(calls, 0)
    }))

  it.effect("errors that already are outcomes pass through unchanged, without calling f", () =>
    Effect.gen(function*() {
      let calls = 0
      const requeue = Reconcile.requeueAfter("5 seconds")
      const program = failWith<Conflict | Reconcile.RequeueAfter>(requeue).pipe(
        Reconcile.classify((e) => {
          calls++
          return Reconcile.terminal(e)
        })
      )
      expectTypeOf(program).toEqualTypeOf<Effect.Effect<void, Reconcile.Terminal | Reconcile.RequeueAfter>>()
      assert.strictEqual(yield* Effect.flip(program), requeue)
      assert.strictEqual(calls, 0)
    }))

  it.effect("asRetryable / asTerminal wrap every other error as their cause", () =>
    Effect.gen(function*() {
      const conflict = new Conflict()
      const r = yield* Effect.flip(Reconcile.asRetryable(failWith(conflict)))
      assert.isTrue(Reconcile.isRetryable(r) && r.cause === conflict)
      const t = yield* Effect.flip(failWith("bad spec").pipe(Reconcile.asTerminal))
      assert.isTrue(Reconcile.isTerminal(t) && t.cause === "bad spec" && t.message === "bad spec")
      const requeue = Reconcile.requeueAfter(10)
      assert.strictEqual(yield* Effect.flip(Reconcile.asRetryable(failWith(requeue))), requeue)
      const terminal = Reconcile.terminal("x")
      assert.strictEqual(yield* Effect.flip(Reconcile.asRetryable(failWith(terminal))), terminal)
    }))

  it.effect("outcomes are recoverable by tag", () =>
    Effect.gen(function*() {
      const handled = yield* Reconcile.requeueAfter("1 minute").pipe(
        Effect.catchTag("RequeueAfter", (e) => Effect.succeed(Duration.toMillis(e.after)))
      )
      assert.strictEqual(handled, 60_000)
    }))
})

describe("Reconcile types", () => {
  it("a reconcile must fail only with outcomes to be a Reconciler", () => {
    type Needs = { readonly db: true }
    const ok: Reconcile.Reconciler<Request.Request> = () => Effect.void
    const classified: Reconcile.Reconciler<Request.Request> = () =>
      failWith(new Conflict()).pipe(Reconcile.classify((e) => Reconcile.retryable(e)))
    const requeues: Reconcile.Reconciler<Request.Request> = () =>
      Effect.gen(function*() {
        return yield* Reconcile.requeueAfter("1 second")
      })

    // @ts-expect-error an unclassified domain error does not compile as a Reconciler
    const unclassified: Reconcile.Reconciler<Request.Request> = () => failWith(new Conflict())
    // @ts-expect-error a partly classified one neither
    const partly: Reconcile.Reconciler<Request.Request> = () => failWith<Conflict | Reconcile.Terminal>(new Conflict())
    // @ts-expect-error a requirement must appear in R
    const missing: Reconcile.Reconciler<Request.Request> = () => Effect.asVoid(Effect.context<Needs>())
    const provided: Reconcile.Reconciler<Request.Request, Needs> = () => Effect.asVoid(Effect.context<Needs>())

    expectTypeOf<() => Effect.Effect<void, Conflict>>().not.toMatchTypeOf<Reconcile.Reconciler<void>>()
    expectTypeOf<() => Effect.Effect<void, Reconcile.Outcome>>().toMatchTypeOf<Reconcile.Reconciler<void>>()
    expectTypeOf(Reconcile.requeueAfter("1 second")).toMatchTypeOf<Effect.Effect<never, Reconcile.RequeueAfter>>()
    expectTypeOf(Reconcile.retryable(1)).toMatchTypeOf<Reconcile.Outcome>()
    expectTypeOf(Reconcile.asTerminal(failWith(new Conflict()))).toEqualTypeOf<
      Effect.Effect<void, Reconcile.Terminal>
    >()
    assert.strictEqual([ok, classified, requeues, unclassified, partly, missing, provided].length, 7)
  })
})
