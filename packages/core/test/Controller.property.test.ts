import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@reconcile/workqueue"
import { Arbitrary, Clock, Duration, Effect, Schema } from "effect"
import * as Event from "../src/Event.js"
import * as Reconcile from "../src/Reconcile.js"
import { constantFrom } from "./arbitraries.js"
import { advance, obj, start } from "./harness.js"

type Outcome = "success" | "retryable" | "terminal" | "requeueAfter"

interface Run {
  readonly key: string
  readonly start: number
  end: number
  outcome: Outcome | undefined
}

const BASE = 1_000
const MAX = 16_000
const delayFor = (failures: number) => Math.min(BASE * 2 ** failures, MAX)

const integer = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const scenario = Arbitrary.all({
  events: Arbitrary.array(
    Arbitrary.all({ after: integer(0, 3_000), key: constantFrom("a", "b", "c", "d", "e") }),
    { minLength: 1, maxLength: 25 }
  ),
  // "retryable" twice: retries are twice as likely as each other outcome.
  outcomes: Arbitrary.array(
    constantFrom<ReadonlyArray<Outcome>>("success", "retryable", "retryable", "terminal", "requeueAfter"),
    { maxLength: 30 }
  ),
  durations: Arbitrary.array(integer(0, 2_500), { minLength: 1, maxLength: 10 })
})

describe("Controller properties (random events and outcomes, maxConcurrentReconciles = 8)", () => {
  // @effect/vitest 4: `it.effect.prop` runs each case scoped, with a TestClock (effect 3: `it.scoped.prop`).
  it.effect.prop(
    "never two reconciles of one key at once; level-based liveness; Terminal waits for an event; retries follow the limiter",
    [scenario],
    ([{ durations, events, outcomes }]) =>
      Effect.gen(function*() {
        const runs: Array<Run> = []
        const inFlight = new Set<string>()
        const eventTimes = new Map<string, Array<number>>()
        let attempt = 0
        const reconcile = (req: { readonly name: string }) =>
          Effect.gen(function*() {
            const key = req.name
            assert.isFalse(inFlight.has(key), `two reconciles of ${key} at once`)
            inFlight.add(key)
            const run: Run = { key, start: yield* Clock.currentTimeMillis, end: -1, outcome: undefined }
            runs.push(run)
            const n = attempt++
            yield* Effect.sleep(Duration.millis(durations[n % durations.length]!))
            const outcome = outcomes[n] ?? "success"
            run.end = yield* Clock.currentTimeMillis
            run.outcome = outcome
            inFlight.delete(key)
            switch (outcome) {
              case "success":
                return
              case "retryable":
                return yield* Reconcile.retryable("random failure")
              case "terminal":
                return yield* Reconcile.terminal("random terminal")
              case "requeueAfter":
                return yield* Reconcile.requeueAfter("5 seconds")
            }
          })
        const { channel } = yield* start(reconcile, {
          maxConcurrentReconciles: 8,
          rateLimiter: RateLimiter.exponential({ base: Duration.millis(BASE), max: Duration.millis(MAX) })
        })
        for (const e of events) {
          yield* advance(e.after)
          const now = yield* Clock.currentTimeMillis
          eventTimes.set(e.key, [...(eventTimes.get(e.key) ?? []), now])
          yield* channel.offer(Event.update(obj(e.key), obj(e.key)))
        }
        // Let every retry and requeue play out: outcomes run out and become successes.
        for (let i = 0; i < 10; i++) yield* advance(20_000)

        const runsOf = (key: string) => runs.filter((r) => r.key === key)
        const eventsBetween = (key: string, from: number, to: number) =>
          (eventTimes.get(key) ?? []).some((t) => t >= from && t <= to)

        for (const [key, times] of eventTimes) {
          const last = times[times.length - 1]!
          const keyRuns = runsOf(key)
          // Level-based liveness: some reconcile of the key starts at or after its last event.
          assert.isTrue(keyRuns.some((r) => r.start >= last), `${key}: no reconcile after its last event at ${last}`)

          /** An event, a scheduled retry or a requeue of the key that fell due in [from, to]. */
          const causedBetween = (from: number, to: number, retries: ReadonlyArray<number>) =>
            eventsBetween(key, from, to) || retries.some((t) => t >= from && t <= to) ||
            keyRuns.some((r) => r.outcome === "requeueAfter" && r.end + 5_000 >= from && r.end + 5_000 <= to)

          // Replay the limiter's failure count to know each retry's delay; remember scheduled retries.
          let failures = 0
          const scheduledRetries: Array<number> = []
          keyRuns.forEach((run, i) => {
            const next = keyRuns[i + 1]
            if (run.outcome === "success" || run.outcome === "requeueAfter") failures = 0
            if (run.outcome === "retryable") {
              const retryAt = run.end + delayFor(failures++)
              scheduledRetries.push(retryAt)
              // Retries follow the limiter: the key runs again no later than the limiter's delay,
              // unless it is still in flight then (an out-of-band run), in which case it runs right after.
              const rerun = keyRuns.slice(i + 1).find((r) => r.start >= run.end)
              assert.isDefined(rerun, `${key}: retry after ${run.end} never ran`)
              const busyAtRetry = keyRuns.some((r) => r.start <= retryAt && r.end > retryAt && r !== run)
              if (!busyAtRetry) {
                assert.isAtMost(rerun!.start, retryAt, `${key}: retry after failure at ${run.end} came late`)
              }
              assert.isFalse(
                rerun!.start < retryAt && !causedBetween(run.start, rerun!.start, scheduledRetries.slice(0, -1)),
                `${key}: retried at ${rerun!.start}, before the limiter's ${retryAt}, without a cause`
              )
            }
            if (run.outcome === "terminal" && next !== undefined) {
              // Terminal: the next run needs a new event (during or after the run) or a retry scheduled before.
              assert.isTrue(
                causedBetween(run.start, next.start, scheduledRetries),
                `${key}: ran at ${next.start} after a Terminal at ${run.end} without a new event`
              )
            }
          })
        }
      }),
    // size 30: effect's arbitraries grow lengths with `size` (default 10); fast-check went up to each maxLength.
    { timeout: 120_000, arbitrary: { runs: 40, size: 30 } }
  )
})
