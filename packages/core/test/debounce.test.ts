// `debounce`: source events of a key within a window collapse into one reconcile, bounded by `maxWait`.
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import { Arbitrary, Clock, Effect, Schema } from "effect"
import type * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as debounceInternal from "../src/internal/debounce.js"
import * as Reconcile from "../src/Reconcile.js"
import type * as Request from "../src/Request.js"
import { constantFrom } from "./arbitraries.js"
import { advance, obj, start } from "./harness.js"

/** A reconcile that records `name@time` of every attempt, failing as `fail(attempt)` says. */
const recording = (fail: (attempt: number) => boolean = () => false) => {
  const runs: Array<{ readonly key: string; readonly at: number }> = []
  const reconcile = (request: Request.Request) =>
    Effect.flatMap(Clock.currentTimeMillis, (at) => {
      runs.push({ key: request.name, at })
      return fail(runs.length - 1) ? Reconcile.retryable("boom") : Effect.void
    })
  const times = (key: string) => runs.filter((r) => r.key === key).map((r) => r.at)
  return { runs, reconcile, times }
}

/** Sends `key` at each of the (increasing) virtual times. */
const sendAt = (send: (key: string) => Effect.Effect<void>, key: string, times: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    for (const t of times) {
      yield* advance(t - (yield* Clock.currentTimeMillis))
      yield* send(key)
    }
  })

describe("debounce", () => {
  it.effect("events of a key within the window collapse into one reconcile at the window's end", () =>
    Effect.gen(function*() {
      const r = recording()
      const { send } = yield* start(r.reconcile, { debounce: "1 second" })
      yield* sendAt(send, "a", [0, 300, 600])
      yield* advance(399)
      assert.deepStrictEqual(r.times("a"), [], "nothing before the window ends")
      yield* advance(1)
      assert.deepStrictEqual(r.times("a"), [1_000], "one reconcile, one window after the first event")
      yield* sendAt(send, "a", [1_200])
      yield* advance(2_000)
      assert.deepStrictEqual(r.times("a"), [1_000, 2_200], "the next event opens a new window")
    }))

  it.effect("keys are debounced independently", () =>
    Effect.gen(function*() {
      const r = recording()
      const { send } = yield* start(r.reconcile, { debounce: "1 second" })
      yield* sendAt(send, "a", [0])
      yield* sendAt(send, "b", [500])
      yield* sendAt(send, "a", [700])
      yield* advance(2_000)
      assert.deepStrictEqual(r.times("a"), [1_000])
      assert.deepStrictEqual(r.times("b"), [1_500])
    }))

  it.effect("a constant stream reconciles once per window (maxWait defaults to the window)", () =>
    Effect.gen(function*() {
      const r = recording()
      const { send } = yield* start(r.reconcile, { debounce: "1 second" })
      yield* sendAt(send, "a", Array.from({ length: 50 }, (_, i) => 50 + i * 100)) // 50, 150, …, 4950
      yield* advance(2_000)
      // The event at 1050 comes just after the first burst fired: it opens the next one, and so on.
      assert.deepStrictEqual(r.times("a"), [1_050, 2_050, 3_050, 4_050, 5_050])
    }))

  it.effect("with maxWait, each event pushes the reconcile to window after it (kube-rs), up to maxWait", () =>
    Effect.gen(function*() {
      const r = recording()
      const { send } = yield* start(r.reconcile, { debounce: { window: "1 second", maxWait: "3 seconds" } })
      yield* sendAt(send, "quiet", [0, 500])
      yield* sendAt(send, "busy", Array.from({ length: 11 }, (_, i) => 10_000 + i * 500)) // 10 s … 15 s
      yield* advance(10_000)
      assert.deepStrictEqual(r.times("quiet"), [1_500], "trailing edge: one window after the last event")
      assert.deepStrictEqual(
        r.times("busy"),
        [13_000, 16_000],
        "held at most maxWait after the first event of a burst; the next burst ends a window after its last event"
      )
    }))

  it.effect("retries and requeueAfter are not debounced; a zero window is off", () =>
    Effect.gen(function*() {
      const r = recording((n) => n === 0)
      const { send } = yield* start(r.reconcile, {
        debounce: "10 seconds",
        rateLimiter: RateLimiter.exponential({ base: "1 second", max: "1 minute" })
      })
      yield* send("a")
      yield* advance(12_000)
      assert.deepStrictEqual(r.times("a"), [10_000, 11_000])
      const off = recording()
      const second = yield* start(off.reconcile, { debounce: 0 })
      yield* second.send("b")
      assert.deepStrictEqual(off.times("b"), [12_000])
    }))
})

describe("debounce with priorities (internal/debounce.ts)", () => {
  it.effect("a burst is added once, at the highest priority of its events", () =>
    Effect.gen(function*() {
      const added: Array<string> = []
      const enqueue = (requests: ReadonlyArray<Request.Request>, priority?: number | undefined) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) =>
          Effect.sync(() => requests.forEach((r) => added.push(`${r.name}@${at}/${priority ?? "none"}`))))
      const offer = yield* debounceInternal.wrap("1 second", enqueue, yield* Effect.scope)
      yield* offer([{ namespace: "default", name: "a" }], -100)
      yield* offer([{ namespace: "default", name: "b" }], -100)
      yield* advance(100)
      yield* offer([{ namespace: "default", name: "a" }])
      yield* offer([{ namespace: "default", name: "b" }], -100)
      yield* advance(900)
      assert.deepStrictEqual(added, ["a@1000/0", "b@1000/-100"])
    }))
})

const integer = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const scenario = Arbitrary.all({
  events: Arbitrary.array(
    Arbitrary.all({ after: integer(0, 1_500), key: constantFrom("a", "b", "c") }),
    { minLength: 1, maxLength: 40 }
  ),
  window: integer(1, 1_000),
  /** Extra hold beyond the window; -1: no maxWait (it defaults to the window). */
  extra: integer(-1, 2_000)
})

describe("debounce properties", () => {
  it.effect.prop(
    "reconciles ≤ events; every event is followed by a reconcile within maxWait; a key's reconciles are ≥ window apart",
    [scenario],
    ([{ events, extra, window }]) =>
      Effect.gen(function*() {
        const debounce: Controller.Debounce = extra < 0 ? window : { window, maxWait: window + extra }
        const maxWait = window + Math.max(0, extra)
        /** Reconciles and events in the order they happened, with their virtual times. */
        const log: Array<{ readonly kind: "event" | "reconcile"; readonly key: string; readonly at: number }> = []
        const reconcile = (request: Request.Request) =>
          Effect.map(Clock.currentTimeMillis, (at) => void log.push({ kind: "reconcile", key: request.name, at }))
        const { channel } = yield* start(reconcile, { debounce })
        for (const e of events) {
          yield* advance(e.after)
          log.push({ kind: "event", key: e.key, at: yield* Clock.currentTimeMillis })
          yield* channel.offer(Event.update(obj(e.key), obj(e.key)))
        }
        yield* advance(maxWait + 1)

        const reconciles = log.filter((l) => l.kind === "reconcile")
        assert.isAtMost(reconciles.length, events.length, "more reconciles than events")
        log.forEach((entry, i) => {
          if (entry.kind !== "event") return
          const next = log.slice(i + 1).find((l) => l.kind === "reconcile" && l.key === entry.key)
          assert.isDefined(next, `${entry.key}: event at ${entry.at} never reconciled`)
          assert.isAtMost(next!.at - entry.at, maxWait, `${entry.key}: event at ${entry.at} held beyond maxWait`)
        })
        for (const key of ["a", "b", "c"]) {
          const times = reconciles.filter((l) => l.key === key).map((l) => l.at)
          times.slice(1).forEach((t, i) =>
            assert.isAtLeast(t - times[i]!, window, `${key}: reconciles at ${times[i]} and ${t}, within a window`)
          )
        }
      }),
    { timeout: 60_000, arbitrary: { runs: 60, size: 40 } }
  )

  it.effect.prop(
    "a key that changes constantly is reconciled at least once per maxWait",
    [Arbitrary.all({ period: integer(20, 400), window: integer(1, 1_000), extra: integer(0, 2_000) })],
    ([{ extra, period, window }]) =>
      Effect.gen(function*() {
        const maxWait = window + extra
        const times: Array<number> = []
        const reconcile = () => Effect.map(Clock.currentTimeMillis, (at) => void times.push(at))
        const { channel } = yield* start(reconcile, { debounce: { window, maxWait } })
        const end = 3 * maxWait + 500
        for (let t = 0; t <= end; t += period) {
          yield* advance(t - (yield* Clock.currentTimeMillis))
          yield* channel.offer(Event.update(obj("a"), obj("a")))
        }
        yield* advance(maxWait)
        // From the first event on, no stretch of maxWait + one period (the next event opens a burst) without one.
        const gaps = [times[0]!, ...times.slice(1).map((t, i) => t - times[i]!)]
        assert.isAtLeast(times.length, 1)
        assert.isAtMost(Math.max(...gaps), maxWait + period, `reconciles at ${times.join(", ")}`)
        assert.isAtLeast(times.at(-1)!, end - maxWait - period)
      }),
    { timeout: 60_000, arbitrary: { runs: 30 } }
  )
})
