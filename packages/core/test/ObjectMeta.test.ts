import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import * as ObjectMeta from "../src/ObjectMeta.js"

describe("ObjectMeta", () => {
  it("accessors read metadata and tolerate a missing one", () => {
    const obj = { metadata: { name: "web", namespace: "default", uid: "u1", labels: { app: "web" } } }
    assert.strictEqual(ObjectMeta.name(obj), "web")
    assert.strictEqual(ObjectMeta.namespace(obj), "default")
    assert.strictEqual(ObjectMeta.uid(obj), "u1")
    assert.deepStrictEqual(ObjectMeta.labels(obj), { app: "web" })
    assert.isUndefined(ObjectMeta.name({}))
    assert.isUndefined(ObjectMeta.namespace({ metadata: { namespace: "" } }))
    assert.deepStrictEqual(ObjectMeta.labels({}), {})
    assert.deepStrictEqual(ObjectMeta.annotations({ metadata: {} }), {})
    assert.deepStrictEqual(ObjectMeta.ownerReferences({}), [])
  })

  it("controllerOf returns the first reference marked controller", () => {
    const ref = (name: string, controller?: boolean) => ({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name,
      uid: name,
      ...(controller === undefined ? {} : { controller })
    })
    const obj = { metadata: { ownerReferences: [ref("a"), ref("b", false), ref("c", true), ref("d", true)] } }
    assert.deepStrictEqual(Option.map(ObjectMeta.controllerOf(obj), (r) => r.name), Option.some("c"))
    const noController = { metadata: { ownerReferences: [ref("a"), ref("b", false)] } }
    assert.isTrue(Option.isNone(ObjectMeta.controllerOf(noController)))
    assert.isTrue(Option.isNone(ObjectMeta.controllerOf({})))
  })

  it("isBeingDeleted checks deletionTimestamp (Date or string)", () => {
    assert.isTrue(ObjectMeta.isBeingDeleted({ metadata: { deletionTimestamp: new Date(0) } }))
    assert.isTrue(ObjectMeta.isBeingDeleted({ metadata: { deletionTimestamp: "2024-01-01T00:00:00Z" } }))
    assert.isFalse(ObjectMeta.isBeingDeleted({ metadata: { name: "x" } }))
    assert.isFalse(ObjectMeta.isBeingDeleted({}))
  })
})
