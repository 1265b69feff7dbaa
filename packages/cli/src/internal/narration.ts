/**
 * The main job's narration (`Installed …`, `Applied …`, the "Try it" text, an operator's own lines): text on the
 * console, except with `--log-format json`, where every line the process writes must be a JSON record — there each
 * line is a log record of the same facts as fields, through the process's logger (so it has the format and the
 * minimum level of the others, and the fiber's log annotations).
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

/**
 * Whether the narration is written as log records (`--log-format json`); `false` (text) by default.
 *
 * @internal
 */
export const AsRecords: Context.Reference<boolean> = Context.Reference<boolean>(
  "@reconcile/cli/Main/NarrationAsRecords",
  { defaultValue: () => false }
)

/**
 * What a line of narration is as a record: its message, its fields, its level (default `info`), and whether it goes
 * to stderr (as the text does: warnings and errors).
 *
 * @internal
 */
export interface Record {
  readonly message: string
  readonly fields?: { readonly [key: string]: unknown } | undefined
  readonly level?: "info" | "warn" | "error" | undefined
  readonly stderr?: boolean | undefined
}

const log = (record: Record): Effect.Effect<void> => {
  const level = record.level ?? "info"
  const logged = level === "error"
    ? Effect.logError(record.message)
    : level === "warn"
    ? Effect.logWarning(record.message)
    : Effect.logInfo(record.message)
  return logged.pipe(
    Effect.annotateLogs(record.fields ?? {}),
    Effect.provideService(Logger.LogToStderr, record.stderr === true)
  )
}

/**
 * `text` on the console (stdout, or stderr with `record.stderr`), or, when the narration is records, `record`
 * (nothing when `record` is `undefined`: the fact is already in another record).
 *
 * @internal
 */
export const narrate = (text: string, record: Record | undefined): Effect.Effect<void> =>
  Effect.flatMap(
    AsRecords,
    (asRecords) =>
      asRecords
        ? record === undefined ? Effect.void : log(record)
        : record?.stderr === true
        ? Console.error(text)
        : Console.log(text)
  )
