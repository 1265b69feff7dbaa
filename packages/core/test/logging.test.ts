// @effect/vitest 4: `it.effect` runs scoped with a TestClock at 0, so record times are 1970-01-01T00:00:00.000Z.
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Data, Effect, Layer, Logger, Redacted, References, Schema } from "effect"
import { TestConsole } from "effect/testing"
import * as Logging from "../src/Logging.js"
import * as Reconcile from "../src/Reconcile.js"

class Conflict extends Data.TaggedError("Conflict")<{ readonly message: string }> {}

/** A logger that keeps the lines of one format, and the Layer installing it alone (every level kept). */
const capture = (format: "logfmt" | "json") => {
  const lines: Array<string> = []
  const logger = Logger.map(format === "json" ? Logging.formatJson : Logging.formatLogfmt, (line) => {
    lines.push(line)
  })
  return { lines, layer: Layer.mergeAll(Logger.layer([logger]), Layer.succeed(References.MinimumLogLevel, "All")) }
}

const logged = <A, E>(format: "logfmt" | "json", effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const { layer, lines } = capture(format)
    yield* Effect.exit(Effect.provide(effect, layer))
    return lines
  })

/** Throws, so that the defect's stack has a frame in this file. */
const explode = (message: string): never => {
  throw new TypeError(message)
}

const time = "1970-01-01T00:00:00.000Z"

describe("Logging: logfmt (the default)", () => {
  it.effect("one line: time, level, msg, then the annotations in order", () =>
    Effect.gen(function*() {
      const lines = yield* logged(
        "logfmt",
        Effect.logInfo("Starting workers").pipe(
          Effect.annotateLogs({ controller: "webapp", namespace: "default", name: "web", "worker count": 2 })
        )
      )
      assert.deepStrictEqual(lines, [
        `time=${time} level=info msg="Starting workers" controller=webapp namespace=default name=web worker_count=2`
      ])
    }))

  it.effect("an error as a message part is error=\"_tag: message\", with its cause when it says more; no stack", () =>
    Effect.gen(function*() {
      const conflict = new Conflict({ message: "the object has been modified" })
      const wrapped = new Error("could not apply", { cause: conflict })
      const lines = yield* logged(
        "logfmt",
        Effect.gen(function*() {
          yield* Effect.logError("Reconciler error", conflict)
          yield* Effect.logError("plain", new Error("boom"))
          yield* Effect.logError("named", new RangeError("too far"))
          yield* Effect.logError("wrapped", wrapped)
          yield* Effect.logError("outcome", Reconcile.retryable(conflict))
        })
      )
      assert.deepStrictEqual(lines, [
        `time=${time} level=error msg="Reconciler error" error="Conflict: the object has been modified"`,
        `time=${time} level=error msg=plain error=boom`,
        `time=${time} level=error msg=named error="RangeError: too far"`,
        `time=${time} level=error msg=wrapped error="could not apply: Conflict: the object has been modified"`,
        `time=${time} level=error msg=outcome error="Retryable: Conflict: the object has been modified"`
      ])
    }))

  it.effect("a failure cause is its error; a defect keeps its stack, escaped, without Effect's runtime frames", () =>
    Effect.gen(function*() {
      const lines = yield* logged(
        "logfmt",
        Effect.gen(function*() {
          yield* Effect.catchCause(new Conflict({ message: "modified" }), (cause) => Effect.logWarning("failed", cause))
          yield* Effect.catchCause(Effect.sync(() => explode("bad\nthing")), (cause) => Effect.logError("panic", cause))
        })
      )
      assert.strictEqual(lines[0], `time=${time} level=warn msg=failed error="Conflict: modified"`)
      const panic = lines[1]!
      assert.match(
        panic,
        /^time=\S+ level=error msg=panic error="TypeError: bad\\nthing" stack="TypeError: bad\\nthing\\n/
      )
      assert.include(panic, "at explode (")
      assert.include(panic, "logging.test.ts:")
      assert.notInclude(panic, "node_modules/effect")
      assert.notInclude(panic, "node:internal")
      assert.notInclude(panic, "\n")
    }))

  it.effect("values are quoted when they must be; spans are durations; keys are made bare", () =>
    Effect.gen(function*() {
      const lines = yield* logged(
        "logfmt",
        Effect.logInfo("a \"quoted\"\nmessage").pipe(
          Effect.annotateLogs({ "a key": "", eq: "a=b", object: { n: 1, list: [true] }, none: undefined }),
          Effect.withLogSpan("reconcile")
        )
      )
      assert.deepStrictEqual(lines, [
        `time=${time} level=info msg="a \\"quoted\\"\\nmessage" a_key="" eq="a=b" ` +
        `object="{\\"n\\":1,\\"list\\":[true]}" none=null reconcile=0ms`
      ])
    }))
})

describe("Logging: json", () => {
  it.effect("one object per line: time, level, msg, error, annotations, spans (milliseconds) as fields", () =>
    Effect.gen(function*() {
      const lines = yield* logged(
        "json",
        Effect.logError("Reconciler error", new Conflict({ message: "modified" })).pipe(
          Effect.annotateLogs({ controller: "webapp", attempt: 3, msg: "clash", nested: { a: [1, "x"] } }),
          Effect.withLogSpan("reconcile")
        )
      )
      assert.strictEqual(lines.length, 1)
      const line = lines[0]!
      assert.deepStrictEqual(Object.keys(JSON.parse(line)), [
        "time",
        "level",
        "msg",
        "error",
        "controller",
        "attempt",
        "msg_",
        "nested",
        "reconcile"
      ])
      assert.deepStrictEqual(JSON.parse(line), {
        time,
        level: "error",
        msg: "Reconciler error",
        error: "Conflict: modified",
        controller: "webapp",
        attempt: 3,
        msg_: "clash",
        nested: { a: [1, "x"] },
        reconcile: 0
      })
    }))

  it.effect("cycles, bigints, dates, Redacted values and non-finite numbers are serialised without failing", () =>
    Effect.gen(function*() {
      const cyclic: Record<string, unknown> = { name: "loop" }
      cyclic.self = cyclic
      const lines = yield* logged(
        "json",
        Effect.logInfo("values").pipe(Effect.annotateLogs({
          cyclic,
          big: 10n,
          date: new Date(0),
          hidden: Redacted.make("hunter2"),
          nan: Number.NaN
        }))
      )
      const record = JSON.parse(lines[0]!)
      assert.deepStrictEqual(record.cyclic, { name: "loop", self: "[…]" })
      assert.strictEqual(record.big, "10")
      assert.strictEqual(record.date, time)
      assert.strictEqual(record.hidden, "[REDACTED]")
      assert.strictEqual(record.nan, "NaN")
      assert.notInclude(lines[0]!, "hunter2")
    }))
})

describe("Logging.layer", () => {
  it.effect("logfmt by default, at info: debug is dropped; one console.log call per record", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        yield* Effect.logDebug("hidden")
        yield* Effect.logInfo("shown")
      }).pipe(Effect.provide(Logging.layer()))
      assert.deepStrictEqual(yield* TestConsole.logLines, [`time=${time} level=info msg=shown`])
    }).pipe(Effect.provide(TestConsole.layer)))

  it.effect("json and a level; LogToStderr sends the lines to console.error", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
        yield* Effect.logTrace("hidden")
        yield* Effect.logDebug("shown")
      })
      yield* program.pipe(Effect.provide(Logging.layer({ format: "json", level: "debug" })))
      yield* program.pipe(
        Effect.provide(Logging.layer({ level: "debug" })),
        Effect.provideService(Logger.LogToStderr, true)
      )
      assert.deepStrictEqual(yield* TestConsole.logLines, [`{"time":"${time}","level":"debug","msg":"shown"}`])
      assert.deepStrictEqual(yield* TestConsole.errorLines, [`time=${time} level=debug msg=shown`])
    }).pipe(Effect.provide(TestConsole.layer)))

  it.effect("none drops everything; warn drops info", () =>
    Effect.gen(function*() {
      yield* Effect.logError("x").pipe(Effect.provide(Logging.layer({ level: "none" })))
      yield* Effect.logInfo("y").pipe(Effect.provide(Logging.layer({ level: "warn" })))
      yield* Effect.logWarning("z").pipe(Effect.provide(Logging.layer({ level: "warn" })))
      assert.deepStrictEqual(yield* TestConsole.logLines, [`time=${time} level=warn msg=z`])
    }).pipe(Effect.provide(TestConsole.layer)))

  it.effect("pretty (development) redacts too", () =>
    Effect.gen(function*() {
      yield* Effect.logError("Authorization: Bearer abcdefghijkl", new Error("password=hunter2hunter2")).pipe(
        Effect.annotateLogs({ token: "t0k3n-t0k3n" }),
        Effect.provide(Logging.layer({ format: "pretty" }))
      )
      const printed = JSON.stringify([yield* TestConsole.logLines, yield* TestConsole.errorLines])
      assert.include(printed, "Bearer [REDACTED]")
      for (const secret of ["abcdefghijkl", "hunter2hunter2", "t0k3n-t0k3n"]) assert.notInclude(printed, secret)
    }).pipe(Effect.provide(TestConsole.layer)))
})

describe("Logging: parsing --log-format / --log-level / LOG_FORMAT / LOG_LEVEL", () => {
  it.effect("accepted words, case-insensitive; warning is warn", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Logging.parseFormat("JSON"), "json")
      assert.strictEqual(yield* Logging.parseFormat("logfmt"), "logfmt")
      assert.strictEqual(yield* Logging.parseLevel("WARNING"), "warn")
      assert.strictEqual(yield* Logging.parseLevel("Debug"), "debug")
      assert.deepStrictEqual(yield* Logging.optionsFromEnv({ LOG_FORMAT: "json", LOG_LEVEL: "error" }), {
        format: "json",
        level: "error"
      })
      assert.deepStrictEqual(yield* Logging.optionsFromEnv({ LOG_FORMAT: "" }), {
        format: undefined,
        level: undefined
      })
    }))

  it.effect("anything else is a LoggingError naming the accepted words", () =>
    Effect.gen(function*() {
      const format = yield* Effect.flip(Logging.parseFormat("yaml"))
      assert.strictEqual(format._tag, "LoggingError")
      assert.strictEqual(format.message, "log format \"yaml\" is not one of logfmt, json, pretty")
      const level = yield* Effect.flip(Logging.optionsFromEnv({ LOG_LEVEL: "loud" }))
      assert.strictEqual(
        level.message,
        "log level \"loud\" is not one of all, trace, debug, info, warn, error, fatal, none"
      )
    }))
})

// --- properties ---------------------------------------------------------------------------------------------------

const anyText = Arbitrary.schema(Schema.String)
const anyKey = Arbitrary.schema(Schema.String.check(Schema.isMinLength(1)))

const pick = <const A extends ReadonlyArray<unknown>>(values: A): Arbitrary.Arbitrary<A[number]> =>
  Arbitrary.map(
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: values.length - 1 }))),
    (i) => values[i]
  )

/** Breaks a line reader could split on. */
// eslint-disable-next-line no-control-regex -- the control characters that split lines are what is checked
const lineBreak = /[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/

describe("Logging properties", () => {
  it.effect.prop(
    "one line per record whatever the text: no line break in logfmt or JSON; JSON parses and keeps the message",
    [anyText, anyKey, anyText, anyText],
    ([message, key, value, errorMessage]) =>
      Effect.gen(function*() {
        const program = Effect.logError(message, new Error(errorMessage)).pipe(Effect.annotateLogs(key, value))
        const logfmt = yield* logged("logfmt", program)
        const json = yield* logged("json", program)
        assert.strictEqual(logfmt.length, 1)
        assert.strictEqual(json.length, 1)
        assert.notMatch(logfmt[0]!, lineBreak)
        assert.notMatch(json[0]!, lineBreak)
        const record = JSON.parse(json[0]!)
        assert.strictEqual(record.msg, Logging.redact(message))
      })
  )

  /** What a bearer token or password looks like: RFC 7235 token68 characters. */
  const secret = Arbitrary.map(
    Arbitrary.array(pick([..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"]), {
      minLength: 16,
      maxLength: 40
    }),
    (chars) => chars.join("")
  )
  const secretKey = pick(["token", "password", "Authorization", "x-api-key", "clientSecret", "bearerToken", "cookie"])
  /** Where a secret ends up: an annotation, a nested field, a message, an error, a defect's message and stack. */
  const placement = pick([
    "annotation",
    "nested",
    "message-bearer",
    "message-pair",
    "json-pair",
    "error",
    "defect",
    "url",
    "redacted"
  ])

  it.effect.prop(
    "no secret in a log line: random secrets in annotations, fields, messages, errors and defects never appear",
    [secret, secretKey, placement, pick(["logfmt", "json"])],
    ([token, key, where, format]) =>
      Effect.gen(function*() {
        let program: Effect.Effect<void, never>
        switch (where) {
          case "annotation":
            program = Effect.logInfo("calling").pipe(Effect.annotateLogs(key, token))
            break
          case "nested":
            program = Effect.logInfo("request").pipe(
              Effect.annotateLogs("request", { url: "/api", headers: { [key]: token } })
            )
            break
          case "message-bearer":
            program = Effect.logWarning(`GET /api failed; Authorization: Bearer ${token}`)
            break
          case "message-pair":
            program = Effect.logWarning(`retrying with ${key}=${token} in 1s`)
            break
          case "json-pair":
            program = Effect.logWarning(`body {"${key}": "${token}", "n": 1}`)
            break
          case "error":
            program = Effect.logError("request failed", new Conflict({ message: `rejected Bearer ${token}` }))
            break
          case "defect":
            program = Effect.catchCause(
              Effect.sync(() => explode(`bad config ${key}: ${token}`)),
              (cause) => Effect.logError("panic", cause)
            )
            break
          case "url":
            program = Effect.logInfo(`connecting to https://admin:${token}@db.example.com/x`)
            break
          case "redacted":
            program = Effect.logInfo("config").pipe(Effect.annotateLogs("value", Redacted.make(token)))
            break
        }
        const lines = yield* logged(format, program)
        assert.strictEqual(lines.length, 1)
        assert.notInclude(lines[0]!, token)
        assert.include(lines[0]!, "[REDACTED]")
      }),
    { arbitrary: { runs: 500 } }
  )
})

describe("Logging.formatError and Logging.redact", () => {
  it("formatError: tagged, named, plain, wrapped, strings and values", () => {
    assert.strictEqual(Logging.formatError(new Conflict({ message: "m" })), "Conflict: m")
    assert.strictEqual(Logging.formatError(new TypeError("t")), "TypeError: t")
    assert.strictEqual(Logging.formatError(new Error("plain")), "plain")
    assert.strictEqual(Logging.formatError(new Error("outer", { cause: new Error("inner") })), "outer: inner")
    assert.strictEqual(Logging.formatError("text"), "text")
    assert.strictEqual(Logging.formatError({ code: 1 }), "{\"code\":1}")
  })

  it("redact keeps the scheme and the key, and ordinary words", () => {
    assert.strictEqual(Logging.redact("Authorization: Bearer abc.def"), "Authorization: Bearer [REDACTED]")
    assert.strictEqual(Logging.redact("?access_token=abc&x=1"), "?access_token=[REDACTED]&x=1")
    assert.strictEqual(Logging.redact("{\"password\":\"p w\"}"), "{\"password\":\"[REDACTED]\"}")
    assert.strictEqual(
      Logging.redact("the token may have expired; refresh it"),
      "the token may have expired; refresh it"
    )
    assert.strictEqual(Logging.redact("https://u:p4ss@h/x"), "https://u:[REDACTED]@h/x")
  })

  it.effect("the formatters never fail on what they are given", () =>
    Effect.gen(function*() {
      const throwing = {
        get boom(): string {
          throw new Error("getter")
        }
      }
      const lines = yield* logged("json", Effect.logInfo(Symbol("s"), () => 1, null, undefined, throwing))
      assert.strictEqual(lines.length, 1)
      assert.include(lines[0]!, "[unserializable]")
    }))
})
