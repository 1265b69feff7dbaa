/**
 * The job controller of the simulated kube-controller-manager (`controllerManager.ts`), as kube-controller-manager
 * 1.36 drives a Job whose Pods all succeed:
 *
 * - Pods `<job>-<5 chars>` (Indexed: `<job>-<index>-<5 chars>`, with the completion-index annotation and label and
 *   `hostname` `<job>-<index>`) from the pod template, owned by the Job (controller, blockOwnerDeletion), as many as
 *   `min(parallelism, completions - succeeded)` at once; `SuccessfulCreate` events;
 * - a Job Pod runs `podReadyDelay` after it starts, like every Pod, and is `Succeeded` at that moment (its
 *   containers terminated, exit code 0, reason `Completed`: watchers see it Running, then Succeeded), as a kubelet
 *   running a short command reports it;
 * - `status`: `startTime` on the first sync, `active`, `ready`, `succeeded`, `terminating: 0`,
 *   `uncountedTerminatedPods: {}`, `completedIndexes` (Indexed), then `completionTime` and the `SuccessCriteriaMet`
 *   and `Complete` conditions (reason `CompletionsReached`) and a `Completed` event once `completions` Pods
 *   succeeded; a suspended Job deletes its active Pods and has a `Suspended` condition (`JobSuspended`; `JobResumed`
 *   when resumed, `startTime` restarting).
 *
 * Not simulated: failures (Pods never fail: no `backoffLimit`, `podFailurePolicy`, `Failed` condition),
 * `activeDeadlineSeconds`, `ttlSecondsAfterFinished`, the `batch.kubernetes.io/job-tracking` Pod finalizer, and the
 * CronJob controller (CronJobs are stored, never run).
 */
import { isObject, type Obj } from "./json.js"

/** What the job controller needs from the manager (its reads, writes and recorder). */
export interface JobHost {
  readonly now: () => string
  readonly jobPods: (job: Obj) => Array<Obj>
  readonly createPod: (job: Obj, pod: Obj) => Obj | undefined
  readonly deletePod: (pod: Obj) => void
  readonly writeStatus: (job: Obj, status: Obj) => void
  readonly event: (about: Obj, reason: string, message: string) => void
}

const indexAnnotation = "batch.kubernetes.io/job-completion-index"

const isFinished = (pod: Obj): boolean => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed"
const isReady = (pod: Obj): boolean =>
  (pod.status?.conditions ?? []).some((c: Obj) => c?.type === "Ready" && c.status === "True")
const indexOf = (pod: Obj): number => Number(pod.metadata.annotations?.[indexAnnotation] ?? -1)

const conditionTrue = (job: Obj, type: string): boolean =>
  (job.status?.conditions ?? []).some((c: Obj) => c?.type === type && c.status === "True")

/** Whether a Job is finished (Complete or Failed): nothing more happens to it. */
export const isJobFinished = (job: Obj): boolean => conditionTrue(job, "Complete") || conditionTrue(job, "Failed")

/** `0,1,2,4` as the job controller writes `completedIndexes`: `0-2,4`. */
export const formatIndexes = (indexes: ReadonlyArray<number>): string => {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b)
  const out: Array<string> = []
  for (let i = 0; i < sorted.length;) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  return out.join(",")
}

/** One sync of a Job (`syncJob`): Pods toward its parallelism, then its status. */
export const syncJob = (host: JobHost, job: Obj): void => {
  if (job.metadata.deletionTimestamp !== undefined || isJobFinished(job)) return
  const spec: Obj = isObject(job.spec) ? job.spec : {}
  const now = host.now()
  const indexed = spec.completionMode === "Indexed"
  const completions = typeof spec.completions === "number" ? spec.completions : undefined
  const parallelism = typeof spec.parallelism === "number" ? spec.parallelism : 1
  const suspended = spec.suspend === true
  const pods = host.jobPods(job)
  const succeededPods = pods.filter((p) => p.status?.phase === "Succeeded")
  const completedIndexes = indexed
    ? [...new Set(succeededPods.map(indexOf).filter((i) => i >= 0 && (completions === undefined || i < completions)))]
    : []
  let succeeded = indexed ? completedIndexes.length : succeededPods.length
  // pods already counted by an earlier status stay counted (deleted Pods keep their success), as with the finalizer
  if (!indexed && typeof job.status?.succeeded === "number") succeeded = Math.max(succeeded, job.status.succeeded)
  let active = pods.filter((p) => !isFinished(p))

  const conditions: Array<Obj> = Array.isArray(job.status?.conditions) ? [...job.status.conditions] : []
  const setCondition = (type: string, status: string, reason: string, message: string): boolean => {
    const i = conditions.findIndex((c) => c?.type === type)
    if (i >= 0 && conditions[i].status === status) return false
    const next = { type, status, lastProbeTime: now, lastTransitionTime: now, reason, message }
    if (i >= 0) conditions[i] = next
    else conditions.push(next)
    return true
  }
  let startTime: string | undefined = job.status?.startTime
  if (suspended) {
    for (const pod of active) host.deletePod(pod)
    active = []
    if (setCondition("Suspended", "True", "JobSuspended", "Job suspended")) {
      host.event(job, "Suspended", "Job suspended")
    }
    startTime = undefined
  } else {
    if (conditionTrue(job, "Suspended")) {
      setCondition("Suspended", "False", "JobResumed", "Job resumed")
      host.event(job, "Resumed", "Job resumed")
      startTime = undefined
    }
    startTime ??= now
  }

  const done = completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0
  if (!suspended && !done) {
    const remaining = completions === undefined ? parallelism : Math.max(0, completions - succeeded)
    const want = Math.min(parallelism, remaining)
    const running = new Set(active.map(indexOf))
    const finished = new Set(completedIndexes)
    const freeIndexes: Array<number> = []
    if (indexed) {
      for (let i = 0; i < (completions ?? 0) && freeIndexes.length < want - active.length; i++) {
        if (!running.has(i) && !finished.has(i)) freeIndexes.push(i)
      }
    }
    for (let n = active.length; n < want; n++) {
      const index = indexed ? freeIndexes.shift() : undefined
      if (indexed && index === undefined) break
      const template: Obj = isObject(spec.template) ? spec.template : {}
      const labels: Obj = { ...template.metadata?.labels }
      const annotations: Obj = { ...template.metadata?.annotations }
      const podSpec: Obj = structuredClone(template.spec ?? {})
      if (index !== undefined) {
        annotations[indexAnnotation] = String(index)
        labels[indexAnnotation] = String(index)
        podSpec.hostname ??= `${job.metadata.name}-${index}`
        podSpec.subdomain ??= spec.subdomain
        if (podSpec.subdomain === undefined) delete podSpec.subdomain
      }
      const pod = host.createPod(job, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          generateName: index !== undefined ? `${job.metadata.name}-${index}-` : `${job.metadata.name}-`,
          namespace: job.metadata.namespace,
          ...(Object.keys(labels).length > 0 ? { labels } : {}),
          ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
          ownerReferences: [{
            apiVersion: "batch/v1",
            kind: "Job",
            name: job.metadata.name,
            uid: job.metadata.uid,
            controller: true,
            blockOwnerDeletion: true
          }]
        },
        spec: podSpec
      })
      if (pod === undefined) break
      host.event(job, "SuccessfulCreate", `Created pod: ${pod.metadata.name}`)
      active.push(pod)
    }
  }

  const status: Obj = {
    ...(startTime !== undefined ? { startTime } : {}),
    ...(active.length > 0 ? { active: active.length } : {}),
    ...(succeeded > 0 ? { succeeded } : {}),
    terminating: 0,
    ...(indexed && completedIndexes.length > 0 ? { completedIndexes: formatIndexes(completedIndexes) } : {}),
    uncountedTerminatedPods: {},
    ready: active.filter(isReady).length
  }
  if (!suspended && done) {
    setCondition("SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods")
    setCondition("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods")
    status.completionTime = now
  }
  if (conditions.length > 0) status.conditions = conditions
  host.writeStatus(job, status)
  if (!suspended && done) host.event(job, "Completed", "Job completed")
}
