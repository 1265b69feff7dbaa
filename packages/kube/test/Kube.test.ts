/**
 * Kube: configuration loading and the HTTP layer (auth, TLS, status mapping, retries) against TestApiServer over
 * real HTTPS.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Faults, TestApiServer } from "@reconcile/testkit"
import { Clock, ConfigProvider, Duration, Effect, Exit, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as retry from "../src/internal/retry.js"
import * as Kube from "../src/Kube.js"
import * as KubeStatus from "../src/KubeStatus.js"
import { countRequests, kubeLayer, makeEnv, onRealCluster, tempFile } from "./support/env.js"

/** The typed error of a failed Exit (effect 4's Cause is a flat list of reasons, no `_tag: "Fail"`). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  // one reason, a Fail: what effect 3's `cause._tag === "Fail"` checked
  assert(Exit.isFailure(exit) && exit.cause.reasons.length === 1, `expected one failure, got ${String(exit)}`)
  const error = Exit.findErrorOption(exit)
  assert(Option.isSome(error), `expected a failure, got ${String(exit)}`)
  return error.value
}

/** Runs an effect with a ConfigProvider of these variables only (effect 3: withConfigProvider + fromMap). */
const withEnv = (env: Record<string, string>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))

const configError = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.scoped(Layer.build(layer)))
    assert(Exit.isFailure(exit) && exit.cause.reasons.length === 1, "expected the layer to fail")
    const error = Option.getOrUndefined(Exit.findErrorOption(exit))
    assert.instanceOf(error, Kube.KubeConfigError)
    return error as Kube.KubeConfigError
  })

describe("Kube configuration errors", () => {
  it.effect("a missing file is named", () =>
    Effect.gen(function*() {
      const e = yield* configError(Kube.layerFromFile("/nonexistent/dir/kubeconfig"))
      assert.strictEqual(e.source, "/nonexistent/dir/kubeconfig")
      assert.strictEqual(e.reason, "file not found")
      assert.strictEqual(e.message, "kubeconfig /nonexistent/dir/kubeconfig: file not found")
    }))

  it.effect("malformed YAML gives line and column, never the surrounding text", () =>
    Effect.gen(function*() {
      const file = tempFile("config", "users:\n- name: u\n  user:\n    token: s3cr3t-t0ken\n   bad: [\n")
      const e = yield* configError(Kube.layerFromFile(file))
      assert.strictEqual(e.source, file)
      assert.match(e.reason, /^invalid YAML at line \d+, column \d+/)
      assert.notInclude(e.message, "s3cr3t")
    }))

  it.effect("an empty file, a non-mapping and missing required entries", () =>
    Effect.gen(function*() {
      assert.include((yield* configError(Kube.layerFromFile(tempFile("config", "")))).reason, "empty")
      assert.include((yield* configError(Kube.layerFromString("null"))).reason, "not a kubeconfig")
      const noServer = "clusters:\n- name: c\n  cluster: {}\ncontexts: []\nusers: []\n"
      assert.include(
        (yield* configError(Kube.layerFromString(noServer))).reason,
        "clusters[0].cluster.server is missing"
      )
    }))

  it.effect("no current context, an unknown context, cluster or user", () =>
    Effect.gen(function*() {
      const base = [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: c",
        "  cluster: { server: \"https://127.0.0.1:1\" }",
        "users:",
        "- name: u",
        "  user: { token: abc }"
      ]
      const none = yield* configError(
        Kube.layerFromString([...base, "contexts:", "- name: ctx", "  context: { cluster: c, user: u }"].join("\n"))
      )
      assert.strictEqual(none.source, "<string>")
      assert.strictEqual(none.reason, "no current-context is set (contexts: ctx)")
      const unknown = yield* configError(Kube.layerFromString(
        [...base, "contexts:", "- name: ctx", "  context: { cluster: c, user: u }", "current-context: other"].join("\n")
      ))
      assert.strictEqual(unknown.reason, "current-context \"other\" is not defined (contexts: ctx)")
      const cluster = yield* configError(Kube.layerFromString(
        [...base, "contexts:", "- name: ctx", "  context: { cluster: nope, user: u }", "current-context: ctx"].join(
          "\n"
        )
      ))
      assert.strictEqual(cluster.reason, "context \"ctx\" names cluster \"nope\", which is not defined")
      const user = yield* configError(Kube.layerFromString(
        [...base, "contexts:", "- name: ctx", "  context: { cluster: c, user: nope }", "current-context: ctx"].join(
          "\n"
        )
      ))
      assert.strictEqual(user.reason, "context \"ctx\" names user \"nope\", which is not defined")
    }))

  it.effect("plain http without insecure-skip-tls-verify, unreadable CA file", () =>
    Effect.gen(function*() {
      const config = (cluster: string) =>
        [
          "clusters:",
          `- name: c`,
          `  cluster: ${cluster}`,
          "users: [{ name: u, user: { token: abc } }]",
          "contexts: [{ name: ctx, context: { cluster: c, user: u } }]",
          "current-context: ctx"
        ].join("\n")
      const http = yield* configError(Kube.layerFromString(config("{ server: \"http://127.0.0.1:1\" }")))
      assert.include(http.reason, "insecure-skip-tls-verify")
      const ca = yield* configError(
        Kube.layerFromString(config("{ server: \"https://127.0.0.1:1\", certificate-authority: /nonexistent/ca.crt }"))
      )
      assert.include(ca.reason, "/nonexistent/ca.crt")
    }))

  it.effect("layerFromDefault without KUBECONFIG, ~/.kube/config or a service account", () =>
    Effect.gen(function*() {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "kube-home-"))
      const e = yield* configError(Kube.layerFromDefault()).pipe(withEnv({ HOME: home }))
      assert.strictEqual(e.source, "default")
      assert.include(e.reason, "no kubeconfig found")
    }))
})

const env = makeEnv()

layer(env.layer)("Kube against TestApiServer", (it) => {
  const get = (path: string) => Effect.flatMap(Kube.Kube, (kube) => kube.request({ method: "GET", path }))

  it.effect("layerFromFile: the context's namespace, an authenticated TLS request", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      assert.strictEqual(kube.namespace, "default")
      const ns = (yield* kube.request({ method: "GET", path: "/api/v1/namespaces/default" })) as {
        metadata: { name: string }
      }
      assert.strictEqual(ns.metadata.name, "default")
    }).pipe(Effect.provide(kubeLayer())))

  it.effect("layerFromString and layerFromDefault (KUBECONFIG through Config) load the same server", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const fromString = yield* get("/api/v1/namespaces/kube-system").pipe(
        Effect.provide(Kube.layerFromString(server.kubeconfig))
      )
      assert.strictEqual((fromString as { metadata: { name: string } }).metadata.name, "kube-system")
      const other = tempFile("other", "clusters: []\nusers: []\ncontexts: []\n")
      const fromDefault = yield* get("/api/v1/namespaces/kube-public").pipe(
        Effect.provide(Kube.layerFromDefault()),
        withEnv({ KUBECONFIG: `${server.kubeconfigPath}${path.delimiter}${other}` })
      )
      assert.strictEqual((fromDefault as { metadata: { name: string } }).metadata.name, "kube-public")
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "a wrong token is Unauthorized (401), and the token is not in the message",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const wrong = server.kubeconfig.replace(server.token, "wrong-token-value")
        assert.notStrictEqual(wrong, server.kubeconfig)
        const error = failureOf(
          yield* Effect.exit(get("/api/v1/namespaces").pipe(Effect.provide(Kube.layerFromString(wrong))))
        )
        assert.strictEqual(error._tag, "Unauthorized")
        assert.notInclude(error.message, "wrong-token-value")
        assert.notInclude(error.message, server.token)
      })
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "credentials are computed per request: an exec plugin whose token expires runs for every request",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-exec-"))
        const counter = path.join(dir, "calls")
        const plugin = path.join(dir, "plugin.sh")
        const credential = JSON.stringify({
          apiVersion: "client.authentication.k8s.io/v1",
          kind: "ExecCredential",
          status: { token: server.token, expirationTimestamp: "2000-01-01T00:00:00Z" }
        })
        fs.writeFileSync(plugin, `#!/bin/sh\necho call >> ${counter}\necho '${credential}'\n`, { mode: 0o755 })
        // JSON is YAML: a kubeconfig whose user gets its token from the exec plugin
        const withExec = JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{
            name: "c",
            cluster: {
              server: server.url,
              "certificate-authority-data": Buffer.from(server.certificateAuthority).toString("base64")
            }
          }],
          users: [{
            name: "u",
            user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" } }
          }],
          contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
          "current-context": "ctx"
        })
        assert.notInclude(withExec, server.token)
        yield* Effect.gen(function*() {
          yield* get("/api/v1/namespaces/default")
          yield* get("/api/v1/namespaces/kube-system")
        }).pipe(Effect.provide(Kube.layerFromString(withExec)))
        assert.strictEqual(fs.readFileSync(counter, "utf-8").trim().split("\n").length, 2)
      })
  )

  it.effect("TLS is verified: without the CA the request fails; insecure-skip-tls-verify allows it", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const withoutCa = server.kubeconfig.replace(/certificate-authority-data: .*/, "server: " + server.url)
        .replace(/\n(\s+)server: (.*)\n(\s+)server: .*/, "\n$1server: $2")
      assert.notInclude(withoutCa, "certificate-authority-data")
      const error = failureOf(
        yield* Effect.exit(
          get("/api/v1/namespaces").pipe(Effect.provide(Kube.layerFromString(withoutCa, { retry: { times: 0 } })))
        )
      )
      assert(error._tag === "Transport")
      assert.strictEqual(error.reason, "Request")
      assert.match(error.message, /certificate/i)
      const insecure = withoutCa.replace(/(\n\s+)server: (.*)/, "$1server: $2$1insecure-skip-tls-verify: true")
      const ok = yield* get("/api/v1/namespaces/default").pipe(Effect.provide(Kube.layerFromString(insecure)))
      assert.strictEqual((ok as { metadata: { name: string } }).metadata.name, "default")
    }))

  it.effect("a refused connection is a Transport error", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const closed = server.kubeconfig.replace(server.url, "https://127.0.0.1:1")
      const error = failureOf(
        yield* Effect.exit(
          get("/api/v1/namespaces").pipe(Effect.provide(Kube.layerFromString(closed, { retry: { times: 0 } })))
        )
      )
      assert.strictEqual(error._tag, "Transport")
      assert.include(error.message, "ECONNREFUSED")
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "500 on a GET is retried, then surfaced as ServerError after the bounded retries",
    () =>
      Effect.gen(function*() {
        const faults = yield* Faults.Faults
        const from = env.log.lines.length
        const rule = yield* faults.failRequests({ code: 500, verbs: ["get"], resources: ["namespaces"], count: 2 })
        const ok = yield* get("/api/v1/namespaces/kube-node-lease")
        assert.strictEqual((ok as { metadata: { name: string } }).metadata.name, "kube-node-lease")
        assert.strictEqual(countRequests(env.log, from, "GET /api/v1/namespaces/kube-node-lease", " 500 "), 2)
        yield* faults.removeRule(rule)

        const from2 = env.log.lines.length
        const always = yield* faults.failRequests({ code: 500, verbs: ["get"], resources: ["namespaces"] })
        const exit = yield* Effect.exit(get("/api/v1/namespaces/kube-node-lease"))
        yield* faults.removeRule(always)
        const error = failureOf(exit)
        assert(error._tag === "ServerError")
        assert.strictEqual(error.code, 500)
        assert.strictEqual(countRequests(env.log, from2, "GET /api/v1/namespaces/kube-node-lease", " 500 "), 4)
      }).pipe(Effect.provide(kubeLayer()), TestClock.withLive)
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "503 is retried for a create; 500 on a create is not (the server may have acted)",
    () =>
      Effect.gen(function*() {
        const kube = yield* Kube.Kube
        const faults = yield* Faults.Faults
        const create = (name: string) =>
          kube.request({
            method: "POST",
            path: "/api/v1/namespaces/default/configmaps",
            body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" } }
          })
        const from = env.log.lines.length
        yield* faults.failRequests({ code: 503, verbs: ["create"], resources: ["configmaps"], count: 1 })
        yield* create("retried-create")
        assert.strictEqual(countRequests(env.log, from, "POST /api/v1/namespaces/default/configmaps"), 2)

        const from2 = env.log.lines.length
        yield* faults.failRequests({ code: 500, verbs: ["create"], resources: ["configmaps"], count: 1 })
        assert.strictEqual(failureOf(yield* Effect.exit(create("not-retried")))._tag, "ServerError")
        assert.strictEqual(countRequests(env.log, from2, "POST /api/v1/namespaces/default/configmaps"), 1)
      }).pipe(Effect.provide(kubeLayer()), TestClock.withLive)
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "429 waits for Retry-After on Effect's Clock (TestClock), then succeeds",
    () =>
      Effect.gen(function*() {
        const faults = yield* Faults.Faults
        const from = env.log.lines.length
        yield* faults.failRequests({
          code: 429,
          retryAfterSeconds: 7,
          verbs: ["get"],
          resources: ["namespaces"],
          count: 1
        })
        // effect 4's TestClock does not list its pending sleeps (TestClock.sleeps is gone): the request runs with a
        // Clock that records the sleeps it asks the TestClock for
        const testClock = yield* Clock.Clock
        const sleeps: Array<number> = []
        const recording: Clock.Clock = {
          currentTimeMillisUnsafe: () => testClock.currentTimeMillisUnsafe(),
          currentTimeMillis: testClock.currentTimeMillis,
          currentTimeNanosUnsafe: () => testClock.currentTimeNanosUnsafe(),
          currentTimeNanos: testClock.currentTimeNanos,
          monotonicTimeNanosUnsafe: () => testClock.monotonicTimeNanosUnsafe(),
          monotonicTimeNanos: testClock.monotonicTimeNanos,
          sleep: (duration) =>
            Effect.suspend(() => {
              sleeps.push(Duration.toMillis(duration))
              return testClock.sleep(duration)
            })
        }
        const fiber = yield* Effect.forkChild(
          get("/api/v1/namespaces/kube-public").pipe(Effect.provideService(Clock.Clock, recording))
        )
        // wait (in real time) until the 429 has been answered and the retry sleeps on the TestClock for Retry-After
        while (!sleeps.includes(7000)) yield* TestClock.withLive(Effect.sleep("2 millis"))
        yield* TestClock.withLive(Effect.sleep("2 millis"))
        assert.strictEqual(countRequests(env.log, from, "GET /api/v1/namespaces/kube-public", " 429 "), 1)
        yield* TestClock.adjust("7 seconds")
        const ok = yield* Fiber.join(fiber)
        assert.strictEqual((ok as { metadata: { name: string } }).metadata.name, "kube-public")
      }).pipe(Effect.provide(kubeLayer()))
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "429 surfaces as TooManyRequests with retryAfter when retries are off",
    () =>
      Effect.gen(function*() {
        const faults = yield* Faults.Faults
        yield* faults.failRequests({
          code: 429,
          retryAfterSeconds: 2,
          verbs: ["get"],
          resources: ["namespaces"],
          count: 1
        })
        const error = failureOf(yield* Effect.exit(get("/api/v1/namespaces/default")))
        assert(error._tag === "TooManyRequests")
        assert.deepStrictEqual(error.retryAfter, Duration.seconds(2))
      }).pipe(Effect.provide(kubeLayer({ retry: { times: 0 } })))
  )

  it.effect("a path the server does not know is NotFound", () =>
    Effect.gen(function*() {
      assert.strictEqual(failureOf(yield* Effect.exit(get("/apis/nope.example.com/v1/widgets")))._tag, "NotFound")
    }).pipe(Effect.provide(kubeLayer())))
})

describe("retry policy (unit, TestClock)", () => {
  const policy: retry.Policy = { times: 3, base: Duration.millis(100), max: Duration.millis(250) }
  const serverError = KubeStatus.toError({ code: 500 })
  const unavailable = KubeStatus.toError({ code: 503 })
  const throttled = KubeStatus.toError({ code: 429 }, { retryAfter: Duration.seconds(3) })

  it("which failures are retried for idempotent and other requests", () => {
    assert.isTrue(retry.shouldRetry(throttled, false))
    assert.isTrue(retry.shouldRetry(unavailable, false))
    assert.isFalse(retry.shouldRetry(serverError, false))
    assert.isTrue(retry.shouldRetry(serverError, true))
    assert.isFalse(retry.shouldRetry(KubeStatus.toError({ code: 409 }), true))
  })

  it("exponential backoff bounded by max; Retry-After wins", () => {
    assert.deepStrictEqual(
      [0, 1, 2, 3].map((n) => Duration.toMillis(retry.delay(serverError, n, policy))),
      [100, 200, 250, 250]
    )
    assert.strictEqual(Duration.toMillis(retry.delay(throttled, 0, policy)), 3000)
  })

  it.effect("retries at most `times` and sleeps on the Clock", () =>
    Effect.gen(function*() {
      let attempts = 0
      const failing = Effect.suspend(() => {
        attempts++
        return Effect.fail(serverError)
      })
      const fiber = yield* Effect.forkChild(retry.withRetry(failing, policy, true))
      yield* TestClock.adjust("99 millis")
      assert.strictEqual(attempts, 1)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(attempts, 2)
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail(serverError))
      assert.strictEqual(attempts, 4)
    }))
})
