/**
 * OpenAPI as kube-apiserver serves it: `/openapi/v2` (JSON, or gnostic protobuf when asked first) and `/openapi/v3`
 * (a root listing one document per group version, each at `?hash=<hash>`, and the documents of the discovery paths:
 * `api`, `apis`, `apis/<built-in group>`, `version`), with object schemas for every kind served: the built-in ones
 * derived from `@kubernetes/client-node`'s models, custom resources from their CRD's `openAPIV3Schema` (documents
 * and hashes change when CRDs do). Each PATCH/PUT operation declares the `fieldValidation` parameter, which kubectl
 * checks before leaving validation to the server.
 *
 * Headers as kube-openapi's handlers write them: the root is served as a file whose type Go sniffs (`text/plain`,
 * whatever the Accept header) and never cached; a document fetched by its current hash is `public, immutable` for a
 * year, without it `no-cache, private`; an unknown document is an empty 404.
 */
import { createHash } from "node:crypto"
import type { ResourceType } from "../../ResourceType.js"
import * as Models from "../builtinModels.js"
import { BuiltinSchemas, crdDefinitions, PATCH, type Schema, v3Scalars } from "../openapi/definitions.js"
import { encodeDocument } from "../openapi/proto.js"
import { isBuiltinGroup } from "../resourceType.js"
import { version as serverVersion } from "./discovery.js"

const gvPath = (
  group: string,
  version: string
): string => (group === "" ? `api/${version}` : `apis/${group}/${version}`)

/** The `info` of kube-apiserver's documents (`<major>.<minor>`), and of apiextensions-apiserver's (a CRD group's). */
const info = { title: "Kubernetes", version: `${serverVersion.major}.${serverVersion.minor}` }
const crdInfo = { title: "Kubernetes CRD Swagger", version: "v0.1.0" }

const NO_CACHE = "no-cache, private"

/**
 * The media type of the protobuf OpenAPI v2 document. kubectl asks for the older spelling with `@v1.0`, which Go's
 * mime parser rejects as a Content-Type: kube-openapi answers both with this one.
 */
export const V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

/**
 * The first acceptable media type of an Accept header (ordered by `q`, then position; empty means `*\/*`) among
 * `offers` (subtypes of `application/`), or `undefined` (406).
 */
export const negotiate = <A extends string>(
  accept: string | undefined,
  offers: ReadonlyArray<readonly [subtype: string, result: A]>
): A | undefined => {
  const clauses = (accept === undefined || accept.trim() === "" ? "*/*" : accept).split(",").map((part, i) => {
    const [range, ...params] = part.trim().split(";").map((x) => x.trim())
    const q = params.find((p) => p.startsWith("q="))
    const [type, subtype] = (range ?? "").split("/")
    return { type: type ?? "", subtype: subtype ?? "", q: q === undefined ? 1 : Number(q.slice(2)), i }
  }).filter((c) => c.q > 0).sort((a, b) => b.q - a.q || a.i - b.i)
  for (const c of clauses) {
    if (c.type !== "application" && c.type !== "*") continue
    for (const [subtype, result] of offers) if (c.subtype === subtype || c.subtype === "*") return result
  }
  return undefined
}

let builtinSchemas: BuiltinSchemas | undefined

/** The built-in schemas (client-node's models, loaded once); without client-node, only CRDs get schemas. */
const loadBuiltins = (): BuiltinSchemas => {
  if (builtinSchemas === undefined) {
    let models: Models.Models
    try {
      models = Models.load()
    } catch {
      models = { get: () => undefined, apiModels: () => [] }
    }
    builtinSchemas = new BuiltinSchemas(models)
  }
  return builtinSchemas
}

/** The CRD serving a resource type, if it is a custom resource. */
const crdOf = (crds: ReadonlyArray<Schema>, rt: ResourceType): Schema | undefined =>
  crds.find((c) => c.spec?.group === rt.group && c.spec?.names?.plural === rt.plural)

/** Definitions of the given kinds and everything they refer to. */
const definitions = (
  builtin: BuiltinSchemas,
  types: ReadonlyArray<ResourceType>,
  crds: ReadonlyArray<Schema>
): Map<string, Schema> => {
  const out = new Map<string, Schema>()
  builtin.common(out)
  for (const rt of types) {
    const crd = crdOf(crds, rt)
    if (crd !== undefined) crdDefinitions(crd, rt.version, builtin, out)
    else builtin.kind(rt, out)
  }
  // The `/scale` subresources (Deployments, CRDs declaring one) read and write autoscaling/v1 Scale.
  if (types.some((t) => t.scale !== undefined)) builtin.scale(out)
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** Rewrites references for v3: `#/components/schemas/…`, and a reference with siblings as `allOf: [{$ref}]`. */
const toV3 = (s: unknown): unknown => {
  if (Array.isArray(s)) return s.map(toV3)
  if (s === null || typeof s !== "object") return s
  const o = s as Schema
  const out: Schema = {}
  for (const [k, v] of Object.entries(o)) {
    if (k === "$ref") continue
    out[k] = k === "properties" ?
      Object.fromEntries(Object.entries(v as Schema).map(([p, c]) => [p, toV3(c)])) :
      k === "items" || k === "additionalProperties" || k === "allOf" || k === "anyOf" || k === "oneOf" || k === "not"
      ? toV3(v)
      : v
  }
  if (typeof o.$ref !== "string") return out
  const ref = { $ref: `#/components/schemas/${o.$ref}` }
  return Object.keys(out).length === 0 ? ref : { ...out, allOf: [ref] }
}

/**
 * Rewrites a schema for v2 (`#/definitions/…`) and for what kubectl's v2 reader accepts (as the apiextensions server
 * publishes CRD schemas in v2): int-or-string and nullable values become untyped, objects preserving unknown
 * fields lose their properties (any field is then accepted), arrays without items become untyped, and
 * `allOf`/`anyOf`/`oneOf`/`not` are dropped.
 */
const toV2 = (s: unknown): unknown => {
  if (s === null || typeof s !== "object" || Array.isArray(s)) return s
  const o = s as Schema
  if (typeof o.$ref === "string") {
    return o.description === undefined
      ? { $ref: `#/definitions/${o.$ref}` }
      : { $ref: `#/definitions/${o.$ref}`, description: o.description }
  }
  const out: Schema = {}
  for (const [k, v] of Object.entries(o)) {
    if (k === "allOf" || k === "anyOf" || k === "oneOf" || k === "not" || k === "nullable") continue
    out[k] = k === "properties"
      ? Object.fromEntries(Object.entries(v as Schema).map(([p, c]) => [p, toV2(c)]))
      : k === "items" || k === "additionalProperties"
      ? toV2(v)
      : v
  }
  if (o["x-kubernetes-int-or-string"] === true || o.nullable === true) {
    delete out.type
    delete out.properties
    delete out.items
    delete out.additionalProperties
  }
  if (o["x-kubernetes-preserve-unknown-fields"] === true) delete out.properties
  if (out.type === "array" && (out.items === null || typeof out.items !== "object" || Array.isArray(out.items))) {
    delete out.type
    delete out.items
  }
  return out
}

/** The PATCH content types a kind accepts: custom resources have no strategic merge patch. */
const patchTypes = (custom: boolean): ReadonlyArray<string> => [
  "application/apply-patch+yaml",
  "application/json-patch+json",
  "application/merge-patch+json",
  ...(custom ? [] : ["application/strategic-merge-patch+json"])
]

/**
 * The operations on one object of each kind, with the parts clients read: the `x-kubernetes-group-version-kind`
 * and `x-kubernetes-action`, the `fieldValidation` parameter (kubectl then validates on the server), the PATCH body's
 * content types (kubectl computes a strategic merge patch from these schemas only when it is listed) and the object
 * schema of bodies and answers.
 */
const operations = (types: ReadonlyArray<ResourceType>, crds: ReadonlyArray<Schema>): Record<string, unknown> => {
  const paths: Record<string, unknown> = {}
  for (const t of types) {
    const namespace = t.scope === "Namespaced" ? "/namespaces/{namespace}" : ""
    const base = `/${gvPath(t.group, t.version)}${namespace}/${t.plural}/{name}`
    const gvk = { group: t.group, version: t.version, kind: t.kind }
    const op = (action: string) => ({
      "x-kubernetes-group-version-kind": gvk,
      "x-kubernetes-action": action,
      parameters: [
        { name: "fieldValidation", in: "query", schema: { type: "string", uniqueItems: true } },
        { name: "fieldManager", in: "query", schema: { type: "string", uniqueItems: true } },
        { name: "dryRun", in: "query", schema: { type: "string", uniqueItems: true } }
      ],
      responses: { "200": { description: "OK" } }
    })
    const patch = {
      ...op("patch"),
      requestBody: {
        content: Object.fromEntries(
          patchTypes(crdOf(crds, t) !== undefined).map((
            type
          ) => [type, { schema: { $ref: `#/components/schemas/${PATCH}` } }])
        ),
        required: true
      }
    }
    paths[base] = { get: { ...op("get"), parameters: [] }, put: op("put"), patch }
  }
  return paths
}

/** A sha512 of a document, as kube-openapi prints it in `?hash=` (hex, upper case). */
export const hashOf = (text: string): string => createHash("sha512").update(text).digest("hex").toUpperCase()

/** The tag of a group's operations: its name without `.k8s.io`, camel-cased (`rbacAuthorization`). */
const groupTag = (group: string): string =>
  group.replace(/\.k8s\.io$/, "").split(".").map((p, i) => (i === 0 ? p : p.charAt(0).toUpperCase() + p.slice(1)))
    .join("")

/** A document with one GET operation answering a model (the discovery paths and `/version`). */
const rootDocument = (
  builtin: BuiltinSchemas,
  path: string,
  operation: { readonly tag: string; readonly description: string; readonly operationId: string },
  className: string,
  kind: string | undefined
): string | undefined => {
  const defs = new Map<string, Schema>()
  const name = builtin.modelDefinition(className, defs)
  if (name === undefined) return undefined
  if (kind !== undefined) {
    defs.set(name, { ...defs.get(name), "x-kubernetes-group-version-kind": [{ group: "", kind, version: "v1" }] })
  }
  // the discovery types are also served as YAML and protobuf; `/version` as JSON only
  const media = kind === undefined
    ? ["application/json"]
    : ["application/json", "application/vnd.kubernetes.protobuf", "application/yaml"]
  const schema = { $ref: `#/components/schemas/${name}` }
  return JSON.stringify({
    openapi: "3.0.0",
    info,
    paths: {
      [path]: {
        get: {
          tags: [operation.tag],
          description: operation.description,
          operationId: operation.operationId,
          responses: {
            "200": { description: "OK", content: Object.fromEntries(media.map((m) => [m, { schema }])) },
            "401": { description: "Unauthorized" }
          }
        }
      }
    },
    components: {
      schemas: Object.fromEntries(
        [...defs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, toV3(v)])
      ),
      securitySchemes: {
        BearerToken: { type: "apiKey", description: "Bearer Token authentication", name: "authorization", in: "header" }
      }
    }
  })
}

/** The documents of `/api`, `/apis`, `/apis/<group>` (built-in groups: apiextensions publishes none) and `/version`. */
const rootDocuments = (
  builtin: BuiltinSchemas,
  types: ReadonlyArray<ResourceType>
): ReadonlyArray<readonly [string, string | undefined]> => {
  const groups = [...new Set(types.map((t) => t.group))].filter((g) => g !== "" && isBuiltinGroup(g))
  const versions = "get available API versions"
  return [
    [
      "api",
      rootDocument(
        builtin,
        "/api/",
        { tag: "core", description: versions, operationId: "getCoreAPIVersions" },
        "V1APIVersions",
        "APIVersions"
      )
    ],
    [
      "apis",
      rootDocument(
        builtin,
        "/apis/",
        { tag: "apis", description: versions, operationId: "getAPIVersions" },
        "V1APIGroupList",
        "APIGroupList"
      )
    ],
    ...groups.map((g) => {
      const tag = groupTag(g)
      const operationId = `get${tag.charAt(0).toUpperCase()}${tag.slice(1)}APIGroup`
      const description = "get information of a group"
      return [
        `apis/${g}`,
        rootDocument(builtin, `/apis/${g}/`, { tag, description, operationId }, "V1APIGroup", "APIGroup")
      ] as const
    }),
    [
      "version",
      rootDocument(
        builtin,
        "/version/",
        { tag: "version", description: "get the version information for this server", operationId: "getCodeVersion" },
        "VersionInfo",
        undefined
      )
    ]
  ]
}

interface Built {
  readonly key: string
  readonly v2: string
  v2Proto?: Uint8Array
  readonly v3: ReadonlyMap<string, { readonly text: string; readonly hash: string }>
}

let cache: Built | undefined
const builtinDocs = new Map<string, { readonly key: string; readonly text: string; readonly hash: string }>()
/** The documents of the discovery paths and `/version`, by the groups served. */
let rootDocs: { readonly key: string; readonly docs: ReadonlyMap<string, { text: string; hash: string }> } | undefined

const build = (types: ReadonlyArray<ResourceType>, crds: ReadonlyArray<Schema>): Built => {
  const key = JSON.stringify([
    types.map((t) => `${t.group}/${t.version}/${t.plural}`),
    crds.map((c) => `${c.metadata?.uid}/${c.metadata?.resourceVersion}`)
  ])
  if (cache?.key === key) return cache
  const builtin = loadBuiltins()
  const all = definitions(builtin, types, crds)
  const v2 = JSON.stringify({
    swagger: "2.0",
    info,
    paths: {},
    definitions: Object.fromEntries([...all].map(([k, v]) => [k, toV2(v)]))
  })
  const v3 = new Map<string, { text: string; hash: string }>()
  for (const t of types) {
    const gv = gvPath(t.group, t.version)
    if (v3.has(gv)) continue
    const selected = types.filter((x) => x.group === t.group && x.version === t.version)
    // a built-in group version's document never changes: built once (CRDs only rebuild their own)
    const builtinKey = isBuiltinGroup(t.group) ? selected.map((x) => x.plural).join(",") : undefined
    const kept = builtinKey === undefined ? undefined : builtinDocs.get(gv)
    if (kept !== undefined && kept.key === builtinKey) {
      v3.set(gv, kept)
      continue
    }
    const defs = definitions(builtin, selected, crds)
    const text = JSON.stringify({
      openapi: "3.0.0",
      info: isBuiltinGroup(t.group) ? info : crdInfo,
      paths: operations(selected, crds),
      components: { schemas: Object.fromEntries([...defs].map(([k, v]) => [k, toV3(v3Scalars[k] ?? v)])) }
    })
    const doc = { text, hash: hashOf(text) }
    v3.set(gv, doc)
    if (builtinKey !== undefined) builtinDocs.set(gv, { ...doc, key: builtinKey })
  }
  const groups = [...new Set(types.map((t) => t.group))].join(",")
  if (rootDocs?.key !== groups) {
    const docs = new Map<string, { text: string; hash: string }>()
    for (const [path, text] of rootDocuments(builtin, types)) {
      if (text !== undefined) docs.set(path, { text, hash: hashOf(text) })
    }
    rootDocs = { key: groups, docs }
  }
  for (const [path, doc] of rootDocs.docs) v3.set(path, doc)
  cache = { key, v2, v3 }
  return cache
}

/** An answer to an OpenAPI request. */
export interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string | Uint8Array
}

const etagMatches = (ifNoneMatch: string | undefined, etag: string): boolean =>
  ifNoneMatch !== undefined && ifNoneMatch.split(",").some((t) => t.trim() === etag || t.trim() === "*")

const notAcceptable = (vary: string): Answer => ({
  status: 406,
  headers: { "Cache-Control": NO_CACHE, Vary: vary },
  body: ""
})

const notFound: Answer = { status: 404, headers: { "Cache-Control": NO_CACHE }, body: "" }

/** kube-openapi's v2 handler also negotiates gzip. */
const V2_VARY = "Accept-Encoding, Accept"

const answer = (
  body: string | Uint8Array,
  contentType: string,
  etag: string,
  ifNoneMatch: string | undefined,
  extra: Record<string, string>
): Answer => {
  const headers = { "Content-Type": contentType, Etag: etag, Vary: "Accept", ...extra }
  return etagMatches(ifNoneMatch, etag) ? { status: 304, headers, body: "" } : { status: 200, headers, body }
}

/** Answers `GET /openapi/v2`, `/openapi/v3` and `/openapi/v3/<document>`; `undefined` for other paths. */
export const respond = (
  segments: ReadonlyArray<string>,
  url: URL,
  headers: { readonly accept?: string | undefined; readonly ifNoneMatch?: string | undefined },
  types: ReadonlyArray<ResourceType>,
  crds: ReadonlyArray<Schema>
): Answer | undefined => {
  if (segments[0] !== "openapi") return undefined
  if (segments[1] === "v2" && segments.length === 2) {
    const built = build(types, crds)
    const etag = `"${hashOf(built.v2)}"`
    const format = negotiate(headers.accept, [
      ["json", "json"],
      ["com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"],
      ["com.github.proto-openapi.spec.v2@v1.0+protobuf", "protobuf"]
    ])
    if (format === undefined) return notAcceptable(V2_VARY)
    const cache = { "Cache-Control": NO_CACHE, Vary: V2_VARY }
    if (format === "protobuf") {
      built.v2Proto ??= encodeDocument(JSON.parse(built.v2))
      return answer(built.v2Proto, V2_PROTOBUF, etag, headers.ifNoneMatch, cache)
    }
    return answer(built.v2, "application/json", etag, headers.ifNoneMatch, cache)
  }
  if (segments[1] !== "v3") return undefined
  const built = build(types, crds)
  if (segments.length === 2) {
    // served as a file without an extension: Go sniffs its type (text/plain), and it is neither negotiated nor tagged
    const paths: Record<string, { serverRelativeURL: string }> = {}
    for (const gv of [...built.v3.keys()].sort()) {
      paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${built.v3.get(gv)!.hash}` }
    }
    return {
      status: 200,
      headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": NO_CACHE },
      body: JSON.stringify({ paths })
    }
  }
  const gv = segments.slice(2).join("/")
  const doc = built.v3.get(gv)
  if (doc === undefined) return notFound
  // Only JSON: the protobuf form of v3 documents is not served (kubectl and client-go ask for JSON).
  if (negotiate(headers.accept, [["json", "json"]]) === undefined) return notAcceptable("Accept")
  const etag = `"${doc.hash}"`
  const asked = url.searchParams.get("hash")
  if (asked !== null && asked !== doc.hash) {
    // As kube-openapi: an outdated hash is redirected to the current document.
    return {
      status: 301,
      headers: {
        "Cache-Control": NO_CACHE,
        "Content-Type": "application/json",
        Etag: etag,
        Location: `/openapi/v3/${gv}?hash=${doc.hash}`,
        Vary: "Accept"
      },
      body: ""
    }
  }
  // With the current hash the document never changes: cacheable for a year, as kube-openapi says.
  const cache = asked === null
    ? { "Cache-Control": NO_CACHE }
    : {
      "Cache-Control": "public, immutable",
      Expires: new Date(Date.now() + 365 * 86_400_000).toUTCString().replace(/GMT$/, "UTC")
    }
  return answer(doc.text, "application/json", etag, headers.ifNoneMatch, cache)
}
