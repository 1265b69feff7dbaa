/**
 * Typed errors of the Kubernetes API.
 *
 * Every failed API call fails with one {@link KubeError}: the `metav1.Status`
 * the server answered, parsed by `reason` and `code` into a tagged error
 * (`NotFound`, `Conflict`, `Invalid`, …), or a client-side failure
 * (`Transport`, `Timeout`, `Decode`, `Encode`). Recover with
 * `Effect.catchTag`, or with the helpers {@link ignoreNotFound},
 * {@link ignoreAlreadyExists} and {@link retryOnConflict}.
 *
 * Messages never contain bearer tokens or the data of Secrets.
 *
 * **Errors that say what to do.** The failures a person must fix — a kind the
 * server does not serve (a CustomResourceDefinition not installed), a missing
 * namespace, an RBAC denial (403), rejected credentials (401), an API server
 * that cannot be reached (connection refused, DNS, timeout, TLS) — carry a
 * {@link Diagnosis}: `problem`, a `summary` of what is wrong and the `fix`
 * (for a 403 also the `rule` to grant). Their `message` is then
 * `summary: fix`, e.g. `the CustomResourceDefinition greetings.example.com
 * (example.com/v1 Greeting) is not installed: apply it (…)`. The tag stays
 * what the server said (`NotFound`, `Forbidden`, `Unauthorized`, `Transport`,
 * `Timeout`), so `Effect.catchTag` and {@link outcomeOf} work as before.
 * Informers fail at start with a diagnosed error instead of retrying until a
 * cache-sync timeout (see `Informer`); {@link find} digs it out of a
 * `ManagerError` or a `Cause` for a main program to print.
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
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as internalDiagnose from "./internal/diagnose.js"
import * as internal from "./internal/errors.js"

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
 * A cause of a `metav1.Status` (`details.causes[]`): for `Invalid`, one per
 * field; for apply conflicts, one per conflicting field.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusCause {
  readonly reason?: string | undefined
  readonly message?: string | undefined
  readonly field?: string | undefined
}

/**
 * `metav1.StatusDetails`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusDetails {
  readonly name?: string | undefined
  readonly group?: string | undefined
  readonly kind?: string | undefined
  readonly uid?: string | undefined
  readonly causes?: ReadonlyArray<StatusCause> | undefined
  readonly retryAfterSeconds?: number | undefined
}

/**
 * `metav1.Status`, the body of every error answer of the API server (and of
 * watch `ERROR` events).
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly kind?: string | undefined
  readonly apiVersion?: string | undefined
  readonly status?: string | undefined
  readonly message?: string | undefined
  readonly reason?: string | undefined
  readonly code?: number | undefined
  readonly details?: StatusDetails | undefined
}

/**
 * An RBAC rule (`rbac.authorization.k8s.io/v1` `PolicyRule`, without
 * `resourceNames` and `nonResourceURLs`).
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
}

/**
 * What a failure means for the person running the operator, and what to do.
 *
 * | `problem` | from | example `summary: fix` |
 * |---|---|---|
 * | `ResourceNotInstalled` | 404 "could not find the requested resource" | `the CustomResourceDefinition greetings.example.com (example.com/v1 Greeting) is not installed: apply it (…)` |
 * | `NamespaceNotFound` | 404 `namespaces "x" not found` (a write), or a namespaced informer's namespace | `namespace "x" does not exist: kubectl create namespace x` |
 * | `Forbidden` | 403 from RBAC | `the service account ops/greeter (…) may not list greetings.example.com in the namespace "default" (403 Forbidden): grant it with … the rule {apiGroups: [example.com], resources: [greetings], verbs: [list]}; …` |
 * | `Unauthorized` | 401, or credentials client-node could not compute | `the API server at https://… rejected the credentials (401 Unauthorized): the token may have expired; refresh it (…)` |
 * | `Unreachable` | connection refused, DNS, connect timeout, TLS verification, no answer | `cannot reach the API server at https://… (kubeconfig context "dev"): certificate signed by unknown authority: check certificate-authority-data (…)` |
 *
 * Never holds a token or a header.
 *
 * @since 0.1.0
 * @category models
 */
export interface Diagnosis {
  readonly problem: "ResourceNotInstalled" | "NamespaceNotFound" | "Forbidden" | "Unauthorized" | "Unreachable"
  /** What is wrong, in one clause. */
  readonly summary: string
  /** What to do about it. */
  readonly fix: string
  /** For `Forbidden`: the rule that would allow the request. */
  readonly rule?: PolicyRule | undefined
}

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
 * The fields of the errors parsed from a `metav1.Status`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusFields {
  /** The Status the server sent (or one synthesized from the HTTP code). */
  readonly status: Status
  readonly request?: RequestInfo | undefined
  /** Set for the failures a person must fix (see {@link Diagnosis}); `message` is then `summary: fix`. */
  readonly diagnosis?: Diagnosis | undefined
}

/**
 * 404: the object (or its namespace, or the kind) does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Data.TaggedError("NotFound")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 409 with reason `AlreadyExists`: a create of an existing name.
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyExists extends Data.TaggedError("AlreadyExists")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 409 Conflict: a write with a stale `resourceVersion`, a failed delete
 * precondition, or a server-side apply conflict (then `causes` name the
 * fields and their managers).
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends Data.TaggedError("Conflict")<
  StatusFields & {
    readonly causes: ReadonlyArray<StatusCause>
  }
> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 410 Gone / Expired: the requested `resourceVersion` (a watch start, a list
 * continue token) is too old; relist.
 *
 * @since 0.1.0
 * @category errors
 */
export class Gone extends Data.TaggedError("Gone")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 422 Invalid: the object failed validation; one cause per field.
 *
 * @since 0.1.0
 * @category errors
 */
export class Invalid extends Data.TaggedError("Invalid")<
  StatusFields & {
    readonly causes: ReadonlyArray<StatusCause>
  }
> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 400 BadRequest: a malformed request (bad selector, body, kind/name mismatch).
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends Data.TaggedError("BadRequest")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 401: the credentials were missing, wrong or expired.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Data.TaggedError("Unauthorized")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 403: authenticated but not allowed (RBAC, a terminating namespace, a
 * protected object).
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends Data.TaggedError("Forbidden")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 405: the resource does not support the verb.
 *
 * @since 0.1.0
 * @category errors
 */
export class MethodNotAllowed extends Data.TaggedError("MethodNotAllowed")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * 429: throttled (API priority and fairness). `retryAfter` comes from the
 * `Retry-After` header or `details.retryAfterSeconds`.
 *
 * @since 0.1.0
 * @category errors
 */
export class TooManyRequests extends Data.TaggedError("TooManyRequests")<
  StatusFields & {
    readonly retryAfter: Duration.Duration | undefined
  }
> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * A 5xx answer (500 InternalError, 503 ServiceUnavailable, …) other than a
 * timeout. `retryAfter` is set when the server sent one.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends Data.TaggedError("ServerError")<
  StatusFields & {
    readonly code: number
    readonly retryAfter: Duration.Duration | undefined
  }
> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

/**
 * The request timed out: a server-side timeout (504, reasons `Timeout` and
 * `ServerTimeout`) or the client's request timeout (then `status.reason` is
 * `Timeout` and `status.code` 0).
 *
 * @since 0.1.0
 * @category errors
 */
export class Timeout extends Data.TaggedError("Timeout")<StatusFields> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

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
 * Any other status (406, 413, 415, an unexpected 3xx, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedStatus extends Data.TaggedError("UnexpectedStatus")<
  StatusFields & {
    readonly code: number
  }
> {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  override get message(): string {
    return internal.describe(this)
  }
}

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
  /** Set when the cause is understood (see {@link Diagnosis}); `message` is then `summary: fix`. */
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
    super({ ...args, raw: internal.truncate(args.raw) })
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

/**
 * Parses a `metav1.Status` into its tagged error, by `reason` first (as
 * apimachinery's `errors.IsNotFound` & co.), then by code. `code` (the HTTP
 * status) is used when the Status has none; `retryAfter` (the `Retry-After`
 * header) wins over `details.retryAfterSeconds`.
 *
 * @example
 * ```ts
 * import { KubeError } from "@reconcile/kube"
 *
 * const e = KubeError.fromStatus({ code: 404, reason: "NotFound", message: "configmaps \"x\" not found" })
 * // e._tag === "NotFound"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStatus = (
  status: Status,
  options?: {
    readonly code?: number | undefined
    readonly retryAfter?: Duration.Duration | undefined
    readonly request?: RequestInfo | undefined
  }
): StatusError => {
  const code = status.code !== undefined && status.code !== 0 ? status.code : options?.code ?? 0
  const fields: StatusFields = { status: { ...status, code }, request: options?.request }
  return internalDiagnose.attach(parse(status, code, fields, options?.retryAfter))
}

const parse = (
  status: Status,
  code: number,
  fields: StatusFields,
  retryAfterHeader: Duration.Duration | undefined
): StatusError => {
  const causes = status.details?.causes ?? []
  const retryAfter = retryAfterHeader ??
    (status.details?.retryAfterSeconds !== undefined && status.details.retryAfterSeconds > 0
      ? Duration.seconds(status.details.retryAfterSeconds)
      : undefined)
  switch (status.reason) {
    case "NotFound":
      return new NotFound(fields)
    case "AlreadyExists":
      return new AlreadyExists(fields)
    case "Conflict":
      return new Conflict({ ...fields, causes })
    case "Gone":
    case "Expired":
      return new Gone(fields)
    case "Invalid":
      return new Invalid({ ...fields, causes })
    case "BadRequest":
      return new BadRequest(fields)
    case "Unauthorized":
      return new Unauthorized(fields)
    case "Forbidden":
      return new Forbidden(fields)
    case "MethodNotAllowed":
      return new MethodNotAllowed(fields)
    case "TooManyRequests":
      return new TooManyRequests({ ...fields, retryAfter })
    case "Timeout":
    case "ServerTimeout":
      return new Timeout(fields)
  }
  switch (code) {
    case 400:
      return new BadRequest(fields)
    case 401:
      return new Unauthorized(fields)
    case 403:
      return new Forbidden(fields)
    case 404:
      return new NotFound(fields)
    case 405:
      return new MethodNotAllowed(fields)
    case 409:
      return new Conflict({ ...fields, causes })
    case 410:
      return new Gone(fields)
    case 422:
      return new Invalid({ ...fields, causes })
    case 429:
      return new TooManyRequests({ ...fields, retryAfter })
    case 504:
      return new Timeout(fields)
  }
  return code >= 500 ? new ServerError({ ...fields, code, retryAfter }) : new UnexpectedStatus({ ...fields, code })
}

/**
 * What the client knows about a request beyond its error, for {@link diagnose}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DiagnoseContext {
  /** The API server's URL. */
  readonly server?: string | undefined
  /** The kubeconfig context the client was loaded with. */
  readonly context?: string | undefined
  /** The kind of the resource requested (`Greeting`), for the message of a missing CRD. */
  readonly kind?: string | undefined
  /** Whether the request was a watch. */
  readonly watch?: boolean | undefined
}

/**
 * The {@link Diagnosis} of an error, if it is one of the failures a person
 * must fix, computed from its Status and its request's method and path (and
 * `context`). The client already attaches it to the errors it returns; this is
 * for errors made elsewhere.
 *
 * @example
 * ```ts
 * import { KubeError } from "@reconcile/kube"
 *
 * const e = KubeError.fromStatus(
 *   { code: 404, reason: "NotFound", message: "the server could not find the requested resource" },
 *   { request: { method: "GET", path: "/apis/example.com/v1/greetings" } }
 * )
 * KubeError.diagnose(e, { kind: "Greeting" })?.summary
 * // "the CustomResourceDefinition greetings.example.com (example.com/v1 Greeting) is not installed"
 * ```
 *
 * @since 0.1.0
 * @category diagnostics
 */
export const diagnose = (error: KubeError, context?: DiagnoseContext): Diagnosis | undefined =>
  internalDiagnose.diagnose(error, context)

/**
 * The error with its {@link Diagnosis} computed with `context` (a new
 * instance of the same class), or the error itself when there is none.
 *
 * @since 0.1.0
 * @category diagnostics
 */
export const withDiagnosis: {
  (context: DiagnoseContext): <E extends KubeError>(error: E) => E
  <E extends KubeError>(error: E, context: DiagnoseContext): E
} = dual(2, <E extends KubeError>(error: E, context: DiagnoseContext): E => internalDiagnose.attach(error, context))

/**
 * Whether an error carries a {@link Diagnosis}: a failure retrying will not
 * fix by itself (an informer fails with it at start).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isDiagnosed = (u: unknown): u is KubeError & { readonly diagnosis: Diagnosis } =>
  isKubeError(u) && "diagnosis" in u && u.diagnosis !== undefined

/**
 * The {@link KubeError} inside a failure, if any: the value itself, or one
 * found along `cause` properties (a `ManagerError`, a `SourceFailed`, a
 * reconcile outcome) or in an Effect `Cause` (its failures and defects). A
 * diagnosed error wins over others. What a main program prints when the
 * operator stops:
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
export const find = (u: unknown): KubeError | undefined => internalDiagnose.find(u)

/**
 * Whether retrying the same request later may succeed: `TooManyRequests`,
 * `ServerError`, `Timeout`, `Transport`. (A `Conflict` needs a fresh read
 * first: see {@link retryOnConflict}.)
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
 * Whether an error is a `NotFound`.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isNotFound = (u: unknown): u is NotFound => isKubeError(u) && u._tag === "NotFound"

/**
 * Whether an error is a `Conflict` (stale resourceVersion, failed
 * precondition or apply conflict).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isConflict = (u: unknown): u is Conflict => isKubeError(u) && u._tag === "Conflict"

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
 * Turns `NotFound` into `Option.none()` (and success into `Option.some`):
 * the usual "already gone is fine" of a reconcile.
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
    Effect.catchIf(
      (e): e is Extract<E, AlreadyExists> => isKubeError(e) && e._tag === "AlreadyExists",
      () => Effect.succeedNone
    )
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

/**
 * The reconcile outcome of an API error: `Terminal` (with the server's
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
 * `NotFound` is `Retryable`, as controller-runtime treats every error a
 * reconciler returns: a 404 in the middle of a reconcile is a namespace, CRD or
 * dependency that appears later (no event on the reconciled object would
 * announce it) or a cache that has not seen a create yet. The one 404 that
 * means "done" — the reconciled object itself is gone — is the caller's to
 * handle with {@link ignoreNotFound} (controller-runtime's
 * `client.IgnoreNotFound`), before this.
 *
 * A `Terminal` outcome's `message` is the server's `metav1.Status` message
 * followed by the field causes it does not already name — what a condition
 * should tell the user; its `cause` is the `KubeError`. A `Retryable` keeps the
 * full message (method, path, code) for the logs.
 *
 * @example
 * ```ts
 * import { KubeError } from "@reconcile/kube"
 *
 * const e = KubeError.fromStatus(
 *   { code: 422, reason: "Invalid", message: "Service \"x\" is invalid: metadata.name: Invalid value" },
 *   { request: { method: "PATCH", path: "/api/v1/namespaces/default/services/x" } }
 * )
 * KubeError.outcomeOf(e) // Terminal { message: "Service \"x\" is invalid: metadata.name: Invalid value" }
 * ```
 *
 * @since 0.1.0
 * @category reconcile
 */
export const outcomeOf = (error: KubeError): Reconcile.Retryable | Reconcile.Terminal =>
  internal.isTerminal(error)
    ? Reconcile.terminal(error, internal.serverMessage(error))
    : Reconcile.retryable(error)

/**
 * Turns every {@link KubeError} of an effect into its reconcile outcome
 * ({@link outcomeOf}); other errors pass through unchanged, so the result can
 * go on to `Reconcile.classify` or `Effect.catchTag`. Pipeable.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeClient, KubeError, Resource } from "@reconcile/kube"
 *
 * const ensure = (cm: Resource.ConfigMap) =>
 *   KubeClient.patch(Resource.ConfigMap, cm.metadata!.name!, cm, { type: "apply", fieldManager: "me", force: true })
 *     .pipe(KubeError.toOutcome) // Effect<ConfigMap, Reconcile.Retryable | Reconcile.Terminal, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category reconcile
 */
export const toOutcome = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, KubeError> | Reconcile.Retryable | Reconcile.Terminal, R> =>
  Effect.mapError(self, (e) => isKubeError(e) ? outcomeOf(e) : e) as Effect.Effect<
    A,
    Exclude<E, KubeError> | Reconcile.Retryable | Reconcile.Terminal,
    R
  >
