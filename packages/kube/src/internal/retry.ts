import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as KubeError from "../KubeError.js"

/** @internal */
export interface Policy {
  /** Retries after the first attempt. */
  readonly times: number
  readonly base: Duration.Duration
  readonly max: Duration.Duration
}

/**
 * Whether a failed request may be sent again. Throttling (429) and 503 mean
 * the server did not process the request, so every verb is retried; other
 * 5xx, timeouts and transport failures may have happened after the server
 * acted, so only idempotent requests are.
 *
 * @internal
 */
export const shouldRetry = (error: KubeError.KubeError, idempotent: boolean): boolean => {
  switch (error._tag) {
    case "TooManyRequests":
      return true
    case "ServerError":
      return error.code === 503 || idempotent
    case "Timeout":
    case "Transport":
      return idempotent
    default:
      return false
  }
}

/**
 * The policy of retry options, with the defaults: 3 retries, 200 ms doubling to 10 s.
 *
 * @internal
 */
export const policy = (
  options: {
    readonly times?: number | undefined
    readonly base?: Duration.Input | undefined
    readonly max?: Duration.Input | undefined
  } | undefined
): Policy => ({
  times: Math.max(0, options?.times ?? 3),
  base: Duration.fromInputUnsafe(options?.base ?? "200 millis"),
  max: Duration.fromInputUnsafe(options?.max ?? "10 seconds")
})

/**
 * The wait before retry number `attempt` (from 0): the server's `Retry-After`
 * when it sent one, else `min(base · 2^attempt, max)`.
 *
 * @internal
 */
export const delay = (error: KubeError.KubeError, attempt: number, policy: Policy): Duration.Duration => {
  if ((error._tag === "TooManyRequests" || error._tag === "ServerError") && error.retryAfter !== undefined) {
    return error.retryAfter
  }
  const millis = Duration.toMillis(policy.base) * Math.pow(2, Math.min(attempt, 30))
  return Duration.min(Duration.millis(millis), policy.max)
}

/**
 * Runs `effect` and retries it on transient failures, at most `policy.times`
 * more times, sleeping on Effect's `Clock` (so `TestClock` drives it).
 *
 * @internal
 */
export const withRetry = <A, R>(
  effect: Effect.Effect<A, KubeError.KubeError, R>,
  policy: Policy,
  idempotent: boolean
): Effect.Effect<A, KubeError.KubeError, R> => {
  const loop = (attempt: number): Effect.Effect<A, KubeError.KubeError, R> =>
    Effect.catch(effect, (error) => {
      if (attempt >= policy.times || !shouldRetry(error, idempotent)) return Effect.fail(error)
      const wait = delay(error, attempt, policy)
      return Effect.logDebug(`retrying in ${Duration.format(wait)} after ${error._tag}`).pipe(
        Effect.annotateLogs({ error: error.message }),
        Effect.andThen(Effect.sleep(wait)),
        Effect.andThen(loop(attempt + 1))
      )
    })
  return loop(0)
}
