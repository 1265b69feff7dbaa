import * as Cause from "effect/Cause"
import type * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"

// --- secrets ------------------------------------------------------------------------------------------------------

/** What replaces a secret value. @internal */
export const redacted = "[REDACTED]"

/** Keys whose values are secrets: an annotation, a field of a logged object, a `key=value` pair in a message. */
const secretWords = "token|passw(?:or)?d|passphrase|secret|authorization|bearer|api[-_]?key|credentials?|cookie" +
  "|private[-_]?key|client[-_]?key"

const secretKeyPattern = new RegExp(secretWords, "i")

/** Whether a key names a secret (`token`, `password`, `authorization`, `x-api-key`, `clientSecret`, …). @internal */
export const isSecretKey = (key: string): boolean => secretKeyPattern.test(key)

/** `Bearer …`, `Basic …` (an Authorization header's credentials). */
const schemePattern = /\b(Bearer|Basic)(\s+)[^\s"',;]+/gi

/** `token=…`, `"password": "…"`, `access_token=…&`: a secret key, `=` or `:`, then its value (quoted or not). */
const keyValuePattern = new RegExp(
  `(["']?)([\\w.-]*(?:${secretWords})[\\w.-]*)\\1(\\s*[:=]\\s*)("(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^\\s"'&,;}\\]]+)`,
  "gi"
)

/** A JSON Web Token (three base64url parts, the first one a JSON object: `eyJ…`). */
const jwtPattern = /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g

/** A URL's password: `https://user:password@host` (any character but `@` and spaces, should it be unescaped). */
const userinfoPattern = /\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s]+@/gi

/** Replaces credentials in free text with {@link redacted}. @internal */
export const redactText = (text: string): string =>
  text
    .replace(schemePattern, `$1$2${redacted}`)
    .replace(keyValuePattern, (all: string, quote: string, key: string, separator: string, value: string) => {
      // `Authorization: Bearer …`: the scheme stays, its credentials were replaced above.
      if (/^(?:Bearer|Basic)$/i.test(value)) return all
      const quoted = value.startsWith("\"") ? `"${redacted}"` : value.startsWith("'") ? `'${redacted}'` : redacted
      return `${quote}${key}${quote}${separator}${quoted}`
    })
    .replace(jwtPattern, redacted)
    .replace(userinfoPattern, `$1${redacted}@`)

// --- errors -------------------------------------------------------------------------------------------------------

interface ErrorLike {
  readonly message: string
  readonly _tag?: unknown
  readonly name?: unknown
  readonly cause?: unknown
  readonly stack?: unknown
}

const isErrorLike = (u: unknown): u is ErrorLike =>
  u instanceof Error ||
  (typeof u === "object" && u !== null && "message" in u && typeof u.message === "string" &&
    (("_tag" in u && typeof u._tag === "string") || ("name" in u && typeof u.name === "string")))

/** `_tag: message` for a tagged error, `name: message` for a named error, the message for a plain `Error`. */
const headOf = (error: ErrorLike): string => {
  const tag = typeof error._tag === "string"
    ? error._tag
    : typeof error.name === "string" && error.name !== "Error"
    ? error.name
    : undefined
  const message = error.message
  return tag !== undefined && message !== "" ? `${tag}: ${message}` : tag ?? (message === "" ? "Error" : message)
}

/**
 * An error in one line: its head (see `headOf`), then its `cause` when the cause says more (`outer: inner`, as Go
 * wraps errors). No stack. @internal
 */
export const errorText = (u: unknown, depth = 0): string => {
  if (typeof u === "string") return u
  if (!isErrorLike(u)) return stringify(u)
  const head = headOf(u)
  const cause = u.cause
  if (depth >= 4 || cause === undefined || cause === null || !(typeof cause === "string" || isErrorLike(cause))) {
    return head
  }
  const inner = errorText(cause, depth + 1)
  const causeMessage = typeof cause === "string" ? cause : cause.message
  // A wrapper that took its message from its cause (`Reconcile.retryable(e)`): `Wrapper: Inner: message`.
  if (causeMessage === u.message && typeof u._tag === "string") return `${u._tag}: ${inner}`
  return head.includes(inner) ? head : `${head}: ${inner}`
}

/** Whether a stack frame belongs to Effect's runtime or to Node's internals. */
const internalFrame = /node_modules[\\/](?:effect|@effect)[\\/]|\(node:internal|\bat (?:async )?node:internal/

/** A stack without the frames of Effect's runtime and Node's internals (they say nothing about the failure). */
export const stackOf = (error: Error): string | undefined => {
  if (typeof error.stack !== "string") return undefined
  return error.stack
    .split("\n")
    .filter((line) => !(/^\s+at /.test(line) && internalFrame.test(line)))
    .join("\n")
}

/** The `error` (one line per reason, `; `-joined) and `stack` (of defects) of a cause. */
const causeFields = (cause: Cause.Cause<unknown>): { readonly error?: string; readonly stack?: string } => {
  const errors: Array<string> = []
  const stacks: Array<string> = []
  for (const reason of cause.reasons) {
    if (Cause.isFailReason(reason)) {
      errors.push(errorText(reason.error))
    } else if (Cause.isDieReason(reason)) {
      errors.push(errorText(reason.defect))
      if (reason.defect instanceof Error) {
        const stack = stackOf(reason.defect)
        if (stack !== undefined) stacks.push(stack)
      }
    } else if (Cause.isInterruptReason(reason)) {
      errors.push("interrupted")
    }
  }
  return {
    ...(errors.length > 0 ? { error: errors.join("; ") } : {}),
    ...(stacks.length > 0 ? { stack: stacks.join("\n") } : {})
  }
}

// --- values -------------------------------------------------------------------------------------------------------

/**
 * A JSON value for anything logged: strings redacted, values under a secret key replaced, errors as their one-line
 * text, `Redacted` values hidden, cycles and depth cut, bigints as strings. @internal
 */
export const jsonValue = (u: unknown, seen: Set<object> = new Set(), depth = 0): unknown => {
  switch (typeof u) {
    case "string":
      return redactText(u)
    case "number":
      return Number.isFinite(u) ? u : String(u)
    case "boolean":
      return u
    case "bigint":
      return u.toString()
    case "undefined":
      return null
    case "function":
    case "symbol":
      return String(u)
  }
  if (u === null || typeof u !== "object") return null
  if (Redacted.isRedacted(u)) return redacted
  if (u instanceof Date) return Number.isNaN(u.getTime()) ? "Invalid Date" : u.toISOString()
  if (isErrorLike(u)) return redactText(errorText(u))
  if (seen.has(u) || depth >= 8) return "[…]"
  seen.add(u)
  try {
    if (Array.isArray(u)) return u.map((item) => jsonValue(item, seen, depth + 1))
    if (u instanceof Map) return jsonValue(Object.fromEntries(u), seen, depth + 1)
    if (u instanceof Set) return jsonValue(Array.from(u), seen, depth + 1)
    if ("toJSON" in u && typeof u.toJSON === "function") {
      const json: unknown = u.toJSON()
      if (json !== u) return jsonValue(json, seen, depth + 1)
    }
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(u)) {
      if (value === undefined) continue
      Object.defineProperty(out, key, {
        value: isSecretKey(key) ? redacted : jsonValue(value, seen, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true
      })
    }
    return out
  } catch {
    // A getter or `toJSON` that throws: the record is still written.
    return "[unserializable]"
  } finally {
    seen.delete(u)
  }
}

/** Any value as text: strings as they are, the rest as compact JSON (see {@link jsonValue}). */
const stringify = (u: unknown): string => {
  const json = jsonValue(u)
  return typeof json === "string" ? json : JSON.stringify(json)
}

// --- records ------------------------------------------------------------------------------------------------------

/** One log record, redacted: the fixed fields, then the others in order (keys unique). @internal */
export interface LogRecord {
  readonly time: string
  readonly level: string
  readonly msg: string
  readonly fields: ReadonlyArray<readonly [key: string, value: unknown]>
}

/** A key not yet used on the line: `key`, else `key_`, `key__`, … */
const uniqueKey = (used: Set<string>, key: string): string => {
  let k = key
  while (used.has(k)) k += "_"
  used.add(k)
  return k
}

/** The record of a log call: message parts that are errors go to `error`, a cause to `error` (+ `stack`). @internal */
export const record = (options: Logger.Options<unknown>, spanUnit: "ms" | "number"): LogRecord => {
  const { cause, date, fiber, logLevel, message } = options
  const parts = Array.isArray(message) ? message : [message]
  const texts: Array<string> = []
  const errors: Array<string> = []
  for (const part of parts) {
    if (isErrorLike(part)) errors.push(errorText(part))
    else texts.push(typeof part === "string" ? part : stringify(part))
  }
  const fromCause = cause.reasons.length > 0 ? causeFields(cause) : {}
  if (fromCause.error !== undefined) errors.push(fromCause.error)

  const used = new Set(["time", "level", "msg"])
  const fields: Array<readonly [string, unknown]> = []
  if (errors.length > 0) fields.push([uniqueKey(used, "error"), redactText(errors.join("; "))])
  if (fromCause.stack !== undefined) fields.push([uniqueKey(used, "stack"), redactText(fromCause.stack)])
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) {
    fields.push([uniqueKey(used, key), isSecretKey(key) ? redacted : jsonValue(value)])
  }
  // the trace and span the line was written in (a reconcile's span when a tracer is installed): lines join traces
  const span = fiber.cache.span
  if (span !== undefined && span._tag === "Span") {
    fields.push([uniqueKey(used, "trace_id"), span.traceId], [uniqueKey(used, "span_id"), span.spanId])
  }
  const now = date.getTime()
  for (const [label, startedAt] of fiber.getRef(References.CurrentLogSpans)) {
    const millis = now - startedAt
    fields.push([uniqueKey(used, label), spanUnit === "ms" ? `${millis}ms` : millis])
  }
  return {
    time: date.toISOString(),
    level: logLevel.toLowerCase(),
    msg: redactText(texts.join(" ")),
    fields
  }
}

// --- lines --------------------------------------------------------------------------------------------------------

/** Line terminators JSON.stringify leaves as they are (it escapes the ASCII ones). */
const unicodeBreaks = /[\u0085\u2028\u2029]/g

const escapeBreaks = (json: string): string =>
  json.replace(unicodeBreaks, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** A value that needs no quotes: no space, quote, `=`, backslash or control character. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be quoted (and escaped)
const bare = /^[^\s"=\\\u0000-\u001f\u007f-\u009f\u2028\u2029]+$/

const logfmtKey = (key: string): string => {
  const k = key.replace(/[^\w.\-/]/g, "_")
  return k === "" ? "_" : k
}

const logfmtValue = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null"
  return bare.test(text) ? text : escapeBreaks(JSON.stringify(text))
}

/** A record as one logfmt line. @internal */
export const logfmtLine = (r: LogRecord): string => {
  let out = `time=${r.time} level=${r.level} msg=${logfmtValue(r.msg)}`
  for (const [key, value] of r.fields) out += ` ${logfmtKey(key)}=${logfmtValue(value)}`
  return out
}

/** A record as one JSON object on one line. @internal */
export const jsonLine = (r: LogRecord): string => {
  const out: Record<string, unknown> = { time: r.time, level: r.level, msg: r.msg }
  for (const [key, value] of r.fields) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return escapeBreaks(JSON.stringify(out))
}

/** @internal */
export const formatLogfmt: Logger.Logger<unknown, string> = Logger.make((options) => logfmtLine(record(options, "ms")))

/** @internal */
export const formatJson: Logger.Logger<unknown, string> = Logger.make((options) => jsonLine(record(options, "number")))

/** Writes a formatter's line with the fiber's console: `console.log`, or `console.error` under `LogToStderr`. */
const toConsole = (format: Logger.Logger<unknown, string>): Logger.Logger<unknown, void> => {
  const out = Logger.withConsoleLog(format)
  const err = Logger.withConsoleError(format)
  return Logger.make((options) => options.fiber.getRef(Logger.LogToStderr) ? err.log(options) : out.log(options))
}

/**
 * Effect's pretty console logger, fed redacted messages, causes and annotations (it reads the annotations from the
 * fiber: it gets a view of the fiber whose annotations are redacted).
 */
const prettyRedacted = (): Logger.Logger<unknown, void> => {
  const pretty = Logger.consolePretty()
  return Logger.make((options) => {
    const parts = Array.isArray(options.message) ? options.message : [options.message]
    const message = parts.map((part) => (typeof part === "string" ? redactText(part) : jsonValue(part)))
    const annotations = jsonValue(options.fiber.getRef(References.CurrentLogAnnotations))
    const fiber = new Proxy(options.fiber, {
      get: (target, property, receiver) =>
        property === "getRef"
          ? (ref: unknown) => ref === References.CurrentLogAnnotations ? annotations : target.getRef(ref as never)
          : Reflect.get(target, property, receiver)
    }) as Fiber.Fiber<unknown, unknown>
    return pretty.log({ ...options, message, fiber, cause: safeCause(options.cause) })
  })
}

/** A copy of an error that is safe to print: message and stack redacted. */
const safeError = (u: unknown): unknown => {
  if (!isErrorLike(u)) return jsonValue(u)
  const error = new Error(redactText(u.message))
  error.name = typeof u._tag === "string" ? u._tag : typeof u.name === "string" ? u.name : "Error"
  const stack = u instanceof Error ? stackOf(u) : undefined
  error.stack = stack === undefined ? `${error.name}: ${error.message}` : redactText(stack)
  return error
}

const safeCause = (cause: Cause.Cause<unknown>): Cause.Cause<unknown> =>
  cause.reasons.length === 0 ? cause : Cause.fromReasons(cause.reasons.map((reason) =>
    Cause.isFailReason(reason)
      ? Cause.makeFailReason(safeError(reason.error))
      : Cause.isDieReason(reason)
      ? Cause.makeDieReason(safeError(reason.defect))
      : reason
  ))

/** @internal */
export const logger = (format: "logfmt" | "json" | "pretty"): Logger.Logger<unknown, void> =>
  format === "json" ? toConsole(formatJson) : format === "pretty" ? prettyRedacted() : toConsole(formatLogfmt)
