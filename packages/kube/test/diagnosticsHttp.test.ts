/**
 * Errors that say what to do, through the real client over HTTPS (TestApiServer): a refused connection, a server
 * whose certificate the kubeconfig's CA did not sign, a token the server rejects, a forbidden list. At start each
 * fails the informer after the client's own short retries, with the server URL, the kubeconfig context and the
 * cause in words — never a token.
 */
import { assert, layer } from "@effect/vitest"
import { Faults, TestApiServer } from "@reconcile/testkit"
import { Effect, Layer, References } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import { parse, stringify } from "yaml"
import * as Cache from "../src/Cache.js"
import * as Diagnosis from "../src/Diagnosis.js"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import { makeEnv } from "./support/env.js"
import { WebApp } from "./support/fixtures.js"

const env = makeEnv()
const TestLayer = env.layer.pipe(Layer.merge(Layer.succeed(References.MinimumLogLevel, "None")))

/** A port nothing listens on. */
const unusedPort = Effect.promise(() =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

/** The server's kubeconfig, edited. */
const kubeconfigWith = (edit: (config: any) => void) =>
  Effect.map(TestApiServer.TestApiServer, (server) => {
    const config = parse(server.kubeconfig)
    edit(config)
    return stringify(config)
  })

/** Starts an informer of `resource` over a client made from `yaml`; its start's failure and how long it took. */
const startFailure = (yaml: string, resource: Resource.Resource<any> = Resource.ConfigMap) =>
  Effect.gen(function*() {
    const started = Date.now()
    const error = yield* Effect.gen(function*() {
      const cache = yield* Cache.Cache
      const informer = yield* cache.informer(resource)
      return yield* Effect.flip(informer.synced)
    }).pipe(
      Effect.provide(Cache.layer().pipe(Layer.provide(KubeClient.layer), Layer.provide(Kube.layerFromString(yaml)))),
      Effect.scoped
    )
    return { error, millis: Date.now() - started }
  })

layer(TestLayer, { excludeTestServices: true })("diagnostics over HTTPS", (it) => {
  it.effect("connection refused: the server URL, the context and the cause, after the client's short retries", () =>
    Effect.gen(function*() {
      const port = yield* unusedPort
      const yaml = yield* kubeconfigWith((c) => {
        c.clusters[0].cluster.server = `https://127.0.0.1:${port}`
      })
      const { error, millis } = yield* startFailure(yaml)
      assert.strictEqual(error._tag, "Transport")
      assert.strictEqual(
        error.message,
        `cannot reach the API server at https://127.0.0.1:${port} (kubeconfig context "testkit"): connection ` +
          "refused (ECONNREFUSED): is the cluster running, and is the server address in the kubeconfig right?"
      )
      // the default retries (200 ms doubling, 3 times) and nothing more: far below the 2-minute sync timeout
      assert.isAtLeast(millis, 1000)
      assert.isBelow(millis, 10_000)
    }))

  it.effect("a certificate the kubeconfig's CA did not sign: certificate signed by unknown authority", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const yaml = yield* kubeconfigWith((c) => {
        c.clusters[0].cluster["certificate-authority-data"] = Buffer.from(tls.rootCertificates[0]!).toString("base64")
      })
      const { error, millis } = yield* startFailure(yaml)
      assert.strictEqual(error._tag, "Transport")
      assert.match(
        error.message,
        new RegExp(
          `^cannot reach the API server at ${server.url.replace(/\/$/, "")} \\(kubeconfig context "testkit"\\): ` +
            "certificate signed by unknown authority \\([A-Z_]+\\): check certificate-authority-data \\(or " +
            "certificate-authority\\) of the cluster in the kubeconfig$"
        )
      )
      assert.isBelow(millis, 10_000)
    }))

  it.effect("a token the server rejects (401): refresh it; the token is never in the message", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const token = "expired-token-0123456789abcdef"
      const yaml = yield* kubeconfigWith((c) => {
        c.users[0].user = { token }
      })
      const { error, millis } = yield* startFailure(yaml)
      assert.strictEqual(error._tag, "Unauthorized")
      assert.strictEqual(
        error.message,
        `the API server at ${server.url.replace(/\/$/, "")} (kubeconfig context "testkit") rejected the ` +
          "credentials (401 Unauthorized): the token may have expired; refresh it (log in again, or get a new kubeconfig)"
      )
      assert.notInclude(JSON.stringify({ message: error.message, diagnosis: (error as any).diagnosis }), token)
      assert.notInclude(error.message, server.token)
      assert.isBelow(millis, 5_000, "a 401 is not retried")
    }))

  it.effect("a CRD that is not installed, through the real client", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const { error, millis } = yield* startFailure(server.kubeconfig, WebApp)
      assert.strictEqual(
        error.message,
        "the CustomResourceDefinition webapps.example.com (example.com/v1 WebApp) is not installed: apply it " +
          "(reconcile manifests writes it, then kubectl apply --server-side -f config/) or start with --install-crds"
      )
      assert.isBelow(millis, 5_000)
    }))

  it.effect("a forbidden watch, through the real client: the rule to grant", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const faults = yield* Faults.Faults
      const rule = yield* faults.failRequests({ code: 403, verbs: ["list"], resources: ["configmaps"] })
      const { error } = yield* startFailure(server.kubeconfig).pipe(Effect.ensuring(faults.removeRule(rule)))
      assert.strictEqual(error._tag, "Forbidden")
      assert.include(error.message, "may not list configmaps at the cluster scope (403 Forbidden)")
      assert.include(error.message, "{apiGroups: [\"\"], resources: [configmaps], verbs: [list]}")
      assert.deepStrictEqual(Diagnosis.isDiagnosed(error) ? error.diagnosis.problem : undefined, "Forbidden")
    }))
})
