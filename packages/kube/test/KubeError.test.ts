import { assert, describe, it } from "@effect/vitest"
import { Data, Duration, Effect, Exit, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as KubeError from "../src/KubeError.js"
import * as KubeStatus from "../src/KubeStatus.js"

const status = (code: number, reason?: string, extra: Partial<KubeStatus.Status> = {}): KubeStatus.Status => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message: `${reason ?? "code"} message`,
  ...(reason !== undefined ? { reason } : {}),
  code,
  ...extra
})

describe("KubeError", () => {
  it("messages never carry bearer tokens", () => {
    const e = KubeStatus.toError(status(401, "Unauthorized", { message: "bad Authorization: Bearer abc.def-ghi" }))
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
    assert.isTrue(KubeError.isRetryable(KubeStatus.toError(status(429))))
    assert.isTrue(KubeError.isRetryable(KubeStatus.toError(status(503))))
    assert.isTrue(KubeError.isRetryable(KubeStatus.toError(status(504))))
    assert.isTrue(KubeError.isRetryable(new KubeError.Transport({ reason: "Request", cause: new Error("ECONNRESET") })))
    assert.isFalse(KubeError.isRetryable(KubeStatus.toError(status(409))))
    assert.isFalse(KubeError.isRetryable(KubeStatus.toError(status(404))))
    assert.isFalse(KubeError.isRetryable(new KubeError.Decode({ raw: "", issue: "x" })))
  })
})

describe("KubeError status errors (one body for every reason)", () => {
  it("every status error has its code, causes, retryAfter and request, whatever its reason", () => {
    const request = { method: "DELETE", path: "/api/v1/namespaces/a/pods/p" }
    const causes = [{ reason: "FieldValueInvalid", field: "spec", message: "bad" }]
    for (
      const [code, reason] of [[404, "NotFound"], [409, "Conflict"], [422, "Invalid"], [503, "ServiceUnavailable"]]
    ) {
      const e = KubeStatus.toError(
        status(code as number, reason as string, { details: { causes, retryAfterSeconds: 2 } }),
        {
          request
        }
      )
      assert.strictEqual(e.code, code)
      assert.deepStrictEqual(e.causes, causes)
      assert.deepStrictEqual(e.retryAfter, Duration.seconds(2))
      assert.deepStrictEqual(e.request, request)
    }
    const timeout = KubeError.clientTimeout(Duration.seconds(30), request)
    assert.strictEqual(timeout._tag, "Timeout")
    assert.strictEqual(timeout.code, 0)
    assert.deepStrictEqual(timeout.causes, [])
    assert.isUndefined(timeout.retryAfter)
  })

  it("a message lists the field causes of a Conflict or an Invalid only", () => {
    const details = { causes: [{ field: "spec.replicas", message: "Invalid value" }] }
    assert.include(KubeStatus.toError(status(422, "Invalid", { details })).message, "[spec.replicas: Invalid value]")
    assert.include(KubeStatus.toError(status(409, "Conflict", { details })).message, "[spec.replicas: Invalid value]")
    // a 500's cause repeats its message (apimachinery's NewInternalError)
    assert.notInclude(KubeStatus.toError(status(500, "InternalError", { details })).message, "[")
  })

  it.effect("Effect.catchTag recovers one reason; the guards read the TypeId, not the tag alone", () =>
    Effect.gen(function*() {
      const failing: Effect.Effect<string, KubeError.KubeError> = Effect.fail(KubeStatus.toError(status(404)))
      const recovered: Effect.Effect<string, Exclude<KubeError.KubeError, KubeError.NotFound>> = failing.pipe(
        Effect.catchTag("NotFound", (e) => Effect.succeed(`gone (${e.code})`))
      )
      assert.strictEqual(yield* recovered, "gone (404)")
      class NotFound extends Data.TaggedError("NotFound")<{}> {}
      const lookalike = new NotFound()
      assert.isFalse(KubeError.isKubeError(lookalike))
      assert.isFalse(KubeError.isNotFound(lookalike))
      assert.isTrue(KubeError.isNotFound(KubeStatus.toError(status(404))))
      assert.isTrue(KubeError.isAlreadyExists(KubeStatus.toError(status(409, "AlreadyExists"))))
      assert.isFalse(KubeError.isAlreadyExists(KubeStatus.toError(status(409))))
    }))
})

describe("KubeError helpers", () => {
  const notFound = KubeStatus.toError(status(404, "NotFound")) as KubeError.NotFound
  const conflict = KubeStatus.toError(status(409, "Conflict")) as KubeError.Conflict

  it.effect("ignoreNotFound turns NotFound into None and keeps other errors", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* KubeError.ignoreNotFound(Effect.fail(notFound)), Option.none())
      assert.deepStrictEqual(yield* KubeError.ignoreNotFound(Effect.succeed(1)), Option.some(1))
      const exit = yield* Effect.exit(KubeError.ignoreNotFound(Effect.fail(conflict)))
      assert.deepStrictEqual(exit, Exit.fail(conflict))
    }))

  it.effect("ignoreAlreadyExists", () =>
    Effect.gen(function*() {
      const exists = KubeStatus.toError(status(409, "AlreadyExists"))
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
      const applyConflict = KubeStatus.toError(status(409, "Conflict", {
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
