/**
 * `meta.k8s.io/v1` Table and PartialObjectMetadata renderings, as `kubectl get` requests them.
 *
 * Built-in kinds print the columns of kube-apiserver's printers (`pkg/printers/internalversion/printers.go`:
 * names, types, priorities, and the cells' rules — pod status reasons, `<none>`, human durations); the server
 * always generates the wide form, `priority: 1` columns are the ones `-o wide` adds. CustomResourceDefinitions print
 * NAME and CREATED AT (the generic table of the apiserver); custom resources their version's
 * `additionalPrinterColumns` (AGE when it declares none), as apiextensions-apiserver does.
 */
import type { KubeObject } from "../../KubeObject.js"
import type { ResourceType } from "../../ResourceType.js"
import { isObject, type Obj } from "../json.js"
import { formatSelector } from "../scale.js"
import * as KindTables from "./kindTables.js"

interface Column {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
  readonly cell: (obj: Obj) => unknown
}

const NAME_DOC =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
const CREATED_DOC =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"

/**
 * A duration as apimachinery's `duration.HumanDuration` prints it (`45s`, `3m20s`, `15m`, `5h12m`, `2d3h`, `40d`,
 * `2y10d`); `<unknown>` for a missing time, `<invalid>` for one more than 2 s in the future.
 */
export const age = (created: string | undefined | null, now: number): string => {
  if (created === undefined || created === null || created === "") return "<unknown>"
  const at = Date.parse(created)
  if (Number.isNaN(at)) return "<unknown>"
  const millis = now - at
  const seconds = Math.trunc(millis / 1000)
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`
  if (minutes < 180) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`
  if (hours < 48) return `${hours}h`
  if (hours < 24 * 8) {
    return hours % 24 === 0
      ? `${Math.floor(hours / 24)}d`
      : `${Math.floor(hours / 24)}d${hours % 24}h`
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365
    return days === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${days}d`
  }
  return `${Math.floor(hours / 24 / 365)}y`
}

const list = (value: unknown): Array<Obj> => (Array.isArray(value) ? value.filter(isObject) : [])
const str = (value: unknown): string => (typeof value === "string" ? value : "")
const num = (value: unknown): number => (typeof value === "number" ? value : 0)
const orNone = (value: string): string => (value === "" ? "<none>" : value)
const count = (value: unknown): number => (isObject(value) ? Object.keys(value).length : 0)

/** `labels.FormatLabels`: `k=v` sorted by key, joined by commas; `<none>` when empty. */
const formatLabels = (labels: unknown): string =>
  orNone(
    Object.entries(isObject(labels) ? labels : {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(",")
  )

const containers = (template: Obj | undefined): Array<Obj> => list(template?.spec?.containers)

// -------------------------------------------------------------------------------------------------------------------
// pods

const podSucceeded = [{
  type: "Completed",
  status: "True",
  reason: "Succeeded",
  message: "The pod has completed successfully."
}]
const podFailed = [{ type: "Completed", status: "True", reason: "Failed", message: "The pod failed." }]

const later = (a: string | undefined, b: unknown): string | undefined =>
  typeof b === "string" && b !== "" && (a === undefined || Date.parse(b) > Date.parse(a)) ? b : a

/** The cells of a pod as kubectl shows them: READY, STATUS (the aggregate reason), RESTARTS. */
const podSummary = (pod: Obj, now: number) => {
  const spec: Obj = isObject(pod.spec) ? pod.spec : {}
  const status: Obj = isObject(pod.status) ? pod.status : {}
  const initSpecs = new Map(list(spec.initContainers).map((c) => [c.name, c]))
  const restartable = (name: unknown): boolean => initSpecs.get(name)?.restartPolicy === "Always"
  let total = list(spec.containers).length
  for (const c of initSpecs.values()) if (c.restartPolicy === "Always") total++
  let ready = 0
  let restarts = 0
  let sidecarRestarts = 0
  let lastRestart: string | undefined
  let lastSidecarRestart: string | undefined
  const phase = str(status.phase)
  let reason = str(status.reason) !== "" ? str(status.reason) : phase
  let initializing = false
  const inits = list(status.initContainerStatuses)
  for (let i = 0; i < inits.length; i++) {
    const c = inits[i]!
    const state: Obj = isObject(c.state) ? c.state : {}
    restarts += num(c.restartCount)
    lastRestart = later(lastRestart, c.lastState?.terminated?.finishedAt)
    if (restartable(c.name)) {
      sidecarRestarts += num(c.restartCount)
      lastSidecarRestart = later(lastSidecarRestart, c.lastState?.terminated?.finishedAt)
    }
    if (isObject(state.terminated) && num(state.terminated.exitCode) === 0) continue
    if (restartable(c.name) && c.started === true) {
      if (c.ready === true) ready++
      continue
    }
    if (isObject(state.terminated)) {
      const t = state.terminated
      reason = str(t.reason) !== ""
        ? `Init:${t.reason}`
        : num(t.signal) !== 0
        ? `Init:Signal:${t.signal}`
        : `Init:ExitCode:${num(t.exitCode)}`
    } else if (
      isObject(state.waiting) && str(state.waiting.reason) !== "" && state.waiting.reason !== "PodInitializing"
    ) {
      reason = `Init:${state.waiting.reason}`
    } else {
      reason = `Init:${i}/${list(spec.initContainers).length}`
    }
    initializing = true
    break
  }
  const initialized = list(status.conditions).some((c) => c.type === "Initialized" && c.status === "True")
  if (!initializing || initialized) {
    restarts = sidecarRestarts
    lastRestart = lastSidecarRestart
    let running = false
    const statuses = list(status.containerStatuses)
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!
      const state: Obj = isObject(c.state) ? c.state : {}
      restarts += num(c.restartCount)
      lastRestart = later(lastRestart, c.lastState?.terminated?.finishedAt)
      if (isObject(state.waiting) && str(state.waiting.reason) !== "") reason = state.waiting.reason
      else if (isObject(state.terminated) && str(state.terminated.reason) !== "") reason = state.terminated.reason
      else if (isObject(state.terminated)) {
        reason = num(state.terminated.signal) !== 0
          ? `Signal:${state.terminated.signal}`
          : `ExitCode:${num(state.terminated.exitCode)}`
      } else if (c.ready === true && isObject(state.running)) {
        running = true
        ready++
      }
    }
    if (reason === "Completed" && running) {
      reason = list(status.conditions).some((c) => c.type === "Ready" && c.status === "True") ? "Running" : "NotReady"
    }
  }
  if (pod.metadata?.deletionTimestamp !== undefined && pod.metadata?.deletionTimestamp !== null) {
    if (status.reason === "NodeLost") reason = "Unknown"
    else if (phase !== "Succeeded" && phase !== "Failed") reason = "Terminating"
  }
  const restartsText = restarts !== 0 && lastRestart !== undefined
    ? `${restarts} (${age(lastRestart, now)} ago)`
    : String(restarts)
  return { ready: `${ready}/${total}`, reason, restarts: restartsText }
}

const podIP = (pod: Obj): string => orNone(str(list(pod.status?.podIPs)[0]?.ip) || str(pod.status?.podIP))

const readinessGates = (pod: Obj): string => {
  const gates = list(pod.spec?.readinessGates)
  if (gates.length === 0) return "<none>"
  const conditions = list(pod.status?.conditions)
  const met = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === "True").length
  return `${met}/${gates.length}`
}

// -------------------------------------------------------------------------------------------------------------------
// services

const servicePorts = (svc: Obj): string =>
  orNone(
    list(svc.spec?.ports).map((p) =>
      num(p.nodePort) !== 0
        ? `${num(p.port)}:${p.nodePort}/${str(p.protocol) || "TCP"}`
        : `${num(p.port)}/${str(p.protocol) || "TCP"}`
    ).join(",")
  )

const loadBalancerStatus = (svc: Obj): string =>
  list(svc.status?.loadBalancer?.ingress).map((i) => str(i.ip) || str(i.hostname)).filter((s) => s !== "").join(",")

const externalIP = (svc: Obj): string => {
  const externalIPs: Array<string> = Array.isArray(svc.spec?.externalIPs) ? svc.spec.externalIPs : []
  switch (str(svc.spec?.type) || "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return externalIPs.length > 0 ? externalIPs.join(",") : "<none>"
    case "LoadBalancer": {
      // the server prints the wide form, which does not shorten the ingress list
      const lb = loadBalancerStatus(svc)
      if (externalIPs.length > 0) return [...(lb === "" ? [] : lb.split(",")), ...externalIPs].join(",")
      return lb !== "" ? lb : "<pending>"
    }
    case "ExternalName":
      return str(svc.spec?.externalName)
  }
  return "<unknown>"
}

// -------------------------------------------------------------------------------------------------------------------
// events (core/v1 and events.k8s.io/v1 print the same, from the same storage)

interface EventView {
  readonly involvedKind: string
  readonly involvedName: string
  readonly fieldPath: string
  readonly type: string
  readonly reason: string
  readonly message: string
  readonly component: string
  readonly host: string
  readonly first: string | undefined
  readonly last: string | undefined
  readonly count: number
  readonly eventTime: string | undefined
  readonly seriesCount: number | undefined
  readonly seriesLast: string | undefined
}

const timeOf = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const eventView = (e: Obj, eventsGroup: boolean): EventView => {
  const ref: Obj = (eventsGroup ? e.regarding : e.involvedObject) ?? {}
  const source: Obj = (eventsGroup ? e.deprecatedSource : e.source) ?? {}
  const series: Obj | undefined = isObject(e.series) ? e.series : undefined
  return {
    involvedKind: str(ref.kind),
    involvedName: str(ref.name),
    fieldPath: str(ref.fieldPath),
    type: str(e.type),
    reason: str(e.reason),
    message: str(eventsGroup ? e.note : e.message),
    component: str(source.component) || str(eventsGroup ? e.reportingController : e.reportingComponent),
    host: str(source.host) || str(e.reportingInstance),
    first: timeOf(eventsGroup ? e.deprecatedFirstTimestamp : e.firstTimestamp),
    last: timeOf(eventsGroup ? e.deprecatedLastTimestamp : e.lastTimestamp),
    count: num(eventsGroup ? e.deprecatedCount : e.count),
    eventTime: timeOf(e.eventTime),
    seriesCount: series === undefined ? undefined : num(series.count),
    seriesLast: series === undefined ? undefined : timeOf(series.lastObservedTime)
  }
}

type Cells = Readonly<Record<string, (o: Obj) => unknown>>

/** The cells of the event printers, by column (Name last, `-o wide`). */
const eventCells = (eventsGroup: boolean, now: number): Cells => {
  const view = (o: Obj) => eventView(o, eventsGroup)
  const first = (v: EventView): string => age(v.first ?? v.eventTime, now)
  const last = (v: EventView): string =>
    v.seriesCount !== undefined ? age(v.seriesLast, now) : v.last !== undefined ? age(v.last, now) : first(v)
  const cell = (f: (v: EventView) => unknown) => (o: Obj) => f(view(o))
  return {
    "Last Seen": cell(last),
    Type: cell((v) => v.type),
    Reason: cell((v) => v.reason),
    Object: cell((v) =>
      v.involvedName !== "" ? `${v.involvedKind.toLowerCase()}/${v.involvedName}` : v.involvedKind.toLowerCase()
    ),
    Subobject: cell((v) => v.fieldPath),
    Source: cell((v) =>
      v.component === "" && v.host === "" ? "" : v.host === "" ? v.component : `${v.component}, ${v.host}`
    ),
    Message: cell((v) => v.message.trim()),
    "First Seen": cell(first),
    Count: cell((v) => v.seriesCount ?? (v.count || 1))
  }
}

// -------------------------------------------------------------------------------------------------------------------
// custom resources: a JSONPath subset (fields, indexes, `*`, `[?(@.k=="v")]`), cells typed as apiextensions types them

const pathTokens = (path: string): Array<string> => {
  const inner = path.trim().replace(/^\{/, "").replace(/\}$/, "")
  const out: Array<string> = []
  const re = /\.?([^.[\]]+)|\[([^\]]*)\]/g
  let m: RegExpExecArray | null
  while ((m = re.exec(inner)) !== null) out.push(m[1] !== undefined ? m[1] : `[${m[2]}]`)
  return out
}

const jsonPath = (obj: Obj, path: string): unknown => {
  let nodes: Array<unknown> = [obj]
  for (const token of pathTokens(path)) {
    const next: Array<unknown> = []
    for (const node of nodes) {
      if (!token.startsWith("[")) {
        if (isObject(node) && token in node) next.push(node[token])
        continue
      }
      const inside = token.slice(1, -1).trim()
      if (!Array.isArray(node)) {
        const key = inside.replace(/^['"]|['"]$/g, "")
        if (isObject(node) && key in node) next.push(node[key])
        continue
      }
      const filter = /^\?\(@\.([\w.-]+)\s*==\s*["']?([^"')]*)["']?\)$/.exec(inside)
      if (inside === "*") { for (const item of node) next.push(item) }
      else if (filter !== null) {
        for (const item of node) {
          if (isObject(item) && String(jsonPath(item, `.${filter[1]}`)) === filter[2]) next.push(item)
        }
      } else if (/^-?\d+$/.test(inside)) {
        const i = Number(inside)
        const item = node[i < 0 ? node.length + i : i]
        if (item !== undefined) next.push(item)
      }
    }
    nodes = next
  }
  return nodes[0]
}

const typedCell = (type: string, value: unknown, now: number): unknown => {
  if (value === undefined || value === null) return null
  switch (type) {
    case "string":
      return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value)
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null
    case "number":
      return typeof value === "number" ? value : null
    case "boolean":
      return typeof value === "boolean" ? value : null
    case "date":
      return typeof value === "string" ? (Number.isNaN(Date.parse(value)) ? "<invalid>" : age(value, now)) : null
    default:
      return value
  }
}

const customColumns = (rt: ResourceType, now: number): ReadonlyArray<Column> => {
  const columns = rt.printerColumns.length > 0
    ? rt.printerColumns
    : [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp", description: CREATED_DOC }]
  return columns.map((c) => ({
    name: c.name,
    type: c.type,
    format: "format" in c && typeof c.format === "string" ? c.format : "",
    description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
    priority: c.priority ?? 0,
    cell: (o: Obj) => typedCell(c.type, jsonPath(o, c.jsonPath), now)
  }))
}

// -------------------------------------------------------------------------------------------------------------------

const workloadCells = (withSelector: boolean): Cells => ({
  Containers: (o) => containers(o.spec?.template).map((c) => str(c.name)).join(","),
  Images: (o) => containers(o.spec?.template).map((c) => str(c.image)).join(","),
  ...(withSelector ? { Selector: (o: Obj) => orNone(formatSelector(o.spec?.selector)) } : {})
})

/** The cells of the kinds printed here (the others' are kindTables.ts'), by column; AGE and CREATED AT built in. */
const kindCells = (rt: ResourceType, now: number): Cells | undefined => {
  switch (`${rt.group}/${rt.kind}`) {
    case "/Namespace":
      return { Status: (o) => str(o.status?.phase) }
    case "/ConfigMap":
      return { Data: (o) => count(o.data) + count(o.binaryData) }
    case "/Secret":
      return { Type: (o) => str(o.type), Data: (o) => count(o.data) }
    case "/Pod":
      return {
        Ready: (o) => podSummary(o, now).ready,
        Status: (o) => podSummary(o, now).reason,
        Restarts: (o) => podSummary(o, now).restarts,
        IP: podIP,
        Node: (o) => orNone(str(o.spec?.nodeName)),
        "Nominated Node": (o) => orNone(str(o.status?.nominatedNodeName)),
        "Readiness Gates": readinessGates
      }
    case "/Service":
      return {
        Type: (o) => str(o.spec?.type),
        "Cluster-IP": (o) => orNone(str(o.spec?.clusterIP)),
        "External-IP": externalIP,
        "Port(s)": servicePorts,
        Selector: (o) => formatLabels(o.spec?.selector)
      }
    case "/Event":
      return eventCells(false, now)
    case "events.k8s.io/Event":
      return eventCells(true, now)
    case "apps/Deployment":
      return {
        Ready: (o) => `${num(o.status?.readyReplicas)}/${num(o.spec?.replicas)}`,
        "Up-to-date": (o) => num(o.status?.updatedReplicas),
        Available: (o) => num(o.status?.availableReplicas),
        ...workloadCells(true)
      }
    case "apps/ReplicaSet":
      return {
        Desired: (o) => (typeof o.spec?.replicas === "number" ? o.spec.replicas : 1),
        Current: (o) => num(o.status?.replicas),
        Ready: (o) => num(o.status?.readyReplicas),
        ...workloadCells(true)
      }
    case "apps/StatefulSet":
      return { Ready: (o) => `${num(o.status?.readyReplicas)}/${num(o.spec?.replicas)}`, ...workloadCells(false) }
    case "coordination.k8s.io/Lease":
      return { Holder: (o) => str(o.spec?.holderIdentity) }
    case "apiextensions.k8s.io/CustomResourceDefinition":
      // the generic table of kube-apiserver (no printer registered): CREATED AT only
      return {}
  }
  return undefined
}

/**
 * The columns after NAME of a built-in kind: upstream's definitions (generated, with their full field
 * documentation), each with its cell; `undefined` for a custom resource.
 */
const kindColumns = (rt: ResourceType, now: number): ReadonlyArray<Column> | undefined =>
  KindTables.columns(rt, now, age, kindCells(rt, now))

const partial = (obj: KubeObject) => ({
  kind: "PartialObjectMetadata",
  apiVersion: "meta.k8s.io/v1",
  metadata: obj.metadata
})

/** The Table of some objects of one kind (`includeObject`: None, Metadata — the default — or Object). */
export const table = (
  rt: ResourceType,
  items: ReadonlyArray<KubeObject>,
  metadata: Record<string, unknown>,
  includeObject: string,
  now: number
) => {
  const isEvent = rt.kind === "Event" && (rt.group === "" || rt.group === "events.k8s.io")
  const nameColumn: Column = {
    name: "Name",
    type: "string",
    format: "name",
    description: NAME_DOC,
    priority: 0,
    cell: (o) => o.metadata?.name
  }
  // the event printers put NAME last, with `-o wide`
  const columns: ReadonlyArray<Column> = isEvent
    ? [...kindColumns(rt, now)!, { ...nameColumn, priority: 1 }]
    : [nameColumn, ...(kindColumns(rt, now) ?? customColumns(rt, now))]
  const isPod = rt.kind === "Pod" && rt.group === ""
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata,
    columnDefinitions: columns.map(({ cell: _, ...c }) => c),
    rows: items.map((item) => {
      const phase = isPod ? (item as Obj).status?.phase : undefined
      const conditions = phase === "Succeeded" ? podSucceeded : phase === "Failed" ? podFailed : undefined
      return {
        cells: columns.map((c) => c.cell(item as Obj) ?? null),
        ...(conditions !== undefined ? { conditions } : {}),
        ...(includeObject === "None" ? {} : { object: includeObject === "Object" ? item : partial(item) })
      }
    })
  }
}

/**
 * A list as `PartialObjectMetadataList`, as kube-apiserver 1.36 sends it: an empty one has `items: null` (a nil
 * slice), and its metadata has no `shardInfo` (the items are selected by a `shardSelector` all the same).
 */
export const partialList = (list: { readonly metadata: unknown; readonly items: ReadonlyArray<KubeObject> }) => ({
  kind: "PartialObjectMetadataList",
  apiVersion: "meta.k8s.io/v1",
  metadata: withoutShardInfo(list.metadata),
  items: list.items.length === 0 ? null : list.items.map(partial)
})

const withoutShardInfo = (metadata: unknown): unknown => {
  if (typeof metadata !== "object" || metadata === null || !("shardInfo" in metadata)) return metadata
  const { shardInfo: _, ...rest } = metadata as Record<string, unknown>
  return rest
}

/** One object as `PartialObjectMetadata`. */
export const partialObject = partial
