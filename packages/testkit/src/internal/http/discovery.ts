/** Discovery documents: legacy (`/api`, `/apis`, `/api/v1`, …) and aggregated (apidiscovery.k8s.io/v2). */
import type { ResourceType } from "../../ResourceType.js"

export const AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

const verbsOf = (rt: ResourceType): Array<string> =>
  [
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

export const apiResourceList = (types: ReadonlyArray<ResourceType>, group: string, version: string) => {
  const selected = types.filter((t) => t.group === group && t.version === version)
  if (selected.length === 0) return undefined
  const resources: Array<Record<string, unknown>> = []
  for (const t of selected) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: verbsOf(t),
      ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length > 0 ? { categories: t.categories } : {})
    })
    if (t.hasStatus) {
      resources.push({
        name: `${t.plural}/status`,
        singularName: "",
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ["get", "patch", "update"]
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

/** The aggregated discovery document of the core group (`/api`) or of all named groups (`/apis`). */
export const aggregated = (types: ReadonlyArray<ResourceType>, core: boolean) => ({
  kind: "APIGroupDiscoveryList",
  apiVersion: "apidiscovery.k8s.io/v2",
  metadata: {},
  items: [...groupVersions(types)].filter(([g]) => (g === "") === core).map(([g, versions]) => ({
    metadata: { name: g },
    versions: versions.map((v) => ({
      version: v,
      resources: types.filter((t) => t.group === g && t.version === v).map((t) => ({
        resource: t.plural,
        responseKind: { group: g, version: v, kind: t.kind },
        scope: t.namespaced ? "Namespaced" : "Cluster",
        singularResource: t.singular,
        verbs: verbsOf(t),
        ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
        ...(t.categories.length > 0 ? { categories: t.categories } : {}),
        ...(t.hasStatus
          ? {
            subresources: [{
              subresource: "status",
              responseKind: { group: g, version: v, kind: t.kind },
              verbs: ["get", "patch", "update"]
            }]
          }
          : {})
      })),
      freshness: "Current"
    }))
  }))
})
