/**
 * The error of every TestCluster operation: a Kubernetes `metav1.Status`
 * with `status: "Failure"`, exactly as a real API server would answer it
 * (the same body `TestApiServer` sends over HTTP).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * A `metav1.Status` object.
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly kind: "Status"
  readonly apiVersion: "v1"
  readonly metadata: {}
  readonly status: "Success" | "Failure"
  readonly message?: string
  readonly reason?: StatusReason
  readonly details?: StatusDetails
  readonly code: number
}

/**
 * The `reason` values the test server produces (a subset of `metav1.StatusReason`).
 *
 * @since 0.1.0
 * @category models
 */
export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "Invalid"
  | "MethodNotAllowed"
  | "UnsupportedMediaType"
  | "NotAcceptable"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "Timeout"
  | ""

/**
 * `metav1.StatusDetails`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusDetails {
  readonly name?: string
  readonly group?: string
  readonly kind?: string
  readonly uid?: string
  readonly causes?: ReadonlyArray<StatusCause>
  readonly retryAfterSeconds?: number
}

/**
 * `metav1.StatusCause`: one reason a request was rejected (for 422, one per invalid field).
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusCause {
  readonly reason?: string
  readonly message?: string
  readonly field?: string
}

/**
 * A request was refused; `status` is the `metav1.Status` the API server answers.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiError extends Data.TaggedError("ApiError")<{ readonly status: Status }> {
  override get message(): string {
    return `${this.status.code} ${this.status.reason ?? ""}: ${this.status.message ?? ""}`
  }
  /** The HTTP status code (404, 409, 422, …). */
  get code(): number {
    return this.status.code
  }
  /** The `reason` of the Status (`NotFound`, `Conflict`, `AlreadyExists`, …). */
  get reason(): StatusReason | undefined {
    return this.status.reason
  }
}

/**
 * Builds a failure `Status`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failure = (
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails
): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details !== undefined ? { details } : {}),
  code
})

/**
 * Builds an {@link ApiError} from the parts of a failure `Status`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (code: number, reason: StatusReason, message: string, details?: StatusDetails): ApiError =>
  new ApiError({ status: failure(code, reason, message, details) })

/**
 * True when the error is a 404 NotFound.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isNotFound = (error: ApiError): boolean => error.status.code === 404

/**
 * True when the error is a 409 Conflict caused by a stale `resourceVersion`
 * (or an apply conflict), not an AlreadyExists.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isConflict = (error: ApiError): boolean => error.status.code === 409 && error.status.reason === "Conflict"

/**
 * True when the error is a 409 AlreadyExists.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isAlreadyExists = (error: ApiError): boolean => error.status.reason === "AlreadyExists"

/**
 * True when the error is a 410 Gone / Expired (a compacted resourceVersion).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isGone = (error: ApiError): boolean => error.status.code === 410

/**
 * True when the error is a 422 Invalid.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isInvalid = (error: ApiError): boolean => error.status.code === 422
