/**
 * The webhook server over real HTTPS on 127.0.0.1, with a node:https client that trusts the test CA: reviews are
 * answered and counted (controller-runtime's metrics in `Prometheus.text`), bad requests get 400/404/405/413 and
 * the server goes on serving, a certificate directory is reloaded when its `..data` symlink is swapped (new
 * connections get the new certificate, a half-written pair is never served, a review in flight completes), and a
 * scope close drains the reviews in flight.
 */
import { assert, describe, it } from "@effect/vitest"
import { Prometheus } from "@reconcile/core"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import type * as tls from "node:tls"
import * as Admission from "../src/Admission.js"
import * as Certificates from "../src/Certificates.js"
import * as Resource from "../src/Resource.js"
import * as WebhookServer from "../src/WebhookServer.js"
import { eventually } from "./support/env.js"

const ca = Certificates.issue({ commonName: "webhook-test-ca", ca: true })
const serving = () => Certificates.issue({ commonName: "webhook", usages: ["server"], ips: ["127.0.0.1"], issuer: ca })

interface Reply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
  /** The SHA-256 fingerprint of the certificate the server presented. */
  readonly fingerprint: string
}

/** One request on a new connection (no agent), trusting only the test CA. */
const request = (
  port: number,
  options: {
    readonly path: string
    readonly method?: string
    readonly body?: string
    readonly contentType?: string | null
    readonly chunked?: boolean
  }
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const body = options.body ?? ""
    const headers: Record<string, string> = {}
    if (options.contentType !== null) headers["content-type"] = options.contentType ?? "application/json"
    if (options.chunked !== true) headers["content-length"] = String(Buffer.byteLength(body))
    const req = https.request({
      host: "127.0.0.1",
      port,
      path: options.path,
      method: options.method ?? "POST",
      headers,
      ca: ca.cert,
      agent: false
    }, (res) => {
      const fingerprint = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          fingerprint
        }))
      res.on("error", reject)
    })
    req.on("error", reject)
    if (options.chunked === true) {
      for (let i = 0; i < body.length; i += 512) req.write(body.slice(i, i + 512))
      req.end()
    } else {
      req.end(body)
    }
  })

const post = (port: number, path: string, body: string, extra: Partial<Parameters<typeof request>[1]> = {}) =>
  Effect.promise(() => request(port, { path, body, ...extra }))

const fingerprintOf = (cert: string) => new crypto.X509Certificate(cert).fingerprint256

let uids = 0
const review = (data: Record<string, string>) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `u-${++uids}`,
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

const responseOf = (reply: Reply) => {
  assert.strictEqual(reply.status, 200, reply.body)
  return JSON.parse(reply.body).response as { allowed: boolean; status?: { message: string } }
}

/** A validator that denies `data.deny`, and whose reviews with `data.wait` wait for `gate`. */
const validator = (name: string, gate?: { started: Deferred.Deferred<void>; release: Deferred.Deferred<void> }) =>
  Admission.validator(Resource.ConfigMap, {
    create: (cm) =>
      Effect.gen(function*() {
        if (cm.data?.wait !== undefined && gate !== undefined) {
          yield* Deferred.succeed(gate.started, undefined)
          yield* Deferred.await(gate.release)
        }
        if (cm.data?.deny !== undefined) return yield* Admission.deny("denied by test")
      })
  }, { name })

describe("WebhookServer over HTTPS", () => {
  it.live("answers reviews and counts them with controller-runtime's metrics", () =>
    Effect.gen(function*() {
      const webhook = validator("vcounted.configmaps.test.dev")
      const server = yield* WebhookServer.make({
        routes: [webhook],
        certificate: WebhookServer.fromPem(serving()),
        port: 0
      })
      assert.strictEqual(server.address.host, "127.0.0.1")
      assert.isTrue(yield* server.ready)
      const allowed = responseOf(yield* post(server.address.port, webhook.path, review({ a: "1" })))
      assert.isTrue(allowed.allowed)
      const denied = responseOf(yield* post(server.address.port, webhook.path, review({ deny: "1" })))
      assert.isFalse(denied.allowed)
      assert.strictEqual(denied.status?.message, "denied by test")
      const text = yield* Prometheus.text({ processMetrics: false })
      const label = `webhook="vcounted.configmaps.test.dev"`
      assert.include(text, `controller_runtime_webhook_requests_total{${label},code="200"} 2`)
      assert.include(text, `controller_runtime_webhook_latency_seconds_count{${label}} 2`)
      assert.include(text, `controller_runtime_webhook_latency_seconds_bucket{${label},le="+Inf"} 2`)
      assert.include(text, `controller_runtime_webhook_requests_in_flight{${label}} 0`)
    }))

  it.live("400, 404, 405 and 413 are answered with a message and the server goes on serving", () =>
    Effect.gen(function*() {
      const webhook = validator("vbad.configmaps.test.dev")
      const server = yield* WebhookServer.make({
        routes: [webhook],
        certificate: WebhookServer.fromPem(serving()),
        port: 0,
        maxBodyBytes: 4096
      })
      const port = server.address.port
      const malformed = yield* post(port, webhook.path, "{not json")
      assert.strictEqual(malformed.status, 400)
      assert.match(malformed.body, /the request body is not JSON/)
      const empty = yield* post(port, webhook.path, "")
      assert.strictEqual(empty.status, 400)
      assert.match(empty.body, /empty/)
      const wrongType = yield* post(port, webhook.path, review({}), { contentType: "text/plain" })
      assert.strictEqual(wrongType.status, 400)
      assert.match(wrongType.body, /expected Content-Type application\/json, got text\/plain/)
      const unknown = yield* post(port, "/validate-nothing", review({}))
      assert.strictEqual(unknown.status, 404)
      assert.match(unknown.body, /no webhook is served at \/validate-nothing/)
      const get = yield* Effect.promise(() => request(port, { path: webhook.path, method: "GET", contentType: null }))
      assert.strictEqual(get.status, 405)
      assert.strictEqual(get.headers.allow, "POST")
      const big = review({ big: "x".repeat(5000) })
      const tooLarge = yield* post(port, webhook.path, big)
      assert.strictEqual(tooLarge.status, 413)
      // without a Content-Length, the body is cut while it is read
      const tooLargeChunked = yield* post(port, webhook.path, big, { chunked: true })
      assert.strictEqual(tooLargeChunked.status, 413)
      const fine = yield* post(port, webhook.path, review({ a: "1" }), { chunked: true })
      assert.isTrue(responseOf(fine).allowed)
      const text = yield* Prometheus.text({ processMetrics: false })
      assert.include(text, `controller_runtime_webhook_requests_total{webhook="vbad.configmaps.test.dev",code="413"} 2`)
      assert.include(text, `controller_runtime_webhook_requests_total{webhook="vbad.configmaps.test.dev",code="405"} 1`)
    }))

  it.live("a route that dies is a 500 for that request only", () =>
    Effect.gen(function*() {
      const broken: WebhookServer.Route = { path: "/convert", name: "broken", handle: () => Effect.die("bug") }
      const webhook = validator("vafterbug.configmaps.test.dev")
      const server = yield* WebhookServer.make({
        routes: [broken, webhook],
        certificate: WebhookServer.fromPem(serving()),
        port: 0
      })
      const reply = yield* post(server.address.port, "/convert", "{}")
      assert.strictEqual(reply.status, 500)
      assert.notInclude(reply.body, "bug")
      assert.isTrue(responseOf(yield* post(server.address.port, webhook.path, review({}))).allowed)
      const text = yield* Prometheus.text({ processMetrics: false })
      assert.include(text, `controller_runtime_webhook_requests_total{webhook="broken",code="500"} 1`)
    }))

  it.live("fails to start on a port in use, with a message", () =>
    Effect.gen(function*() {
      const first = yield* WebhookServer.make({ routes: [], certificate: WebhookServer.fromPem(serving()), port: 0 })
      const exit = yield* Effect.exit(
        WebhookServer.make({ routes: [], certificate: WebhookServer.fromPem(serving()), port: first.address.port })
      )
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.findErrorOption(exit)
      assert.strictEqual(error._tag, "Some")
      assert.match((error as any).value.message, /cannot listen on 127\.0\.0\.1:\d+/)
    }))
})

/** A Secret volume as the kubelet writes it: `<ts>/` holds the files, `..data` points at it, the names at `..data`. */
const secretVolume = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-certs-"))
  let generation = 0
  const swap = (certificate: Certificates.Certificate) => {
    const target = `..${++generation}`
    fs.mkdirSync(path.join(dir, target), { mode: 0o700 })
    fs.writeFileSync(path.join(dir, target, "tls.crt"), certificate.cert)
    fs.writeFileSync(path.join(dir, target, "tls.key"), certificate.key, { mode: 0o600 })
    fs.symlinkSync(target, path.join(dir, "..data_tmp"))
    fs.renameSync(path.join(dir, "..data_tmp"), path.join(dir, "..data"))
    for (const name of ["tls.crt", "tls.key"]) {
      if (!fs.existsSync(path.join(dir, name))) fs.symlinkSync(path.join("..data", name), path.join(dir, name))
    }
  }
  return { dir, swap }
}

describe("certificates from a directory", () => {
  it.live("a swapped Secret volume is served to new connections; a review in flight completes", () =>
    Effect.gen(function*() {
      const first = serving()
      const second = serving()
      const volume = secretVolume()
      volume.swap(first)
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const webhook = validator("vrotate.configmaps.test.dev", { started, release })
      const certificate = yield* WebhookServer.fromDirectory(volume.dir, { interval: "20 millis" })
      const server = yield* WebhookServer.make({ routes: [webhook], certificate, port: 0 })
      const port = server.address.port
      const before = yield* post(port, webhook.path, review({ a: "1" }))
      assert.strictEqual(before.fingerprint, fingerprintOf(first.cert))
      // a review in flight on a connection made with the first certificate
      const inFlight = yield* Effect.forkChild(post(port, webhook.path, review({ wait: "1" })))
      yield* Deferred.await(started)
      volume.swap(second)
      yield* eventually(Effect.gen(function*() {
        const reply = yield* post(port, webhook.path, review({ a: "1" }))
        assert.strictEqual(reply.fingerprint, fingerprintOf(second.cert))
      }))
      assert.strictEqual((yield* server.certificate).cert, second.cert)
      yield* Deferred.succeed(release, undefined)
      const finished = yield* Fiber.join(inFlight)
      assert.strictEqual(finished.fingerprint, fingerprintOf(first.cert))
      assert.isTrue(responseOf(finished).allowed)
    }))

  it.live("a half-written pair (key not matching) is never served; the whole pair is", () =>
    Effect.gen(function*() {
      const first = serving()
      const second = serving()
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-certs-"))
      fs.writeFileSync(path.join(dir, "tls.crt"), first.cert)
      fs.writeFileSync(path.join(dir, "tls.key"), first.key, { mode: 0o600 })
      const webhook = validator("vhalf.configmaps.test.dev")
      const certificate = yield* WebhookServer.fromDirectory(dir, { interval: "20 millis" })
      const server = yield* WebhookServer.make({ routes: [webhook], certificate, port: 0 })
      const port = server.address.port
      fs.writeFileSync(path.join(dir, "tls.crt"), second.cert) // the key is still the first one's
      yield* Effect.sleep("150 millis") // several polls: each reads the mismatched pair
      assert.strictEqual((yield* post(port, webhook.path, review({}))).fingerprint, fingerprintOf(first.cert))
      fs.writeFileSync(path.join(dir, "tls.key"), second.key, { mode: 0o600 })
      yield* eventually(Effect.gen(function*() {
        const reply = yield* post(port, webhook.path, review({}))
        assert.strictEqual(reply.fingerprint, fingerprintOf(second.cert))
      }))
    }))

  it.live("a directory without a matching pair does not start", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-certs-"))
      const missing = yield* Effect.exit(WebhookServer.fromDirectory(dir))
      assert.isTrue(Exit.isFailure(missing))
      fs.writeFileSync(path.join(dir, "tls.crt"), serving().cert)
      fs.writeFileSync(path.join(dir, "tls.key"), serving().key, { mode: 0o600 })
      const mismatched = yield* Effect.exit(WebhookServer.fromDirectory(dir))
      assert.isTrue(Exit.isFailure(mismatched))
      assert.match(String(mismatched), /does not match/)
    }))
})

describe("graceful shutdown", () => {
  it.live("on scope close: not ready, no new connections, the review in flight completes", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const webhook = validator("vdrain.configmaps.test.dev", { started, release })
      const scope = yield* Scope.make()
      const server = yield* WebhookServer.make({
        routes: [webhook],
        certificate: WebhookServer.fromPem(serving()),
        port: 0
      }).pipe(Scope.provide(scope))
      const port = server.address.port
      const inFlight = yield* Effect.forkChild(post(port, webhook.path, review({ wait: "1" })))
      yield* Deferred.await(started)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* eventually(Effect.gen(function*() {
        assert.isFalse(yield* server.ready)
        const refused = yield* Effect.exit(Effect.tryPromise(() => request(port, { path: webhook.path, body: "{}" })))
        assert.isTrue(Exit.isFailure(refused), "a new connection is refused while draining")
      }))
      assert.isUndefined(closing.pollUnsafe(), "the close waits for the review in flight")
      yield* Deferred.succeed(release, undefined)
      const finished = yield* Fiber.join(inFlight)
      assert.isTrue(responseOf(finished).allowed)
      yield* Fiber.join(closing)
    }))
})
