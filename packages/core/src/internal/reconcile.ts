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
export const clampDuration = (input: Duration.Input): Duration.Duration => {
  const decoded = Duration.fromInput(input)
  if (decoded._tag === "None") return Duration.zero
  // effect 4 durations can be negative (effect 3 clamped them to zero): clamp here. NaN already decodes to zero.
  return Duration.isLessThan(decoded.value, Duration.zero) ? Duration.zero : decoded.value
}

/** The fields of a `Retryable` without its priority (a copy gets a new one). @internal */
export const fieldsOf = (
  e: { readonly cause: unknown; readonly message?: string | undefined }
): { readonly cause: unknown; readonly message?: string } =>
  e.message === undefined ? { cause: e.cause } : { cause: e.cause, message: e.message }
