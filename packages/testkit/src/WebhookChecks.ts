/**
 * Property checks a user runs on their own webhooks, in process, the way
 * kube-apiserver calls them:
 *
 * - {@link admit} builds the AdmissionReview of a create, update or delete
 *   ({@link admissionReview}: `kind`, `resource`, `name`, `namespace`,
 *   `userInfo`, `dryRun`, `options`), calls the webhook's `handle` and reads
 *   the answer as kube-apiserver does ({@link Answer}: allowed, Status,
 *   warnings, and the JSON patch applied to the object as sent). An answer
 *   kube-apiserver would reject (not an AdmissionReview, another uid, a patch
 *   that does not apply) fails with reason `InvalidResponse`.
 * - {@link defaultingIsIdempotent}: defaulting a defaulted object produces no
 *   patch.
 * - {@link validatorAdmitsDefaulted}: the validator admits on create every
 *   object the defaulter makes of an input it admits.
 * - {@link conversionRoundTrips}: hub → spoke → hub and spoke → hub → spoke
 *   give the object back, for every spoke.
 *
 * Each check is an Effect over an `Arbitrary` of objects **as sent on the
 * wire** (encoded JSON; {@link objects} draws them from a `Resource.custom`'s
 * Schemas with valid metadata). It succeeds when the property holds for every
 * object drawn, and otherwise fails with a {@link WebhookCheckError} whose
 * message names the check, the fields that differed (`spec.replicas: 1 → 2`),
 * the shrunk counterexample and the replay token. A check requires what the
 * handlers require (`R`): provide it in the test.
 *
 * A defaulter's input it denies (a `Denied`, 4xx) is not a counterexample:
 * the check goes on with the next object, and fails as `Inconclusive` when it
 * denied every one. A handler defect (a 500 answer) always is.
 *
 * One module of about 500 lines of code (and as many of documentation):
 * the checks share the in-process call, the property runner and the field
 * paths of their messages, and none of them is used without the others.
 *
 * @example
 * ```ts
 * import { it } from "@effect/vitest"
 * import { Admission, Resource } from "@reconcile/kube"
 * import { WebhookChecks } from "@reconcile/testkit"
 * import { Effect, Schema } from "effect"
 *
 * const WebApp = Resource.custom({
 *   group: "apps.reconcile.dev",
 *   version: "v1",
 *   kind: "WebApp",
 *   plural: "webapps",
 *   scope: "Namespaced",
 *   spec: Schema.Struct({ image: Schema.String, replicas: Schema.optional(Schema.Int) })
 * })
 * const defaults = Admission.defaulter(WebApp, (app) =>
 *   Effect.succeed({ ...app, spec: { ...app.spec, replicas: app.spec.replicas ?? 1 } }))
 * const checks = Admission.validator(WebApp, {
 *   create: (app) =>
 *     app.spec.replicas === undefined
 *       ? Admission.invalid([{ field: "spec.replicas", message: "required" }])
 *       : Effect.void
 * })
 *
 * it.effect("defaulting is idempotent", () =>
 *   WebhookChecks.defaultingIsIdempotent(defaults, WebhookChecks.objects(WebApp)))
 * it.effect("the validator admits what the defaulter makes", () =>
 *   WebhookChecks.validatorAdmitsDefaulted(defaults, checks, WebhookChecks.objects(WebApp), { runs: 50 }))
 * ```
 *
 * @since 0.1.0
 */
import type * as Admission from "@reconcile/kube/Admission"
import type * as Conversion from "@reconcile/kube/Conversion"
import type * as Resource from "@reconcile/kube/Resource"
import * as Arbitrary from "effect/Arbitrary"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import jsonpatch from "fast-json-patch"

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** A JSON copy: what the wire carries (`undefined` properties dropped). */
const toJson = (u: unknown): unknown => u === undefined ? undefined : JSON.parse(JSON.stringify(u) ?? "null")

// ---------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * A check that did not hold, or could not run. `reason`:
 *
 * - `NotIdempotent`: defaulting the defaulted object patched it again;
 * - `Denied`: the validator (or the defaulter, on its own output) denied a defaulted object;
 * - `Errored`: a handler failed (a 500 answer: a defect or a timeout);
 * - `NotRoundTrip`: a conversion round trip did not give the object back;
 * - `Unconvertible`: the conversion webhook failed to convert an object;
 * - `InvalidResponse`: an answer kube-apiserver would reject;
 * - `Inconclusive`: nothing was checked (every input denied, generation exhausted, a replay that no longer fails);
 * - `MissingVersion`: no objects to draw for a version of the conversion webhook.
 *
 * `object` is the (shrunk) counterexample, `paths` the fields that differed or were named by the denial.
 *
 * @since 0.1.0
 * @category errors
 */
export class WebhookCheckError extends Data.TaggedError("WebhookCheckError")<{
  readonly reason:
    | "NotIdempotent"
    | "Denied"
    | "Errored"
    | "NotRoundTrip"
    | "Unconvertible"
    | "InvalidResponse"
    | "Inconclusive"
    | "MissingVersion"
  readonly message: string
  readonly object?: unknown
  readonly paths?: ReadonlyArray<string> | undefined
  /** Replays the falsification with `Arbitrary`'s `replay` option (the checks' `replay`). */
  readonly replay?: string | undefined
}> {}

// ---------------------------------------------------------------------------------------------------------------
// field paths and differences
// ---------------------------------------------------------------------------------------------------------------

/** A field path as kubectl prints it: `spec.replicas`, `spec.ports[0]`, `metadata.labels[app.kubernetes.io/name]`. */
const pathText = (path: ReadonlyArray<string | number>): string =>
  path.reduce<string>((out, key) => {
    if (typeof key === "number") return `${out}[${key}]`
    if (/^[A-Za-z_$][\w$-]*$/.test(key)) return out === "" ? key : `${out}.${key}`
    return `${out}[${key}]`
  }, "")

/** A JSON pointer (`/spec/replicas`) as a field path. */
const pointerText = (pointer: string): string =>
  pathText(
    pointer.split("/").slice(1).map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~")).map((s) =>
      /^(0|[1-9]\d*)$/.test(s) ? Number(s) : s
    )
  )

interface Difference {
  readonly path: string
  readonly before: unknown
  readonly after: unknown
}

/** Where two JSON values differ: objects key by key, arrays of one length item by item, anything else whole. */
const differences = (
  a: unknown,
  b: unknown,
  path: Array<string | number> = [],
  out: Array<Difference> = []
): Array<Difference> => {
  const found = out.length
  if ((isRecord(a) || a === undefined) && (isRecord(b) || b === undefined) && a !== b) {
    // an object on one side only is compared key by key with an empty one: the fields that appeared are named
    const x: Json = a ?? {}
    const y: Json = b ?? {}
    for (const key of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
      const at = [...path, key]
      differences(Object.hasOwn(x, key) ? x[key] : undefined, Object.hasOwn(y, key) ? y[key] : undefined, at, out)
    }
  } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item, i) => differences(item, b[i], [...path, i], out))
  }
  if (out.length === found && JSON.stringify(a) !== JSON.stringify(b)) {
    out.push({ path: path.length === 0 ? "(the object)" : pathText(path), before: a, after: b })
  }
  return out
}

const show = (u: unknown): string => {
  if (u === undefined) return "(absent)"
  const text = JSON.stringify(u)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

const describe = (diffs: ReadonlyArray<Difference>): string =>
  diffs.map((d) => `  ${d.path}: ${show(d.before)} → ${show(d.after)}`).join("\n")

// ---------------------------------------------------------------------------------------------------------------
// running a webhook in process
// ---------------------------------------------------------------------------------------------------------------

/**
 * What kube-apiserver asks a webhook about: a create (`object`), an update (`oldObject` → `object`) or a delete
 * (`oldObject`). Objects are as sent on the wire.
 *
 * @since 0.1.0
 * @category models
 */
export type Call =
  | { readonly operation: "CREATE"; readonly object: unknown }
  | { readonly operation: "UPDATE"; readonly object: unknown; readonly oldObject: unknown }
  | { readonly operation: "DELETE"; readonly oldObject: unknown }

/**
 * The rest of the review's request; every field has kube-apiserver's value by default.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReviewOptions {
  /** Default a fresh `webhookchecks-<n>`. */
  readonly uid?: string | undefined
  /** Default `false`; with `true` the `options` carry `dryRun: ["All"]`. */
  readonly dryRun?: boolean | undefined
  /** Default `alice` in `system:authenticated`. */
  readonly userInfo?: Admission.UserInfo | undefined
  /** Default the object's `metadata.namespace`. */
  readonly namespace?: string | undefined
  readonly subResource?: string | undefined
  /** Default the object's `apiVersion` and `kind`. */
  readonly kind?: Admission.GroupVersionKind | undefined
  /** Default `CreateOptions`, `UpdateOptions` or `DeleteOptions` of `meta.k8s.io/v1`. */
  readonly options?: unknown
}

/**
 * An RFC 6902 operation of a defaulter's patch.
 *
 * @since 0.1.0
 * @category models
 */
export interface PatchOperation {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test"
  readonly path: string
  readonly value?: unknown
  readonly from?: string | undefined
}

/**
 * The `metav1.Status` of a refusal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly code: number | undefined
  readonly message: string
  readonly reason: string | undefined
  readonly causes: ReadonlyArray<{ readonly field: string; readonly message: string; readonly reason: string }>
}

/**
 * A webhook's answer, read as kube-apiserver reads it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly uid: string
  readonly allowed: boolean
  /** The refusal's Status (also on an allowed answer, when the webhook sent one). */
  readonly status: Status | undefined
  readonly warnings: ReadonlyArray<string>
  /** The JSON patch (empty without one). */
  readonly patch: ReadonlyArray<PatchOperation>
  /** The object as sent with the patch applied (a create or update); `undefined` for a delete. */
  readonly object: unknown
  /** What the webhook logged at level Error during the call, each with its cause: why a 500 answer was one. */
  readonly errors: ReadonlyArray<string>
}

let uids = 0

const parseApiVersion = (apiVersion: unknown): { readonly group: string; readonly version: string } | undefined => {
  if (typeof apiVersion !== "string" || apiVersion === "") return undefined
  const at = apiVersion.indexOf("/")
  return at < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, at), version: apiVersion.slice(at + 1) }
}

const optionsKind = { CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions" } as const

/**
 * The `admission.k8s.io/v1` AdmissionReview kube-apiserver sends `webhook` for `call`: the kind from the object's
 * `apiVersion`/`kind` (or `options.kind`), the resource from the webhook's rule, name and namespace from the
 * object's metadata.
 *
 * @since 0.1.0
 * @category constructors
 */
export const admissionReview = (
  webhook: Admission.Webhook<any>,
  call: Call,
  options: ReviewOptions = {}
): Json => {
  const object = "object" in call ? toJson(call.object) : undefined
  const oldObject = "oldObject" in call ? toJson(call.oldObject) : undefined
  const subject = (object ?? oldObject) as Json | undefined
  const metadata = isRecord(subject?.metadata) ? subject.metadata : {}
  const gv = parseApiVersion(subject?.apiVersion)
  const rule = webhook.rules[0]
  const kind = options.kind ?? {
    group: gv?.group ?? rule?.apiGroups[0] ?? "",
    version: gv?.version ?? rule?.apiVersions[0] ?? "",
    kind: typeof subject?.kind === "string" ? subject.kind : ""
  }
  const resource = { group: kind.group, version: kind.version, resource: rule?.resources[0] ?? "" }
  const namespace = options.namespace ?? (typeof metadata.namespace === "string" ? metadata.namespace : undefined)
  const dryRun = options.dryRun ?? false
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: options.uid ?? `webhookchecks-${++uids}`,
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      ...(options.subResource === undefined ? {} : { subResource: options.subResource }),
      name: typeof metadata.name === "string" ? metadata.name : "",
      ...(namespace === undefined ? {} : { namespace }),
      operation: call.operation,
      userInfo: options.userInfo ?? { username: "alice", groups: ["system:authenticated"] },
      object: object ?? null,
      oldObject: oldObject ?? null,
      dryRun,
      options: options.options ?? {
        apiVersion: "meta.k8s.io/v1",
        kind: optionsKind[call.operation],
        ...(dryRun ? { dryRun: ["All"] } : {})
      }
    }
  }
}

const invalidResponse = (webhook: Admission.Webhook<any>, message: string) =>
  new WebhookCheckError({ reason: "InvalidResponse", message: `webhook ${webhook.name}: ${message}` })

const statusOf = (u: unknown): Status | undefined => {
  if (!isRecord(u)) return undefined
  const details = isRecord(u.details) ? u.details : {}
  const causes = Array.isArray(details.causes) ? details.causes.filter(isRecord) : []
  return {
    code: typeof u.code === "number" ? u.code : undefined,
    message: typeof u.message === "string" ? u.message : "",
    reason: typeof u.reason === "string" ? u.reason : undefined,
    causes: causes.map((c) => ({
      field: typeof c.field === "string" ? c.field : "",
      message: typeof c.message === "string" ? c.message : "",
      reason: typeof c.reason === "string" ? c.reason : ""
    }))
  }
}

/** Reads a webhook's reply to `review` as kube-apiserver does. */
const readAnswer = (
  webhook: Admission.Webhook<any>,
  review: Json,
  reply: unknown,
  errors: ReadonlyArray<string>
): Result.Result<Answer, WebhookCheckError> => {
  const request = review.request as Json
  if (!isRecord(reply) || reply.apiVersion !== "admission.k8s.io/v1" || reply.kind !== "AdmissionReview") {
    return Result.fail(invalidResponse(webhook, `the answer is not an admission.k8s.io/v1 AdmissionReview`))
  }
  const response = reply.response
  if (!isRecord(response)) return Result.fail(invalidResponse(webhook, "the AdmissionReview has no response"))
  if (response.uid !== request.uid) {
    return Result.fail(
      invalidResponse(webhook, `the response's uid ${show(response.uid)} is not the request's ${show(request.uid)}`)
    )
  }
  if (typeof response.allowed !== "boolean") {
    return Result.fail(invalidResponse(webhook, "the response has no boolean allowed"))
  }
  const warnings = Array.isArray(response.warnings)
    ? response.warnings.filter((w): w is string => typeof w === "string")
    : []
  let patch: Array<PatchOperation> = []
  if (response.patch !== undefined) {
    if (response.patchType !== "JSONPatch") {
      return Result.fail(invalidResponse(webhook, `a patch of type ${show(response.patchType)}, not JSONPatch`))
    }
    try {
      const parsed: unknown = JSON.parse(Buffer.from(String(response.patch), "base64").toString("utf8"))
      if (!Array.isArray(parsed)) throw new TypeError("not an array")
      patch = parsed as Array<PatchOperation>
    } catch (e) {
      return Result.fail(invalidResponse(webhook, `the patch is not a base64 JSON array (${String(e)})`))
    }
  }
  let object: unknown = request.operation === "DELETE" ? undefined : request.object
  if (patch.length > 0) {
    if (!response.allowed) return Result.fail(invalidResponse(webhook, "a patch on a refusal"))
    try {
      object = jsonpatch.applyPatch(jsonpatch.deepClone(object), patch as Array<jsonpatch.Operation>, true, false)
        .newDocument
    } catch (e) {
      return Result.fail(
        invalidResponse(webhook, `the patch does not apply to the object as sent: ${(e as Error).message}`)
      )
    }
  }
  return Result.succeed({
    uid: request.uid as string,
    allowed: response.allowed,
    status: statusOf(response.status),
    warnings,
    patch,
    object,
    errors
  })
}

const logText = (options: Logger.Options<unknown>): string => {
  const message = Array.isArray(options.message) ? options.message.map(String).join(" ") : String(options.message)
  return options.cause.reasons.length === 0 ? message : `${message}\n${Cause.pretty(options.cause)}`
}

/** Runs `self` with one more logger, which keeps the text of each log at level Error or above. */
const collectingErrors = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const errors: Array<string> = []
    const collector = Logger.make<unknown, void>((options) => {
      if (LogLevel.isGreaterThanOrEqualTo(options.logLevel, "Error")) errors.push(logText(options))
    })
    const loggers = yield* Logger.CurrentLoggers
    const a = yield* Effect.provideService(self, Logger.CurrentLoggers, new Set([...loggers, collector]))
    return [a, errors] as const
  })

/**
 * Runs `webhook` on `call` in process, as kube-apiserver calls it ({@link admissionReview}), and reads its answer.
 * Fails with `InvalidResponse` on an answer kube-apiserver would reject.
 *
 * @example
 * ```ts
 * import { Admission, Resource } from "@reconcile/kube"
 * import { WebhookChecks } from "@reconcile/testkit"
 * import { Effect } from "effect"
 *
 * const defaults = Admission.defaulter(Resource.ConfigMap, (cm) =>
 *   Effect.succeed({ ...cm, data: { tier: "standard", ...cm.data } }))
 *
 * const program = Effect.gen(function*() {
 *   const answer = yield* WebhookChecks.admit(defaults, {
 *     operation: "CREATE",
 *     object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } }
 *   }, { dryRun: true })
 *   return answer.object // { ..., data: { tier: "standard" } }
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const admit = <R>(
  webhook: Admission.Webhook<R>,
  call: Call,
  options?: ReviewOptions
): Effect.Effect<Answer, WebhookCheckError, R> =>
  Effect.suspend(() => {
    const review = admissionReview(webhook, call, options)
    return Effect.flatMap(
      collectingErrors(webhook.handle(review)),
      ([reply, errors]) => Effect.fromResult(readAnswer(webhook, review, reply, errors))
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// objects
// ---------------------------------------------------------------------------------------------------------------

/**
 * Options of {@link objects}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectsOptions {
  /** The namespace of a namespaced kind's objects; default `default`. */
  readonly namespace?: string | undefined
  /** Whether objects have a `status` (when the resource has a status Schema): default sometimes. */
  readonly status?: "always" | "never" | "sometimes" | undefined
}

const int = (maximum: number) => Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum })))

const pick = <const A extends ReadonlyArray<string>>(values: A): Arbitrary.Arbitrary<A[number]> =>
  Arbitrary.map(int(values.length - 1), (i) => values[i]!)

const maybe = <A>(arbitrary: Arbitrary.Arbitrary<A>): Arbitrary.Arbitrary<A | undefined> =>
  Arbitrary.flatMap(Arbitrary.schema(Schema.Boolean), (b) => b ? arbitrary : Arbitrary.Constant(undefined))

/** A DNS-1123 subdomain name, `web-12`. */
const objectName = Arbitrary.map(
  Arbitrary.all([pick(["web", "db", "api", "cache", "a"]), int(999)]),
  ([prefix, n]) => `${prefix}-${n}`
)

const labelValues = maybe(
  Arbitrary.map(
    Arbitrary.all([pick(["app", "tier", "app.kubernetes.io/name"]), pick(["x", "y", "web"])]),
    ([k, v]) => ({
      [k]: v
    })
  )
)

/**
 * Objects of a custom resource as kube-apiserver sends them (encoded JSON): `spec` (and `status`) drawn from the
 * resource's Schemas, valid metadata (a DNS-1123 name, the namespace of a namespaced kind, sometimes labels and
 * annotations). Values that do not survive JSON (a `NaN`, an `Infinity`) are not drawn. Throws when effect's
 * `Arbitrary` cannot derive from a Schema.
 *
 * @since 0.1.0
 * @category constructors
 */
export const objects = <R extends Resource.AnyCustomResource>(
  resource: R,
  options: ObjectsOptions = {}
): Arbitrary.Arbitrary<Json> => {
  const specSchema = resource.spec as Schema.Codec<unknown, unknown>
  const statusSchema = resource.status as Schema.Codec<unknown, unknown> | undefined
  const whether = options.status ?? "sometimes"
  const status = statusSchema === undefined || whether === "never"
    ? Arbitrary.Constant(undefined)
    : whether === "always"
    ? Arbitrary.schema(statusSchema)
    : maybe(Arbitrary.schema(statusSchema))
  const drawn = Arbitrary.all({
    name: objectName,
    labels: labelValues,
    annotations: labelValues,
    spec: Arbitrary.schema(specSchema),
    status
  })
  const wire = (
    codec: Schema.Codec<unknown, unknown> | undefined,
    value: unknown
  ): Result.Result<unknown, undefined> => {
    if (value === undefined || codec === undefined) return Result.succeed(undefined)
    const encoded = Schema.encodeUnknownResult(codec)(value)
    if (Result.isFailure(encoded)) return Result.fail(undefined)
    const json = toJson(encoded.success)
    // what does not survive JSON (NaN, Infinity) is not a value kube-apiserver can send
    return Result.isSuccess(Schema.decodeUnknownResult(codec)(json)) ? Result.succeed(json) : Result.fail(undefined)
  }
  return Arbitrary.filterMap(drawn, (o) => {
    const spec = wire(specSchema, o.spec)
    const st = wire(statusSchema, o.status)
    if (Result.isFailure(spec) || Result.isFailure(st)) return Result.fail(o)
    return Result.succeed({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      metadata: {
        name: o.name,
        ...(resource.scope === "Namespaced" ? { namespace: options.namespace ?? "default" } : {}),
        ...(o.labels === undefined ? {} : { labels: o.labels }),
        ...(o.annotations === undefined ? {} : { annotations: o.annotations })
      },
      spec: spec.success,
      ...(st.success === undefined ? {} : { status: st.success })
    })
  })
}

// ---------------------------------------------------------------------------------------------------------------
// the checks
// ---------------------------------------------------------------------------------------------------------------

/**
 * How many objects a check draws and how (effect's `Arbitrary.CheckOptions`: `runs`, `seed`, `replay`, …), and the
 * rest of the reviews it sends.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckOptions extends Arbitrary.CheckOptions {
  readonly review?: Omit<ReviewOptions, "uid" | "kind"> | undefined
}

/** Why one object falsified a property. */
interface Finding {
  readonly reason: WebhookCheckError["reason"]
  readonly message: string
  readonly paths?: ReadonlyArray<string> | undefined
}

/** `undefined`: the property holds for the object; `"skipped"`: the object does not count. */
type Outcome = Finding | "skipped" | undefined

/**
 * Runs `property` over `arbitrary`; a falsification fails with the shrunk object's finding, its counterexample and
 * the replay token.
 */
const run = <R>(
  check: string,
  arbitrary: Arbitrary.Arbitrary<unknown>,
  property: (object: unknown) => Effect.Effect<Outcome, never, R>,
  options: CheckOptions
): Effect.Effect<void, WebhookCheckError, R> =>
  Effect.gen(function*() {
    let checked = 0
    const { review: _, ...checkOptions } = options
    const result = yield* Arbitrary.checkEffect(
      arbitrary,
      (object) =>
        Effect.flatMap(property(object), (outcome) => {
          if (outcome === "skipped") return Effect.succeed(true)
          if (outcome === undefined) {
            checked++
            return Effect.succeed(true)
          }
          return Effect.fail(outcome)
        }),
      checkOptions
    )
    switch (result._tag) {
      case "Passed":
        if (checked === 0) {
          return yield* new WebhookCheckError({
            reason: "Inconclusive",
            message: `${check}: nothing was checked: the defaulter denied each of the ${result.runs} object(s) drawn`
          })
        }
        return
      case "Falsified": {
        const object = result.shrunkInput
        // the finding of the shrunk object itself (a failure's value may come from another step of the shrink)
        const again = yield* property(object)
        const finding: Finding = typeof again === "object"
          ? again
          : result.failure._tag === "PropertyError"
          ? result.failure.error
          : { reason: "Inconclusive", message: "the property returned false" }
        return yield* new WebhookCheckError({
          reason: finding.reason,
          message:
            `${check} does not hold: ${finding.message}\ncounterexample (after ${result.runs} run(s), ${result.shrinks} ` +
            `shrink(s)): ${JSON.stringify(object)}\nreplay: ${result.replay}`,
          object,
          paths: finding.paths,
          replay: result.replay
        })
      }
      case "Exhausted":
        return yield* new WebhookCheckError({
          reason: "Inconclusive",
          message: `${check}: generation exhausted after ${result.runs} run(s) and ${result.discards} ` +
            `discard(s) (seed ${String(result.seed)})`
        })
      case "ReplayMismatch":
        return yield* new WebhookCheckError({
          reason: "Inconclusive",
          message: `${check}: the replay no longer fails (${result.reason})`
        })
    }
  })

/** A `WebhookCheckError` of one object is a finding of that object (an invalid response is a counterexample too). */
const asOutcome = <R>(self: Effect.Effect<Outcome, WebhookCheckError, R>): Effect.Effect<Outcome, never, R> =>
  Effect.catch(self, (e) => Effect.succeed<Outcome>({ reason: e.reason, message: e.message, paths: e.paths }))

const refusal = (who: string, answer: Answer): Finding => {
  const status = answer.status
  const code = status?.code ?? 0
  const causes = status?.causes ?? []
  return {
    reason: code >= 500 ? "Errored" : "Denied",
    message: `${who} (${code} ${status?.reason ?? ""}): ${status?.message ?? "(no message)"}` +
      (code >= 500 && answer.errors.length > 0 ? `\nthe webhook logged:\n${answer.errors.join("\n")}` : ""),
    paths: causes.map((c) => c.field).filter((f) => f !== "")
  }
}

/**
 * The defaulter's first pass over `object` (a create, or an update from the object itself when it does not default
 * creates): the defaulted object, `"skipped"` for an input it denies, a finding for a handler failure.
 */
const firstPass = <R>(defaulter: Admission.Webhook<R>, object: unknown, options: CheckOptions) =>
  Effect.map(defaultOnce(defaulter, object, options), (answer): Finding | "skipped" | { readonly object: unknown } => {
    if (answer.allowed) return { object: answer.object }
    if ((answer.status?.code ?? 0) >= 500) return refusal(`the defaulter failed on the input`, answer)
    return "skipped"
  })

const defaultOnce = <R>(defaulter: Admission.Webhook<R>, object: unknown, options: CheckOptions) => {
  const ops = defaulter.rules[0]?.operations ?? []
  const call: Call = ops.includes("CREATE") || !ops.includes("UPDATE")
    ? { operation: "CREATE", object }
    : { operation: "UPDATE", object, oldObject: object }
  return admit(defaulter, call, options.review)
}

/**
 * Defaulting is idempotent: for every object drawn, defaulting what the defaulter made produces no patch (on a
 * create, or on an update when the defaulter does not default creates). The error names each field the second
 * pass changed, `path: first → second`.
 *
 * @example
 * ```ts
 * import { it } from "@effect/vitest"
 * import type { Admission, Resource } from "@reconcile/kube"
 * import { WebhookChecks } from "@reconcile/testkit"
 *
 * declare const WebApp: Resource.AnyCustomResource
 * declare const defaults: Admission.Webhook
 *
 * it.effect("defaulting WebApps is idempotent", () =>
 *   WebhookChecks.defaultingIsIdempotent(defaults, WebhookChecks.objects(WebApp), { runs: 200 }))
 * ```
 *
 * @since 0.1.0
 * @category checks
 */
export const defaultingIsIdempotent = <R>(
  defaulter: Admission.Webhook<R>,
  arbitrary: Arbitrary.Arbitrary<unknown>,
  options: CheckOptions = {}
): Effect.Effect<void, WebhookCheckError, R> =>
  run(
    `defaulting by ${defaulter.name} is idempotent`,
    arbitrary,
    (object) =>
      asOutcome(Effect.gen(function*() {
        const first = yield* firstPass(defaulter, object, options)
        if (first === "skipped" || !("object" in first)) return first
        const second = yield* defaultOnce(defaulter, first.object, options)
        if (!second.allowed) return refusal("the defaulter refused the object it defaulted", second)
        if (second.patch.length === 0) return undefined
        const diffs = differences(first.object, second.object)
        return {
          reason: "NotIdempotent",
          message: `defaulting the defaulted object patched it again:\n${describe(diffs)}`,
          paths: diffs.length > 0 ? diffs.map((d) => d.path) : second.patch.map((op) => pointerText(op.path))
        } satisfies Finding
      })),
    options
  )

/**
 * The validator admits what the defaulter makes: for every object drawn that the defaulter admits, the validator
 * admits the defaulted object on create. The error carries the validator's Status and the fields its causes name.
 *
 * @example
 * ```ts
 * import { it } from "@effect/vitest"
 * import type { Admission, Resource } from "@reconcile/kube"
 * import { WebhookChecks } from "@reconcile/testkit"
 *
 * declare const WebApp: Resource.AnyCustomResource
 * declare const defaults: Admission.Webhook
 * declare const checks: Admission.Webhook
 *
 * it.effect("the validator admits every defaulted WebApp", () =>
 *   WebhookChecks.validatorAdmitsDefaulted(defaults, checks, WebhookChecks.objects(WebApp)))
 * ```
 *
 * @since 0.1.0
 * @category checks
 */
export const validatorAdmitsDefaulted = <R1, R2>(
  defaulter: Admission.Webhook<R1>,
  validator: Admission.Webhook<R2>,
  arbitrary: Arbitrary.Arbitrary<unknown>,
  options: CheckOptions = {}
): Effect.Effect<void, WebhookCheckError, R1 | R2> =>
  run(
    `${validator.name} admits what ${defaulter.name} defaults`,
    arbitrary,
    (object) =>
      asOutcome(Effect.gen(function*() {
        const first = yield* firstPass(defaulter, object, options)
        if (first === "skipped" || !("object" in first)) return first
        const answer = yield* admit(validator, { operation: "CREATE", object: first.object }, options.review)
        if (answer.allowed) return undefined
        const finding = refusal(`the validator refused the defaulted object`, answer)
        const changed = differences(object, first.object)
        return changed.length === 0 ? finding : {
          ...finding,
          message: `${finding.message}\nthe defaulter had changed:\n${describe(changed)}`
        }
      })),
    options
  )

/**
 * Options of {@link conversionRoundTrips}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RoundTripOptions extends Arbitrary.CheckOptions {
  /** The Resources of the spokes (the hub's is the webhook's): their Schemas draw the objects ({@link objects}). */
  readonly resources?: ReadonlyArray<Resource.AnyCustomResource> | undefined
  /** Objects (wire JSON) of a version, keyed by version: these instead of the Resource's. */
  readonly arbitraries?: Readonly<Record<string, Arbitrary.Arbitrary<unknown>>> | undefined
}

/**
 * Conversion round trips are the identity: for every spoke, an object of the hub converted to the spoke and back is
 * the object (what the spoke cannot say comes back from the annotation), and an object of the spoke converted to
 * the hub and back is the object (the hub says everything a spoke can). Objects are drawn from the versions'
 * Schemas: the hub's from the webhook, the spokes' from `resources` (or `arbitraries`, by version); a version with
 * neither fails with `MissingVersion`. The error names the direction and each field that came back different.
 *
 * @example
 * ```ts
 * import { it } from "@effect/vitest"
 * import type { Conversion, Resource } from "@reconcile/kube"
 * import { WebhookChecks } from "@reconcile/testkit"
 *
 * declare const V1alpha1: Resource.AnyCustomResource
 * declare const WebAppConversion: Conversion.Webhook
 *
 * it.effect("WebApp conversions round-trip", () =>
 *   WebhookChecks.conversionRoundTrips(WebAppConversion, { resources: [V1alpha1] }))
 * ```
 *
 * @since 0.1.0
 * @category checks
 */
export const conversionRoundTrips = (
  webhook: Conversion.Webhook,
  options: RoundTripOptions = {}
): Effect.Effect<void, WebhookCheckError> =>
  Effect.gen(function*() {
    const { arbitraries = {}, resources = [], ...checkOptions } = options
    const apiVersion = (version: string) => `${webhook.group}/${version}`
    const objectsOf = (version: string): Arbitrary.Arbitrary<unknown> | undefined => {
      const given = arbitraries[version]
      if (given !== undefined) return given
      const resource = [webhook.hub, ...resources].find((r) =>
        r.version === version && r.group === webhook.group && r.kind === webhook.kind
      )
      return resource === undefined ? undefined : objects(resource)
    }
    const hubVersion = webhook.hub.version
    const hubObjects = objectsOf(hubVersion)!
    for (const spoke of webhook.versions.slice(1)) {
      const spokeObjects = objectsOf(spoke)
      if (spokeObjects === undefined) {
        return yield* new WebhookCheckError({
          reason: "MissingVersion",
          message: `no objects to draw for version ${spoke} of ${webhook.kind}.${webhook.group}: pass its ` +
            `Resource in resources, or an arbitrary in arbitraries`
        })
      }
      const roundTrip = (from: string, via: string) => (object: unknown): Effect.Effect<Outcome> =>
        Effect.sync(() => {
          const there = webhook.convert(object, apiVersion(via))
          if (Result.isFailure(there)) {
            return { reason: "Unconvertible", message: `${from} → ${via} failed: ${there.failure.message}` }
          }
          const back = webhook.convert(there.success, apiVersion(from))
          if (Result.isFailure(back)) {
            return { reason: "Unconvertible", message: `${from} → ${via} → ${from} failed: ${back.failure.message}` }
          }
          const diffs = differences(toJson(object), toJson(back.success))
          if (diffs.length === 0) return undefined
          return {
            reason: "NotRoundTrip",
            message: `the object came back different (original → round trip):\n${describe(diffs)}` +
              `\nthe ${via} object: ${JSON.stringify(there.success)}`,
            paths: diffs.map((d) => d.path)
          }
        })
      yield* run(
        `${hubVersion} → ${spoke} → ${hubVersion} is the identity`,
        hubObjects,
        roundTrip(hubVersion, spoke),
        checkOptions
      )
      yield* run(
        `${spoke} → ${hubVersion} → ${spoke} is the identity`,
        spokeObjects,
        roundTrip(spoke, hubVersion),
        checkOptions
      )
    }
  })
