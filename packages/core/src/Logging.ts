/**
 * Logs people can read and machines can parse: one line per record, logfmt
 * (default) or JSON, and a minimum level — what an operator's main job sets
 * from `--log-format` / `LOG_FORMAT` and `--log-level` / `LOG_LEVEL`.
 *
 * (Contract stub written by the lead; the logging helper completes it.)
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"

/**
 * The line format: `logfmt` (`key=value` pairs), `json` (one object per line),
 * or `pretty` (Effect's multi-line console logger, for development only).
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "logfmt" | "json" | "pretty"

/**
 * The minimum level, in the words `LOG_LEVEL` takes.
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
  readonly format?: Format | undefined
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
 * Replaces the loggers with one line per record in the given format (default
 * logfmt) and sets the minimum level (default info).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.layer([
      options.format === "json"
        ? Logger.consoleJson
        : options.format === "pretty"
        ? Logger.consolePretty()
        : Logger.consoleLogFmt
    ]),
    Layer.succeed(References.MinimumLogLevel, levels[options.level ?? "info"])
  )
