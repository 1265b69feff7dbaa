/** `meta.k8s.io/v1` Table and PartialObjectMetadata renderings, as `kubectl get` requests them. */
import type { KubeObject } from "../../KubeObject.js"
import type { ResourceType } from "../../ResourceType.js"
import type { Obj } from "../json.js"

interface Column {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly description: string
  readonly priority: number
  readonly cell: (obj: Obj) => unknown
}

/** Human age as kubectl prints it (`5s`, `3m`, `2h`, `4d`). */
export const age = (created: string | undefined, now: number): string => {
  if (created === undefined) return "<unknown>"
  const seconds = Math.max(0, Math.floor((now - Date.parse(created)) / 1000))
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 120) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours}h`
  return `${Math.floor(hours / 24)}d`
}

const jsonPath = (obj: Obj, path: string): unknown => {
  let node: any = obj
  for (const part of path.replace(/^\./, "").split(".")) {
    if (node === null || typeof node !== "object") return undefined
    node = node[part]
  }
  return node
}

const count = (value: unknown): number => (value !== null && typeof value === "object" ? Object.keys(value).length : 0)

const builtinColumns = (rt: ResourceType): ReadonlyArray<Column> => {
  const col = (name: string, cell: (obj: Obj) => unknown, type = "string"): Column => ({
    name,
    type,
    description: name,
    priority: 0,
    cell
  })
  switch (`${rt.group}/${rt.kind}`) {
    case "/Namespace":
      return [col("Status", (o) => o.status?.phase ?? "")]
    case "/ConfigMap":
      return [col("Data", (o) => count(o.data) + count(o.binaryData), "integer")]
    case "/Secret":
      return [col("Type", (o) => o.type ?? ""), col("Data", (o) => count(o.data), "integer")]
    case "/Pod":
      return [col("Status", (o) => o.status?.phase ?? "")]
    case "/Service":
      return [col("Type", (o) => o.spec?.type ?? ""), col("Cluster-IP", (o) => o.spec?.clusterIP ?? "<none>")]
    case "apps/Deployment":
      return [
        col("Ready", (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`),
        col("Up-to-date", (o) => o.status?.updatedReplicas ?? 0, "integer"),
        col("Available", (o) => o.status?.availableReplicas ?? 0, "integer")
      ]
    default:
      return rt.printerColumns.map((c) => ({
        name: c.name,
        type: c.type,
        description: c.description ?? c.name,
        priority: c.priority ?? 0,
        cell: (o: Obj) => jsonPath(o, c.jsonPath) ?? null
      }))
  }
}

const partial = (obj: KubeObject) => ({
  kind: "PartialObjectMetadata",
  apiVersion: "meta.k8s.io/v1",
  metadata: obj.metadata
})

export const table = (
  rt: ResourceType,
  items: ReadonlyArray<KubeObject>,
  metadata: Record<string, unknown>,
  includeObject: string,
  now: number
) => {
  const columns: Array<Column> = [
    {
      name: "Name",
      type: "string",
      format: "name",
      description: "Name must be unique within a namespace.",
      priority: 0,
      cell: (o) => o.metadata?.name
    },
    ...builtinColumns(rt),
    {
      name: "Age",
      type: "string",
      description: "CreationTimestamp",
      priority: 0,
      cell: (o) => age(o.metadata?.creationTimestamp, now)
    }
  ]
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata,
    columnDefinitions: columns.map(({ cell: _, ...c }) => c),
    rows: items.map((item) => ({
      cells: columns.map((c) => c.cell(item)),
      ...(includeObject === "None" ? {} : { object: includeObject === "Object" ? item : partial(item) })
    }))
  }
}

export const partialList = (list: { readonly metadata: unknown; readonly items: ReadonlyArray<KubeObject> }) => ({
  kind: "PartialObjectMetadataList",
  apiVersion: "meta.k8s.io/v1",
  metadata: list.metadata,
  items: list.items.map(partial)
})

export const partialObject = partial
