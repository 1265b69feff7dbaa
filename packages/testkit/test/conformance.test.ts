/**
 * The API semantics, one case per rule, run against the in-process cluster
 * and over HTTPS with the same expectations.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ApiError } from "../src/index.js"
import { drivers } from "./support/drivers.js"
import { cm, cmList, crd, deployment, ref } from "./support/fixtures.js"

type Obj = Record<string, any>

const expectStatus = (error: ApiError.ApiError, code: number, reason: string) => {
  assert.strictEqual(error.status.kind, "Status")
  assert.strictEqual(error.status.apiVersion, "v1")
  assert.strictEqual(error.status.status, "Failure")
  assert.strictEqual(error.status.code, code)
  assert.strictEqual(error.status.reason, reason)
}

const names = (list: Obj) => (list.items as Array<Obj>).map((o) => o.metadata.name)

for (const [driverName, makeDriver] of drivers) {
  describe(`conformance (${driverName})`, () => {
    it.live("create sets uid, creationTimestamp, resourceVersion; generation only for kinds that track it", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        assert.match(a.metadata.uid, /^[0-9a-f-]{36}$/)
        assert.match(a.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
        assert.isString(a.metadata.resourceVersion)
        assert.isUndefined(a.metadata.generation)
        const dep = yield* d.create(deployment("web"))
        assert.strictEqual(dep.metadata.generation, 1)
      }))

    it.live("resourceVersion is cluster-wide and increases with every write", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        const s = yield* d.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" } })
        const a2 = yield* d.update({ ...a, data: { key: "other" } })
        const rvs = [a, s, a2].map((o) => Number(o.metadata.resourceVersion))
        assert.isTrue(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!)
      }))

    it.live("a write that changes nothing keeps the resourceVersion", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        const same = yield* d.update(a)
        assert.strictEqual(same.metadata.resourceVersion, a.metadata.resourceVersion)
      }))

    it.live("generation changes on spec changes only, not on metadata or status", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const dep = yield* d.create(deployment("web", 1))
        const labelled = yield* d.patch(ref(dep), { type: "merge", patch: { metadata: { labels: { x: "y" } } } })
        assert.strictEqual(labelled.metadata.generation, 1)
        const status = yield* d.update({ ...labelled, status: { replicas: 1 } }, "status")
        assert.strictEqual(status.metadata.generation, 1)
        const scaled = yield* d.patch(ref(dep), { type: "merge", patch: { spec: { replicas: 3 } } })
        assert.strictEqual(scaled.metadata.generation, 2)
      }))

    it.live("status subresource: main writes keep status, /status writes change only status", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const dep = yield* d.create({ ...deployment("web"), status: { replicas: 9 } })
        assert.deepStrictEqual(dep.status, {})
        const withStatus = yield* d.update(
          { ...dep, spec: { ...dep.spec, replicas: 5 }, status: { replicas: 2 } },
          "status"
        )
        assert.strictEqual(withStatus.status.replicas, 2)
        assert.strictEqual(withStatus.spec.replicas, 1)
        const main = yield* d.update({
          ...withStatus,
          status: { replicas: 7 },
          spec: { ...withStatus.spec, replicas: 4 }
        })
        assert.strictEqual(main.status.replicas, 2)
        assert.strictEqual(main.spec.replicas, 4)
      }))

    it.live("a stale resourceVersion is a 409 Conflict", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        yield* d.update({ ...a, data: { key: "2" } })
        const error = yield* Effect.flip(d.update({ ...a, data: { key: "3" } }))
        expectStatus(error, 409, "Conflict")
        assert.strictEqual(error.status.details?.name, "a")
      }))

    it.live("an update without resourceVersion: built-in kinds take it, a custom resource gets 422", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        const { resourceVersion: _, ...meta } = a.metadata
        const replaced = yield* d.update({ ...a, metadata: meta, data: { key: "2" } })
        assert.deepStrictEqual(replaced.data, { key: "2" })
        yield* d.create(crd("Namespaced", true))
        const app = yield* d.create({
          apiVersion: "example.com/v1",
          kind: "WebApp",
          metadata: { name: "shop", namespace: "default" },
          spec: { replicas: 1 }
        })
        const { resourceVersion: __, ...appMeta } = app.metadata
        for (const subresource of [undefined, "status"] as const) {
          const error = yield* Effect.flip(d.update({ ...app, metadata: appMeta, spec: { replicas: 2 } }, subresource))
          expectStatus(error, 422, "Invalid")
          assert.strictEqual(
            error.status.message,
            "webapps.example.com \"shop\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
          )
          assert.deepStrictEqual(error.status.details?.causes, [{
            reason: "FieldValueInvalid",
            message: "Invalid value: 0: must be specified for an update",
            field: "metadata.resourceVersion"
          }])
        }
        assert.strictEqual((yield* d.get(ref(app))).metadata.resourceVersion, app.metadata.resourceVersion)
      }))

    it.live("creating an existing name is a 409 AlreadyExists", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        yield* d.create(cm("a"))
        expectStatus(yield* Effect.flip(d.create(cm("a"))), 409, "AlreadyExists")
      }))

    it.live("a missing object is a 404 NotFound naming it", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const error = yield* Effect.flip(
          d.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "nope" })
        )
        expectStatus(error, 404, "NotFound")
        assert.strictEqual(error.status.message, "configmaps \"nope\" not found")
      }))

    it.live("an invalid object is a 422 Invalid with causes", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const bad = deployment("web")
        bad.spec.template.metadata.labels = { app: "other" }
        const error = yield* Effect.flip(
          d.create({ ...bad, metadata: { ...bad.metadata, labels: { "bad key!": "x" } } })
        )
        expectStatus(error, 422, "Invalid")
        const fields = (error.status.details?.causes ?? []).map((c) => c.field)
        assert.include(fields, "spec.template.metadata.labels")
        assert.include(fields, "metadata.labels")
        expectStatus(yield* Effect.flip(d.create(cm("Not_A_Name"))), 422, "Invalid")
      }))

    it.live("namespaces: default and kube-system exist; namespaced objects need their namespace", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const list = yield* d.list({ apiVersion: "v1", kind: "Namespace" })
        assert.includeMembers(names(list), ["default", "kube-system"])
        const error = yield* Effect.flip(d.create(cm("a", {}, "missing")))
        expectStatus(error, 404, "NotFound")
        assert.strictEqual(error.status.message, "namespaces \"missing\" not found")
        yield* d.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } })
        yield* d.create(cm("a", {}, "team"))
      }))

    it.live("finalizers keep a deleted object with a deletionTimestamp until the last one is removed", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a", { metadata: { finalizers: ["example.com/keep"] } }))
        yield* d.delete(ref(a))
        const deleting = yield* d.get(ref(a))
        assert.isString(deleting.metadata.deletionTimestamp)
        const noNew = yield* Effect.flip(
          d.update({
            ...deleting,
            metadata: { ...deleting.metadata, finalizers: ["example.com/keep", "example.com/new"] }
          })
        )
        expectStatus(noNew, 422, "Invalid")
        yield* d.update({ ...deleting, metadata: { ...deleting.metadata, finalizers: [] } })
        expectStatus(yield* Effect.flip(d.get(ref(a))), 404, "NotFound")
      }))

    it.live("garbage collection: Background (default) deletes dependents, Orphan keeps them", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const owner = yield* d.create(cm("owner"))
        const ownerRef = {
          apiVersion: "v1",
          kind: "ConfigMap",
          name: "owner",
          uid: owner.metadata.uid,
          controller: true
        }
        const dep = yield* d.create(cm("dep", { metadata: { ownerReferences: [ownerRef] } }))
        yield* d.delete(ref(owner))
        expectStatus(yield* Effect.flip(d.get(ref(dep))), 404, "NotFound")

        const owner2 = yield* d.create(cm("owner2"))
        const dep2 = yield* d.create(
          cm("dep2", { metadata: { ownerReferences: [{ ...ownerRef, name: "owner2", uid: owner2.metadata.uid }] } })
        )
        // the owner is answered as marked, with the collector's finalizer, and orphaned after its marking
        const answer = (yield* d.delete(ref(owner2), { propagationPolicy: "Orphan" })) as Obj
        const marked: Obj = "deleted" in answer ? answer.object : answer // TestCluster's DeleteResult, or the body
        assert.deepStrictEqual(marked.metadata.finalizers, ["orphan"])
        assert.isDefined(marked.metadata.deletionTimestamp)
        const orphan = yield* d.get(ref(dep2))
        assert.isUndefined(orphan.metadata.ownerReferences)
        assert.isAbove(Number(orphan.metadata.resourceVersion), Number(marked.metadata.resourceVersion))
        // the removed reference leaves its manager's field set
        assert.notInclude(JSON.stringify(orphan.metadata.managedFields), "f:ownerReferences")
        expectStatus(yield* Effect.flip(d.get(ref(owner2))), 404, "NotFound")
      }))

    it.live("garbage collection: Foreground keeps the owner until its dependents are gone", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const owner = yield* d.create(cm("owner"))
        const ownerRef = {
          apiVersion: "v1",
          kind: "ConfigMap",
          name: "owner",
          uid: owner.metadata.uid,
          blockOwnerDeletion: true
        }
        const dep = yield* d.create(
          cm("dep", { metadata: { ownerReferences: [ownerRef], finalizers: ["example.com/hold"] } })
        )
        yield* d.delete(ref(owner), { propagationPolicy: "Foreground" })
        const waiting = yield* d.get(ref(owner))
        assert.include(waiting.metadata.finalizers, "foregroundDeletion")
        assert.isString(waiting.metadata.deletionTimestamp)
        const depNow = yield* d.get(ref(dep))
        assert.isString(depNow.metadata.deletionTimestamp)
        yield* d.patch(ref(dep), { type: "merge", patch: { metadata: { finalizers: null } } })
        expectStatus(yield* Effect.flip(d.get(ref(owner))), 404, "NotFound")
      }))

    it.live("label selectors: =, ==, !=, in, notin, exists, !", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        yield* d.create(cm("a", { metadata: { labels: { app: "web", tier: "front" } } }))
        yield* d.create(cm("b", { metadata: { labels: { app: "web", tier: "back" } } }))
        yield* d.create(cm("c", { metadata: { labels: { app: "db" } } }))
        const sel = (labelSelector: string) => Effect.map(d.list({ ...cmList("default"), labelSelector }), names)
        assert.deepStrictEqual(yield* sel("app=web"), ["a", "b"])
        assert.deepStrictEqual(yield* sel("app==db"), ["c"])
        assert.deepStrictEqual(yield* sel("tier!=front"), ["b", "c"])
        assert.deepStrictEqual(yield* sel("tier in (front,back)"), ["a", "b"])
        assert.deepStrictEqual(yield* sel("tier notin (front)"), ["b", "c"])
        assert.deepStrictEqual(yield* sel("tier"), ["a", "b"])
        assert.deepStrictEqual(yield* sel("!tier"), ["c"])
        assert.deepStrictEqual(yield* sel("app=web,tier=back"), ["b"])
        expectStatus(yield* Effect.flip(sel("app in (")), 400, "BadRequest")
      }))

    it.live("field selectors: metadata.name and metadata.namespace; others are 400", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        yield* d.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } })
        yield* d.create(cm("a"))
        yield* d.create(cm("b"))
        yield* d.create(cm("a", {}, "other"))
        assert.deepStrictEqual(names(yield* d.list({ ...cmList(), fieldSelector: "metadata.name=a" })), ["a", "a"])
        assert.deepStrictEqual(
          (yield* d.list({ ...cmList(), fieldSelector: "metadata.namespace!=default" })).items.map((o: Obj) =>
            o.metadata.namespace
          ),
          ["other"]
        )
        expectStatus(yield* Effect.flip(d.list({ ...cmList(), fieldSelector: "spec.x=1" })), 400, "BadRequest")
      }))

    it.live("list pagination: limit/continue read one consistent snapshot", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        for (const n of ["a", "b", "c", "d", "e"]) yield* d.create(cm(n))
        const page1 = yield* d.list({ ...cmList("default"), limit: 2 })
        assert.deepStrictEqual(names(page1), ["a", "b"])
        assert.strictEqual(page1.metadata.remainingItemCount, 3)
        yield* d.create(cm("bb"))
        yield* d.delete(ref(cm("d")))
        const page2 = yield* d.list({ ...cmList("default"), limit: 2, continue: page1.metadata.continue })
        assert.deepStrictEqual(names(page2), ["c", "d"])
        assert.strictEqual(page2.metadata.resourceVersion, page1.metadata.resourceVersion)
        const page3 = yield* d.list({ ...cmList("default"), limit: 2, continue: page2.metadata.continue })
        assert.deepStrictEqual(names(page3), ["e"])
        assert.isUndefined(page3.metadata.continue)
      }))

    it.live("watch from a resourceVersion replays what happened after it", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        yield* d.update({ ...a, data: { key: "2" } })
        yield* d.delete(ref(a))
        const events = yield* d.watch({ ...cmList("default"), resourceVersion: a.metadata.resourceVersion }, 2)
        assert.deepStrictEqual(events.map((e) => e.type), ["MODIFIED", "DELETED"])
        assert.isTrue(
          Number(events[1]!.object.metadata.resourceVersion) > Number(events[0]!.object.metadata.resourceVersion)
        )
      }))

    it.live("watch from a compacted resourceVersion gets an ERROR event with a 410 Status", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a"))
        yield* d.update({ ...a, data: { key: "2" } })
        yield* d.cluster.compact
        const events = yield* d.watch({ ...cmList("default"), resourceVersion: a.metadata.resourceVersion }, 1)
        assert.strictEqual(events[0]!.type, "ERROR")
        assert.strictEqual(events[0]!.object.kind, "Status")
        assert.strictEqual(events[0]!.object.code, 410)
        assert.strictEqual(events[0]!.object.reason, "Expired")
      }))

    it.live("a watch with a label selector sees objects leave and enter the selection", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a", { metadata: { labels: { app: "web" } } }))
        yield* d.patch(ref(a), { type: "merge", patch: { metadata: { labels: { app: "db" } } } })
        yield* d.patch(ref(a), { type: "merge", patch: { metadata: { labels: { app: "web" } } } })
        const events = yield* d.watch({
          ...cmList("default"),
          labelSelector: "app=web",
          resourceVersion: a.metadata.resourceVersion
        }, 2)
        assert.deepStrictEqual(events.map((e) => e.type), ["DELETED", "ADDED"])
        // leaving: the state that matched, at the resourceVersion of the write that made it leave
        assert.deepStrictEqual(events[0]!.object.metadata.labels, { app: "web" })
        assert.isAbove(Number(events[0]!.object.metadata.resourceVersion), Number(a.metadata.resourceVersion))
      }))

    it.live("watch without a resourceVersion starts with the existing objects", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        yield* d.create(cm("a"))
        yield* d.create(cm("b"))
        const events = yield* d.watch(cmList("default"), 2)
        assert.deepStrictEqual(events.map((e) => [e.type, e.object.metadata.name]), [["ADDED", "a"], ["ADDED", "b"]])
      }))

    it.live("JSON merge patch and JSON patch (a failed test is a 422)", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const a = yield* d.create(cm("a", { data: { x: "1", y: "2" } }))
        const merged = yield* d.patch(ref(a), { type: "merge", patch: { data: { x: null, z: "3" } } })
        assert.deepStrictEqual(merged.data, { y: "2", z: "3" })
        const patched = yield* d.patch(ref(a), {
          type: "json",
          patch: [{ op: "test", path: "/data/y", value: "2" }, { op: "replace", path: "/data/y", value: "9" }]
        })
        assert.strictEqual(patched.data.y, "9")
        const failed = yield* Effect.flip(
          d.patch(ref(a), { type: "json", patch: [{ op: "test", path: "/data/y", value: "0" }] })
        )
        expectStatus(failed, 422, "Invalid")
      }))

    it.live("strategic merge patch merges containers by name", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const dep = yield* d.create(deployment("web"))
        const patched = yield* d.patch(ref(dep), {
          type: "strategic",
          patch: { spec: { template: { spec: { containers: [{ name: "sidecar", image: "busybox" }] } } } }
        })
        // an item new to the list comes before the live ones (upstream's element order)
        assert.deepStrictEqual(patched.spec.template.spec.containers.map((c: Obj) => c.name), ["sidecar", "app"])
      }))

    it.live("server-side apply: creates, conflicts with another manager, force takes over, released fields go", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const r = { apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "cfg" }
        const config = (data: Obj) => ({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "cfg", namespace: "default" },
          data
        })
        const created = yield* d.patch(r, { type: "apply", fieldManager: "alice", patch: config({ a: "1", b: "2" }) })
        assert.deepStrictEqual(created.data, { a: "1", b: "2" })
        assert.deepStrictEqual(created.metadata.managedFields.map((m: Obj) => [m.manager, m.operation]), [[
          "alice",
          "Apply"
        ]])
        const conflict = yield* Effect.flip(
          d.patch(r, { type: "apply", fieldManager: "bob", patch: config({ a: "other" }) })
        )
        expectStatus(conflict, 409, "Conflict")
        assert.strictEqual(conflict.status.details?.causes?.[0]?.field, ".data.a")
        const shared = yield* d.patch(r, { type: "apply", fieldManager: "bob", patch: config({ b: "2" }) })
        assert.deepStrictEqual(shared.data, { a: "1", b: "2" })
        const forced = yield* d.patch(r, {
          type: "apply",
          fieldManager: "bob",
          force: true,
          patch: config({ a: "bob", b: "2" })
        })
        assert.strictEqual(forced.data.a, "bob")
        const released = yield* d.patch(r, { type: "apply", fieldManager: "alice", patch: config({}) })
        assert.deepStrictEqual(released.data, { a: "bob", b: "2" })
        const bobDrops = yield* d.patch(r, { type: "apply", fieldManager: "bob", patch: config({ a: "bob" }) })
        assert.deepStrictEqual(bobDrops.data, { a: "bob" })
      }))

    it.live("a CRD serves its kind, namespaced or cluster-scoped, with its status subresource", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        yield* d.create(crd("Namespaced", true))
        yield* d.create(crd("Cluster", false, "gadgets"))
        const app = yield* d.create({
          apiVersion: "example.com/v1",
          kind: "WebApp",
          metadata: { name: "shop", namespace: "default" },
          spec: { replicas: 1 },
          status: { ready: true }
        })
        assert.isUndefined(app.status)
        assert.strictEqual(app.metadata.generation, 1)
        const st = yield* d.update({ ...app, status: { ready: true } }, "status")
        assert.strictEqual(st.metadata.generation, 1)
        const gadget = yield* d.create({
          apiVersion: "example.com/v1",
          kind: "Gadget",
          metadata: { name: "g" },
          spec: { a: 1 },
          status: { b: 1 }
        })
        assert.isUndefined(gadget.metadata.namespace)
        assert.deepStrictEqual(gadget.status, { b: 1 })
        const bumped = yield* d.update({ ...gadget, status: { b: 2 } })
        assert.strictEqual(bumped.metadata.generation, 2)
        yield* d.delete(ref(crd("Namespaced", true)))
        const gone = yield* Effect.flip(d.get(ref(app)))
        assert.strictEqual(gone.status.code, 404)
      }))

    it.live("deleting a namespace deletes its objects; nothing new can be created meanwhile", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        yield* d.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } })
        const held = yield* d.create(cm("held", { metadata: { finalizers: ["example.com/hold"] } }, "team"))
        yield* d.create(cm("a", {}, "team"))
        yield* d.delete({ apiVersion: "v1", kind: "Namespace", name: "team" })
        const ns = yield* d.get({ apiVersion: "v1", kind: "Namespace", name: "team" })
        assert.strictEqual(ns.status.phase, "Terminating")
        assert.deepStrictEqual(names(yield* d.list(cmList("team"))), ["held"])
        expectStatus(yield* Effect.flip(d.create(cm("b", {}, "team"))), 403, "Forbidden")
        const h = yield* d.get(ref(held))
        yield* d.update({ ...h, metadata: { ...h.metadata, finalizers: [] } })
        expectStatus(yield* Effect.flip(d.get({ apiVersion: "v1", kind: "Namespace", name: "team" })), 404, "NotFound")
        expectStatus(
          yield* Effect.flip(d.delete({ apiVersion: "v1", kind: "Namespace", name: "default" })),
          403,
          "Forbidden"
        )
      }))
  })
}
