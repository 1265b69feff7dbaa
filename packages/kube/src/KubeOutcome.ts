/**
 * The reconcile outcome of a Kubernetes API error: the one way a reconcile
 * turns a {@link KubeError.KubeError} into `Retryable` or `Terminal`.
 *
 * controller-runtime retries every error a reconciler returns, so a child the
 * API server rejects for good (a 422 because a 253-character name became a
 * label, a 403 from an admission policy) is retried with backoff forever and
 * the user sees nothing — which is also what `Reconcile.asRetryable` does.
 * {@link classify} decides once per error: `Terminal` (with the server's
 * message) when sending the same request again cannot succeed until the object
 * or its spec changes, `Retryable` otherwise.
 *
 * | error | outcome | why |
 * |---|---|---|
 * | `Invalid` (422), `BadRequest` (400) | `Terminal` | the request itself is wrong: validation, a label too long |
 * | `Forbidden` (403) on a write | `Terminal` | RBAC, admission, a terminating namespace: a person must act |
 * | `Forbidden` (403) on a read | `Retryable` | usually RBAC not rolled out yet; the watches need it too |
 * | `Conflict` (409) from a field-manager conflict | `Terminal` | apply with `force` or stop owning the field |
 * | `MethodNotAllowed` (405), other 4xx (`UnexpectedStatus`), `Encode` | `Terminal` | fixed only by new code or spec |
 * | `Decode` of a known kind | `Terminal` | the stored object does not match its Schema until it is edited |
 * | `Conflict` (409), `AlreadyExists` (409), `Gone` (410) | `Retryable` | a stale read: the next run reads again |
 * | `NotFound` (404) | `Retryable` | see below |
 * | `TooManyRequests` (429), `ServerError` (5xx), `Timeout`, `Transport`, `Unauthorized` (401), other `Decode` | `Retryable` | transient |
 *
 * - **`NotFound` is `Retryable`**, as controller-runtime treats every error a
 *   reconciler returns: a 404 in the middle of a reconcile is a namespace, CRD
 *   or dependency that appears later (no event on the reconciled object would
 *   announce it) or a cache that has not seen a create yet. The one 404 that
 *   means "done" — the reconciled object itself is gone — is the caller's to
 *   handle with `KubeError.ignoreNotFound` (controller-runtime's
 *   `client.IgnoreNotFound`), before this.
 * - **`Retry-After` is honoured by the client**: a 429 or a 503 is sent again
 *   by `KubeClient`, for every verb and after the server's `Retry-After` when
 *   it sent one (`Kube.RetryOptions`), before the error reaches the
 *   reconcile; what remains is `Retryable`, with the controller's backoff.
 * - **Messages.** A `Terminal` outcome's `message` is the server's
 *   `metav1.Status` message followed by the field causes it does not already
 *   name — what a condition should tell the user; its `cause` is the
 *   `KubeError`. A `Retryable` keeps the full message (method, path, code)
 *   for the logs. Neither carries a bearer token.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { type KubeError, KubeOutcome, type Resource } from "@reconcile/kube"
 *
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 * declare const applyDeployment: (app: WebApp) => Effect.Effect<Resource.Deployment, KubeError.KubeError>
 * declare const setCondition: (app: WebApp, reason: string, message: string) => Effect.Effect<void>
 *
 * const reconcile = (app: WebApp) =>
 *   applyDeployment(app).pipe(
 *     KubeOutcome.classify, // KubeError → Retryable | Terminal; other errors unchanged
 *     Effect.catchTag("Terminal", (t) => // tell the user, then stop retrying
 *       Effect.andThen(setCondition(app, "ChildRejected", t.message), Effect.fail(t)))
 *   )
 * ```
 *
 * @since 0.1.0
 */
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Effect from "effect/Effect"
import { redact } from "./internal/errors.js"
import * as KubeError from "./KubeError.js"

/**
 * The outcome of one error (see the table above), e.g. inside
 * `Reconcile.classify` alongside your own errors.
 *
 * @example
 * ```ts
 * import { KubeOutcome, KubeStatus } from "@reconcile/kube"
 *
 * const e = KubeStatus.toError(
 *   { code: 422, reason: "Invalid", message: "Service \"x\" is invalid: metadata.name: Invalid value" },
 *   { request: { method: "PATCH", path: "/api/v1/namespaces/default/services/x" } }
 * )
 * KubeOutcome.fromError(e) // Terminal { message: "Service \"x\" is invalid: metadata.name: Invalid value" }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromError = (error: KubeError.KubeError): Reconcile.Retryable | Reconcile.Terminal =>
  isTerminal(error) ? Reconcile.terminal(error, serverMessage(error)) : Reconcile.retryable(error)

/**
 * Turns every {@link KubeError.KubeError} of an effect into its reconcile
 * outcome ({@link fromError}); other errors pass through unchanged, so the
 * result can go on to `Reconcile.classify` or `Effect.catchTag`. Pipeable.
 *
 * @example
 * ```ts
 * import { KubeClient, KubeOutcome, Resource } from "@reconcile/kube"
 *
 * const ensure = (cm: Resource.ConfigMap) =>
 *   KubeClient.patch(Resource.ConfigMap, cm.metadata!.name!, cm, { type: "apply", fieldManager: "me", force: true })
 *     .pipe(KubeOutcome.classify) // Effect<ConfigMap, Reconcile.Retryable | Reconcile.Terminal, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const classify = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, KubeError.KubeError> | Reconcile.Retryable | Reconcile.Terminal, R> =>
  Effect.mapError(self, (e) => KubeError.isKubeError(e) ? fromError(e) : e) as Effect.Effect<
    A,
    Exclude<E, KubeError.KubeError> | Reconcile.Retryable | Reconcile.Terminal,
    R
  >

/** Whether a request writes: anything but `GET` and `HEAD`. An error without request information counts as one. */
const isWrite = (request: KubeError.RequestInfo | undefined): boolean =>
  request === undefined || (request.method !== "GET" && request.method !== "HEAD")

/** Whether retrying the reconcile cannot help until the object (or what it depends on) changes. */
const isTerminal = (error: KubeError.KubeError): boolean => {
  switch (error._tag) {
    case "Invalid":
    case "BadRequest":
    case "MethodNotAllowed":
    case "Encode":
      return true
    case "Decode":
      // an object of a known kind that does not match its Schema stays so until it changes; an answer that is not
      // JSON at all (a proxy's error page, a cut body) may be fine next time
      return error.kind !== undefined
    case "Forbidden":
      return isWrite(error.request)
    case "Conflict":
      return KubeError.isFieldManagerConflict(error)
    case "UnexpectedStatus":
      return error.code >= 400 && error.code < 500
    case "NotFound":
    case "AlreadyExists":
    case "Gone":
    case "Unauthorized":
    case "TooManyRequests":
    case "ServerError":
    case "Timeout":
    case "Transport":
      return false
  }
}

/**
 * What the server said, for a user: the Status message (redacted), followed by the field causes it does not already
 * name. Falls back to the error's own message when the server sent none.
 */
const serverMessage = (error: KubeError.KubeError): string => {
  if (!("status" in error)) return error.message
  const text = error.status.message !== undefined && error.status.message !== "" ? redact(error.status.message) : ""
  const missing = error.causes
    .map((c) =>
      `${c.field !== undefined && c.field !== "" ? `${c.field}: ` : ""}${redact(c.message ?? c.reason ?? "")}`
    )
    .filter((c) => c !== "" && !text.includes(c))
  if (text === "" && missing.length === 0) return error.message
  return [text, ...missing].filter((s) => s !== "").join("; ")
}
