/**
 * Webhook calls served as spans: with a tracer installed, one server span per review (`webhook <name>`: operation,
 * kind, allowed, code), joined to the caller's trace when the request carries a W3C `traceparent`; without a tracer,
 * none.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import * as https from "node:https"
import * as Admission from "../src/Admission.js"
import * as Certificates from "../src/Certificates.js"
import * as Resource from "../src/Resource.js"
import * as WebhookServer from "../src/WebhookServer.js"

const ca = Certificates.issue({ commonName: "webhook-span-ca", ca: true })
const serving = Certificates.issue({ commonName: "webhook", usages: ["server"], ips: ["127.0.0.1"], issuer: ca })

const post = (port: number, path: string, body: string, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<number>((resolve, reject) => {
      const req = https.request({
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers },
        ca: ca.cert,
        agent: false
      }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode ?? 0))
      })
      req.on("error", reject)
      req.end(body)
    })
  )

const review = (operation: string, data: Record<string, string>) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u-1",
      kind: { group: "", version: "v1", kind: "ConfigMap" },
      resource: { group: "", version: "v1", resource: "configmaps" },
      name: "c",
      namespace: "default",
      operation,
      userInfo: { username: "alice" },
      object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "default" }, data }
    }
  })

const validator = Admission.validator(Resource.ConfigMap, {
  create: (cm) => cm.data?.deny !== undefined ? Admission.deny("denied by test") : Effect.void
}, { name: "vspans.configmaps.test.dev" })

const recording = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer }
}

describe("webhook calls as spans", () => {
  it.live("a server span per review, joined to the caller's traceparent, with the review's facts", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recording()
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
      const parentId = "00f067aa0ba902b7"
      yield* Effect.gen(function*() {
        const server = yield* WebhookServer.make({
          routes: [validator],
          certificate: WebhookServer.fromPem(serving),
          port: 0
        })
        const port = server.address.port
        assert.strictEqual(
          yield* post(port, validator.path, review("CREATE", { a: "1" }), {
            traceparent: `00-${traceId}-${parentId}-01`
          }),
          200
        )
        assert.strictEqual(yield* post(port, validator.path, review("CREATE", { deny: "1" })), 200)
      }).pipe(Effect.scoped, Effect.withTracer(tracer))

      const served = spans.filter((s) => s.name === "webhook vspans.configmaps.test.dev")
      assert.strictEqual(served.length, 2)
      const [joined, denied] = served as [Tracer.NativeSpan, Tracer.NativeSpan]
      assert.strictEqual(joined.kind, "server")
      assert.strictEqual(joined.traceId, traceId, "the caller's trace")
      assert.strictEqual(joined.parent._tag === "Some" ? joined.parent.value.spanId : undefined, parentId)
      assert.deepInclude(Object.fromEntries(joined.attributes), {
        webhook: "vspans.configmaps.test.dev",
        operation: "CREATE",
        kind: "ConfigMap",
        allowed: true,
        code: 200,
        "http.response.status_code": 200
      })
      assert.notStrictEqual(denied.traceId, traceId, "no traceparent: a trace of its own")
      assert.isTrue(denied.parent._tag === "None")
      assert.deepInclude(Object.fromEntries(denied.attributes), { allowed: false, code: 403 })
    }))

  it.live("no tracer installed: a review runs in no span, even with a traceparent", () =>
    Effect.gen(function*() {
      const seen: Array<boolean> = []
      const route: WebhookServer.Route = {
        path: "/plain",
        name: "plain",
        handle: () =>
          Effect.map(Effect.option(Effect.currentSpan), (span) => {
            seen.push(span._tag === "Some")
            return { response: { allowed: true } }
          })
      }
      const server = yield* WebhookServer.make({
        routes: [route],
        certificate: WebhookServer.fromPem(serving),
        port: 0
      })
      const status = yield* post(server.address.port, "/plain", review("CREATE", { a: "1" }), {
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
      })
      assert.strictEqual(status, 200)
      assert.deepStrictEqual(seen, [false])
    }))
})
