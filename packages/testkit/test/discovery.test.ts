/**
 * Discovery as kube-apiserver 1.36 serves it: every document (`/api`, `/apis`, `/api/v1`, `/apis/<group>`,
 * `/apis/<group>/<version>`, aggregated v2) and `kubectl api-resources -o wide` equal the committed snapshot of a
 * real server's (`fixtures/discovery-v1.36.generated.json`, written by `support/apiResourcesDiff.ts snapshot`),
 * and the verbs it lists are the verbs the server allows.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { TestApiServer } from "../src/index.js"
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
