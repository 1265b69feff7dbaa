/** Object validation (422 Invalid) and defaulting for the built-in kinds. */
import * as ApiError from "../ApiError.js"
import type { StatusCause } from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { canonical as canonicalEvent, validateLegacy as validateEvent } from "./events.js"
import { deepEqual, isObject, type Obj } from "./json.js"
import * as KindValidation from "./kindValidation.js"
import {
  DNS_SUBDOMAIN,
  fromLabelSelector,
  isLabelValue,
  isQualifiedName,
  LABEL_VALUE,
  matches,
  QUALIFIED
} from "./labelSelector.js"
import { isBuiltinGroup } from "./resourceType.js"
import * as Structural from "./structural.js"
import * as WebhookConfigurations from "./webhookConfigurations.js"
import * as WorkloadDefaults from "./workloadDefaults.js"

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

const labelNamed = new Set(["Namespace", "Service"])

type Causes = Array<StatusCause>

// apimachinery's validation messages (k8s.io/apimachinery/pkg/util/validation), with their examples and regexps
const DNS_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const CONFIG_KEY =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

/** Why a key is not a qualified name (`IsQualifiedName`; label keys word the slash case their own way). */
const qualifiedNameDetail = (key: string, what: "label key" | "qualified name"): string => {
  const parts = key.split("/")
  if (parts.length > 2) {
    return `${
      what === "label key" ? "a valid label key" : "a qualified name"
    } ${QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
  }
  if (parts.length === 2 && (parts[0] === "" || !dnsSubdomain.test(parts[0]!))) {
    return parts[0] === "" ? "prefix part must be non-empty" : `prefix part ${DNS_SUBDOMAIN}`
  }
  const name = parts[parts.length - 1]!
  if (name === "") return "name part must be non-empty"
  if (name.length > 63) return "name part must be no more than 63 characters"
  return `name part ${QUALIFIED}`
}

const standardFinalizers = new Set(["kubernetes", "orphan", "foregroundDeletion"])

const invalid = (causes: Causes, field: string, value: unknown, detail: string): void => {
  causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field })
}
const required = (causes: Causes, field: string, detail = "Required value"): void => {
  causes.push({ reason: "FieldValueRequired", message: detail, field })
}
const forbidden = (causes: Causes, field: string, detail: string): void => {
  causes.push({ reason: "FieldValueForbidden", message: `Forbidden: ${detail}`, field })
}

/** Validates the name format of an object (used by create). */
export const validateName = (rt: ResourceType, name: string, causes: Causes): void => {
  if (rt.kind === "CustomResourceDefinition") return
  if (labelNamed.has(rt.kind) && rt.group === "") {
    if (name.length > 63) invalid(causes, "metadata.name", name, "must be no more than 63 characters")
    if (!dnsLabel.test(name)) {
      invalid(causes, "metadata.name", name, dnsSubdomain.test(name) ? "must not contain dots" : DNS_LABEL)
    }
  } else {
    if (name.length > 253) invalid(causes, "metadata.name", name, "must be no more than 253 characters")
    if (!dnsSubdomain.test(name)) invalid(causes, "metadata.name", name, DNS_SUBDOMAIN)
  }
}

const validateMeta = (meta: Obj, causes: Causes, builtin: boolean): void => {
  if (meta.labels !== undefined) {
    if (!isObject(meta.labels)) invalid(causes, "metadata.labels", meta.labels, "must be a map of strings")
    else {
      for (const [k, v] of Object.entries(meta.labels)) {
        if (!isQualifiedName(k)) invalid(causes, "metadata.labels", k, qualifiedNameDetail(k, "label key"))
        if (typeof v !== "string" || !isLabelValue(v)) invalid(causes, "metadata.labels", v, LABEL_VALUE)
      }
    }
  }
  if (meta.annotations !== undefined) {
    if (!isObject(meta.annotations)) {
      invalid(causes, "metadata.annotations", meta.annotations, "must be a map of strings")
    } else {
      let size = 0
      for (const [k, v] of Object.entries(meta.annotations)) {
        if (!isQualifiedName(k)) invalid(causes, "metadata.annotations", k, qualifiedNameDetail(k, "qualified name"))
        if (typeof v !== "string") invalid(causes, `metadata.annotations[${k}]`, v, "must be a string")
        else size += k.length + v.length
      }
      if (size > 256 * 1024) {
        causes.push({
          reason: "FieldValueTooLong",
          message: "Too long: must have at most 262144 bytes",
          field: "metadata.annotations"
        })
      }
    }
  }
  if (meta.finalizers !== undefined) {
    if (!Array.isArray(meta.finalizers)) {
      invalid(causes, "metadata.finalizers", meta.finalizers, "must be a list of strings")
    } else {
      meta.finalizers.forEach((f: unknown, i: number) => {
        if (typeof f !== "string" || !isQualifiedName(f)) {
          invalid(causes, `metadata.finalizers[${i}]`, f, qualifiedNameDetail(String(f), "qualified name"))
        } else if (builtin && !f.includes("/") && !standardFinalizers.has(f)) {
          // core validation: a finalizer without a domain must be a standard one
          invalid(
            causes,
            `metadata.finalizers[${i}]`,
            f,
            "name is neither a standard finalizer name nor is it fully qualified"
          )
        }
      })
    }
  }
  if (meta.ownerReferences !== undefined) {
    if (!Array.isArray(meta.ownerReferences)) {
      invalid(causes, "metadata.ownerReferences", meta.ownerReferences, "must be a list")
    } else {
      // upstream's validateOwnerReference: the fields are named without the item's index
      const controllers: Array<Obj> = []
      meta.ownerReferences.forEach((ref: Obj) => {
        for (const f of ["apiVersion", "kind", "name", "uid"]) {
          if (typeof ref?.[f] !== "string" || ref[f] === "") {
            invalid(
              causes,
              `metadata.ownerReferences.${f}`,
              ref?.[f] ?? "",
              f === "apiVersion" ? "version must not be empty" : "must not be empty"
            )
          }
        }
        if (ref?.controller === true) controllers.push(ref)
      })
      if (controllers.length > 1) {
        // the value is the list as Go prints it (struct field order)
        const ordered = (meta.ownerReferences as Array<Obj>).map((r) =>
          Object.fromEntries(
            ["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"].filter((k) =>
              r?.[k] !== undefined
            )
              .map((k) => [k, r[k]])
          )
        )
        const named = controllers.slice(0, 2).map((r) => `${r.kind}/${r.name}`)
        invalid(
          causes,
          "metadata.ownerReferences",
          ordered,
          `Only one reference can have Controller set to true. Found "true" in references for ${named[0]} and ${
            named[1]
          }`
        )
      }
    }
  }
}

const validateContainers = (containers: unknown, field: string, causes: Causes): void => {
  if (!Array.isArray(containers) || containers.length === 0) return required(causes, field)
  containers.forEach((c: Obj, i: number) => {
    if (typeof c?.name !== "string" || c.name === "") required(causes, `${field}[${i}].name`)
    if (typeof c?.image !== "string" || c.image === "") required(causes, `${field}[${i}].image`)
  })
}

/**
 * A Deployment's or ReplicaSet's replica counts, as apps validation checks them: none negative, none of the
 * ready/available/updated/fully-labeled counts above `replicas`, available not above ready.
 */
const validateReplicaStatus = (status: unknown, extra: ReadonlyArray<string>, causes: Causes): void => {
  if (!isObject(status)) return
  const count = (field: string): number => typeof status[field] === "number" ? status[field] : 0
  for (const field of ["observedGeneration", "replicas", "readyReplicas", "availableReplicas", ...extra]) {
    if (typeof status[field] === "number" && status[field] < 0) {
      invalid(causes, `status.${field}`, status[field], "must be greater than or equal to 0")
    }
  }
  for (const field of ["updatedReplicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"]) {
    if (
      (field === "readyReplicas" || field === "availableReplicas" || extra.includes(field)) &&
      count(field) > count("replicas")
    ) {
      invalid(causes, `status.${field}`, count(field), "cannot be greater than status.replicas")
    }
  }
  if (count("availableReplicas") > count("readyReplicas")) {
    invalid(causes, "status.availableReplicas", count("availableReplicas"), "cannot be greater than readyReplicas")
  }
}

/** Validates an object about to be stored; throws a 422 with one cause per problem. */
export const validate = (
  rt: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  preceding: ReadonlyArray<StatusCause> = []
): void => {
  const causes: Causes = [...preceding]
  validateMeta(obj.metadata, causes, isBuiltinGroup(rt.group))
  const spec = obj.spec as Obj | undefined
  switch (rt.group === "" || rt.group === "apps" || rt.group === "apiextensions.k8s.io" ? rt.kind : "") {
    case "ConfigMap":
    case "Secret": {
      for (const field of ["data", "binaryData", ...(rt.kind === "ConfigMap" ? [] : ["stringData"])]) {
        const data = obj[field]
        if (data === undefined) continue
        if (!isObject(data)) {
          invalid(causes, field, data, "must be a map of strings")
          continue
        }
        for (const [k, v] of Object.entries(data)) {
          if (!/^[-._a-zA-Z0-9]+$/.test(k)) {
            invalid(causes, `${field}[${k}]`, k, CONFIG_KEY)
          }
          if (typeof v !== "string") invalid(causes, `${field}[${k}]`, v, "must be a string")
          else if ((field === "data" && rt.kind === "Secret") || field === "binaryData") {
            if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) {
              // the decoder refuses it before validation (encoding/base64's CorruptInputError)
              const at = v.search(/[^A-Za-z0-9+/=]/)
              throw ApiError.make(
                400,
                "BadRequest",
                `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: illegal base64 data at input byte ${
                  at >= 0 ? at : v.length
                }`
              )
            }
          }
        }
      }
      if (old !== undefined && old.immutable === true) {
        if (!deepEqual(old.data, obj.data) || !deepEqual(old.binaryData, obj.binaryData)) {
          forbidden(causes, "data", "field is immutable when `immutable` is set")
        }
        if (obj.immutable !== true) forbidden(causes, "immutable", "field is immutable when `immutable` is set")
      }
      break
    }
    case "Event":
      validateEvent(obj, causes)
      break
    case "Pod":
      if (!isObject(spec)) required(causes, "spec")
      else validateContainers(spec.containers, "spec.containers", causes)
      break
    case "Deployment": {
      if (!isObject(spec)) {
        required(causes, "spec")
        break
      }
      if (spec.replicas !== undefined && (!Number.isInteger(spec.replicas) || spec.replicas < 0)) {
        invalid(causes, "spec.replicas", spec.replicas, "must be greater than or equal to 0")
      }
      if (!isObject(spec.selector)) required(causes, "spec.selector")
      else {
        const labels = spec.template?.metadata?.labels
        const reqs = fromLabelSelector(spec.selector)
        if (reqs.length === 0) {
          invalid(causes, "spec.selector", spec.selector, "empty selector is invalid for deployment")
        } else if (!matches(reqs, labels)) {
          invalid(causes, "spec.template.metadata.labels", labels ?? {}, "`selector` does not match template `labels`")
        }
        if (old !== undefined && !deepEqual(old.spec?.selector, spec.selector)) {
          invalid(causes, "spec.selector", spec.selector, "field is immutable")
        }
      }
      validateContainers(spec.template?.spec?.containers, "spec.template.spec.containers", causes)
      validateReplicaStatus(obj.status, ["updatedReplicas", "unavailableReplicas", "terminatingReplicas"], causes)
      break
    }
    case "ReplicaSet":
      validateReplicaStatus(obj.status, ["fullyLabeledReplicas", "terminatingReplicas"], causes)
      break
    case "Service": {
      if (!isObject(spec)) break
      const headless = spec.clusterIP === "None"
      if (spec.type !== "ExternalName" && !headless && (!Array.isArray(spec.ports) || spec.ports.length === 0)) {
        required(causes, "spec.ports")
      }
      if (Array.isArray(spec.ports)) {
        spec.ports.forEach((p: Obj, i: number) => {
          if (!Number.isInteger(p?.port) || p.port < 1 || p.port > 65535) {
            invalid(causes, `spec.ports[${i}].port`, p?.port, "must be between 1 and 65535, inclusive")
          }
          // targetPort defaults to port: a number out of range fails twice, as upstream
          const target = p?.targetPort ?? p?.port
          if (typeof target === "number" && (!Number.isInteger(target) || target < 1 || target > 65535)) {
            invalid(causes, `spec.ports[${i}].targetPort`, target, "must be between 1 and 65535, inclusive")
          }
        })
      }
      if (old !== undefined && old.spec?.clusterIP !== undefined && spec.clusterIP !== old.spec.clusterIP) {
        invalid(causes, "spec.clusterIP", spec.clusterIP, "field is immutable")
      }
      break
    }
    case "CustomResourceDefinition":
      validateCrd(obj, old, causes)
      break
  }
  // admission webhook configurations: webhookConfigurations.ts
  WebhookConfigurations.validate(rt, obj, causes)
  // the other built-in kinds (Jobs, Ingresses, …): kindValidation.ts
  if (rt.schema === undefined) KindValidation.validate(rt.group, rt.kind, obj, old, causes)
  // Custom resources: pruned, defaulted and validated against the served version's structural schema (and scale).
  if (rt.schema !== undefined) {
    for (const c of Structural.admit(rt, obj, old)) causes.push(c)
  }
  if (causes.length > 0) {
    throw ApiError.make(
      422,
      "Invalid",
      Structural.invalidMessage(`${rt.kind}${rt.group === "" ? "" : `.${rt.group}`}`, obj.metadata.name, causes),
      { name: obj.metadata.name, ...(rt.group === "" ? {} : { group: rt.group }), kind: rt.kind, causes }
    )
  }
}

const validateCrd = (crd: Obj, old: Obj | undefined, causes: Causes): void => {
  const spec = crd.spec as Obj | undefined
  if (!isObject(spec)) return required(causes, "spec")
  if (typeof spec.group !== "string" || !spec.group.includes(".")) {
    invalid(causes, "spec.group", spec.group, "should be a domain with at least one dot")
  }
  const names = spec.names as Obj | undefined
  if (!isObject(names) || typeof names.plural !== "string" || names.plural === "") required(causes, "spec.names.plural")
  if (!isObject(names) || typeof names.kind !== "string" || names.kind === "") required(causes, "spec.names.kind")
  if (isObject(names) && typeof names.plural === "string" && crd.metadata.name !== `${names.plural}.${spec.group}`) {
    invalid(causes, "metadata.name", crd.metadata.name, "must be spec.names.plural+\".\"+spec.group")
  }
  if (spec.scope !== "Namespaced" && spec.scope !== "Cluster") {
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${JSON.stringify(spec.scope)}: supported values: "Cluster", "Namespaced"`,
      field: "spec.scope"
    })
  }
  const versions = spec.versions
  if (!Array.isArray(versions) || versions.length === 0) {
    required(causes, "spec.versions", "Required value: must have exactly one version marked as storage version")
  } else if (versions.filter((v: Obj) => v?.storage === true).length !== 1) {
    invalid(causes, "spec.versions", versions.length, "must have exactly one version marked as storage version")
  }
  if (old !== undefined && old.spec?.scope !== spec.scope) {
    invalid(causes, "spec.scope", spec.scope, "field is immutable")
  }
  if (Array.isArray(versions)) {
    versions.forEach((v: Obj, i: number) => {
      const schema = v?.schema?.openAPIV3Schema
      const base = `spec.versions[${i}].schema.openAPIV3Schema`
      if (schema !== undefined) { for (const c of Structural.ruleCompileErrors(schema, base)) causes.push(c) }
    })
  }
}

let nextServiceIp = 1

/** A Pod's QoS class from its containers' requests and limits (`GetPodQOS`, cpu and memory). */
const qosClass = (spec: unknown): "BestEffort" | "Burstable" | "Guaranteed" => {
  const containers = isObject(spec) && Array.isArray(spec.containers) ? (spec.containers as Array<Obj>) : []
  const all = [...containers, ...(isObject(spec) && Array.isArray(spec.initContainers) ? spec.initContainers : [])]
  let any = false
  let guaranteed = true
  for (const c of all) {
    const requests = isObject(c?.resources?.requests) ? c.resources.requests : {}
    const limits = isObject(c?.resources?.limits) ? c.resources.limits : {}
    for (const r of ["cpu", "memory"]) {
      if (requests[r] !== undefined || limits[r] !== undefined) any = true
      if (limits[r] === undefined || (requests[r] !== undefined && requests[r] !== limits[r])) guaranteed = false
    }
  }
  return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable"
}

/** Server-side defaults applied on create. */
export const defaultOnCreate = (rt: ResourceType, obj: Obj): void => {
  if (rt.group === "" && rt.kind === "Namespace") {
    obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name }
    obj.spec = { finalizers: ["kubernetes"], ...obj.spec }
    obj.status = { phase: "Active" }
  } else if (rt.group === "" && rt.kind === "Pod") {
    obj.status = { phase: "Pending", qosClass: qosClass(obj.spec) }
    obj.spec = { restartPolicy: "Always", ...obj.spec }
    WorkloadDefaults.admitPod(obj)
  } else if (rt.group === "apps" && rt.kind === "Deployment") {
    obj.status = {}
  } else if (rt.group === "" && rt.kind === "Service") {
    obj.spec = { type: "ClusterIP", sessionAffinity: "None", ...obj.spec }
    if (obj.spec.type !== "ExternalName" && obj.spec.clusterIP === undefined) {
      const n = nextServiceIp++
      obj.spec.clusterIP = `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`
    }
    if (obj.spec.clusterIP !== undefined) obj.spec.clusterIPs = [obj.spec.clusterIP]
    if (obj.spec.type !== "ExternalName") {
      // SetDefaults_Service, then the IP family allocation of a single-stack IPv4 cluster
      obj.spec = { internalTrafficPolicy: "Cluster", ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"], ...obj.spec }
    }
    obj.status = { loadBalancer: {} }
  } else if (rt.group === "apiextensions.k8s.io" && rt.kind === "CustomResourceDefinition") {
    obj.status = {}
  } else if (rt.schema === undefined) {
    WorkloadDefaults.admitBuiltin(rt.group, rt.version, rt.kind, obj, obj.metadata.creationTimestamp)
  }
  defaultAlways(rt, obj, undefined)
}

/** Server-side defaults applied on every write. */
export const defaultAlways = (rt: ResourceType, obj: Obj, old: Obj | undefined): void => {
  if (rt.group === "" && rt.kind === "Event") canonicalEvent(obj)
  if (rt.group === "" && rt.kind === "Secret") {
    obj.type ??= old?.type ?? "Opaque"
    if (isObject(obj.stringData)) {
      const data: Obj = { ...obj.data }
      for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v), "utf8").toString("base64")
      obj.data = data
    }
    delete obj.stringData
  } else if (rt.group === "apps" && rt.kind === "Deployment" && isObject(obj.spec)) {
    WorkloadDefaults.defaultDeployment(obj)
  } else if (rt.group === "apps" && rt.kind === "ReplicaSet") {
    WorkloadDefaults.defaultReplicaSet(obj)
  } else if (rt.group === "" && rt.kind === "Pod") {
    WorkloadDefaults.defaultPod(obj)
  } else if (rt.group === "" && rt.kind === "Service" && isObject(obj.spec)) {
    if (old !== undefined && obj.spec.clusterIP === undefined && old.spec?.clusterIP !== undefined) {
      obj.spec.clusterIP = old.spec.clusterIP
      obj.spec.clusterIPs = old.spec.clusterIPs
    }
    if (Array.isArray(obj.spec.ports)) {
      obj.spec.ports = obj.spec.ports.map((p: Obj) => (isObject(p) ? { protocol: "TCP", targetPort: p.port, ...p } : p))
    }
  } else if (rt.group === "" && rt.kind === "Namespace") {
    obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name }
  } else if (rt.schema === undefined) {
    WorkloadDefaults.defaultBuiltin(rt.group, rt.version, rt.kind, obj)
  }
}
