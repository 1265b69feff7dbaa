/**
 * KubeClient against TestApiServer over real HTTPS, through client-node's auth and the platform HttpClient.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Faults } from "@reconcile/testkit"
import { Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import { countRequests, eventually, kubeLayer, makeEnv, onRealCluster, waitServed } from "./support/env.js"
import { looseCrdManifest, WebApp } from "./support/fixtures.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    // effect 4's Cause is a flat list of reasons: one, a Fail (what effect 3's `cause._tag === "Fail"` checked)
    assert(Exit.isFailure(exit) && exit.cause.reasons.length === 1, `expected a failure, got ${String(exit)}`)
    const error = Exit.findErrorOption(exit)
    assert(Option.isSome(error), `expected a failure, got ${String(exit)}`)
    return error.value
  })

let counter = 0
const freshNamespace = Effect.gen(function*() {
  const name = `ns-${++counter}`
  yield* KubeClient.create(Resource.Namespace, { metadata: { name } })
  return name
})

const cm = (
  name: string,
  data: Record<string, string> = { a: "1" },
  labels?: Record<string, string>
): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(labels !== undefined ? { labels } : {}) },
  data
})

const deployment = (name: string, replicas = 1): Resource.Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx:1" }] } }
  }
})

describe("parseWatchStream (unit)", () => {
  const lines = [
    JSON.stringify({
      type: "ADDED",
      object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ä-1" }, data: { k: "ü€" } }
    }),
    "{not json",
    JSON.stringify({ type: "BOOKMARK", object: { kind: "ConfigMap", metadata: { resourceVersion: "42" } } }),
    JSON.stringify({ type: "MODIFIED", object: { kind: "Secret", metadata: { name: "wrong-kind" } } }),
    JSON.stringify({ type: "DELETED", object: { kind: "ConfigMap", metadata: { name: "ä-1" } } }),
    JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old" } })
  ]
  const bytes = new TextEncoder().encode(lines.join("\n") + "\n")
  const tags = ["Added", "Undecodable", "Bookmark", "Undecodable", "Deleted", "Error"]

  it.effect.prop(
    "chunks may split lines and UTF-8 characters anywhere: the same events come out",
    // FastCheck.uniqueArray(FastCheck.integer({ min: 1, max }), { maxLength: 40 }) as a Schema arbitrary
    [
      Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: bytes.length - 1 }))).check(
        Schema.isMaxLength(40),
        Schema.isUnique()
      )
    ],
    ([cuts]) =>
      Effect.gen(function*() {
        const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length]
        const chunks = points.slice(1).map((end, i) => bytes.slice(points[i]!, end))
        // effect 4's runCollect gives an Array (no Chunk)
        const events = yield* Stream.runCollect(
          KubeClient.parseWatchStream(Resource.ConfigMap, Stream.fromIterable(chunks))
        )
        assert.deepStrictEqual(events.map((e) => e._tag), tags)
        const added = events[0]!
        assert(added._tag === "Added")
        assert.strictEqual(added.object.data?.k, "ü€")
        const bookmark = events[2]!
        assert(bookmark._tag === "Bookmark" && bookmark.resourceVersion === "42")
        const error = events[5]!
        assert(error._tag === "Error")
        assert.strictEqual(error.error._tag, "Gone")
      })
  )
})

layer(TestLayer)("KubeClient against TestApiServer", (it) => {
  it.effect("create, get, list (labels), replace; the context namespace is the default", () =>
    Effect.gen(function*() {
      const created = yield* KubeClient.create(Resource.ConfigMap, cm("first", { a: "1" }, { app: "web" }))
      assert.strictEqual(created.metadata?.namespace, "default")
      assert.isString(created.metadata?.uid)
      assert.isString(created.metadata?.creationTimestamp)
      yield* KubeClient.create(Resource.ConfigMap, cm("second", { a: "2" }, { app: "db" }))
      const read = yield* KubeClient.get(Resource.ConfigMap, "first")
      assert.deepStrictEqual(read.data, { a: "1" })
      assert.strictEqual(read.kind, "ConfigMap")
      const web = yield* KubeClient.list(Resource.ConfigMap, { namespace: "default", labelSelector: "app=web" })
      assert.deepStrictEqual(web.items.map((i) => i.metadata?.name), ["first"])
      assert.strictEqual(web.items[0]!.apiVersion, "v1")
      assert.isNotEmpty(web.resourceVersion)
      const replaced = yield* KubeClient.replace(Resource.ConfigMap, { ...read, data: { a: "changed" } })
      assert.deepStrictEqual(replaced.data, { a: "changed" })
      assert.notStrictEqual(replaced.metadata?.resourceVersion, read.metadata?.resourceVersion)
      const all = yield* KubeClient.list(Resource.Namespace)
      assert.includeMembers(all.items.map((n) => n.metadata?.name), ["default", "kube-system"])
    }))

  // needs the in-memory cluster (Faults or its request log): RealCluster.test.ts covers 410s and paging there
  it.effect.skipIf(onRealCluster)(
    "error mapping: 404, 409 AlreadyExists, 409 Conflict, 422 with causes, 400, 403, 410",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        const notFound = yield* failure(KubeClient.get(Resource.ConfigMap, "missing", { namespace: ns }))
        assert.strictEqual(notFound._tag, "NotFound")
        assert.include(notFound.message, `GET /api/v1/namespaces/${ns}/configmaps/missing`)
        assert.deepStrictEqual(
          yield* KubeClient.get(Resource.ConfigMap, "missing", { namespace: ns }).pipe(KubeError.ignoreNotFound),
          Option.none()
        )

        const original = yield* KubeClient.create(Resource.ConfigMap, cm("x"), { namespace: ns })
        assert.strictEqual(
          (yield* failure(KubeClient.create(Resource.ConfigMap, cm("x"), { namespace: ns })))._tag,
          "AlreadyExists"
        )
        assert.deepStrictEqual(
          yield* KubeClient.create(Resource.ConfigMap, cm("x"), { namespace: ns }).pipe(KubeError.ignoreAlreadyExists),
          Option.none()
        )

        yield* KubeClient.replace(Resource.ConfigMap, { ...original, data: { a: "2" } })
        const stale = yield* failure(KubeClient.replace(Resource.ConfigMap, { ...original, data: { a: "3" } }))
        assert.strictEqual(stale._tag, "Conflict")
        assert.isTrue(KubeError.isConflict(stale))

        const invalid = yield* failure(KubeClient.create(Resource.ConfigMap, cm("Not_Valid"), { namespace: ns }))
        assert(invalid._tag === "Invalid")
        assert.include(invalid.causes.map((c) => c.field), "metadata.name")

        const badSelector = yield* failure(KubeClient.list(Resource.ConfigMap, { labelSelector: "a in (" }))
        assert.strictEqual(badSelector._tag, "BadRequest")

        const forbidden = yield* failure(KubeClient.del(Resource.Namespace, "default"))
        assert.strictEqual(forbidden._tag, "Forbidden")

        const faults = yield* Faults.Faults
        yield* faults.expireNext("list")
        const gone = yield* failure(KubeClient.list(Resource.ConfigMap, { namespace: ns }))
        assert.strictEqual(gone._tag, "Gone")
      })
  )

  it.effect("retryOnConflict re-reads and re-writes until the write is not stale", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.ConfigMap, cm("counter", { n: "0" }), { namespace: ns })
      let attempts = 0
      const increment = Effect.gen(function*() {
        const current = yield* KubeClient.get(Resource.ConfigMap, "counter", { namespace: ns })
        attempts++
        if (attempts === 1) {
          // someone else writes between our read and our write
          yield* KubeClient.patch(Resource.ConfigMap, "counter", { data: { other: "x" } }, {
            type: "merge",
            namespace: ns
          })
        }
        const n = Number(current.data?.n ?? "0")
        return yield* KubeClient.replace(Resource.ConfigMap, {
          ...current,
          data: { ...current.data, n: String(n + 1) }
        })
      })
      const result = yield* increment.pipe(KubeError.retryOnConflict({ times: 3 }), TestClock.withLive)
      assert.strictEqual(attempts, 2)
      assert.deepStrictEqual(result.data, { n: "1", other: "x" })
    }))

  // needs the in-memory cluster (Faults or its request log): RealCluster.test.ts covers 410s and paging there
  it.effect.skipIf(onRealCluster)(
    "list pages with limit/continue; listAll follows continue in one snapshot",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        for (let i = 0; i < 7; i++) yield* KubeClient.create(Resource.ConfigMap, cm(`item-${i}`), { namespace: ns })
        const first = yield* KubeClient.list(Resource.ConfigMap, { namespace: ns, limit: 3 })
        assert.strictEqual(first.items.length, 3)
        assert.isString(first.continue)
        assert.strictEqual(first.remainingItemCount, 4)
        const from = env.log.lines.length
        const all = yield* KubeClient.listAll(Resource.ConfigMap, { namespace: ns, limit: 3 })
        assert.deepStrictEqual(
          all.items.map((i) => i.metadata?.name).sort(),
          [0, 1, 2, 3, 4, 5, 6].map((i) => `item-${i}`)
        )
        assert.isUndefined(all.continue)
        assert.strictEqual(countRequests(env.log, from, `GET /api/v1/namespaces/${ns}/configmaps?`), 3)
        const faults = yield* Faults.Faults
        yield* faults.expireNext("list")
        assert.strictEqual(
          (yield* failure(KubeClient.listAll(Resource.ConfigMap, { namespace: ns, limit: 3 })))._tag,
          "Gone"
        )
      })
  )

  it.effect("patches: merge, JSON (a failing test op is Invalid), strategic (containers merge by name)", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.ConfigMap, cm("p", { a: "1", b: "2" }), { namespace: ns })
      const merged = yield* KubeClient.patch(Resource.ConfigMap, "p", { data: { b: null, c: "3" } }, {
        type: "merge",
        namespace: ns
      })
      assert.deepStrictEqual(merged.data, { a: "1", c: "3" })
      const jsonPatched = yield* KubeClient.patch(
        Resource.ConfigMap,
        "p",
        [{ op: "test", path: "/data/a", value: "1" }, { op: "replace", path: "/data/a", value: "9" }],
        { type: "json", namespace: ns }
      )
      assert.deepStrictEqual(jsonPatched.data, { a: "9", c: "3" })
      const failedTest = yield* failure(
        KubeClient.patch(Resource.ConfigMap, "p", [{ op: "test", path: "/data/a", value: "1" }], {
          type: "json",
          namespace: ns
        })
      )
      assert.strictEqual(failedTest._tag, "Invalid")

      yield* KubeClient.create(Resource.Deployment, deployment("web"), { namespace: ns })
      const strategic = yield* KubeClient.patch(
        Resource.Deployment,
        "web",
        { spec: { template: { spec: { containers: [{ name: "sidecar", image: "envoy:1" }] } } } },
        { type: "strategic", namespace: ns }
      )
      assert.sameMembers(strategic.spec?.template.spec?.containers.map((c) => c.name) ?? [], ["app", "sidecar"])
    }))

  it.effect("server-side apply: create, conflict between managers (FieldManagerConflict), force", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const intent = (replicas: number) => ({
        ...deployment("applied", replicas),
        metadata: { name: "applied", namespace: ns }
      })
      const created = yield* KubeClient.patch(Resource.Deployment, "applied", intent(2), {
        type: "apply",
        fieldManager: "operator",
        namespace: ns
      })
      assert.strictEqual(created.spec?.replicas, 2)
      assert.strictEqual(created.metadata?.managedFields?.[0]?.manager, "operator")
      const conflict = yield* failure(
        KubeClient.patch(Resource.Deployment, "applied", intent(5), {
          type: "apply",
          fieldManager: "hpa",
          namespace: ns
        })
      )
      assert(conflict._tag === "Conflict")
      assert.isTrue(KubeError.isFieldManagerConflict(conflict))
      assert.include(conflict.causes.map((c) => c.field), ".spec.replicas")
      assert.include(conflict.message, "operator")
      const forced = yield* KubeClient.patch(Resource.Deployment, "applied", intent(5), {
        type: "apply",
        fieldManager: "hpa",
        force: true,
        namespace: ns
      })
      assert.strictEqual(forced.spec?.replicas, 5)
      assert.include(forced.metadata?.managedFields?.map((m) => m.manager) ?? [], "hpa")
    }))

  it.effect("status subresource: replaceStatus / patchStatus change only status; main writes keep it", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const d = yield* KubeClient.create(Resource.Deployment, deployment("st"), { namespace: ns })
      const withStatus = yield* KubeClient.replaceStatus(Resource.Deployment, {
        ...d,
        spec: { ...d.spec!, replicas: 9 },
        status: { readyReplicas: 1, replicas: 1 }
      })
      assert.strictEqual(withStatus.status?.readyReplicas, 1)
      assert.strictEqual(withStatus.spec?.replicas, 1, "spec is not changed through /status")
      // kube-apiserver refuses readyReplicas above replicas (apps status validation): both move
      const patched = yield* KubeClient.patchStatus(Resource.Deployment, "st", {
        status: { replicas: 2, readyReplicas: 2 }
      }, {
        type: "merge",
        namespace: ns
      })
      assert.strictEqual(patched.status?.readyReplicas, 2)
      const mainWrite = yield* KubeClient.patch(Resource.Deployment, "st", {
        spec: { replicas: 3 },
        status: { readyReplicas: 0 }
      }, {
        type: "merge",
        namespace: ns
      })
      assert.strictEqual(mainWrite.spec?.replicas, 3)
      assert.strictEqual(mainWrite.status?.readyReplicas, 2)
      const noStatus = yield* failure(
        KubeClient.patchStatus(Resource.ConfigMap, "nothing", { status: {} }, { type: "merge", namespace: ns })
      )
      assert.strictEqual(noStatus._tag, "NotFound")
    }))

  it.effect("delete: finalizers hold the object (Pending), preconditions, propagation policies", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.ConfigMap, {
        ...cm("held"),
        metadata: { name: "held", finalizers: ["example.com/cleanup"] }
      }, { namespace: ns })
      const pending = yield* KubeClient.del(Resource.ConfigMap, "held", { namespace: ns })
      assert(pending._tag === "Pending")
      assert.isString(pending.object.metadata?.deletionTimestamp)
      yield* KubeClient.patch(Resource.ConfigMap, "held", { metadata: { finalizers: null } }, {
        type: "merge",
        namespace: ns
      })
      assert.strictEqual(
        (yield* failure(KubeClient.get(Resource.ConfigMap, "held", { namespace: ns })))._tag,
        "NotFound"
      )

      const target = yield* KubeClient.create(Resource.ConfigMap, cm("guarded"), { namespace: ns })
      const wrongUid = yield* failure(
        KubeClient.del(Resource.ConfigMap, "guarded", { namespace: ns, preconditions: { uid: "not-the-uid" } })
      )
      assert.strictEqual(wrongUid._tag, "Conflict")
      const deleted = yield* KubeClient.del(Resource.ConfigMap, "guarded", {
        namespace: ns,
        preconditions: { uid: target.metadata!.uid!, resourceVersion: target.metadata!.resourceVersion! }
      })
      assert(deleted._tag === "Deleted")
      assert.strictEqual(deleted.status?.status, "Success")

      const owned = (owner: Resource.Deployment, name: string) =>
        KubeClient.create(Resource.ConfigMap, {
          ...cm(name),
          metadata: {
            name,
            ownerReferences: [{
              apiVersion: "apps/v1",
              kind: "Deployment",
              name: owner.metadata!.name!,
              uid: owner.metadata!.uid!,
              controller: true
            }]
          }
        }, { namespace: ns })
      const background = yield* KubeClient.create(Resource.Deployment, deployment("bg"), { namespace: ns })
      yield* owned(background, "bg-dep")
      yield* KubeClient.del(Resource.Deployment, "bg", { namespace: ns, propagationPolicy: "Background" })
      // the garbage collector works after the owner's deletion (at once in memory, soon on kube-controller-manager)
      yield* eventually(
        Effect.gen(function*() {
          assert.strictEqual(
            (yield* failure(KubeClient.get(Resource.ConfigMap, "bg-dep", { namespace: ns })))._tag,
            "NotFound"
          )
        }),
        30_000
      )

      const orphaning = yield* KubeClient.create(Resource.Deployment, deployment("orphan"), { namespace: ns })
      yield* owned(orphaning, "orphan-dep")
      yield* KubeClient.del(Resource.Deployment, "orphan", { namespace: ns, propagationPolicy: "Orphan" })
      yield* eventually(
        Effect.gen(function*() {
          const orphan = yield* KubeClient.get(Resource.ConfigMap, "orphan-dep", { namespace: ns })
          assert.isUndefined(orphan.metadata?.ownerReferences)
        }),
        30_000
      )

      const fg = yield* KubeClient.create(Resource.Deployment, deployment("fg"), { namespace: ns })
      yield* KubeClient.create(Resource.ConfigMap, {
        ...cm("fg-dep"),
        metadata: {
          name: "fg-dep",
          finalizers: ["example.com/slow"],
          ownerReferences: [{
            apiVersion: "apps/v1",
            kind: "Deployment",
            name: "fg",
            uid: fg.metadata!.uid!,
            blockOwnerDeletion: true
          }]
        }
      }, { namespace: ns })
      const foreground = yield* KubeClient.del(Resource.Deployment, "fg", {
        namespace: ns,
        propagationPolicy: "Foreground"
      })
      assert(foreground._tag === "Pending")
      assert.include(foreground.object.metadata?.finalizers ?? [], "foregroundDeletion")
    }))

  it.effect("custom resources: CRD from Schemas, typed CRUD, status subresource, Decode errors", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      yield* KubeClient.create(Resource.CustomResourceDefinition, looseCrdManifest(WebApp)).pipe(
        KubeError.ignoreAlreadyExists
      )
      yield* waitServed(WebApp)
      const ns = yield* freshNamespace
      const app = yield* KubeClient.create(WebApp, {
        apiVersion: WebApp.apiVersion,
        kind: WebApp.kind,
        metadata: { name: "shop", namespace: ns },
        spec: { image: "shop:1", ports: [{ name: "http", port: 8080 }], startAt: new Date("2024-01-02T03:04:05.000Z") }
      })
      assert.instanceOf(app.spec.startAt, Date)
      assert.strictEqual(app.metadata.generation, 1)
      const withStatus = yield* KubeClient.replaceStatus(WebApp, { ...app, status: { readyReplicas: 3 } })
      assert.strictEqual(withStatus.status?.readyReplicas, 3)
      const patched = yield* KubeClient.patchStatus(WebApp, "shop", { status: { readyReplicas: 4 } }, {
        type: "merge",
        namespace: ns
      })
      assert.strictEqual(patched.status?.readyReplicas, 4)
      const strategic = yield* failure(
        KubeClient.patch(WebApp, "shop", { spec: {} }, { type: "strategic", namespace: ns })
      )
      assert.strictEqual(strategic._tag, "UnexpectedStatus")

      yield* kube.request({
        method: "POST",
        path: WebApp.path({ namespace: ns }),
        body: { apiVersion: "example.com/v1", kind: "WebApp", metadata: { name: "bad" }, spec: { image: "" } }
      })
      const decode = yield* failure(KubeClient.get(WebApp, "bad", { namespace: ns }))
      assert(decode._tag === "Decode")
      assert.include(decode.message, `${ns}/bad: spec: image`)
      assert.include(decode.message, `GET /apis/example.com/v1/namespaces/${ns}/webapps/bad`)
      const listed = yield* KubeClient.list(WebApp, { namespace: ns })
      assert.deepStrictEqual(listed.items.map((i) => i.metadata.name), ["shop"])
      assert.strictEqual(listed.undecodable.length, 1)
      assert.include(listed.undecodable[0]!.issue, "bad")
    }))

  it.effect("watch: Added, Modified, Deleted from a list's resourceVersion", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const { resourceVersion } = yield* KubeClient.list(Resource.ConfigMap, { namespace: ns })
      yield* KubeClient.create(Resource.ConfigMap, cm("w"), { namespace: ns })
      yield* KubeClient.patch(Resource.ConfigMap, "w", { data: { a: "2" } }, { type: "merge", namespace: ns })
      yield* KubeClient.del(Resource.ConfigMap, "w", { namespace: ns })
      const events = yield* KubeClient.watch(Resource.ConfigMap, { namespace: ns, resourceVersion }).pipe(
        Stream.take(3),
        Stream.runCollect
      )
      assert.deepStrictEqual(
        events.map((e) =>
          e._tag === "Added" || e._tag === "Modified" || e._tag === "Deleted"
            ? `${e._tag}:${e.object.metadata?.name}:${e.object.data?.a}`
            : e._tag
        ),
        ["Added:w:1", "Modified:w:2", "Deleted:w:2"]
      )
    }))

  it.effect("watch: initial events end with a bookmark; the stream closes its connection when done", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.ConfigMap, cm("existing"), { namespace: ns })
      const events = yield* KubeClient.watch(Resource.ConfigMap, {
        namespace: ns,
        sendInitialEvents: true,
        allowWatchBookmarks: true
      }).pipe(Stream.takeUntil((e) => e._tag === "Bookmark"), Stream.runCollect)
      const [added, bookmark] = events
      assert(added?._tag === "Added" && added.object.metadata?.name === "existing")
      assert(bookmark?._tag === "Bookmark")
      assert.strictEqual(bookmark.annotations["k8s.io/initial-events-end"], "true")
      assert.isNotEmpty(bookmark.resourceVersion)
      // the in-memory cluster also shows its open watches: interruption / end of the stream aborts the request,
      // the server sees no open watch (waits for the close)
      if (onRealCluster) return
      const faults = yield* Faults.Faults
      let open = yield* faults.dropWatches
      for (let i = 0; open > 0 && i < 200; i++) {
        yield* TestClock.withLive(Effect.sleep("5 millis"))
        open = yield* faults.dropWatches
      }
      assert.strictEqual(open, 0)
    }))

  // needs the in-memory cluster (Faults or its request log): RealCluster.test.ts covers 410s and paging there
  it.effect.skipIf(onRealCluster)(
    "watch: a garbled line is Undecodable and later events still arrive",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        const faults = yield* Faults.Faults
        const { resourceVersion } = yield* KubeClient.list(Resource.ConfigMap, { namespace: ns })
        yield* KubeClient.create(Resource.ConfigMap, cm("before"), { namespace: ns })
        const events = yield* KubeClient.watch(Resource.ConfigMap, { namespace: ns, resourceVersion }).pipe(
          Stream.tap((e) =>
            e._tag === "Added" && e.object.metadata?.name === "before"
              ? Effect.andThen(
                faults.garbleWatches,
                KubeClient.create(Resource.ConfigMap, cm("after"), { namespace: ns })
              )
              : Effect.void
          ),
          Stream.takeUntil((e) => e._tag === "Added" && e.object.metadata?.name === "after"),
          Stream.runCollect
        )
        const tags = events.map((e) => e._tag)
        assert.deepStrictEqual(tags, ["Added", "Undecodable", "Added"])
        const bad = events[1]!
        assert(bad._tag === "Undecodable")
        assert.include(bad.error.issue, "not JSON")
      })
  )

  it.effect("watch: a custom resource failing its Schema is Undecodable between good events", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      yield* KubeClient.create(Resource.CustomResourceDefinition, looseCrdManifest(WebApp)).pipe(
        KubeError.ignoreAlreadyExists
      )
      yield* waitServed(WebApp)
      const ns = yield* freshNamespace
      const { resourceVersion } = yield* KubeClient.list(WebApp, { namespace: ns })
      const good = (name: string) =>
        KubeClient.create(WebApp, {
          apiVersion: WebApp.apiVersion,
          kind: WebApp.kind,
          metadata: { name, namespace: ns },
          spec: { image: "img", ports: [] }
        })
      yield* good("one")
      yield* kube.request({
        method: "POST",
        path: WebApp.path({ namespace: ns }),
        body: { apiVersion: "example.com/v1", kind: "WebApp", metadata: { name: "two" }, spec: { replicas: -1 } }
      })
      yield* good("three")
      const events = yield* KubeClient.watch(WebApp, { namespace: ns, resourceVersion }).pipe(
        Stream.take(3),
        Stream.runCollect
      )
      const summary = events.map((e) =>
        e._tag === "Added"
          ? `Added:${e.object.metadata.name}`
          : e._tag === "Undecodable"
          ? `Undecodable:${e.error.issue}`
          : e._tag
      )
      assert.strictEqual(summary[0], "Added:one")
      assert.match(summary[1]!, /^Undecodable:.*\/two: spec: /)
      assert.strictEqual(summary[2], "Added:three")
    }))

  // needs the in-memory cluster (Faults or its request log): RealCluster.test.ts covers 410s and paging there
  it.effect.skipIf(onRealCluster)(
    "watch: 410 arrives as an Error event (Gone); a watch of an unknown kind fails NotFound",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        const faults = yield* Faults.Faults
        const { resourceVersion } = yield* KubeClient.list(Resource.ConfigMap, { namespace: ns })
        yield* faults.expireNext("watch")
        const events = yield* KubeClient.watch(Resource.ConfigMap, { namespace: ns, resourceVersion }).pipe(
          Stream.take(1),
          Stream.runCollect
        )
        const error = events[0]!
        assert(error._tag === "Error")
        assert.strictEqual(error.error._tag, "Gone")
        assert.strictEqual(error.status.code, 410)

        const Missing = Resource.make({
          group: "nope.io",
          version: "v1",
          kind: "Nope",
          plural: "nopes",
          scope: "Namespaced"
        })
        const notFound = yield* failure(Stream.runCollect(KubeClient.watch(Missing)))
        assert.strictEqual(notFound._tag, "NotFound")
      })
  )

  it.effect("watch: timeoutSeconds ends the stream normally", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const { resourceVersion } = yield* KubeClient.list(Resource.ConfigMap, { namespace: ns })
      const events = yield* Stream.runCollect(
        KubeClient.watch(Resource.ConfigMap, { namespace: ns, resourceVersion, timeoutSeconds: 1 })
      )
      assert.strictEqual(events.length, 0)
    }))
})
