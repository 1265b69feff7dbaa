import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as KubeError from "../src/KubeError.js"

const status = (code: number, reason?: string, extra: Partial<KubeError.Status> = {}): KubeError.Status => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message: `${reason ?? "code"} message`,
  ...(reason !== undefined ? { reason } : {}),
  code,
  ...extra
})

describe("KubeError.fromStatus", () => {
  it("maps reasons and codes to tagged errors", () => {
    const cases: ReadonlyArray<[KubeError.Status, string]> = [
      [status(404, "NotFound"), "NotFound"],
      [status(409, "AlreadyExists"), "AlreadyExists"],
      [status(409, "Conflict"), "Conflict"],
      [status(410, "Expired"), "Gone"],
      [status(410, "Gone"), "Gone"],
      [status(422, "Invalid"), "Invalid"],
      [status(400, "BadRequest"), "BadRequest"],
      [status(401, "Unauthorized"), "Unauthorized"],
      [status(403, "Forbidden"), "Forbidden"],
      [status(405, "MethodNotAllowed"), "MethodNotAllowed"],
      [status(429, "TooManyRequests"), "TooManyRequests"],
      [status(500, "InternalError"), "ServerError"],
      [status(503, "ServiceUnavailable"), "ServerError"],
      [status(504, "Timeout"), "Timeout"],
      [status(500, "ServerTimeout"), "Timeout"],
      [status(415, "UnsupportedMediaType"), "UnexpectedStatus"],
      // code only (a proxy's answer, a Status without reason)
      [status(404), "NotFound"],
      [status(409), "Conflict"],
      [status(410), "Gone"],
      [status(422), "Invalid"],
      [status(403), "Forbidden"],
      [status(502), "ServerError"],
      [status(504), "Timeout"],
      [status(418), "UnexpectedStatus"]
    ]
    for (const [s, tag] of cases) {
      const e = KubeError.fromStatus(s)
      assert.strictEqual(e._tag, tag, JSON.stringify(s))
      assert.isTrue(KubeError.isKubeError(e))
    }
  })

  it("uses the HTTP code when the Status has none", () => {
    const e = KubeError.fromStatus({ message: "nope" }, { code: 403 })
    assert.strictEqual(e._tag, "Forbidden")
    assert.strictEqual(e.status.code, 403)
  })

  it("Invalid carries one cause per field and names them in its message", () => {
    const e = KubeError.fromStatus(
      status(422, "Invalid", {
        message: "ConfigMap \"Bad\" is invalid",
        details: {
          name: "Bad",
          kind: "ConfigMap",
          causes: [{ reason: "FieldValueInvalid", field: "metadata.name", message: "Invalid value: \"Bad\"" }]
        }
      }),
      { request: { method: "POST", path: "/api/v1/namespaces/default/configmaps" } }
    )
    assert(e._tag === "Invalid")
    assert.deepStrictEqual(e.causes.map((c) => c.field), ["metadata.name"])
    assert.include(e.message, "POST /api/v1/namespaces/default/configmaps")
    assert.include(e.message, "metadata.name")
  })

  it("TooManyRequests: the Retry-After header wins over details.retryAfterSeconds", () => {
    const fromDetails = KubeError.fromStatus(status(429, "TooManyRequests", { details: { retryAfterSeconds: 3 } }))
    assert(fromDetails._tag === "TooManyRequests")
    assert.deepStrictEqual(fromDetails.retryAfter, Duration.seconds(3))
    const fromHeader = KubeError.fromStatus(status(429, "TooManyRequests", { details: { retryAfterSeconds: 3 } }), {
      retryAfter: Duration.seconds(7)
    })
    assert(fromHeader._tag === "TooManyRequests")
    assert.deepStrictEqual(fromHeader.retryAfter, Duration.seconds(7))
    const none = KubeError.fromStatus(status(429))
    assert(none._tag === "TooManyRequests")
    assert.isUndefined(none.retryAfter)
  })

  it("messages never carry bearer tokens", () => {
    const e = KubeError.fromStatus(status(401, "Unauthorized", { message: "bad Authorization: Bearer abc.def-ghi" }))
    assert.notInclude(e.message, "abc.def-ghi")
    const t = new KubeError.Transport({
      reason: "Credentials",
      cause: new Error("exec plugin printed {\"token\": \"s3cr3t\"}")
    })
    assert.notInclude(t.message, "s3cr3t")
  })

  it("Decode truncates the raw text and keeps it out of the message", () => {
    const raw = "x".repeat(10_000)
    const e = new KubeError.Decode({ kind: "WebApp", raw, issue: "not JSON" })
    assert.isBelow(e.raw.length, 600)
    assert.notInclude(e.message, "xxxx")
    assert.include(e.message, "WebApp")
  })

  it("isRetryable: throttling, 5xx, timeouts and transport errors", () => {
    assert.isTrue(KubeError.isRetryable(KubeError.fromStatus(status(429))))
    assert.isTrue(KubeError.isRetryable(KubeError.fromStatus(status(503))))
    assert.isTrue(KubeError.isRetryable(KubeError.fromStatus(status(504))))
    assert.isTrue(KubeError.isRetryable(new KubeError.Transport({ reason: "Request", cause: new Error("ECONNRESET") })))
    assert.isFalse(KubeError.isRetryable(KubeError.fromStatus(status(409))))
    assert.isFalse(KubeError.isRetryable(KubeError.fromStatus(status(404))))
    assert.isFalse(KubeError.isRetryable(new KubeError.Decode({ raw: "", issue: "x" })))
  })
})

describe("KubeError helpers", () => {
  const notFound = KubeError.fromStatus(status(404, "NotFound")) as KubeError.NotFound
  const conflict = KubeError.fromStatus(status(409, "Conflict")) as KubeError.Conflict

  it.effect("ignoreNotFound turns NotFound into None and keeps other errors", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* KubeError.ignoreNotFound(Effect.fail(notFound)), Option.none())
      assert.deepStrictEqual(yield* KubeError.ignoreNotFound(Effect.succeed(1)), Option.some(1))
      const exit = yield* Effect.exit(KubeError.ignoreNotFound(Effect.fail(conflict)))
      assert.deepStrictEqual(exit, Exit.fail(conflict))
    }))

  it.effect("ignoreAlreadyExists", () =>
    Effect.gen(function*() {
      const exists = KubeError.fromStatus(status(409, "AlreadyExists"))
      assert.deepStrictEqual(yield* KubeError.ignoreAlreadyExists(Effect.fail(exists)), Option.none())
      const exit = yield* Effect.exit(KubeError.ignoreAlreadyExists(Effect.fail(notFound)))
      assert.isTrue(Exit.isFailure(exit))
    }))

  it.effect("retryOnConflict re-runs the whole effect, at most `times` more times", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const rmw = Ref.updateAndGet(runs, (n) => n + 1).pipe(
        Effect.flatMap((n) => n < 3 ? Effect.fail(conflict) : Effect.succeed(n))
      )
      const fiber = yield* Effect.forkChild(KubeError.retryOnConflict(rmw, { times: 5 }))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), 3)

      yield* Ref.set(runs, 0)
      const always = Ref.update(runs, (n) => n + 1).pipe(Effect.andThen(Effect.fail(conflict)))
      const bounded = yield* Effect.forkChild(always.pipe(KubeError.retryOnConflict({ times: 2 })))
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* Fiber.await(bounded), Exit.fail(conflict))
      assert.strictEqual(yield* Ref.get(runs), 3)
    }))

  it.effect("retryOnConflict does not retry other errors nor apply conflicts", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const applyConflict = KubeError.fromStatus(status(409, "Conflict", {
        details: {
          causes: [{ reason: "FieldManagerConflict", field: ".spec.replicas", message: "conflict with \"hpa\"" }]
        }
      }))
      for (const e of [notFound, applyConflict]) {
        yield* Ref.set(runs, 0)
        const exit = yield* Effect.exit(
          Ref.update(runs, (n) => n + 1).pipe(Effect.andThen(Effect.fail(e)), KubeError.retryOnConflict())
        )
        assert.deepStrictEqual(exit, Exit.fail(e))
        assert.strictEqual(yield* Ref.get(runs), 1)
      }
    }))
})
