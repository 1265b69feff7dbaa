/**
 * Diagnoses: what a failed request means for the person running the operator, and what to do about it. Computed
 * from the `metav1.Status` and the request's method and path (as kube-apiserver's RequestInfo resolver reads them),
 * plus what the client knows (server URL, kubeconfig context, the resource's kind).
 */
import type * as KubeError from "../KubeError.js"
import { redact } from "./errors.js"
import type { Diagnosis, PolicyRule, Status } from "./kubeError.js"

/** A request path read as kube-apiserver does. @internal */
export interface PathInfo {
  readonly verb: string
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly subresource: string | undefined
  readonly namespace: string | undefined
  readonly name: string | undefined
}

/**
 * Reads `/api/v1/namespaces/ns/configmaps/name/status` or `/apis/group/version/...` into its parts, and the verb
 * from the method (a GET of a collection is `list`, with `watch=true` `watch`). `undefined` for other paths.
 *
 * @internal
 */
export const parsePath = (method: string, path: string, watch = false): PathInfo | undefined => {
  const [pathname, query = ""] = path.split("?", 2) as [string, string | undefined]
  const parts = pathname.split("/").filter((p) => p !== "").map(decodeURIComponent)
  let group: string
  let rest: Array<string>
  if (parts[0] === "api" && parts.length >= 2) {
    group = ""
    rest = parts.slice(1)
  } else if (parts[0] === "apis" && parts.length >= 3) {
    group = parts[1]!
    rest = parts.slice(2)
  } else {
    return undefined
  }
  const version = rest[0]!
  rest = rest.slice(1)
  let namespace: string | undefined
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const resource = rest[0]
  if (resource === undefined) return undefined
  const name = rest[1]
  const subresource = rest[2]
  const watching = watch || /(^|&)watch=(true|1)(&|$)/.test(query)
  const verb = verbOf(method, name !== undefined, watching)
  return { verb, group, version, resource, subresource, namespace, name }
}

const verbOf = (method: string, named: boolean, watch: boolean): string => {
  switch (method.toUpperCase()) {
    case "GET":
    case "HEAD":
      return watch ? "watch" : named ? "get" : "list"
    case "POST":
      return "create"
    case "PUT":
      return "update"
    case "PATCH":
      return "patch"
    case "DELETE":
      return named ? "delete" : "deletecollection"
    default:
      return method.toLowerCase()
  }
}

/**
 * What the client knows about a request beyond its error, for `Diagnosis.diagnose`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DiagnoseContext {
  /** The API server's URL. */
  readonly server?: string | undefined
  /** The kubeconfig context the client was loaded with. */
  readonly context?: string | undefined
  /** The kind of the resource requested (`Greeting`), for the message of a missing CRD. */
  readonly kind?: string | undefined
  /** Whether the request was a watch. */
  readonly watch?: boolean | undefined
}

/** API groups of Kubernetes itself: a 404 for them means an older or trimmed cluster, not a missing CRD. */
const isBuiltinGroup = (group: string): boolean =>
  group === "" || group.endsWith(".k8s.io") || group === "k8s.io" ||
  ["apps", "batch", "autoscaling", "policy", "extensions"].includes(group)

const groupVersion = (info: PathInfo) => info.group === "" ? info.version : `${info.group}/${info.version}`

const qualified = (info: PathInfo) => info.group === "" ? info.resource : `${info.resource}.${info.group}`

const scopeOf = (namespace: string | undefined) =>
  namespace === undefined ? "at the cluster scope" : `in the namespace "${namespace}"`

/** kube-apiserver's RBAC denial: `… is forbidden: User "u" cannot list resource "r" in API group "g" …`. */
const forbiddenPattern = new RegExp(
  "is forbidden: User \"([^\"]*)\" cannot (\\S+) resource \"([^\"]*)\" in API group \"([^\"]*)\"" +
    "(?: (?:in the namespace \"([^\"]*)\"|at the cluster scope))?"
)

const yamlList = (xs: ReadonlyArray<string>) => `[${xs.map((x) => x === "" ? `""` : x).join(", ")}]`

/** The rule that grants `verb` on `resource` (with its subresource) of `group`, as a YAML flow mapping. @internal */
export const formatRule = (rule: PolicyRule): string =>
  `{apiGroups: ${yamlList(rule.apiGroups)}, resources: ${yamlList(rule.resources)}, verbs: ${yamlList(rule.verbs)}}`

const where = (ctx: DiagnoseContext) =>
  `${ctx.server !== undefined ? ` at ${ctx.server}` : ""}${
    ctx.context !== undefined ? ` (kubeconfig context "${ctx.context}")` : ""
  }`

const notInstalled = (info: PathInfo, ctx: DiagnoseContext): Diagnosis => {
  const kind = ctx.kind !== undefined ? ` ${ctx.kind}` : ` ${info.resource}`
  if (isBuiltinGroup(info.group)) {
    return {
      problem: "ResourceNotInstalled",
      summary: `the API server${where(ctx)} does not serve ${groupVersion(info)}${kind} (${qualified(info)})`,
      fix: "the cluster's Kubernetes version may not have this API (or it is disabled): use a version it serves " +
        "(kubectl api-resources lists them)"
    }
  }
  const crd = qualified(info)
  return {
    problem: "ResourceNotInstalled",
    summary: `the CustomResourceDefinition ${crd} (${groupVersion(info)}${kind}) is not installed`,
    fix: "apply it (reconcile manifests writes it, then kubectl apply --server-side -f config/) or start with " +
      "--install-crds"
  }
}

/** The namespace a 404 says does not exist (`namespaces "x" not found`), when it is not what the request was about. */
const missingNamespace = (status: Status, info: PathInfo | undefined): string | undefined => {
  const details = status.details
  let name: string | undefined
  if (details?.kind === "namespaces" && details.name !== undefined && details.name !== "") name = details.name
  else {
    const m = /^namespaces "([^"]+)" not found/.exec(status.message ?? "")
    if (m !== null) name = m[1]
  }
  if (name === undefined) return undefined
  // a get/delete of the namespace itself is an ordinary NotFound
  if (info !== undefined && info.resource === "namespaces" && info.namespace === undefined) return undefined
  return name
}

/** @internal */
export const namespaceMissing = (namespace: string): Diagnosis => ({
  problem: "NamespaceNotFound",
  summary: `namespace "${namespace}" does not exist`,
  fix: `kubectl create namespace ${namespace}`
})

const forbidden = (status: Status, info: PathInfo | undefined): Diagnosis | undefined => {
  const message = status.message ?? ""
  const m = forbiddenPattern.exec(message)
  if (m === null) return undefined
  const [, user, verb, resourceText, group, namespace] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined
  ]
  const scope = namespace !== undefined ? namespace : info?.namespace
  const rule: PolicyRule = { apiGroups: [group], resources: [resourceText], verbs: [verb] }
  const subject = user.startsWith("system:serviceaccount:")
    ? `the service account ${user.slice("system:serviceaccount:".length).replace(":", "/")} (${user})`
    : `the user "${user}"`
  const resource = group === "" ? resourceText : `${resourceText}.${group}`
  const binding = scope === undefined
    ? "a ClusterRole bound with a ClusterRoleBinding"
    : `a Role in "${scope}" with a RoleBinding (or a ClusterRole)`
  return {
    problem: "Forbidden",
    summary: `${subject} may not ${verb} ${resource} ${scopeOf(scope)} (403 Forbidden)`,
    fix: `grant it with ${binding} holding the rule ${
      formatRule(rule)
    }; reconcile manifests generates the operator's RBAC from its controllers`,
    rule
  }
}

const unauthorized = (ctx: DiagnoseContext): Diagnosis => ({
  problem: "Unauthorized",
  summary: `the API server${where(ctx)} rejected the credentials (401 Unauthorized)`,
  fix: "the token may have expired; refresh it (log in again, or get a new kubeconfig)"
})

/** The first `code` along an error's `cause` chain (Node system and TLS errors; undici wraps them). */
const codeOf = (u: unknown): { readonly code: string | undefined; readonly message: string } => {
  let current: unknown = u
  let message = current instanceof Error ? current.message : String(current)
  for (let i = 0; i < 6 && typeof current === "object" && current !== null; i++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && code !== "") {
      return { code, message: current instanceof Error ? current.message : message }
    }
    if (current instanceof Error && current.message !== "") message = current.message
    current = (current as { cause?: unknown }).cause
  }
  return { code: undefined, message }
}

const tlsUnknownAuthority = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE"
])

/** The cause of a failed connection, in words, with what to check. @internal */
export const connectionCause = (cause: unknown, server: string | undefined): string => {
  const { code, message } = codeOf(cause)
  const host = (() => {
    try {
      return server === undefined ? undefined : new URL(server).hostname
    } catch {
      return undefined
    }
  })()
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused (ECONNREFUSED): is the cluster running, and is the server address in the kubeconfig right?"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host name${
        host !== undefined ? ` ${host}` : ""
      } does not resolve (DNS, ${code}): check the server address ` +
        "in the kubeconfig, or the network (VPN)"
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ENETUNREACH":
    case "EHOSTUNREACH":
      return `no connection (${code}: timeout or unreachable network): check the network, a VPN or a firewall`
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
    case "EPIPE":
      return `the connection was reset (${code}): check the server address and any proxy in between`
    case "CERT_HAS_EXPIRED":
      return "the server's certificate has expired (CERT_HAS_EXPIRED): renew it (or refresh the kubeconfig)"
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `the server's certificate is not valid for ${
        host ?? "this host"
      } (${code}): check the server address in the ` +
        "kubeconfig (tls-server-name if it is an alias)"
    case "EPROTO":
    case "ERR_SSL_WRONG_VERSION_NUMBER":
      return `the TLS handshake failed (${code}; a plain http port, or a proxy?): check the server address and its scheme`
  }
  if (code !== undefined && tlsUnknownAuthority.has(code)) {
    return `certificate signed by unknown authority (${code}): check certificate-authority-data (or ` +
      "certificate-authority) of the cluster in the kubeconfig"
  }
  return `${code !== undefined ? `${code} ` : ""}${redact(message)}`
}

const unreachable = (cause: unknown, ctx: DiagnoseContext): Diagnosis => ({
  problem: "Unreachable",
  summary: `cannot reach the API server${where(ctx)}`,
  fix: connectionCause(cause, ctx.server)
})

/**
 * The diagnosis of an error, if it is one of the failures a person must fix: a kind the server does not serve (a
 * CRD not installed), a missing namespace, an RBAC denial, rejected credentials, an API server that cannot be
 * reached. Errors already diagnosed get the context's details (server, kind) added.
 *
 * @internal
 */
export const diagnose = (error: KubeError.KubeError, ctx: DiagnoseContext = {}): Diagnosis | undefined => {
  switch (error._tag) {
    case "NotFound": {
      const info = error.request === undefined
        ? undefined
        : parsePath(error.request.method, error.request.path, ctx.watch)
      const namespace = missingNamespace(error.status, info)
      if (namespace !== undefined) return namespaceMissing(namespace)
      // a 404 that names no object: the path itself is not served (kube-apiserver's "could not find the requested
      // resource"); a 404 of a named object carries `details.name`
      const details = error.status.details
      const named = details?.name !== undefined && details.name !== ""
      if (info !== undefined && !named && (error.status.message ?? "").includes("could not find the requested")) {
        return notInstalled(info, ctx)
      }
      return undefined
    }
    case "Forbidden": {
      const info = error.request === undefined
        ? undefined
        : parsePath(error.request.method, error.request.path, ctx.watch)
      return forbidden(error.status, info)
    }
    case "Unauthorized":
      return unauthorized(ctx)
    case "Transport":
      if (error.reason === "Request") return unreachable(error.cause, ctx)
      if (error.reason === "Credentials") {
        return {
          problem: "Unauthorized",
          summary: `the credentials for the API server${where(ctx)} could not be obtained`,
          fix: `${
            redact(codeOf(error.cause).message)
          }: check the kubeconfig's user (exec plugin, token or certificate files)`
        }
      }
      return undefined
    case "Timeout":
      // the client's own timeout: no answer at all
      return error.status.code === 0 ? unreachable("no answer within the request timeout", ctx) : undefined
    default:
      return undefined
  }
}

/** Problems that retrying alone will not fix: at start, an informer fails with them. @internal */
export const isFatalAtStart = (error: KubeError.KubeError): boolean =>
  "diagnosis" in error && error.diagnosis !== undefined

/** What each diagnosed error was diagnosed with, so a later diagnosis (adding the kind) keeps the server. */
const contexts = new WeakMap<object, DiagnoseContext>()

const merge = (a: DiagnoseContext | undefined, b: DiagnoseContext): DiagnoseContext => {
  const out: Record<string, unknown> = { ...a }
  for (const [k, v] of Object.entries(b)) if (v !== undefined) out[k] = v
  return out as DiagnoseContext
}

/** The fields an error was made with (`cause` is not enumerable on errors). */
const fieldsOf = (error: KubeError.KubeError): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const key of Object.keys(error)) {
    if (key !== "_tag") fields[key] = (error as unknown as Record<string, unknown>)[key]
  }
  if ("cause" in error && !("cause" in fields)) fields.cause = (error as { cause?: unknown }).cause
  return fields
}

/**
 * The error with `diagnosis` set (a new instance of its class), or the error itself when there is nothing to add.
 *
 * @internal
 */
export const withDiagnosis = <E extends KubeError.KubeError>(
  error: E,
  diagnosis: Diagnosis | undefined
): E => {
  if (diagnosis === undefined || error._tag === "Decode" || error._tag === "Encode") return error
  const current = (error as { readonly diagnosis?: Diagnosis }).diagnosis
  if (
    current !== undefined && current.summary === diagnosis.summary && current.fix === diagnosis.fix
  ) return error
  const fields = fieldsOf(error)
  fields.diagnosis = diagnosis
  const Ctor = error.constructor as new(args: Record<string, unknown>) => E
  return new Ctor(fields)
}

/** Diagnoses `error` with `ctx` (added to what it was diagnosed with before) and attaches the result. @internal */
export const attach = <E extends KubeError.KubeError>(error: E, ctx: DiagnoseContext = {}): E => {
  const merged = merge(contexts.get(error), ctx)
  const result = withDiagnosis(error, diagnose(error, merged))
  contexts.set(result, merged)
  return result
}
