import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Conditions from "../src/Conditions.js"

const t = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds))
// effect 4.1 bundles no FastCheck: the same generators as Schemas, drawn by effect/Arbitrary (what it.prop runs)
const status = Schema.Literals(["True", "False", "Unknown"])
const input = Schema.Struct({
  type: Schema.Literals(["Ready", "Progressing", "Degraded"]),
  status,
  reason: Schema.Literals(["A", "B"]),
  observedGeneration: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 }))
})

describe("Conditions", () => {
  it("a new condition is appended with lastTransitionTime = now", () => {
    const out = Conditions.set([], { type: "Ready", status: "False", reason: "Waiting", observedGeneration: 1 }, t(5))
    assert.deepStrictEqual(out, [{
      type: "Ready",
      status: "False",
      reason: "Waiting",
      message: "",
      observedGeneration: 1,
      lastTransitionTime: "2026-01-01T00:00:05Z"
    }])
  })

  it("an unchanged status keeps lastTransitionTime; reason, message and observedGeneration update", () => {
    const first = Conditions.set([], { type: "Ready", status: "False", reason: "A", observedGeneration: 1 }, t(1))
    const second = Conditions.set(first, {
      type: "Ready",
      status: "False",
      reason: "B",
      message: "still waiting",
      observedGeneration: 2
    }, t(9))
    assert.strictEqual(second[0]!.lastTransitionTime, "2026-01-01T00:00:01Z")
    assert.strictEqual(second[0]!.reason, "B")
    assert.strictEqual(second[0]!.message, "still waiting")
    assert.strictEqual(second[0]!.observedGeneration, 2)
    const third = Conditions.set(second, { type: "Ready", status: "True", reason: "Done" }, t(20))
    assert.strictEqual(third[0]!.lastTransitionTime, "2026-01-01T00:00:20Z")
  })

  it.prop(
    "lastTransitionTime changes iff status changes; order is stable; one condition per type",
    [Arbitrary.array(Arbitrary.schema(input), { maxLength: 30 })],
    ([inputs]) => {
      let conditions: ReadonlyArray<Conditions.Condition> = []
      inputs.forEach((i, n) => {
        const before = Conditions.find(conditions, i.type)
        const order = conditions.map((c) => c.type)
        conditions = Conditions.set(conditions, i, t(n))
        const after = Conditions.find(conditions, i.type)!
        if (before === undefined) {
          assert.deepStrictEqual(conditions.map((c) => c.type), [...order, i.type], "new types are appended")
          assert.strictEqual(after.lastTransitionTime, t(n).toISOString().replace(".000", ""))
        } else {
          assert.deepStrictEqual(conditions.map((c) => c.type), order, "existing order is kept")
          const changed = before.status !== i.status
          // Each step happens at a later second, so a transition always shows as a new time.
          assert.strictEqual(after.lastTransitionTime !== before.lastTransitionTime, changed)
        }
        assert.strictEqual(new Set(conditions.map((c) => c.type)).size, conditions.length)
        assert.strictEqual(after.observedGeneration, i.observedGeneration)
      })
    },
    // size 30: effect's Arbitrary caps array lengths at `size` (default 10); fast-check drew up to maxLength
    { arbitrary: { size: 30 } }
  )

  it.effect("setNow reads the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(t(42).getTime())
      const out = yield* Conditions.setNow([], { type: "Ready", status: "True", reason: "Ok" })
      assert.strictEqual(out[0]!.lastTransitionTime, "2026-01-01T00:00:42Z")
    }))

  it("remove, find, isTrue, isFalse", () => {
    const c = Conditions.merge([], [
      { type: "Ready", status: "True", reason: "Ok" },
      { type: "Degraded", status: "False", reason: "Ok" }
    ], t(0))
    assert.isTrue(Conditions.isTrue(c, "Ready"))
    assert.isTrue(Conditions.isFalse(c, "Degraded"))
    assert.isFalse(Conditions.isTrue(c, "Missing"))
    assert.deepStrictEqual(Conditions.remove(c, "Ready").map((x) => x.type), ["Degraded"])
  })
})
