/**
 * Typed errors of the Kubernetes API.
 *
 * Every failed API call fails with one {@link KubeError}: the `metav1.Status`
 * the server answered, read by `reason` and `code` into a tagged error
 * (`NotFound`, `Conflict`, `Invalid`, …; see `KubeStatus.toError`), or a
 * client-side failure (`Transport`, `Timeout`, `Decode`, `Encode`). Recover
 * with `Effect.catchTag`, or with {@link ignoreNotFound},
 * {@link ignoreAlreadyExists} and {@link retryOnConflict}; in a reconcile,
 * `KubeOutcome.classify` says which errors are worth a retry.
 *
 * **One class per reason, one body.** The thirteen errors parsed from a Status
 * share one body (`status`, `code`, `causes`, `retryAfter`, `request`,
 * `diagnosis`, and the message); each is a one-line class over it. They are
 * classes of their own, not one error with a `reason` field (as effect's
 * `HttpClientError`), because a reconcile recovers from one reason at a time:
 * `Effect.catchTag("NotFound", …)` narrows the error channel, `ignoreNotFound`
 * removes `NotFound` from it, and `_tag` is what logs and tests name.
 * `Transport`, `Decode` and `Encode` carry other fields. Every error has the
 * {@link TypeId}; {@link isKubeError} and the other guards read it and `_tag`.
 * (The module is over 500 lines for the documentation of its sixteen errors
 * and helpers: the code is one base, one-line classes and small functions.)
 *
 * Messages never contain bearer tokens or the data of Secrets. The failures a
 * person must fix carry a `diagnosis` and their message says what to do (see
 * `Diagnosis`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeClient, KubeError, Resource } from "@reconcile/kube"
 *
 * // read-modify-write, re-run from the read when someone else wrote first
 * const bump = KubeClient.get(Resource.ConfigMap, "settings").pipe(
 *   Effect.flatMap((cm) => KubeClient.replace(Resource.ConfigMap, { ...cm, data: { ...cm.data, n: "2" } })),
 *   KubeError.retryOnConflict({ times: 5 }),
 *   KubeError.ignoreNotFound
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { ObjectMeta } from "@reconcile/core/ObjectMeta"
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import { truncate } from "./internal/errors.js"
import * as internal from "./internal/kubeError.js"
import type { Diagnosis, Status, StatusCause } from "./internal/kubeError.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The request an error belongs to (method and path, never headers or bodies).
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestInfo {
  readonly method: string
  readonly path: string
}

/**
 * What an error parsed from a `metav1.Status` is made of.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusFields {
  /** The Status the server sent (or one synthesized from the HTTP code). */
  readonly status: Status
  readonly request?: RequestInfo | undefined
  /** Set for the failures a person must fix (see `Diagnosis`); `message` is then `summary: fix`. */
  readonly diagnosis?: Diagnosis | undefined
  /** When to ask again: the `Retry-After` header, else `details.retryAfterSeconds` (when positive). */
  readonly retryAfter?: Duration.Duration | undefined
}

/**
 * What every error parsed from a `metav1.Status` is, `_tag` being its reason:
 * the {@link StatusFields}, the HTTP `code` and the Status's `causes`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusErrorOf<Tag extends string> extends Cause.YieldableError, StatusFields {
  readonly _tag: Tag
  readonly [TypeId]: TypeId
  /** The HTTP status (`0` for the client's own timeout). */
  readonly code: number
  /** The Status's `details.causes`: for `Invalid`, one per field; for an apply `Conflict`, one per field. */
  readonly causes: ReadonlyArray<StatusCause>
}

/** The body of the errors parsed from a Status, written once; `tag` is the reason. */
const StatusErrorBase = <Tag extends string>(tag: Tag): new(fields: StatusFields) => StatusErrorOf<Tag> =>
  class extends Data.TaggedError(tag)<StatusFields> {
    readonly [TypeId]: TypeId = TypeId
    constructor(fields: StatusFields) {
      const seconds = fields.status.details?.retryAfterSeconds
      super(
        fields.retryAfter === undefined && seconds !== undefined && seconds > 0
          ? { ...fields, retryAfter: Duration.seconds(seconds) }
          : fields
      )
    }
    get code(): number {
      return this.status.code ?? 0
    }
    get causes(): ReadonlyArray<StatusCause> {
      return this.status.details?.causes ?? []
    }
    override get message(): string {
      return internal.describe(this)
    }
  }

/**
 * 404: the object (or its namespace, or the kind) does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends StatusErrorBase("NotFound") {}

/**
 * 409 with reason `AlreadyExists`: a create of an existing name.
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyExists extends StatusErrorBase("AlreadyExists") {}

/**
 * 409 Conflict: a write with a stale `resourceVersion`, a failed delete
 * precondition, or a server-side apply conflict (then `causes` name the
 * fields and their managers: {@link isFieldManagerConflict}).
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends StatusErrorBase("Conflict") {}

/**
 * 410 Gone / Expired: the requested `resourceVersion` (a watch start, a list
 * continue token) is too old; relist.
 *
 * @since 0.1.0
 * @category errors
 */
export class Gone extends StatusErrorBase("Gone") {}

/**
 * 422 Invalid: the object failed validation; one cause per field.
 *
 * @since 0.1.0
 * @category errors
 */
export class Invalid extends StatusErrorBase("Invalid") {}

/**
 * 400 BadRequest: a malformed request (bad selector, body, kind/name mismatch).
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends StatusErrorBase("BadRequest") {}

/**
 * 401: the credentials were missing, wrong or expired.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends StatusErrorBase("Unauthorized") {}

/**
 * 403: authenticated but not allowed (RBAC, a terminating namespace, a
 * protected object).
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends StatusErrorBase("Forbidden") {}

/**
 * 405: the resource does not support the verb.
 *
 * @since 0.1.0
 * @category errors
 */
export class MethodNotAllowed extends StatusErrorBase("MethodNotAllowed") {}

/**
 * 429: throttled (API priority and fairness). `retryAfter` comes from the
 * `Retry-After` header or `details.retryAfterSeconds`.
 *
 * @since 0.1.0
 * @category errors
 */
export class TooManyRequests extends StatusErrorBase("TooManyRequests") {}

/**
 * A 5xx answer (500 InternalError, 503 ServiceUnavailable, …) other than a
 * timeout. `retryAfter` is set when the server sent one.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends StatusErrorBase("ServerError") {}

/**
 * The request timed out: a server-side timeout (504, reasons `Timeout` and
 * `ServerTimeout`) or the client's request timeout (then `status.reason` is
 * `Timeout` and `code` 0: {@link clientTimeout}).
 *
 * @since 0.1.0
 * @category errors
 */
export class Timeout extends StatusErrorBase("Timeout") {}

/**
 * Any other status (406, 413, 415, an unexpected 3xx, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedStatus extends StatusErrorBase("UnexpectedStatus") {}

/**
 * The client's own timeout: no answer to `request` within `after` (`status.reason` `Timeout`, `status.code` 0).
 *
 * @since 0.1.0
 * @category constructors
 */
export const clientTimeout = (after: Duration.Duration, request: RequestInfo): Timeout =>
  new Timeout({
    status: {
      kind: "Status",
      status: "Failure",
      reason: "Timeout",
      code: 0,
      message: `no answer within ${Duration.format(after)}`
    },
    request
  })

/**
 * The request did not get an answer: connection refused or reset, TLS
 * failure (`Request`), the body broke off while reading (`Response`), or
 * client-node could not compute the credentials (`Credentials`: an exec
 * plugin failed, a token or certificate file is unreadable).
 *
 * @since 0.1.0
 * @category errors
 */
export class Transport extends Data.TaggedError("Transport")<{
  readonly reason: "Request" | "Response" | "Credentials"
  readonly request?: RequestInfo | undefined
  /** The underlying error (a Node system or TLS error); never carries request headers. */
  readonly cause: unknown
  /** Set when the cause is understood (see `Diagnosis`); `message` is then `summary: fix`. */
  readonly diagnosis?: Diagnosis | undefined
}> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describeTransport(this)
  }
}

/**
 * A body, a watch line or an object that does not decode: not JSON, not an
 * object, or (for custom resources) not matching the `spec`/`status` Schema.
 * `raw` is the offending text, truncated (and redacted for Secrets); `issue`
 * says what is wrong. `raw` is not part of `message`.
 *
 * When the body was an object with a readable `metadata`, `metadata` is that
 * metadata (name, namespace, uid, resourceVersion, generation, labels,
 * annotations, owner references, finalizers, deletionTimestamp) and
 * `apiVersion` the resource's: enough to key the object, process its deletion
 * and release its finalizers (see `Undecodable`).
 *
 * @since 0.1.0
 * @category errors
 */
export class Decode extends Data.TaggedError("Decode")<{
  /** The kind being decoded, when known. */
  readonly kind?: string | undefined
  /** The apiVersion of the resource being decoded, when known. */
  readonly apiVersion?: string | undefined
  /** The object's metadata, when the body was an object with a readable `metadata`. */
  readonly metadata?: ObjectMeta | undefined
  readonly raw: string
  readonly issue: string
  readonly request?: RequestInfo | undefined
}> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  constructor(args: {
    readonly kind?: string | undefined
    readonly apiVersion?: string | undefined
    readonly metadata?: ObjectMeta | undefined
    readonly raw: string
    readonly issue: string
    readonly request?: RequestInfo | undefined
  }) {
    super({ ...args, raw: truncate(args.raw) })
  }
  override get message(): string {
    return internal.describeDecode(this)
  }
}

/**
 * An object could not be encoded for the wire (a custom resource whose
 * Schema's encoding side fails).
 *
 * @since 0.1.0
 * @category errors
 */
export class Encode extends Data.TaggedError("Encode")<{
  readonly kind: string
  readonly issue: string
}> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return `cannot encode ${this.kind}: ${this.issue}`
  }
}

/**
 * The errors parsed from a `metav1.Status`.
 *
 * @since 0.1.0
 * @category models
 */
export type StatusError =
  | NotFound
  | AlreadyExists
  | Conflict
  | Gone
  | Invalid
  | BadRequest
  | Unauthorized
  | Forbidden
  | MethodNotAllowed
  | TooManyRequests
  | ServerError
  | Timeout
  | UnexpectedStatus

/**
 * Every error of a Kubernetes API call.
 *
 * @since 0.1.0
 * @category models
 */
export type KubeError = StatusError | Transport | Decode | Encode

/**
 * Whether a value is one of the {@link KubeError}s.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isKubeError = (u: unknown): u is KubeError => Predicate.hasProperty(u, TypeId)

const isKubeErrorTagged = <Tag extends KubeError["_tag"]>(tag: Tag) =>
(
  u: unknown
): u is Extract<KubeError, { readonly _tag: Tag }> => isKubeError(u) && Predicate.isTagged(u, tag)

/**
 * Whether an error is a `NotFound`.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isNotFound: (u: unknown) => u is NotFound = isKubeErrorTagged("NotFound")

/**
 * Whether an error is an `AlreadyExists`.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isAlreadyExists: (u: unknown) => u is AlreadyExists = isKubeErrorTagged("AlreadyExists")

/**
 * Whether an error is a `Conflict` (stale resourceVersion, failed
 * precondition or apply conflict).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isConflict: (u: unknown) => u is Conflict = isKubeErrorTagged("Conflict")

/**
 * Whether a `Conflict` is a server-side apply conflict between field managers
 * (retrying cannot help; apply with `force` or change the fields).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isFieldManagerConflict = (u: unknown): u is Conflict =>
  isConflict(u) && u.causes.some((c) => c.reason === "FieldManagerConflict")

/**
 * Whether sending the same request again later may succeed: `TooManyRequests`,
 * `ServerError`, `Timeout`, `Transport`. (A `Conflict` needs a fresh read
 * first: see {@link retryOnConflict}. For what a reconcile should do with an
 * error, see `KubeOutcome`.)
 *
 * @since 0.1.0
 * @category refinements
 */
export const isRetryable = (error: KubeError): boolean => {
  switch (error._tag) {
    case "TooManyRequests":
    case "ServerError":
    case "Timeout":
    case "Transport":
      return true
    default:
      return false
  }
}

/**
 * The {@link KubeError} inside a failure, if any: the value itself, or one
 * found along `cause` properties (a `ManagerError`, a `SourceFailed`, a
 * reconcile outcome) or in an Effect `Cause` (its failures and defects). A
 * diagnosed error (see `Diagnosis`) wins over others. What a main program
 * prints when the operator stops:
 *
 * @example
 * ```ts
 * import { KubeError } from "@reconcile/kube"
 *
 * declare const failure: unknown // e.g. the ManagerError of Manager.launch
 * const error = KubeError.find(failure)
 * console.error(`error: ${error !== undefined ? error.message : String(failure)}`)
 * ```
 *
 * @since 0.1.0
 * @category diagnostics
 */
export const find = (u: unknown): KubeError | undefined => internal.find(u)

/**
 * Turns `NotFound` into `Option.none()` (and success into `Option.some`):
 * the usual "already gone is fine" of a reconcile (controller-runtime's
 * `client.IgnoreNotFound`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeClient, KubeError, Resource } from "@reconcile/kube"
 *
 * const maybe = KubeClient.get(Resource.ConfigMap, "settings").pipe(KubeError.ignoreNotFound)
 * // Effect<Option<ConfigMap>, Exclude<KubeError, NotFound>, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const ignoreNotFound = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<
  Option.Option<A>,
  Exclude<E, NotFound>,
  R
> =>
  Effect.asSome(self).pipe(
    Effect.catchIf((e): e is Extract<E, NotFound> => isNotFound(e), () => Effect.succeedNone)
  ) as Effect.Effect<Option.Option<A>, Exclude<E, NotFound>, R>

/**
 * Turns `AlreadyExists` into `Option.none()` (and success into `Option.some`):
 * "create unless it exists".
 *
 * @since 0.1.0
 * @category combinators
 */
export const ignoreAlreadyExists = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<
  Option.Option<A>,
  Exclude<E, AlreadyExists>,
  R
> =>
  Effect.asSome(self).pipe(
    Effect.catchIf((e): e is Extract<E, AlreadyExists> => isAlreadyExists(e), () => Effect.succeedNone)
  ) as Effect.Effect<Option.Option<A>, Exclude<E, AlreadyExists>, R>

/**
 * Options of {@link retryOnConflict}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryOnConflictOptions {
  /** Retries after the first attempt (default 5, as client-go's `DefaultRetry`). */
  readonly times?: number | undefined
  /** Delay between attempts (default 10 ms doubling, jittered). */
  readonly schedule?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * Re-runs the whole effect — the read, the change and the write — while it
 * fails with a `Conflict` from a stale `resourceVersion` or a failed
 * precondition, at most `times` more times (client-go's `RetryOnConflict`).
 * Server-side apply conflicts between field managers are not retried.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeClient, KubeError, Resource } from "@reconcile/kube"
 *
 * const addLabel = Effect.gen(function*() {
 *   const cm = yield* KubeClient.get(Resource.ConfigMap, "settings")
 *   const labels = { ...cm.metadata?.labels, touched: "yes" }
 *   return yield* KubeClient.replace(Resource.ConfigMap, { ...cm, metadata: { ...cm.metadata, labels } })
 * }).pipe(KubeError.retryOnConflict({ times: 3 }))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const retryOnConflict: {
  (options?: RetryOnConflictOptions): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, options?: RetryOnConflictOptions): Effect.Effect<A, E, R>
} = dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R>(self: Effect.Effect<A, E, R>, options?: RetryOnConflictOptions): Effect.Effect<A, E, R> =>
    Effect.retry(self, {
      times: options?.times ?? 5,
      schedule: options?.schedule ?? Schedule.jittered(Schedule.exponential("10 millis")),
      while: (e: E) => isConflict(e) && !isFieldManagerConflict(e)
    })
)
