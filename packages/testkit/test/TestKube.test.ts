/**
 * TestKube: kube's one KubeClient over the test server's request handler, in process.
 *
 * The scenarios: one script of requests (CRUD, conflicts, patches of every type, status, finalizers, lists, custom
 * resources, watches, faults) and what each answers. The script runs over both carriers of the same client — HTTPS
 * to TestApiServer and the in-process transport — and the two traces must be equal (the transport adds nothing and
 * loses nothing). Then what only the in-process transport can do: everything on the TestClock, including a
 * KubeController over the shared Cache.
 */
import { assert, describe, it } from "@effect/vitest"
import * as LeaderElection from "@reconcile/core/LeaderElection"
import * as Manager from "@reconcile/core/Manager"
import * as Cache from "@reconcile/kube/Cache"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as KubeController from "@reconcile/kube/KubeController"
import * as KubeError from "@reconcile/kube/KubeError"
import * as Resource from "@reconcile/kube/Resource"
import * as Undecodable from "@reconcile/kube/Undecodable"
import { Duration, Effect, Fiber, Layer, Result, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Faults, TestApiServer, TestCluster, TestKube } from "../src/index.js"

/** The Manager controllers run under: no endpoint, always the leader. */
const TestManager = Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader), Layer.orDie)

const WebApp = Resource.custom({
  group: "example.com",
  version: "v1",
  kind: "WebApp",
  plural: "webapps",
  scope: "Namespaced",
  spec: Schema.Struct({ image: Schema.String, replicas: Schema.optional(Schema.Int) }),
  status: Schema.Struct({ ready: Schema.optional(Schema.Int) })
})

const cm = (
  name: string,
  data: Record<string, string> = {},
  extra: Record<string, unknown> = {}
): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...extra },
  data
})

const deployment = (name: string): Resource.Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx:1" }] } }
  }
})

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const volatileKeys = new Set(["uid", "creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime"])

/** JSON without what differs between two fresh clusters (uids, wall-clock timestamps). */
const scrub = (u: unknown): unknown =>
  u === undefined ?
    undefined :
    JSON.parse(JSON.stringify(u, (key, value) =>
      volatileKeys.has(key) ? "<volatile>" : typeof value === "string" ? value.replace(uuid, "<uid>") : value))

const describeError = (e: unknown): unknown => {
  if (!KubeError.isKubeError(e)) return { defect: String(e) }
  switch (e._tag) {
    case "Transport":
      return { _tag: e._tag }
    case "Decode":
      return scrub({ _tag: e._tag, kind: e.kind, issue: e.issue, request: e.request })
    case "Encode":
      return { _tag: e._tag, issue: e.issue }
    default:
      return scrub({
        _tag: e._tag,
        status: e.status,
        request: e.request,
        causes: "causes" in e ? e.causes : undefined,
        message: e.message
      })
  }
}

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>, n: number) =>
  stream.pipe(
    Stream.take(n),
    Stream.runCollect,
    Effect.timeoutOrElse({
      duration: "5 seconds",
      orElse: () => Effect.fail(new Error(`fewer than ${n} watch events`))
    })
  )

const eventView = (e: KubeClient.WatchEvent<any>): unknown => {
  switch (e._tag) {
    case "Added":
    case "Modified":
    case "Deleted":
      return scrub({ _tag: e._tag, name: e.object.metadata?.name, rv: e.object.metadata?.resourceVersion })
    case "Bookmark":
      return { _tag: e._tag }
    case "Error":
      return { _tag: e._tag, error: e.error._tag, code: e.status.code }
    case "Undecodable":
      return { _tag: e._tag, issue: e.error.issue }
  }
}

/** Runs the same requests in order and records what each answered. */
const script = Effect.gen(function*() {
  const client = yield* KubeClient.KubeClient
  const cluster = yield* TestCluster.TestCluster
  const faults = yield* Faults.Faults
  const trace: Array<readonly [string, unknown]> = []
  const step = <A, E>(label: string, effect: Effect.Effect<A, E>, view: (a: A) => unknown = scrub) =>
    Effect.tap(Effect.result(effect), (result) =>
      Effect.sync(() =>
        trace.push([
          label,
          Result.isSuccess(result) ? { ok: view(result.success) } : { error: describeError(result.failure) }
        ])
      ))

  // CRUD and conflicts
  yield* step("create", client.create(Resource.ConfigMap, cm("a", { x: "1" }, { labels: { app: "web" } })))
  yield* step("create existing", client.create(Resource.ConfigMap, cm("a")))
  yield* step("create invalid name", client.create(Resource.ConfigMap, cm("Bad_Name")))
  yield* step("create in a missing namespace", client.create(Resource.ConfigMap, cm("b", {}, { namespace: "nope" })))
  yield* step("create with options.namespace", client.create(Resource.ConfigMap, cm("b"), { namespace: "kube-public" }))
  yield* step("create a namespace", client.create(Resource.Namespace, { metadata: { name: "team" } }))
  yield* step("get", client.get(Resource.ConfigMap, "a"))
  yield* step("get in another namespace", client.get(Resource.ConfigMap, "b", { namespace: "kube-public" }))
  yield* step("get missing", client.get(Resource.ConfigMap, "missing"))
  const a = yield* client.get(Resource.ConfigMap, "a")
  yield* step("replace", client.replace(Resource.ConfigMap, { ...a, data: { x: "2" } }))
  yield* step("replace stale", client.replace(Resource.ConfigMap, { ...a, data: { x: "3" } }))
  yield* step("replace without a name", client.replace(Resource.ConfigMap, cm("")))
  yield* step("replace missing", client.replace(Resource.ConfigMap, cm("missing")))
  yield* step("dry run", client.create(Resource.ConfigMap, cm("dry"), { dryRun: true }))

  // patches
  yield* step("merge patch", client.patch(Resource.ConfigMap, "a", { data: { y: "1" } }, { type: "merge" }))
  yield* step(
    "json patch with a failing test",
    client.patch(Resource.ConfigMap, "a", [{ op: "test", path: "/data/x", value: "nope" }], { type: "json" })
  )
  yield* step(
    "json patch",
    client.patch(Resource.ConfigMap, "a", [{ op: "test", path: "/data/x", value: "2" }, {
      op: "add",
      path: "/data/z",
      value: "1"
    }], { type: "json" })
  )
  yield* step("strategic patch", client.patch(Resource.ConfigMap, "a", { data: { s: "1" } }, { type: "strategic" }))
  yield* step("patch missing", client.patch(Resource.ConfigMap, "missing", { data: {} }, { type: "merge" }))
  const applied = (value: string) => cm("applied", { k: value })
  yield* step(
    "apply creates",
    client.patch(Resource.ConfigMap, "applied", applied("1"), { type: "apply", fieldManager: "m1" })
  )
  yield* step(
    "apply same value, other manager",
    client.patch(Resource.ConfigMap, "applied", applied("1"), { type: "apply", fieldManager: "m2" })
  )
  yield* step(
    "apply conflict",
    client.patch(Resource.ConfigMap, "applied", applied("2"), { type: "apply", fieldManager: "m3" })
  )
  yield* step(
    "apply force",
    client.patch(Resource.ConfigMap, "applied", applied("2"), { type: "apply", fieldManager: "m3", force: true })
  )

  // status subresource
  yield* step("create deployment", client.create(Resource.Deployment, deployment("web")))
  const web = yield* client.get(Resource.Deployment, "web")
  yield* step(
    "replaceStatus changes only status",
    client.replaceStatus(Resource.Deployment, { ...web, spec: { ...web.spec!, replicas: 5 }, status: { replicas: 3 } })
  )
  yield* step(
    "patchStatus",
    client.patchStatus(Resource.Deployment, "web", { status: { readyReplicas: 2 } }, { type: "merge" })
  )
  yield* step("replaceStatus without the subresource", client.replaceStatus(Resource.ConfigMap, { ...a, data: {} }))

  // delete
  yield* step(
    "create with a finalizer",
    client.create(Resource.ConfigMap, cm("fin", {}, { finalizers: ["example.com/f"] }))
  )
  yield* step("delete held by a finalizer", client.delete(Resource.ConfigMap, "fin"))
  yield* step(
    "finalizer removed",
    client.patch(Resource.ConfigMap, "fin", { metadata: { finalizers: null } }, { type: "merge" })
  )
  yield* step("gone after the finalizer", client.get(Resource.ConfigMap, "fin"))
  yield* step("delete with a wrong uid", client.delete(Resource.ConfigMap, "a", { preconditions: { uid: "wrong" } }))
  yield* step("delete", client.delete(Resource.ConfigMap, "a", { propagationPolicy: "Foreground" }))
  yield* step("delete again", client.delete(Resource.ConfigMap, "a"))
  yield* client.create(Resource.ConfigMap, cm("bg"))
  yield* step("delete at once", client.delete(Resource.ConfigMap, "bg"))

  // lists
  for (const n of ["l1", "l2", "l3"]) yield* client.create(Resource.ConfigMap, cm(n, {}, { labels: { tier: "x" } }))
  const names = (list: KubeClient.ObjectList<Resource.ConfigMap>) =>
    scrub({
      names: list.items.map((i) => i.metadata?.name),
      continue: list.continue !== undefined,
      rv: list.resourceVersion
    })
  yield* step(
    "list by label",
    client.list(Resource.ConfigMap, { namespace: "default", labelSelector: "tier=x" }),
    names
  )
  const page = yield* client.list(Resource.ConfigMap, { namespace: "default", labelSelector: "tier=x", limit: 2 })
  yield* step("first page", Effect.succeed(page), names)
  yield* step(
    "next page",
    client.list(Resource.ConfigMap, {
      namespace: "default",
      labelSelector: "tier=x",
      limit: 2,
      continue: page.continue
    }),
    names
  )
  yield* step("listAll", client.listAll(Resource.ConfigMap, { labelSelector: "tier=x", limit: 1 }), names)
  yield* step("all namespaces", client.list(Resource.ConfigMap), names)
  yield* step("bad selector", client.list(Resource.ConfigMap, { labelSelector: "tier in" }), names)

  // custom resources: decode and undecodable objects
  yield* step("create CRD", client.create(Resource.CustomResourceDefinition, Resource.crdManifest(WebApp)), () => "ok")
  yield* step(
    "create custom",
    client.create(WebApp, {
      apiVersion: "example.com/v1",
      kind: "WebApp",
      metadata: { name: "good" },
      spec: { image: "nginx" }
    })
  )
  // The server validates custom resources against the CRD's schema, so an object the decoder refuses is one stored
  // while the schema was looser (objects are not revalidated when a CRD changes, as on a real cluster).
  const strict = yield* cluster.get({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    name: "webapps.example.com"
  })
  const loose = structuredClone(strict) as any
  loose.spec.versions[0].schema.openAPIV3Schema = { type: "object", "x-kubernetes-preserve-unknown-fields": true }
  const loosened = yield* cluster.update(loose)
  yield* cluster.create({
    apiVersion: "example.com/v1",
    kind: "WebApp",
    metadata: { name: "bad", namespace: "default" },
    spec: { image: 5 }
  })
  yield* cluster.update({ ...loosened, spec: strict.spec })
  yield* step(
    "list with an undecodable item",
    client.list(WebApp, { namespace: "default" }),
    (l) => scrub({ items: l.items.map((i) => i.metadata.name), undecodable: l.undecodable.map((e) => e.issue) })
  )
  yield* step("get undecodable", client.get(WebApp, "bad"))
  yield* step(
    "strategic patch of a custom resource",
    client.patch(WebApp, "good", { spec: { replicas: 2 } }, { type: "strategic" })
  )
  yield* step(
    "unknown resource",
    client.get(
      Resource.make({ group: "nope.io", version: "v1", kind: "Nope", plural: "nopes", scope: "Namespaced" }),
      "x"
    )
  )

  // watches
  const from = (yield* client.list(Resource.ConfigMap, { namespace: "default" })).resourceVersion
  const w = yield* client.create(Resource.ConfigMap, cm("w"))
  yield* client.replace(Resource.ConfigMap, { ...w, data: { v: "2" } })
  yield* client.delete(Resource.ConfigMap, "w")
  yield* step(
    "watch from a resourceVersion",
    collect(client.watch(Resource.ConfigMap, { namespace: "default", resourceVersion: from }), 3),
    (es) => es.map(eventView)
  )
  yield* step(
    "watch with initial events",
    collect(client.watch(WebApp, { namespace: "default" }), 2),
    (es) => es.map(eventView)
  )
  yield* step(
    "watch by label",
    collect(client.watch(Resource.ConfigMap, { labelSelector: "tier=x" }), 3),
    (es) => es.map(eventView)
  )
  yield* faults.compactNow
  yield* step(
    "watch from a compacted version",
    collect(client.watch(Resource.ConfigMap, { resourceVersion: from }), 1),
    (es) => es.map(eventView)
  )

  // faults
  yield* faults.failRequests({ verbs: ["get"], resources: ["configmaps"], code: 500, count: 1 })
  yield* step("get after one 500 (retried)", client.get(Resource.ConfigMap, "applied"), () => "ok")
  yield* faults.failRequests({ verbs: ["create"], resources: ["configmaps"], code: 500, count: 1 })
  yield* step("create after one 500 (not retried)", client.create(Resource.ConfigMap, cm("f1")))
  yield* faults.failRequests({ verbs: ["create"], resources: ["configmaps"], code: 429, count: 1 })
  yield* step("create after one 429 (retried)", client.create(Resource.ConfigMap, cm("f2")), () => "ok")
  yield* faults.failRequests({ verbs: ["get"], code: 403, count: 1, message: "denied" })
  yield* step("403", client.get(Resource.ConfigMap, "applied"))
  yield* faults.expireNext("list")
  yield* step("expired list", client.list(Resource.ConfigMap), names)
  yield* faults.expireNext("watch")
  yield* step("expired watch", collect(client.watch(Resource.ConfigMap), 1), (es) => es.map(eventView))
  yield* faults.failRequests({ verbs: ["watch"], code: 503, count: 1 })
  yield* step("watch refused (not retried)", collect(client.watch(Resource.ConfigMap), 1), (es) => es.map(eventView))
  const now = (yield* client.list(Resource.ConfigMap)).resourceVersion
  yield* faults.dropNextWatches(1)
  yield* step(
    "dropped watch",
    Stream.runCollect(client.watch(Resource.ConfigMap, { resourceVersion: now })),
    () => "ended"
  )
  return trace
})

const fast = { times: 3, base: "1 millis", max: "5 millis" } as const

const overHttp = Layer.mergeAll(
  KubeClient.layer.pipe(
    Layer.provide(Layer.unwrap(
      Effect.map(TestApiServer.TestApiServer, (server) => Kube.layerFromFile(server.kubeconfigPath, { retry: fast }))
    ))
  ),
  Faults.layer
).pipe(Layer.provideMerge(TestApiServer.layerWithCluster({ controllers: false }))) // bare, as the in-process one

const inProcess = Faults.layer.pipe(Layer.provideMerge(TestKube.layerWithCluster({ retry: fast })))

describe("TestKube: the one client in process", () => {
  it.live("the scenarios answer as they do over HTTPS (one client, two transports)", () =>
    Effect.gen(function*() {
      const http = yield* Effect.provide(script, overHttp)
      const local = yield* Effect.provide(script, inProcess)
      assert.strictEqual(local.length, http.length)
      for (let i = 0; i < http.length; i++) {
        assert.deepStrictEqual(local[i], http[i], `step ${i}: ${http[i]![0]}`)
      }
      const byLabel = Object.fromEntries(local) as Record<string, any>
      // spot checks that the trace says what the steps are named for
      assert.strictEqual(byLabel["create existing"].error._tag, "AlreadyExists")
      assert.strictEqual(byLabel["replace stale"].error._tag, "Conflict")
      assert.strictEqual(byLabel["create invalid name"].error._tag, "Invalid")
      assert.strictEqual(byLabel["json patch with a failing test"].error._tag, "Invalid")
      assert.strictEqual(byLabel["apply conflict"].error._tag, "Conflict")
      assert.include(JSON.stringify(byLabel["apply conflict"].error.causes), "FieldManagerConflict")
      assert.strictEqual(byLabel["apply force"].ok.data.k, "2")
      assert.strictEqual(byLabel["replaceStatus changes only status"].ok.spec.replicas, 1)
      assert.strictEqual(byLabel["replaceStatus changes only status"].ok.status.replicas, 3)
      assert.strictEqual(byLabel["replaceStatus without the subresource"].error._tag, "NotFound")
      assert.strictEqual(byLabel["delete held by a finalizer"].ok._tag, "Pending")
      assert.strictEqual(byLabel["gone after the finalizer"].error._tag, "NotFound")
      // a Foreground delete answers the owner as marked (upstream); the embedded collector has removed it already
      assert.strictEqual(byLabel["delete"].ok._tag, "Pending")
      assert.deepStrictEqual(byLabel["delete"].ok.object.metadata.finalizers, ["foregroundDeletion"])
      assert.strictEqual(byLabel["delete again"].error._tag, "NotFound")
      // removed at once: a success Status, without the empty group of the core API (omitted, as upstream)
      assert.strictEqual(byLabel["delete at once"].ok._tag, "Deleted")
      assert.deepStrictEqual(byLabel["delete at once"].ok.status.details, {
        name: "bg",
        kind: "configmaps",
        uid: "<volatile>"
      })
      assert.strictEqual(byLabel["dry run"].ok.metadata.name, "dry")
      assert.deepStrictEqual(byLabel["next page"].ok.names, ["l3"])
      assert.deepStrictEqual(byLabel["listAll"].ok.names, ["l1", "l2", "l3"])
      assert.deepStrictEqual(byLabel["list with an undecodable item"].ok.items, ["good"])
      assert.strictEqual(byLabel["list with an undecodable item"].ok.undecodable.length, 1)
      assert.strictEqual(byLabel["get undecodable"].error._tag, "Decode")
      assert.strictEqual(byLabel["strategic patch of a custom resource"].error._tag, "UnexpectedStatus")
      // a path the server does not serve: empty details, as kube-apiserver's path errors
      assert.deepStrictEqual(byLabel["unknown resource"].error.status.details, {})
      assert.deepStrictEqual(
        byLabel["watch from a resourceVersion"].ok.map((e: any) => e._tag),
        ["Added", "Modified", "Deleted"]
      )
      assert.deepStrictEqual(byLabel["watch with initial events"].ok.map((e: any) => e._tag), ["Undecodable", "Added"])
      const gone = [{ _tag: "Error", error: "Gone", code: 410 }]
      assert.deepStrictEqual(byLabel["watch from a compacted version"].ok, gone)
      assert.strictEqual(byLabel["get after one 500 (retried)"].ok, "ok")
      assert.strictEqual(byLabel["create after one 500 (not retried)"].error._tag, "ServerError")
      assert.strictEqual(byLabel["403"].error._tag, "Forbidden")
      assert.strictEqual(byLabel["expired list"].error._tag, "Gone")
      assert.deepStrictEqual(byLabel["expired watch"].ok, gone)
      assert.strictEqual(byLabel["watch refused (not retried)"].error._tag, "ServerError")
      assert.deepStrictEqual(byLabel["dropped watch"], { error: { _tag: "Transport" } })
    }), 30_000)
})

const TestEnv = Faults.layer.pipe(Layer.provideMerge(TestKube.layerWithCluster({ bookmarkInterval: "10 seconds" })))

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up

describe("TestKube on the TestClock", () => {
  it.effect("watches: bookmarks every bookmarkInterval and before the timeout, the server timeout ends the stream", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const fiber = yield* client.watch(Resource.ConfigMap, { allowWatchBookmarks: true, timeoutSeconds: 25 }).pipe(
        Stream.runCollect,
        Effect.forkChild
      )
      // the watch must be open (its bookmark timer started) before the clock moves
      yield* settle
      yield* TestClock.adjust("9 seconds")
      yield* client.create(Resource.ConfigMap, cm("a"))
      yield* TestClock.adjust("16 seconds")
      const events = yield* Fiber.join(fiber)
      // at 10 s and 20 s, and 2 s before the timeout (23 s), as kube-apiserver
      assert.deepStrictEqual(events.map((e) => e._tag), ["Added", "Bookmark", "Bookmark", "Bookmark"])
      const bookmark = events[3]!
      assert(bookmark._tag === "Bookmark")
      const rv = (yield* client.get(Resource.ConfigMap, "a")).metadata?.resourceVersion
      assert.strictEqual(bookmark.resourceVersion, rv, "bookmarks carry the current resourceVersion")
    }).pipe(Effect.provide(TestEnv)))

  it.effect("faults: dropped and garbled watches, latency past the timeout, retries after backoff", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const faults = yield* Faults.Faults
      const watching = yield* client.watch(Resource.ConfigMap).pipe(Stream.runCollect, Effect.result, Effect.forkChild)
      yield* settle
      assert.strictEqual(yield* faults.garbleWatches, 1)
      assert.strictEqual(yield* faults.dropWatches, 1)
      const dropped = yield* Fiber.join(watching)
      assert(Result.isFailure(dropped) && dropped.failure._tag === "Transport", "a dropped watch fails with Transport")

      const garbled = yield* client.watch(Resource.ConfigMap).pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
      yield* settle
      yield* faults.garbleWatches
      const [event] = yield* Fiber.join(garbled)
      assert(event?._tag === "Undecodable", "a garbled line is an Undecodable element")

      const slow = yield* faults.addLatency({ verbs: ["create"], latency: "45 seconds" })
      const timedOut = yield* client.create(Resource.ConfigMap, cm("slow")).pipe(Effect.result, Effect.forkChild)
      yield* TestClock.adjust("30 seconds")
      const timeout = yield* Fiber.join(timedOut)
      // a create is not idempotent: a timeout is not retried
      assert(Result.isFailure(timeout) && timeout.failure._tag === "Timeout")
      yield* faults.removeRule(slow)

      yield* faults.failRequests({ verbs: ["create"], code: 503, count: 2 })
      const created = yield* client.create(Resource.ConfigMap, cm("after-503")).pipe(Effect.forkChild)
      yield* TestClock.adjust("199 millis")
      // v4: Fiber.unsafePoll is pollUnsafe and answers undefined (not null) while the fiber runs
      assert.isUndefined(created.pollUnsafe(), "the first retry waits 200 ms")
      yield* TestClock.adjust("1 millis")
      yield* TestClock.adjust("400 millis")
      const object = yield* Fiber.join(created)
      assert.strictEqual(object.metadata?.name, "after-503")
    }).pipe(Effect.provide(TestEnv)))

  it.effect("a KubeController over Cache.layer reconciles on the TestClock, and resumes after a dropped watch", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const faults = yield* Faults.Faults
      const seen: Array<string> = []
      yield* client.create(Resource.ConfigMap, cm("one", { v: "1" }))
      yield* KubeController.make({
        name: "testkube-configmaps",
        for: Resource.ConfigMap,
        selection: { namespace: "default" },
        reconcile: (object: Resource.ConfigMap) =>
          Effect.sync(() => void seen.push(`${object.metadata?.name}=${object.data?.v}`)),
        onUndecodable: Undecodable.terminal
      }).pipe(KubeController.start, Effect.provide(TestManager))
      const cache = yield* Cache.Cache
      yield* cache.waitForSync
      yield* settle
      assert.deepStrictEqual(seen, ["one=1"])
      yield* client.patch(Resource.ConfigMap, "one", { data: { v: "2" } }, { type: "merge" })
      yield* client.create(Resource.ConfigMap, cm("two", { v: "1" }))
      yield* settle
      assert.deepStrictEqual(seen, ["one=1", "one=2", "two=1"])

      yield* faults.dropWatches
      yield* client.patch(Resource.ConfigMap, "two", { data: { v: "2" } }, { type: "merge" })
      yield* TestClock.adjust(Duration.seconds(2))
      assert.deepStrictEqual(
        seen,
        ["one=1", "one=2", "two=1", "two=2"],
        "the change made while the watch was down arrives"
      )
      const informer = yield* cache.informer(Resource.ConfigMap, { namespace: "default" })
      const stored = informer.store.list()
      assert.deepStrictEqual(stored.map((o) => o.data?.v).sort(), ["2", "2"])
    }).pipe(Effect.provide(Cache.layer().pipe(Layer.provideMerge(TestEnv)))))
})
