/**
 * Validation (422 Invalid causes) of the built-in kinds served besides the core ones `validation.ts` checks: what
 * kube-apiserver 1.36 refuses in the objects operators commonly create (Jobs, CronJobs, DaemonSets, StatefulSets,
 * Ingresses, PodDisruptionBudgets, HorizontalPodAutoscalers, PersistentVolumeClaims), worded as upstream (each
 * message compared with a real server's answer to the same object). Only the checks listed here run: the OpenAPI
 * models' `required` lists are not enforced, as they are not upstream (a PriorityClass without `value` is valid).
 */
import type { StatusCause } from "../ApiError.js"
import { deepEqual, isObject, type Obj } from "./json.js"
import { fromLabelSelector, matches } from "./labelSelector.js"
import { jobLabels } from "./workloadDefaults.js"

type Causes = Array<StatusCause>

const invalid = (causes: Causes, field: string, value: unknown, detail: string): void => {
  causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field })
}
const required = (causes: Causes, field: string, detail?: string): void => {
  causes.push({
    reason: "FieldValueRequired",
    message: detail === undefined ? "Required value" : `Required value: ${detail}`,
    field
  })
}

const containers = (spec: unknown, path: string, causes: Causes): void => {
  const list = isObject(spec) ? spec.containers : undefined
  if (!Array.isArray(list) || list.length === 0) return required(causes, `${path}.containers`)
  list.forEach((c: Obj, i: number) => {
    if (typeof c?.name !== "string" || c.name === "") required(causes, `${path}.containers[${i}].name`)
    if (typeof c?.image !== "string" || c.image === "") required(causes, `${path}.containers[${i}].image`)
  })
}

/** A selector and a pod template whose labels it must match (apps/v1 workloads; a Job with `manualSelector`). */
const selectorAndTemplate = (spec: Obj, path: string, causes: Causes, old: Obj | undefined): void => {
  if (!isObject(spec.selector)) required(causes, `${path}.selector`)
  const labels = spec.template?.metadata?.labels
  const reqs = isObject(spec.selector) ? fromLabelSelector(spec.selector) : []
  if (isObject(spec.selector) && reqs.length === 0) {
    invalid(causes, `${path}.selector`, spec.selector, "empty selector is invalid for deployment")
  } else if (!isObject(spec.selector) || !matches(reqs, labels)) {
    // a missing selector selects nothing (`LabelSelectorAsSelector(nil)`)
    invalid(causes, `${path}.template.metadata.labels`, labels ?? {}, "`selector` does not match template `labels`")
  }
  if (old !== undefined && isObject(old.spec) && !deepEqual(old.spec.selector, spec.selector)) {
    invalid(causes, `${path}.selector`, spec.selector, "field is immutable")
  }
}

const jobSpec = (spec: unknown, path: string, causes: Causes): void => {
  const template = isObject(spec) && isObject(spec.template) ? spec.template : {}
  containers(template.spec, `${path}.template.spec`, causes)
  const restartPolicy = template.spec?.restartPolicy
  if (restartPolicy !== "OnFailure" && restartPolicy !== "Never") {
    required(causes, `${path}.template.spec.restartPolicy`, "valid values: \"OnFailure\", \"Never\"")
  }
}

const job = (obj: Obj, old: Obj | undefined, causes: Causes): void => {
  jobSpec(obj.spec, "spec", causes)
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  if (spec.manualSelector === true) {
    selectorAndTemplate(spec, "spec", causes, old)
    return
  }
  const generated = { matchLabels: { [jobLabels.controllerUid]: obj.metadata.uid } }
  if (old === undefined && !deepEqual(spec.selector, generated)) {
    invalid(causes, "spec.selector", spec.selector, "`selector` not auto-generated")
  } else if (old !== undefined && !deepEqual(old.spec?.selector, spec.selector)) {
    invalid(causes, "spec.selector", spec.selector, "field is immutable")
  }
}

const ingress = (obj: Obj, causes: Causes): void => {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  const rules: Array<Obj> = Array.isArray(spec.rules) ? spec.rules : []
  rules.forEach((rule, i) => {
    const paths: Array<Obj> = Array.isArray(rule?.http?.paths) ? rule.http.paths : []
    paths.forEach((p, j) => {
      const at = `spec.rules[${i}].http.paths[${j}]`
      if (p?.pathType === undefined || p.pathType === null || p.pathType === "") {
        required(causes, `${at}.pathType`, "pathType must be specified")
      } else if (!["Exact", "Prefix", "ImplementationSpecific"].includes(p.pathType)) {
        causes.push({
          reason: "FieldValueNotSupported",
          message: `Unsupported value: ${
            JSON.stringify(p.pathType)
          }: supported values: "Exact", "ImplementationSpecific", "Prefix"`,
          field: `${at}.pathType`
        })
      }
      if (!isObject(p?.backend) || (!isObject(p.backend.service) && !isObject(p.backend.resource))) {
        invalid(causes, `${at}.backend`, "", "resource or service backend is required")
      }
    })
  })
}

const goValue = (v: unknown): string => (v === undefined || v === null ? "null" : JSON.stringify(v))

const podDisruptionBudget = (obj: Obj, causes: Causes): void => {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: {"MinAvailable":${goValue(spec.minAvailable)},"Selector":${
        goValue(spec.selector)
      },"MaxUnavailable":${goValue(spec.maxUnavailable)},"UnhealthyPodEvictionPolicy":${
        goValue(spec.unhealthyPodEvictionPolicy)
      }}: minAvailable and maxUnavailable cannot be both set`,
      field: "spec"
    })
  }
}

const horizontalPodAutoscaler = (obj: Obj, causes: Causes): void => {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  const max = typeof spec.maxReplicas === "number" ? spec.maxReplicas : 0
  const min = typeof spec.minReplicas === "number" ? spec.minReplicas : 1
  if (max <= 0) required(causes, "spec.maxReplicas", "must be set and greater than 0")
  if (max < min) invalid(causes, "spec.maxReplicas", max, "must be greater than or equal to `minReplicas`")
  const ref: Obj = isObject(spec.scaleTargetRef) ? spec.scaleTargetRef : {}
  if (typeof ref.kind !== "string" || ref.kind === "") required(causes, "spec.scaleTargetRef.kind")
  if (typeof ref.name !== "string" || ref.name === "") required(causes, "spec.scaleTargetRef.name")
  const apiVersion = typeof ref.apiVersion === "string" ? ref.apiVersion : ""
  if (apiVersion === "") invalid(causes, "spec.scaleTargetRef.apiVersion", "", "apiVersion must specify API group")
}

const persistentVolumeClaim = (obj: Obj, causes: Causes): void => {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) {
    required(causes, "spec.accessModes", "at least 1 access mode is required")
  }
  if (spec.dataSource === undefined && spec.resources?.requests?.storage === undefined) {
    required(causes, "spec.resources[storage]")
  }
}

/** Adds the causes of the checks above for `kind` in `group` (nothing for the kinds they do not cover). */
export const validate = (group: string, kind: string, obj: Obj, old: Obj | undefined, causes: Causes): void => {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  switch (`${group}/${kind}`) {
    case "batch/Job":
      return job(obj, old, causes)
    case "batch/CronJob":
      if (typeof spec.schedule !== "string" || spec.schedule === "") required(causes, "spec.schedule")
      return jobSpec(spec.jobTemplate?.spec, "spec.jobTemplate.spec", causes)
    case "apps/DaemonSet":
    case "apps/StatefulSet":
      selectorAndTemplate(spec, "spec", causes, old)
      return containers(spec.template?.spec, "spec.template.spec", causes)
    case "networking.k8s.io/Ingress":
      return ingress(obj, causes)
    case "policy/PodDisruptionBudget":
      return podDisruptionBudget(obj, causes)
    case "autoscaling/HorizontalPodAutoscaler":
      return horizontalPodAutoscaler(obj, causes)
    case "/PersistentVolumeClaim":
      return persistentVolumeClaim(obj, causes)
  }
}
