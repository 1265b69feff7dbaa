import { assert, describe, it } from "@effect/vitest"
import type * as Event from "@reconcile/core/Event"
import { TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, Fiber, Schema, Stream } from "effect"
import type { Duration } from "effect"
import { TestClock } from "effect/testing"
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

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up

/** Moves virtual time once every fiber has run (what effect 3's `TestClock.adjust` did before moving it). */
const advance = (duration: Duration.Input) => Effect.andThen(settle, TestClock.adjust(duration))

const subscribe = (informer: Informer.Informer<Obj>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    yield* informer.events.pipe(
      Stream.runForEach((e) => Effect.sync(() => void seen.push(summary(e)))),
      Effect.forkScoped
    )
    yield* settle
    return seen
  })

describe("Informer", () => {
  it.effect("the initial list arrives as Create { initial: true } and marks the informer synced", () =>
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

  it.effect("watch events update the store; updates carry the old object", () =>
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

  it.effect("a relist after 410 swaps the store atomically: creates, updates, and deletes for vanished objects", () =>
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

  it.effect(
    "a reset server (resourceVersions start again): the informer relists and converges — Deletes for vanished " +
      "objects, Creates for new ones, an Update for a name a new object took (new uid, even at the same " +
      "resourceVersion)",
    () =>
      Effect.gen(function*() {
        const server = yield* makeFakeServer
        for (const name of ["a", "b", "c"]) yield* server.put(name, 1) // resourceVersions 1, 2, 3
        const informer = yield* Informer.make(server.listWatch, { watcher: { jitter: 0 } })
        const seen = yield* subscribe(informer)
        yield* server.put("a", 2) // 4
        yield* settle
        const mark = seen.length
        yield* server.reset // the connection breaks; the new server starts again at 1
        yield* server.put("x", 5) // 1
        yield* server.put("b", 7) // 2: b's old resourceVersion, another object
        yield* settle
        assert.strictEqual((yield* informer.health)._tag, "Disconnected", "backing off after the broken watch")
        yield* advance("800 millis") // the backoff; the check of resourceVersion 4 answers 504: a relist
        yield* settle
        assert.deepStrictEqual(seen.slice(mark).sort(), [
          "Create:x=5",
          "Delete:a unknown",
          "Delete:c unknown",
          "Update:b=1->7"
        ])
        assert.deepStrictEqual(
          informer.store.list().map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}/${o.metadata.uid}`).sort(),
          ["b@2/uid-b-1", "x@1/uid-x-1"]
        )
        assert.strictEqual((yield* informer.health)._tag, "Connected")
        // and it goes on watching the new server
        yield* server.put("x", 6)
        yield* settle
        assert.strictEqual(seen[seen.length - 1], "Update:x=5->6")
      })
  )

  it.effect("late subscribers get the stored objects as initial creates, then live events", () =>
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

  it.effect("managedFields are stripped by default; a custom transform replaces the default", () =>
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

  it.effect("indexes: namespace and custom", () =>
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

  // effect 4.1 bundles no FastCheck: the same generators as Schemas, drawn by effect/Arbitrary (what it.prop runs)
  const Name = Schema.Literals(["a", "b", "c"])
  const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
  const op = Schema.Union([
    Schema.Struct({ op: Schema.Literal("put"), name: Name, data: between(0, 9) }),
    Schema.Struct({ op: Schema.Literal("remove"), name: Name }),
    Schema.Struct({ op: Schema.Literal("drop") }),
    Schema.Struct({ op: Schema.Literal("compact") }),
    Schema.Struct({ op: Schema.Literal("fail") }),
    Schema.Struct({ op: Schema.Literal("wait"), millis: between(0, 40_000) })
  ])

  it.effect.prop(
    "under random changes and faults the store ends equal to the server and subscribers saw every object's last state",
    [Arbitrary.array(Arbitrary.schema(op), { maxLength: 40 })],
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
          else if (step.op === "compact") yield* Effect.andThen(server.compact, server.dropWatches)
          else if (step.op === "fail") yield* Effect.andThen(server.failNextRequest, server.dropWatches)
          else yield* advance(step.millis)
        }
        yield* advance("2 minutes") // past any backoff
        yield* settle
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
    // size 40: effect's Arbitrary caps array lengths at `size` (default 10); fast-check drew up to maxLength
    { timeout: 60_000, arbitrary: { runs: 300, size: 40 } }
  )
})
