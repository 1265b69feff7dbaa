import { assert, describe, it, layer } from "@effect/vitest"
import * as Reconcile from "@reconcile/core/Reconcile"
import { Faults, TestKube } from "@reconcile/testkit"
import { Data, Duration, Effect, Exit, Fiber, Layer, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import { kubeLayer, makeEnv } from "./support/env.js"

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

/** The outcome an effect fails with (the test fails if it succeeds or fails otherwise). */
const outcome = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect.pipe(KubeError.toOutcome))
    const error = Exit.findErrorOption(exit)
    assert(Option.isSome(error), `expected a failure, got ${String(exit)}`)
    const e = error.value
    assert(Reconcile.isRetryable(e) || Reconcile.isTerminal(e), `expected an outcome, got ${String(e)}`)
    return e
  })

/** A 253-character name: a valid object name, an invalid label value (at most 63). */
const longName = "a".repeat(253)

/** The Deployment a controller would write for `name`, labelled with it. */
const labelledDeployment = (name: string): Resource.Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { "app.kubernetes.io/name": name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { "app.kubernetes.io/name": name } },
    template: {
      metadata: { labels: { "app.kubernetes.io/name": name } },
      spec: { containers: [{ name: "app", image: "nginx:1" }] }
    }
  }
})

const configMap = (name: string): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { a: "1" }
})

describe("KubeError.outcomeOf (unit)", () => {
  const write = { method: "PATCH", path: "/api/v1/namespaces/default/configmaps/x" }
  const read = { method: "GET", path: "/api/v1/namespaces/default/configmaps/x" }

  it("classifies every error kind", () => {
    const cases: ReadonlyArray<[KubeError.KubeError, "Terminal" | "Retryable"]> = [
      [KubeError.fromStatus(status(400, "BadRequest"), { request: write }), "Terminal"],
      [KubeError.fromStatus(status(400, "BadRequest"), { request: read }), "Terminal"],
      [KubeError.fromStatus(status(422, "Invalid"), { request: write }), "Terminal"],
      [KubeError.fromStatus(status(403, "Forbidden"), { request: write }), "Terminal"],
      [KubeError.fromStatus(status(403, "Forbidden"), { request: { ...write, method: "DELETE" } }), "Terminal"],
      [KubeError.fromStatus(status(403, "Forbidden")), "Terminal"], // no request: counted as a write
      [KubeError.fromStatus(status(403, "Forbidden"), { request: read }), "Retryable"],
      [KubeError.fromStatus(status(405, "MethodNotAllowed"), { request: write }), "Terminal"],
      [KubeError.fromStatus(status(413), { request: write }), "Terminal"],
      [KubeError.fromStatus(status(302), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(404, "NotFound"), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(404, "NotFound"), { request: read }), "Retryable"],
      [KubeError.fromStatus(status(409, "Conflict"), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(409, "AlreadyExists"), { request: write }), "Retryable"],
      [
        KubeError.fromStatus(
          status(409, "Conflict", { details: { causes: [{ reason: "FieldManagerConflict", field: ".spec" }] } }),
          { request: write }
        ),
        "Terminal"
      ],
      [KubeError.fromStatus(status(410, "Expired"), { request: read }), "Retryable"],
      [KubeError.fromStatus(status(401, "Unauthorized"), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(429, "TooManyRequests"), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(500, "InternalError"), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(502), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(503, "ServiceUnavailable"), { request: write }), "Retryable"],
      [KubeError.fromStatus(status(504, "Timeout"), { request: write }), "Retryable"],
      [
        KubeError.fromStatus({ reason: "Timeout", code: 0, message: "client timeout" }, { request: write }),
        "Retryable"
      ],
      [new KubeError.Transport({ reason: "Request", request: write, cause: new Error("ECONNRESET") }), "Retryable"],
      [new KubeError.Transport({ reason: "Response", request: read, cause: new Error("aborted") }), "Retryable"],
      [new KubeError.Transport({ reason: "Credentials", cause: new Error("exec plugin failed") }), "Retryable"],
      [new KubeError.Decode({ raw: "<html>", issue: "response is not JSON", request: read }), "Retryable"],
      [new KubeError.Decode({ kind: "WebApp", raw: "{}", issue: "spec.replicas: Expected number" }), "Terminal"],
      [new KubeError.Encode({ kind: "WebApp", issue: "spec.port: Expected number" }), "Terminal"]
    ]
    for (const [error, expected] of cases) {
      const result = KubeError.outcomeOf(error)
      assert.strictEqual(result._tag, expected, error.message)
      assert.strictEqual(result.cause, error, "the KubeError is the outcome's cause")
    }
  })

  it("a Terminal says what the server said, with the field causes it does not already name", () => {
    const e = KubeError.fromStatus(
      status(422, "Invalid", {
        message: "Deployment.apps \"x\" is invalid",
        details: {
          causes: [{ reason: "FieldValueInvalid", field: "metadata.labels", message: "Invalid value: \"a\"" }]
        }
      }),
      { request: write }
    )
    const t = KubeError.outcomeOf(e)
    assert.strictEqual(t.message, "Deployment.apps \"x\" is invalid; metadata.labels: Invalid value: \"a\"")
    assert.notInclude(t.message ?? "", "PATCH", "no method nor path in a user-facing message")
    // causes already in the message are not repeated
    const named = KubeError.fromStatus(
      status(422, "Invalid", {
        message: "Service \"x\" is invalid: metadata.name: Invalid value: \"X\"",
        details: { causes: [{ field: "metadata.name", message: "Invalid value: \"X\"" }] }
      }),
      { request: write }
    )
    assert.strictEqual(
      KubeError.outcomeOf(named).message,
      "Service \"x\" is invalid: metadata.name: Invalid value: \"X\""
    )
    // no message at all: the error's own description
    const bare = KubeError.fromStatus({ code: 403 }, { request: write })
    assert.include(KubeError.outcomeOf(bare).message ?? "", "Forbidden (403")
    // a Retryable keeps the full description for the logs
    const retry = KubeError.outcomeOf(KubeError.fromStatus(status(503), { request: write }))
    assert.include(retry.message ?? "", "PATCH /api/v1/namespaces/default/configmaps/x")
  })

  it("a Terminal message never carries a bearer token", () => {
    const e = KubeError.fromStatus(status(403, "Forbidden", { message: "denied for Authorization: Bearer abc.def" }))
    assert.notInclude(KubeError.outcomeOf(e).message ?? "", "abc.def")
  })

  it.effect("toOutcome passes other errors and existing outcomes through, and keeps successes", () =>
    Effect.gen(function*() {
      class Mine extends Data.TaggedError("Mine")<{}> {}
      const mine = new Mine()
      const a: Effect.Effect<number, Mine | KubeError.KubeError> = Effect.fail(mine)
      assert.deepStrictEqual(yield* Effect.exit(KubeError.toOutcome(a)), Exit.fail(mine))
      const requeue = Reconcile.requeueAfter("1 second")
      const b: Effect.Effect<number, Reconcile.RequeueAfter | KubeError.KubeError> = Effect.fail(requeue)
      assert.deepStrictEqual(yield* Effect.exit(KubeError.toOutcome(b)), Exit.fail(requeue))
      assert.strictEqual(yield* KubeError.toOutcome(Effect.succeed(7)), 7)
      // the types: KubeError is gone from the error channel
      const typed: Effect.Effect<number, Mine | Reconcile.Retryable | Reconcile.Terminal> = KubeError.toOutcome(a)
      void typed
    }))
})

describe("KubeError.toOutcome over TestKube (in-process)", () => {
  const Env = Faults.layer.pipe(
    Layer.provideMerge(TestKube.layerWithCluster({ retry: { times: 0 }, timeout: "1 second" }))
  )
  const create = (name: string) => KubeClient.create(Resource.ConfigMap, configMap(name), { namespace: "default" })

  it.effect("every status class of a write: 400/403/405/413/422 Terminal; 401/404/409/410/429/5xx Retryable", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const cases: ReadonlyArray<[number, string, "Terminal" | "Retryable"]> = [
        [400, "BadRequest", "Terminal"],
        [401, "Unauthorized", "Retryable"],
        [403, "Forbidden", "Terminal"],
        [404, "NotFound", "Retryable"],
        [405, "MethodNotAllowed", "Terminal"],
        [409, "Conflict", "Retryable"],
        [410, "Gone", "Retryable"],
        [413, "UnexpectedStatus", "Terminal"],
        [422, "Invalid", "Terminal"],
        [429, "TooManyRequests", "Retryable"],
        [500, "ServerError", "Retryable"],
        [502, "ServerError", "Retryable"],
        [503, "ServerError", "Retryable"],
        [504, "Timeout", "Retryable"]
      ]
      for (const [code, tag, expected] of cases) {
        yield* faults.failRequests({
          code,
          verbs: ["create"],
          resources: ["configmaps"],
          count: 1,
          message: `m${code}`
        })
        const result = yield* outcome(create(`cm-${code}`))
        assert.strictEqual(result._tag, expected, `${code}`)
        assert(KubeError.isKubeError(result.cause))
        assert.strictEqual(result.cause._tag, tag, `${code}`)
        if (expected === "Terminal") assert.strictEqual(result.message, `m${code}`, "the server's message")
      }
    }).pipe(Effect.provide(Env)))

  it.effect("a 403 on a read is Retryable, a 400 on a read Terminal", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const get = KubeClient.get(Resource.ConfigMap, "x", { namespace: "default" })
      yield* faults.failRequests({ code: 403, verbs: ["get"], count: 1 })
      assert.strictEqual((yield* outcome(get))._tag, "Retryable")
      yield* faults.failRequests({ code: 400, verbs: ["get"], count: 1 })
      assert.strictEqual((yield* outcome(get))._tag, "Terminal")
      assert.strictEqual((yield* outcome(get))._tag, "Retryable", "the real 404 after the faults")
    }).pipe(Effect.provide(Env)))

  it.effect("real server answers: an invalid label (422) and an apply conflict are Terminal, a duplicate create is not", () =>
    Effect.gen(function*() {
      const invalid = yield* outcome(
        KubeClient.create(Resource.Deployment, labelledDeployment(longName), { namespace: "default" })
      )
      assert.strictEqual(invalid._tag, "Terminal")
      assert(KubeError.isKubeError(invalid.cause) && invalid.cause._tag === "Invalid")
      assert.include(invalid.message, "metadata.labels")
      assert.include(invalid.message, "is invalid")

      yield* create("dup")
      const exists = yield* outcome(create("dup"))
      assert.strictEqual(exists._tag, "Retryable")
      assert(KubeError.isKubeError(exists.cause) && exists.cause._tag === "AlreadyExists")

      // another manager owns data.a; applying a different value without force is a field-manager conflict
      const applyAs = (fieldManager: string, value: string) =>
        KubeClient.patch(Resource.ConfigMap, "owned", { ...configMap("owned"), data: { a: value } }, {
          type: "apply",
          namespace: "default",
          fieldManager
        })
      yield* applyAs("someone-else", "1")
      const conflict = yield* outcome(applyAs("me", "2"))
      assert.strictEqual(conflict._tag, "Terminal")
      assert(KubeError.isKubeError(conflict.cause) && KubeError.isFieldManagerConflict(conflict.cause))
    }).pipe(Effect.provide(Env)))

  it.effect("a request that times out is Retryable", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      yield* faults.addLatency({ latency: "5 seconds", verbs: ["create"], count: 1 })
      const fiber = yield* Effect.forkChild(outcome(create("slow")))
      yield* TestKube.settle
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result._tag, "Retryable")
      assert(KubeError.isKubeError(result.cause) && result.cause._tag === "Timeout")
    }).pipe(Effect.provide(Env)))
})

const http = makeEnv()
layer(KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(http.layer)))(
  "KubeError.toOutcome over HTTP",
  (it) => {
    it.effect("a 253-character name that becomes an invalid label: Terminal with the API server's message", () =>
      Effect.gen(function*() {
        const result = yield* outcome(
          KubeClient.patch(Resource.Deployment, longName, labelledDeployment(longName), {
            type: "apply",
            namespace: "default",
            fieldManager: "test",
            force: true
          })
        )
        assert.strictEqual(result._tag, "Terminal")
        assert(KubeError.isKubeError(result.cause) && result.cause._tag === "Invalid")
        assert.strictEqual(result.cause.status.code, 422)
        assert.include(result.message, `Deployment.apps "${longName}" is invalid`)
        assert.include(result.message, "metadata.labels")
        assert.notInclude(result.message, "PATCH /apis", "the server's words, not the request line")
      }))
  }
)
