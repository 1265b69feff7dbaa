import * as Duration from "effect/Duration"

/**
 * The longest delay a queue accepts: 2³¹−1 ms (about 24.8 days), the longest
 * timer Node.js can set. Longer and infinite delays are clamped to it.
 *
 * @internal
 */
export const MAX_DELAY_MILLIS = 2 ** 31 - 1

/**
 * Turns a user-supplied delay into milliseconds: negative and NaN delays
 * become 0 (run now), infinite or larger-than-max delays become
 * {@link MAX_DELAY_MILLIS}.
 *
 * @internal
 */
export const toDelayMillis = (input: Duration.Input): number => {
  if (typeof input === "number") {
    return Number.isNaN(input) || input <= 0 ? 0 : input >= MAX_DELAY_MILLIS ? MAX_DELAY_MILLIS : input
  }
  const millis = Duration.toMillis(input)
  return Number.isNaN(millis) || millis <= 0 ? 0 : millis >= MAX_DELAY_MILLIS ? MAX_DELAY_MILLIS : millis
}
