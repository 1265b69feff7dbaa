import { assert, describe, it } from "@effect/vitest"
import { Equal, pipe } from "effect"
import * as Event from "../src/Event.js"

const a = { metadata: { name: "a" } }
const b = { metadata: { name: "b" } }

describe("Event", () => {
  it("constructors build tagged values with defaults", () => {
    const c = Event.create(a)
    assert.strictEqual(c._tag, "Create")
    assert.isTrue(c._tag === "Create" && c.initial === false)
    const ci = Event.create(a, { initial: true })
    assert.isTrue(ci._tag === "Create" && ci.initial)
    const d = Event.delete(a)
    assert.isTrue(d._tag === "Delete" && d.finalStateUnknown === false)
    const du = Event.delete(a, { finalStateUnknown: true })
    assert.isTrue(du._tag === "Delete" && du.finalStateUnknown)
    const u = Event.update(a, b)
    assert.isTrue(u._tag === "Update" && u.old === a && u.object === b)
    assert.strictEqual(Event.generic(a)._tag, "Generic")
  })

  it("events are Data values (structural equality)", () => {
    assert.isTrue(Equal.equals(Event.update(a, b), Event.update(a, b)))
    assert.isFalse(Equal.equals(Event.update(a, b), Event.update(b, a)))
    assert.isFalse(Equal.equals(Event.create(a), Event.create(a, { initial: true })))
    assert.isFalse(Equal.equals(Event.create(a), Event.generic(a)))
  })

  it("match picks the case of the event's kind, data-first and pipeable", () => {
    const cases = {
      Create: (e: Event.Create<typeof a>) => `create:${e.object.metadata.name}:${e.initial}`,
      Update: (e: Event.Update<typeof a>) => `update:${e.old.metadata.name}->${e.object.metadata.name}`,
      Delete: (e: Event.Delete<typeof a>) => `delete:${e.object.metadata.name}:${e.finalStateUnknown}`,
      Generic: (e: Event.Generic<typeof a>) => `generic:${e.object.metadata.name}`
    }
    assert.strictEqual(Event.match(Event.create(a, { initial: true }), cases), "create:a:true")
    assert.strictEqual(Event.match(Event.update(a, b), cases), "update:a->b")
    assert.strictEqual(pipe(Event.delete(b, { finalStateUnknown: true }), Event.match(cases)), "delete:b:true")
    assert.strictEqual(pipe(Event.generic(a), Event.match(cases)), "generic:a")
  })

  it("objects returns old and new on Update, the object otherwise; object returns the newest", () => {
    assert.deepStrictEqual(Event.objects(Event.update(a, b)), [a, b])
    assert.deepStrictEqual(Event.objects(Event.create(a)), [a])
    assert.deepStrictEqual(Event.objects(Event.delete(b)), [b])
    assert.deepStrictEqual(Event.objects(Event.generic(a)), [a])
    assert.strictEqual(Event.object(Event.update(a, b)), b)
  })

  it("guards", () => {
    const events = [Event.create(a), Event.update(a, b), Event.delete(a), Event.generic(a)]
    assert.deepStrictEqual(events.map(Event.isCreate), [true, false, false, false])
    assert.deepStrictEqual(events.map(Event.isUpdate), [false, true, false, false])
    assert.deepStrictEqual(events.map(Event.isDelete), [false, false, true, false])
    assert.deepStrictEqual(events.map(Event.isGeneric), [false, false, false, true])
  })
})
