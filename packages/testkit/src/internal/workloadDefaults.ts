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

// ---------------------------------------------------------------------------------------------------------------
// the other built-in kinds (compared, object by object, with what kube-apiserver 1.36 stores)

/** The label keys the job controller's selector and Pods carry (`batch.kubernetes.io/…` and the legacy ones). */
export const jobLabels = {
  controllerUid: "batch.kubernetes.io/controller-uid",
  legacyControllerUid: "controller-uid",
  jobName: "batch.kubernetes.io/job-name",
  legacyJobName: "job-name"
} as const

/** `SetDefaults_Job` (the selector and the labels it generates are the create strategy's, {@link admitJob}). */
const defaultJob = (job: Obj): void => {
  if (!isObject(job.spec)) job.spec = {}
  const spec = job.spec
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1
    spec.parallelism = 1
  }
  setDefault(spec, "parallelism", 1)
  setDefault(spec, "backoffLimit", spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6)
  setDefault(spec, "completionMode", "NonIndexed")
  setDefault(spec, "suspend", false)
  setDefault(spec, "podReplacementPolicy", isObject(spec.podFailurePolicy) ? "Failed" : "TerminatingOrFailed")
  setDefault(spec, "manualSelector", false)
  if (!isObject(spec.template)) spec.template = {}
  setDefault(spec.template, "metadata", {})
  defaultPodSpec(spec.template.spec)
  const templateLabels = spec.template.metadata?.labels
  if (isObject(templateLabels) && (!isObject(job.metadata.labels) || Object.keys(job.metadata.labels).length === 0)) {
    job.metadata.labels = { ...templateLabels }
  }
}

/**
 * The Job create strategy's `generateSelector`: unless `manualSelector`, the selector is the Job's uid and the pod
 * template gets the uid and name labels (the Job's own labels follow, when it has none).
 */
const admitJob = (job: Obj): void => {
  if (!isObject(job.spec)) job.spec = {}
  const spec = job.spec
  if (spec.manualSelector === true) return
  const uid = job.metadata.uid as string
  if (!isObject(spec.template)) spec.template = {}
  if (!isObject(spec.template.metadata)) spec.template.metadata = {}
  const labels: Obj = { ...spec.template.metadata.labels }
  setDefault(labels, jobLabels.legacyControllerUid, uid)
  setDefault(labels, jobLabels.controllerUid, uid)
  setDefault(labels, jobLabels.legacyJobName, job.metadata.name)
  setDefault(labels, jobLabels.jobName, job.metadata.name)
  spec.template.metadata.labels = labels
  const selector: Obj = isObject(spec.selector) ? { ...spec.selector } : {}
  selector.matchLabels = { ...selector.matchLabels, [jobLabels.controllerUid]: uid }
  spec.selector = selector
  if (!isObject(job.metadata.labels) || Object.keys(job.metadata.labels).length === 0) {
    job.metadata.labels = { ...labels }
  }
}

/** `SetDefaults_CronJob`; the job template gets the pod template's defaults only (not a Job's). */
const defaultCronJob = (cj: Obj): void => {
  const spec = cj.spec
  if (!isObject(spec)) return
  setDefault(spec, "concurrencyPolicy", "Allow")
  setDefault(spec, "suspend", false)
  setDefault(spec, "successfulJobsHistoryLimit", 3)
  setDefault(spec, "failedJobsHistoryLimit", 1)
  if (!isObject(spec.jobTemplate)) return
  setDefault(spec.jobTemplate, "metadata", {})
  if (!isObject(spec.jobTemplate.spec)) return
  if (!isObject(spec.jobTemplate.spec.template)) spec.jobTemplate.spec.template = {}
  setDefault(spec.jobTemplate.spec.template, "metadata", {})
  defaultPodSpec(spec.jobTemplate.spec.template.spec)
}

/** `SetDefaults_DaemonSet` (apps/v1). */
const defaultDaemonSet = (ds: Obj): void => {
  const spec = ds.spec
  if (!isObject(spec)) return
  if (!isObject(spec.updateStrategy)) spec.updateStrategy = {}
  setDefault(spec.updateStrategy, "type", "RollingUpdate")
  if (spec.updateStrategy.type === "RollingUpdate") {
    if (!isObject(spec.updateStrategy.rollingUpdate)) spec.updateStrategy.rollingUpdate = {}
    setDefault(spec.updateStrategy.rollingUpdate, "maxUnavailable", 1)
    setDefault(spec.updateStrategy.rollingUpdate, "maxSurge", 0)
  }
  setDefault(spec, "revisionHistoryLimit", 10)
  defaultTemplate(spec)
}

/** `SetDefaults_PersistentVolumeClaimSpec` (also the StatefulSet's claim templates). */
const defaultClaimSpec = (spec: unknown): void => {
  if (isObject(spec)) setDefault(spec, "volumeMode", "Filesystem")
}

/** `SetDefaults_StatefulSet` (apps/v1), with its claim templates as PersistentVolumeClaims. */
const defaultStatefulSet = (sts: Obj): void => {
  const spec = sts.spec
  if (!isObject(spec)) return
  setDefault(spec, "podManagementPolicy", "OrderedReady")
  if (!isObject(spec.updateStrategy)) spec.updateStrategy = {}
  setDefault(spec.updateStrategy, "type", "RollingUpdate")
  if (spec.updateStrategy.type === "RollingUpdate") {
    if (!isObject(spec.updateStrategy.rollingUpdate)) spec.updateStrategy.rollingUpdate = {}
    setDefault(spec.updateStrategy.rollingUpdate, "partition", 0)
  }
  if (!isObject(spec.persistentVolumeClaimRetentionPolicy)) spec.persistentVolumeClaimRetentionPolicy = {}
  setDefault(spec.persistentVolumeClaimRetentionPolicy, "whenDeleted", "Retain")
  setDefault(spec.persistentVolumeClaimRetentionPolicy, "whenScaled", "Retain")
  setDefault(spec, "replicas", 1)
  setDefault(spec, "revisionHistoryLimit", 10)
  setDefault(spec, "serviceName", "")
  if (Array.isArray(spec.volumeClaimTemplates)) {
    spec.volumeClaimTemplates = spec.volumeClaimTemplates.map((t: unknown) => {
      if (!isObject(t)) return t
      defaultClaimSpec(t.spec)
      return { apiVersion: "v1", kind: "PersistentVolumeClaim", ...t, status: { phase: "Pending", ...t.status } }
    })
  }
  defaultTemplate(spec)
}

/** `SetDefaults_ReplicationController`: replicas 1, selector and labels from the template's labels. */
const defaultReplicationController = (rc: Obj): void => {
  const spec = rc.spec
  if (!isObject(spec)) return
  const labels = isObject(spec.template) && isObject(spec.template.metadata?.labels)
    ? spec.template.metadata.labels
    : undefined
  if (labels !== undefined) {
    if (!isObject(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels }
    if (!isObject(rc.metadata.labels) || Object.keys(rc.metadata.labels).length === 0) {
      rc.metadata.labels = { ...labels }
    }
  }
  setDefault(spec, "replicas", 1)
  defaultTemplate(spec)
}

/** `SetDefaults_HorizontalPodAutoscaler` (v2: CPU at 80% when no metric is given; v1: its CPU target). */
const defaultHorizontalPodAutoscaler = (hpa: Obj, version: string): void => {
  const spec = hpa.spec
  if (!isObject(spec)) return
  setDefault(spec, "minReplicas", 1)
  if (version === "v1") setDefault(spec, "targetCPUUtilizationPercentage", 80)
  else if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } }
    }]
  }
}

/** `SetDefaults_NetworkPolicy`: Ingress always, Egress when there are egress rules. */
const defaultNetworkPolicy = (np: Obj): void => {
  const spec = np.spec
  if (!isObject(spec)) return
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length > 0 ? ["Ingress", "Egress"] : ["Ingress"]
  }
}

/** Admission webhooks' defaults (`SetDefaults_ValidatingWebhook`, `…MutatingWebhook`, their rules). */
const defaultWebhooks = (config: Obj, mutating: boolean): void => {
  if (!Array.isArray(config.webhooks)) return
  for (const w of config.webhooks) {
    if (!isObject(w)) continue
    setDefault(w, "failurePolicy", "Fail")
    setDefault(w, "matchPolicy", "Equivalent")
    setDefault(w, "namespaceSelector", {})
    setDefault(w, "objectSelector", {})
    setDefault(w, "timeoutSeconds", 10)
    if (mutating) setDefault(w, "reinvocationPolicy", "Never")
    if (isObject(w.clientConfig) && isObject(w.clientConfig.service)) setDefault(w.clientConfig.service, "port", 443)
    if (Array.isArray(w.rules)) { for (const r of w.rules) if (isObject(r)) setDefault(r, "scope", "*") }
  }
}

const defaultPorts = (ports: unknown): void => {
  if (Array.isArray(ports)) { for (const p of ports) if (isObject(p)) setDefault(p, "protocol", "TCP") }
}

/**
 * The defaults kube-apiserver applies on every write (decoding) to the built-in kinds `validation.ts` does not
 * default itself.
 */
export const defaultBuiltin = (group: string, version: string, kind: string, obj: Obj): void => {
  switch (`${group}/${kind}`) {
    case "batch/Job":
      return defaultJob(obj)
    case "batch/CronJob":
      return defaultCronJob(obj)
    case "apps/DaemonSet":
      return defaultDaemonSet(obj)
    case "apps/StatefulSet":
      return defaultStatefulSet(obj)
    case "/ReplicationController":
      return defaultReplicationController(obj)
    case "/PodTemplate":
      if (isObject(obj.template)) {
        setDefault(obj.template, "metadata", {})
        defaultPodSpec(obj.template.spec)
      }
      return
    case "/PersistentVolumeClaim":
      return defaultClaimSpec(obj.spec)
    case "/PersistentVolume":
      if (isObject(obj.spec)) {
        setDefault(obj.spec, "persistentVolumeReclaimPolicy", "Retain")
        setDefault(obj.spec, "volumeMode", "Filesystem")
        if (isObject(obj.spec.hostPath)) setDefault(obj.spec.hostPath, "type", "")
      }
      return
    case "/Endpoints":
      if (Array.isArray(obj.subsets)) { for (const s of obj.subsets) if (isObject(s)) defaultPorts(s.ports) }
      return
    case "discovery.k8s.io/EndpointSlice":
      if (Array.isArray(obj.ports)) {
        for (const p of obj.ports) {
          if (isObject(p)) {
            setDefault(p, "name", "")
            setDefault(p, "protocol", "TCP")
          }
        }
      }
      if (Array.isArray(obj.endpoints)) {
        for (const e of obj.endpoints) {
          if (isObject(e)) setDefault(e, "conditions", {})
        }
      }
      return
    case "autoscaling/HorizontalPodAutoscaler":
      return defaultHorizontalPodAutoscaler(obj, version)
    case "networking.k8s.io/NetworkPolicy":
      return defaultNetworkPolicy(obj)
    case "scheduling.k8s.io/PriorityClass":
      return setDefault(obj, "preemptionPolicy", "PreemptLowerPriority")
    case "/LimitRange":
      if (isObject(obj.spec) && Array.isArray(obj.spec.limits)) {
        for (const item of obj.spec.limits) {
          if (!isObject(item) || item.type !== "Container") continue
          // SetDefaults_LimitRangeItem: a max is the default limit, a default limit the default request
          if (isObject(item.max)) item.default = { ...item.max, ...item.default }
          if (isObject(item.default)) item.defaultRequest = { ...item.default, ...item.defaultRequest }
        }
      }
      return
    case "storage.k8s.io/StorageClass":
      setDefault(obj, "reclaimPolicy", "Delete")
      return setDefault(obj, "volumeBindingMode", "Immediate")
    case "admissionregistration.k8s.io/ValidatingWebhookConfiguration":
      return defaultWebhooks(obj, false)
    case "admissionregistration.k8s.io/MutatingWebhookConfiguration":
      return defaultWebhooks(obj, true)
  }
}

const notReadyTaint = { key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }
const nodeInfoFields = [
  "machineID",
  "systemUUID",
  "bootID",
  "kernelVersion",
  "osImage",
  "containerRuntimeVersion",
  "kubeletVersion",
  "kubeProxyVersion",
  "operatingSystem",
  "architecture"
]

/**
 * What kube-apiserver's create strategies (and default admission plugins) add to the built-in kinds `validation.ts`
 * does not handle: the status a new object starts with (the zero values its Go type prints) and the Job's generated
 * selector.
 */
export const admitBuiltin = (group: string, version: string, kind: string, obj: Obj, now: string): void => {
  switch (`${group}/${kind}`) {
    case "batch/Job":
      admitJob(obj)
      obj.status = {}
      return
    case "batch/CronJob":
      obj.status = {}
      return
    case "apps/DaemonSet":
      obj.metadata.annotations = { ...obj.metadata.annotations, "deprecated.daemonset.template.generation": "1" }
      obj.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }
      return
    case "policy/PodDisruptionBudget":
      obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }
      return
    case "/ResourceQuota":
      obj.status = {}
      return
    case "/Node":
      // the TaintNodesByCondition admission plugin; the status a NodeStatus' zero values print
      obj.spec = { ...obj.spec, taints: [...(obj.spec?.taints ?? []), notReadyTaint] }
      obj.status = {
        daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
        nodeInfo: Object.fromEntries(nodeInfoFields.map((f) => [f, ""]))
      }
      return
    case "apps/StatefulSet":
      obj.status = { replicas: 0, availableReplicas: 0 }
      return
    case "/ReplicationController":
      obj.status = { replicas: 0 }
      return
    case "/PersistentVolumeClaim":
      // no `kubernetes.io/pvc-protection` finalizer (StorageObjectInUseProtection): nothing would remove it
      obj.status = { phase: "Pending" }
      return
    case "/PersistentVolume":
      obj.status = { phase: "Pending", lastPhaseTransitionTime: now }
      return
    case "autoscaling/HorizontalPodAutoscaler":
      obj.status = version === "v1"
        ? { currentReplicas: 0, desiredReplicas: 0 }
        : { currentMetrics: null, desiredReplicas: 0 }
      return
    case "networking.k8s.io/Ingress":
      obj.status = { loadBalancer: {} }
      return
  }
}
