/**
 * Discovery as kube-apiserver 1.36 serves it: every document (`/api`, `/apis`, `/api/v1`, `/apis/<group>`,
 * `/apis/<group>/<version>`, aggregated v2) and `kubectl api-resources -o wide` equal the committed snapshot of a
 * real server's (`fixtures/discovery-v1.36.generated.json`, written by `support/apiResourcesDiff.ts snapshot`),
 * and the verbs it lists are the verbs the server allows; the answers' HTTP side (`/version` of 1.36, cacheable
 * aggregated documents, the plain-text 404 of an unknown group, 406s) is kube-apiserver's too.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Https from "node:https"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Diff from "./support/apiResourcesDiff.js"
import { request } from "./support/https.js"
import * as Kubectl from "./support/kubectl.js"

const { ok } = Kubectl.make("testkit-discovery-")
const expected = JSON.parse(Fs.readFileSync(Diff.fixturePath, "utf8")) as Diff.Snapshot

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("discovery", (it) => {
  it.effect("every discovery document equals the real server's", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const actual = yield* Effect.promise(() => Diff.snapshot(server.kubeconfigPath))
      assert.deepStrictEqual(Diff.snapshotDiff(expected, actual), [])
    }))

  it.effect("kubectl api-resources -o wide prints the real server's table", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const table = yield* ok(server, ["api-resources", "-o", "wide"])
      assert.deepStrictEqual(table.trimEnd().split("\n"), expected.apiResources)
    }))

  it.effect("a verb discovery does not list is 405 MethodNotAllowed", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const send = (method: string, path: string, body?: object) =>
        request(server, method, path, { "content-type": "application/json" }, body && JSON.stringify(body)).pipe(
          Effect.map((r) => r.status)
        )
      assert.strictEqual(yield* send("GET", "/api/v1/componentstatuses"), 200)
      assert.strictEqual(
        yield* send("POST", "/api/v1/componentstatuses", { apiVersion: "v1", kind: "ComponentStatus" }),
        405
      )
      assert.strictEqual(yield* send("DELETE", "/api/v1/namespaces"), 405)
      assert.strictEqual(yield* send("GET", "/apis/authentication.k8s.io/v1/tokenreviews"), 405)
      const review = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
      const whoami = yield* request(server, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        "content-type": "application/json"
      }, JSON.stringify(review))
      assert.deepStrictEqual(JSON.parse(whoami.body.toString()).status.userInfo.groups, [
        "system:masters",
        "system:authenticated"
      ])
    }))
})

const crd = (plural: string, kind: string, subresources: object) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.fidelity.example.com` },
  spec: {
    group: "fidelity.example.com",
    scope: "Namespaced",
    names: { plural, singular: kind.toLowerCase(), kind },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      subresources
    }]
  }
})

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })(
  "discovery over HTTP",
  (it) => {
    const get = (path: string, headers: Record<string, string> = {}) =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        return yield* Effect.promise(() =>
          new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
            const req = Https.get(`${server.url}${path}`, {
              ca: server.certificateAuthority,
              headers: { authorization: `Bearer ${server.token}`, ...headers }
            }, (res) => {
              let body = ""
              res.setEncoding("utf8")
              res.on("data", (c: string) => (body += c))
              res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
            })
            req.on("error", reject)
          })
        )
      })

    it.effect("/version is 1.36's, indented as kube-apiserver writes it; JSON only", () =>
      Effect.gen(function*() {
        const reply = yield* get("/version")
        const version = JSON.parse(reply.body)
        assert.include(version, {
          major: "1",
          minor: "36",
          emulationMajor: "1",
          emulationMinor: "36",
          minCompatibilityMajor: "1",
          minCompatibilityMinor: "35"
        })
        assert.match(version.gitVersion, /^v1\.36\.\d+/)
        assert.strictEqual(reply.body, JSON.stringify(version, null, 2))
        const refused = yield* get("/version", { accept: "application/yaml" })
        assert.strictEqual(refused.status, 406)
        assert.strictEqual(
          JSON.parse(refused.body).message,
          "406: Not Acceptable\n\nAvailable representations: application/json"
        )
      }))

    it.effect("a custom group lists each resource followed by its subresources, in its CRDs' order", () =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.TestCluster
        yield* cluster.create(
          crd("widgets", "Widget", {
            status: {},
            scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" }
          }) as KubeObject
        )
        yield* cluster.create(crd("gadgets", "Gadget", {}) as KubeObject)
        const list = JSON.parse((yield* get("/apis/fidelity.example.com/v1")).body)
        assert.deepStrictEqual(
          list.resources.map((r: { name: string; kind: string }) => [r.name, r.kind]),
          [["widgets", "Widget"], ["widgets/status", "Widget"], ["widgets/scale", "Scale"], ["gadgets", "Gadget"]]
        )
        // an unknown version of a custom group, an unknown group: the mux's plain-text 404
        for (
          const path of ["/apis/fidelity.example.com/v2", "/apis/nosuch.example.com/v1", "/apis/nosuch.example.com"]
        ) {
          const missing = yield* get(path)
          assert.strictEqual(missing.status, 404, path)
          assert.strictEqual(missing.headers["content-type"], "text/plain; charset=utf-8", path)
          assert.strictEqual(missing.body, "404 page not found\n", path)
        }
        // an unknown version of a built-in group: a Status
        const apps = yield* get("/apis/apps/v2")
        assert.strictEqual(apps.status, 404)
        assert.strictEqual(JSON.parse(apps.body).reason, "NotFound")
      }))

    it.effect("aggregated documents are public with an ETag (If-None-Match: 304); unacceptable types are 406", () =>
      Effect.gen(function*() {
        const reply = yield* get("/apis", { accept: `${Diff.AGGREGATED},application/json` })
        assert.strictEqual(reply.headers["content-type"], Diff.AGGREGATED)
        assert.strictEqual(reply.headers["cache-control"], "public")
        assert.strictEqual(reply.headers.vary, "Accept")
        const etag = String(reply.headers.etag)
        assert.match(etag, /^"[0-9A-F]{128}"$/)
        const cached = yield* get("/apis", { accept: Diff.AGGREGATED, "if-none-match": etag })
        assert.strictEqual(cached.status, 304)
        // legacy documents are not cacheable
        assert.strictEqual((yield* get("/apis")).headers["cache-control"], "no-cache, private")
        const html = yield* get("/api/v1", { accept: "text/html" })
        assert.strictEqual(html.status, 406)
        assert.deepStrictEqual(JSON.parse(html.body).details, {})
        assert.match(
          JSON.parse(html.body).message,
          /^406: Not Acceptable\n\nAvailable representations: application\/json, /
        )
        // v2beta1 is no longer served; a transformation the document has not: "only the following media types"
        const beta = yield* get("/apis", {
          accept: "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        })
        assert.strictEqual(beta.status, 406)
        assert.strictEqual(
          JSON.parse(beta.body).message,
          "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        )
      }))
  }
)
