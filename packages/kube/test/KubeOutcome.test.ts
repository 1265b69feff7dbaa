import { assert, describe, it, layer } from "@effect/vitest"
import * as Reconcile from "@reconcile/core/Reconcile"
import { Faults, TestKube } from "@reconcile/testkit"
import { Data, Effect, Exit, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as KubeOutcome from "../src/KubeOutcome.js"
import * as KubeStatus from "../src/KubeStatus.js"
import * as Resource from "../src/Resource.js"
import { kubeLayer, makeEnv } from "./support/env.js"

const status = (code: number, reason?: string, extra: Partial<KubeStatus.Status> = {}): KubeStatus.Status => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message: `${reason ?? "code"} message`,
  ...(reason !== undefined ? { reason } : {}),
  code,
  ...extra
})

/** The outcome an effect fails with (the test fails if it succeeds or fails otherwise). */
const outcome = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect.pipe(KubeOutcome.classify))
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

describe("KubeOutcome.fromError (unit)", () => {
  const write = { method: "PATCH", path: "/api/v1/namespaces/default/configmaps/x" }
  const read = { method: "GET", path: "/api/v1/namespaces/default/configmaps/x" }

  it("classifies every error kind", () => {
    const cases: ReadonlyArray<[KubeError.KubeError, "Terminal" | "Retryable"]> = [
      [KubeStatus.toError(status(400, "BadRequest"), { request: write }), "Terminal"],
      [KubeStatus.toError(status(400, "BadRequest"), { request: read }), "Terminal"],
      [KubeStatus.toError(status(422, "Invalid"), { request: write }), "Terminal"],
      [KubeStatus.toError(status(403, "Forbidden"), { request: write }), "Terminal"],
      [KubeStatus.toError(status(403, "Forbidden"), { request: { ...write, method: "DELETE" } }), "Terminal"],
      [KubeStatus.toError(status(403, "Forbidden")), "Terminal"], // no request: counted as a write
      [KubeStatus.toError(status(403, "Forbidden"), { request: read }), "Retryable"],
      [KubeStatus.toError(status(405, "MethodNotAllowed"), { request: write }), "Terminal"],
      [KubeStatus.toError(status(413), { request: write }), "Terminal"],
      [KubeStatus.toError(status(302), { request: write }), "Retryable"],
      [KubeStatus.toError(status(404, "NotFound"), { request: write }), "Retryable"],
      [KubeStatus.toError(status(404, "NotFound"), { request: read }), "Retryable"],
      [KubeStatus.toError(status(409, "Conflict"), { request: write }), "Retryable"],
      [KubeStatus.toError(status(409, "AlreadyExists"), { request: write }), "Retryable"],
      [
        KubeStatus.toError(
          status(409, "Conflict", { details: { causes: [{ reason: "FieldManagerConflict", field: ".spec" }] } }),
          { request: write }
        ),
        "Terminal"
      ],
      [KubeStatus.toError(status(410, "Expired"), { request: read }), "Retryable"],
      [KubeStatus.toError(status(401, "Unauthorized"), { request: write }), "Retryable"],
      [KubeStatus.toError(status(429, "TooManyRequests"), { request: write }), "Retryable"],
      [KubeStatus.toError(status(500, "InternalError"), { request: write }), "Retryable"],
      [KubeStatus.toError(status(502), { request: write }), "Retryable"],
      [KubeStatus.toError(status(503, "ServiceUnavailable"), { request: write }), "Retryable"],
      [KubeStatus.toError(status(504, "Timeout"), { request: write }), "Retryable"],
      [
        KubeStatus.toError({ reason: "Timeout", code: 0, message: "client timeout" }, { request: write }),
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
      const result = KubeOutcome.fromError(error)
      assert.strictEqual(result._tag, expected, error.message)
      assert.strictEqual(result.cause, error, "the KubeError is the outcome's cause")
    }
  })

  it("a Terminal says what the server said, with the field causes it does not already name", () => {
    const e = KubeStatus.toError(
      status(422, "Invalid", {
        message: "Deployment.apps \"x\" is invalid",
        details: {
          causes: [{ reason: "FieldValueInvalid", field: "metadata.labels", message: "Invalid value: \"a\"" }]
        }
      }),
      { request: write }
    )
    const t = KubeOutcome.fromError(e)
    assert.strictEqual(t.message, "Deployment.apps \"x\" is invalid; metadata.labels: Invalid value: \"a\"")
    assert.notInclude(t.message ?? "", "PATCH", "no method nor path in a user-facing message")
    // causes already in the message are not repeated
    const named = KubeStatus.toError(
      status(422, "Invalid", {
        message: "Service \"x\" is invalid: metadata.name: Invalid value: \"X\"",
        details: { causes: [{ field: "metadata.name", message: "Invalid value: \"X\"" }] }
      }),
      { request: write }
    )
    assert.strictEqual(
      KubeOutcome.fromError(named).message,
      "Service \"x\" is invalid: metadata.name: Invalid value: \"X\""
    )
    // no message at all: the error's own description
    const bare = KubeStatus.toError({ code: 403 }, { request: write })
    assert.include(KubeOutcome.fromError(bare).message ?? "", "Forbidden (403")
    // a Retryable keeps the full description for the logs
    const retry = KubeOutcome.fromError(KubeStatus.toError(status(503), { request: write }))
    assert.include(retry.message ?? "", "PATCH /api/v1/namespaces/default/configmaps/x")
  })

  it("a Terminal message never carries a bearer token", () => {
    const e = KubeStatus.toError(status(403, "Forbidden", { message: "denied for Authorization: Bearer abc.def" }))
    assert.notInclude(KubeOutcome.fromError(e).message ?? "", "abc.def")
  })

  it.effect("classify passes other errors and existing outcomes through, and keeps successes", () =>
    Effect.gen(function*() {
      class Mine extends Data.TaggedError("Mine")<{}> {}
      const mine = new Mine()
      const a: Effect.Effect<number, Mine | KubeError.KubeError> = Effect.fail(mine)
      assert.deepStrictEqual(yield* Effect.exit(KubeOutcome.classify(a)), Exit.fail(mine))
      const requeue = Reconcile.requeueAfter("1 second")
      const b: Effect.Effect<number, Reconcile.RequeueAfter | KubeError.KubeError> = Effect.fail(requeue)
      assert.deepStrictEqual(yield* Effect.exit(KubeOutcome.classify(b)), Exit.fail(requeue))
      assert.strictEqual(yield* KubeOutcome.classify(Effect.succeed(7)), 7)
      // the types: KubeError is gone from the error channel
      const typed: Effect.Effect<number, Mine | Reconcile.Retryable | Reconcile.Terminal> = KubeOutcome.classify(a)
      void typed
    }))
})

describe("KubeOutcome.classify over TestKube (in-process)", () => {
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
  "KubeOutcome.classify over HTTP",
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
