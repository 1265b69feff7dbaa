/**
 * The informer's store on its own: reads by name, key, namespace, label and index, across namespaced and
 * cluster-scoped objects, through upserts, removals and relists (`replace`); and, as a property, that under any
 * sequence of writes every read answers what a plain map of the last written objects would.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import * as Store from "../src/Store.js"

interface Obj {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly labels?: Record<string, string>
    readonly ownerReferences?: ReadonlyArray<{ apiVersion: string; kind: string; name: string; uid: string }>
  }
  readonly v: number
}

const obj = (namespace: string | undefined, name: string, v: number, owner?: string, label?: string): Obj => ({
  metadata: {
    name,
    ...(namespace === undefined ? {} : { namespace }),
    ...(label === undefined ? {} : { labels: { tier: label } }),
    ...(owner === undefined ? {} : { ownerReferences: [{ apiVersion: "v1", kind: "Owner", name: owner, uid: owner }] })
  },
  v
})

const names = (objects: ReadonlyArray<Obj>) => objects.map(Store.keyOf).sort()

describe("Store", () => {
  it("reads namespaced and cluster-scoped objects by name, key, namespace, label and owner", () => {
    const store = Store.make<Obj>()
    store.upsert(obj("a", "x", 1, "o1", "web"))
    store.upsert(obj("b", "x", 2, "o1"))
    store.upsert(obj(undefined, "x", 3))
    store.upsert(obj("", "y", 4))
    assert.strictEqual(store.size(), 4)
    assert.strictEqual(store.get("x", "a")?.v, 1)
    assert.strictEqual(store.get("x", "b")?.v, 2)
    assert.strictEqual(store.get("x")?.v, 3)
    assert.strictEqual(store.get("y", "")?.v, 4)
    assert.strictEqual(store.getByKey("b/x")?.v, 2)
    assert.strictEqual(store.getByKey("x")?.v, 3)
    assert.isUndefined(store.getByKey("c/x"))
    assert.deepStrictEqual([...store.keys()].sort(), ["a/x", "b/x", "x", "y"])
    assert.deepStrictEqual(names(store.list({ namespace: "a" })), ["a/x"])
    assert.deepStrictEqual(names(store.list({ namespace: "" })), ["x", "y"])
    assert.deepStrictEqual(names(store.list({ labels: { tier: "web" } })), ["a/x"])
    assert.deepStrictEqual(names(store.byIndex(Store.byNamespace, "b")), ["b/x"])
    assert.deepStrictEqual(names(store.byIndex(Store.byOwnerUid, "o1")), ["a/x", "b/x"])
    assert.deepStrictEqual(store.byIndex("unknown", "o1"), [])
  })

  it("updates move objects between index values; removals and relists leave no trace", () => {
    const store = Store.make<Obj>()
    store.upsert(obj("a", "x", 1, "o1"))
    const old = store.upsert(obj("a", "x", 2, "o2"))
    assert.strictEqual(old?.v, 1)
    assert.strictEqual(store.size(), 1)
    assert.deepStrictEqual(store.byIndex(Store.byOwnerUid, "o1"), [])
    assert.deepStrictEqual(store.byIndex(Store.byOwnerUid, "o2").map((o) => o.v), [2])
    assert.strictEqual(store.remove(obj("a", "x", 0))?.v, 2)
    assert.isUndefined(store.remove(obj("a", "x", 0)))
    assert.strictEqual(store.size(), 0)
    assert.deepStrictEqual(store.byIndex(Store.byOwnerUid, "o2"), [])
    assert.deepStrictEqual(store.byIndex(Store.byNamespace, "a"), [])
    store.upsert(obj("a", "gone", 1, "o1"))
    const next = [obj("a", "y", 5, "o3"), obj("c", "z", 6)]
    store.replace(new Map(next.map((o) => [Store.keyOf(o), o])))
    assert.strictEqual(store.size(), 2)
    assert.isUndefined(store.get("gone", "a"))
    assert.deepStrictEqual(store.byIndex(Store.byOwnerUid, "o1"), [])
    assert.deepStrictEqual(names(store.byIndex(Store.byOwnerUid, "o3")), ["a/y"])
    assert.deepStrictEqual(names(store.list()), ["a/y", "c/z"])
  })

  it("a custom index, even one named like the namespace index, answers from what it indexes", () => {
    const store = Store.make<Obj>()
    store.upsert(obj("a", "x", 1))
    store.upsert(obj("a", "y", 2))
    store.addIndex("parity", (o) => [o.v % 2 === 0 ? "even" : "odd"])
    store.addIndex(Store.byNamespace, (o) => [`custom-${o.metadata.namespace}`])
    store.upsert(obj("b", "z", 4))
    assert.deepStrictEqual(names(store.byIndex("parity", "even")), ["a/y", "b/z"])
    assert.deepStrictEqual(names(store.byIndex(Store.byNamespace, "custom-a")), ["a/x", "a/y"])
    assert.deepStrictEqual(store.byIndex(Store.byNamespace, "a"), [])
    assert.deepStrictEqual(names(store.list({ namespace: "custom-b" })), ["b/z"])
  })

  // FastCheck arrays of small write operations → effect 4 Arbitraries over a Schema union
  const Namespace = Schema.Literals(["", "a", "b"])
  const Name = Schema.Literals(["x", "y", "z"])
  const Owner = Schema.Literals(["", "o1", "o2"])
  const Label = Schema.Literals(["", "web", "db"])
  const Op = Schema.Union([
    Schema.Struct({ op: Schema.Literal("upsert"), namespace: Namespace, name: Name, owner: Owner, label: Label }),
    Schema.Struct({ op: Schema.Literal("remove"), namespace: Namespace, name: Name }),
    Schema.Struct({ op: Schema.Literal("relist"), keep: Schema.Array(Schema.Boolean) })
  ])
  it.prop(
    "every read answers what a plain map of the last written objects would",
    [Arbitrary.array(Arbitrary.schema(Op), { maxLength: 40 })],
    ([ops]) => {
      const store = Store.make<Obj>()
      const model = new Map<string, Obj>()
      let v = 0
      for (const step of ops) {
        if (step.op === "upsert") {
          const o = obj(step.namespace, step.name, v++, step.owner || undefined, step.label || undefined)
          assert.strictEqual(store.upsert(o), model.get(Store.keyOf(o)))
          model.set(Store.keyOf(o), o)
        } else if (step.op === "remove") {
          const o = obj(step.namespace, step.name, 0)
          assert.strictEqual(store.remove(o), model.get(Store.keyOf(o)))
          model.delete(Store.keyOf(o))
        } else {
          const kept = [...model.entries()].filter((_, i) => step.keep[i] ?? true)
          model.clear()
          for (const [key, o] of kept) model.set(key, o)
          store.replace(new Map(kept))
        }
      }
      const all = [...model.values()]
      assert.strictEqual(store.size(), model.size)
      assert.deepStrictEqual([...store.keys()].sort(), [...model.keys()].sort())
      assert.deepStrictEqual(names(store.list()), names(all))
      for (const [key, o] of model) assert.strictEqual(store.getByKey(key), o)
      for (const namespace of ["", "a", "b"]) {
        const inNamespace = all.filter((o) => (o.metadata.namespace ?? "") === namespace)
        assert.deepStrictEqual(names(store.list({ namespace })), names(inNamespace))
        assert.deepStrictEqual(names(store.byIndex(Store.byNamespace, namespace)), names(inNamespace))
        for (const name of ["x", "y", "z"]) {
          assert.strictEqual(store.get(name, namespace), model.get(namespace === "" ? name : `${namespace}/${name}`))
        }
      }
      for (const owner of ["o1", "o2"]) {
        const owned = all.filter((o) => o.metadata.ownerReferences?.[0]?.uid === owner)
        assert.deepStrictEqual(names(store.byIndex(Store.byOwnerUid, owner)), names(owned))
      }
      for (const tier of ["web", "db"]) {
        const labelled = all.filter((o) => o.metadata.labels?.tier === tier)
        assert.deepStrictEqual(names(store.list({ labels: { tier } })), names(labelled))
      }
    }
  )
})
