/**
 * API requests as spans: inside a span (a reconcile's), each request is a child span named after its route, with the
 * OpenTelemetry HTTP attributes and Kubernetes' verb and resource, and the W3C `traceparent` header reaches the server;
 * outside a span, and for watches, no span and no header. Over real HTTP (undici) to a node:http server on 127.0.0.1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream, Tracer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describe as describeRequest } from "../src/internal/requestSpan.js"
import * as Kube from "../src/Kube.js"

/** A server answering every request with a ConfigMap (a watch: one event, then the end), keeping the headers. */
const server = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly seen: Array<http.IncomingHttpHeaders>; readonly s: http.Server }>(
    (resume) => {
      const seen: Array<http.IncomingHttpHeaders> = []
      const s = http.createServer((req, res) => {
        seen.push(req.headers)
        req.resume()
        req.on("end", () => {
          const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default" } }
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify(req.url?.includes("watch=true") ? { type: "ADDED", object } : object) + "\n")
        })
      })
      s.listen(
        0,
        "127.0.0.1",
        () => resume(Effect.succeed({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, s }))
      )
    }
  ),
  ({ s }) => Effect.sync(() => (s.closeAllConnections(), s.close()))
)

const kubeconfig = (url: string) =>
  [
    "apiVersion: v1",
    "kind: Config",
    `clusters: [{ name: c, cluster: { server: "${url}", insecure-skip-tls-verify: true } }]`,
    "users: [{ name: u, user: { token: abc } }]",
    "contexts: [{ name: ctx, context: { cluster: c, user: u } }]",
    "current-context: ctx"
  ].join("\n")

/** A tracer keeping every span it made. */
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

describe("API requests as spans", () => {
  it.live("inside a span: a child span per request, named after its route, and traceparent sent", () =>
    Effect.gen(function*() {
      const { seen, url } = yield* server
      const { spans, tracer } = recording()
      yield* Effect.gen(function*() {
        const kube = yield* Kube.Kube
        yield* kube.request({ method: "GET", path: "/api/v1/namespaces/default/configmaps/x" }).pipe(
          Effect.withSpan("reconcile")
        )
        // outside any span: no span, no header
        yield* kube.request({ method: "GET", path: "/api/v1/namespaces/default/configmaps/x" })
        // a watch, even inside a span: neither
        yield* kube.stream({
          method: "GET",
          path: "/api/v1/namespaces/default/configmaps",
          query: { watch: true }
        }).pipe(Stream.runDrain, Effect.withSpan("reconcile"))
      }).pipe(Effect.provide(Kube.layerFromString(kubeconfig(url))), Effect.withTracer(tracer))

      const reconciles = spans.filter((s) => s.name === "reconcile")
      const requests = spans.filter((s) => s.name !== "reconcile")
      assert.strictEqual(reconciles.length, 2)
      assert.deepStrictEqual(requests.map((s) => s.name), ["GET /api/v1/namespaces/{namespace}/configmaps/{name}"])
      const child = requests[0]!
      assert.strictEqual(child.kind, "client")
      assert.strictEqual(child.parent._tag === "Some" ? child.parent.value.spanId : undefined, reconciles[0]!.spanId)
      assert.strictEqual(child.traceId, reconciles[0]!.traceId)
      const attributes = Object.fromEntries(child.attributes)
      assert.strictEqual(attributes["http.request.method"], "GET")
      assert.strictEqual(attributes["http.response.status_code"], 200)
      assert.strictEqual(attributes["url.full"], `${url}/api/v1/namespaces/default/configmaps/x`)
      assert.strictEqual(attributes["k8s.verb"], "get")
      assert.strictEqual(attributes["k8s.resource"], "configmaps")
      assert.strictEqual(attributes["k8s.namespace.name"], "default")
      assert.strictEqual(seen.length, 3)
      assert.strictEqual(seen[0]!.traceparent, `00-${child.traceId}-${child.spanId}-01`)
      assert.isUndefined(seen[1]!.traceparent, "no span around the request, no header")
      assert.isUndefined(seen[2]!.traceparent, "a watch is not traced")
    }))

  it.effect("a request's route, verb and resource", () =>
    Effect.sync(() => {
      const cases: ReadonlyArray<readonly [Kube.Request, string, Record<string, string>]> = [
        [
          { method: "GET", path: "/apis/apps/v1/namespaces/prod/deployments" },
          "GET /apis/apps/v1/namespaces/{namespace}/deployments",
          { "k8s.namespace.name": "prod", "k8s.verb": "list", "k8s.resource": "deployments" }
        ],
        [
          { method: "PATCH", path: "/apis/apps.reconcile.dev/v1/namespaces/default/webapps/sample/status" },
          "PATCH /apis/apps.reconcile.dev/v1/namespaces/{namespace}/webapps/{name}/status",
          { "k8s.namespace.name": "default", "k8s.verb": "patch", "k8s.resource": "webapps/status" }
        ],
        [
          { method: "POST", path: "/api/v1/namespaces/default/configmaps" },
          "POST /api/v1/namespaces/{namespace}/configmaps",
          { "k8s.namespace.name": "default", "k8s.verb": "create", "k8s.resource": "configmaps" }
        ],
        [
          { method: "DELETE", path: "/api/v1/namespaces/default/pods" },
          "DELETE /api/v1/namespaces/{namespace}/pods",
          { "k8s.namespace.name": "default", "k8s.verb": "deletecollection", "k8s.resource": "pods" }
        ],
        [
          { method: "PUT", path: "/api/v1/namespaces/kube-system" },
          "PUT /api/v1/namespaces/{name}",
          { "k8s.verb": "update", "k8s.resource": "namespaces" }
        ],
        [
          { method: "GET", path: "/apis/coordination.k8s.io/v1/namespaces/default/leases", query: { watch: true } },
          "GET /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases",
          { "k8s.namespace.name": "default", "k8s.verb": "watch", "k8s.resource": "leases" }
        ],
        [{ method: "GET", path: "/version" }, "GET /version", {}]
      ]
      for (const [request, name, attributes] of cases) {
        assert.deepStrictEqual(describeRequest(request), { name, attributes }, request.path)
      }
    }))
})
