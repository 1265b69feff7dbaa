import { assert, describe, it } from "@effect/vitest"
import { Context, Data, Effect, Exit, Schema } from "effect"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import type { HasMetadata, OwnerReference } from "../src/ObjectMeta.js"
import * as Request from "../src/Request.js"
import * as Arb from "./arbitraries.js"

const keys = (reqs: ReadonlyArray<Request.Request>) => reqs.map(Request.key)

const pod = (
  name: string,
  ownerReferences: ReadonlyArray<OwnerReference> = [],
  namespace = "default"
): HasMetadata => ({ metadata: { name, namespace, ownerReferences } })
const owner = (
  name: string,
  apiVersion = "apps/v1",
  kind = "Deployment",
  controller: boolean | "unset" = true
): OwnerReference => ({ apiVersion, kind, name, uid: `uid-${name}`, ...(controller === "unset" ? {} : { controller }) })

describe("Handler.forObject", () => {
  it.effect("enqueues the object itself for every kind of event; the new object on Update", () =>
    Effect.gen(function*() {
      const a = pod("a")
      assert.deepStrictEqual(keys(yield* Handler.forObject(Event.create(a))), ["default/a"])
      assert.deepStrictEqual(keys(yield* Handler.forObject(Event.delete(a, { finalStateUnknown: true }))), [
        "default/a"
      ])
      assert.deepStrictEqual(keys(yield* Handler.forObject(Event.generic(a))), ["default/a"])
      assert.deepStrictEqual(keys(yield* Handler.forObject(Event.update(pod("a", [], "old"), a))), ["default/a"])
      assert.deepStrictEqual(keys(yield* Handler.forObject(Event.generic({ metadata: { name: "node-1" } }))), [
        "node-1"
      ])
    }))

  it.effect("skips objects without a name", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Handler.forObject(Event.create({})), [])
      assert.deepStrictEqual(yield* Handler.forObject(Event.create({ metadata: { name: "" } })), [])
    }))
})

describe("Handler.forOwner", () => {
  const byDeployment = Handler.forOwner({ apiVersion: "apps/v1", kind: "Deployment" })

  it.effect("enqueues the controlling owner, in the owned object's namespace", () =>
    Effect.gen(function*() {
      const rs = pod("web-5d4", [owner("web")], "prod")
      assert.deepStrictEqual(keys(yield* byDeployment(Event.create(rs))), ["prod/web"])
      assert.deepStrictEqual(keys(yield* byDeployment(Event.delete(rs))), ["prod/web"])
      assert.deepStrictEqual(keys(yield* byDeployment(Event.generic(rs))), ["prod/web"])
    }))

  it.effect("compares the group of apiVersion and the kind, not the version", () =>
    Effect.gen(function*() {
      const run = (ref: OwnerReference) => Effect.map(byDeployment(Event.create(pod("x", [ref]))), keys)
      assert.deepStrictEqual(yield* run(owner("a", "apps/v1beta2")), ["default/a"])
      assert.deepStrictEqual(yield* run(owner("a", "extensions/v1beta1")), [])
      assert.deepStrictEqual(yield* run(owner("a", "v1")), [])
      assert.deepStrictEqual(yield* run(owner("a", "apps/v1", "StatefulSet")), [])
      assert.deepStrictEqual(yield* run(owner("a", "apps/v1/extra")), [])
      const core = Handler.forOwner({ apiVersion: "v1", kind: "Service" })
      assert.deepStrictEqual(keys(yield* core(Event.create(pod("x", [owner("svc", "v1", "Service")])))), [
        "default/svc"
      ])
      assert.deepStrictEqual(keys(yield* core(Event.create(pod("x", [owner("svc", "apps/v1", "Service")])))), [])
    }))

  it.effect("onlyController (default) follows only the first controller reference", () =>
    Effect.gen(function*() {
      const refs = [
        owner("plain", "apps/v1", "Deployment", "unset"),
        owner("not", "apps/v1", "Deployment", false),
        owner("ctl"),
        owner("second")
      ]
      assert.deepStrictEqual(keys(yield* byDeployment(Event.create(pod("x", refs)))), ["default/ctl"])
      const all = Handler.forOwner({ apiVersion: "apps/v1", kind: "Deployment", onlyController: false })
      assert.deepStrictEqual(keys(yield* all(Event.create(pod("x", refs)))), [
        "default/plain",
        "default/not",
        "default/ctl",
        "default/second"
      ])
      // the controller reference is of another kind: nothing, even though a plain Deployment owner exists
      const other = [owner("rs", "apps/v1", "ReplicaSet"), owner("plain", "apps/v1", "Deployment", false)]
      assert.deepStrictEqual(keys(yield* byDeployment(Event.create(pod("x", other)))), [])
    }))

  it.effect("owners of a cluster-scoped kind get no namespace", () =>
    Effect.gen(function*() {
      const h = Handler.forOwner({ apiVersion: "example.com/v1", kind: "Cluster", scope: "Cluster" })
      const reqs = yield* h(Event.create(pod("x", [owner("c1", "example.com/v1", "Cluster")], "ns")))
      assert.deepStrictEqual(keys(reqs), ["c1"])
      assert.isUndefined(reqs[0]!.namespace)
    }))

  it.effect("on Update enqueues the owners of old and new, once each", () =>
    Effect.gen(function*() {
      const old = pod("x", [owner("before")])
      const next = pod("x", [owner("after")])
      assert.deepStrictEqual(keys(yield* byDeployment(Event.update(old, next))), ["default/before", "default/after"])
      assert.deepStrictEqual(keys(yield* byDeployment(Event.update(old, old))), ["default/before"])
    }))

  const groupOf = (apiVersion: string): string | undefined => {
    const parts = apiVersion.split("/")
    return parts.length === 1 ? "" : parts.length === 2 ? parts[0] : undefined
  }

  it.effect.prop(
    "output has unique keys and is exactly the matching owners of old ∪ new",
    [
      Arb.event,
      Schema.Literals(["apps/v1", "apps/v2", "v1", "batch/v1"]),
      Schema.Literals(["Deployment", "Job", "Widget"]),
      Schema.Boolean
    ],
    ([event, apiVersion, kind, onlyController]) =>
      Effect.gen(function*() {
        const out = keys(yield* Handler.forOwner({ apiVersion, kind, onlyController })(event))
        assert.strictEqual(new Set(out).size, out.length)
        // model: the references of each object (only the first controller one with onlyController)
        const expected = new Set<string>()
        for (const o of Event.objects(event)) {
          const refs = o.metadata?.ownerReferences ?? []
          const considered = onlyController ? refs.filter((r) => r.controller === true).slice(0, 1) : refs
          for (const r of considered) {
            if (r.kind === kind && groupOf(r.apiVersion) === groupOf(apiVersion) && r.name !== "") {
              const ns = o.metadata?.namespace
              expected.add(ns === undefined || ns === "" ? r.name : `${ns}/${r.name}`)
            }
          }
        }
        assert.deepStrictEqual(new Set(out), expected)
      })
  )
})

class Lookup extends Context.Service<Lookup, (name: string) => ReadonlyArray<string>>()("test/Lookup") {}
class LookupFailed extends Data.TaggedError("LookupFailed")<{ readonly name: string }> {}

describe("Handler.fromMap", () => {
  const byLookup = Handler.fromMap((o: HasMetadata) =>
    Effect.map(Lookup, (lookup) => lookup(o.metadata?.name ?? "").map((n) => Request.make(n, "default")))
  )
  const table: Record<string, ReadonlyArray<string>> = { a: ["x", "y"], b: ["y", "z", "z"], c: [] }
  const provide = Effect.provideService(Lookup, (name: string) => table[name] ?? [])

  it.effect("maps old and new on Update, deduplicated by key in first-seen order", () =>
    Effect.gen(function*() {
      const reqs = yield* provide(byLookup(Event.update(pod("a"), pod("b"))))
      assert.deepStrictEqual(keys(reqs), ["default/x", "default/y", "default/z"])
      assert.deepStrictEqual(keys(yield* provide(byLookup(Event.create(pod("b"))))), ["default/y", "default/z"])
      assert.deepStrictEqual(keys(yield* provide(byLookup(Event.delete(pod("a"))))), ["default/x", "default/y"])
      assert.deepStrictEqual(yield* provide(byLookup(Event.generic(pod("c")))), [])
    }))

  it.effect("equal requests built separately are deduplicated", () =>
    Effect.gen(function*() {
      const h = Handler.fromMap((_: HasMetadata) => Effect.succeed([Request.make("n"), Request.make("n", "")]))
      assert.deepStrictEqual(keys(yield* h(Event.update(pod("a"), pod("b")))), ["n"])
    }))

  it.effect("a failure of the mapping fails the handler with its error", () =>
    Effect.gen(function*() {
      const h = Handler.fromMap((o: HasMetadata) =>
        o.metadata?.name === "bad" ? Effect.fail(new LookupFailed({ name: "bad" })) : Effect.succeed([])
      )
      const exit = yield* Effect.exit(h(Event.update(pod("ok"), pod("bad"))))
      assert.deepStrictEqual(exit, Exit.fail(new LookupFailed({ name: "bad" })))
    }))
})
