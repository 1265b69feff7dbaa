/**
 * Minimal OpenAPI v3: one document per group version that declares, for each
 * kind, a PATCH operation accepting `fieldValidation`. That is what kubectl
 * checks before sending `fieldValidation=Strict` instead of validating on the
 * client (which would need full schemas). No object schemas are served.
 */
import { createHash } from "node:crypto"
import type { ResourceType } from "../../ResourceType.js"

const gvPath = (
  group: string,
  version: string
): string => (group === "" ? `api/${version}` : `apis/${group}/${version}`)

export const groupVersionDoc = (types: ReadonlyArray<ResourceType>, group: string, version: string) => {
  const selected = types.filter((t) => t.group === group && t.version === version)
  if (selected.length === 0) return undefined
  const paths: Record<string, unknown> = {}
  for (const t of selected) {
    const base = `/${gvPath(group, version)}${t.namespaced ? "/namespaces/{namespace}" : ""}/${t.plural}/{name}`
    const gvk = { group, version, kind: t.kind }
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
    paths[base] = { get: { ...op("get"), parameters: [] }, put: op("put"), patch: op("patch") }
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes (reconcile testkit)", version: "v1.32.0" },
    paths,
    components: { schemas: {} }
  }
}

export const hashOf = (doc: unknown): string =>
  createHash("sha512").update(JSON.stringify(doc)).digest("hex").slice(0, 64).toUpperCase()

export const root = (types: ReadonlyArray<ResourceType>) => {
  const paths: Record<string, { serverRelativeURL: string }> = {}
  const seen = new Set<string>()
  for (const t of types) {
    const key = gvPath(t.group, t.version)
    if (seen.has(key)) continue
    seen.add(key)
    const doc = groupVersionDoc(types, t.group, t.version)
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(doc)}` }
  }
  return { paths }
}
