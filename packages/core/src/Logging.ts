/**
 * Logs people can read and machines can parse: one line per record, logfmt
 * (default) or JSON, and a minimum level — what an operator's main job sets
 * from `--log-format` / `LOG_FORMAT` and `--log-level` / `LOG_LEVEL`.
 *
 * ```text
 * time=2026-11-30T16:00:00.000Z level=error msg="Reconciler error" error="Conflict: modified" controller=webapp …
 * {"time":"2026-11-30T16:00:00.000Z","level":"info","msg":"Starting workers","controller":"webapp","worker count":1}
 * ```
 *
 * - Each record is one line: `time`, `level`, `msg`, then `error` (an error
 *   logged as a message part or a cause, as `_tag: message`), `stack` (only
 *   for a defect, without Effect's runtime frames), the log annotations and
 *   the log spans (milliseconds). Newlines in values are escaped.
 * - No secret reaches a line: the value of an annotation or object field
 *   whose key names a secret (`token`, `password`, `authorization`,
 *   `apiKey`, `secret`, `cookie`, …) is replaced by `[REDACTED]`, and so are
 *   `Bearer …`/`Basic …` credentials, `token=…`-like pairs, JSON Web Tokens
 *   and URL passwords in any text (see {@link redact}).
 * - Lines go to `console.log` (stdout), or `console.error` (stderr) when
 *   effect's `Logger.LogToStderr` is `true`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Logging } from "@reconcile/core"
 *
 * const program = Effect.logInfo("hello").pipe(Effect.annotateLogs({ name: "web" }))
 *
 * Effect.gen(function*() {
 *   const options = yield* Logging.optionsFromEnv(process.env) // LOG_FORMAT, LOG_LEVEL
 *   yield* program.pipe(Effect.provide(Logging.layer(options)))
 *   // time=… level=info msg=hello name=web
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as internal from "./internal/logging.js"

/**
 * The line format: `logfmt` (`key=value` pairs, the default), `json` (one
 * object per line), or `pretty` (Effect's colored console logger, for
 * development only: it prints causes on several lines).
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "logfmt" | "json" | "pretty"

/**
 * The minimum level, in the words `LOG_LEVEL` takes: records below it are
 * dropped (`all` keeps everything, `none` nothing; the default is `info`).
 *
 * @since 0.1.0
 * @category models
 */
export type Level = "all" | "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "none"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default `logfmt`. */
  readonly format?: Format | undefined
  /** Default `info`. */
  readonly level?: Level | undefined
}

/**
 * A `--log-format`/`--log-level` value (or `LOG_FORMAT`/`LOG_LEVEL`) that is not one of the accepted words.
 *
 * @since 0.1.0
 * @category errors
 */
export class LoggingError extends Data.TaggedError("LoggingError")<{ readonly message: string }> {}

const levels: Record<Level, "All" | "Trace" | "Debug" | "Info" | "Warn" | "Error" | "Fatal" | "None"> = {
  all: "All",
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None"
}

/**
 * Parses a format word (case-insensitive).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseFormat = (value: string): Effect.Effect<Format, LoggingError> => {
  const v = value.toLowerCase()
  return v === "logfmt" || v === "json" || v === "pretty"
    ? Effect.succeed(v)
    : Effect.fail(new LoggingError({ message: `log format "${value}" is not one of logfmt, json, pretty` }))
}

/**
 * Parses a level word (case-insensitive; `warning` is `warn`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseLevel = (value: string): Effect.Effect<Level, LoggingError> => {
  const v = value.toLowerCase() === "warning" ? "warn" : value.toLowerCase()
  return v in levels
    ? Effect.succeed(v as Level)
    : Effect.fail(new LoggingError({ message: `log level "${value}" is not one of ${Object.keys(levels).join(", ")}` }))
}

/**
 * The options `LOG_FORMAT` and `LOG_LEVEL` give (unset or empty: not given).
 *
 * @since 0.1.0
 * @category parsing
 */
export const optionsFromEnv = (
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Options, LoggingError> =>
  Effect.gen(function*() {
    const format = env.LOG_FORMAT ? yield* parseFormat(env.LOG_FORMAT) : undefined
    const level = env.LOG_LEVEL ? yield* parseLevel(env.LOG_LEVEL) : undefined
    return { format, level }
  })

/**
 * A logger writing one line per record in the given format (default logfmt)
 * with the fiber's console, for `Logger.layer` when it must sit beside other
 * loggers.
 *
 * @since 0.1.0
 * @category loggers
 */
export const logger = (format: Format = "logfmt"): Logger.Logger<unknown, void> => internal.logger(format)

/**
 * The logfmt line of a record, without writing it:
 * `time=… level=info msg="…" key=value …`.
 *
 * @example
 * ```ts
 * import { Effect, Logger } from "effect"
 * import { Logging } from "@reconcile/core"
 *
 * const lines: Array<string> = []
 * const capture = Logger.map(Logging.formatLogfmt, (line) => {
 *   lines.push(line)
 * })
 * Effect.logInfo("hello").pipe(Effect.provide(Logger.layer([capture])))
 * ```
 *
 * @since 0.1.0
 * @category formatters
 */
export const formatLogfmt: Logger.Logger<unknown, string> = internal.formatLogfmt

/**
 * The JSON line of a record, without writing it: `time`, `level`, `msg`,
 * then `error`, `stack`, the annotations and the spans (milliseconds) as
 * fields.
 *
 * @since 0.1.0
 * @category formatters
 */
export const formatJson: Logger.Logger<unknown, string> = internal.formatJson

/**
 * An error on one line, as the formatters render it: `_tag: message` for a
 * tagged error, `name: message` for a named `Error`, the message of a plain
 * `Error`, followed by its `cause` when that says more (`outer: inner`). No
 * stack, no redaction (see {@link redact}).
 *
 * @since 0.1.0
 * @category formatters
 */
export const formatError: (error: unknown) => string = (error) => internal.errorText(error)

/**
 * Replaces credentials in text with `[REDACTED]`: `Bearer …` and `Basic …`,
 * the value of `key=value` / `key: value` / `"key":"value"` pairs whose key
 * names a secret (`token`, `password`, `secret`, `apiKey`, …), JSON Web Tokens
 * and the password of `scheme://user:password@host`. The formatters apply it
 * to every value; use it for text printed outside the logger (e.g. an
 * `error: …` line before exiting).
 *
 * @example
 * ```ts
 * import { Logging } from "@reconcile/core"
 *
 * Logging.redact("GET /api: Authorization: Bearer abc.def") // "GET /api: Authorization: Bearer [REDACTED]"
 * ```
 *
 * @since 0.1.0
 * @category redaction
 */
export const redact: (text: string) => string = internal.redactText

/**
 * Replaces the loggers with one line per record in the given format (default
 * logfmt) and sets the minimum level (default info).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Logging } from "@reconcile/core"
 *
 * Effect.logDebug("shown").pipe(Effect.provide(Logging.layer({ format: "json", level: "debug" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.layer([internal.logger(options.format ?? "logfmt")]),
    Layer.succeed(References.MinimumLogLevel, levels[options.level ?? "info"])
  )
