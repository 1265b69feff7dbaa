/**
 * `metav1.Status`: the body of every error answer of the API server (and of a
 * watch's `ERROR` events), and how it becomes a typed error.
 *
 * {@link toError} reads a Status as apimachinery's `errors.IsNotFound` & co.
 * do: by `reason` first, then by `code`.
 *
 * | `reason` | else `code` | error |
 * |---|---|---|
 * | `NotFound` | 404 | `NotFound` |
 * | `AlreadyExists` | — | `AlreadyExists` |
 * | `Conflict` | 409 | `Conflict` |
 * | `Gone`, `Expired` | 410 | `Gone` |
 * | `Invalid` | 422 | `Invalid` |
 * | `BadRequest` | 400 | `BadRequest` |
 * | `Unauthorized` | 401 | `Unauthorized` |
 * | `Forbidden` | 403 | `Forbidden` |
 * | `MethodNotAllowed` | 405 | `MethodNotAllowed` |
 * | `TooManyRequests` | 429 | `TooManyRequests` |
 * | `Timeout`, `ServerTimeout` | 504 | `Timeout` |
 * | — | other 5xx | `ServerError` |
 * | — | anything else | `UnexpectedStatus` |
 *
 * Not to be confused with `Status`, which writes an object's `status`
 * subresource.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as internalDiagnose from "./internal/diagnose.js"
import type { Status } from "./internal/kubeError.js"
import * as KubeError from "./KubeError.js"

// The body of an error answer (declared by `internal/kubeError.ts` with the errors made of it, so that `KubeError` need
// not import this module, which makes them).
export type { Status, StatusCause, StatusDetails } from "./internal/kubeError.js"

/**
 * The tagged error of a `metav1.Status` (see the table above). `code` (the
 * HTTP status) is used when the Status has none; `retryAfter` (the
 * `Retry-After` header) wins over `details.retryAfterSeconds`. The failures a
 * person must fix get their `Diagnosis` (see `Diagnosis`).
 *
 * @example
 * ```ts
 * import { KubeStatus } from "@reconcile/kube"
 *
 * const e = KubeStatus.toError({ code: 404, reason: "NotFound", message: "configmaps \"x\" not found" })
 * // e._tag === "NotFound"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toError = (
  status: Status,
  options?: {
    readonly code?: number | undefined
    readonly retryAfter?: Duration.Duration | undefined
    readonly request?: KubeError.RequestInfo | undefined
  }
): KubeError.StatusError => {
  const code = status.code !== undefined && status.code !== 0 ? status.code : options?.code ?? 0
  const fields: KubeError.StatusFields = {
    status: { ...status, code },
    request: options?.request,
    retryAfter: options?.retryAfter
  }
  return internalDiagnose.attach(errorOf(status.reason, code, fields))
}

const errorOf = (reason: string | undefined, code: number, fields: KubeError.StatusFields): KubeError.StatusError => {
  switch (reason) {
    case "NotFound":
      return new KubeError.NotFound(fields)
    case "AlreadyExists":
      return new KubeError.AlreadyExists(fields)
    case "Conflict":
      return new KubeError.Conflict(fields)
    case "Gone":
    case "Expired":
      return new KubeError.Gone(fields)
    case "Invalid":
      return new KubeError.Invalid(fields)
    case "BadRequest":
      return new KubeError.BadRequest(fields)
    case "Unauthorized":
      return new KubeError.Unauthorized(fields)
    case "Forbidden":
      return new KubeError.Forbidden(fields)
    case "MethodNotAllowed":
      return new KubeError.MethodNotAllowed(fields)
    case "TooManyRequests":
      return new KubeError.TooManyRequests(fields)
    case "Timeout":
    case "ServerTimeout":
      return new KubeError.Timeout(fields)
  }
  switch (code) {
    case 400:
      return new KubeError.BadRequest(fields)
    case 401:
      return new KubeError.Unauthorized(fields)
    case 403:
      return new KubeError.Forbidden(fields)
    case 404:
      return new KubeError.NotFound(fields)
    case 405:
      return new KubeError.MethodNotAllowed(fields)
    case 409:
      return new KubeError.Conflict(fields)
    case 410:
      return new KubeError.Gone(fields)
    case 422:
      return new KubeError.Invalid(fields)
    case 429:
      return new KubeError.TooManyRequests(fields)
    case 504:
      return new KubeError.Timeout(fields)
  }
  return code >= 500 ? new KubeError.ServerError(fields) : new KubeError.UnexpectedStatus(fields)
}
