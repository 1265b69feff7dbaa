/**
 * A synchronous operation of the core that needs I/O first: the admission webhooks' answers (`admissionWebhooks.ts`)
 * or a conversion webhook's (`conversionWebhooks.ts`). The core never waits: where it needs an answer it has not
 * received, it throws {@link Suspended} with the calls that would give it; {@link settle} makes those calls and runs
 * the operation again from the start. Nothing is stored before every answer an operation needs is in, so a
 * suspended run leaves no trace.
 */
import * as Effect from "effect/Effect"
import * as ApiError from "../ApiError.js"

/** One call an operation waits for: made once per key and round; it records its answer where the next run finds it. */
export interface Call {
  readonly key: string
  readonly run: Effect.Effect<void>
}

/** Thrown by an operation that needs answers not received yet. */
export class Suspended {
  constructor(readonly calls: ReadonlyArray<Call>) {}
}

/**
 * `f` over every item, in order; the items that suspend do not stop the others: their calls are thrown together at
 * the end (a list converted by a webhook asks for every item's conversion in one round).
 */
export const each = <A, B>(items: ReadonlyArray<A>, f: (a: A) => B): Array<B> => {
  const out: Array<B> = []
  let calls: Array<Call> | undefined
  for (const item of items) {
    try {
      out.push(f(item))
    } catch (e) {
      if (!(e instanceof Suspended)) throw e
      calls = calls === undefined ? [...e.calls] : [...calls, ...e.calls]
    }
  }
  if (calls !== undefined) throw new Suspended(calls)
  return out
}

/** An error of an operation as the client sees it (anything but an `ApiError` is a 500). */
export const toApiError = (e: unknown): ApiError.ApiError =>
  e instanceof ApiError.ApiError
    ? e
    : ApiError.make(500, "InternalError", `internal error: ${e instanceof Error ? e.message : String(e)}`)

/** How many rounds of calls an operation may need before it is given up. */
const maxRounds = 16

/** How many calls of one round are made at once. */
const concurrency = 16

/**
 * Runs `op` until it completes: after each run that suspends, its calls (one per key) are made, then `op` runs again.
 * `around` wraps each synchronous run (installing what the operation reads its answers from).
 */
export const settle = <A>(
  op: () => A,
  around: <B>(run: () => B) => B = (run) => run()
): Effect.Effect<A, ApiError.ApiError> => {
  const run = (round: number): Effect.Effect<A, ApiError.ApiError> =>
    Effect.suspend(() => {
      let suspended: Suspended
      try {
        return Effect.succeed(around(op))
      } catch (e) {
        if (!(e instanceof Suspended)) return Effect.fail(toApiError(e))
        if (round >= maxRounds) return Effect.fail(toApiError(new Error("webhook calls did not settle")))
        suspended = e
      }
      const calls = new Map(suspended.calls.map((c) => [c.key, c.run] as const))
      return Effect.forEach(calls.values(), (call) => call, { concurrency, discard: true }).pipe(
        Effect.andThen(run(round + 1))
      )
    })
  return run(0)
}
