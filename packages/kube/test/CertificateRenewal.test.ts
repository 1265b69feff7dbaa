/**
 * CertificateManager (on the in-process cluster, TestKube) as the `certificate` of a WebhookServer on 127.0.0.1,
 * over real HTTPS, with the TestClock driving renewal: a review held in its handler while the clock passes the
 * renewal point completes with its answer on the connection it came on (the old certificate), a new connection gets
 * the certificate the Secret now holds, and a client trusting the bundle injected into the webhook configuration
 * verifies it — for a serving renewal and for a CA renewal (the old CA stays in the bundle, so a replica still
 * serving a certificate it signed stays trusted; the client is Node's OpenSSL, which picks a CA by subject name).
 * And a renewal that lands while the server starts, between its read of `current` and its subscription to
 * `changes`, is served rather than lost.
 *
 * Timers are on the TestClock; the sockets are real. Every wait on a socket is bounded on the wall clock
 * (`bounded`, `eventually`), and a held review is released by a finalizer that runs before the server drains, so a
 * failing assertion cannot leave the scope close waiting for it.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as k8s from "@kubernetes/client-node"
import { TestKube } from "@reconcile/testkit"
import { Deferred, Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { X509Certificate } from "node:crypto"
import * as https from "node:https"
import type * as tls from "node:tls"
import * as Admission from "../src/Admission.js"
import * as CertificateManager from "../src/CertificateManager.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import * as WebhookServer from "../src/WebhookServer.js"
import { eventually } from "./support/env.js"

const MINUTE = 60_000
const settle = TestKube.settle

/** 90 minutes serving (renewed 60 minutes in), the shortest CA allowed (270 minutes, renewed 180 minutes in). */
const options: CertificateManager.Options = {
  serviceName: "hooks",
  namespace: "default",
  secretName: "hooks-tls",
  ips: ["127.0.0.1"],
  validatingWebhookConfigurations: ["v-hooks"],
  servingValidity: "90 minutes",
  caValidity: "270 minutes",
  resync: "10 minutes"
}

const Env = TestKube.layerWithCluster({ retry: { times: 0 } })

const Validating = Resource.make<Resource.Wire<k8s.V1ValidatingWebhookConfiguration>>({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
  scope: "Cluster"
})

/** The TestClock at the wall clock's time (the certificates are then valid for a real handshake), the configuration. */
const setup = Effect.andThen(
  TestClock.setTime(Date.now()),
  KubeClient.create(Validating, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "v-hooks" },
    webhooks: [{
      name: "hooks.example.com",
      clientConfig: { url: "https://127.0.0.1:9443/validate" },
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      failurePolicy: "Fail",
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }]
    }]
  })
)

const decode = (base64: string | undefined) => Buffer.from(base64 ?? "", "base64").toString("utf8")

/** The Secret's serving certificate and its CA bundle (PEM). */
const readSecret = Effect.map(
  KubeClient.get(Resource.Secret, "hooks-tls", { namespace: "default" }),
  (secret) => ({
    cert: decode(secret.data?.["tls.crt"]),
    key: decode(secret.data?.["tls.key"]),
    bundle: decode(secret.data?.["ca.crt"])
  })
)

/** The bundle kube-apiserver would trust: the configuration's `caBundle`. */
const injectedBundle = Effect.map(KubeClient.get(Validating, "v-hooks"), (v) => {
  const bundles = new Set((v.webhooks ?? []).map((w) => w.clientConfig?.caBundle))
  assert.strictEqual(bundles.size, 1, "one bundle in every webhook")
  return decode([...bundles][0])
})

const pemCerts = (pem: string) =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p))

interface Reply {
  readonly status: number
  readonly body: string
  /** The certificate the server presented on this connection. */
  readonly peer: { readonly fingerprint256: string; readonly serialNumber: string }
}

/** A review on a new connection (no agent, `Connection: close`) trusting only `ca`; aborted when interrupted. */
const post = (port: number, path: string, ca: string, body: string) =>
  Effect.tryPromise({
    try: (signal) =>
      new Promise<Reply>((resolve, reject) => {
        const req = https.request({
          host: "127.0.0.1",
          port,
          path,
          method: "POST",
          headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
          ca,
          agent: false,
          signal
        }, (res) => {
          const peer = (res.socket as tls.TLSSocket).getPeerCertificate()
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8"),
              peer: { fingerprint256: peer.fingerprint256, serialNumber: peer.serialNumber }
            }))
          res.on("error", reject)
        })
        req.on("error", reject)
        req.end(body)
      }),
    catch: (error) => error as Error & { readonly code?: string }
  })

/** At most 10 seconds of the wall clock, whatever the TestClock does. */
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) => TestClock.withLive(Effect.timeout(effect, "10 seconds"))

let uids = 0
const review = (data: Record<string, string>) => {
  const uid = `renewal-${++uids}`
  return {
    uid,
    body: JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid,
        kind: { group: "", version: "v1", kind: "ConfigMap" },
        resource: { group: "", version: "v1", resource: "configmaps" },
        name: "c",
        namespace: "default",
        operation: "CREATE",
        userInfo: { username: "alice" },
        object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "default" }, data },
        dryRun: false
      }
    })
  }
}

const answerOf = (reply: Reply) => {
  assert.strictEqual(reply.status, 200, reply.body)
  return JSON.parse(reply.body).response as { uid: string; allowed: boolean; status?: { message?: string } }
}

const sameCertificate = (reply: Reply, pem: string, what: string) => {
  const x509 = new X509Certificate(pem)
  assert.strictEqual(reply.peer.fingerprint256, x509.fingerprint256, what)
  assert.strictEqual(reply.peer.serialNumber.toUpperCase(), x509.serialNumber.toUpperCase(), what)
}

/**
 * The manager and a server serving its certificate with a validator whose reviews with `data.hold` wait in the
 * handler until `release` (then are denied with the hold's value, so the answer is recognisably theirs).
 */
const start = Effect.gen(function*() {
  yield* setup
  const manager = yield* CertificateManager.make(options)
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const webhook = Admission.validator(Resource.ConfigMap, {
    create: (cm) =>
      Effect.gen(function*() {
        const hold = cm.data?.hold
        if (hold === undefined) return
        yield* Deferred.succeed(started, undefined)
        yield* Deferred.await(release)
        return yield* Admission.deny(`held: ${hold}`)
      })
  }, { name: "vrenewal.configmaps.test.dev" })
  // The review's time is real, the renewal's is simulated: the handler's deadline (`timeoutSeconds`) runs on the
  // wall clock, or the hour the TestClock jumps would time the held review out (kube-apiserver's own deadline is
  // real time too).
  const route: WebhookServer.Route = { ...webhook, handle: (body) => TestClock.withLive(webhook.handle(body)) }
  const server = yield* WebhookServer.make({ routes: [route], certificate: manager, port: 0 })
  // finalizers run in reverse: a held review is released before the server waits for it to drain
  yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
  yield* settle
  const send = (ca: string, data: Record<string, string>) =>
    post(server.address.port, route.path, ca, review(data).body)
  /** Sends a review that waits in the handler; returns once the handler holds it. */
  const hold = (ca: string, value: string) =>
    Effect.gen(function*() {
      const { body, uid } = review({ hold: value })
      const fiber = yield* Effect.forkChild(post(server.address.port, route.path, ca, body))
      yield* bounded(Deferred.await(started))
      return { fiber, uid }
    })
  return { manager, server, send, hold, release }
})

describe("CertificateManager serving a WebhookServer (TestKube, TestClock, real HTTPS)", () => {
  it.effect(
    "a serving renewal with a review in flight: the review completes on the old certificate, new connections get the new one",
    () =>
      Effect.gen(function*() {
        const { hold, manager, release, send, server } = yield* start
        const before = yield* readSecret
        const bundle = yield* injectedBundle
        assert.strictEqual(bundle, before.bundle, "the bundle in the configuration is the Secret's ca.crt")
        const first = yield* bounded(send(bundle, { a: "1" }))
        sameCertificate(first, before.cert, "the server serves the Secret's certificate")
        assert.isTrue(answerOf(first).allowed)

        const held = yield* hold(bundle, "across the renewal")
        const next = yield* Effect.forkChild(bounded(Stream.runHead(manager.changes)))
        yield* settle
        yield* TestClock.adjust(59 * MINUTE)
        yield* settle
        assert.strictEqual((yield* readSecret).cert, before.cert, "59 of 90 minutes: not renewed yet")
        sameCertificate(yield* bounded(send(bundle, { a: "2" })), before.cert, "not renewed yet")

        yield* TestClock.adjust(2 * MINUTE)
        yield* settle
        const after = yield* readSecret
        assert.notStrictEqual(after.cert, before.cert, "the manager wrote a new serving certificate")
        assert.strictEqual(after.bundle, before.bundle, "the same CA")
        assert.strictEqual(yield* injectedBundle, after.bundle)
        const seen = yield* Fiber.join(next)
        assert.isTrue(seen._tag === "Some" && seen.value.cert === after.cert, "changes carried the renewal")

        // (2) and (3): a new connection, trusting the injected bundle, is served the Secret's new certificate
        const fresh = yield* eventually(Effect.gen(function*() {
          const reply = yield* bounded(send(yield* injectedBundle, { a: "3" }))
          sameCertificate(reply, after.cert, "a new connection gets the renewed certificate")
          return reply
        }))
        assert.isTrue(answerOf(fresh).allowed)
        assert.strictEqual((yield* server.certificate).cert, after.cert)

        // (1): the review held across the renewal completes, with its own answer, on the old certificate
        assert.isUndefined(held.fiber.pollUnsafe(), "the held review was still in flight")
        yield* Deferred.succeed(release, undefined)
        const finished = yield* bounded(Fiber.join(held.fiber))
        sameCertificate(finished, before.cert, "the held review's connection kept the old certificate")
        const answer = answerOf(finished)
        assert.strictEqual(answer.uid, held.uid)
        assert.isFalse(answer.allowed)
        assert.strictEqual(answer.status?.message, "held: across the renewal")
      }).pipe(Effect.scoped, Effect.provide(Env)),
    { timeout: 60_000 }
  )

  it.effect(
    "a CA renewal with a review in flight: the new CA signs, the bundle keeps the old one, both certificates verify",
    () =>
      Effect.gen(function*() {
        const { hold, release, send, server } = yield* start
        // serving renewals at 60 and 120 minutes; at 170 the CA (270 minutes, due at 180) still signs
        for (let i = 0; i < 17; i++) yield* TestClock.adjust(10 * MINUTE)
        yield* settle
        const before = yield* readSecret
        const oldBundle = yield* injectedBundle
        assert.strictEqual(oldBundle, before.bundle)
        const [oldCa] = pemCerts(oldBundle)
        assert.strictEqual(pemCerts(oldBundle).length, 1, "one CA so far")
        const held = yield* hold(oldBundle, "across the CA renewal")

        yield* TestClock.adjust(11 * MINUTE)
        yield* settle
        const after = yield* readSecret
        const cas = pemCerts(after.bundle)
        assert.strictEqual(cas.length, 2, "the new CA, then the old one until it expires")
        assert.notStrictEqual(cas[0]!.fingerprint256, oldCa!.fingerprint256)
        assert.strictEqual(cas[1]!.fingerprint256, oldCa!.fingerprint256)
        const renewed = new X509Certificate(after.cert)
        assert.isTrue(renewed.verify(cas[0]!.publicKey), "the new CA signs the new serving certificate")
        assert.isFalse(renewed.verify(oldCa!.publicKey))
        const bundle = yield* injectedBundle
        assert.strictEqual(bundle, after.bundle, "the configuration has the new bundle")

        // (2) and (3): a new connection is served the new certificate, and the new bundle verifies it
        yield* eventually(Effect.gen(function*() {
          sameCertificate(yield* bounded(send(bundle, { a: "1" })), after.cert, "a new connection gets the new one")
        }))
        assert.strictEqual((yield* server.certificate).cert, after.cert)
        // a client still trusting the old bundle alone refuses it: the bundle had to be rewritten
        const stale = yield* Effect.flip(bounded(send(oldBundle, { a: "2" })))
        assert.strictEqual((stale as { code?: string }).code, "UNABLE_TO_VERIFY_LEAF_SIGNATURE")
        // a replica that has not reloaded yet (serving the old certificate) is still trusted through the new bundle
        const plain = Admission.validator(Resource.ConfigMap, { create: () => Effect.void }, { name: "vlagging" })
        const lagging = yield* WebhookServer.make({
          routes: [plain],
          certificate: WebhookServer.fromPem({ cert: before.cert, key: before.key }),
          port: 0
        })
        const fromLagging = yield* bounded(
          post(lagging.address.port, plain.path, bundle, review({ a: "3" }).body)
        )
        sameCertificate(fromLagging, before.cert, "the lagging replica serves the old certificate")
        assert.isTrue(answerOf(fromLagging).allowed)

        // (1): the review held across the CA renewal completes, with its own answer, on the old certificate
        assert.isUndefined(held.fiber.pollUnsafe(), "the held review was still in flight")
        yield* Deferred.succeed(release, undefined)
        const finished = yield* bounded(Fiber.join(held.fiber))
        sameCertificate(finished, before.cert, "the held review's connection kept the old certificate")
        const answer = answerOf(finished)
        assert.strictEqual(answer.uid, held.uid)
        assert.strictEqual(answer.status?.message, "held: across the CA renewal")
      }).pipe(Effect.scoped, Effect.provide(Env)),
    { timeout: 60_000 }
  )

  it.effect("a renewal that lands while the server starts, after it read the certificate, is served", () =>
    Effect.gen(function*() {
      yield* setup
      const manager = yield* CertificateManager.make(options)
      yield* settle
      const initial = yield* manager.current
      // the manager renews right after the server has read `current`, before the server listens
      const certificate: WebhookServer.CertificateSource = {
        current: Effect.tap(manager.current, () => Effect.andThen(TestClock.adjust(61 * MINUTE), settle)),
        changes: manager.changes
      }
      const route = Admission.validator(Resource.ConfigMap, { create: () => Effect.void }, { name: "vstartup" })
      const server = yield* WebhookServer.make({ routes: [route], certificate, port: 0 })
      const after = yield* readSecret
      assert.notStrictEqual(after.cert, initial.cert, "renewed during the start")
      assert.strictEqual((yield* server.certificate).cert, after.cert)
      const reply = yield* bounded(post(server.address.port, route.path, after.bundle, review({}).body))
      sameCertificate(reply, after.cert, "the first connection gets the renewed certificate")
    }).pipe(Effect.scoped, Effect.provide(Env)))
})
