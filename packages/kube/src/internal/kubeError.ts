/**
 * The kernel of `KubeError`: the errors' type id and messages, and the models the errors are made of — the
 * `metav1.Status` of an error answer (`KubeStatus` re-exports it) and the `Diagnosis` a failure a person must fix
 * carries (`Diagnosis` re-exports it). The models are declared here, below `KubeError`, because `KubeStatus` and
 * `Diagnosis` make and read errors: declared there, `KubeError` would import them and they it.
 */
import * as Predicate from "effect/Predicate"
import type * as KubeError from "../KubeError.js"
import { redact } from "./errors.js"

/**
 * A cause of a `metav1.Status` (`details.causes[]`): for `Invalid`, one per
 * field; for apply conflicts, one per conflicting field.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusCause {
  readonly reason?: string | undefined
  readonly message?: string | undefined
  readonly field?: string | undefined
}

/**
 * `metav1.StatusDetails`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatusDetails {
  readonly name?: string | undefined
  readonly group?: string | undefined
  readonly kind?: string | undefined
  readonly uid?: string | undefined
  readonly causes?: ReadonlyArray<StatusCause> | undefined
  readonly retryAfterSeconds?: number | undefined
}

/**
 * `metav1.Status`, the body of every error answer of the API server (and of
 * watch `ERROR` events).
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  readonly kind?: string | undefined
  readonly apiVersion?: string | undefined
  readonly status?: string | undefined
  readonly message?: string | undefined
  readonly reason?: string | undefined
  readonly code?: number | undefined
  readonly details?: StatusDetails | undefined
}

/**
 * An RBAC rule (`rbac.authorization.k8s.io/v1` `PolicyRule`, without
 * `resourceNames` and `nonResourceURLs`).
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
}

/**
 * What a failure means for the person running the operator, and what to do.
 *
 * | `problem` | from | example `summary: fix` |
 * |---|---|---|
 * | `ResourceNotInstalled` | 404 "could not find the requested resource" | `the CustomResourceDefinition greetings.example.com (example.com/v1 Greeting) is not installed: apply it (…)` |
 * | `NamespaceNotFound` | 404 `namespaces "x" not found` (a write), or a namespaced informer's namespace | `namespace "x" does not exist: kubectl create namespace x` |
 * | `Forbidden` | 403 from RBAC | `the service account ops/greeter (…) may not list greetings.example.com in the namespace "default" (403 Forbidden): grant it with … the rule {apiGroups: [example.com], resources: [greetings], verbs: [list]}; …` |
 * | `Unauthorized` | 401, or credentials client-node could not compute | `the API server at https://… rejected the credentials (401 Unauthorized): the token may have expired; refresh it (…)` |
 * | `Unreachable` | connection refused, DNS, connect timeout, TLS verification, no answer | `cannot reach the API server at https://… (kubeconfig context "dev"): certificate signed by unknown authority: check certificate-authority-data (…)` |
 *
 * Never holds a token or a header.
 *
 * @since 0.1.0
 * @category models
 */
export interface Diagnosis {
  readonly problem: "ResourceNotInstalled" | "NamespaceNotFound" | "Forbidden" | "Unauthorized" | "Unreachable"
  /** What is wrong, in one clause. */
  readonly summary: string
  /** What to do about it. */
  readonly fix: string
  /** For `Forbidden`: the rule that would allow the request. */
  readonly rule?: PolicyRule | undefined
}

/** @internal */
export const TypeId: KubeError.TypeId = Symbol.for("@reconcile/kube/KubeError") as KubeError.TypeId

const where = (request: KubeError.RequestInfo | undefined): string =>
  request === undefined ? "" : `${request.method} ${request.path}: `

/** The message of a diagnosed error: what is wrong, then what to do. @internal */
export const diagnosed = (diagnosis: Diagnosis): string => `${diagnosis.summary}: ${diagnosis.fix}`

/**
 * The message of an error parsed from a Status: `method path: Tag (code reason): message`, with the field causes of
 * a `Conflict` or an `Invalid` (the reasons whose causes name fields) unless the message spans lines.
 *
 * @internal
 */
export const describe = (
  error: {
    readonly _tag: string
    readonly status: Status
    readonly request?: KubeError.RequestInfo | undefined
    readonly causes: ReadonlyArray<StatusCause>
    readonly diagnosis?: Diagnosis | undefined
  }
): string => {
  if (error.diagnosis !== undefined) return diagnosed(error.diagnosis)
  const status = error.status
  const head = `${where(error.request)}${error._tag} (${status.code ?? 0}${
    status.reason !== undefined ? ` ${status.reason}` : ""
  })`
  const message = status.message !== undefined && status.message !== "" ? `: ${redact(status.message)}` : ""
  const fieldCauses = error._tag === "Conflict" || error._tag === "Invalid" ? error.causes : []
  const causes = fieldCauses.length > 0 && !message.includes("\n")
    ? ` [${
      fieldCauses.map((c) => `${c.field !== undefined ? `${c.field}: ` : ""}${redact(c.message ?? c.reason ?? "")}`)
        .join("; ")
    }]`
    : ""
  return `${head}${message}${causes}`
}

/** @internal */
export const describeTransport = (error: KubeError.Transport): string => {
  if (error.diagnosis !== undefined) return diagnosed(error.diagnosis)
  const cause = error.cause
  const text = cause instanceof Error
    ? `${
      (cause as NodeJS.ErrnoException).code !== undefined ? `${(cause as NodeJS.ErrnoException).code} ` : ""
    }${cause.message}`
    : String(cause)
  return `${where(error.request)}transport error (${error.reason}): ${redact(text)}`
}

/** @internal */
export const describeDecode = (error: KubeError.Decode): string =>
  `${where(error.request)}cannot decode${error.kind !== undefined ? ` ${error.kind}` : ""}: ${redact(error.issue)}`

/**
 * The KubeErrors along `cause` properties and in Effect Causes (`reasons`), the first diagnosed one, else the first.
 *
 * @internal
 */
export const find = (u: unknown): KubeError.KubeError | undefined => {
  const found: Array<KubeError.KubeError> = []
  const seen = new Set<unknown>()
  const visit = (v: unknown, depth: number): void => {
    if (depth > 8 || typeof v !== "object" || v === null || seen.has(v)) return
    seen.add(v)
    if (Predicate.hasProperty(v, TypeId)) {
      found.push(v as KubeError.KubeError)
      return
    }
    const reasons = (v as { reasons?: unknown }).reasons
    if (Array.isArray(reasons)) {
      for (const reason of reasons) {
        const r = reason as { error?: unknown; defect?: unknown }
        visit(r.error, depth + 1)
        visit(r.defect, depth + 1)
      }
    }
    if ("cause" in v) visit((v as { cause?: unknown }).cause, depth + 1)
    if ("error" in v) visit((v as { error?: unknown }).error, depth + 1)
  }
  visit(u, 0)
  return found.find((e) => "diagnosis" in e && e.diagnosis !== undefined) ?? found[0]
}
