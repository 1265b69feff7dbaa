/**
 * The conversion webhooks of the embedded cluster, called as apiextensions-apiserver calls them: a custom resource
 * whose CRD says `conversion.strategy: Webhook` is converted by its webhook whenever an object crosses versions —
 * a write in a version that is not stored (to the storage version, and back for the answer), a read, list item or
 * watch event in another version than the object's, and an admission webhook that matched an equivalent version.
 * Each conversion is one `apiextensions.k8s.io/v1` ConversionReview with one object (as kube-apiserver sends them
 * from its storage and watch cache), over HTTPS verified against the stanza's `caBundle`; the answer is checked as
 * upstream checks it (uid, count, apiVersion, kind, name, namespace and uid unchanged) and only its body, labels and
 * annotations are taken (the rest of the metadata is the original's). A failure is kube-apiserver's error: a 500
 * whose message is `conversion webhook for <group/version, Kind=kind> failed: …`.
 *
 * The core is synchronous: a conversion not known yet throws `Suspended` (`suspension.ts`) with its call; the
 * operation runs again when it is answered. Answers are kept per CRD revision (a changed CRD starts afresh), keyed
 * by what a conversion may depend on (the object without its server-set metadata), so the object a write stores
 * reads back without a second round. Failures are kept only for the operation that met them.
 */
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import * as ApiError from "../ApiError.js"
import type { KubeObject, WatchEvent } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import { clone, isObject, type Obj } from "./json.js"
import { conversionWebhookOf } from "./resourceType.js"
import { type Call, settle, Suspended, toApiError } from "./suspension.js"
import { type Cluster, nonSuccess, post } from "./webhookCall.js"

/** What a conversion gives: the converted object's body (no metadata), labels and annotations. */
interface Converted {
  readonly body: Obj
  readonly labels: Obj | undefined
  readonly annotations: Obj | undefined
}

/** kube-apiserver's timeout of a conversion webhook call. */
const timeoutSeconds = 30

/** How many conversions are kept per CRD revision before the cache starts over. */
const maxCached = 20_000

/**
 * One operation's conversions: the failures it met (its later runs fail the same way; the next request calls
 * again), and its per-request values (uid, time, generated name: the same on every run, so are its conversions).
 */
export class ConversionSession {
  readonly failures = new Map<string, ApiError.ApiError>()
  private readonly values = new Map<string, unknown>()

  /** A per-request value: computed on the first run of the operation, the same on its later runs. */
  once<A>(key: string, make: () => A): A {
    if (!this.values.has(key)) this.values.set(key, make())
    return this.values.get(key) as A
  }
}

/** `group/version, Kind=kind`: how Go prints a GroupVersionKind. */
const gvk = (obj: Obj): string => `${String(obj.apiVersion ?? "")}, Kind=${String(obj.kind ?? "")}`

/** What a conversion may depend on: the object without the metadata the server sets (kept from the original). */
const keyOf = (target: string, obj: Obj): string => {
  const meta = isObject(obj.metadata) ? obj.metadata : {}
  const { metadata: _metadata, ...body } = obj
  return `${target}\u0000${
    JSON.stringify([body, meta.name, meta.namespace, meta.uid, meta.labels ?? null, meta.annotations ?? null])
  }`
}

const isStringMap = (value: unknown): boolean =>
  value === undefined || value === null ||
  (isObject(value) && Object.values(value).every((v) => typeof v === "string"))

/** The ConversionReview versions kube-apiserver speaks, in its order of preference. */
const reviewVersions = ["v1", "v1beta1"]

/**
 * Checks the answer to a review of one object (`getConvertedObjectsFromResponse`, then the converted object's
 * checks): the conversion, or the reason it failed and how kube-apiserver words it.
 */
const check = (
  text: string,
  reviewVersion: string,
  uid: string,
  source: Obj,
  target: string
): Converted | string => {
  const failed = (why: string) => `conversion webhook for ${gvk(source)} failed: ${why}`
  let review: unknown
  try {
    review = JSON.parse(text)
  } catch (e) {
    return failed(e instanceof Error ? e.message : String(e))
  }
  const expected = `apiextensions.k8s.io/${reviewVersion}, Kind=ConversionReview`
  if (!isObject(review) || `${review.apiVersion}, Kind=${review.kind}` !== expected) {
    const got = isObject(review) ? `${review.apiVersion ?? ""}, Kind=${review.kind ?? ""}` : ", Kind="
    return failed(`expected webhook response of ${expected}, got ${got}`)
  }
  const response = review.response
  if (!isObject(response)) return failed("no response provided")
  if (response.uid !== uid) return failed(`expected response.uid="${uid}", got "${response.uid ?? ""}"`)
  const result = isObject(response.result) ? response.result : {}
  if (result.status !== "Success") {
    return failed(
      typeof result.message === "string" && result.message !== ""
        ? result.message
        : `response.result.status was '${result.status ?? ""}', not 'Success'`
    )
  }
  const objects = Array.isArray(response.convertedObjects) ? response.convertedObjects : []
  if (objects.length !== 1) {
    return `conversion webhook for ${gvk(source)} returned ${objects.length} objects, expected 1`
  }
  const out = objects[0]
  // (a review of one object, as kube-apiserver sends them: its wording for one object, not a list's)
  const invalid = (why: string) => `conversion webhook for ${gvk(source)} returned invalid object: ${why}`
  if (!isObject(out)) return invalid("not an object")
  if (out.apiVersion !== target) {
    return invalid(`invalid groupVersion (expected ${target}, received ${out.apiVersion ?? ""})`)
  }
  if (out.kind !== source.kind) return invalid(`invalid kind (expected ${source.kind}, received ${out.kind ?? ""})`)
  const before = isObject(source.metadata) ? source.metadata : {}
  const after = isObject(out.metadata) ? out.metadata : {}
  for (const field of ["name", "namespace", "uid"] as const) {
    if ((before[field] ?? "") !== (after[field] ?? "")) {
      return invalid(`must have the same ${field}: ${before[field] ?? ""} != ${after[field] ?? ""}`)
    }
  }
  if (!isStringMap(after.labels) || !isStringMap(after.annotations)) {
    return `conversion webhook for ${gvk(source)} returned invalid metadata: ` +
      "labels and annotations must be maps of strings"
  }
  const { metadata: _metadata, ...body } = out
  return {
    body,
    labels: isObject(after.labels) ? after.labels : undefined,
    annotations: isObject(after.annotations) ? after.annotations : undefined
  }
}

/** A conversion failure as kube-apiserver answers it (a plain error: status 500, no reason). */
const failure = (message: string): ApiError.ApiError => ApiError.make(500, "" as never, message)

/** The conversions of one core: answers kept per CRD revision, the session of the operation running. */
export class Converter {
  private readonly cache = new WeakMap<Obj, Map<string, Converted>>()
  /** The failures of the operation being run (installed by `settle`'s `around`). */
  session: ConversionSession | undefined = undefined

  constructor(private readonly core: Cluster) {}

  /** Whether objects of `rt` are converted by a webhook. */
  viaWebhook(rt: ResourceType): boolean {
    return conversionWebhookOf(rt) !== undefined
  }

  /**
   * `obj` (an object of `rt`'s kind, in any version) in the version `target` (an apiVersion): a copy, relabelled when
   * it is already there or the CRD converts by `None`, else the webhook's conversion — known, or `Suspended` until it
   * is (an `ApiError` when it failed).
   */
  convert(rt: ResourceType, target: string, obj: Obj): Obj {
    const webhook = conversionWebhookOf(rt)
    if (webhook === undefined || obj.apiVersion === target) return { ...clone(obj), apiVersion: target }
    const key = keyOf(target, obj)
    let known = this.cache.get(webhook)
    if (known === undefined) {
      known = new Map()
      this.cache.set(webhook, known)
    }
    const hit = known.get(key)
    if (hit !== undefined) {
      const meta: Obj = { ...clone(obj.metadata ?? {}) }
      if (hit.labels === undefined) delete meta.labels
      else meta.labels = clone(hit.labels)
      if (hit.annotations === undefined) delete meta.annotations
      else meta.annotations = clone(hit.annotations)
      return { ...clone(hit.body), metadata: meta }
    }
    const session = this.session ?? new ConversionSession()
    const failed = session.failures.get(key)
    if (failed !== undefined) throw failed
    throw new Suspended([this.call(webhook, known, session, key, target, clone(obj))])
  }

  /** The call that converts one object: its answer kept in `known`, or its failure in the session. */
  private call(
    webhook: Obj,
    known: Map<string, Converted>,
    session: ConversionSession,
    key: string,
    target: string,
    obj: Obj
  ): Call {
    const offered = Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions : []
    const reviewVersion = reviewVersions.find((v) => offered.includes(v))
    const fail = (message: string) => Effect.sync(() => void session.failures.set(key, failure(message)))
    if (reviewVersion === undefined) {
      return {
        key,
        run: fail(
          `conversion webhook for ${gvk(obj)} failed: webhook does not accept known ConversionReview versions ` +
            `(v1, v1beta1)`
        )
      }
    }
    const uid = randomUUID()
    const review = {
      apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
      kind: "ConversionReview",
      request: { uid, desiredAPIVersion: target, objects: [obj] }
    }
    const run = Effect.flatMap(
      post(this.core, webhook.clientConfig, timeoutSeconds, JSON.stringify(review)),
      (posted) => {
        if (posted._tag === "Failed") return fail(`conversion webhook for ${gvk(obj)} failed: ${posted.reason}`)
        if (posted.code < 200 || posted.code > 299) {
          return fail(`conversion webhook for ${gvk(obj)} failed: ${nonSuccess(posted.code, posted.text)}`)
        }
        const converted = check(posted.text, reviewVersion, uid, obj, target)
        if (typeof converted === "string") return fail(converted)
        return Effect.sync(() => {
          if (known.size >= maxCached) known.clear()
          known.set(key, converted)
        })
      }
    )
    return { key, run }
  }
}

/**
 * Runs a read or write of `core` until the conversions it needs are answered (their webhook calls made between its
 * runs); `around` wraps each run too (the admission webhooks' session).
 */
export const converting = <A>(
  core: { readonly converter: Converter },
  op: () => A,
  around: <B>(run: () => B) => B = (run) => run()
): Effect.Effect<A, ApiError.ApiError> => {
  const session = new ConversionSession()
  return settle(op, (run) => {
    const previous = core.converter.session
    core.converter.session = session
    try {
      return around(run)
    } finally {
      core.converter.session = previous
    }
  })
}

// -----------------------------------------------------------------------------------------------------------------
// watches

/** Runs the webhook calls of a watch's conversions (on the watching fiber's services: its Clock). */
export type Runner = (effect: Effect.Effect<void>) => void

const defaultRunner: Runner = (effect) => void Effect.runFork(effect)

/**
 * The events of a watch of a kind converted by a webhook (objects in their stored form), converted one after the
 * other and given to `sink` in order; events sent by the caller (bookmarks, errors) keep their place among them. A
 * conversion known already is given at once; one not known waits for its call. A conversion that fails ends the
 * watch with an ERROR event (kube-apiserver's status); nothing follows it.
 */
export const convertingWatch = (
  core: { readonly converter: Converter },
  sink: (event: WatchEvent) => void,
  present: (obj: Obj) => KubeObject,
  run: Runner = defaultRunner
): { readonly send: (event: WatchEvent) => void; readonly close: () => void } => {
  const queue: Array<WatchEvent> = []
  let waiting = false
  let closed = false
  let session = new ConversionSession()
  let rounds = 0
  const fail = (error: ApiError.ApiError): void => {
    closed = true
    queue.length = 0
    sink({ type: "ERROR", object: error.status as unknown as KubeObject })
  }
  const drain = (): void => {
    while (!closed && !waiting && queue.length > 0) {
      const event = queue[0]!
      let out: WatchEvent = event
      if (event.type !== "BOOKMARK" && event.type !== "ERROR") {
        const previous = core.converter.session
        core.converter.session = session
        try {
          out = { type: event.type, object: present(event.object as unknown as Obj) }
        } catch (e) {
          if (!(e instanceof Suspended)) return fail(toApiError(e))
          if (++rounds > 16) return fail(toApiError(new Error("webhook calls did not settle")))
          waiting = true
          const calls = new Map(e.calls.map((c) => [c.key, c.run] as const))
          return run(
            Effect.forEach(calls.values(), (call) => call, { concurrency: 16, discard: true }).pipe(
              Effect.andThen(Effect.sync(() => {
                waiting = false
                drain()
              }))
            )
          )
        } finally {
          core.converter.session = previous
        }
        session = new ConversionSession()
        rounds = 0
      }
      queue.shift()
      sink(out)
    }
  }
  return {
    send: (event) => {
      if (closed) return
      queue.push(event)
      drain()
    },
    close: () => {
      closed = true
      queue.length = 0
    }
  }
}
