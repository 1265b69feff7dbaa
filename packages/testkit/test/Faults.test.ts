import { assert, describe, it } from "@effect/vitest"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Resource from "@reconcile/kube/Resource"
import { Effect, Fiber, Layer, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Faults, TestApiServer, TestCluster, TestKube } from "../src/index.js"
import { request, watchLines } from "./support/drivers.js"
import { cm, cmList } from "./support/fixtures.js"

const InProcess = Layer.provideMerge(Faults.layer, TestCluster.layer)

describe("Faults (in-process)", () => {
  it.effect("failRequests answers matching requests with the status, `count` times", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const faults = yield* Faults.Faults
      yield* faults.failRequests({ code: 503, verbs: ["create"], resources: ["configmaps"], count: 2 })
      const first = yield* Effect.flip(cluster.create(cm("a") as any))
      assert.strictEqual(first.status.code, 503)
      assert.strictEqual(first.status.reason, "ServiceUnavailable")
      yield* Effect.flip(cluster.create(cm("a") as any))
      yield* cluster.create(cm("a") as any)
      yield* cluster.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" } })
    }).pipe(Effect.provide(InProcess)))

  it.effect("429 carries retryAfterSeconds", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const faults = yield* Faults.Faults
      yield* faults.failRequests({ code: 429, retryAfterSeconds: 7, verbs: ["list"] })
      const error = yield* Effect.flip(cluster.list(cmList("default")))
      assert.strictEqual(error.status.code, 429)
      assert.strictEqual(error.status.details?.retryAfterSeconds, 7)
    }).pipe(Effect.provide(InProcess)))

  it.effect("probabilistic faults are deterministic for a seed", () =>
    Effect.gen(function*() {
      const outcomes = (seed: number) =>
        Effect.gen(function*() {
          const cluster = yield* TestCluster.TestCluster
          const faults = yield* Faults.Faults
          yield* faults.failRequests({ code: 500, probability: 0.5 })
          const results: Array<boolean> = []
          for (let i = 0; i < 40; i++) {
            const result = yield* Effect.result(cluster.get({ apiVersion: "v1", kind: "Namespace", name: "default" }))
            results.push(result._tag === "Success")
          }
          return results
        }).pipe(Effect.provide(Layer.provideMerge(Faults.layer, TestCluster.layerWith({ seed }))))
      const a = yield* outcomes(42)
      const b = yield* outcomes(42)
      const c = yield* outcomes(7)
      assert.deepStrictEqual(a, b)
      assert.notDeepEqual(a, c)
      assert.isTrue(a.includes(true) && a.includes(false))
    }))

  it.effect("latency is driven by the Clock", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const faults = yield* Faults.Faults
      yield* faults.addLatency({ latency: "10 seconds", verbs: ["get"] })
      const fiber = yield* Effect.forkChild(cluster.get({ apiVersion: "v1", kind: "Namespace", name: "default" }))
      yield* TestClock.adjust("9 seconds")
      // v4: Fiber.poll is gone; pollUnsafe() is undefined while the fiber runs (was Option.none)
      assert.isTrue(fiber.pollUnsafe() === undefined)
      yield* TestClock.adjust("1 second")
      const ns = yield* Fiber.join(fiber)
      assert.strictEqual(ns.metadata.name, "default")
    }).pipe(Effect.provide(InProcess)))

  it.effect("expireNext makes the next list fail and the next watch send ERROR 410", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const faults = yield* Faults.Faults
      yield* faults.expireNext("list")
      assert.strictEqual((yield* Effect.flip(cluster.list(cmList()))).status.code, 410)
      yield* cluster.list(cmList())
      yield* faults.expireNext("watch")
      const events = yield* Stream.runCollect(cluster.watch(cmList()))
      assert.deepStrictEqual(events.map((e) => [e.type, (e.object as any).code]), [["ERROR", 410]])
    }).pipe(Effect.provide(InProcess)))

  it.effect("dropWatches ends open watches; compactNow makes old versions 410", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const faults = yield* Faults.Faults
      const a = yield* cluster.create(cm("a") as any)
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(cluster.watch({ ...cmList(), resourceVersion: a.metadata.resourceVersion! }))
      )
      yield* Effect.yieldNow
      yield* cluster.update({ ...a, data: { key: "2" } })
      yield* Effect.yieldNow
      assert.strictEqual(yield* faults.dropWatches, 1)
      assert.deepStrictEqual((yield* Fiber.join(fiber)).map((e) => e.type), ["MODIFIED"])
      yield* faults.compactNow
      const events = yield* Stream.runCollect(
        cluster.watch({ ...cmList(), resourceVersion: a.metadata.resourceVersion! })
      )
      assert.strictEqual(events[0]?.type, "ERROR")
    }).pipe(Effect.provide(InProcess)))
})

describe("Faults (HTTP)", () => {
  const Http = Layer.provideMerge(Faults.layer, TestApiServer.layerWithCluster())

  it.live("429 with Retry-After header; 401 without token", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const faults = yield* Faults.Faults
      const unauth = yield* Effect.promise(() => request(server, "GET", "/api/v1/namespaces", { token: null }))
      assert.strictEqual(unauth.status, 401)
      assert.strictEqual(JSON.parse(unauth.body).kind, "Status")
      yield* faults.failRequests({ code: 429, retryAfterSeconds: 3, resources: ["namespaces"], count: 1 })
      const limited = yield* Effect.promise(() => request(server, "GET", "/api/v1/namespaces"))
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.headers["retry-after"], "3")
      const fine = yield* Effect.promise(() => request(server, "GET", "/api/v1/namespaces"))
      assert.strictEqual(fine.status, 200)
    }).pipe(Effect.provide(Http)))

  it.live("watch events arrive one JSON line each, as they happen; a garbled line and a dropped connection", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const faults = yield* Faults.Faults
      const rv = yield* server.cluster.resourceVersion
      const result = yield* Effect.promise(() =>
        watchLines(server, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`, 10, () => {
          void (async () => {
            await request(server, "POST", "/api/v1/namespaces/default/configmaps", {
              body: JSON.stringify(cm("live")),
              contentType: "application/json"
            })
            await new Promise((r) => setTimeout(r, 50))
            Effect.runSync(faults.garbleWatches)
            await new Promise((r) => setTimeout(r, 50))
            Effect.runSync(faults.dropWatches)
          })()
        })
      )
      assert.strictEqual(JSON.parse(result.lines[0]!).type, "ADDED")
      assert.throws(() => JSON.parse(result.lines[1]!))
      assert.strictEqual(result.lines.length, 2)
      assert.notStrictEqual(result.ended, "count")
    }).pipe(Effect.provide(Http)))

  it.live("discovery: /version, /api, /apis (legacy and aggregated), /apis/<group>/<version>", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const get = (path: string, accept?: string) =>
        Effect.promise(() => request(server, "GET", path, accept === undefined ? {} : { accept }))
      assert.strictEqual(JSON.parse((yield* get("/version")).body).major, "1")
      assert.deepStrictEqual(JSON.parse((yield* get("/api")).body).versions, ["v1"])
      const groups = JSON.parse((yield* get("/apis")).body).groups.map((g: any) => g.name)
      assert.includeMembers(groups, ["apps", "coordination.k8s.io", "events.k8s.io", "apiextensions.k8s.io"])
      const aggregated = yield* get("/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
      assert.include(aggregated.headers["content-type"], "as=APIGroupDiscoveryList")
      assert.strictEqual(JSON.parse(aggregated.body).kind, "APIGroupDiscoveryList")
      const apps = JSON.parse((yield* get("/apis/apps/v1")).body)
      // as kube-apiserver 1.36 lists apps/v1
      assert.deepStrictEqual(apps.resources.map((r: any) => r.name), [
        "controllerrevisions",
        "daemonsets",
        "daemonsets/status",
        "deployments",
        "deployments/scale",
        "deployments/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status"
      ])
      assert.strictEqual((yield* get("/apis/nope/v1")).status, 404)
    }).pipe(Effect.provide(Http)))
})

describe("Faults: stalled and delayed watches (in-process, TestClock)", () => {
  const settle = TestKube.settle
  const Env = Layer.provideMerge(Faults.layer, TestKube.layerWithCluster({ bookmarkInterval: "1 second" }))

  /** Collects a KubeClient watch of ConfigMaps (names with event types), from now on. */
  const watchConfigMaps = (options: Omit<KubeClient.WatchOptions, "resourceVersion"> = {}) =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const list = yield* client.list(Resource.ConfigMap, { namespace: "default" })
      const seen: Array<string> = []
      yield* client.watch(Resource.ConfigMap, {
        namespace: "default",
        resourceVersion: list.resourceVersion,
        ...options
      })
        .pipe(
          Stream.runForEach((e) =>
            Effect.sync(() =>
              void seen.push(
                e._tag === "Bookmark" ? "Bookmark" : "object" in e ? `${e._tag}:${e.object.metadata?.name}` : e._tag
              )
            )
          ),
          Effect.forkScoped
        )
      yield* settle
      return seen
    })

  const create = (name: string) =>
    Effect.flatMap(
      KubeClient.KubeClient,
      (client) => client.create(Resource.ConfigMap, { metadata: { name }, data: { v: "1" } })
    )

  it.effect("stallWatches: nothing arrives for the duration, the connection stays open, then the held events in order", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const seen = yield* watchConfigMaps()
      yield* create("a")
      yield* settle
      assert.deepStrictEqual(seen, ["Added:a"])
      assert.strictEqual(yield* faults.stallWatches({ duration: "5 seconds" }), 1)
      yield* create("b")
      yield* create("c")
      yield* settle
      yield* TestClock.adjust("4999 millis")
      assert.deepStrictEqual(seen, ["Added:a"], "nothing during the stall")
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(seen, ["Added:a", "Added:b", "Added:c"])
      yield* create("d")
      yield* settle
      assert.deepStrictEqual(seen, ["Added:a", "Added:b", "Added:c", "Added:d"], "the same watch goes on")
    }).pipe(Effect.provide(Env)))

  it.effect("stallWatches holds bookmarks too (a silent connection), and only the matching watches", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const seen = yield* watchConfigMaps({ allowWatchBookmarks: true })
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(seen, ["Bookmark"])
      assert.strictEqual(yield* faults.stallWatches({ duration: "10 seconds", resources: ["secrets"] }), 0)
      assert.strictEqual(yield* faults.stallWatches({ duration: "10 seconds", resources: ["configmaps"] }), 1)
      for (let i = 0; i < 9; i++) yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(seen, ["Bookmark"], "no byte for 10 s")
      yield* TestClock.adjust("1 second")
      assert.isAtLeast(seen.length, 10, "the held bookmarks arrive when the stall ends")
    }).pipe(Effect.provide(Env)))

  it.effect("delayWatches: each event arrives `delay` after it happened, in order; removing the rule keeps the order", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const seen = yield* watchConfigMaps()
      const rule = yield* faults.delayWatches({ delay: "2 seconds", resources: ["configmaps"] })
      yield* create("a")
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* create("b")
      yield* settle
      assert.deepStrictEqual(seen, [])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(seen, ["Added:a"], "a arrives 2 s after it happened")
      yield* faults.removeRule(rule)
      yield* create("c") // not delayed any more, but not before b
      yield* settle
      assert.deepStrictEqual(seen, ["Added:a"])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(seen, ["Added:a", "Added:b", "Added:c"])
      yield* create("d")
      yield* settle
      assert.deepStrictEqual(seen, ["Added:a", "Added:b", "Added:c", "Added:d"])
    }).pipe(Effect.provide(Env)))

  it.effect("delayWatches applies to watches opened later, and to TestCluster's own watches", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const cluster = yield* TestCluster.TestCluster
      yield* faults.delayWatches({ delay: "3 seconds", namespaces: ["default"] })
      const seen = yield* watchConfigMaps()
      const raw: Array<string> = []
      const rv = yield* cluster.resourceVersion
      yield* cluster.watch({ ...cmList("default"), resourceVersion: rv }).pipe(
        Stream.runForEach((e) => Effect.sync(() => void raw.push(`${e.type}:${e.object.metadata.name}`))),
        Effect.forkScoped
      )
      yield* settle
      yield* create("a")
      yield* settle
      yield* TestClock.adjust("2999 millis")
      assert.deepStrictEqual([seen, raw], [[], []])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual([seen, raw], [["Added:a"], ["ADDED:a"]])
    }).pipe(Effect.provide(Env)))
})

describe("Faults: stalled and delayed watches (HTTP, wall clock)", () => {
  const Http = Layer.provideMerge(Faults.layer, TestApiServer.layerWithCluster())

  /** Watches ConfigMaps over HTTPS and records when each line arrived (ms since `start`). */
  const timedLines = (server: TestApiServer.TestApiServer.Service, rv: string, count: number, onOpen: () => void) =>
    Effect.promise(() => {
      const start = Date.now()
      return watchLines(server, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`, count, onOpen)
        .then((result) => ({ ...result, elapsed: Date.now() - start }))
    })

  const post = (server: TestApiServer.TestApiServer.Service, name: string) =>
    request(server, "POST", "/api/v1/namespaces/default/configmaps", {
      body: JSON.stringify(cm(name)),
      contentType: "application/json"
    })

  it.live("stallWatches over HTTP: the connection stays open and silent for the duration, then the held lines", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const faults = yield* Faults.Faults
      const rv = yield* server.cluster.resourceVersion
      const result = yield* timedLines(server, rv, 2, () => {
        void (async () => {
          assert.strictEqual(Effect.runSync(faults.stallWatches({ duration: "400 millis" })), 1)
          await post(server, "a")
          await post(server, "b")
        })()
      })
      assert.strictEqual(result.ended, "count")
      assert.deepStrictEqual(result.lines.map((l) => JSON.parse(l).object.metadata.name), ["a", "b"])
      assert.isAtLeast(result.elapsed, 380, "nothing before the stall ended")
    }).pipe(Effect.provide(Http)))

  it.live("delayWatches over HTTP: lines arrive late by the delay, in order", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const faults = yield* Faults.Faults
      const rv = yield* server.cluster.resourceVersion
      const rule = yield* faults.delayWatches({ delay: "300 millis", resources: ["configmaps"] })
      const result = yield* timedLines(server, rv, 2, () => {
        void (async () => {
          await post(server, "a")
          await post(server, "b")
        })()
      })
      yield* faults.removeRule(rule)
      assert.deepStrictEqual(result.lines.map((l) => JSON.parse(l).object.metadata.name), ["a", "b"])
      assert.isAtLeast(result.elapsed, 280)
    }).pipe(Effect.provide(Http)))
})
