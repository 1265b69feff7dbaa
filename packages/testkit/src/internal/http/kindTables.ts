/**
 * The cells of kube-apiserver's table printers (`pkg/printers/internalversion`) for the built-in kinds
 * `tableResponse.ts` does not print itself: one function per column, by `group/resource` and column name; the column
 * definitions (names, types, descriptions, which are `-o wide`) are upstream's, generated
 * (`tableColumns.generated.ts`). A kind without cells here prints NAME and AGE.
 */
import type { ResourceType } from "../../ResourceType.js"
import { isObject, type Obj } from "../json.js"
import { formatSelector } from "../scale.js"
import { tableColumns } from "./tableColumns.generated.js"

/** The time of the request and `tableResponse.ts`'s `age` (apimachinery's `duration.HumanDuration`). */
interface Clock {
  readonly now: number
  readonly age: (created: string | undefined, now: number) => string
}

type Cell = (o: Obj, clock: Clock) => unknown

/** A column as `tableResponse.ts` prints it. */
export interface KindColumn {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
  readonly cell: (o: Obj) => unknown
}

const list = (value: unknown): Array<Obj> => (Array.isArray(value) ? value.filter(isObject) : [])
const str = (value: unknown): string => (typeof value === "string" ? value : "")
const num = (value: unknown): number => (typeof value === "number" ? value : 0)
const orNone = (value: string): string => (value === "" ? "<none>" : value)
const quantity = (value: unknown): string => (typeof value === "number" ? String(value) : str(value))

/** `labels.FormatLabels`: `k=v,k2=v2` sorted by key, `<none>` when empty. */
const formatLabels = (labels: unknown): string => {
  if (!isObject(labels)) return "<none>"
  const keys = Object.keys(labels).sort()
  return keys.length === 0 ? "<none>" : keys.map((k) => `${k}=${String(labels[k])}`).join(",")
}

/** `metav1.FormatLabelSelector`: `<none>` for an empty selector. */
const labelSelector = (selector: unknown): string => orNone(formatSelector(selector))

const containersOf = (podSpec: unknown): Array<Obj> => list(isObject(podSpec) ? podSpec.containers : undefined)
const containerNames = (podSpec: unknown): string => containersOf(podSpec).map((c) => str(c.name)).join(",")
const images = (podSpec: unknown): string => containersOf(podSpec).map((c) => str(c.image)).join(",")

const hasCondition = (o: Obj, type: string): boolean =>
  list(o.status?.conditions).some((c) => c.type === type && c.status === "True")

/** A list of at most three items, then ` + N more...` (`formatHosts`, `formatEndpoints`). */
const firstThree = (items: ReadonlyArray<string>): string =>
  items.length > 3 ? `${items.slice(0, 3).join(",")} + ${items.length - 3} more...` : items.join(",")

const accessModes = (modes: unknown): string => {
  const short: Record<string, string> = {
    ReadWriteOnce: "RWO",
    ReadOnlyMany: "ROX",
    ReadWriteMany: "RWX",
    ReadWriteOncePod: "RWOP"
  }
  const given = Array.isArray(modes) ? modes.map(String) : []
  return ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"].filter((m) => given.includes(m))
    .map((m) => short[m]).join(",")
}

const created: Cell = (o, { age, now }) => age(o.metadata?.creationTimestamp, now)
const createdAt: Cell = (o) => str(o.metadata?.creationTimestamp).replace(/\.\d+Z$/, "Z")

const replicaColumns = (template: (o: Obj) => unknown, selector: Cell): Record<string, Cell> => ({
  Containers: (o) => containerNames((template(o) as Obj | undefined)?.spec),
  Images: (o) => images((template(o) as Obj | undefined)?.spec),
  Selector: selector
})

const loadBalancer = (o: Obj): string =>
  list(o.status?.loadBalancer?.ingress).map((i) => str(i.ip) || str(i.hostname)).filter((s) => s !== "").join(",")

const subjects = (kind: string) => (o: Obj): string =>
  list(o.subjects).filter((s) => s.kind === kind).map((s) =>
    kind === "ServiceAccount" ? `${str(s.namespace)}:${str(s.name)}` : str(s.name)
  ).join(", ")

/** `HPA` targets: `cpu: <unknown>/80%` per metric (current values from `status.currentMetrics` when there). */
const hpaTargets = (o: Obj): string => {
  const metrics = list(o.spec?.metrics)
  if (o.apiVersion === "autoscaling/v1" || (metrics.length === 0 && o.spec?.targetCPUUtilizationPercentage)) {
    const target = o.spec?.targetCPUUtilizationPercentage
    const current = o.status?.currentCPUUtilizationPercentage
    return target === undefined ? "<none>" : `cpu: ${current === undefined ? "<unknown>" : `${current}%`}/${target}%`
  }
  if (metrics.length === 0) return "<none>"
  const current = list(o.status?.currentMetrics)
  const parts = metrics.map((m, i) => {
    const source = (m.resource ?? m.containerResource ?? m.pods ?? m.object ?? m.external ?? {}) as Obj
    const target: Obj = source.target ?? {}
    const now = (current[i]?.[String(m.type).charAt(0).toLowerCase() + String(m.type).slice(1)]?.current ?? {}) as Obj
    const name = m.type === "Resource" || m.type === "ContainerResource" ? `${str(source.name)}: ` : ""
    if (target.type === "Utilization") {
      const value = now.averageUtilization
      return `${name}${value === undefined ? "<unknown>" : `${value}%`}/${num(target.averageUtilization)}%`
    }
    const wanted = target.type === "AverageValue" ? target.averageValue : target.value
    const value = target.type === "AverageValue" ? now.averageValue : now.value
    return `${name}${value === undefined ? "<unknown>" : quantity(value)}/${quantity(wanted)}${
      target.type === "AverageValue" && m.type !== "Resource" ? " (avg)" : ""
    }`
  })
  return parts.length > 4 ? `${parts.slice(0, 4).join(", ")} + ${parts.length - 4} more...` : parts.join(", ")
}

const nodeStatus = (o: Obj): string => {
  const ready = list(o.status?.conditions).find((c) => c.type === "Ready")
  const status = ready === undefined ? "Unknown" : ready.status === "True" ? "Ready" : "NotReady"
  return o.spec?.unschedulable === true ? `${status},SchedulingDisabled` : status
}

const nodeAddress = (type: string) => (o: Obj): string =>
  orNone(list(o.status?.addresses).filter((a) => a.type === type).map((a) => str(a.address)).join(","))

const quotaPairs = (o: Obj, limits: boolean): string => {
  const hard: Obj = isObject(o.spec?.hard) ? o.spec.hard : {}
  return Object.keys(hard).sort().filter((r) => r.startsWith("limits.") === limits).map((r) =>
    `${r}: ${quantity(o.status?.used?.[r]) || "0"}/${quantity(o.status?.hard?.[r]) || "0"}`
  ).join(", ")
}

const cells: Readonly<Record<string, Record<string, Cell>>> = {
  "batch/jobs": {
    Status: (o) =>
      hasCondition(o, "Complete")
        ? "Complete"
        : hasCondition(o, "Failed")
        ? "Failed"
        : o.metadata?.deletionTimestamp !== undefined
        ? "Terminating"
        : hasCondition(o, "Suspended")
        ? "Suspended"
        : hasCondition(o, "FailureTarget")
        ? "FailureTarget"
        : hasCondition(o, "SuccessCriteriaMet")
        ? "SuccessCriteriaMet"
        : "Running",
    Completions: (o) => {
      const succeeded = num(o.status?.succeeded)
      if (typeof o.spec?.completions === "number") return `${succeeded}/${o.spec.completions}`
      const parallelism = num(o.spec?.parallelism)
      return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`
    },
    Duration: (o, { age, now }) => {
      const start = str(o.status?.startTime)
      if (start === "") return ""
      const end = str(o.status?.completionTime)
      return age(start, end === "" ? now : Date.parse(end))
    },
    ...replicaColumns((o) => o.spec?.template, (o) => labelSelector(o.spec?.selector))
  },
  "batch/cronjobs": {
    Schedule: (o) => str(o.spec?.schedule),
    Timezone: (o) => orNone(str(o.spec?.timeZone)),
    // `printBoolPtr`: a string
    Suspend: (o) => (typeof o.spec?.suspend === "boolean" ? (o.spec.suspend ? "True" : "False") : "<unset>"),
    Active: (o) => list(o.status?.active).length,
    "Last Schedule": (o, { age, now }) =>
      typeof o.status?.lastScheduleTime === "string" ? age(o.status.lastScheduleTime, now) : "<none>",
    ...replicaColumns(
      (o) => o.spec?.jobTemplate?.spec?.template,
      (o) => labelSelector(o.spec?.jobTemplate?.spec?.selector)
    )
  },
  "apps/daemonsets": {
    Desired: (o) => num(o.status?.desiredNumberScheduled),
    Current: (o) => num(o.status?.currentNumberScheduled),
    Ready: (o) => num(o.status?.numberReady),
    "Up-to-date": (o) => num(o.status?.updatedNumberScheduled),
    Available: (o) => num(o.status?.numberAvailable),
    "Node Selector": (o) => formatLabels(o.spec?.template?.spec?.nodeSelector),
    ...replicaColumns((o) => o.spec?.template, (o) => labelSelector(o.spec?.selector))
  },
  "apps/controllerrevisions": {
    Controller: (o) => {
      const owner = list(o.metadata?.ownerReferences).find((r) => r.controller === true)
      if (owner === undefined) return "<none>"
      const group = str(owner.apiVersion).includes("/") ? str(owner.apiVersion).split("/")[0] : ""
      return `${String(owner.kind).toLowerCase()}${group === "" ? "" : `.${group}`}/${str(owner.name)}`
    },
    Revision: (o) => num(o.revision)
  },
  "/replicationcontrollers": {
    Desired: (o) => (typeof o.spec?.replicas === "number" ? o.spec.replicas : 1),
    Current: (o) => num(o.status?.replicas),
    Ready: (o) => num(o.status?.readyReplicas),
    ...replicaColumns((o) => o.spec?.template, (o) => formatLabels(o.spec?.selector))
  },
  "/podtemplates": {
    Containers: (o) => containerNames(o.template?.spec),
    Images: (o) => images(o.template?.spec),
    "Pod Labels": (o) => formatLabels(o.template?.metadata?.labels)
  },
  "/endpoints": {
    Endpoints: (o) => {
      const out: Array<string> = []
      for (const s of list(o.subsets)) {
        const ports = list(s.ports)
        for (const a of list(s.addresses)) {
          if (ports.length === 0) out.push(str(a.ip))
          for (const p of ports) out.push(`${str(a.ip)}:${num(p.port)}`)
        }
      }
      return orNone(firstThree(out))
    }
  },
  "/persistentvolumeclaims": {
    Status: (o) => (o.metadata?.deletionTimestamp !== undefined ? "Terminating" : str(o.status?.phase)),
    Volume: (o) => str(o.spec?.volumeName),
    Capacity: (o) => (str(o.spec?.volumeName) === "" ? "" : quantity(o.status?.capacity?.storage)),
    "Access Modes": (o) => (str(o.spec?.volumeName) === "" ? "" : accessModes(o.status?.accessModes)),
    StorageClass: (o) => str(o.spec?.storageClassName),
    VolumeAttributesClass: (o) => str(o.spec?.volumeAttributesClassName) || "<unset>",
    VolumeMode: (o) => str(o.spec?.volumeMode) || "<unset>"
  },
  "/persistentvolumes": {
    Capacity: (o) => quantity(o.spec?.capacity?.storage),
    "Access Modes": (o) => accessModes(o.spec?.accessModes),
    "Reclaim Policy": (o) => str(o.spec?.persistentVolumeReclaimPolicy),
    Status: (o) => (o.metadata?.deletionTimestamp !== undefined ? "Terminating" : str(o.status?.phase)),
    Claim: (o) => isObject(o.spec?.claimRef) ? `${str(o.spec.claimRef.namespace)}/${str(o.spec.claimRef.name)}` : "",
    StorageClass: (o) => str(o.spec?.storageClassName),
    VolumeAttributesClass: (o) => str(o.spec?.volumeAttributesClassName) || "<unset>",
    Reason: (o) => str(o.status?.reason),
    VolumeMode: (o) => str(o.spec?.volumeMode) || "<unset>"
  },
  "/nodes": {
    Status: nodeStatus,
    Roles: (o) =>
      orNone(
        Object.keys(o.metadata?.labels ?? {}).filter((k) => k.startsWith("node-role.kubernetes.io/")).map((k) =>
          k.slice("node-role.kubernetes.io/".length)
        ).filter((r) => r !== "").sort().join(",")
      ),
    Version: (o) => str(o.status?.nodeInfo?.kubeletVersion),
    "Internal-IP": nodeAddress("InternalIP"),
    "External-IP": nodeAddress("ExternalIP"),
    "OS-Image": (o) => orNone(str(o.status?.nodeInfo?.osImage)),
    "Kernel-Version": (o) => orNone(str(o.status?.nodeInfo?.kernelVersion)),
    "Container-Runtime": (o) => orNone(str(o.status?.nodeInfo?.containerRuntimeVersion))
  },
  "/resourcequotas": { Request: (o) => quotaPairs(o, false), Limit: (o) => quotaPairs(o, true) },
  "/limitranges": {},
  "networking.k8s.io/ingresses": {
    Class: (o) => orNone(str(o.spec?.ingressClassName)),
    Hosts: (o) => {
      const hosts = list(o.spec?.rules).map((r) => str(r.host)).filter((h) => h !== "")
      return hosts.length === 0 ? "*" : firstThree(hosts)
    },
    Address: loadBalancer,
    Ports: (o) => (list(o.spec?.tls).length > 0 ? "80, 443" : "80")
  },
  "networking.k8s.io/ingressclasses": {
    Controller: (o) => str(o.spec?.controller),
    Parameters: (o) => {
      const p = o.spec?.parameters
      if (!isObject(p)) return "<none>"
      const group = str(p.apiGroup)
      return `${str(p.kind)}${group === "" ? "" : `.${group}`}/${str(p.name)}`
    }
  },
  "networking.k8s.io/networkpolicies": { "Pod-Selector": (o) => labelSelector(o.spec?.podSelector) },
  "networking.k8s.io/servicecidrs": { CIDRs: (o) => (Array.isArray(o.spec?.cidrs) ? o.spec.cidrs.join(",") : "") },
  "discovery.k8s.io/endpointslices": {
    AddressType: (o) => str(o.addressType),
    Ports: (o) => {
      const ports = list(o.ports)
      return ports.length === 0
        ? "<unset>"
        : ports.map((p) => (p.port === undefined ? "<unset>" : num(p.port))).join(",")
    },
    Endpoints: (o) => {
      const addresses = list(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : []))
      return addresses.length === 0 ? "<unset>" : firstThree(addresses)
    }
  },
  "policy/poddisruptionbudgets": {
    "Min Available": (o) => (o.spec?.minAvailable === undefined ? "N/A" : String(o.spec.minAvailable)),
    "Max Unavailable": (o) => (o.spec?.maxUnavailable === undefined ? "N/A" : String(o.spec.maxUnavailable)),
    "Allowed Disruptions": (o) => num(o.status?.disruptionsAllowed)
  },
  "autoscaling/horizontalpodautoscalers": {
    Reference: (o) => `${str(o.spec?.scaleTargetRef?.kind)}/${str(o.spec?.scaleTargetRef?.name)}`,
    Targets: hpaTargets,
    MinPods: (o) => (typeof o.spec?.minReplicas === "number" ? String(o.spec.minReplicas) : "<unset>"),
    MaxPods: (o) => String(num(o.spec?.maxReplicas)),
    Replicas: (o) => String(num(o.status?.currentReplicas))
  },
  "rbac.authorization.k8s.io/roles": {},
  "rbac.authorization.k8s.io/clusterroles": {},
  ...Object.fromEntries(
    ["rolebindings", "clusterrolebindings"].map((plural) => [`rbac.authorization.k8s.io/${plural}`, {
      Role: (o: Obj) => `${str(o.roleRef?.kind)}/${str(o.roleRef?.name)}`,
      Users: subjects("User"),
      Groups: subjects("Group"),
      ServiceAccounts: subjects("ServiceAccount")
    }])
  ),
  "/serviceaccounts": {},
  "scheduling.k8s.io/priorityclasses": {
    Value: (o) => num(o.value),
    "Global-Default": (o) => o.globalDefault === true,
    PreemptionPolicy: (o) => str(o.preemptionPolicy)
  },
  "storage.k8s.io/storageclasses": {
    Provisioner: (o) => str(o.provisioner),
    ReclaimPolicy: (o) => str(o.reclaimPolicy) || "Delete",
    VolumeBindingMode: (o) => str(o.volumeBindingMode) || "Immediate",
    AllowVolumeExpansion: (o) => String(o.allowVolumeExpansion === true)
  },
  "storage.k8s.io/csistoragecapacities": {},
  "node.k8s.io/runtimeclasses": { Handler: (o) => str(o.handler) },
  ...Object.fromEntries(
    ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"].map((plural) => [
      `admissionregistration.k8s.io/${plural}`,
      { Webhooks: (o: Obj) => list(o.webhooks).length }
    ])
  ),
  "apiregistration.k8s.io/apiservices": {
    Service: (o) =>
      isObject(o.spec?.service) ? `${str(o.spec.service.namespace)}/${str(o.spec.service.name)}` : "Local",
    Available: (o) => {
      const c = list(o.status?.conditions).find((x) => x.type === "Available")
      if (c === undefined) return "Unknown"
      return c.status === "True" ? "True" : `${str(c.status)} (${str(c.reason)})`
    }
  },
  "resource.k8s.io/deviceclasses": {},
  "resource.k8s.io/resourceclaimtemplates": {}
}

/**
 * The NAME-less columns of a built-in kind, upstream's definitions (every field, `format` included, empty or not)
 * with the cells here, or the `own` cells a caller prints itself (by column name; AGE and CREATED AT are built in);
 * `undefined` for a kind with neither.
 */
export const columns = (
  rt: ResourceType,
  now: number,
  age: (created: string | undefined, now: number) => string,
  own?: Readonly<Record<string, (o: Obj) => unknown>>
): ReadonlyArray<KindColumn> | undefined => {
  const clock: Clock = { now, age }
  const kindCells: Record<string, Cell> | undefined = own === undefined
    ? cells[`${rt.group}/${rt.plural}`]
    : Object.fromEntries(Object.entries(own).map(([name, cell]) => [name, (o: Obj) => cell(o)]))
  const defs = tableColumns[`${rt.group}/${rt.plural}`]
  if (kindCells === undefined || defs === undefined) return undefined
  return defs.map(([name, type, format, priority, description]) => {
    const cell = name === "Age" ? created : name === "Created At" ? createdAt : kindCells[name]
    return { name, type, format, description, priority, cell: (o: Obj) => (cell === undefined ? "" : cell(o, clock)) }
  })
}
