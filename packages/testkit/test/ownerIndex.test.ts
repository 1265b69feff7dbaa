/**
 * The controller manager's owner index (`internal/ownerIndex.ts`), fed by a watch of a real Core, against a full
 * scan of the Core's list after every write.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Schema } from "effect"
import type { Obj } from "../src/internal/json.js"
import { controllerUid, OwnerIndex } from "../src/internal/ownerIndex.js"
import { Core } from "../src/internal/store.js"

const Namespace = Schema.Literals(["a", "b"])
const Name = Schema.Literals(["p0", "p1", "p2"])
/** An owner: one of the three ConfigMaps of a namespace (by its current uid), or a uid never stored. */
const Owner = Schema.Struct({
  namespace: Namespace,
  index: Schema.Literals([0, 1, 2, "invented"]),
  controller: Schema.UndefinedOr(Schema.Boolean)
})
const Owners = Schema.Array(Owner).check(Schema.isMaxLength(3))
const Op = Schema.Union([
  Schema.Struct({ op: Schema.Literal("create"), namespace: Namespace, name: Name, owners: Owners }),
  Schema.Struct({ op: Schema.Literal("setOwners"), namespace: Namespace, name: Name, owners: Owners }),
  Schema.Struct({ op: Schema.Literal("label"), namespace: Namespace, name: Name, value: Schema.Literals(["x", "y"]) }),
  Schema.Struct({ op: Schema.Literal("finalizer"), namespace: Namespace, name: Name, on: Schema.Boolean }),
  Schema.Struct({ op: Schema.Literal("delete"), namespace: Namespace, name: Name }),
  // the garbage collector deletes the Pods all of whose owners are gone; a new owner of the name has a new uid
  Schema.Struct({ op: Schema.Literal("deleteOwner"), namespace: Namespace, index: Schema.Literals([0, 1, 2]) }),
  Schema.Struct({ op: Schema.Literal("createOwner"), namespace: Namespace, index: Schema.Literals([0, 1, 2]) })
])
type Op = typeof Op.Type

const podSpec = { containers: [{ name: "c", image: "busybox" }] }

/** A Core, its Pods' index fed by a watch, and the owner uids each ConfigMap name has had. */
const setup = () => {
  let now = Date.parse("2026-01-01T00:00:00Z")
  const core = new Core({ now: () => (now += 1000) })
  const pods = core.resolveKind("v1", "Pod")
  const configMaps = core.resolveKind("v1", "ConfigMap")
  const index = new OwnerIndex()
  core.watch(pods, undefined, {}, (event) => {
    if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED") {
      index.apply(event.type, event.object as Obj)
    }
  })
  const uids = new Map<string, string>()
  const everyUid = new Set<string>(["invented"])
  const createOwner = (namespace: string, i: number) => {
    const cm = core.create(configMaps, namespace, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `owner-${i}`, namespace }
    }, {}) as Obj
    uids.set(`${namespace}/${i}`, cm.metadata.uid)
    everyUid.add(cm.metadata.uid)
  }
  for (const namespace of ["a", "b"]) {
    core.create(core.resolveKind("v1", "Namespace"), undefined, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace }
    }, {})
    for (let i = 0; i < 3; i++) createOwner(namespace, i)
  }
  const refs = (owners: typeof Owners.Type): Array<Obj> =>
    owners.map((o) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      name: o.index === "invented" ? "invented" : `owner-${o.index}`,
      uid: o.index === "invented" ? "invented" : uids.get(`${o.namespace}/${o.index}`)!,
      ...(o.controller !== undefined ? { controller: o.controller } : {})
    }))
  const update = (namespace: string, name: string, f: (pod: Obj) => Obj) =>
    core.update(pods, namespace, name, f(core.get(pods, namespace, name) as Obj), {})
  const step = (op: Op): void => {
    switch (op.op) {
      case "create":
        core.create(pods, op.namespace, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: op.name, namespace: op.namespace, ownerReferences: refs(op.owners) },
          spec: podSpec
        }, {})
        return
      case "setOwners":
        update(op.namespace, op.name, (p) => ({ ...p, metadata: { ...p.metadata, ownerReferences: refs(op.owners) } }))
        return
      case "label":
        update(op.namespace, op.name, (p) => ({ ...p, metadata: { ...p.metadata, labels: { l: op.value } } }))
        return
      case "finalizer":
        update(op.namespace, op.name, (p) => ({
          ...p,
          metadata: { ...p.metadata, finalizers: op.on ? ["example.com/hold"] : [] }
        }))
        return
      case "delete":
        core.delete(pods, op.namespace, op.name, {})
        return
      case "deleteOwner":
        core.delete(configMaps, op.namespace, `owner-${op.index}`, {})
        return
      case "createOwner":
        createOwner(op.namespace, op.index)
        return
    }
  }
  /** The index against a full scan of each namespace, for every uid an owner ever had (and the invented one). */
  const check = (after: string) => {
    for (const namespace of ["a", "b"]) {
      const all = core.list(pods, namespace, {}).items as unknown as Array<Obj>
      for (const uid of everyUid) {
        assert.deepStrictEqual(
          index.controlledBy(namespace, uid),
          all.filter((p) => controllerUid(p) === uid),
          `${namespace}, controller ${uid}, after ${after}`
        )
      }
      for (const name of Name.literals) {
        assert.deepStrictEqual(index.get(namespace, name), all.find((p) => p.metadata.name === name), after)
      }
    }
  }
  return { step, check }
}

describe("OwnerIndex", () => {
  it.effect.prop(
    "after any sequence of creates, updates, owner changes and deletes, a lookup equals a full scan",
    [Arbitrary.array(Arbitrary.schema(Op), { minLength: 10, maxLength: 40 })],
    ([ops]) =>
      Effect.sync(() => {
        const { check, step } = setup()
        check("the start")
        for (const [i, op] of ops.entries()) {
          try {
            step(op)
          } catch {
            // a refused write (404, 409, 422) changes nothing: the index must not change either
          }
          check(`step ${i} (${JSON.stringify(op)})`)
        }
      }),
    { timeout: 120_000, arbitrary: { runs: 200, size: 40 } }
  )

  it("a controller change moves the object between owners; deleting it takes it out", () => {
    const index = new OwnerIndex()
    const pod = (owners: Array<Obj>, rv: string): Obj => ({
      metadata: { name: "p", namespace: "ns", resourceVersion: rv, ownerReferences: owners }
    })
    const one = pod([{ uid: "u1", controller: true }], "1")
    index.apply("ADDED", one)
    assert.deepStrictEqual(index.controlledBy("ns", "u1"), [one])
    const two = pod([{ uid: "u1" }, { uid: "u2", controller: true }], "2")
    index.apply("MODIFIED", two)
    assert.deepStrictEqual(index.controlledBy("ns", "u1"), [])
    assert.deepStrictEqual(index.controlledBy("ns", "u2"), [two])
    assert.deepStrictEqual(index.controlledBy("other", "u2"), [])
    assert.strictEqual(index.get("ns", "p"), two)
    index.apply("DELETED", two)
    assert.deepStrictEqual(index.controlledBy("ns", "u2"), [])
    assert.isUndefined(index.get("ns", "p"))
  })
})
