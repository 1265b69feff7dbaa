import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Conversion from "../Conversion.js"
import { ConversionError } from "../Conversion.js"
import type * as Resource from "../Resource.js"
import { formatIssue } from "./resource.js"

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** A property of parsed JSON, own only: a key `__proto__` is data, never the prototype. */
const own = (o: Json, key: string): unknown => Object.hasOwn(o, key) ? o[key] : undefined

const put = (o: Json, key: string, value: unknown): void => {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
}

/** @internal */
export const annotationPrefix = "conversion.reconcile.dev/"

const reviewApiVersion = "apiextensions.k8s.io/v1"

// ---------------------------------------------------------------------------------------------------------------
// JSON values: equality, canonical text, paths
// ---------------------------------------------------------------------------------------------------------------

/** Deep equality of JSON values (`undefined` is an absent value; key order does not matter). */
const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const k of keys) if (!jsonEqual(own(a, k), own(b, k))) return false
    return true
  }
  return false
}

/** JSON text with sorted keys: the same value always gives the same annotation. */
const canonical = (u: unknown): string => {
  if (Array.isArray(u)) return `[${u.map((x) => canonical(x === undefined ? null : x)).join(",")}]`
  if (isRecord(u)) {
    const keys = Object.keys(u).filter((k) => u[k] !== undefined).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(u[k])}`).join(",")}}`
  }
  return JSON.stringify(u)
}

/** A JSON copy without `undefined` properties (what the wire would carry). */
const toJson = (u: unknown): unknown => u === undefined ? undefined : JSON.parse(JSON.stringify(u))

const getPath = (root: unknown, path: ReadonlyArray<string>): unknown => {
  let at = root
  for (const key of path) {
    if (!isRecord(at)) return undefined
    at = own(at, key)
  }
  return at
}

/** Sets (with `undefined`: deletes) the value at `path`, making missing objects; `false` if a non-object is there. */
const setPath = (root: Json, path: ReadonlyArray<string>, value: unknown): boolean => {
  let at: Json = root
  for (const key of path.slice(0, -1)) {
    const next = own(at, key)
    if (next === undefined) {
      if (value === undefined) return true
      const made: Json = {}
      put(at, key, made)
      at = made
    } else if (isRecord(next)) {
      at = next
    } else {
      return false
    }
  }
  const last = path[path.length - 1]!
  if (value === undefined) delete at[last]
  else put(at, last, value)
  return true
}

// ---------------------------------------------------------------------------------------------------------------
// What a spoke loses: the annotation
// ---------------------------------------------------------------------------------------------------------------

/**
 * One place where the hub's data and what the spoke's `toHub` rebuilds differ: the hub's value there (absent: the
 * hub had none) and the rebuilt one (absent: `toHub` gives none).
 */
interface Lost {
  readonly path: ReadonlyArray<string>
  readonly value?: unknown
  readonly rebuilt?: unknown
}

/** The places where `hub` and `rebuilt` differ: objects are compared key by key (sorted), anything else whole. */
const diff = (hub: unknown, rebuilt: unknown, path: Array<string> = [], out: Array<Lost> = []): Array<Lost> => {
  if (isRecord(hub) && isRecord(rebuilt)) {
    const keys = [...new Set([...Object.keys(hub), ...Object.keys(rebuilt)])].sort()
    for (const key of keys) diff(own(hub, key), own(rebuilt, key), [...path, key], out)
  } else if (!jsonEqual(hub, rebuilt)) {
    out.push({
      path,
      ...(hub === undefined ? {} : { value: hub }),
      ...(rebuilt === undefined ? {} : { rebuilt })
    })
  }
  return out
}

const isLost = (u: unknown): u is Lost =>
  isRecord(u) && Array.isArray(u.path) && u.path.length > 0 && u.path.every((k) => typeof k === "string")

const parseLost = (text: string): ReadonlyArray<Lost> | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return Array.isArray(parsed) && parsed.every(isLost) ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * Puts back what the spoke lost: at each place, the hub's value, unless the spoke now rebuilds something else there
 * than it did when the annotation was written (the spoke's object was edited there: the edit wins).
 */
const restore = (rebuilt: Json, lost: ReadonlyArray<Lost>): Json => {
  for (const l of lost) {
    if (jsonEqual(getPath(rebuilt, l.path), l.rebuilt)) setPath(rebuilt, l.path, toJson(l.value))
  }
  return rebuilt
}

// ---------------------------------------------------------------------------------------------------------------
// One object
// ---------------------------------------------------------------------------------------------------------------

interface Version {
  readonly resource: Resource.AnyCustomResource
  readonly toHub?: (spoke: any) => { readonly spec: unknown; readonly status?: unknown }
  readonly fromHub?: (hub: any) => { readonly spec: unknown; readonly status?: unknown }
}

const objectName = (u: Json): string => {
  const meta = isRecord(u.metadata) ? u.metadata : {}
  const name = typeof meta.name === "string" ? meta.name : "<unnamed>"
  return typeof meta.namespace === "string" && meta.namespace !== "" ? `${meta.namespace}/${name}` : name
}

const messageOf = (e: unknown): string => e instanceof Error ? e.message : String(e)

const fail = (reason: ConversionError["reason"], message: string) =>
  Result.fail(new ConversionError({ reason, message }))

/** Decodes the `spec` and `status` of a wire object (encoded JSON) with a version's Schemas. */
const decodeContent = (
  resource: Resource.AnyCustomResource,
  obj: Json,
  content: Json,
  where: string
): Result.Result<Json, ConversionError> => {
  const spec = Schema.decodeUnknownResult(resource.spec as Schema.Codec<unknown, unknown>)(content.spec)
  if (Result.isFailure(spec)) {
    return fail("Undecodable", `${where}: spec: ${formatIssue(spec.failure)}`)
  }
  const { spec: _spec, status: _status, ...rest } = obj
  const decoded: Json = { ...rest, apiVersion: resource.apiVersion, spec: spec.success }
  if (content.status !== undefined) {
    if (resource.status === undefined) {
      return fail("Undecodable", `${where}: status: ${resource.apiVersion} ${resource.kind} has no status`)
    }
    const status = Schema.decodeUnknownResult(resource.status as Schema.Codec<unknown, unknown>)(content.status)
    if (Result.isFailure(status)) {
      return fail("Undecodable", `${where}: status: ${formatIssue(status.failure)}`)
    }
    decoded.status = status.success
  }
  return Result.succeed(decoded)
}

/** Encodes the content a conversion function returned with a version's Schemas, as JSON. */
const encodeContent = (
  resource: Resource.AnyCustomResource,
  content: { readonly spec: unknown; readonly status?: unknown },
  where: string
): Result.Result<Json, ConversionError> => {
  if (!isRecord(content)) {
    return fail("Unconvertible", `${where}: the conversion to ${resource.apiVersion} returned no { spec, status }`)
  }
  const spec = Schema.encodeUnknownResult(resource.spec as Schema.Codec<unknown, unknown>)(content.spec)
  if (Result.isFailure(spec)) {
    return fail("Unconvertible", `${where}: the ${resource.apiVersion} spec it made: ${formatIssue(spec.failure)}`)
  }
  const out: Json = { spec: toJson(spec.success) }
  if (content.status !== undefined && resource.status !== undefined) {
    const status = Schema.encodeUnknownResult(resource.status as Schema.Codec<unknown, unknown>)(content.status)
    if (Result.isFailure(status)) {
      return fail(
        "Unconvertible",
        `${where}: the ${resource.apiVersion} status it made: ${formatIssue(status.failure)}`
      )
    }
    out.status = toJson(status.success)
  }
  return Result.succeed(out)
}

const call = <A>(f: () => A, where: string, what: string): Result.Result<A, ConversionError> => {
  try {
    return Result.succeed(f())
  } catch (e) {
    return fail("Unconvertible", `${where}: ${what} threw: ${messageOf(e)}`)
  }
}

/** The wire content (`spec`, `status`) of an object. */
const contentOf = (obj: Json): Json => ({
  spec: obj.spec,
  ...(obj.status === undefined ? {} : { status: obj.status })
})

/** `metadata` with the annotation `key` set to `value` (removed with `undefined`); the object's own when unchanged. */
const withAnnotation = (metadata: unknown, key: string, value: string | undefined): unknown => {
  const meta = isRecord(metadata) ? metadata : undefined
  const annotations = meta !== undefined && isRecord(meta.annotations) ? meta.annotations : undefined
  if (value === undefined) {
    if (annotations === undefined || !(key in annotations)) return metadata
    const { [key]: _removed, ...rest } = annotations
    const { annotations: _annotations, ...others } = meta!
    return Object.keys(rest).length === 0 ? others : { ...others, annotations: rest }
  }
  if (annotations?.[key] === value) return metadata
  return { ...meta, annotations: { ...annotations, [key]: value } }
}

/** @internal */
export interface Converter {
  readonly versions: ReadonlyMap<string, Version>
  readonly hub: Version
  readonly annotation: string
  readonly convert: (object: unknown, desiredAPIVersion: string, where?: string) => Result.Result<Json, ConversionError>
}

/** @internal */
export const converter = (hub: Resource.AnyCustomResource, spokes: ReadonlyArray<Version>): Converter => {
  const hubVersion: Version = { resource: hub }
  const versions = new Map<string, Version>([[hub.apiVersion, hubVersion]])
  for (const spoke of spokes) {
    const r = spoke.resource
    if (r.group !== hub.group || r.kind !== hub.kind || r.plural !== hub.plural) {
      throw new Error(
        `Conversion.webhook: spoke ${r.apiVersion} ${r.kind} (${r.plural}) is not the hub's kind ` +
          `${hub.apiVersion} ${hub.kind} (${hub.plural})`
      )
    }
    if (versions.has(r.apiVersion)) {
      throw new Error(`Conversion.webhook: version ${r.version} of ${hub.kind} is listed twice (hub or spokes)`)
    }
    versions.set(r.apiVersion, spoke)
  }
  const annotation = `${annotationPrefix}${hub.version}`
  const known = () => [...versions.keys()].join(", ")

  /** The hub's wire content of an object of `version`, and its metadata without the annotation. */
  const toHubWire = (version: Version, obj: Json, where: string): Result.Result<Json, ConversionError> => {
    if (version === hubVersion) return Result.succeed(contentOf(obj))
    return Result.flatMap(decodeContent(version.resource, obj, contentOf(obj), where), (decoded) =>
      Result.flatMap(
        call(() => version.toHub!(decoded), where, `${version.resource.version} toHub`),
        (content) =>
          Result.flatMap(encodeContent(hub, content, where), (rebuilt) => {
            const meta = isRecord(obj.metadata) ? obj.metadata : {}
            const text = isRecord(meta.annotations) ? meta.annotations[annotation] : undefined
            if (text === undefined) return Result.succeed(rebuilt)
            const lost = typeof text === "string" ? parseLost(text) : undefined
            if (lost === undefined) {
              return fail(
                "Undecodable",
                `${where}: metadata.annotations[${annotation}]: not what a conversion to ${version.resource.version} ` +
                  "wrote (a JSON array of { path, value, rebuilt })"
              )
            }
            return Result.succeed(restore(rebuilt, lost))
          })
      ))
  }

  const convert = (
    object: unknown,
    desiredAPIVersion: string,
    where = "object"
  ): Result.Result<Json, ConversionError> => {
    if (!isRecord(object)) {
      return fail(
        "Undecodable",
        `${where}: expected a JSON object, got ${Array.isArray(object) ? "an array" : typeof object}`
      )
    }
    where = `${where} (${objectName(object)})`
    if (object.kind !== hub.kind) {
      return fail("WrongKind", `${where}: kind: expected ${hub.kind}, got ${JSON.stringify(object.kind)}`)
    }
    const from = typeof object.apiVersion === "string" ? versions.get(object.apiVersion) : undefined
    if (from === undefined) {
      return fail(
        "UnknownVersion",
        `${where}: apiVersion: ${JSON.stringify(object.apiVersion)} is not a version of ${hub.kind} this webhook ` +
          `converts (${known()})`
      )
    }
    if (object.metadata !== undefined && !isRecord(object.metadata)) {
      return fail("Undecodable", `${where}: metadata: expected an object`)
    }
    const to = versions.get(desiredAPIVersion)
    if (to === undefined) {
      return fail(
        "UnknownVersion",
        `desiredAPIVersion: ${JSON.stringify(desiredAPIVersion)} is not a version of ${hub.kind} this webhook ` +
          `converts (${known()})`
      )
    }
    if (from === to) return Result.succeed(object)
    const { spec: _spec, status: _status, ...rest } = object
    // the hub's object never carries the annotation (nor does its `fromHub` see it)
    const hubMeta = withAnnotation(object.metadata, annotation, undefined)
    const hubBase = hubMeta === undefined ? rest : { ...rest, metadata: hubMeta }
    return Result.flatMap(
      toHubWire(from, object, where),
      (hubWire) =>
        Result.flatMap(
          decodeContent(hub, hubBase, hubWire, from === hubVersion ? where : `${where} as ${hub.apiVersion}`),
          (hubObject) => {
            if (to === hubVersion) return Result.succeed({ ...hubBase, apiVersion: desiredAPIVersion, ...hubWire })
            const spoke = to.resource
            return Result.flatMap(
              call(() => to.fromHub!(hubObject), where, `${spoke.version} fromHub`),
              (content) =>
                Result.flatMap(
                  encodeContent(spoke, content, where),
                  (spokeWire) =>
                    Result.flatMap(
                      decodeContent(spoke, object, spokeWire, `${where} as ${spoke.apiVersion}`),
                      (decoded) =>
                        Result.flatMap(
                          call(
                            () => to.toHub!(decoded),
                            where,
                            `${spoke.version} toHub`
                          ),
                          (back) =>
                            Result.map(encodeContent(hub, back, where), (rebuilt) => {
                              const lost = diff(hubWire, rebuilt)
                              const meta = withAnnotation(
                                object.metadata,
                                annotation,
                                lost.length === 0 ? undefined : canonical(lost)
                              )
                              return {
                                ...rest,
                                ...(meta === undefined ? {} : { metadata: meta }),
                                apiVersion: desiredAPIVersion,
                                ...spokeWire
                              }
                            })
                        )
                    )
                )
            )
          }
        )
    )
  }

  return { versions, hub: hubVersion, annotation, convert }
}

// ---------------------------------------------------------------------------------------------------------------
// The ConversionReview
// ---------------------------------------------------------------------------------------------------------------

const answer = (uid: string, result: Result.Result<Array<unknown>, string>): Conversion.ConversionReview => ({
  apiVersion: reviewApiVersion,
  kind: "ConversionReview",
  response: Result.isSuccess(result)
    ? { uid, convertedObjects: result.success, result: { status: "Success" } }
    : { uid, convertedObjects: [], result: { status: "Failure", message: result.failure } }
})

const describe = (u: unknown): string =>
  u === undefined ? "nothing" : u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "string" ?
    JSON.stringify(u) :
    typeof u

/** @internal */
export const review = (c: Converter, body: unknown): Conversion.ConversionReview => {
  const uid = isRecord(body) && isRecord(body.request) && typeof body.request.uid === "string" ? body.request.uid : ""
  const failure = (message: string) => answer(uid, Result.fail(message))
  try {
    if (!isRecord(body)) return failure(`expected a ConversionReview (a JSON object), got ${describe(body)}`)
    if (body.apiVersion !== reviewApiVersion || body.kind !== "ConversionReview") {
      return failure(
        `expected apiVersion ${reviewApiVersion} and kind ConversionReview, got apiVersion ` +
          `${describe(body.apiVersion)} and kind ${describe(body.kind)}`
      )
    }
    const request = body.request
    if (!isRecord(request)) return failure(`request: expected an object, got ${describe(request)}`)
    if (typeof request.uid !== "string" || request.uid === "") {
      return failure(`request.uid: expected a non-empty string, got ${describe(request.uid)}`)
    }
    if (typeof request.desiredAPIVersion !== "string") {
      return failure(`request.desiredAPIVersion: expected a string, got ${describe(request.desiredAPIVersion)}`)
    }
    const desired = request.desiredAPIVersion
    if (!c.versions.has(desired)) {
      return failure(
        `request.desiredAPIVersion: ${JSON.stringify(desired)} is not a version of ${c.hub.resource.kind} this ` +
          `webhook converts (${[...c.versions.keys()].join(", ")})`
      )
    }
    if (!Array.isArray(request.objects)) {
      return failure(`request.objects: expected an array, got ${describe(request.objects)}`)
    }
    const converted: Array<unknown> = []
    for (const [i, object] of request.objects.entries()) {
      const result = c.convert(object, desired, `request.objects[${i}]`)
      if (Result.isFailure(result)) return failure(result.failure.message)
      converted.push(result.success)
    }
    return answer(uid, Result.succeed(converted))
  } catch (e) {
    // a conversion function's throw is caught where it is called: this is a bug here, still answered
    return failure(`the conversion webhook failed: ${messageOf(e)}`)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The CRD's conversion stanza
// ---------------------------------------------------------------------------------------------------------------

/** @internal */
export const routePath = (group: string, kind: string): string =>
  `/convert-${group.replaceAll(".", "-")}-${kind.toLowerCase()}`

/** @internal */
export const stanza = (webhook: Conversion.Webhook, config: Conversion.ClientConfig): Conversion.CrdConversion => {
  const caBundle = config.caBundle === undefined ? {} : { caBundle: Buffer.from(config.caBundle).toString("base64") }
  const clientConfig = "url" in config
    ? { url: `${config.url.replace(/\/+$/, "")}${webhook.route.path}`, ...caBundle }
    : {
      service: {
        name: config.service.name,
        namespace: config.service.namespace,
        path: webhook.route.path,
        port: config.service.port ?? 443
      },
      ...caBundle
    }
  return { strategy: "Webhook", webhook: { conversionReviewVersions: ["v1"], clientConfig } }
}

/** @internal */
export const withConversion = (
  crds: ReadonlyArray<Resource.CustomResourceDefinition>,
  webhooks: ReadonlyArray<Conversion.Webhook>,
  config: Conversion.ClientConfig
): Result.Result<Array<Resource.CustomResourceDefinition>, ConversionError> => {
  const byCrd = new Map<string, Conversion.Webhook>()
  for (const w of webhooks) {
    if (byCrd.has(w.crd)) return fail("CrdMismatch", `CRD ${w.crd}: two conversion webhooks for one kind`)
    byCrd.set(w.crd, w)
  }
  const out: Array<Resource.CustomResourceDefinition> = []
  for (const crd of crds) {
    const name = crd.metadata?.name ?? ""
    const w = byCrd.get(name)
    if (w === undefined) {
      out.push(crd)
      continue
    }
    byCrd.delete(name)
    const served = (crd.spec.versions ?? []).map((v) => v.name)
    const unknown = served.filter((v) => !w.versions.includes(v))
    if (unknown.length > 0) {
      return fail(
        "CrdMismatch",
        `CRD ${name}: version ${unknown.join(", ")} has no conversion (the webhook converts ${w.versions.join(", ")})`
      )
    }
    out.push({ ...crd, spec: { ...crd.spec, conversion: stanza(w, config) as never } })
  }
  const missing = [...byCrd.keys()]
  if (missing.length > 0) {
    return fail("CrdMismatch", `no CRD ${missing.join(", ")} among the CRDs for its conversion webhook`)
  }
  return Result.succeed(out)
}
