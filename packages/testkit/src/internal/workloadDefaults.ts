/**
 * Server-side defaulting of the workload kinds, as kube-apiserver's defaulting functions (`SetDefaults_Deployment`,
 * `SetDefaults_ReplicaSet`, `SetDefaults_PodSpec`, `SetDefaults_Container`, …, apps/v1 and core/v1) and the admission
 * plugins that touch every Pod on create (ServiceAccount, Priority, DefaultTolerationSeconds). Applied on every write
 * (defaulting runs on decode), except the admission part (create only).
 */
import { isObject, type Obj } from "./json.js"

const setDefault = (obj: Obj, key: string, value: unknown): void => {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value
}

/** The image's tag as `parsers.ParseImageName` reads it: `latest` when there is neither a tag nor a digest. */
const imageTag = (image: string): string => {
  const at = image.indexOf("@")
  const named = at >= 0 ? image.slice(0, at) : image
  const lastSlash = named.lastIndexOf("/")
  const colon = named.indexOf(":", lastSlash + 1)
  if (colon >= 0) return named.slice(colon + 1)
  return at >= 0 ? "" : "latest"
}

const defaultProbe = (probe: unknown): void => {
  if (!isObject(probe)) return
  setDefault(probe, "timeoutSeconds", 1)
  setDefault(probe, "periodSeconds", 10)
  setDefault(probe, "successThreshold", 1)
  setDefault(probe, "failureThreshold", 3)
  if (isObject(probe.httpGet)) setDefault(probe.httpGet, "scheme", "HTTP")
  if (isObject(probe.grpc)) setDefault(probe.grpc, "service", "")
}

const defaultContainer = (c: unknown): void => {
  if (!isObject(c)) return
  setDefault(c, "terminationMessagePath", "/dev/termination-log")
  setDefault(c, "terminationMessagePolicy", "File")
  if (typeof c.image === "string") {
    setDefault(c, "imagePullPolicy", imageTag(c.image) === "latest" ? "Always" : "IfNotPresent")
  }
  setDefault(c, "resources", {})
  if (Array.isArray(c.ports)) { for (const p of c.ports) if (isObject(p)) setDefault(p, "protocol", "TCP") }
  if (Array.isArray(c.env)) {
    for (const e of c.env) {
      if (isObject(e) && isObject(e.valueFrom) && isObject(e.valueFrom.fieldRef)) {
        setDefault(e.valueFrom.fieldRef, "apiVersion", "v1")
      }
    }
  }
  defaultProbe(c.livenessProbe)
  defaultProbe(c.readinessProbe)
  defaultProbe(c.startupProbe)
}

const defaultVolume = (v: unknown): void => {
  if (!isObject(v)) return
  for (const source of ["configMap", "secret", "downwardAPI", "projected"]) {
    if (isObject(v[source])) setDefault(v[source], "defaultMode", 420)
  }
  if (isObject(v.hostPath)) setDefault(v.hostPath, "type", "")
}

/** `SetDefaults_PodSpec` and the container/volume defaults under it (pods and pod templates). */
export const defaultPodSpec = (spec: unknown): void => {
  if (!isObject(spec)) return
  setDefault(spec, "dnsPolicy", "ClusterFirst")
  setDefault(spec, "restartPolicy", "Always")
  setDefault(spec, "terminationGracePeriodSeconds", 30)
  setDefault(spec, "securityContext", {})
  setDefault(spec, "schedulerName", "default-scheduler")
  for (const field of ["containers", "initContainers"]) {
    if (Array.isArray(spec[field])) spec[field].forEach(defaultContainer)
  }
  if (Array.isArray(spec.volumes)) spec.volumes.forEach(defaultVolume)
}

/** Defaults of a Pod on every write (`SetDefaults_Pod`: the spec's, plus `enableServiceLinks`). */
export const defaultPod = (pod: Obj): void => {
  if (!isObject(pod.spec)) return
  defaultPodSpec(pod.spec)
  setDefault(pod.spec, "enableServiceLinks", true)
}

/** What the admission plugins of a default kube-apiserver add to a Pod on create. */
export const admitPod = (pod: Obj): void => {
  const spec = pod.spec
  if (!isObject(spec)) return
  // ServiceAccount admission (the projected token volume is not simulated)
  setDefault(spec, "serviceAccountName", "default")
  setDefault(spec, "serviceAccount", spec.serviceAccountName)
  // Priority admission (no PriorityClass: 0 and the default preemption policy)
  setDefault(spec, "priority", 0)
  setDefault(spec, "preemptionPolicy", "PreemptLowerPriority")
  // DefaultTolerationSeconds admission
  const tolerations: Array<Obj> = Array.isArray(spec.tolerations) ? [...spec.tolerations] : []
  for (const key of ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]) {
    if (!tolerations.some((t) => isObject(t) && (t.key === key || (t.key === undefined && t.operator === "Exists")))) {
      tolerations.push({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 })
    }
  }
  spec.tolerations = tolerations
}

const defaultTemplate = (spec: Obj): void => {
  if (isObject(spec.template)) defaultPodSpec(spec.template.spec)
}

/** `SetDefaults_Deployment` (apps/v1). */
export const defaultDeployment = (d: Obj): void => {
  const spec = d.spec
  if (!isObject(spec)) return
  setDefault(spec, "replicas", 1)
  if (!isObject(spec.strategy)) spec.strategy = {}
  setDefault(spec.strategy, "type", "RollingUpdate")
  if (spec.strategy.type === "RollingUpdate") {
    if (!isObject(spec.strategy.rollingUpdate)) spec.strategy.rollingUpdate = {}
    setDefault(spec.strategy.rollingUpdate, "maxUnavailable", "25%")
    setDefault(spec.strategy.rollingUpdate, "maxSurge", "25%")
  }
  setDefault(spec, "revisionHistoryLimit", 10)
  setDefault(spec, "progressDeadlineSeconds", 600)
  defaultTemplate(spec)
}

/** `SetDefaults_ReplicaSet` (apps/v1). */
export const defaultReplicaSet = (rs: Obj): void => {
  const spec = rs.spec
  if (!isObject(spec)) return
  setDefault(spec, "replicas", 1)
  defaultTemplate(spec)
}
