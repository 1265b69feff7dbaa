/**
 * The validation of MutatingWebhookConfigurations and ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1)
 * as kube-apiserver's: the field errors of each webhook, in upstream's order and words (their defaults are set on
 * create with the other built-in kinds', `workloadDefaults.ts`). Label selectors and matchConditions are not
 * validated here.
 */
import type { StatusCause } from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { isObject, type Obj } from "./json.js"

const group = "admissionregistration.k8s.io"

const isConfiguration = (rt: ResourceType): boolean =>
  rt.group === group && (rt.kind === "MutatingWebhookConfiguration" || rt.kind === "ValidatingWebhookConfiguration")

const goValue = (v: unknown): string => typeof v === "number" ? String(v) : JSON.stringify(v)

const invalid = (causes: Array<StatusCause>, field: string, value: unknown, detail: string): void => {
  causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${goValue(value)}: ${detail}`, field })
}
const required = (causes: Array<StatusCause>, field: string, detail?: string): void => {
  causes.push({
    reason: "FieldValueRequired",
    message: `Required value${detail === undefined ? "" : `: ${detail}`}`,
    field
  })
}
const unsupported = (causes: Array<StatusCause>, field: string, value: unknown, supported: ReadonlyArray<string>) => {
  causes.push({
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${goValue(value)}: supported values: ${supported.map((s) => `"${s}"`).join(", ")}`,
    field
  })
}

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

const list = (v: unknown): Array<unknown> => Array.isArray(v) ? v : []

const validateRule = (rule: Obj, path: string, causes: Array<StatusCause>): void => {
  const operations = list(rule.operations)
  if (operations.length === 0) required(causes, `${path}.operations`)
  else if (operations.length > 1 && operations.includes("*")) {
    invalid(causes, `${path}.operations`, operations, "if '*' is present, must not specify other operations")
  }
  operations.forEach((op, i) => {
    if (!["*", "CONNECT", "CREATE", "DELETE", "UPDATE"].includes(op as string)) {
      unsupported(causes, `${path}.operations[${i}]`, op, ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"])
    }
  })
  for (const [field, what] of [["apiGroups", "API groups"], ["apiVersions", "API versions"]] as const) {
    const values = list(rule[field])
    if (values.length === 0) required(causes, `${path}.${field}`)
    else if (values.length > 1 && values.includes("*")) {
      invalid(causes, `${path}.${field}`, values, `if '*' is present, must not specify other ${what}`)
    }
  }
  if (list(rule.resources).length === 0) required(causes, `${path}.resources`)
  if (rule.scope !== undefined && !["*", "Cluster", "Namespaced"].includes(rule.scope)) {
    unsupported(causes, `${path}.scope`, rule.scope, ["*", "Cluster", "Namespaced"])
  }
}

const validateClientConfig = (config: unknown, path: string, causes: Array<StatusCause>): void => {
  const c = isObject(config) ? config : {}
  const hasUrl = typeof c.url === "string"
  const hasService = isObject(c.service)
  if (hasUrl === hasService) {
    required(causes, path, "exactly one of url or service is required")
    return
  }
  if (hasUrl) {
    const field = `${path}.url`
    const parts = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(c.url as string)!
    const [, scheme = "", authority = "", , query, fragment] = parts
    const at = authority.lastIndexOf("@")
    const userinfo = at < 0 ? "" : authority.slice(0, at)
    const host = at < 0 ? authority : authority.slice(at + 1)
    if (scheme !== "https") {
      invalid(causes, field, scheme, "'https' is the only allowed URL scheme; desired format: https://host[/path]")
    }
    if (host === "") invalid(causes, field, host, "host must be specified; desired format: https://host[/path]")
    if (userinfo !== "") invalid(causes, field, userinfo, "user information is not permitted in the URL")
    if (fragment !== undefined) invalid(causes, field, fragment, "fragments are not permitted in the URL")
    if (query !== undefined) invalid(causes, field, query, "query parameters are not permitted in the URL")
    return
  }
  // kube-apiserver reports a missing namespace as `name` and a missing name as `namespace` (its arguments swap)
  const service = c.service as Obj
  if (typeof service.namespace !== "string" || service.namespace === "") required(causes, `${path}.service.name`)
  if (typeof service.name !== "string" || service.name === "") required(causes, `${path}.service.namespace`)
  if (typeof service.port === "number" && (service.port < 1 || service.port > 65535)) {
    invalid(causes, `${path}.service.port`, service.port, "port is not valid: must be between 1 and 65535, inclusive")
  }
  if (typeof service.path === "string" && service.path !== "" && service.path !== "/") {
    if (!service.path.startsWith("/")) invalid(causes, `${path}.service.path`, service.path, "must start with a '/'")
    service.path.slice(1).split("/").forEach((segment: string, i: number) => {
      if (segment === "") invalid(causes, `${path}.service.path`, service.path, `segment[${i}] may not be empty`)
    })
  }
}

/** The field errors of a webhook configuration (kube-apiserver's ValidateMutatingWebhookConfiguration/…). */
export const validate = (rt: ResourceType, obj: Obj, causes: Array<StatusCause>): void => {
  if (!isConfiguration(rt)) return
  const mutating = rt.kind === "MutatingWebhookConfiguration"
  const names = new Set<string>()
  list(obj.webhooks).forEach((hook, i) => {
    const w = isObject(hook) ? hook : {}
    const path = `webhooks[${i}]`
    if (typeof w.name !== "string" || w.name === "") required(causes, `${path}.name`)
    else if (!dnsSubdomain.test(w.name) || w.name.split(".").length < 3) {
      invalid(causes, `${path}.name`, w.name, "should be a domain with at least three segments separated by dots")
    }
    list(w.rules).forEach((rule, j) => validateRule(isObject(rule) ? rule : {}, `${path}.rules[${j}]`, causes))
    if (w.failurePolicy !== undefined && !["Fail", "Ignore"].includes(w.failurePolicy)) {
      unsupported(causes, `${path}.failurePolicy`, w.failurePolicy, ["Fail", "Ignore"])
    }
    if (w.matchPolicy !== undefined && !["Equivalent", "Exact"].includes(w.matchPolicy)) {
      unsupported(causes, `${path}.matchPolicy`, w.matchPolicy, ["Equivalent", "Exact"])
    }
    if (w.sideEffects === undefined || w.sideEffects === "") {
      required(causes, `${path}.sideEffects`, "must specify one of None, NoneOnDryRun")
    } else if (!["None", "NoneOnDryRun"].includes(w.sideEffects)) {
      unsupported(causes, `${path}.sideEffects`, w.sideEffects, ["None", "NoneOnDryRun"])
    }
    if (typeof w.timeoutSeconds === "number" && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) {
      invalid(causes, `${path}.timeoutSeconds`, w.timeoutSeconds, "the timeout value must be between 1 and 30 seconds")
    }
    if (mutating && w.reinvocationPolicy !== undefined && !["IfNeeded", "Never"].includes(w.reinvocationPolicy)) {
      unsupported(causes, `${path}.reinvocationPolicy`, w.reinvocationPolicy, ["IfNeeded", "Never"])
    }
    validateClientConfig(w.clientConfig, `${path}.clientConfig`, causes)
    const versions = list(w.admissionReviewVersions)
    if (versions.length === 0) {
      required(causes, `${path}.admissionReviewVersions`, "must specify one of v1, v1beta1")
    } else if (!versions.some((v) => v === "v1" || v === "v1beta1")) {
      invalid(causes, `${path}.admissionReviewVersions`, versions, "must include at least one of v1, v1beta1")
    }
    if (typeof w.name === "string" && w.name !== "") {
      if (names.has(w.name)) {
        causes.push({ reason: "FieldValueDuplicate", message: `Duplicate value: "${w.name}"`, field: `${path}.name` })
      }
      names.add(w.name)
    }
  })
}
