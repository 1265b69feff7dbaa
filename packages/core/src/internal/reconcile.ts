import * as Duration from "effect/Duration"

/** @internal */
export const withMessage = (
  cause: unknown,
  message: string | undefined
): { readonly cause: unknown; readonly message?: string } => {
  const text = message ?? messageOf(cause)
  return text === undefined || text === "" ? { cause } : { cause, message: text }
}

const messageOf = (cause: unknown): string | undefined => {
  if (typeof cause === "string") return cause
  if (typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string") {
    return cause.message
  }
  return undefined
}

/** @internal */
export const clampDuration = (input: Duration.DurationInput): Duration.Duration => {
  const decoded = Duration.decodeUnknown(input)
  if (decoded._tag === "None") return Duration.zero
  // Duration already maps negative and NaN inputs to zero; keep the guard explicit.
  return Duration.lessThan(decoded.value, Duration.zero) ? Duration.zero : decoded.value
}

