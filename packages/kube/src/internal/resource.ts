import type { ObjectMeta } from "@reconcile/core"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaIssue from "effect/SchemaIssue"
import * as KubeError from "../KubeError.js"
import type * as Resource from "../Resource.js"
import * as openapi from "./openapi.js"
import { metadataOf } from "./undecodable.js"

/** @internal */
export const TypeId: Resource.TypeId = Symbol.for("@reconcile/kube/Resource") as Resource.TypeId

const CustomTypeId = Symbol.for("@reconcile/kube/Resource/Custom")

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export const rawText = (u: unknown, sensitive: boolean, kind: string): string => {
  if (sensitive) return `<redacted: ${kind}>`
  if (typeof u === "string") return u
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

const objectName = (u: Json): string => {
  const meta = isRecord(u.metadata) ? u.metadata : {}
  const name = typeof meta.name === "string" ? meta.name : "<unnamed>"
  return typeof meta.namespace === "string" && meta.namespace !== "" ? `${meta.namespace}/${name}` : name
}

interface Descriptor {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly scope: Resource.Scope
  readonly sensitive?: boolean | undefined
}

// A lone UTF-16 surrogate is no text: encodeURIComponent throws on it. It becomes U+FFFD (as
// String.prototype.toWellFormed does), so a path is always built and the server answers (404), never a throw.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const encodeSegment = (segment: string): string => encodeURIComponent(segment.replace(loneSurrogate, "\uFFFD"))

const pathBuilder = (d: Descriptor) => {
  const prefix = d.group === "" ? `/api/${d.version}` : `/apis/${d.group}/${d.version}`
  return (options?: Resource.PathOptions): string => {
    let path = prefix
    if (d.scope === "Namespaced" && options?.namespace !== undefined && options.namespace !== "") {
      path += `/namespaces/${encodeSegment(options.namespace)}`
    }
    path += `/${d.plural}`
    if (options?.name !== undefined) path += `/${encodeSegment(options.name)}`
    if (options?.subresource !== undefined) path += `/${options.subresource}`
    return path
  }
}

const apiVersionOf = (d: Descriptor) => d.group === "" ? d.version : `${d.group}/${d.version}`

/** A decode failure of `u`, with the object's metadata when it has a readable one (see `Undecodable`). */
const decodeError = (d: Descriptor, apiVersion: string, u: unknown, issue: string): KubeError.Decode => {
  const sensitive = d.sensitive === true
  const metadata = metadataOf(u, sensitive)
  return new KubeError.Decode({
    kind: d.kind,
    ...(metadata === undefined ? {} : { apiVersion, metadata }),
    raw: rawText(u, sensitive, d.kind),
    issue
  })
}

/** A decoder given by the user: its failures get the object's metadata too. */
const withMetadata =
  <A>(d: Descriptor, apiVersion: string, decode: (u: unknown) => Effect.Effect<A, KubeError.Decode>) =>
  (u: unknown): Effect.Effect<A, KubeError.Decode> =>
    Effect.mapError(decode(u), (e) => {
      if (e.metadata !== undefined) return e
      const metadata = metadataOf(u, d.sensitive === true)
      return metadata === undefined
        ? e
        : new KubeError.Decode({ ...e, apiVersion: e.apiVersion ?? apiVersion, metadata })
    })

/**
 * The structural checks every object gets: a JSON object, of this kind and
 * apiVersion when it says so, with an object `metadata`. Missing
 * `apiVersion`/`kind` (list items) are filled in, in place.
 */
const checkObject = (d: Descriptor, apiVersion: string) => (u: unknown): Result.Result<Json, KubeError.Decode> => {
  if (!isRecord(u)) {
    return Result.fail(
      decodeError(d, apiVersion, u, `expected a JSON object, got ${Array.isArray(u) ? "an array" : typeof u}`)
    )
  }
  if (u.kind !== undefined && u.kind !== d.kind) {
    return Result.fail(decodeError(d, apiVersion, u, `expected kind ${d.kind}, got ${String(u.kind)}`))
  }
  if (u.apiVersion !== undefined && u.apiVersion !== apiVersion) {
    return Result.fail(decodeError(d, apiVersion, u, `expected apiVersion ${apiVersion}, got ${String(u.apiVersion)}`))
  }
  if (u.metadata !== undefined && !isRecord(u.metadata)) {
    return Result.fail(decodeError(d, apiVersion, u, "metadata is not an object"))
  }
  if (u.kind === undefined) u.kind = d.kind
  if (u.apiVersion === undefined) u.apiVersion = apiVersion
  return Result.succeed(u)
}

const base = (d: Descriptor) => ({
  [TypeId]: TypeId as Resource.TypeId,
  group: d.group,
  version: d.version,
  kind: d.kind,
  plural: d.plural,
  scope: d.scope,
  apiVersion: apiVersionOf(d),
  sensitive: d.sensitive === true,
  path: pathBuilder(d)
})

/**
 * The synchronous decoder behind a resource's `decode`, for the resources made here (built-in kinds and
 * `Resource.custom`): the list and watch paths decode each object without an Effect. Keyed by the `decode`
 * function itself, so a resource that replaces `decode` (a spread with another one) has none.
 */
const syncDecoders = new WeakMap<object, (u: unknown) => Result.Result<any, KubeError.Decode>>()

/**
 * Makes `decode` a resource's `decode` whose synchronous decoder is `sync` (for resources made in other modules,
 * e.g. metadata-only ones). Returns `decode`.
 *
 * @internal
 */
export const withSyncDecoder = <D extends (u: unknown) => Effect.Effect<any, KubeError.Decode>>(
  decode: D,
  sync: (u: unknown) => Result.Result<any, KubeError.Decode>
): D => {
  syncDecoders.set(decode, sync)
  return decode
}

/** @internal */
export const decodeSync = <A>(
  resource: { readonly decode: (u: unknown) => Effect.Effect<A, KubeError.Decode> }
): ((u: unknown) => Result.Result<A, KubeError.Decode>) | undefined => syncDecoders.get(resource.decode)

/** @internal */
export const make = <A extends ObjectMeta.HasMetadata>(
  options: Descriptor & {
    readonly decode?: ((u: unknown) => Effect.Effect<A, KubeError.Decode>) | undefined
    readonly encode?: ((a: A) => Effect.Effect<unknown, KubeError.Encode>) | undefined
  }
): Resource.Resource<A> => {
  const check = checkObject(options, apiVersionOf(options)) as (u: unknown) => Result.Result<A, KubeError.Decode>
  const decode = options.decode === undefined
    ? (u: unknown) => Effect.fromResult(check(u))
    : withMetadata(options, apiVersionOf(options), options.decode)
  if (options.decode === undefined) syncDecoders.set(decode, check)
  return {
    ...base(options),
    decode,
    encode: options.encode ?? Effect.succeed
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * `path: message` per issue, as effect 3's `ArrayFormatter` lines were joined.
 *
 * @internal
 */
export const formatIssue = (error: Schema.SchemaError): string =>
  formatter(error.issue).issues
    .map((i) => {
      const path = (i.path ?? []).map((p) => typeof p === "object" ? String(p.key) : String(p))
      return `${path.length > 0 ? `${path.join(".")}: ` : ""}${i.message}`
    })
    .join("; ")

/** @internal */
export const custom = <Spec, SpecEncoded, Status = never, StatusEncoded = never>(
  options: Resource.CustomOptions<Spec, SpecEncoded, Status, StatusEncoded>
): Resource.CustomResource<Spec, SpecEncoded, Status, StatusEncoded> => {
  const d: Descriptor = options
  const apiVersion = apiVersionOf(d)
  const check = checkObject(d, apiVersion)
  // Compiled decoders (effect's JIT compiler: code generated once per Schema instead of the AST interpreted per
  // object; half the time per WebApp, see docs/benchmarks.md); where code generation is not allowed (a CSP without
  // 'unsafe-eval'), effect falls back to interpreting. Enabled before the decoders below capture theirs.
  SchemaJITCompiler.enable(options.spec.ast)
  if (options.status !== undefined) SchemaJITCompiler.enable(options.status.ast)
  const decodeSpec = Schema.decodeUnknownResult(options.spec)
  const encodeSpec = Schema.encodeResult(options.spec)
  const statusSchema = options.status
  const decodeStatus = statusSchema === undefined ? undefined : Schema.decodeUnknownResult(statusSchema)
  const encodeStatus = statusSchema === undefined ? undefined : Schema.encodeResult(statusSchema)

  const decodeResult = (u: unknown): Result.Result<Resource.CustomObject<Spec, Status>, KubeError.Decode> =>
    Result.flatMap(check(u), (obj) => {
      const fail = (field: string, error: Schema.SchemaError) =>
        Result.fail(decodeError(d, apiVersion, u, `${objectName(obj)}: ${field}: ${formatIssue(error)}`))
      const spec = decodeSpec(obj.spec)
      if (Result.isFailure(spec)) return fail("spec", spec.failure)
      const { status: rawStatus, ...rest } = obj
      if (decodeStatus === undefined || rawStatus === undefined) {
        return Result.succeed({ ...rest, spec: spec.success } as unknown as Resource.CustomObject<Spec, Status>)
      }
      const status = decodeStatus(rawStatus)
      if (Result.isFailure(status)) return fail("status", status.failure)
      return Result.succeed(
        { ...rest, spec: spec.success, status: status.success } as unknown as Resource.CustomObject<Spec, Status>
      )
    })

  const encodeResult = (a: Resource.CustomObject<Spec, Status>): Result.Result<unknown, KubeError.Encode> => {
    const spec = encodeSpec(a.spec)
    if (Result.isFailure(spec)) {
      return Result.fail(new KubeError.Encode({ kind: d.kind, issue: formatIssue(spec.failure) }))
    }
    const { status: rawStatus, ...rest } = a
    if (encodeStatus === undefined || rawStatus === undefined) {
      return Result.succeed({ ...rest, apiVersion, kind: d.kind, spec: spec.success })
    }
    const status = encodeStatus(rawStatus)
    if (Result.isFailure(status)) {
      return Result.fail(new KubeError.Encode({ kind: d.kind, issue: `status: ${formatIssue(status.failure)}` }))
    }
    return Result.succeed({ ...rest, apiVersion, kind: d.kind, spec: spec.success, status: status.success })
  }

  const decode = (u: unknown) => Effect.fromResult(decodeResult(u))
  syncDecoders.set(decode, decodeResult)
  const encode = (a: Resource.CustomObject<Spec, Status>) => Effect.fromResult(encodeResult(a))

  const resource: Resource.CustomResource<Spec, SpecEncoded, Status, StatusEncoded> = {
    ...base(d),
    scope: options.scope,
    singular: options.singular ?? options.kind.toLowerCase(),
    shortNames: options.shortNames ?? [],
    categories: options.categories ?? [],
    spec: options.spec,
    status: options.status,
    printerColumns: withAge(options.printerColumns),
    scale: options.scale,
    storage: options.storage,
    decode,
    encode
  }
  return Object.assign(resource, { [CustomTypeId]: CustomTypeId })
}

/** @internal */
export const isCustom = (u: unknown): u is Resource.CustomResource<unknown, unknown, unknown, unknown> =>
  Predicate.hasProperty(u, CustomTypeId)

/** @internal */
export const openApiSchema = (schema: Schema.Top): Json => openapi.openApiSchema(schema)

const ageColumn: Resource.PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }

/** Explicit columns with `Age` appended unless one shows the creation time (Kubernetes adds it only without any). */
const withAge = (columns: ReadonlyArray<Resource.PrinterColumn> | undefined): ReadonlyArray<Resource.PrinterColumn> =>
  columns === undefined || columns.length === 0 ?
    [] :
    columns.some((c) => c.jsonPath.trim() === ".metadata.creationTimestamp") ?
    columns :
    [...columns, ageColumn]

const printerColumn = (c: Resource.PrinterColumn): Json => ({
  name: c.name,
  type: c.type,
  jsonPath: c.jsonPath,
  ...(c.description === undefined ? {} : { description: c.description }),
  ...(c.format === undefined ? {} : { format: c.format }),
  ...(c.priority === undefined ? {} : { priority: c.priority })
})

/** One `spec.versions[]` entry of a custom resource's CRD. */
const crdVersion = (resource: Resource.AnyCustomResource, storage: boolean): Json => {
  const properties: Json = {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: openApiSchema(resource.spec)
  }
  if (resource.status !== undefined) properties.status = openApiSchema(resource.status)
  const version: Json = {
    name: resource.version,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: "object", properties, required: ["spec"] } }
  }
  const subresources: Json = {}
  if (resource.status !== undefined) subresources.status = {}
  if (resource.scale !== undefined) {
    subresources.scale = {
      specReplicasPath: resource.scale.specReplicasPath,
      statusReplicasPath: resource.scale.statusReplicasPath,
      ...(resource.scale.labelSelectorPath === undefined ? {} : { labelSelectorPath: resource.scale.labelSelectorPath })
    }
  }
  if (Object.keys(subresources).length > 0) version.subresources = subresources
  // `printerColumns` is absent on descriptors made before it existed (or by hand): read it defensively
  const columns = resource.printerColumns ?? []
  if (columns.length > 0) version.additionalPrinterColumns = columns.map(printerColumn)
  return version
}

const crdNames = (resource: Resource.AnyCustomResource): Json => {
  const names: Json = {
    kind: resource.kind,
    listKind: `${resource.kind}List`,
    plural: resource.plural,
    singular: resource.singular
  }
  if (resource.shortNames.length > 0) names.shortNames = [...resource.shortNames]
  if (resource.categories.length > 0) names.categories = [...resource.categories]
  return names
}

const crd = (
  resource: Resource.AnyCustomResource,
  versions: ReadonlyArray<Json>
): Resource.CustomResourceDefinition =>
  ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${resource.plural}.${resource.group}` },
    spec: { group: resource.group, scope: resource.scope, names: crdNames(resource), versions: [...versions] }
  }) as unknown as Resource.CustomResourceDefinition

/** @internal */
export const crdManifest = <Spec, SpecEncoded, Status, StatusEncoded>(
  resource: Resource.CustomResource<Spec, SpecEncoded, Status, StatusEncoded>
): Resource.CustomResourceDefinition => crd(resource, [crdVersion(resource, true)])

/** What makes custom resource descriptors of one kind unable to share a CRD. */
export interface CrdConflictFields {
  readonly crd: string
  readonly message: string
}

/** Kubernetes orders served versions by this priority (GA > beta > alpha, higher numbers first, then by name). */
const versionRank = (v: string): readonly [number, number, number, string] => {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
  if (m === null) return [3, 0, 0, v]
  const level = m[2] === undefined ? 0 : m[2] === "beta" ? 1 : 2
  return [level, -Number(m[1]), -Number(m[3] ?? 0), v]
}

const compareVersions = (a: string, b: string): number => {
  const x = versionRank(a)
  const y = versionRank(b)
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0
}

/** @internal */
export const crdManifests = (
  resources: ReadonlyArray<Resource.AnyCustomResource>
): Result.Result<Array<Resource.CustomResourceDefinition>, CrdConflictFields> => {
  const groups = new Map<string, Array<Resource.AnyCustomResource>>()
  for (const r of resources) {
    const key = `${r.plural}.${r.group}`
    const list = groups.get(key)
    if (list === undefined) groups.set(key, [r])
    else if (!list.includes(r)) list.push(r)
  }
  const out: Array<Resource.CustomResourceDefinition> = []
  for (const [name, list] of [...groups].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    const fail = (message: string) => Result.fail({ crd: name, message: `CRD ${name}: ${message}` })
    const first = list[0]!
    const names = JSON.stringify(crdNames(first))
    for (const r of list.slice(1)) {
      if (r.scope !== first.scope) {
        return fail(`version ${r.version} is ${r.scope} but version ${first.version} is ${first.scope}`)
      }
      if (JSON.stringify(crdNames(r)) !== names) {
        return fail(
          `versions ${first.version} and ${r.version} disagree on names (kind, singular, shortNames, categories): ` +
            `${names} vs ${JSON.stringify(crdNames(r))}`
        )
      }
    }
    const byVersion = new Map<string, Resource.AnyCustomResource>()
    for (const r of list) {
      if (byVersion.has(r.version)) {
        return fail(`two different descriptors for version ${r.version}: list each version once`)
      }
      byVersion.set(r.version, r)
    }
    const stored = list.filter((r) => r.storage === true)
    if (list.length > 1 && stored.length !== 1) {
      return fail(
        stored.length === 0
          ? `several versions (${list.map((r) => r.version).join(", ")}) and none is the storage version: ` +
            "set `storage: true` on one of them"
          : `${stored.length} versions (${stored.map((r) => r.version).join(", ")}) say \`storage: true\`: ` +
            "keep it on one"
      )
    }
    const storage = list.length === 1 ? first : stored[0]!
    const versions = [...list].sort((a, b) => compareVersions(a.version, b.version))
    out.push(crd(storage, versions.map((r) => crdVersion(r, r === storage))))
  }
  return Result.succeed(out)
}
