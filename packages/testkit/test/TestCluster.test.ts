import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import { LabelSelector, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import { cm, cmList, deployment, ref } from "./support/fixtures.js"

describe("TestCluster (in-process, TestClock)", () => {
  it.effect("timestamps come from the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2030-01-02T03:04:05Z"))
      const cluster = yield* TestCluster.make()
      const a = yield* cluster.create(cm("a") as KubeObject)
      assert.strictEqual(a.metadata.creationTimestamp, "2030-01-02T03:04:05Z")
      yield* TestClock.adjust("1 hour")
      yield* cluster.update({ ...a, metadata: { ...a.metadata, finalizers: ["example.com/x"] } })
      const deleting = yield* cluster.delete(ref(a))
      assert.isFalse(deleting.deleted)
      assert.strictEqual(deleting.object.metadata.deletionTimestamp, "2030-01-02T04:04:05Z")
    }))

  it.effect(
    "a watch ends after timeoutSeconds and sends bookmarks when allowed: every bookmarkInterval and 2 s before the " +
      "timeout (kube-apiserver)",
    () =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.make()
        const rv = yield* cluster.resourceVersion
        const at: Array<string> = []
        const fiber = yield* Effect.forkChild(Stream.runCollect(
          cluster.watch({
            ...cmList(),
            resourceVersion: rv,
            timeoutSeconds: 25,
            allowWatchBookmarks: true,
            bookmarkInterval: "10 seconds"
          }).pipe(Stream.tap((e) => Effect.map(Clock.currentTimeMillis, (now) => void at.push(`${e.type}@${now}`))))
        ))
        yield* TestClock.adjust("25 seconds")
        const events = yield* Fiber.join(fiber)
        assert.deepStrictEqual(at, ["BOOKMARK@10000", "BOOKMARK@20000", "BOOKMARK@23000"])
        assert.strictEqual(events[0]!.object.metadata.resourceVersion, rv)
      })
  )

  it.effect("a watch from a resourceVersion the server has not reached starts and stays silent (no older bookmark)", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const ahead = String(Number(yield* cluster.resourceVersion) + 2)
      const fiber = yield* Effect.forkChild(Stream.runCollect(cluster.watch({
        ...cmList(),
        resourceVersion: ahead,
        timeoutSeconds: 25,
        allowWatchBookmarks: true,
        bookmarkInterval: "5 seconds"
      })))
      yield* TestClock.adjust("6 seconds")
      yield* cluster.create(cm("a") as KubeObject) // ahead - 1: not delivered
      yield* TestClock.adjust("5 seconds") // no bookmark at 10 s: the server is still behind
      yield* cluster.create(cm("b") as KubeObject) // ahead: not delivered either (a watch gets what comes after)
      yield* cluster.create(cm("c") as KubeObject) // ahead + 1: delivered
      yield* TestClock.adjust("14 seconds")
      const events = yield* Fiber.join(fiber)
      const next = String(Number(ahead) + 1)
      assert.deepStrictEqual(
        events.map((e) => `${e.type}:${e.object.metadata.name ?? ""}@${e.object.metadata.resourceVersion}`),
        [`ADDED:c@${next}`, `BOOKMARK:@${next}`, `BOOKMARK:@${next}`, `BOOKMARK:@${next}`]
      )
    }))

  it.effect(
    "a list or watch-list from a resourceVersion not reached waits 3 s for it, then 504 Too large resource version",
    () =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.make()
        const current = Number(yield* cluster.resourceVersion)
        const ahead = String(current + 1)
        // a write within the wait: served
        const waiting = yield* Effect.forkChild(cluster.list({ ...cmList(), resourceVersion: ahead }))
        yield* TestClock.adjust("1 second")
        yield* cluster.create(cm("a") as KubeObject)
        yield* TestClock.adjust("100 millis")
        const page = yield* Fiber.join(waiting)
        assert.strictEqual(page.metadata.resourceVersion, ahead)
        // nothing within the wait: 504 with cause ResourceVersionTooLarge and retryAfterSeconds 1
        const further = String(current + 5)
        const failing = yield* Effect.forkChild(Effect.flip(cluster.list({ ...cmList(), resourceVersion: further })))
        yield* TestClock.adjust("2999 millis")
        assert.isUndefined(failing.pollUnsafe(), "still waiting before 3 s")
        yield* TestClock.adjust("1 millis")
        const error = yield* Fiber.join(failing)
        assert.strictEqual(error.status.code, 504)
        assert.strictEqual(error.status.reason, "Timeout")
        assert.strictEqual(error.status.message, `Timeout: Too large resource version: ${further}, current: ${ahead}`)
        assert.deepStrictEqual(error.status.details, {
          causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
          retryAfterSeconds: 1
        })
        // a paginated list is served by etcd on kube-apiserver: at once
        const paged = yield* Effect.flip(cluster.list({ ...cmList(), resourceVersion: further, limit: 1 }))
        assert.strictEqual(paged.status.code, 504)
        // a watch-list gets the same answer as an ERROR event
        const watchList = yield* Effect.forkChild(Stream.runCollect(cluster.watch({
          ...cmList(),
          resourceVersion: further,
          sendInitialEvents: true,
          allowWatchBookmarks: true
        })))
        yield* TestClock.adjust("3 seconds")
        const [event] = yield* Fiber.join(watchList)
        assert.strictEqual(event?.type, "ERROR")
        assert.strictEqual((event?.object as unknown as { code: number }).code, 504)
      })
  )

  it.effect("sendInitialEvents ends the initial ADDED events with an initial-events-end bookmark", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      yield* cluster.create(cm("a") as KubeObject)
      const events = yield* Stream.runCollect(
        cluster.watch({ ...cmList("default"), sendInitialEvents: true, allowWatchBookmarks: true }).pipe(Stream.take(2))
      )
      assert.deepStrictEqual(events.map((e) => e.type), ["ADDED", "BOOKMARK"])
      assert.strictEqual(events[1]!.object.metadata.annotations?.["k8s.io/initial-events-end"], "true")
    }))

  it.effect("the history is bounded: old versions become 410 by themselves", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make({ historySize: 3 })
      const a = yield* cluster.create(cm("a") as KubeObject)
      for (let i = 0; i < 4; i++) yield* cluster.update({ ...(yield* cluster.get(ref(a))), data: { i: String(i) } })
      const events = yield* Stream.runCollect(
        cluster.watch({ ...cmList(), resourceVersion: a.metadata.resourceVersion! })
      )
      assert.strictEqual(events[0]!.type, "ERROR")
      const page = yield* cluster.list({
        ...cmList(),
        resourceVersion: a.metadata.resourceVersion!,
        resourceVersionMatch: "Exact"
      })
        .pipe(Effect.flip)
      assert.strictEqual(page.status.code, 410)
    }))

  it.effect("server-side apply keeps managedFields per manager and operation", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const d = yield* cluster.apply(deployment("web", 2) as KubeObject, { fieldManager: "operator" })
      const scaled = yield* cluster.patch(ref(d), { type: "merge", patch: { spec: { replicas: 4 } } }, {
        fieldManager: "hpa"
      })
      const managers = scaled.metadata.managedFields!.map((m) => `${m.manager}/${m.operation}`)
      assert.deepStrictEqual(managers, ["operator/Apply", "hpa/Update"])
      const hpa = scaled.metadata.managedFields!.find((m) => m.manager === "hpa")!
      assert.deepStrictEqual(hpa.fieldsV1, { "f:spec": { "f:replicas": {} } })
      const conflict = yield* Effect.flip(
        cluster.apply(deployment("web", 2) as KubeObject, { fieldManager: "operator" })
      )
      assert.strictEqual(
        conflict.status.message,
        "Apply failed with 1 conflict: conflict with \"hpa\" using apps/v1: .spec.replicas"
      )
    }))

  it.effect("layer: a fresh cluster per Effect.provide; a nested provide shares the outer one (effect 4)", () =>
    Effect.gen(function*() {
      const createAndCount = Effect.gen(function*() {
        const cluster = yield* TestCluster.TestCluster
        yield* cluster.create(cm("a") as KubeObject)
        return (yield* cluster.list(cmList())).items.length
      })
      assert.strictEqual(yield* createAndCount.pipe(Effect.provide(TestCluster.layer)), 1)
      assert.strictEqual(yield* createAndCount.pipe(Effect.provide(TestCluster.layer)), 1)
      const shared = yield* Effect.gen(function*() {
        const outer = yield* TestCluster.TestCluster
        return outer === (yield* TestCluster.TestCluster.pipe(Effect.provide(TestCluster.layer)))
      }).pipe(Effect.provide(TestCluster.layer))
      assert.isTrue(shared)
    }))

  it.effect("Secret stringData is folded into base64 data", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const s: any = yield* cluster.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s", namespace: "default" },
        stringData: { pw: "hunter2" }
      })
      assert.deepStrictEqual(s.data, { pw: Buffer.from("hunter2").toString("base64") })
      assert.isUndefined(s.stringData)
      assert.strictEqual(s.type, "Opaque")
    }))
})

describe("LabelSelector", () => {
  it("parses and matches every operator", () => {
    const m = (sel: string, labels: Record<string, string>) =>
      LabelSelector.matches(Result.getOrThrow(LabelSelector.parse(sel)), labels)
    assert.isTrue(m("", {}))
    assert.isTrue(m("a=1,b!=2", { a: "1", b: "3" }))
    assert.isTrue(m("a in (1, 2),!c", { a: "2" }))
    assert.isFalse(m("a notin (1,2)", { a: "1" }))
    assert.isTrue(m("a notin (1,2)", {}))
    assert.isTrue(m("example.com/a", { "example.com/a": "" }))
    assert.isTrue(m("n>3,n<5", { n: "4" }))
    // as labels.Parse: `()` is the set of the empty value
    assert.isTrue(m("a in ()", { a: "" }))
    for (const bad of ["a in", "a in (", "=x", "a=b=c", "a,", "a in (b c)"]) {
      assert.isTrue(Result.isFailure(LabelSelector.parse(bad)), bad)
    }
  })
})
