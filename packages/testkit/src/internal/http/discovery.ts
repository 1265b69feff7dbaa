/**
 * Discovery as kube-apiserver 1.36 serves it: `/version`, the legacy documents (`/api`, `/apis`, `/api/v1`,
 * `/apis/<group>`, `/apis/<group>/<version>`, in JSON or protobuf) and the aggregated ones (apidiscovery.k8s.io/v2,
 * JSON or protobuf, `Cache-Control: public` with an ETag). A group the server does not know, or a version a custom
 * group does not serve, is the Go mux's plain-text `404 page not found` (the request falls through to
 * apiextensions-apiserver's not-found handler); an unserved version of a built-in group is a JSON Status.
 */
import { createHash } from "node:crypto"
import * as ApiError from "../../ApiError.js"
import type { ResourceType } from "../../ResourceType.js"
import { encodeObject, MEDIA_TYPE as PROTOBUF } from "../protobuf/envelope.js"
import { builtinDiscovery, type DiscoverySubresource, isBuiltinGroup, storageVersionOf } from "../resourceType.js"

const AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

/** apiextensions-apiserver's verbs of a custom resource, in its order. */
const customVerbs = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]

/** The verbs of a resource: upstream's for built-in kinds (generated table), apiextensions' for custom resources. */
export const verbsOf = (rt: ResourceType): ReadonlyArray<string> =>
  builtinDiscovery(rt)?.verbs ?? (rt.createOnly === true ? ["create"] : customVerbs)

/**
 * Whether a request on a resource is one of its verbs (`componentstatuses` are get and list only, the reviews
 * create only, Namespaces have no deletecollection): the server answers 405 MethodNotAllowed otherwise, as upstream.
 */
export const allows = (rt: ResourceType, method: string, named: boolean, watch: boolean): boolean => {
  const verb = method === "GET"
    ? (watch ? "watch" : named ? "get" : "list")
    : method === "POST"
    ? "create"
    : method === "PUT"
    ? "update"
    : method === "PATCH"
    ? "patch"
    : method === "DELETE"
    ? (named ? "delete" : "deletecollection")
    : undefined
  return verb === undefined || verbsOf(rt).includes(verb)
}

/** `version.CompareKubeAwareVersionStrings`: GA before beta before alpha, higher numbers first, then other names. */
const versionRank = (v: string): readonly [number, number, number, string] => {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
  if (m === null) return [3, 0, 0, v]
  return [m[2] === undefined ? 0 : m[2] === "beta" ? 1 : 2, -Number(m[1]), -Number(m[3] ?? 0), ""]
}
const byKubeVersion = (a: string, b: string): number => {
  const [x, y] = [versionRank(a), versionRank(b)]
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0
}

/**
 * `discovery.StorageVersionHash`: the first 8 bytes of the SHA-256 of the storage version's `group/version/kind`,
 * base64: upstream's for built-in kinds (generated table), from the `storage: true` version for custom resources.
 */
const storageHashOf = (rt: ResourceType): string | undefined => {
  const builtin = builtinDiscovery(rt)
  if (builtin !== undefined) return builtin.storageVersionHash
  const storage = storageVersionOf(rt) ?? rt.version
  return createHash("sha256").update(`${rt.group}/${storage}/${rt.kind}`).digest().subarray(0, 8).toString("base64")
}

/**
 * Group versions in preference order: built-in groups first, in the generated table's order (their first version is
 * the preferred one), then the groups of CRDs by name (the aggregator's order: they share one group priority), each
 * with its versions in kube-aware order.
 */
const groupVersions = (types: ReadonlyArray<ResourceType>): Map<string, Array<string>> => {
  const builtin = new Map<string, Array<string>>()
  const custom = new Map<string, Array<string>>()
  for (const t of types) {
    const out = isBuiltinGroup(t.group) ? builtin : custom
    const versions = out.get(t.group) ?? []
    if (!versions.includes(t.version)) versions.push(t.version)
    out.set(t.group, versions)
  }
  const sorted = [...custom].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return new Map([...builtin, ...sorted.map(([g, vs]) => [g, vs.sort(byKubeVersion)] as const)])
}

/**
 * `/version`: the Kubernetes release the server imitates (1.36, emulating itself, compatible with 1.35 as a
 * kube-apiserver's minimum compatibility version is one minor below), with the testkit named in `gitVersion`'s build
 * metadata.
 */
export const version = {
  major: "1",
  minor: "36",
  emulationMajor: "1",
  emulationMinor: "36",
  minCompatibilityMajor: "1",
  minCompatibilityMinor: "35",
  gitVersion: "v1.36.3+reconcile-testkit",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-01-01T00:00:00Z",
  goVersion: "go1.23.0",
  compiler: "gc",
  platform: "linux/amd64"
}

export const apiVersions = (host: string) => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: host }]
})

const apiGroup = (group: string, versions: ReadonlyArray<string>) => ({
  name: group,
  versions: versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v })),
  preferredVersion: { groupVersion: `${group}/${versions[0]}`, version: versions[0] }
})

export const apiGroupList = (types: ReadonlyArray<ResourceType>) => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: [...groupVersions(types)].filter(([g]) => g !== "").map(([g, vs]) => apiGroup(g, vs))
})

export const apiGroupDoc = (types: ReadonlyArray<ResourceType>, group: string) => {
  const versions = groupVersions(types).get(group)
  return versions === undefined ? undefined : { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group, versions) }
}

/** The subresources of a kind, sorted by name as kube-apiserver lists them. */
const subresourcesOf = (t: ResourceType): ReadonlyArray<DiscoverySubresource> => {
  const builtin = builtinDiscovery(t)
  if (builtin !== undefined) return builtin.subresources
  const out: Array<DiscoverySubresource> = []
  // apiextensions lists status before scale
  if (t.hasStatus) out.push({ name: "status", kind: t.kind, verbs: ["get", "patch", "update"] })
  if (t.scale !== undefined) {
    out.push({ name: "scale", group: "autoscaling", version: "v1", kind: "Scale", verbs: ["get", "patch", "update"] })
  }
  return out
}

const byPlural = (a: ResourceType, b: ResourceType): number => a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0

/**
 * The legacy discovery document of a group version (`/api/v1`, `/apis/apps/v1`): a built-in group's resources
 * sorted by path; a custom group's in the order their CRDs were last written (apiextensions-apiserver lists them
 * in its informer cache's order, which no client may rely on), each followed by its `/status` and `/scale`.
 */
export const apiResourceList = (types: ReadonlyArray<ResourceType>, group: string, version: string) => {
  const selected = types.filter((t) => t.group === group && t.version === version)
  if (selected.length === 0) return undefined
  const resources: Array<Record<string, unknown>> = []
  for (const t of isBuiltinGroup(group) ? [...selected].sort(byPlural) : selected) {
    const hash = storageHashOf(t)
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.scope === "Namespaced",
      kind: t.kind,
      verbs: verbsOf(t),
      ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length > 0 ? { categories: t.categories } : {}),
      ...(hash !== undefined ? { storageVersionHash: hash } : {})
    })
    for (const sub of subresourcesOf(t)) {
      resources.push({
        name: `${t.plural}/${sub.name}`,
        singularName: "",
        namespaced: t.scope === "Namespaced",
        ...(sub.group !== undefined ? { group: sub.group, version: sub.version } : {}),
        kind: sub.kind,
        verbs: sub.verbs
      })
    }
  }
  return {
    kind: "APIResourceList",
    // as upstream: the core group's list names no apiVersion
    ...(group === "" ? {} : { apiVersion: "v1" }),
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources
  }
}

/**
 * The aggregated discovery document of the core group (`/api`) or of all named groups (`/apis`). As upstream, a
 * built-in kind's `responseKind` names a group and version only when they differ from the resource's own (the
 * Scale of `/scale`); a custom resource's always names them.
 */
export const aggregated = (types: ReadonlyArray<ResourceType>, core: boolean) => ({
  kind: "APIGroupDiscoveryList",
  apiVersion: "apidiscovery.k8s.io/v2",
  metadata: {},
  items: [...groupVersions(types)].filter(([g]) => (g === "") === core).map(([g, versions]) => ({
    metadata: g === "" ? {} : { name: g },
    versions: versions.map((v) => ({
      version: v,
      resources: types.filter((t) => t.group === g && t.version === v).sort(byPlural).map((t) => {
        const subresources = subresourcesOf(t)
        // kube-apiserver's built-in kinds leave group and version empty; apiextensions names them for CRD kinds
        const own = builtinDiscovery(t) !== undefined ? { group: "", version: "" } : { group: g, version: v }
        return {
          resource: t.plural,
          responseKind: { ...own, kind: t.kind },
          scope: t.scope,
          singularResource: t.singular,
          verbs: verbsOf(t),
          ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
          ...(t.categories.length > 0 ? { categories: t.categories } : {}),
          ...(subresources.length > 0
            ? {
              subresources: subresources.map((sub) => ({
                subresource: sub.name,
                responseKind: sub.group !== undefined
                  ? { group: sub.group, version: sub.version, kind: sub.kind }
                  : { ...own, kind: sub.kind },
                verbs: sub.verbs
              }))
            }
            : {})
        }
      }),
      freshness: "Current"
    }))
  }))
})

// -------------------------------------------------------------------------------------------------------------------
// HTTP

/** What the server sends for a discovery request. */
export type Answer =
  /** An object the server writes as it writes any (JSON, protobuf when asked for first, `pretty`). */
  | { readonly _tag: "Object"; readonly status: number; readonly body: unknown }
  /** A body with its own headers. */
  | {
    readonly _tag: "Raw"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string | Uint8Array
  }
  /** The server's JSON 404 for a path it does not serve (`the server could not find the requested resource`). */
  | { readonly _tag: "NotFound" }

/** The request headers discovery reads. */
export interface Request {
  readonly accept: string | undefined
  readonly ifNoneMatch: string | undefined
  /** The Host header, named in `/api`'s `serverAddressByClientCIDRs`. */
  readonly host: string
}

const AGGREGATED_PROTOBUF = `${PROTOBUF};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
const MEDIA_TYPES = "application/json, application/yaml, application/vnd.kubernetes.protobuf"

interface Range {
  readonly media: string
  readonly params: ReadonlyMap<string, string>
  readonly q: number
  readonly i: number
}

/** An Accept header's media ranges, by preference (`q`, then position); none accepts everything. */
const ranges = (accept: string | undefined): ReadonlyArray<Range> =>
  (accept === undefined || accept.trim() === "" ? "*/*" : accept).split(",").map((part, i): Range => {
    const [media = "", ...rest] = part.split(";").map((x) => x.trim())
    const params = new Map(rest.map((p) => {
      const at = p.indexOf("=")
      return at < 0 ? [p.toLowerCase(), ""] as const : [p.slice(0, at).toLowerCase(), p.slice(at + 1)] as const
    }))
    const q = params.has("q") ? Number(params.get("q")) : 1
    return { media: media.toLowerCase(), params, q, i }
  }).filter((r) => r.media !== "" && r.q > 0).sort((a, b) => b.q - a.q || a.i - b.i)

/** The encoding a media range names: YAML is answered as JSON (the server writes no YAML). */
const formatOf = (media: string): "json" | "protobuf" | undefined =>
  media === PROTOBUF
    ? "protobuf"
    : media === "application/json" || media === "application/yaml" || media === "*/*" || media === "application/*"
    ? "json"
    : undefined

type Choice =
  | { readonly _tag: "Legacy" }
  | { readonly _tag: "Aggregated"; readonly format: "json" | "protobuf" }
  | { readonly _tag: "Refused"; readonly transform: boolean }

/**
 * The document and encoding a client asks for. A range naming a transformation (`as=`, `g=`, `v=`) is acceptable
 * only as the aggregated v2 document of `/api` and `/apis`; when nothing is acceptable, the 406 says which media
 * types are (worded one way when a transformation was refused, another when the media types were).
 */
const choose = (accept: string | undefined, aggregatable: boolean): Choice => {
  let transform = false
  for (const r of ranges(accept)) {
    const format = formatOf(r.media)
    if (format === undefined) continue
    // the server's writer picks JSON or protobuf for a legacy document from the Accept header itself
    if (!r.params.has("as") && !r.params.has("g") && !r.params.has("v")) return { _tag: "Legacy" }
    transform = true
    const aggregated = r.params.get("as") === "APIGroupDiscoveryList" && r.params.get("g") === "apidiscovery.k8s.io" &&
      r.params.get("v") === "v2" && r.media !== "application/yaml" && !r.media.includes("*")
    if (aggregated && aggregatable) return { _tag: "Aggregated", format }
  }
  return { _tag: "Refused", transform }
}

const refused = (choice: { readonly transform: boolean }): Answer => ({
  _tag: "Object",
  status: 406,
  body: choice.transform
    ? ApiError.failure(406, "NotAcceptable", `only the following media types are accepted: ${MEDIA_TYPES}`)
    : ApiError.failure(406, "NotAcceptable", `406: Not Acceptable\n\nAvailable representations: ${MEDIA_TYPES}`, {})
})

/** The Go mux's 404, for a group (or a custom group's version) the server does not serve. */
const pageNotFound: Answer = {
  _tag: "Raw",
  status: 404,
  headers: {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache, private"
  },
  body: "404 page not found\n"
}

const etagMatches = (ifNoneMatch: string | undefined, etag: string): boolean =>
  ifNoneMatch !== undefined && ifNoneMatch.split(",").some((t) => t.trim() === etag || t.trim() === "*")

/**
 * The aggregated document: cacheable (`public`), its ETag the hash of its JSON form whatever the encoding (a
 * matching If-None-Match is a 304), protobuf when asked so (JSON if the table cannot carry it).
 */
const aggregatedAnswer = (doc: object, format: "json" | "protobuf", ifNoneMatch: string | undefined): Answer => {
  const json = JSON.stringify(doc)
  const etag = `"${createHash("sha512").update(json).digest("hex").toUpperCase()}"`
  const cache = { "Cache-Control": "public", Etag: etag, Vary: "Accept" }
  if (etagMatches(ifNoneMatch, etag)) return { _tag: "Raw", status: 304, headers: cache, body: "" }
  const proto = format === "protobuf" ? encodeObject(doc) : undefined
  return proto === undefined
    ? { _tag: "Raw", status: 200, headers: { ...cache, "Content-Type": AGGREGATED_V2 }, body: json }
    : { _tag: "Raw", status: 200, headers: { ...cache, "Content-Type": AGGREGATED_PROTOBUF }, body: proto }
}

/**
 * `/version`, always indented JSON (kube-apiserver writes it so); a client that takes no JSON is refused with
 * the version handler's 406.
 */
const versionAnswer = (accept: string | undefined): Answer => {
  const json = ranges(accept).some((r) =>
    (r.media === "application/json" || r.media === "*/*" || r.media === "application/*") && !r.params.has("as")
  )
  if (!json) {
    return {
      _tag: "Object",
      status: 406,
      body: ApiError.failure(
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: application/json",
        {}
      )
    }
  }
  return {
    _tag: "Raw",
    status: 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-cache, private" },
    body: JSON.stringify(version, null, 2)
  }
}

/**
 * Answers `GET /version` and the discovery paths (`/api`, `/apis`, `/api/<version>`, `/apis/<group>`,
 * `/apis/<group>/<version>`); `undefined` for any other path.
 */
export const respond = (
  segments: ReadonlyArray<string>,
  request: Request,
  types: ReadonlyArray<ResourceType>
): Answer | undefined => {
  if (segments.length === 1 && segments[0] === "version") return versionAnswer(request.accept)
  const root = segments[0]
  if ((root !== "api" && root !== "apis") || segments.length > (root === "api" ? 2 : 3)) return undefined
  if (segments.length === 1) {
    const choice = choose(request.accept, true)
    if (choice._tag === "Refused") return refused(choice)
    if (choice._tag === "Aggregated") {
      return aggregatedAnswer(aggregated(types, root === "api"), choice.format, request.ifNoneMatch)
    }
    return { _tag: "Object", status: 200, body: root === "api" ? apiVersions(request.host) : apiGroupList(types) }
  }
  const group = root === "api" ? "" : segments[1]!
  const doc = segments.length === 2 && root === "apis"
    ? apiGroupDoc(types, group)
    : apiResourceList(types, group, segments.at(-1)!)
  // the path is looked up before the Accept header is read
  if (doc === undefined) return isBuiltinGroup(group) ? { _tag: "NotFound" } : pageNotFound
  const choice = choose(request.accept, false)
  return choice._tag === "Refused" ? refused(choice) : { _tag: "Object", status: 200, body: doc }
}
