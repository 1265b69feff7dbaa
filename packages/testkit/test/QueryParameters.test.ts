/**
 * Boolean query parameters are read as kube-apiserver reads them (apimachinery's string → bool conversion):
 * only "0" and "false" in any case are false. Python's official client sends `watch=True`; a server that only
 * knew "true" answered it with a list, and the Python watch saw no event at all.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApiServer } from "../src/index.js"
import { request, watchLines } from "./support/drivers.js"

const configMaps = "/api/v1/namespaces/default/configmaps"

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })(
  "TestApiServer: boolean query parameters",
  (it) => {
    it.effect(
      "watch=True, watch=1 and watch= start a watch; watch=False and watch=0 list",
      () =>
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const rv = yield* server.cluster.resourceVersion
          for (const value of ["True", "TRUE", "1", "", "yes"]) {
            const { lines } = yield* Effect.promise(() =>
              watchLines(server, `${configMaps}?watch=${value}&resourceVersion=${rv}&timeoutSeconds=1`, 1, () =>
                void request(server, "POST", configMaps, {
                  contentType: "application/json",
                  body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "q-" } })
                }))
            )
            assert.strictEqual(JSON.parse(lines[0]!).type, "ADDED", `watch=${value} is a watch`)
          }
          for (const value of ["False", "false", "0"]) {
            const listed = yield* Effect.promise(() =>
              request(server, "GET", `${configMaps}?watch=${value}`)
            )
            assert.strictEqual(JSON.parse(listed.body).kind, "ConfigMapList", `watch=${value} is a list`)
          }
        }),
      { timeout: 15_000 }
    )
  }
)
