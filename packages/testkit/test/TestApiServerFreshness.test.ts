/**
 * TestApiServer answers as kube-apiserver does about time and resourceVersions (real HTTPS, real time): bookmarks
 * every `bookmarkInterval` and 2 s before a watch's deadline, and "Too large resource version" for a list or a
 * watch-list from a resourceVersion the server has not reached (after `resourceVersionWait` unless paginated).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import { request, watchLines } from "./support/drivers.js"
import { cm } from "./support/fixtures.js"

const Env = TestApiServer.layerWithCluster({ bookmarkInterval: "400 millis", resourceVersionWait: "300 millis" })

const configMaps = "/api/v1/namespaces/default/configmaps"

layer(Env, { excludeTestServices: true })(
  "TestApiServer: bookmarks and too large resourceVersions, as kube-apiserver",
  (it) => {
    it.effect(
      "a watch gets a bookmark every bookmarkInterval and one 2 s before its timeoutSeconds, none after",
      () =>
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const rv = yield* server.cluster.resourceVersion
          const started = Date.now()
          const { lines, ended } = yield* Effect.promise(() =>
            watchLines(
              server,
              `${configMaps}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3`,
              10
            )
          )
          assert.strictEqual(ended, "end", "the server ends the watch at timeoutSeconds")
          assert.isAtLeast(Date.now() - started, 2_900)
          // at 0.4 s and 0.8 s (the interval), at 1 s (3 s − 2 s), and none in the 2 s after
          assert.deepStrictEqual(lines.map((l) => JSON.parse(l).type), ["BOOKMARK", "BOOKMARK", "BOOKMARK"])
          assert.deepStrictEqual(lines.map((l) => JSON.parse(l).object.metadata.resourceVersion), [rv, rv, rv])
        }),
      { timeout: 10_000 }
    )

    it.effect(
      "a list not older than a resourceVersion not reached: 504 Too large after the wait (Retry-After: 1), at once " +
        "when paginated; served when the server gets there within the wait",
      () =>
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const cluster = yield* TestCluster.TestCluster
          const current = Number(yield* cluster.resourceVersion)
          const ahead = current + 100

          const started = Date.now()
          const waited = yield* Effect.promise(() =>
            request(server, "GET", `${configMaps}?resourceVersion=${ahead}&resourceVersionMatch=NotOlderThan`)
          )
          assert.isAtLeast(Date.now() - started, 290, "it waited for the resourceVersion")
          assert.strictEqual(waited.status, 504)
          assert.strictEqual(waited.headers["retry-after"], "1")
          const status = JSON.parse(waited.body)
          assert.strictEqual(status.reason, "Timeout")
          assert.strictEqual(status.message, `Timeout: Too large resource version: ${ahead}, current: ${current}`)
          assert.deepStrictEqual(status.details.causes, [
            { reason: "ResourceVersionTooLarge", message: "Too large resource version" }
          ])

          const paged = yield* Effect.promise(() =>
            request(server, "GET", `${configMaps}?limit=1&resourceVersion=${ahead}`)
          )
          assert.strictEqual(paged.status, 504, "a paginated list (etcd on kube-apiserver) answers at once")
          assert.strictEqual(JSON.parse(paged.body).details.causes[0].reason, "ResourceVersionTooLarge")

          const next = current + 1
          const pending = yield* Effect.forkChild(
            Effect.promise(() => request(server, "GET", `${configMaps}?resourceVersion=${next}`))
          )
          yield* Effect.sleep("50 millis")
          yield* cluster.create(cm("fresh") as KubeObject)
          const served = yield* Fiber.join(pending)
          assert.strictEqual(served.status, 200)
          assert.strictEqual(JSON.parse(served.body).metadata.resourceVersion, String(next))
        })
    )

    it.effect("a watch-list from a resourceVersion not reached ends with a 504 Too large ERROR event", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const ahead = Number(yield* server.cluster.resourceVersion) + 100
        const { lines } = yield* Effect.promise(() =>
          watchLines(
            server,
            `${configMaps}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${ahead}` +
              "&allowWatchBookmarks=true",
            5
          )
        )
        assert.strictEqual(lines.length, 1)
        const event = JSON.parse(lines[0]!)
        assert.strictEqual(event.type, "ERROR")
        assert.strictEqual(event.object.code, 504)
        assert.strictEqual(event.object.details.causes[0].reason, "ResourceVersionTooLarge")
      }))
  }
)
