/** Discovery documents: legacy (`/api`, `/apis`, `/api/v1`, …) and aggregated (apidiscovery.k8s.io/v2). */
import { createHash } from "node:crypto"
import type { ResourceType } from "../../ResourceType.js"
import { builtinDiscovery, type DiscoverySubresource, isBuiltinGroup, storageVersionOf } from "../registry.js"

export const AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

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

export const version = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0-reconcile-testkit",
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

/** The legacy discovery document of a group version (`/api/v1`, `/apis/apps/v1`), resources sorted by path. */
export const apiResourceList = (types: ReadonlyArray<ResourceType>, group: string, version: string) => {
  const selected = types.filter((t) => t.group === group && t.version === version)
  if (selected.length === 0) return undefined
  const resources: Array<Record<string, unknown>> = []
  for (const t of [...selected].sort(byPlural)) {
    const hash = storageHashOf(t)
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
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
        namespaced: t.namespaced,
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
          scope: t.namespaced ? "Namespaced" : "Cluster",
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
