import type * as Duration from "effect/Duration"
import type * as KubeError from "../KubeError.js"

/** @internal */
export const TypeId: KubeError.TypeId = Symbol.for("@reconcile/kube/KubeError") as KubeError.TypeId

/** @internal */
export const maxRawLength = 512

/** @internal */
export const truncate = (raw: string): string =>
  raw.length <= maxRawLength ? raw : `${raw.slice(0, maxRawLength)}… (${raw.length} chars)`

const bearer = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi
const tokenish = /("?(?:token|password|client-key-data|id-token|refresh-token|access-token)"?\s*[:=]\s*)"?[^\s",}]+"?/gi

/**
 * Removes credentials from a message that may quote a header, an exec
 * plugin's output or a kubeconfig.
 *
 * @internal
 */
export const redact = (text: string): string => text.replace(bearer, "$1 <redacted>").replace(tokenish, "$1<redacted>")

const where = (request: KubeError.RequestInfo | undefined): string =>
  request === undefined ? "" : `${request.method} ${request.path}: `

/** @internal */
export const describe = (
  error: {
    readonly _tag: string
    readonly status: KubeError.Status
    readonly request?: KubeError.RequestInfo | undefined
    readonly causes?: ReadonlyArray<KubeError.StatusCause>
    readonly retryAfter?: Duration.Duration | undefined
  }
): string => {
  const status = error.status
  const head = `${where(error.request)}${error._tag} (${status.code ?? 0}${
    status.reason !== undefined ? ` ${status.reason}` : ""
  })`
  const message = status.message !== undefined && status.message !== "" ? `: ${redact(status.message)}` : ""
  const causes = error.causes !== undefined && error.causes.length > 0 && !message.includes("\n")
    ? ` [${
      error.causes.map((c) => `${c.field !== undefined ? `${c.field}: ` : ""}${redact(c.message ?? c.reason ?? "")}`)
        .join("; ")
    }]`
    : ""
  return `${head}${message}${causes}`
}

/** @internal */
export const describeTransport = (error: KubeError.Transport): string => {
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
