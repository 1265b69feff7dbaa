import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber, Stream, TestClock } from "effect"
import type * as Event from "@reconcile/core/Event"
import * as Informer from "../src/Informer.js"
import { makeFakeServer, type Obj } from "./fakeServer.js"

const summary = (e: Event.Event<Obj>) =>
  e._tag === "Create"
    ? `Create:${e.object.metadata.name}=${e.object.data}${e.initial ? " initial" : ""}`
    : e._tag === "Update"
    ? `Update:${e.old.metadata.name}=${e.old.data}->${e.object.data}`
    : e._tag === "Delete"
    ? `Delete:${e.object.metadata.name}${e.finalStateUnknown ? " unknown" : ""}`
    : `Generic:${e.object.metadata.name}`

const settle = TestClock.adjust(0)

const subscribe = (informer: Informer.Informer<Obj>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    yield* informer.events.pipe(Stream.runForEach((e) => Effect.sync(() => void seen.push(summary(e)))), Effect.forkScoped)
    yield* settle
    return seen
  })

describe("Informer", () => {
  it.scoped("the initial list arrives as Create { initial: true } and marks the informer synced", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.put("a", 1)
      yield* server.put("b", 1)
      const informer = yield* Informer.make(server.listWatch)
      const seen = yield* subscribe(informer)
      yield* informer.synced
      assert.deepStrictEqual(seen, ["Create:a=1 initial", "Create:b=1 initial"])
      assert.strictEqual(informer.store.get("a", "ns")?.data, 1)
      assert.isTrue(yield* informer.hasSynced)
    }))

  it.scoped("watch events update the store; updates carry the old object", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.put("a", 1)
      const informer = yield* Informer.make(server.listWatch)
      const seen = yield* subscribe(informer)
      yield* server.put("a", 2)
      yield* server.put("b", 1)
      yield* server.remove("a")
      yield* settle
      assert.deepStrictEqual(seen, ["Create:a=1 initial", "Update:a=1->2", "Create:b=1", "Delete:a"])
      assert.deepStrictEqual(informer.store.list().map((o) => o.metadata.name), ["b"])
    }))

  it.scoped("a relist after 410 swaps the store atomically: creates, updates, and deletes for vanished objects", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.put("keep", 1)
      yield* server.put("change", 1)
      yield* server.put("vanish", 1)
      const informer = yield* Informer.make(server.listWatch)
      const seen = yield* subscribe(informer)
      yield* server.dropWatches
      yield* server.put("change", 2)
      yield* server.remove("vanish")
      yield* server.put("new", 1)
      yield* server.compact // the resume from the old resourceVersion now answers 410
      yield* settle
      assert.deepStrictEqual(seen.slice(3).sort(), ["Create:new=1", "Delete:vanish unknown", "Update:change=1->2"])
      assert.deepStrictEqual(informer.store.list().map((o) => o.metadata.name).sort(), ["change", "keep", "new"])
    }))

  it.scoped("late subscribers get the stored objects as initial creates, then live events", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.put("a", 1)
      const informer = yield* Informer.make(server.listWatch)
      yield* informer.synced
      yield* server.put("b", 1)
      yield* settle
      const late = yield* subscribe(informer)
      yield* server.put("a", 2)
      yield* settle
      assert.deepStrictEqual(late, ["Create:a=1 initial", "Create:b=1 initial", "Update:a=1->2"])
    }))

  it.scoped("managedFields are stripped by default; a custom transform replaces the default", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      const withFields = {
        ...server.listWatch,
        list: (o: { readonly limit: number; readonly continue?: string | undefined }) =>
          Effect.map(server.listWatch.list(o), (page) => ({
            ...page,
            items: page.items.map((i) => ({ ...i, metadata: { ...i.metadata, managedFields: [{ manager: "x" }] } }))
          }))
      }
      yield* server.put("a", 1)
      const stripped = yield* Informer.make(withFields)
      yield* stripped.synced
      assert.notProperty(stripped.store.get("a", "ns")!.metadata, "managedFields")
      const kept = yield* Informer.make(withFields, { transform: (o) => o })
      yield* kept.synced
      assert.property(kept.store.get("a", "ns")!.metadata, "managedFields")
    }))

  it.scoped("indexes: namespace and custom", () =>
    Effect.gen(function*() {
      const server = yield* makeFakeServer
      yield* server.put("a", 1)
      yield* server.put("b", 2)
      const informer = yield* Informer.make(server.listWatch)
      yield* informer.synced
      informer.store.addIndex("parity", (o) => [o.data % 2 === 0 ? "even" : "odd"])
      assert.deepStrictEqual(informer.store.byIndex("parity", "even").map((o) => o.metadata.name), ["b"])
      yield* server.put("a", 4)
      yield* settle
      assert.deepStrictEqual(informer.store.byIndex("parity", "even").map((o) => o.metadata.name).sort(), ["a", "b"])
      assert.strictEqual(informer.store.byIndex("namespace", "ns").length, 2)
    }))

  const op = fc.oneof(
    fc.record({ op: fc.constant("put" as const), name: fc.constantFrom("a", "b", "c"), data: fc.nat(9) }),
    fc.record({ op: fc.constant("remove" as const), name: fc.constantFrom("a", "b", "c") }),
    fc.record({ op: fc.constant("drop" as const) }),
    fc.record({ op: fc.constant("compact" as const) }),
    fc.record({ op: fc.constant("fail" as const) }),
    fc.record({ op: fc.constant("wait" as const), millis: fc.integer({ min: 0, max: 40_000 }) })
  )

  it.scoped.prop(
    "under random changes and faults the store ends equal to the server and subscribers saw every object's last state",
    [fc.array(op, { maxLength: 40 })],
    ([ops]) =>
      Effect.gen(function*() {
        const server = yield* makeFakeServer
        const informer = yield* Informer.make(server.listWatch, { watcher: { pageSize: 2 } })
        const last = new Map<string, number | "deleted">()
        const fiber = yield* informer.events.pipe(
          Stream.runForEach((e) =>
            Effect.sync(() => {
              last.set(e.object.metadata.name, e._tag === "Delete" ? "deleted" : e.object.data)
            })
          ),
          Effect.forkScoped
        )
        for (const step of ops) {
          if (step.op === "put") yield* server.put(step.name, step.data)
          else if (step.op === "remove") yield* server.remove(step.name)
          else if (step.op === "drop") yield* server.dropWatches
          else if (step.op === "compact") yield* Effect.zipRight(server.compact, server.dropWatches)
          else if (step.op === "fail") yield* Effect.zipRight(server.failNextRequest, server.dropWatches)
          else yield* TestClock.adjust(step.millis)
        }
        yield* TestClock.adjust("2 minutes") // past any backoff
        const expected = [...server.objects.values()].map((o) => [o.metadata.name, o.data] as const).sort()
        const actual = informer.store.list().map((o) => [o.metadata.name, o.data] as const).sort()
        assert.deepStrictEqual(actual, expected, "store equals the server")
        for (const name of ["a", "b", "c"]) {
          const object = server.objects.get(name)
          const seen = last.get(name)
          if (object !== undefined) assert.strictEqual(seen, object.data, `${name}: last state reached subscribers`)
          else assert.isTrue(seen === undefined || seen === "deleted", `${name}: deletion reached subscribers`)
        }
        yield* Fiber.interrupt(fiber)
      }),
    { timeout: 60_000, fastCheck: { numRuns: 300 } }
  )
})
