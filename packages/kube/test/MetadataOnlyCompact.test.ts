/**
 * The compact objects a metadata-only cache holds (its informers' default transform, applied to what a
 * metadata-only resource decodes to): every metadata field the server sent but `managedFields`, in its order, the
 * input left alone, repeated labels, annotations, owner references and finalizers shared between objects (and
 * frozen, since they are shared). What `decode` itself returns (and `KubeClient` hands out) stays plain.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Schema } from "effect"
import { compactObject } from "../src/internal/metadataOnly.js"
import * as MetadataOnly from "../src/MetadataOnly.js"
import * as Resource from "../src/Resource.js"

const ConfigMapMeta = MetadataOnly.make(Resource.ConfigMap)

const decode = (u: unknown): MetadataOnly.PartialObjectMetadata =>
  compactObject(Effect.runSync(ConfigMapMeta.decode(u)))

const withoutManagedFields = (metadata: Record<string, unknown>) => {
  const { managedFields: _, ...rest } = metadata
  return rest
}

const managedFields = [{
  manager: "kubectl",
  operation: "Update",
  apiVersion: "v1",
  time: "2026-11-30T10:00:00Z",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:data": { "f:a": {} } }
}]

const metadataOf = (i: number) => ({
  name: `settings-${i}`,
  namespace: "default",
  uid: `uid-${i}`,
  resourceVersion: String(100 + i),
  generation: 1,
  creationTimestamp: "2026-11-30T10:00:00Z",
  labels: { app: "web", shard: String(i % 2) },
  annotations: { note: "x" },
  ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-1", uid: "rs-1", controller: true }],
  finalizers: ["example.com/cleanup"],
  managedFields
})

describe("MetadataOnly (compact objects)", () => {
  it("keeps every metadata field but managedFields, in the server's order, and leaves the input alone", () => {
    const input = { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: metadataOf(1) }
    const before = structuredClone(input)
    const object = decode(input)
    assert.deepStrictEqual(object, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: withoutManagedFields(before.metadata)
    })
    assert.deepStrictEqual(Object.keys(object.metadata), Object.keys(withoutManagedFields(before.metadata)))
    assert.deepStrictEqual(input, before)
    assert.isFalse(Object.isFrozen(input.metadata.labels))
    assert.isFalse(Object.isFrozen(input.metadata.ownerReferences[0]))
  })

  it("shares repeated labels, annotations, owner references and finalizers between objects, frozen", () => {
    const a = decode({ kind: "ConfigMap", metadata: metadataOf(2) }).metadata
    const b = decode({ kind: "ConfigMap", metadata: metadataOf(4) }).metadata
    const c = decode({ kind: "ConfigMap", metadata: metadataOf(3) }).metadata
    assert.strictEqual(a.labels, b.labels)
    assert.notStrictEqual(a.labels, c.labels)
    assert.deepStrictEqual(c.labels, { app: "web", shard: "1" })
    assert.strictEqual(a.annotations, c.annotations)
    assert.strictEqual(a.ownerReferences, c.ownerReferences)
    assert.strictEqual(a.finalizers, c.finalizers)
    assert.isTrue(Object.isFrozen(a.labels))
    assert.isTrue(Object.isFrozen(a.ownerReferences))
    assert.isTrue(Object.isFrozen(a.ownerReferences![0]))
    assert.throws(() => {
      ;(a.labels as Record<string, string>).app = "changed"
    })
    // each object is its own: only the shared parts are frozen
    assert.notStrictEqual(a, b)
    assert.isFalse(Object.isFrozen(a))
  })

  it("keeps a large label set as the object's own (not shared, not frozen)", () => {
    const labels = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`example.com/label-${i}`, `value-${i}`]))
    const first = decode({ metadata: { name: "a", labels } }).metadata
    const second = decode({ metadata: { name: "b", labels: { ...labels } } }).metadata
    assert.deepStrictEqual(first.labels, labels)
    assert.notStrictEqual(first.labels, second.labels)
    assert.isFalse(Object.isFrozen(first.labels))
  })

  it("copies fields named like Object.prototype's members as data", () => {
    const metadata = JSON.parse(`{"name":"a","__proto__":{"x":"y"},"constructor":"c","toString":"t"}`)
    const decoded = decode({ metadata }).metadata as Record<string, unknown>
    assert.deepStrictEqual(Object.keys(decoded), ["name", "__proto__", "constructor", "toString"])
    assert.strictEqual(Object.getPrototypeOf(decoded), Object.prototype)
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(decoded, "__proto__")?.value, { x: "y" })
    assert.strictEqual(Object.getOwnPropertyDescriptor(decoded, "constructor")?.value, "c")
  })

  // any JSON metadata record: the decoded metadata is it without managedFields (values, order), whatever its fields
  const metadataRecords = Arbitrary.schema(
    Schema.Record(
      Schema.String,
      Schema.Union([
        Schema.String,
        Schema.Finite,
        Schema.Record(Schema.String, Schema.String),
        Schema.Array(Schema.String)
      ])
    )
  )
  it.prop("a decoded metadata equals its input without managedFields", [metadataRecords], ([metadata]) => {
    const input = JSON.parse(JSON.stringify({ ...metadata, managedFields }))
    const decoded = decode({ metadata: input }).metadata
    assert.deepStrictEqual(JSON.stringify(decoded), JSON.stringify(withoutManagedFields(input)))
  })

  it("leaves what decode returns plain: KubeClient's objects are the caller's to change", () => {
    const decoded = Effect.runSync(ConfigMapMeta.decode({ kind: "ConfigMap", metadata: metadataOf(5) }))
    assert.isFalse(Object.isFrozen(decoded.metadata.labels))
    ;(decoded.metadata.labels as Record<string, string>).app = "changed"
    assert.strictEqual(decoded.metadata.labels?.app, "changed")
  })
})
