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

/** The message of a diagnosed error: what is wrong, then what to do. @internal */
export const diagnosed = (diagnosis: KubeError.Diagnosis): string => `${diagnosis.summary}: ${diagnosis.fix}`

/** @internal */
export const describe = (
  error: {
    readonly _tag: string
    readonly status: KubeError.Status
    readonly request?: KubeError.RequestInfo | undefined
    readonly causes?: ReadonlyArray<KubeError.StatusCause>
    readonly retryAfter?: Duration.Duration | undefined
    readonly diagnosis?: KubeError.Diagnosis | undefined
  }
): string => {
  if (error.diagnosis !== undefined) return diagnosed(error.diagnosis)
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
 * Whether a request writes: anything but a read (`GET`, `HEAD`). An error
 * without request information counts as a write.
 *
 * @internal
 */
export const isWrite = (request: KubeError.RequestInfo | undefined): boolean =>
  request === undefined || (request.method !== "GET" && request.method !== "HEAD")

/**
 * What the server said, for a user: the Status message (redacted), followed by
 * the field causes it does not already name. Falls back to the error's own
 * message when the server sent none.
 *
 * @internal
 */
export const serverMessage = (error: KubeError.KubeError): string => {
  if (!("status" in error)) return error.message
  const text = error.status.message !== undefined && error.status.message !== "" ? redact(error.status.message) : ""
  const causes = "causes" in error ? error.causes : (error.status.details?.causes ?? [])
  const missing = causes
    .map((c) =>
      `${c.field !== undefined && c.field !== "" ? `${c.field}: ` : ""}${redact(c.message ?? c.reason ?? "")}`
    )
    .filter((c) => c !== "" && !text.includes(c))
  if (text === "" && missing.length === 0) return error.message
  return [text, ...missing].filter((s) => s !== "").join("; ")
}

/**
 * Whether retrying the reconcile cannot help until the object (or what it
 * depends on) changes: the verdict of `KubeError.toOutcome`.
 *
 * @internal
 */
export const isTerminal = (error: KubeError.KubeError): boolean => {
  switch (error._tag) {
    case "Invalid":
    case "BadRequest":
    case "MethodNotAllowed":
    case "Encode":
      return true
    case "Decode":
      // an object of a known kind that does not match its Schema stays so until it changes; an answer that is not
      // JSON at all (a proxy's error page, a cut body) may be fine next time
      return error.kind !== undefined
    case "Forbidden":
      return isWrite(error.request)
    case "Conflict":
      return error.causes.some((c) => c.reason === "FieldManagerConflict")
    case "UnexpectedStatus":
      return error.code >= 400 && error.code < 500
    case "NotFound":
    case "AlreadyExists":
    case "Gone":
    case "Unauthorized":
    case "TooManyRequests":
    case "ServerError":
    case "Timeout":
    case "Transport":
      return false
  }
}
