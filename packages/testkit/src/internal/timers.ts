/**
 * The clock of the test server's request handler: the Effect `Clock` of the
 * fiber that runs it (the live clock over a socket; in process, `TestKube`'s
 * caller's, so a `TestClock` drives injected latency, watch timeouts,
 * bookmarks, stalls and resourceVersion waits as it drives the client).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** @internal */
export interface Timers {
  /** Milliseconds since the epoch. */
  readonly now: () => number
  /** Runs `f` after `millis`; the function returned cancels it. */
  readonly after: (millis: number, f: () => void) => () => void
}

/** The Effect `Clock` of the fiber whose services these are (a `TestClock` in tests). @internal */
export const onClock = (services: Context.Context<never>): Timers => {
  const clock = Context.get(services, Clock.Clock)
  const run = Effect.runCallbackWith(services)
  return {
    now: () => clock.currentTimeMillisUnsafe(),
    after: (millis, f) => {
      let cancelled = false
      const interrupt = run(clock.sleep(Duration.millis(Math.max(0, millis))), {
        onExit: (exit) => {
          if (!cancelled && exit._tag === "Success") f()
        }
      })
      return () => {
        cancelled = true
        interrupt()
      }
    }
  }
}
