/**
 * The admission webhooks of the embedded cluster, called as kube-apiserver 1.36 calls them: the
 * MutatingWebhookConfigurations and ValidatingWebhookConfigurations in the store (admissionregistration.k8s.io/v1),
 * read on every request, their rules, selectors, matchConditions and policies matched against the request, an
 * `admission.k8s.io/v1` AdmissionReview built and sent (`webhookCall.ts`), the answer's patch, denial and warnings
 * applied with kube-apiserver's errors.
 *
 * The core is synchronous; a webhook call is not. `admit` runs a write with an {@link Admission} whose chains
 * answer from the responses already received and otherwise throw `Suspended` (`suspension.ts`): the calls it names
 * are made (on the fiber, their `timeoutSeconds` on its Clock), and the write runs again from the start. A webhook
 * that matched another version of a custom resource than the request's (`matchPolicy: Equivalent`) is sent the
 * objects converted to it, and its patch is converted back (`conversionWebhooks.ts`). Per-request values (uid,
 * time, generated name) come from the operation's session, so every run of one request sees the same ones; nothing
 * is stored before the last admission point, so a suspended run leaves no trace.
 */
import * as Effect from "effect/Effect"
import jsonpatch from "fast-json-patch"
import { randomUUID } from "node:crypto"
import * as ApiError from "../ApiError.js"
import { apiVersion, type ResourceType } from "../ResourceType.js"
import type { Admission, Attributes } from "./admission.js"
import { converting } from "./conversionWebhooks.js"
import { clone, isObject, type Obj } from "./json.js"
import { fromLabelSelector, matches } from "./labelSelector.js"
import { details, qualified } from "./statuses.js"
import type { Core } from "./store.js"
import { compile, toCel } from "./structural/cel.js"
import * as Suspension from "./suspension.js"
import { call, type Hook, type Outcome, patchError } from "./webhookCall.js"

/** Who sent the request and how (what the AdmissionReview's `userInfo` and `options` carry). */
export interface RequestInfo {
  readonly user?: { readonly username: string; readonly groups: ReadonlyArray<string> } | undefined
  readonly fieldManager?: string | undefined
  readonly fieldValidation?: string | undefined
  /** The DeleteOptions of a DELETE. */
  readonly deleteOptions?: Obj | undefined
}

/** The user of the embedded cluster's token (as its SelfSubjectReview answers). */
export const defaultUser = { username: "testkit", groups: ["system:masters", "system:authenticated"] }

const group = "admissionregistration.k8s.io"

interface Call {
  readonly key: string
  readonly hook: Hook
  readonly review: Obj
  readonly uid: string
}

// -----------------------------------------------------------------------------------------------------------------
// configurations and matching

/** The webhooks of one kind of configuration, configurations ordered by name, webhooks in order. */
const hooksOf = (core: Core, mutating: boolean): Array<Hook> => {
  const rt = core.registry.byKind(
    group,
    "v1",
    mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"
  )
  if (rt === undefined) return []
  const configs = [...core.storage.objects(rt).values()].sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0
  )
  return configs.flatMap((c) =>
    ((c.webhooks ?? []) as Array<Obj>).map((webhook, index) => ({
      configuration: c.metadata.name as string,
      index,
      webhook,
      mutating
    }))
  )
}

/** Whether any webhook configuration is stored (a write without one needs no admission session). */
const anyConfiguration = (core: Core): boolean =>
  ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"].some((kind) => {
    const rt = core.registry.byKind(group, "v1", kind)
    return rt !== undefined && core.storage.objects(rt).size > 0
  })

const has = (values: unknown, value: string): boolean =>
  Array.isArray(values) && (values.includes("*") || values.includes(value))

const resourceMatches = (patterns: unknown, resource: string, subresource: string): boolean =>
  Array.isArray(patterns) && patterns.some((p: string) => {
    const slash = p.indexOf("/")
    const res = slash < 0 ? p : p.slice(0, slash)
    const sub = slash < 0 ? "" : p.slice(slash + 1)
    return (res === "*" || res === resource) && (sub === "*" || sub === subresource)
  })

const isNamespaceKind = (rt: ResourceType): boolean => rt.group === "" && rt.plural === "namespaces"

/** The namespace admission is told of: a Namespace's own name for the Namespace itself (kube-apiserver). */
const namespaceOf = (a: Attributes): string => isNamespaceKind(a.rt) ? a.name : (a.namespace ?? "")

const ruleMatches = (rule: Obj, a: Attributes, rt: ResourceType): boolean => {
  if (!has(rule.operations, a.operation)) return false
  if (!has(rule.apiGroups, rt.group) || !has(rule.apiVersions, rt.version)) return false
  if (!resourceMatches(rule.resources, rt.plural, a.subresource ?? "")) return false
  const scope = rule.scope ?? "*"
  if (scope === "Namespaced") return !isNamespaceKind(a.rt) && namespaceOf(a) !== ""
  if (scope === "Cluster") return isNamespaceKind(a.rt) || namespaceOf(a) === ""
  return true
}

/** The resource type a webhook is called for (the request's, or an equivalent version's), or none. */
const matchedType = (core: Core, hook: Hook, a: Attributes): ResourceType | undefined => {
  const rules = (hook.webhook.rules ?? []) as Array<Obj>
  const hit = (rt: ResourceType) => rules.some((r) => ruleMatches(r, a, rt))
  if (hit(a.rt)) return a.rt
  if (hook.webhook.matchPolicy === "Exact") return undefined
  return core.registry.versionsOf(a.rt.group, a.rt.plural).find((rt) => rt.version !== a.rt.version && hit(rt))
}

const selectorMatches = (selector: unknown, labels: Obj | undefined): boolean =>
  !isObject(selector) || matches(fromLabelSelector(selector as never), labels)

const isEmptySelector = (selector: unknown): boolean =>
  !isObject(selector) ||
  (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)

const namespaceSelected = (core: Core, hook: Hook, a: Attributes): boolean => {
  const selector = hook.webhook.namespaceSelector
  if (isEmptySelector(selector)) return true
  if (isNamespaceKind(a.rt)) {
    const own = a.operation === "DELETE" ? a.oldObject : a.object ?? a.oldObject
    return selectorMatches(selector, own?.metadata?.labels)
  }
  if (namespaceOf(a) === "") return true
  const ns = core.storage.stored(core.registry.byKind("", "v1", "Namespace")!, undefined, namespaceOf(a))
  if (ns === undefined) throw internal(`namespace "${namespaceOf(a)}" not found`)
  return selectorMatches(selector, ns.metadata.labels)
}

const objectSelected = (hook: Hook, a: Attributes): boolean => {
  const selector = hook.webhook.objectSelector
  if (isEmptySelector(selector)) return true
  return [a.object, a.oldObject].some((o) => o !== undefined && selectorMatches(selector, o.metadata?.labels))
}

/** The admission configuration objects themselves are never sent to webhooks (kube-apiserver exempts them). */
const exempt = (rt: ResourceType): boolean => rt.group === group

// -----------------------------------------------------------------------------------------------------------------
// the AdmissionReview

const gvk = (rt: ResourceType) => ({ group: rt.group, version: rt.version, kind: rt.kind })
const gvr = (rt: ResourceType) => ({ group: rt.group, version: rt.version, resource: rt.plural })

const optionsOf = (a: Attributes, info: RequestInfo): Obj => {
  const dryRun = a.dryRun ? { dryRun: ["All"] } : {}
  const meta = { apiVersion: "meta.k8s.io/v1" }
  if (a.operation === "DELETE") {
    const { dryRun: _dryRun, ...given } = info.deleteOptions ?? {}
    return { ...given, ...meta, kind: "DeleteOptions", ...dryRun }
  }
  const manager = info.fieldManager !== undefined && info.fieldManager !== "" ? { fieldManager: info.fieldManager } : {}
  const validation = info.fieldValidation !== undefined && info.fieldValidation !== ""
    ? { fieldValidation: info.fieldValidation }
    : {}
  return {
    kind: a.operation === "CREATE" ? "CreateOptions" : "UpdateOptions",
    ...meta,
    ...dryRun,
    ...manager,
    ...validation
  }
}

/**
 * An object as sent for the matched version: the request's own, or converted to the equivalent version the webhook
 * matched (by the CRD's conversion webhook; relabelled when it has none).
 */
const shown = (core: Core, obj: Obj | undefined, a: Attributes, rt: ResourceType): Obj | null =>
  obj === undefined ? null : rt === a.rt ? obj : core.converter.convert(a.rt, apiVersion(rt), obj)

const reviewOf = (core: Core, a: Attributes, rt: ResourceType, info: RequestInfo): Obj => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    kind: gvk(rt),
    resource: gvr(rt),
    ...(a.subresource !== undefined ? { subResource: a.subresource } : {}),
    requestKind: gvk(a.rt),
    requestResource: gvr(a.rt),
    ...(a.subresource !== undefined ? { requestSubResource: a.subresource } : {}),
    ...(a.name !== "" ? { name: a.name } : {}),
    ...(namespaceOf(a) !== "" ? { namespace: namespaceOf(a) } : {}),
    operation: a.operation,
    userInfo: info.user ?? defaultUser,
    object: shown(core, a.object, a, rt),
    oldObject: shown(core, a.oldObject, a, rt),
    dryRun: a.dryRun,
    options: optionsOf(a, info)
  }
})

// -----------------------------------------------------------------------------------------------------------------
// answers

const internal = (message: string): ApiError.ApiError =>
  ApiError.make(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] })

const callFailed = (hook: Hook, reason: string): ApiError.ApiError =>
  internal(`failed calling webhook "${hook.webhook.name}": ${reason}`)

/** A denial as kube-apiserver returns it (`webhookerrors.ToStatusErr`). */
const denied = (hook: Hook, status: Obj | undefined): ApiError.ApiError => {
  const by = `admission webhook "${hook.webhook.name}" denied the request`
  const s = isObject(status) ? status : {}
  const code = typeof s.code === "number" && s.code >= 400 ? s.code : 400
  const message = typeof s.message === "string" && s.message !== ""
    ? `${by}: ${s.message}`
    : typeof s.reason === "string" && s.reason !== ""
    ? `${by}: ${s.reason}`
    : `${by} without explanation`
  return ApiError.make(code, (typeof s.reason === "string" ? s.reason : "") as never, message, s.details)
}

// -----------------------------------------------------------------------------------------------------------------
// the admission of one request

class Session implements Admission {
  readonly outcomes = new Map<string, { readonly uid: string; readonly outcome: Outcome }>()
  warnings: Array<string> = []

  constructor(private readonly core: Core, private readonly info: RequestInfo) {}

  /** The call of a webhook, its outcome kept for the write's next run. */
  callOf(c: Call): Suspension.Call {
    return {
      key: c.key,
      run: Effect.map(
        call(this.core, c.hook, c.review, c.uid),
        (outcome) => void this.outcomes.set(c.key, { uid: c.uid, outcome })
      )
    }
  }

  /** The webhooks of a chain that are called for `a`, with the type each is called for. */
  private matching(mutating: boolean, a: Attributes): Array<readonly [Hook, ResourceType]> {
    if (exempt(a.rt)) return []
    return hooksOf(this.core, mutating).flatMap((hook) => {
      const rt = matchedType(this.core, hook, a)
      if (rt === undefined) return []
      if (!namespaceSelected(this.core, hook, a) || !objectSelected(hook, a)) return []
      return this.conditionsMatch(hook, rt, a) ? [[hook, rt] as const] : []
    })
  }

  /**
   * The webhook's `matchConditions` (CEL over `object`, `oldObject` and `request`): all true calls it, one false
   * skips it; an evaluation error fails the request (failurePolicy Fail) or skips the webhook (Ignore).
   */
  private conditionsMatch(hook: Hook, rt: ResourceType, a: Attributes): boolean {
    const conditions = hook.webhook.matchConditions
    if (!Array.isArray(conditions) || conditions.length === 0) return true
    const review = reviewOf(this.core, a, rt, this.info).request as Obj
    const context = {
      object: toCel(review.object, undefined),
      oldObject: toCel(review.oldObject, undefined),
      request: toCel(review, undefined)
    }
    let failure: string | undefined
    for (const condition of conditions as Array<Obj>) {
      const program = compile(String(condition.expression ?? ""))
      let result: unknown
      try {
        result = typeof program === "string" ? new Error(program) : program(context)
      } catch (e) {
        result = e
      }
      if (result === false) return false
      if (result !== true && failure === undefined) {
        // cel-go's wording of a missing map key
        const why = isObject(result) && typeof result.message === "string"
          ? result.message.replace(/^field not found: /, "no such key: ")
          : "no boolean result"
        failure = `expression '${condition.expression}' resulted in error: ${why}`
      }
    }
    if (failure === undefined) return true
    if (hook.webhook.failurePolicy === "Ignore") return false
    throw ApiError.make(
      403,
      "Forbidden",
      `${qualified(a.rt)} "${a.name}" is forbidden: ${failure}`,
      details(a.rt, a.name)
    )
  }

  /** The call of `hook` for `a`: its outcome if received, else the call to make. */
  private lookup(phase: string, hook: Hook, rt: ResourceType, a: Attributes): Outcome | Call {
    if (a.dryRun) {
      const effects = hook.webhook.sideEffects
      if (effects !== "None" && effects !== "NoneOnDryRun") {
        throw ApiError.make(400, "BadRequest", `admission webhook "${hook.webhook.name}" does not support dry run`)
      }
    }
    const review = reviewOf(this.core, a, rt, this.info)
    const key = `${phase}\u0000${hook.mutating}\u0000${hook.configuration}\u0000${hook.index}\u0000${
      JSON.stringify(review)
    }`
    const known = this.outcomes.get(key)
    if (known !== undefined) return known.outcome
    const uid = randomUUID()
    return { key, hook, uid, review: { ...review, request: { uid, ...review.request } } }
  }

  /** What an outcome means: the response to use, `undefined` when ignored (failurePolicy Ignore), or an error. */
  private answer(hook: Hook, outcome: Outcome): Obj | undefined {
    if (outcome._tag === "Failed") {
      if (hook.webhook.failurePolicy === "Ignore") return undefined
      throw callFailed(hook, outcome.reason)
    }
    const response = outcome.response
    if (Array.isArray(response.warnings)) {
      for (const w of response.warnings) if (typeof w === "string" && w !== "") this.warnings.push(w)
    }
    if (response.allowed !== true) throw denied(hook, response.status)
    return response
  }

  mutate(a: Attributes): Obj | undefined {
    const hooks = this.matching(true, a)
    if (hooks.length === 0) return a.object
    let object = a.object
    let version = 0
    const invoked: Array<{ readonly hook: Hook; readonly at: number }> = []
    const invoke = (phase: string, hook: Hook, rt: ResourceType): void => {
      const current: Attributes = { ...a, object }
      const found = this.lookup(phase, hook, rt, current)
      if (!("_tag" in found)) throw new Suspension.Suspended([this.callOf(found)])
      const response = this.answer(hook, found)
      if (response === undefined || typeof response.patch !== "string" || response.patch === "") return
      if (object === undefined) return
      let operations: unknown
      try {
        operations = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8"))
      } catch (e) {
        throw internal(e instanceof Error ? e.message : String(e))
      }
      if (!Array.isArray(operations) || operations.length === 0) return
      // the patch is of the object as the webhook was sent it (in the version it matched), converted back after
      const sent = rt === a.rt ? object : this.core.converter.convert(a.rt, apiVersion(rt), object)
      let patched: Obj
      try {
        patched = jsonpatch.applyPatch(clone(sent), operations as never, true, true).newDocument as Obj
      } catch (e) {
        throw internal(patchError(e))
      }
      if (rt !== a.rt) patched = this.core.converter.convert(a.rt, apiVersion(a.rt), patched)
      if (JSON.stringify(patched) !== JSON.stringify(object)) {
        object = patched
        version++
      }
    }
    for (const [hook, rt] of hooks) {
      invoke("mutate", hook, rt)
      invoked.push({ hook, at: version })
    }
    // reinvocationPolicy IfNeeded: once more, for each such webhook whose object changed after its call
    if (version > 0) {
      const again = invoked.filter(({ at, hook }) => hook.webhook.reinvocationPolicy === "IfNeeded" && version > at)
      for (const { hook } of again) {
        const still = this.matching(true, { ...a, object }).find(([h]) =>
          h.configuration === hook.configuration && h.index === hook.index
        )
        if (still !== undefined) invoke("reinvoke", still[0], still[1])
      }
    }
    return object
  }

  validate(a: Attributes): void {
    const hooks = this.matching(false, a)
    const pending: Array<Call> = []
    const errors: Array<ApiError.ApiError> = []
    for (const [hook, rt] of hooks) {
      const found = this.lookup("validate", hook, rt, a)
      if (!("_tag" in found)) {
        pending.push(found)
        continue
      }
      try {
        this.answer(hook, found)
      } catch (e) {
        errors.push(e as ApiError.ApiError)
      }
    }
    // called in parallel: all of them before any answer counts
    if (pending.length > 0) throw new Suspension.Suspended(pending.map((c) => this.callOf(c)))
    if (errors.length > 0) throw errors[0]
  }
}

/**
 * Runs a write of `core` through admission: `write` is run with the admission session installed, again after each
 * batch of webhook calls it asked for (admission's and conversion's), until it completes or fails. Without any
 * webhook configuration stored it runs without one (its conversions still called).
 */
export const admit = <A>(
  core: Core,
  info: RequestInfo,
  write: () => A
): Effect.Effect<{ readonly value: A; readonly warnings: ReadonlyArray<string> }, ApiError.ApiError> =>
  Effect.suspend(() => {
    if (!anyConfiguration(core) || core.admission !== undefined) {
      return Effect.map(converting(core, write), (value) => ({ value, warnings: [] }))
    }
    const session = new Session(core, info)
    const admitted = converting(core, () => ({ value: write(), warnings: session.warnings }), (run) => {
      session.warnings = []
      core.admission = session
      try {
        return run()
      } finally {
        core.admission = undefined
      }
    })
    // warnings of webhooks reached before a refusal still go to the client
    return Effect.mapError(admitted, (error) => withWarnings(error, session.warnings))
  })

const warningsOf = new WeakMap<ApiError.ApiError, ReadonlyArray<string>>()

const withWarnings = (error: ApiError.ApiError, warnings: ReadonlyArray<string>): ApiError.ApiError => {
  if (warnings.length > 0) warningsOf.set(error, warnings)
  return error
}

/** The webhook warnings that came with a refused request (for its `Warning` headers). */
export const warningsOfError = (error: unknown): ReadonlyArray<string> =>
  error instanceof ApiError.ApiError ? warningsOf.get(error) ?? [] : []
