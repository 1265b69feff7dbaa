/**
 * Events served from one storage under two groups, as kube-apiserver does: core/v1 `events` and
 * events.k8s.io/v1 `events` are two versions of one resource. Objects are stored in the core/v1 form; an
 * events.k8s.io/v1 request is converted on the way in and every answer (get, list, watch, write results) on the
 * way out, with the field renames of upstream's `Convert_v1_Event_To_core_Event` / `Convert_core_Event_To_v1_Event`
 * (`regarding` ⇄ `involvedObject`, `note` ⇄ `message`, `deprecatedSource` ⇄ `source`,
 * `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`/`deprecatedCount` ⇄ `firstTimestamp`/`lastTimestamp`/`count`,
 * `reportingController` ⇄ `reportingComponent`; `eventTime`, `series`, `related`, `action`, `reason`, `type`,
 * `reportingInstance` keep their names). Validation follows upstream's `ValidateEventCreate`/`ValidateEventUpdate`:
 * the legacy rules for every write, the strict ones for writes through events.k8s.io/v1.
 */
import * as ApiError from "../ApiError.js"
import type { StatusCause } from "../ApiError.js"
import type { KubeObject } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import { deepEqual, isObject, type Obj } from "./json.js"
import { isQualifiedName } from "./labelSelector.js"

/** The group of the newer Event API. */
export const EVENTS_GROUP = "events.k8s.io"

/** True for events.k8s.io/v1 `events`. */
export const isEventsV1 = (rt: ResourceType): boolean => rt.group === EVENTS_GROUP && rt.plural === "events"

/** True for core/v1 `events`. */
export const isCoreEvent = (rt: ResourceType): boolean => rt.group === "" && rt.plural === "events"

/** core/v1 name ⇄ events.k8s.io/v1 name of the fields that are renamed. */
const renames: ReadonlyArray<readonly [core: string, events: string]> = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"],
  ["reportingComponent", "reportingController"]
]

const rename = (obj: Obj, from: 0 | 1): Obj => {
  const out: Obj = {}
  const to = from === 0 ? 1 : 0
  const map = new Map(renames.map((pair) => [pair[from], pair[to]]))
  const shadowed = new Set(renames.map((pair) => pair[to]))
  for (const [key, value] of Object.entries(obj)) {
    const target = map.get(key)
    if (target !== undefined) out[target] = value
    // a field of the other version has no place in this one (dropped, as decoding into the typed struct would)
    else if (!shadowed.has(key)) out[key] = value
  }
  return out
}

/** An events.k8s.io/v1 Event (or a part of one, such as an apply configuration) in its core/v1 form. */
export const toCore = (obj: Obj): Obj => {
  const out = rename(obj, 1)
  if (out.apiVersion !== undefined) out.apiVersion = "v1"
  return out
}

/** A stored core/v1 Event in its events.k8s.io/v1 form (with the zero values upstream's JSON always carries). */
export const fromCore = (obj: Obj): Obj => {
  const out = rename(obj, 0)
  if (out.apiVersion !== undefined) out.apiVersion = `${EVENTS_GROUP}/v1`
  // struct fields (no pointer) are always written by Go's encoding/json, zero times as null
  out.eventTime ??= null
  out.regarding ??= {}
  out.deprecatedSource ??= {}
  out.deprecatedFirstTimestamp ??= null
  out.deprecatedLastTimestamp ??= null
  return out
}

/**
 * A stored core/v1 Event as core/v1 answers it: the struct fields and the strings without `omitempty` always
 * written (`involvedObject: {}`, `source: {}`, `firstTimestamp: null`, `eventTime: null`, `reportingComponent: ""`).
 */
export const toCoreAnswer = (obj: Obj): Obj => {
  obj.involvedObject ??= {}
  obj.source ??= {}
  obj.firstTimestamp ??= null
  obj.lastTimestamp ??= null
  obj.eventTime ??= null
  obj.reportingComponent ??= ""
  obj.reportingInstance ??= ""
  return obj
}

/** How the core shows a stored object of `rt`: events in the form of the group asked. */
export const present = (rt: ResourceType, obj: Obj): Obj =>
  isEventsV1(rt) ? fromCore(obj) : isCoreEvent(rt) ? toCoreAnswer(obj) : obj

const isEmpty = (value: unknown): boolean =>
  value === null || value === "" || (isObject(value) && Object.values(value).every(isEmpty))

/**
 * The stored form of a core/v1 Event: the zero values of {@link toCoreAnswer} dropped, as decoding into the typed
 * struct and encoding again does, so that a read-modify-write that changes nothing stays a no-op.
 */
export const canonical = (obj: Obj): void => {
  for (const key of ["firstTimestamp", "lastTimestamp", "eventTime", "reportingComponent", "reportingInstance"]) {
    if (obj[key] === null || obj[key] === "") delete obj[key]
  }
  for (const key of ["involvedObject", "source"]) if (isEmpty(obj[key])) delete obj[key]
}

/**
 * The core/v1 field selector of an events.k8s.io/v1 one: upstream's field label conversion for events.k8s.io/v1
 * Events (`regarding.*` → `involvedObject.*`, `reportingController` → `reportingComponent`; `reason`, `type`,
 * `source`, `metadata.name`, `metadata.namespace` as they are). Any other label: 400 `field label not supported`.
 */
export const coreFieldLabel = (label: string): string => {
  if (label.startsWith("regarding.")) {
    const rest = label.slice("regarding.".length)
    if (["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"].includes(rest)) {
      return `involvedObject.${rest}`
    }
  }
  if (label === "reportingController") return "reportingComponent"
  if (["reason", "type", "source", "metadata.name", "metadata.namespace"].includes(label)) return label
  throw ApiError.make(400, "BadRequest", `field label not supported: ${label}`)
}

// ---------------------------------------------------------------------------------------------------------------
// validation

const reportingInstanceLimit = 128
const actionLimit = 128
const reasonLimit = 128
const noteLimit = 1024

const str = (value: unknown): string => (typeof value === "string" ? value : "")
const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== ""
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

const required = (field: string): StatusCause => ({ reason: "FieldValueRequired", message: "Required value", field })
const invalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: "FieldValueInvalid",
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
  field
})

/** upstream's `legacyValidateEvent`: every write of an Event, in its core/v1 form. */
export const validateLegacy = (event: Obj, causes: Array<StatusCause>): void => {
  const namespace = str(event.metadata?.namespace)
  const involvedNamespace = str(event.involvedObject?.namespace)
  if (!isSet(event.eventTime)) {
    if (involvedNamespace === "" ? namespace !== "" && namespace !== "default" : namespace !== involvedNamespace) {
      causes.push(invalid("involvedObject.namespace", involvedNamespace, "does not match event.namespace"))
    }
  } else {
    if (involvedNamespace === "" && namespace !== "default" && namespace !== "kube-system") {
      causes.push(invalid("involvedObject.namespace", involvedNamespace, "does not match event.namespace"))
    }
    const controller = str(event.reportingComponent)
    if (controller === "") causes.push(required("reportingController"))
    else if (!isQualifiedName(controller)) {
      causes.push(
        invalid(
          "reportingController",
          controller,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
      )
    }
    const instance = str(event.reportingInstance)
    if (instance === "") causes.push(required("reportingInstance"))
    if (instance.length > reportingInstanceLimit) {
      causes.push(invalid("reportingInstance", "", `can have at most ${reportingInstanceLimit} characters`))
    }
    const action = str(event.action)
    if (action === "") causes.push(required("action"))
    if (action.length > actionLimit) causes.push(invalid("action", "", `can have at most ${actionLimit} characters`))
    const reason = str(event.reason)
    if (reason === "") causes.push(required("reason"))
    if (reason.length > reasonLimit) causes.push(invalid("reason", "", `can have at most ${reasonLimit} characters`))
    if (str(event.message).length > noteLimit) {
      causes.push(invalid("message", "", `can have at most ${noteLimit} characters`))
    }
  }
  if (namespace !== "" && (namespace.length > 253 || !dnsSubdomain.test(namespace))) {
    causes.push(
      invalid(
        "namespace",
        namespace,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
      )
    )
  }
}

const validateSeries = (event: Obj, causes: Array<StatusCause>): void => {
  const series = event.series
  if (!isObject(series)) return
  if (!(typeof series.count === "number" && series.count >= 2)) {
    causes.push(invalid("series.count", "", "should be at least 2"))
  }
  if (!isSet(series.lastObservedTime)) causes.push(required("series.lastObservedTime"))
}

const same = (a: unknown, b: unknown): boolean => deepEqual(a ?? null, b ?? null)

/**
 * The strict rules of a write through events.k8s.io/v1 (upstream's `ValidateEventCreate`/`ValidateEventUpdate` for
 * requests of that version), on the core/v1 form; the legacy rules are checked too, so one 422 lists every cause.
 */
export const validateStrict = (event: Obj, old: Obj | undefined): void => {
  const causes: Array<StatusCause> = []
  validateLegacy(event, causes)
  if (old === undefined) {
    validateSeries(event, causes)
    if (!isSet(event.eventTime)) causes.push(required("eventTime"))
    if (event.type !== "Normal" && event.type !== "Warning") {
      causes.push(invalid("type", "", `has invalid value: ${str(event.type)}`))
    }
    if (isSet(event.firstTimestamp)) causes.push(invalid("firstTimestamp", "", "needs to be unset"))
    if (isSet(event.lastTimestamp)) causes.push(invalid("lastTimestamp", "", "needs to be unset"))
    if (isSet(event.count) && event.count !== 0) causes.push(invalid("count", "", "needs to be unset"))
    if (isSet(event.source?.component) || isSet(event.source?.host)) {
      causes.push(invalid("source", "", "needs to be unset"))
    }
  } else {
    if (!same(event.series, old.series)) validateSeries(event, causes)
    for (
      const field of [
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance"
      ]
    ) {
      const empty = field === "involvedObject" || field === "source" ? {} : undefined
      if (!same(event[field] ?? empty, old[field] ?? empty)) {
        causes.push({
          reason: "FieldValueInvalid",
          message: `Invalid value: ${JSON.stringify(event[field] ?? null)}: field is immutable`,
          field: field === "reportingComponent" ? "reportingController" : field
        })
      }
    }
  }
  if (causes.length === 0) return
  const name = str(event.metadata?.name)
  const listed = causes.map((c) => `${c.field}: ${c.message}`)
  throw ApiError.make(
    422,
    "Invalid",
    `Event.${EVENTS_GROUP} "${name}" is invalid: ${listed.length === 1 ? listed[0] : `[${listed.join(", ")}]`}`,
    { name, group: EVENTS_GROUP, kind: "Event", causes }
  )
}

/**
 * The body of a write through events.k8s.io/v1, checked for its apiVersion and kind as the other kinds' bodies are,
 * then in the core/v1 form.
 */
export const bodyToCore = (body: unknown): unknown => {
  if (!isObject(body)) return body
  const expected = `${EVENTS_GROUP}/v1`
  if (body.apiVersion !== undefined && body.apiVersion !== expected) {
    throw ApiError.make(
      400,
      "BadRequest",
      `the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`
    )
  }
  if (body.kind !== undefined && body.kind !== "Event") {
    throw ApiError.make(
      400,
      "BadRequest",
      `the kind in the data (${body.kind}) does not match the expected kind (Event)`
    )
  }
  return { ...toCore(body), apiVersion: "v1", kind: "Event" }
}

// ---------------------------------------------------------------------------------------------------------------
// writes through events.k8s.io/v1: converted, checked strictly, then the core/v1 write path (`write`)

/**
 * A create through events.k8s.io/v1: the object converted, checked strictly, created by `create` in the core/v1
 * form, answered in the events.k8s.io one.
 */
export const createV1 = (
  rt: ResourceType,
  namespace: string | undefined,
  body: unknown,
  create: (converted: unknown) => KubeObject
): KubeObject => {
  const converted = bodyToCore(body)
  if (isObject(converted)) {
    const metadata = isObject(converted.metadata) ? converted.metadata : {}
    validateStrict({ ...converted, metadata: { ...metadata, namespace: metadata.namespace ?? namespace } }, undefined)
  }
  const created = create(converted) as Obj
  return { ...fromCore(created), apiVersion: `${rt.group}/${rt.version}` } as KubeObject
}

/**
 * An update through events.k8s.io/v1 (also the end of its json, merge and strategic merge patches): `current` is
 * the stored Event as events.k8s.io/v1 answers it, `update` writes the converted body in the core/v1 form.
 */
export const updateV1 = (
  rt: ResourceType,
  current: Obj,
  body: unknown,
  update: (converted: unknown) => KubeObject
): KubeObject => {
  const old = toCore(current)
  const converted = bodyToCore(body)
  if (isObject(converted)) {
    validateStrict({ ...converted, metadata: { ...old.metadata, ...converted.metadata } }, old)
  }
  const updated = update(converted) as Obj
  return { ...fromCore(updated), apiVersion: `${rt.group}/${rt.version}` } as KubeObject
}

/**
 * Server-side apply through events.k8s.io/v1: the configuration renamed to core/v1 fields and applied there by
 * `apply`; `exists` tells whether the Event is stored (an apply that creates is checked strictly).
 */
export const applyV1 = (
  namespace: string | undefined,
  name: string,
  config: unknown,
  exists: () => boolean,
  apply: (converted: unknown) => { readonly object: KubeObject; readonly created: boolean }
): { readonly object: KubeObject; readonly created: boolean } => {
  // a configuration without apiVersion or kind is refused by the core path with upstream's message
  const converted = isObject(config) && config.apiVersion !== undefined && config.kind !== undefined
    ? bodyToCore(config)
    : config
  if (isObject(converted) && !exists()) {
    // an apply that creates is a create: the strict rules hold (an apply that updates is checked as core/v1)
    const metadata = isObject(converted.metadata) ? converted.metadata : {}
    validateStrict({ ...converted, metadata: { ...metadata, name, namespace } }, undefined)
  }
  const result = apply(converted)
  return { object: fromCore(result.object as Obj) as KubeObject, created: result.created }
}
