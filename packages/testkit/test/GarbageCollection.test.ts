/**
 * The garbage collector and dependents written after their owner vanished (a controller acting on a stale cache):
 * kube's collector looks each owner uid up and deletes a dependent whose owners are all gone; the testkit does it at
 * once. In-process and over HTTPS, with the same expectations.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ApiError } from "../src/index.js"
import { drivers } from "./support/drivers.js"
import { cm, ref } from "./support/fixtures.js"

type Obj = Record<string, any>

const ownerRef = (owner: Obj) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  controller: true,
  blockOwnerDeletion: true
})

const isNotFound = (e: ApiError.ApiError) => e.status.code === 404

for (const [driverName, makeDriver] of drivers) {
  describe(`garbage collection of late dependents (${driverName})`, () => {
    it.live("a dependent created after its owner was deleted is accepted, then collected", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const owner = yield* d.create(cm("owner"))
        yield* d.delete(ref(owner))
        // the API server does not check owner references: the write succeeds…
        const late = yield* d.create(cm("late", { metadata: { ownerReferences: [ownerRef(owner)] } }))
        assert.strictEqual(late.metadata.name, "late")
        // …and the collector deletes the dependent, whose owner's uid is gone
        assert.isTrue(isNotFound(yield* Effect.flip(d.get(ref(late)))))
      }))

    it.live("a re-created owner of the same name does not adopt a dependent written for the old one", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const old = yield* d.create(cm("owner"))
        yield* d.delete(ref(old))
        yield* d.create(cm("owner")) // a new uid
        yield* d.create(cm("stale-child", { metadata: { ownerReferences: [ownerRef(old)] } }))
        assert.isTrue(isNotFound(yield* Effect.flip(d.get(ref(cm("stale-child"))))))
      }))

    it.live("an update that points a dependent at a vanished owner collects it; a dependent being deleted waits", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const owner = yield* d.create(cm("owner"))
        yield* d.delete(ref(owner))
        const child = yield* d.create(cm("child"))
        yield* d.update({ ...child, metadata: { ...child.metadata, ownerReferences: [ownerRef(owner)] } })
        assert.isTrue(isNotFound(yield* Effect.flip(d.get(ref(child)))))

        const held = yield* d.create(cm("held", { metadata: { finalizers: ["example.com/hold"] } }))
        yield* d.update({ ...held, metadata: { ...held.metadata, ownerReferences: [ownerRef(owner)] } })
        const terminating = yield* d.get(ref(held))
        assert.isString(terminating.metadata.deletionTimestamp, "collected: deleting, held by its finalizer")
      }))

    it.live("kept: a dependent with one live owner left, and one whose owner uid the cluster never had", () =>
      Effect.gen(function*() {
        const d = yield* makeDriver
        const gone = yield* d.create(cm("gone"))
        const alive = yield* d.create(cm("alive"))
        yield* d.delete(ref(gone))
        const both = yield* d.create(
          cm("both", { metadata: { ownerReferences: [ownerRef(gone), { ...ownerRef(alive), controller: false }] } })
        )
        assert.strictEqual((yield* d.get(ref(both))).metadata.name, "both")
        const invented = { apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "never-seen" }
        yield* d.create(cm("invented", { metadata: { ownerReferences: [invented] } }))
        assert.strictEqual((yield* d.get(ref(cm("invented")))).metadata.name, "invented")
      }))
  })
}
