/**
 * `Store.reflector` on its own, fed by synthetic watcher streams: whatever the server does — writes, deletes,
 * recreations, changes missed while the watch was down and caught up by a relist, lists cut short by a restart —
 * and however the events are chunked, the store ends equal to the server's last state, and the changes it emits,
 * replayed in order, tell a subscriber exactly that state.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Event from "@reconcile/core/Event"
import { Arbitrary, Effect, Schema, Stream } from "effect"
import * as Store from "../src/Store.js"
import { WatcherEvent } from "../src/Watcher.js"

interface Obj {
  readonly metadata: {
    readonly name: string
    readonly namespace: string
    readonly resourceVersion: string
    readonly uid: string
  }
  readonly data: number
}

/** A server: its objects, and the watcher events a watch of it delivers (nothing while it is disconnected). */
const makeServer = () => {
  const objects = new Map<string, Obj>()
  const events: Array<WatcherEvent<Obj>> = []
  let rv = 0
  let uid = 0
  const put = (name: string, data: number): Obj => {
    const old = objects.get(name)
    const object: Obj = {
      metadata: { name, namespace: "ns", resourceVersion: String(++rv), uid: old?.metadata.uid ?? `uid-${++uid}` },
      data
    }
    objects.set(name, object)
    return object
  }
  const remove = (name: string): Obj | undefined => {
    const old = objects.get(name)
    objects.delete(name)
    return old
  }
  return {
    objects,
    events,
    watchedPut: (name: string, data: number) => void events.push(WatcherEvent.Apply({ object: put(name, data) })),
    watchedRemove: (name: string) => {
      const old = remove(name)
      if (old !== undefined) events.push(WatcherEvent.Delete({ object: old }))
    },
    /** Changes missed while disconnected, then a relist; `aborted`: a list cut short by a restart comes first. */
    relist: (missed: ReadonlyArray<{ readonly name: string; readonly data: number }>, aborted: boolean) => {
      for (const { data, name } of missed) {
        if (data < 0) remove(name)
        else put(name, data)
      }
      const listed = [...objects.values()]
      const send = (items: ReadonlyArray<Obj>) => {
        events.push(WatcherEvent.Init())
        for (const object of items) events.push(WatcherEvent.InitApply({ object }))
      }
      if (aborted) send(listed.slice(0, Math.ceil(listed.length / 2)))
      send(listed)
      events.push(WatcherEvent.InitDone({ resourceVersion: String(rv) }))
    }
  }
}

const summary = (object: Obj | undefined) =>
  object === undefined ? undefined : `${object.metadata.uid}@${object.metadata.resourceVersion}=${object.data}`

const stateOf = (objects: Iterable<Obj>) => [...objects].map((o) => [o.metadata.name, summary(o)] as const).sort()

// effect 4.1 bundles no FastCheck: the generators are Schemas, drawn by effect/Arbitrary (what it.effect.prop runs)
const Name = Schema.Literals(["a", "b", "c", "d"])
const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const Step = Schema.Union([
  Schema.Struct({ op: Schema.Literal("put"), name: Name, data: between(0, 9) }),
  Schema.Struct({ op: Schema.Literal("remove"), name: Name }),
  Schema.Struct({
    op: Schema.Literal("relist"),
    // data -1: deleted while the watch was down (a later put of the name recreates it with a new uid)
    missed: Schema.Array(Schema.Struct({ name: Name, data: between(-1, 9) })),
    aborted: Schema.Boolean
  })
])

describe("Store.reflector", () => {
  it.effect.prop(
    "the store ends equal to the server's last state, and the changes replayed in order say the same",
    [
      Arbitrary.array(Arbitrary.schema(Step), { maxLength: 40 }),
      Arbitrary.schema(Schema.Struct({ missed: Schema.Array(Schema.Struct({ name: Name, data: between(0, 9) })) })),
      Arbitrary.schema(between(1, 8))
    ],
    ([steps, first, chunkSize]) =>
      Effect.gen(function*() {
        const server = makeServer()
        server.relist(first.missed, false) // a watcher starts with a list
        for (const step of steps) {
          if (step.op === "put") server.watchedPut(step.name, step.data)
          else if (step.op === "remove") server.watchedRemove(step.name)
          else server.relist(step.missed, step.aborted)
        }
        const store = Store.make<Obj>()
        const changes = yield* Stream.fromIterable(server.events).pipe(
          Stream.rechunk(chunkSize),
          Store.reflector(store),
          Stream.runCollect
        )
        assert.deepStrictEqual(stateOf(store.list()), stateOf(server.objects.values()), "the store is the server")

        // a subscriber from the start: every change applies to what it holds, and it ends with the store's state
        const seen = new Map<string, Obj>()
        const firstList = new Set(first.missed.map((m) => m.name))
        let initial = 0
        let revision = 0
        changes.forEach((change, i) => {
          assert.isAtLeast(change.revision, revision, "revisions never go back")
          revision = change.revision
          for (const event of change.events as ReadonlyArray<Event.Event<Obj>>) {
            const name = event.object.metadata.name
            switch (event._tag) {
              case "Create":
                assert.isFalse(seen.has(name), `${name}: created while present`)
                if (event.initial === true) initial++
                assert.isTrue(event.initial !== true || i === 0, "initial only for the first list")
                seen.set(name, event.object)
                break
              case "Update":
                assert.strictEqual(event.old, seen.get(name), `${name}: an update carries the object it replaces`)
                assert.notStrictEqual(summary(event.old), summary(event.object), `${name}: an update changes it`)
                seen.set(name, event.object)
                break
              case "Delete":
                assert.strictEqual(summary(event.object), summary(seen.get(name)), `${name}: deletes what it held`)
                seen.delete(name)
                break
              default:
                assert.fail(`unexpected ${event._tag}`)
            }
          }
        })
        assert.strictEqual(initial, firstList.size, "every object of the first list is an initial create")
        assert.deepStrictEqual(stateOf(seen.values()), stateOf(store.list()), "the changes say what the store holds")
        assert.strictEqual(store.revision(), revision, "the last change is at the store's revision")
      }),
    // size 40: effect's Arbitrary caps array lengths at `size` (default 10)
    { arbitrary: { runs: 300, size: 40 } }
  )

  it.effect("a relist says what it changed: Update for a new version, Delete { finalStateUnknown } for what vanished", () =>
    Effect.gen(function*() {
      const server = makeServer()
      server.relist([{ name: "a", data: 1 }, { name: "b", data: 1 }, { name: "c", data: 1 }], false)
      server.relist([{ name: "a", data: 2 }, { name: "b", data: -1 }, { name: "d", data: 1 }], true)
      const store = Store.make<Obj>()
      const changes = yield* Stream.fromIterable(server.events).pipe(
        Stream.rechunk(1),
        Store.reflector(store, { transform: (o) => ({ ...o, data: o.data * 10 }) }),
        Stream.runCollect
      )
      const tell = (e: Event.Event<Obj>) =>
        e._tag === "Delete"
          ? `Delete ${e.object.metadata.name}${e.finalStateUnknown ? " (final state unknown)" : ""}`
          : `${e._tag} ${e.object.metadata.name}=${e.object.data}${
            e._tag === "Create" && e.initial ? " (initial)" : ""
          }`
      // pages of a list change nothing yet: one change per completed list
      assert.deepStrictEqual(changes.map((c) => [c.listed, c.events.map(tell)]), [
        [true, ["Create a=10 (initial)", "Create b=10 (initial)", "Create c=10 (initial)"]],
        [true, ["Update a=20", "Create d=10", "Delete b (final state unknown)"]]
      ])
      assert.deepStrictEqual(store.list().map((o) => `${o.metadata.name}=${o.data}`).sort(), ["a=20", "c=10", "d=10"])
    }))
})
