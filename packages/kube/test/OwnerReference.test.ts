import { assert, describe, it } from "@effect/vitest"
// effect 4 replaced Either with Result: the same assertions on Success/Failure
import type { ObjectMeta } from "@reconcile/core/ObjectMeta"
import { Result } from "effect"
import * as OwnerReference from "../src/OwnerReference.js"

const owner = (name: string, uid: string) => ({ apiVersion: "example.com/v1", kind: "WebApp", metadata: { name, uid } })
const deployment: { readonly apiVersion: string; readonly kind: string; readonly metadata: ObjectMeta } = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default" }
}

describe("OwnerReference", () => {
  it("setControllerReference adds a controller reference", () => {
    const owned = Result.getOrThrow(OwnerReference.setControllerReference(owner("a", "u1"), deployment))
    assert.deepStrictEqual(owned.metadata.ownerReferences, [{
      apiVersion: "example.com/v1",
      kind: "WebApp",
      name: "a",
      uid: "u1",
      controller: true,
      blockOwnerDeletion: true
    }])
    assert.isTrue(OwnerReference.isControlledBy(owned, owner("a", "u1")))
    assert.isTrue(OwnerReference.isOwnedBy(owned, owner("a", "u1")))
    assert.notProperty(deployment.metadata, "ownerReferences", "the input is not mutated")
  })

  it("is idempotent for the same owner and fails for another controller", () => {
    const once = Result.getOrThrow(OwnerReference.setControllerReference(owner("a", "u1"), deployment))
    const twice = Result.getOrThrow(OwnerReference.setControllerReference(owner("a", "u1"), once))
    assert.strictEqual(twice.metadata.ownerReferences!.length, 1)
    const conflict = OwnerReference.setControllerReference(owner("b", "u2"), once)
    assert.isTrue(Result.isFailure(conflict))
    const error = Result.getFailure(conflict)
    assert.strictEqual(error._tag === "Some" && error.value._tag, "AlreadyOwned")
    assert.include(error._tag === "Some" ? error.value.message : "", "already controlled by WebApp a")
  })

  it("setOwnerReference adds a plain owner next to a controller", () => {
    const controlled = Result.getOrThrow(OwnerReference.setControllerReference(owner("a", "u1"), deployment))
    const both = Result.getOrThrow(OwnerReference.setOwnerReference(owner("b", "u2"), controlled))
    assert.deepStrictEqual(both.metadata.ownerReferences!.map((r) => [r.name, r.controller ?? false]), [
      ["a", true],
      ["b", false]
    ])
    const again = Result.getOrThrow(OwnerReference.setOwnerReference(owner("a", "u1"), both))
    assert.isTrue(OwnerReference.isControlledBy(again, owner("a", "u1")), "a plain set keeps the controller flag")
    assert.deepStrictEqual(
      OwnerReference.removeOwnerReference(owner("a", "u1"), again).metadata.ownerReferences!.map((r) => r.name),
      ["b"]
    )
  })

  it("an owner without uid is a typed error", () => {
    const result = OwnerReference.setControllerReference(
      { apiVersion: "v1", kind: "X", metadata: { name: "n" } },
      deployment
    )
    assert.isTrue(Result.isFailure(result))
    assert.deepStrictEqual(
      Result.isFailure(result) && result.failure._tag === "InvalidOwner" && result.failure.missing,
      ["uid"]
    )
  })
})
