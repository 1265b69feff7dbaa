/**
 * How the main job and the `reconcile` command run their `effect/cli` Command:
 *
 * - `--help` prints the Command's help (effect/cli's format) on stdout; so does `--completions SHELL` its
 *   completion script, when the command has a name a shell can complete (`reconcile`, not `npm start --`).
 * - An invalid command line is one message in the words of the flags (`unknown option --x`, `--namespace needs a
 *   value`, `--namespace is given twice`), never the whole help: the caller prints it as `error: …` and exits 2.
 * - No other built-in flag: `--log-level` is the main job's own, and there is no `--version` or `--wizard`.
 * - A switch takes no value ({@link switchWithValue}): `--in-cluster=no` is refused, not read as its absence.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { CliConfig, CliError, CliOutput, Command, GlobalFlag } from "effect/cli"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Whether `name` is a word a shell completes: one executable name, not `npm start --` or `node dist/main.js`.
 *
 * @internal
 */
export const completable = (name: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)

/**
 * A Console whose `log` lines go to `lines` (the help and the completion scripts are logged); the rest is the
 * process's console.
 *
 * @internal
 */
export const capture = (lines: Array<string>): Console.Console =>
  Object.assign(Object.create(globalThis.console) as Console.Console, {
    log: (...args: ReadonlyArray<unknown>) => void lines.push(args.map(String).join(" "))
  })

/** Prints the help only when it is asked for (`--help`): a bad command line is reported by the caller. */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    event._tag === "Help" && event.reason === "Requested"
      ? Effect.gen(function*() {
        const formatter = yield* CliOutput.Formatter
        yield* Console.log(formatter.formatHelpDoc(event.helpDoc))
      })
      : Effect.void
}

/** One invalid-input error of effect/cli as one sentence, for the command named `name`. */
const sentence = (error: CliError.NonShowHelpErrors, name: string): string => {
  switch (error._tag) {
    case "UnrecognizedOption":
      return error.option === "--completions" && !completable(name)
        ? `--completions is for a program run by one name, the word a shell completes: "${name}" is not one ` +
          "(docs/cli.md, Shell completions)"
        : `unknown option ${error.option}${
          error.suggestions.length > 0 ? ` (did you mean ${error.suggestions.join(" or ")}?)` : ""
        }`
    case "UnexpectedArgument":
      return `unexpected argument ${error.arguments.map((a) => JSON.stringify(a)).join(", ")}`
    case "UnknownSubcommand":
      return `unknown command "${error.subcommand}"${
        error.suggestions.length > 0 ? ` (did you mean ${error.suggestions.join(" or ")}?)` : ""
      }`
    case "MissingOption":
      return `--${error.option} is required`
    case "InvalidValue":
      return error.value === ""
        ? `--${error.option} needs a value`
        : error.expected === "at most 1 value"
        ? `--${error.option} is given twice`
        : error.message
    default:
      // ValidationError: the flags' own checks and the commands' refusals, whose message is the sentence
      return error.message
  }
}

/** The words effect/cli reads as the value of a boolean flag given before them. */
const booleans = new Set(["true", "yes", "on", "1", "y", "false", "no", "off", "0", "n"])

/**
 * The switch of `switches` given a value, if one is: effect/cli reads `--in-cluster=yes` and `--in-cluster yes` as
 * `--in-cluster`, and `--in-cluster=no` as its absence; here a switch takes no value.
 *
 * @internal
 */
export const switchWithValue = (argv: ReadonlyArray<string>, switches: ReadonlySet<string>): string | undefined => {
  const end = argv.indexOf("--")
  const options = end === -1 ? argv : argv.slice(0, end)
  for (let i = 0; i < options.length; i++) {
    const arg = options[i]!
    const eq = arg.indexOf("=")
    if (eq !== -1 && switches.has(arg.slice(0, eq))) return arg.slice(0, eq)
    if (switches.has(arg) && booleans.has(options[i + 1] ?? "")) return arg
  }
  return undefined
}

/**
 * Runs `command` on `argv`. Fails with `invalid(message, path)` when the command line is invalid: the first
 * problem in one sentence, and the command it is about (`["reconcile", "manifests"]`, for `… --help`). The
 * handler's own failures pass through.
 *
 * @internal
 */
export const run = <Name extends string, Input, E, R, X>(
  command: Command.Command<Name, Input, {}, E, R>,
  argv: ReadonlyArray<string>,
  invalid: (message: string, path: ReadonlyArray<string>) => X
): Effect.Effect<void, Exclude<E, CliError.CliError> | X, Exclude<R, Command.Environment>> =>
  Command.runWith(command, { version: "", renderErrors: false })(argv).pipe(
    Effect.catchIf(CliError.isCliError, (error) =>
      Effect.fail(
        error._tag !== "ShowHelp"
          ? invalid(sentence(error, command.name), [command.name])
          : invalid(
            error.errors.length > 0 ? sentence(error.errors[0]!, command.name) : "no command given",
            error.commandPath.length > 0 ? error.commandPath : [command.name]
          )
      )),
    Effect.provide(Layer.mergeAll(
      CliConfig.layer({
        builtIns: completable(command.name) ? [GlobalFlag.Help, GlobalFlag.Completions] : [GlobalFlag.Help]
      }),
      CliOutput.layerPresenter(presenter),
      NodeServices.layer
    ))
  )
