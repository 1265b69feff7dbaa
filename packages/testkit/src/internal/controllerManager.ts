/**
 * A small kube-controller-manager (plus the scheduler and kubelet, as far as Pods need them) over a Core:
 *
 * - the deployment controller: a ReplicaSet per pod template (`<deployment>-<pod-template-hash>`, revision
 *   annotations, controller ownerReference), scaling, RollingUpdate (maxSurge/maxUnavailable against available
 *   Pods) and Recreate, revision history cleanup, `status` with the Available/Progressing conditions and upstream
 *   reasons;
 * - the replicaset controller: Pods `<replicaset>-<5 chars>` owned by their ReplicaSet, `status`;
 * - the job controller (`jobController.ts`): a Job's Pods, which are Succeeded once they ran, and its status;
 * - scheduling and the kubelet: every Pod gets `nodeName` `testkit-node` and runs: Pending at once, Running and
 *   Ready (containers ready, a podIP) `podReadyDelay` later (on Effect's Clock).
 *
 * Every reaction to a change is one synchronous pass over the Core (reads and writes without yielding), so that a
 * `TestClock.adjust` past a Pod's delay finds the ReplicaSet and the Deployment up to date. Writes go straight to
 * the Core: injected faults (`Faults`) are for the clients under test, not for the simulated cluster. Reads come
 * from indexes of the watched kinds (`ownerIndex.ts`) that the manager's watches keep within each write, as
 * kube-controller-manager reads its informers' caches: a sync costs the objects it touches, not the namespace.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import type { ResourceType } from "../ResourceType.js"
import { isJobFinished, type JobHost, syncJob } from "./jobController.js"
import { deepEqual, formatTime, isObject, type Obj } from "./json.js"
import { type EventType, OwnerIndex } from "./ownerIndex.js"
import type { Core } from "./store.js"

/** The options of a running controller manager. */
export interface Config {
  /** From a Pod's start to Running and Ready. */
  podReadyDelayMillis: number
}

/** The default delay from a Pod's creation to Ready. */
export const defaultPodReadyDelay: Duration.Input = "1 second"

/** The label the deployment controller adds to its ReplicaSets and their Pods. */
export const podTemplateHashLabel = "pod-template-hash"
const revisionAnnotation = "deployment.kubernetes.io/revision"
const revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
const desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
const maxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"
/** Deployment annotations not copied to its ReplicaSets (`annotationsToSkip` upstream). */
const annotationsToSkip = new Set([
  "kubectl.kubernetes.io/last-applied-configuration",
  revisionAnnotation,
  revisionHistoryAnnotation,
  desiredReplicasAnnotation,
  maxReplicasAnnotation,
  "deprecated.deployment.rollback.to"
])

/** The node every Pod is scheduled to. */
export const nodeName = "testkit-node"
const hostIP = "172.18.0.2"
const controllerManager = "kube-controller-manager"
const kubelet = "kubelet"

// ---------------------------------------------------------------------------------------------------------------
// the pod-template hash

/** `rand.SafeEncodeString`: each byte of `s` picks a character of an alphabet without vowels (no words). */
const alphanums = "bcdfghjklmnpqrstvwxz2456789"
export const safeEncodeString = (s: string): string => {
  let out = ""
  for (let i = 0; i < s.length; i++) out += alphanums[s.charCodeAt(i) % alphanums.length]
  return out
}

/** FNV-1a, 32 bits. */
const fnv32a = (bytes: Uint8Array, seed = 0x811c9dc5): number => {
  let hash = seed
  for (const b of bytes) {
    hash ^= b
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash >>> 0
}

const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (isObject(value)) {
    return `{${
      Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${canonical(value[k])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value)
}

/**
 * The pod-template hash as `controller.ComputeHash` shapes it: FNV-32a over the template (then over the
 * `collisionCount` as 4 little-endian bytes, when set), its decimal value encoded with `safeEncodeString`. Upstream
 * hashes a dump of the Go struct; this hashes the template's canonical JSON (sorted keys), so the values differ from
 * a real cluster's, but they are stable, change with the template and look the same (up to 10 of those characters).
 */
export const computeHash = (template: unknown, collisionCount?: number): string => {
  let hash = fnv32a(new TextEncoder().encode(canonical(template)))
  if (collisionCount !== undefined) {
    const bytes = new Uint8Array(4)
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true)
    hash = fnv32a(bytes, hash)
  }
  return safeEncodeString(String(hash))
}

// ---------------------------------------------------------------------------------------------------------------
// helpers

const clone = <A>(value: A): A => structuredClone(value)

const controllerOf = (obj: Obj): Obj | undefined =>
  (obj.metadata?.ownerReferences ?? []).find((o: Obj) => o?.controller === true)

const ownerRef = (owner: Obj, apiVersion: string, kind: string): Obj => ({
  apiVersion,
  kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  controller: true,
  blockOwnerDeletion: true
})

const revisionOf = (rs: Obj): number => {
  const n = Number(rs.metadata.annotations?.[revisionAnnotation] ?? "0")
  return Number.isInteger(n) ? n : 0
}

const withoutHash = (template: unknown): Obj => {
  const t = clone(isObject(template) ? template : {})
  if (isObject(t.metadata?.labels)) {
    delete t.metadata.labels[podTemplateHashLabel]
    if (Object.keys(t.metadata.labels).length === 0) delete t.metadata.labels
  }
  return t
}

/** Drops nulls and empty maps and lists: Go's typed, semantic equality does not tell them from absent fields. */
const normalize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(normalize)
  if (isObject(value)) {
    const out: Obj = {}
    for (const [k, v] of Object.entries(value)) {
      const n = normalize(v)
      if (n !== undefined) out[k] = n
    }
    return Object.keys(out).length === 0 ? undefined : out
  }
  return value === null ? undefined : value
}

/**
 * `EqualIgnoreHash`: the templates are equal but for the pod-template-hash label (`kubectl rollout undo` sends the
 * template back with `metadata.creationTimestamp: null`, as Go marshals an ObjectMeta).
 */
const equalIgnoreHash = (a: unknown, b: unknown): boolean =>
  deepEqual(normalize(withoutHash(a)) ?? {}, normalize(withoutHash(b)) ?? {})

/** An int-or-string (`3`, `"25%"`) against `total`, rounded up or down as `intstr.GetScaledValueFromIntOrPercent`. */
const scaled = (value: unknown, total: number, roundUp: boolean): number => {
  if (typeof value === "number") return value
  if (typeof value === "string" && /^\d+%$/.test(value)) {
    const exact = (Number(value.slice(0, -1)) * total) / 100
    return roundUp ? Math.ceil(exact) : Math.floor(exact)
  }
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value)
  return 0
}

/** `ResolveFenceposts`: maxSurge rounded up, maxUnavailable down; never both 0. */
const fenceposts = (d: Obj): { readonly surge: number; readonly unavailable: number } => {
  if (d.spec.strategy?.type === "Recreate") return { surge: 0, unavailable: 0 }
  const desired = replicasOf(d)
  const ru = d.spec.strategy?.rollingUpdate ?? {}
  const surge = scaled(ru.maxSurge ?? "25%", desired, true)
  const unavailable = scaled(ru.maxUnavailable ?? "25%", desired, false)
  return { surge, unavailable: surge === 0 && unavailable === 0 ? 1 : unavailable }
}

const replicasOf = (obj: Obj): number => (typeof obj.spec?.replicas === "number" ? obj.spec.replicas : 1)

const sum = (rss: ReadonlyArray<Obj>, f: (rs: Obj) => number): number => rss.reduce((n, rs) => n + f(rs), 0)
const specReplicas = (rs: Obj): number => replicasOf(rs)
const statusOf = (rs: Obj, field: string): number => (typeof rs.status?.[field] === "number" ? rs.status[field] : 0)

const isPodReady = (pod: Obj): boolean =>
  (pod.status?.conditions ?? []).some((c: Obj) => c?.type === "Ready" && c.status === "True")

/** Drops the zero counters, as the `omitempty` fields of the Go types do. */
const compact = (status: Obj, keep: ReadonlyArray<string> = []): Obj => {
  const out: Obj = {}
  for (const [k, v] of Object.entries(status)) {
    if (v === undefined || (v === 0 && !keep.includes(k))) continue
    out[k] = v
  }
  return out
}

/** An image's repository as the runtime reports it (`nginx:1` → `docker.io/library/nginx`). */
const repository = (image: string): string => {
  const at = image.indexOf("@")
  let name = at >= 0 ? image.slice(0, at) : image
  const colon = name.indexOf(":", name.lastIndexOf("/") + 1)
  if (colon >= 0) name = name.slice(0, colon)
  const first = name.split("/")[0]!
  if (!name.includes("/")) return `docker.io/library/${name}`
  return first.includes(".") || first.includes(":") || first === "localhost" ? name : `docker.io/${name}`
}

const hex = (text: string, length: number): string => createHash("sha256").update(text).digest("hex").slice(0, length)

// ---------------------------------------------------------------------------------------------------------------
// the manager

/**
 * A timer: a Pod waiting for its delay before it is Running and Ready (`pod`), or a ReplicaSet whose Ready Pods
 * become available after its `minReadySeconds` (`available`, after `delayMillis`).
 */
export interface PodTimer {
  readonly key: string
  readonly kind: "pod" | "available"
  readonly namespace: string
  readonly name: string
  readonly uid: string
  readonly delayMillis?: number | undefined
}

/** A watch event the manager reacts to. */
export interface Change {
  readonly kind: string
  readonly object: Obj
  readonly deleted: boolean
}

/** The work of one pass: Pods whose readiness timer must start. */
type Timers = Array<PodTimer>

/**
 * The controllers' synchronous logic over a Core. It reads the kinds it watches from its indexes (`ownerIndex.ts`),
 * which `observe` keeps from the watch events as the Core delivers them (within each write): a ReplicaSet's Pods,
 * a Job's Pods and a Deployment's ReplicaSets are looked up by their controller's uid, not found in a list of the
 * namespace, and what it only reads is never copied.
 */
export class Manager {
  private readonly deployments: ResourceType
  private readonly replicaSets: ResourceType
  private readonly pods: ResourceType
  private readonly jobs: ResourceType
  private readonly events: ResourceType
  private readonly indexes = new Map<ResourceType, OwnerIndex>()
  /** Pods whose start (scheduling, Pending status, timer) was handled, by uid. */
  private readonly started = new Set<string>()
  private nextIp = 0

  constructor(readonly core: Core, readonly config: Config) {
    this.deployments = core.resolveKind("apps/v1", "Deployment")
    this.replicaSets = core.resolveKind("apps/v1", "ReplicaSet")
    this.pods = core.resolveKind("v1", "Pod")
    this.jobs = core.resolveKind("batch/v1", "Job")
    this.events = core.resolveKind("v1", "Event")
    for (const rt of this.watched) this.indexes.set(rt, new OwnerIndex())
  }

  /** The resource types the manager watches. */
  get watched(): ReadonlyArray<ResourceType> {
    return [this.deployments, this.replicaSets, this.pods, this.jobs]
  }

  private now(): string {
    return formatTime(this.core.now())
  }

  /** Follows a watch event of a watched kind (every one of them, in order, before the next read). */
  observe(rt: ResourceType, type: EventType, object: Obj): void {
    this.indexes.get(rt)?.apply(type, object)
  }

  /** The current object of a watched kind (shared with the index: read it, never change it). */
  private tryGet(rt: ResourceType, namespace: string, name: string): Obj | undefined {
    return this.indexes.get(rt)!.get(namespace, name)
  }

  /** The objects of a watched kind in `namespace` controlled by `owner` and not being deleted, by name. */
  private controlledBy(rt: ResourceType, owner: Obj): Array<Obj> {
    return this.indexes.get(rt)!.controlledBy(owner.metadata.namespace, owner.metadata.uid).filter((o) =>
      o.metadata.deletionTimestamp === undefined
    )
  }

  private writeStatus(rt: ResourceType, obj: Obj, status: Obj, manager: string): Obj {
    if (deepEqual(obj.status ?? {}, status)) return obj
    return this.core.update(rt, obj.metadata.namespace, obj.metadata.name, { ...obj, status }, {
      fieldManager: manager,
      subresource: "status"
    }) as Obj
  }

  private update(rt: ResourceType, obj: Obj): Obj {
    return this.core.update(rt, obj.metadata.namespace, obj.metadata.name, obj, {
      fieldManager: controllerManager
    }) as Obj
  }

  /** Records a core/v1 Event about `about` (best effort, as an EventRecorder). */
  private event(about: Obj, component: string, reason: string, message: string, type = "Normal"): void {
    const now = this.now()
    const apiVersion = about.apiVersion ?? (about.kind === "Pod" ? "v1" : "apps/v1")
    try {
      this.core.create(this.events, about.metadata.namespace, {
        apiVersion: "v1",
        kind: "Event",
        metadata: {
          name: `${about.metadata.name}.${hex(`${about.metadata.uid}/${reason}/${message}/${this.core.now()}`, 16)}`,
          namespace: about.metadata.namespace
        },
        involvedObject: {
          apiVersion,
          kind: about.kind,
          name: about.metadata.name,
          namespace: about.metadata.namespace,
          uid: about.metadata.uid,
          resourceVersion: about.metadata.resourceVersion
        },
        reason,
        message,
        source: { component, ...(component === kubelet ? { host: nodeName } : {}) },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: component,
        reportingInstance: component === kubelet ? nodeName : ""
      }, { fieldManager: component })
    } catch {
      // an Event that cannot be written is dropped, as a recorder does
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // entry points (each one pass; errors of a pass are left for the next change to retry)

  /**
   * Reacts to changes of Deployments, ReplicaSets and Pods (coalesced: each Deployment or ReplicaSet they touch is
   * synced once).
   */
  onChanges(changes: ReadonlyArray<Change>): Timers {
    const timers: Timers = []
    const deployments = new Set<string>()
    const replicaSets = new Set<string>()
    const jobs = new Set<string>()
    for (const { deleted, kind, object } of changes) {
      const namespace = object.metadata.namespace as string
      const owner = controllerOf(object)
      if (kind === "Pod") {
        if (deleted) this.started.delete(object.metadata.uid)
        else if (!this.started.has(object.metadata.uid)) this.startPod(object, timers)
        if (owner?.kind === "ReplicaSet") replicaSets.add(`${namespace}/${owner.name}`)
        if (owner?.kind === "Job") jobs.add(`${namespace}/${owner.name}`)
      } else if (kind === "Job") {
        if (!deleted) jobs.add(`${namespace}/${object.metadata.name}`)
      } else if (kind === "ReplicaSet") {
        if (owner?.kind === "Deployment") deployments.add(`${namespace}/${owner.name}`)
        else if (!deleted) replicaSets.add(`${namespace}/${object.metadata.name}`)
      } else if (kind === "Deployment" && !deleted) {
        deployments.add(`${namespace}/${object.metadata.name}`)
      }
    }
    for (const key of replicaSets) {
      const [namespace, name] = key.split("/") as [string, string]
      const rs = this.tryGet(this.replicaSets, namespace, name)
      const owner = rs === undefined ? undefined : controllerOf(rs)
      if (owner?.kind === "Deployment") deployments.add(`${namespace}/${owner.name}`)
      else if (rs !== undefined) this.syncReplicaSet(namespace, name, timers)
    }
    for (const key of deployments) {
      const [namespace, name] = key.split("/") as [string, string]
      this.syncDeployment(namespace, name, timers)
    }
    for (const key of jobs) {
      const [namespace, name] = key.split("/") as [string, string]
      this.syncJob(namespace, name, timers)
    }
    return timers
  }

  /** The delay of a Pod is over: it runs and is Ready; its owners follow (or a ReplicaSet's Pods are available). */
  podReady(timer: PodTimer): Timers {
    const timers: Timers = []
    if (timer.kind === "available") {
      this.syncOwnerOfReplicaSet(timer.namespace, timer.name, timers)
      return timers
    }
    const pod = this.tryGet(this.pods, timer.namespace, timer.name)
    if (pod === undefined || pod.metadata.uid !== timer.uid || pod.metadata.deletionTimestamp !== undefined) return []
    const owner = controllerOf(pod)
    const running = this.runPod(pod)
    if (owner?.kind === "ReplicaSet") this.syncOwnerOfReplicaSet(timer.namespace, owner.name, timers)
    if (owner?.kind === "Job" && owner.apiVersion === "batch/v1") {
      if (running !== undefined) this.completePod(running)
      this.syncJob(timer.namespace, owner.name, timers)
    }
    return timers
  }

  private syncOwnerOfReplicaSet(namespace: string, name: string, timers: Timers): void {
    const rs = this.tryGet(this.replicaSets, namespace, name)
    if (rs === undefined) return
    const owner = controllerOf(rs)
    if (owner?.kind === "Deployment") this.syncDeployment(namespace, owner.name, timers)
    else this.syncReplicaSet(namespace, name, timers)
  }

  // -------------------------------------------------------------------------------------------------------------
  // scheduler + kubelet

  private containerStatuses(pod: Obj, running: boolean, startedAt: string): Array<Obj> {
    return (pod.spec?.containers ?? []).map((c: Obj) => ({
      name: c.name,
      image: c.image,
      imageID: running ? `${repository(String(c.image))}@sha256:${hex(String(c.image), 64)}` : "",
      ...(running ? { containerID: `containerd://${hex(`${pod.metadata.uid}/${c.name}`, 64)}` } : {}),
      ready: running,
      restartCount: 0,
      started: running,
      state: running ? { running: { startedAt } } : { waiting: { reason: "ContainerCreating" } },
      lastState: {}
    }))
  }

  /** Schedules a new Pod (nodeName, Pending status) and starts its readiness timer. */
  private startPod(pod: Obj, timers: Timers): void {
    if (pod.metadata.deletionTimestamp !== undefined) return
    this.started.add(pod.metadata.uid)
    if (pod.status?.phase === "Running" || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") return
    const namespace = pod.metadata.namespace as string
    let current = pod
    try {
      if (pod.spec?.nodeName === undefined) {
        current = this.update(this.pods, { ...pod, spec: { ...pod.spec, nodeName } })
        this.event(
          current,
          "default-scheduler",
          "Scheduled",
          `Successfully assigned ${namespace}/${pod.metadata.name} to ${nodeName}`
        )
      }
      const now = this.now()
      const condition = (type: string, status: string, reason?: string) => ({
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: now,
        ...(reason !== undefined ? { reason } : {})
      })
      const names = (current.spec?.containers ?? []).map((c: Obj) => c.name).join(" ")
      current = this.writeStatus(this.pods, current, {
        phase: "Pending",
        conditions: [
          condition("PodReadyToStartContainers", "False"),
          condition("Initialized", "True"),
          {
            ...condition("Ready", "False", "ContainersNotReady"),
            message: `containers with unready status: [${names}]`
          },
          {
            ...condition("ContainersReady", "False", "ContainersNotReady"),
            message: `containers with unready status: [${names}]`
          },
          condition("PodScheduled", "True")
        ],
        hostIP,
        hostIPs: [{ ip: hostIP }],
        startTime: now,
        containerStatuses: this.containerStatuses(current, false, now),
        qosClass: "BestEffort"
      }, kubelet)
    } catch {
      return
    }
    timers.push({
      kind: "pod",
      key: `${namespace}/${current.metadata.name}/${current.metadata.uid}`,
      namespace,
      name: current.metadata.name,
      uid: current.metadata.uid
    })
  }

  private runPod(pod: Obj): Obj | undefined {
    if (pod.status?.phase === "Running") return pod
    const now = this.now()
    const n = this.nextIp++
    const podIP = `10.244.${Math.floor(n / 250) % 250}.${(n % 250) + 2}`
    const condition = (type: string) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: now })
    try {
      for (const c of pod.spec?.containers ?? []) {
        this.event(pod, kubelet, "Pulled", `Container image "${c.image}" already present on machine`)
        this.event(pod, kubelet, "Created", `Created container ${c.name}`)
        this.event(pod, kubelet, "Started", `Started container ${c.name}`)
      }
      return this.writeStatus(this.pods, pod, {
        phase: "Running",
        conditions: [
          condition("PodReadyToStartContainers"),
          condition("Initialized"),
          condition("Ready"),
          condition("ContainersReady"),
          condition("PodScheduled")
        ],
        hostIP,
        hostIPs: [{ ip: hostIP }],
        podIP,
        podIPs: [{ ip: podIP }],
        startTime: pod.status?.startTime ?? now,
        containerStatuses: this.containerStatuses(pod, true, now),
        qosClass: pod.status?.qosClass ?? "BestEffort"
      }, kubelet)
    } catch {
      // the Pod changed or went away meanwhile: the next change retries
      return undefined
    }
  }

  /** A Job's Pod has run its command: Succeeded, its containers terminated with exit code 0 (`Completed`). */
  private completePod(pod: Obj): void {
    const now = this.now()
    const condition = (type: string, status: string, reason?: string) => ({
      type,
      status,
      lastProbeTime: null,
      lastTransitionTime: now,
      ...(reason !== undefined ? { reason } : {})
    })
    try {
      this.writeStatus(this.pods, pod, {
        ...pod.status,
        phase: "Succeeded",
        conditions: [
          condition("PodReadyToStartContainers", "False"),
          condition("Initialized", "True"),
          condition("Ready", "False", "PodCompleted"),
          condition("ContainersReady", "False", "PodCompleted"),
          condition("PodScheduled", "True")
        ],
        containerStatuses: (pod.status?.containerStatuses ?? []).map((c: Obj) => ({
          ...c,
          ready: false,
          started: false,
          state: {
            terminated: {
              exitCode: 0,
              reason: "Completed",
              startedAt: c.state?.running?.startedAt ?? now,
              finishedAt: now,
              containerID: c.containerID
            }
          }
        }))
      }, kubelet)
    } catch {
      // the Pod changed or went away meanwhile
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // job controller (jobController.ts)

  private syncJob(namespace: string, name: string, timers: Timers): void {
    const job = this.tryGet(this.jobs, namespace, name)
    if (job === undefined || isJobFinished(job)) return
    const host: JobHost = {
      now: () => this.now(),
      jobPods: (j) => this.controlledBy(this.pods, j),
      createPod: (_, draft) => {
        try {
          const pod = this.core.create(this.pods, namespace, draft, { fieldManager: controllerManager }) as Obj
          this.startPod(pod, timers)
          return this.tryGet(this.pods, namespace, pod.metadata.name) ?? pod
        } catch {
          return undefined
        }
      },
      deletePod: (pod) => {
        try {
          this.core.delete(this.pods, namespace, pod.metadata.name, {})
        } catch {
          // already gone
        }
        this.started.delete(pod.metadata.uid)
      },
      writeStatus: (j, status) => {
        try {
          this.writeStatus(this.jobs, j, status, controllerManager)
        } catch {
          // a conflicting write: the event it made brings another pass
        }
      },
      event: (about, reason, message) => this.event(about, "job-controller", reason, message)
    }
    syncJob(host, job)
  }

  // -------------------------------------------------------------------------------------------------------------
  // replicaset controller

  private podsOf(rs: Obj): Array<Obj> {
    return this.controlledBy(this.pods, rs)
  }

  /** Creates or deletes Pods toward `spec.replicas`, then writes the ReplicaSet's status. Returns the fresh RS. */
  private syncReplicaSet(namespace: string, name: string, timers: Timers): Obj | undefined {
    let rs = this.tryGet(this.replicaSets, namespace, name)
    if (rs === undefined || rs.metadata.deletionTimestamp !== undefined) return rs
    const pods = this.podsOf(rs)
    const want = replicasOf(rs)
    if (pods.length < want) {
      for (let i = pods.length; i < want; i++) {
        const template = rs.spec.template ?? {}
        try {
          const pod = this.core.create(this.pods, namespace, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              generateName: `${name}-`,
              namespace,
              ...(template.metadata?.labels !== undefined ? { labels: clone(template.metadata.labels) } : {}),
              ...(template.metadata?.annotations !== undefined
                ? { annotations: clone(template.metadata.annotations) }
                : {}),
              ownerReferences: [ownerRef(rs, "apps/v1", "ReplicaSet")]
            },
            spec: clone(template.spec ?? {})
          }, { fieldManager: controllerManager }) as Obj
          this.event(rs, "replicaset-controller", "SuccessfulCreate", `Created pod: ${pod.metadata.name}`)
          this.startPod(pod, timers)
          pods.push(this.tryGet(this.pods, namespace, pod.metadata.name) ?? pod)
        } catch {
          break
        }
      }
    } else if (pods.length > want) {
      // not ready first, then the newest (`ActivePodsWithRanks`, simplified)
      const victims = [...pods].sort((a, b) => {
        const ready = Number(isPodReady(a)) - Number(isPodReady(b))
        if (ready !== 0) return ready
        return String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)) ||
          String(b.metadata.name).localeCompare(String(a.metadata.name))
      }).slice(0, pods.length - want)
      for (const victim of victims) {
        try {
          this.core.delete(this.pods, namespace, victim.metadata.name, {})
          this.event(rs, "replicaset-controller", "SuccessfulDelete", `Deleted pod: ${victim.metadata.name}`)
        } catch {
          // already gone
        }
        this.started.delete(victim.metadata.uid)
        pods.splice(pods.indexOf(victim), 1)
      }
    }
    rs = this.tryGet(this.replicaSets, namespace, name)
    if (rs === undefined) return undefined
    const live = this.podsOf(rs)
    const selector = rs.spec.selector?.matchLabels ?? {}
    const ready = live.filter(isPodReady).length
    // available: Ready for minReadySeconds (`IsPodAvailable`); a timer comes back for those not yet there
    const minReadyMillis = (typeof rs.spec.minReadySeconds === "number" ? rs.spec.minReadySeconds : 0) * 1000
    const now = this.core.now()
    const readySince = (p: Obj): number =>
      Date.parse((p.status?.conditions ?? []).find((c: Obj) => c?.type === "Ready")?.lastTransitionTime ?? "") || 0
    const available = live.filter((p) => isPodReady(p) && readySince(p) + minReadyMillis <= now).length
    if (available < ready) {
      const next = Math.min(...live.filter(isPodReady).map(readySince).filter((t) => t + minReadyMillis > now))
      timers.push({
        kind: "available",
        key: `${namespace}/${name}/available/${next + minReadyMillis}`, // one per moment: never the running timer
        namespace,
        name,
        uid: rs.metadata.uid,
        delayMillis: Math.max(1, next + minReadyMillis - now)
      })
    }
    const status = compact({
      replicas: live.length,
      fullyLabeledReplicas: live.filter((p) =>
        Object.entries(selector).every(([k, v]) => p.metadata.labels?.[k] === v)
      ).length,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata.generation
    }, ["replicas"])
    try {
      return this.writeStatus(this.replicaSets, rs, status, controllerManager)
    } catch {
      return rs
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // deployment controller

  private replicaSetsOf(d: Obj): Array<Obj> {
    return this.indexes.get(this.replicaSets)!.controlledBy(d.metadata.namespace, d.metadata.uid)
      .sort((a, b) =>
        String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)) ||
        String(a.metadata.name).localeCompare(String(b.metadata.name))
      )
  }

  /** Scales a ReplicaSet (with the replicas annotations) and records the ScalingReplicaSet event. */
  private scale(d: Obj, rs: Obj, replicas: number): Obj {
    const desired = replicasOf(d)
    const max = desired + fenceposts(d).surge
    const annotations = {
      ...rs.metadata.annotations,
      [desiredReplicasAnnotation]: String(desired),
      [maxReplicasAnnotation]: String(max)
    }
    const from = replicasOf(rs)
    if (from === replicas && deepEqual(annotations, rs.metadata.annotations)) return rs
    const updated = this.update(this.replicaSets, {
      ...rs,
      metadata: { ...rs.metadata, annotations },
      spec: { ...rs.spec, replicas }
    })
    if (from !== replicas) {
      this.event(
        d,
        "deployment-controller",
        "ScalingReplicaSet",
        `Scaled ${replicas > from ? "up" : "down"} replica set ${rs.metadata.name} from ${from} to ${replicas}`
      )
    }
    return updated
  }

  private syncDeployment(namespace: string, name: string, timers: Timers): void {
    // a few rounds: scaling old ReplicaSets down (their Pods go at once) can let the new one grow in the same pass
    for (let round = 0; round < 8; round++) {
      const d = this.tryGet(this.deployments, namespace, name)
      if (d === undefined || d.metadata.deletionTimestamp !== undefined || !isObject(d.spec)) return
      let changed: boolean
      try {
        changed = this.reconcileDeployment(d, timers)
      } catch {
        return
      }
      if (!changed) return
    }
  }

  /** One round of the deployment controller; true when it scaled or created something. */
  private reconcileDeployment(d: Obj, timers: Timers): boolean {
    const namespace = d.metadata.namespace as string
    // the ReplicaSets first (their Pods and status), so that availability is current
    let all = this.replicaSetsOf(d).map((rs) => this.syncReplicaSet(namespace, rs.metadata.name, timers) ?? rs)
    let created = false
    let changed = false
    let newRS = all.find((rs) => equalIgnoreHash(rs.spec?.template, d.spec.template))
    const olds = () => all.filter((rs) => rs !== newRS)
    const maxOldRevision = Math.max(0, ...olds().map(revisionOf))
    const desired = replicasOf(d)
    const { surge, unavailable } = fenceposts(d)
    const recreate = d.spec.strategy?.type === "Recreate"
    const paused = d.spec.paused === true

    if (newRS !== undefined) {
      // sync the revision (an old template coming back — a rollback — becomes the newest revision) and annotations
      const annotations = this.replicaSetAnnotations(d, newRS, maxOldRevision + 1)
      const minReadySeconds = d.spec.minReadySeconds ?? 0
      if (
        !deepEqual(annotations, newRS.metadata.annotations ?? {}) ||
        (newRS.spec.minReadySeconds ?? 0) !== minReadySeconds
      ) {
        const spec = { ...newRS.spec, minReadySeconds }
        if (minReadySeconds === 0) delete spec.minReadySeconds
        newRS = this.update(this.replicaSets, { ...newRS, metadata: { ...newRS.metadata, annotations }, spec })
        all = all.map((rs) => (rs.metadata.uid === newRS!.metadata.uid ? newRS! : rs))
      }
    } else if (!paused) {
      const activeOld = olds().filter((rs) => replicasOf(rs) > 0 || statusOf(rs, "replicas") > 0)
      if (recreate && activeOld.length > 0) {
        // Recreate: the old Pods go first
        for (const rs of activeOld) this.scale(d, rs, 0)
        for (const rs of activeOld) this.syncReplicaSet(namespace, rs.metadata.name, timers)
        return true
      }
      const current = sum(olds(), specReplicas)
      const replicas = recreate ? desired : Math.max(0, Math.min(desired + surge - current, desired))
      newRS = this.createReplicaSet(d, maxOldRevision + 1, replicas)
      all = [...all, newRS]
      created = true
      changed = true
    }

    // scaling
    if (newRS !== undefined && !paused) {
      const oldRSs = olds()
      if (recreate) {
        const activeOld = oldRSs.filter((rs) => replicasOf(rs) > 0)
        for (const rs of activeOld) changed = this.scale(d, rs, 0) !== rs || changed
        if (activeOld.length === 0 && oldRSs.every((rs) => statusOf(rs, "replicas") === 0)) {
          const scaledRS = this.scale(d, newRS, desired)
          changed = changed || scaledRS !== newRS
          newRS = scaledRS
        }
      } else {
        // reconcileNewReplicaSet
        const newReplicas = replicasOf(newRS)
        let target = newReplicas
        if (newReplicas > desired) target = desired
        else if (newReplicas < desired) {
          const current = sum(all.map((rs) => (rs === newRS ? newRS! : rs)), specReplicas)
          const room = desired + surge - current
          target = room > 0 ? Math.min(newReplicas + room, desired) : newReplicas
        }
        if (target !== newReplicas || !this.replicasAnnotated(d, newRS)) {
          newRS = this.scale(d, newRS, target)
          changed = changed || target !== newReplicas
        }
        // reconcileOldReplicaSets
        const oldActive = oldRSs.filter((rs) => replicasOf(rs) > 0)
        if (oldActive.length > 0) {
          const allPods = sum(oldRSs, specReplicas) + replicasOf(newRS)
          const minAvailable = desired - unavailable
          const newUnavailable = replicasOf(newRS) - statusOf(newRS, "availableReplicas")
          const maxScaledDown = allPods - minAvailable - newUnavailable
          if (maxScaledDown > 0) {
            // old ReplicaSets' unavailable Pods may go at once; then available ones down to minAvailable
            let budget = maxScaledDown
            for (const rs of oldActive) {
              if (budget <= 0) break
              const unhealthy = replicasOf(rs) - statusOf(rs, "availableReplicas")
              const cut = Math.min(budget, Math.max(0, unhealthy))
              if (cut > 0) {
                this.scale(d, rs, replicasOf(rs) - cut)
                budget -= cut
                changed = true
              }
            }
            const fresh = this.replicaSetsOf(d)
            const available = sum(fresh, (rs) => statusOf(rs, "availableReplicas"))
            let down = Math.min(budget, available - minAvailable)
            for (const rs of fresh.filter((rs) => rs.metadata.uid !== newRS!.metadata.uid && replicasOf(rs) > 0)) {
              if (down <= 0) break
              const cut = Math.min(down, replicasOf(rs))
              this.scale(d, rs, replicasOf(rs) - cut)
              down -= cut
              changed = true
            }
          }
        }
      }
    } else if (newRS !== undefined && paused && olds().every((rs) => replicasOf(rs) === 0)) {
      // paused: scaling only
      if (replicasOf(newRS) !== desired) {
        newRS = this.scale(d, newRS, desired)
        changed = true
      }
    }

    // the ReplicaSets' own controller, then the Deployment's status
    const fresh: Array<Obj> = []
    for (const rs of this.replicaSetsOf(d)) {
      const synced = this.syncReplicaSet(namespace, rs.metadata.name, timers)
      if (synced !== undefined) fresh.push(synced)
    }
    const current = fresh.find((rs) => newRS !== undefined && rs.metadata.uid === newRS.metadata.uid)
    this.cleanup(d, fresh.filter((rs) => rs !== current))
    this.writeDeploymentStatus(d, fresh, current, created)
    return changed
  }

  private replicasAnnotated(d: Obj, rs: Obj): boolean {
    const a = rs.metadata.annotations ?? {}
    return a[desiredReplicasAnnotation] === String(replicasOf(d)) &&
      a[maxReplicasAnnotation] === String(replicasOf(d) + fenceposts(d).surge)
  }

  /** `SetNewReplicaSetAnnotations`: the Deployment's annotations, the revision (and the revision history). */
  private replicaSetAnnotations(d: Obj, rs: Obj, revision: number): Obj {
    const annotations: Obj = { ...rs.metadata.annotations }
    for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
      if (!annotationsToSkip.has(k)) annotations[k] = v
    }
    const old = annotations[revisionAnnotation] as string | undefined
    if (old === undefined || Number(old) < revision) {
      annotations[revisionAnnotation] = String(revision)
      if (old !== undefined) {
        const history = annotations[revisionHistoryAnnotation] as string | undefined
        annotations[revisionHistoryAnnotation] = history === undefined || history === "" ? old : `${history},${old}`
      }
    }
    return annotations
  }

  private createReplicaSet(d: Obj, revision: number, replicas: number): Obj {
    const hash = computeHash(d.spec.template, d.status?.collisionCount)
    const template = clone(d.spec.template ?? {})
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [podTemplateHashLabel]: hash }
    }
    const selector = clone(d.spec.selector ?? {})
    selector.matchLabels = { ...selector.matchLabels, [podTemplateHashLabel]: hash }
    const draft: Obj = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        labels: { ...d.spec.template?.metadata?.labels, [podTemplateHashLabel]: hash },
        annotations: {},
        ownerReferences: [ownerRef(d, "apps/v1", "Deployment")]
      },
      spec: {
        replicas,
        minReadySeconds: d.spec.minReadySeconds ?? 0,
        selector,
        template
      }
    }
    draft.metadata.annotations = {
      ...this.replicaSetAnnotations(d, draft, revision),
      [desiredReplicasAnnotation]: String(replicasOf(d)),
      [maxReplicasAnnotation]: String(replicasOf(d) + fenceposts(d).surge)
    }
    if (draft.spec.minReadySeconds === 0) delete draft.spec.minReadySeconds
    const rs = this.core.create(this.replicaSets, d.metadata.namespace, draft, {
      fieldManager: controllerManager
    }) as Obj
    if (replicas > 0) {
      this.event(
        d,
        "deployment-controller",
        "ScalingReplicaSet",
        `Scaled up replica set ${rs.metadata.name} from 0 to ${replicas}`
      )
    }
    return rs
  }

  /** Deletes the oldest inactive ReplicaSets beyond `revisionHistoryLimit`. */
  private cleanup(d: Obj, oldRSs: ReadonlyArray<Obj>): void {
    const limit = typeof d.spec.revisionHistoryLimit === "number" ? d.spec.revisionHistoryLimit : 10
    const inactive = oldRSs.filter((rs) => replicasOf(rs) === 0 && statusOf(rs, "replicas") === 0)
      .sort((a, b) => revisionOf(a) - revisionOf(b))
    for (const rs of inactive.slice(0, Math.max(0, inactive.length - limit))) {
      try {
        this.core.delete(this.replicaSets, rs.metadata.namespace, rs.metadata.name, {})
      } catch {
        // already gone
      }
    }
  }

  private writeDeploymentStatus(
    d: Obj,
    all: ReadonlyArray<Obj>,
    newRS: Obj | undefined,
    created: boolean
  ): void {
    const desired = replicasOf(d)
    const { unavailable } = fenceposts(d)
    const available = sum(all, (rs) => statusOf(rs, "availableReplicas"))
    const total = sum(all, specReplicas)
    const status: Obj = compact({
      observedGeneration: d.metadata.generation,
      replicas: sum(all, (rs) => statusOf(rs, "replicas")),
      updatedReplicas: newRS === undefined ? 0 : statusOf(newRS, "replicas"),
      readyReplicas: sum(all, (rs) => statusOf(rs, "readyReplicas")),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, total - available),
      collisionCount: d.status?.collisionCount
    })
    const conditions: Array<Obj> = Array.isArray(d.status?.conditions) ? clone(d.status.conditions) : []
    const now = this.now()
    const set = (type: string, value: string, reason: string, message: string, touch = false) => {
      const i = conditions.findIndex((c) => c.type === type)
      const old = conditions[i]
      if (old !== undefined && old.status === value && old.reason === reason) {
        if (old.message !== message || touch) conditions[i] = { ...old, message, lastUpdateTime: now }
        return
      }
      const next = {
        type,
        status: value,
        lastUpdateTime: now,
        lastTransitionTime: old !== undefined && old.status === value ? old.lastTransitionTime : now,
        reason,
        message
      }
      if (i >= 0) conditions[i] = next
      else conditions.push(next)
    }
    if (available >= desired - unavailable) {
      set("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    } else {
      set("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
    }
    const name = newRS?.metadata.name
    const complete = newRS !== undefined && (status.updatedReplicas ?? 0) === desired &&
      (status.replicas ?? 0) === desired && available === desired
    if (d.spec.paused === true) {
      set("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
    } else if (complete) {
      set("Progressing", "True", "NewReplicaSetAvailable", `ReplicaSet "${name}" has successfully progressed.`)
    } else if (name !== undefined && progressing(d.status ?? {}, status)) {
      // any progress (`DeploymentProgressing`): ReplicaSetUpdated, its lastUpdateTime renewed
      set("Progressing", "True", "ReplicaSetUpdated", `ReplicaSet "${name}" is progressing.`, true)
    } else if (created) {
      set("Progressing", "True", "NewReplicaSetCreated", `Created new replica set "${name}"`)
    } else if (name !== undefined && conditions.find((c) => c.type === "Progressing") === undefined) {
      set("Progressing", "True", "FoundNewReplicaSet", `Found new replica set "${name}"`)
    }
    // Available first, then Progressing (as the controller's first sync leaves them)
    conditions.sort((a, b) => order(a.type) - order(b.type))
    if (conditions.length > 0) status.conditions = conditions
    try {
      let current = d
      if (newRS !== undefined) {
        const revision = newRS.metadata.annotations?.[revisionAnnotation]
        if (revision !== undefined && d.metadata.annotations?.[revisionAnnotation] !== revision) {
          current = this.update(this.deployments, {
            ...d,
            metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, [revisionAnnotation]: revision } }
          })
        }
      }
      this.writeStatus(this.deployments, current, status, controllerManager)
    } catch {
      // a conflicting write: the event it made brings another pass
    }
  }
}

/** `DeploymentProgressing`: more updated, ready or available Pods, or fewer old ones, than the last status said. */
const progressing = (before: Obj, after: Obj): boolean => {
  const n = (status: Obj, field: string): number => (typeof status[field] === "number" ? status[field] : 0)
  return n(after, "updatedReplicas") > n(before, "updatedReplicas") ||
    n(after, "replicas") - n(after, "updatedReplicas") < n(before, "replicas") - n(before, "updatedReplicas") ||
    n(after, "readyReplicas") > n(before, "readyReplicas") ||
    n(after, "availableReplicas") > n(before, "availableReplicas")
}

const order = (type: string): number => (type === "Available" ? 0 : type === "Progressing" ? 1 : 2)

// ---------------------------------------------------------------------------------------------------------------
// running it

const running = new WeakMap<Core, Config>()

/**
 * Runs the controller manager over `core` in scope. One per Core: while one runs, another start only updates its
 * options (the last options win) and ends with its scope.
 */
export const run = (
  core: Core,
  options: { readonly podReadyDelay?: Duration.Input | undefined } = {}
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const podReadyDelayMillis = Duration.toMillis(
      Duration.fromInputUnsafe(options.podReadyDelay ?? defaultPodReadyDelay)
    )
    const existing = running.get(core)
    if (existing !== undefined) {
      existing.podReadyDelayMillis = podReadyDelayMillis
      return
    }
    const config: Config = { podReadyDelayMillis }
    running.set(core, config)
    yield* Effect.addFinalizer(() => Effect.sync(() => running.delete(core)))
    const manager = new Manager(core, config)
    const timers = yield* FiberMap.make<string>()
    const changes = yield* Queue.unbounded<Change>()

    const startTimers = (list: ReadonlyArray<PodTimer>): Effect.Effect<void> =>
      Effect.forEach(list, (timer) =>
        FiberMap.run(
          timers,
          timer.key,
          Effect.suspend(() => Effect.sleep(Duration.millis(timer.delayMillis ?? config.podReadyDelayMillis))).pipe(
            Effect.andThen(Effect.suspend(() => startTimers(manager.podReady(timer))))
          ),
          // started at once, so its sleep is registered before TestClock.adjust looks
          { startImmediately: true }
        ), { discard: true })

    for (const rt of manager.watched) {
      // delivered within each write: the index is current when the write returns
      const handle = core.watch(rt, undefined, {}, (event) => {
        if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED") {
          manager.observe(rt, event.type, event.object as Obj)
          Queue.offerUnsafe(changes, { kind: rt.kind, object: event.object as Obj, deleted: event.type === "DELETED" })
        }
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => handle.close()))
    }
    // what queued up while a pass ran is handled in one pass
    yield* Queue.takeAll(changes).pipe(
      Effect.flatMap((batch) => startTimers(manager.onChanges(batch))),
      Effect.forever,
      Effect.forkScoped({ startImmediately: true })
    )
  })
