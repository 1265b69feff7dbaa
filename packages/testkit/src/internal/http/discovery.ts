/** Discovery documents: legacy (`/api`, `/apis`, `/api/v1`, …) and aggregated (apidiscovery.k8s.io/v2). */
import type { ResourceType } from "../../ResourceType.js"
import { builtins } from "../registry.js"

export const AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

const verbsOf = (rt: ResourceType): Array<string> =>
  rt.createOnly === true ? ["create"] : [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch"
  ].filter((v) => v !== "deletecollection" || rt.kind !== "Namespace")

/** Group versions in preference order (the first registered version is preferred). */
const groupVersions = (types: ReadonlyArray<ResourceType>): Map<string, Array<string>> => {
  const out = new Map<string, Array<string>>()
  for (const t of types) {
    const versions = out.get(t.group) ?? []
    if (!versions.includes(t.version)) versions.push(t.version)
    out.set(t.group, versions)
  }
  return out
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

interface Subresource {
  readonly name: string
  /** Set when the subresource answers another kind than its resource (Scale is autoscaling/v1). */
  readonly group?: string
  readonly version?: string
  readonly kind: string
  readonly verbs: ReadonlyArray<string>
}

/** The subresources of a kind, sorted by name as kube-apiserver lists them. */
const subresourcesOf = (t: ResourceType): Array<Subresource> => {
  const out: Array<Subresource> = []
  if (t.group === "" && t.kind === "Pod") out.push({ name: "log", kind: "Pod", verbs: ["get"] })
  if (t.scale !== undefined) {
    out.push({ name: "scale", group: "autoscaling", version: "v1", kind: "Scale", verbs: ["get", "patch", "update"] })
  }
  if (t.hasStatus) out.push({ name: "status", kind: t.kind, verbs: ["get", "patch", "update"] })
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

const byPlural = (a: ResourceType, b: ResourceType): number => a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0

/** The legacy discovery document of a group version (`/api/v1`, `/apis/apps/v1`), resources sorted by path. */
export const apiResourceList = (types: ReadonlyArray<ResourceType>, group: string, version: string) => {
  const selected = types.filter((t) => t.group === group && t.version === version)
  if (selected.length === 0) return undefined
  const resources: Array<Record<string, unknown>> = []
  for (const t of [...selected].sort(byPlural)) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: verbsOf(t),
      ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length > 0 ? { categories: t.categories } : {})
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
    apiVersion: "v1",
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
    metadata: { name: g },
    versions: versions.map((v) => ({
      version: v,
      resources: types.filter((t) => t.group === g && t.version === v).sort(byPlural).map((t) => {
        const subresources = subresourcesOf(t)
        // kube-apiserver's built-in kinds leave group and version empty; apiextensions names them for CRD kinds
        const own = builtins.includes(t) ? { group: "", version: "" } : { group: g, version: v }
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
