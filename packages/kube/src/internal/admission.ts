/**
 * Admission webhooks: reading a review, running a handler under its rules, the JSON patch of a defaulter, and the
 * configurations. One file (a little over 500 lines) because each part reads the same review and response shapes.
 */
import type { ObjectMeta } from "@reconcile/core"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import jsonpatch from "fast-json-patch"
import type * as Admission from "../Admission.js"
import type * as Resource from "../Resource.js"

/** @internal */
export const TypeId: Admission.TypeId = Symbol.for("@reconcile/kube/Admission") as Admission.TypeId

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export const isWebhook = (u: unknown): u is Admission.Webhook<unknown> => Predicate.hasProperty(u, TypeId)

const operations: ReadonlyArray<Admission.Operation> = ["CREATE", "UPDATE", "DELETE", "CONNECT"]

// ---------------------------------------------------------------------------------------------------------------
// metrics

/** Handler defects (as controller-runtime's `controller_runtime_webhook_panics_total`, with the webhook's name). */
const panics = new Map<string, Metric.Counter<number>>()
/** Handlers that did not answer in time. */
const timeouts = new Map<string, Metric.Counter<number>>()

const counterOf = (cache: Map<string, Metric.Counter<number>>, name: string, description: string, webhook: string) => {
  let counter = cache.get(webhook)
  if (counter === undefined) {
    counter = Metric.counter(name, { description, attributes: { webhook }, incremental: true })
    cache.set(webhook, counter)
  }
  return counter
}

const metricNames = {
  panics: "controller_runtime_webhook_panics_total",
  timeouts: "reconcile_webhook_timeouts_total"
} as const

const panicCounter = (webhook: string) =>
  counterOf(panics, metricNames.panics, "Total number of webhook panics", webhook)
const timeoutCounter = (webhook: string) =>
  counterOf(timeouts, metricNames.timeouts, "Total number of webhook handlers that did not answer in time", webhook)

// ---------------------------------------------------------------------------------------------------------------
// reviews

/** A review's request that could not be read: the uid when it was readable. */
interface Malformed {
  readonly _tag: "Malformed"
  readonly uid: string
  readonly message: string
}

interface Parsed<A extends ObjectMeta.HasMetadata> {
  readonly _tag: "Parsed"
  readonly request: Admission.Request<A>
  readonly object: unknown
  readonly oldObject: unknown
}

const str = (u: unknown): string | undefined => typeof u === "string" ? u : undefined

const groupVersionKind = (u: unknown): Admission.GroupVersionKind | undefined =>
  isRecord(u) && typeof u.version === "string" && typeof u.kind === "string"
    ? { group: str(u.group) ?? "", version: u.version, kind: u.kind }
    : undefined

const groupVersionResource = (u: unknown): Admission.GroupVersionResource | undefined =>
  isRecord(u) && typeof u.version === "string" && typeof u.resource === "string"
    ? { group: str(u.group) ?? "", version: u.version, resource: u.resource }
    : undefined

const userInfo = (u: unknown): Admission.UserInfo => {
  if (!isRecord(u)) return { username: "", groups: [] }
  const extra: Record<string, ReadonlyArray<string>> = {}
  if (isRecord(u.extra)) {
    for (const [k, v] of Object.entries(u.extra)) {
      if (Array.isArray(v)) extra[k] = v.filter((x): x is string => typeof x === "string")
    }
  }
  return {
    username: str(u.username) ?? "",
    ...(typeof u.uid === "string" ? { uid: u.uid } : {}),
    groups: Array.isArray(u.groups) ? u.groups.filter((x): x is string => typeof x === "string") : [],
    ...(Object.keys(extra).length > 0 ? { extra } : {})
  }
}

const gvk = (k: Admission.GroupVersionKind) =>
  k.group === "" ? `${k.version}, Kind=${k.kind}` : `${k.group}/${k.version}, Kind=${k.kind}`

/** Reads an `admission.k8s.io/v1` AdmissionReview for `resource`. @internal */
export const parseReview = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  review: unknown
): Malformed | Parsed<A> => {
  const malformed = (message: string, uid = ""): Malformed => ({ _tag: "Malformed", uid, message })
  if (!isRecord(review)) {
    return malformed(
      `the AdmissionReview is not a JSON object (got ${Array.isArray(review) ? "an array" : typeof review})`
    )
  }
  const request = review.request
  const uid = isRecord(request) && typeof request.uid === "string" ? request.uid : ""
  if (review.apiVersion !== "admission.k8s.io/v1" || review.kind !== "AdmissionReview") {
    return malformed(
      `expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got apiVersion ${
        JSON.stringify(review.apiVersion) ?? "none"
      } and kind ${JSON.stringify(review.kind) ?? "none"}`,
      uid
    )
  }
  if (!isRecord(request)) return malformed("the AdmissionReview has no request")
  if (uid === "") return malformed("the AdmissionReview's request has no uid")
  const operation = request.operation
  if (typeof operation !== "string" || !operations.includes(operation as Admission.Operation)) {
    return malformed(`unknown operation ${JSON.stringify(operation) ?? "none"}`, uid)
  }
  const kind = groupVersionKind(request.kind)
  if (kind === undefined) return malformed("the AdmissionReview's request has no kind", uid)
  if (kind.group !== resource.group || kind.version !== resource.version || kind.kind !== resource.kind) {
    const expected = gvk({ group: resource.group, version: resource.version, kind: resource.kind })
    return malformed(`this webhook admits ${expected}, not ${gvk(kind)}`, uid)
  }
  const requestKind = groupVersionKind(request.requestKind)
  const requestResource = groupVersionResource(request.requestResource)
  const parsed: Admission.Request<A> = {
    resourceType: resource,
    uid,
    operation: operation as Admission.Operation,
    name: str(request.name) ?? "",
    namespace: str(request.namespace),
    dryRun: request.dryRun === true,
    userInfo: userInfo(request.userInfo),
    kind,
    resource: groupVersionResource(request.resource) ??
      { group: resource.group, version: resource.version, resource: resource.plural },
    subResource: str(request.subResource),
    ...(requestKind === undefined ? {} : { requestKind }),
    ...(requestResource === undefined ? {} : { requestResource }),
    ...(typeof request.requestSubResource === "string" ? { requestSubResource: request.requestSubResource } : {}),
    options: request.options
  }
  return { _tag: "Parsed", request: parsed, object: request.object, oldObject: request.oldObject }
}

/** The `response` of an AdmissionReview. */
type Response = Json & { readonly uid: string; readonly allowed: boolean }

/** The AdmissionReview answering `response`. @internal */
export const review = (response: Response): Json => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  response
})

const errored = (uid: string, code: number, message: string, reason?: string): Response => ({
  uid,
  allowed: false,
  status: { status: "Failure", code, message, ...(reason === undefined ? {} : { reason }) }
})

/** @internal */
export const deniedStatus = (denied: Admission.Denied): Json => {
  const causes = denied.causes ?? []
  return {
    status: "Failure",
    code: denied.code ?? (denied.reason === "Invalid" ? 422 : 403),
    message: denied.message,
    reason: denied.reason ?? "Forbidden",
    ...(causes.length === 0 ? {} : {
      details: {
        causes: causes.map((c) => ({ field: c.field, message: c.message, reason: c.type ?? "FieldValueInvalid" }))
      }
    })
  }
}

const allowedWith = (uid: string, warnings: ReadonlyArray<string> | void): Response =>
  warnings === undefined || warnings.length === 0 ? { uid, allowed: true } : { uid, allowed: true, warnings }

// ---------------------------------------------------------------------------------------------------------------
// patches

/** What {@link copyData} answers for a value it leaves to the exact, slower copy. */
const slow: unique symbol = Symbol("slow")

/**
 * A deep copy of plain data — strings, numbers, booleans, null, arrays, objects whose prototype is Object's (or
 * null) — or `slow` for anything else, which the caller then copies the exact, slower way. With `json`, the copy is
 * what a JSON round trip gives (`undefined` properties left out) and anything a round trip would change (`undefined`
 * in an array, a number that is not finite, `toJSON`) is `slow`; without, `undefined` properties are kept, as
 * `structuredClone` keeps them. A review's objects are plain data (the server parsed them from JSON): about 6× faster
 * than `structuredClone` or a JSON round trip on a Deployment-sized object, which a review used to copy up to six
 * times.
 */
const copyData = (u: unknown, json: boolean): unknown => {
  switch (typeof u) {
    case "string":
    case "boolean":
      return u
    case "number":
      return !json ? u : !Number.isFinite(u) ? slow : u === 0 ? 0 : u
    case "undefined":
      return json ? slow : u
    case "object": {
      if (u === null) return null
      if (Array.isArray(u)) {
        const out = new Array(u.length)
        for (let i = 0; i < u.length; i++) {
          const v = copyData(u[i], json)
          if (v === slow) return slow
          out[i] = v
        }
        return out
      }
      const proto = Object.getPrototypeOf(u)
      if (proto !== Object.prototype && proto !== null) return slow
      if (json && typeof (u as { toJSON?: unknown }).toJSON === "function") return slow
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(u)) {
        // an own "__proto__" (JSON.parse makes one) cannot be assigned as a property
        if (key === "__proto__") return slow
        const value = (u as Record<string, unknown>)[key]
        if (json && value === undefined) continue
        const v = copyData(value, json)
        if (v === slow) return slow
        out[key] = v
      }
      return out
    }
    default:
      return slow
  }
}

/** `u` as a JSON round trip leaves it (`null` for `undefined`). */
/** @internal */
export const toJson = (u: unknown): unknown => {
  const copy = copyData(u, true)
  return copy === slow ? JSON.parse(JSON.stringify(u) ?? "null") : copy
}

/** A deep copy of `u` as `structuredClone` makes it. */
/** @internal */
export const clone = (u: unknown): unknown => {
  const copy = copyData(u, false)
  return copy === slow ? structuredClone(u) : copy
}

/**
 * The RFC 6902 patch that takes `raw` (the object as received) to the object the handler made: the changes between
 * `before` (the decoded object encoded back) and `after` (the defaulted object encoded) are replayed on `raw`, so
 * fields the Schema does not know (and therefore dropped on decode) stay as they were. The patch is recomputed
 * against `raw` itself, so it applies to exactly what kube-apiserver sent.
 *
 * @internal
 */
export const patchFor = (raw: unknown, before: unknown, after: unknown): Array<jsonpatch.Operation> => {
  const changes = jsonpatch.compare(toJson(before) as object, toJson(after) as object)
  if (changes.length === 0) return []
  const source = toJson(raw) as object
  let target: unknown
  try {
    // applied in place to a copy (`mutateDocument: false` would copy it once more)
    target = jsonpatch.applyPatch(toJson(source), changes, false, true).newDocument
  } catch {
    // the decoded object's arrays do not line up with the raw ones: the encoded object is the target
    target = toJson(after)
  }
  return jsonpatch.compare(source, target as object)
}

// ---------------------------------------------------------------------------------------------------------------
// webhooks

interface Common {
  readonly name?: string | undefined
  readonly path?: string | undefined
  readonly failurePolicy?: Admission.FailurePolicy | undefined
  readonly sideEffects?: Admission.SideEffects | undefined
  readonly timeoutSeconds?: number | undefined
  readonly matchPolicy?: Admission.MatchPolicy | undefined
  readonly namespaceSelector?: Admission.LabelSelector | undefined
  readonly objectSelector?: Admission.LabelSelector | undefined
  readonly undecodable?: "deny" | "allow" | undefined
}

const pathOf = (prefix: "mutate" | "validate", r: Resource.Resource<any>) =>
  `/${prefix}-${r.group === "" ? "core" : r.group.replaceAll(".", "-")}-${r.version}-${r.kind.toLowerCase()}`

/** `m<kind>.<group>` / `v<kind>.<group>`, with `.k8s.io` added to groups of fewer than two dots' worth. */
const nameOf = (prefix: "m" | "v", r: Resource.Resource<any>) => {
  const group = r.group === "" ? "core" : r.group
  const name = `${prefix}${r.kind.toLowerCase()}.${group}`
  return name.split(".").length >= 3 ? name : `${name}.k8s.io`
}

/**
 * The time a handler has: a second less than kube-apiserver waits (`timeoutSeconds`), and at least half of it, so
 * the answer is ours rather than the API server's timeout.
 *
 * @internal
 */
export const handlerTimeout = (timeoutSeconds: number): Duration.Duration =>
  Duration.millis(Math.max(timeoutSeconds * 1000 - 1000, timeoutSeconds * 500))

const validateCommon = (options: Common) => {
  const timeoutSeconds = options.timeoutSeconds ?? 10
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new RangeError(`timeoutSeconds must be an integer in 1..30, got ${timeoutSeconds}`)
  }
  return timeoutSeconds
}

/** A decode failure, as the answer to the review. */
const undecodable = (uid: string, issue: string): Response =>
  errored(uid, 400, `the object does not decode: ${issue}`, "BadRequest")

/**
 * Runs `body` under the webhook's rules: a `Denied` failure is a denial, a defect or an interruption is a 500
 * (logged once, counted), a timeout is a 500 too.
 */
const guarded = <R>(
  webhook: string,
  timeout: Duration.Duration,
  request: Admission.Request<any>,
  body: Effect.Effect<Response, Admission.Denied, R>
): Effect.Effect<Response, never, R> =>
  body.pipe(
    Effect.timeoutOption(timeout),
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.as(
          Effect.andThen(
            Metric.update(timeoutCounter(webhook), 1),
            Effect.logWarning(`admission webhook ${webhook} did not answer within ${Duration.format(timeout)}`)
          ),
          errored(
            request.uid,
            500,
            `admission webhook ${webhook} did not answer within ${Duration.format(timeout)}`,
            "Timeout"
          )
        ),
      onSome: Effect.succeed
    })),
    Effect.catchCause((cause) => {
      const denied = Cause.findErrorOption(cause)
      if (Option.isSome(denied) && isDenied(denied.value)) {
        return Effect.succeed<Response>({ uid: request.uid, allowed: false, status: deniedStatus(denied.value) })
      }
      return Effect.as(
        Effect.andThen(
          Metric.update(panicCounter(webhook), 1),
          Effect.logError(`admission webhook ${webhook} failed`, cause)
        ),
        errored(request.uid, 500, `internal error in admission webhook ${webhook}`, "InternalError")
      )
    }),
    Effect.annotateLogs({
      webhook,
      uid: request.uid,
      operation: request.operation,
      object: request.namespace === undefined || request.namespace === ""
        ? request.name
        : `${request.namespace}/${request.name}`
    })
  )

/** @internal */
export const isDenied = (u: unknown): u is Admission.Denied => Predicate.isTagged(u, "Denied")

/** Decodes a copy of `raw` (decoders may fill in `apiVersion`/`kind` in place). */
const decode = <A extends ObjectMeta.HasMetadata>(resource: Resource.Resource<A>, raw: unknown) =>
  Effect.result(resource.decode(clone(raw)))

const encode = <A extends ObjectMeta.HasMetadata>(resource: Resource.Resource<A>, a: A) =>
  Effect.orDie(resource.encode(a))

/**
 * Answers a review with `run`. Each webhook's `run` is one generator function (`Effect.fnUntraced`) for all its
 * reviews rather than an `Effect.gen` closure made per review: V8 (Node 24) promotes what a generator made and started
 * per call captures (here the whole review) to the old generation, which made every scavenge copy megabytes.
 */
const handleWith = <A extends ObjectMeta.HasMetadata, R>(
  resource: Resource.Resource<A>,
  webhook: string,
  timeout: Duration.Duration,
  run: (parsed: Parsed<A>) => Effect.Effect<Response, Admission.Denied, R>
) =>
(input: unknown): Effect.Effect<unknown, never, R> =>
  Effect.suspend(() => {
    const parsed = parseReview(resource, input)
    if (parsed._tag === "Malformed") {
      return Effect.succeed(review(errored(parsed.uid, 400, parsed.message, "BadRequest")))
    }
    return Effect.map(guarded(webhook, timeout, parsed.request, run(parsed)), review)
  })

const base = <R>(
  kind: Admission.Kind,
  resource: Resource.Resource<any>,
  options: Common,
  ops: ReadonlyArray<Admission.Operation>,
  name: string,
  path: string,
  handle: (review: unknown) => Effect.Effect<unknown, never, R>
): Admission.Webhook<R> => ({
  [TypeId]: TypeId,
  kind,
  name,
  path,
  handle,
  rules: [{
    operations: ops,
    apiGroups: [resource.group],
    apiVersions: [resource.version],
    resources: [resource.plural],
    scope: resource.scope
  }],
  failurePolicy: options.failurePolicy ?? "Fail",
  sideEffects: options.sideEffects ?? "None",
  timeoutSeconds: options.timeoutSeconds ?? 10,
  matchPolicy: options.matchPolicy ?? "Equivalent",
  ...(options.namespaceSelector === undefined ? {} : { namespaceSelector: options.namespaceSelector }),
  ...(options.objectSelector === undefined ? {} : { objectSelector: options.objectSelector })
})

/** @internal */
export const defaulter = <A extends ObjectMeta.HasMetadata, R>(
  resource: Resource.Resource<A>,
  f: (obj: A, request: Admission.Request<A>) => Effect.Effect<A, Admission.Denied, R>,
  options: Admission.DefaulterOptions = {}
): Admission.Webhook<R> => {
  const timeoutSeconds = validateCommon(options)
  const name = options.name ?? nameOf("m", resource)
  const ops = options.operations ?? ["CREATE", "UPDATE"]
  const deny = options.undecodable !== "allow"
  // one generator function for every review (see `handleWith`)
  const run: (parsed: Parsed<A>) => Effect.Effect<Response, Admission.Denied, R> = Effect.fnUntraced(
    function*(parsed: Parsed<A>) {
      const { request } = parsed
      // DELETE and CONNECT carry no object to default
      if (request.operation !== "CREATE" && request.operation !== "UPDATE") return { uid: request.uid, allowed: true }
      const decoded = yield* decode(resource, parsed.object)
      if (decoded._tag === "Failure") {
        return deny ? undecodable(request.uid, decoded.failure.issue) : { uid: request.uid, allowed: true }
      }
      const before = yield* encode(resource, decoded.success)
      const defaulted = yield* f(decoded.success, request)
      const after = yield* encode(resource, defaulted)
      const patch = patchFor(parsed.object, before, after)
      if (patch.length === 0) return { uid: request.uid, allowed: true }
      return {
        uid: request.uid,
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64")
      }
    }
  )
  const webhook = base<R>(
    "Mutating",
    resource,
    options,
    ops,
    name,
    options.path ?? pathOf("mutate", resource),
    handleWith(resource, name, handlerTimeout(timeoutSeconds), run)
  )
  return { ...webhook, reinvocationPolicy: options.reinvocationPolicy ?? "Never" }
}

/** @internal */
export const validator = <A extends ObjectMeta.HasMetadata, R>(
  resource: Resource.Resource<A>,
  handlers: Admission.ValidatorHandlers<A, R>,
  options: Admission.ValidatorOptions = {}
): Admission.Webhook<R> => {
  const timeoutSeconds = validateCommon(options)
  const name = options.name ?? nameOf("v", resource)
  const ops: Array<Admission.Operation> = []
  if (handlers.create !== undefined) ops.push("CREATE")
  if (handlers.update !== undefined) ops.push("UPDATE")
  if (handlers.delete !== undefined) ops.push("DELETE")
  if (ops.length === 0) throw new TypeError("Admission.validator needs at least one of create, update, delete")
  const deny = options.undecodable !== "allow"
  // one generator function for every review (see `handleWith`)
  const run: (parsed: Parsed<A>) => Effect.Effect<Response, Admission.Denied, R> = Effect.fnUntraced(
    function*(parsed: Parsed<A>) {
      const { request } = parsed
      const uid = request.uid
      const { create, delete: del, update } = handlers
      switch (request.operation) {
        case "CREATE": {
          if (create === undefined) return { uid, allowed: true }
          const obj = yield* decode(resource, parsed.object)
          if (obj._tag === "Failure") return deny ? undecodable(uid, obj.failure.issue) : { uid, allowed: true }
          return allowedWith(uid, yield* create(obj.success, request))
        }
        case "UPDATE": {
          if (update === undefined) return { uid, allowed: true }
          const obj = yield* decode(resource, parsed.object)
          if (obj._tag === "Failure") return deny ? undecodable(uid, obj.failure.issue) : { uid, allowed: true }
          const old = yield* decode(resource, parsed.oldObject)
          // an object written before its Schema changed can still be fixed: it is not held to the old shape
          if (old._tag === "Failure") {
            return allowedWith(uid, [
              `the existing object does not decode (${old.failure.issue}): update not validated`
            ])
          }
          return allowedWith(uid, yield* update(old.success, obj.success, request))
        }
        case "DELETE": {
          if (del === undefined) return { uid, allowed: true }
          const old = yield* decode(resource, parsed.oldObject)
          // never hold a deletion hostage to a decode failure
          if (old._tag === "Failure") {
            return allowedWith(uid, [`the object does not decode (${old.failure.issue}): delete not validated`])
          }
          return allowedWith(uid, yield* del(old.success, request))
        }
        default:
          return { uid, allowed: true }
      }
    }
  )
  return base<R>(
    "Validating",
    resource,
    options,
    ops,
    name,
    options.path ?? pathOf("validate", resource),
    handleWith(resource, name, handlerTimeout(timeoutSeconds), run)
  )
}

// ---------------------------------------------------------------------------------------------------------------
// configurations

const caBundleOf = (ca: string): string =>
  ca.trimStart().startsWith("-----BEGIN") ? Buffer.from(ca).toString("base64") : ca

const clientConfigOf = (config: Admission.ClientConfig, path: string): Json => {
  if ("url" in config) {
    return { url: `${config.url.replace(/\/+$/, "")}${path}`, caBundle: caBundleOf(config.caBundle) }
  }
  return {
    service: {
      name: config.service.name,
      namespace: config.service.namespace,
      ...(config.service.port === undefined ? {} : { port: config.service.port }),
      path
    },
    caBundle: caBundleOf(config.caBundle)
  }
}

const webhookEntry = (webhook: Admission.Webhook<unknown>, clientConfig: Admission.ClientConfig): Json => ({
  name: webhook.name,
  admissionReviewVersions: ["v1"],
  clientConfig: clientConfigOf(clientConfig, webhook.path),
  rules: webhook.rules.map((r) => ({ ...r, operations: [...r.operations] })),
  failurePolicy: webhook.failurePolicy,
  sideEffects: webhook.sideEffects,
  timeoutSeconds: webhook.timeoutSeconds,
  matchPolicy: webhook.matchPolicy,
  ...(webhook.namespaceSelector === undefined ? {} : { namespaceSelector: webhook.namespaceSelector }),
  ...(webhook.objectSelector === undefined ? {} : { objectSelector: webhook.objectSelector }),
  ...(webhook.kind === "Mutating" ? { reinvocationPolicy: webhook.reinvocationPolicy ?? "Never" } : {})
})

/** @internal */
export const configurations = (
  webhooks: ReadonlyArray<Admission.Webhook<any>>,
  options: Admission.ConfigurationOptions
): Array<Admission.Configuration> => {
  const name = options.name ?? "webhooks"
  const seen = new Set<string>()
  for (const w of webhooks) {
    const key = `${w.kind}/${w.name}`
    if (seen.has(key)) throw new TypeError(`two ${w.kind} webhooks are named ${w.name}`)
    seen.add(key)
  }
  const out: Array<Admission.Configuration> = []
  const mutating = webhooks.filter((w) => w.kind === "Mutating")
  const validating = webhooks.filter((w) => w.kind === "Validating")
  const labels = options.labels === undefined ? {} : { labels: options.labels }
  if (mutating.length > 0) {
    out.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: `${name}-mutating`, ...labels },
      webhooks: mutating.map((w) => webhookEntry(w, options.clientConfig))
    })
  }
  if (validating.length > 0) {
    out.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: `${name}-validating`, ...labels },
      webhooks: validating.map((w) => webhookEntry(w, options.clientConfig))
    })
  }
  return out
}
