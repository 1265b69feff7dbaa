import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Result, Schema, Stream } from "effect"
import * as Event from "../src/Event.js"
import type { HasMetadata, ObjectMeta } from "../src/ObjectMeta.js"
import * as Predicates from "../src/Predicates.js"
import * as Arb from "./arbitraries.js"

type Obj = HasMetadata
type P = Predicates.Predicate<Obj>

const obj = (metadata: ObjectMeta): Obj => ({ metadata })
const base = obj({ name: "web", namespace: "default", generation: 1, resourceVersion: "10" })

/** [Create, Update, Delete, Generic] results of a predicate for one (old, new) pair. */
const table = (p: P, old: Obj, next: Obj) => [
  p(Event.create(next)),
  p(Event.update(old, next)),
  p(Event.delete(next)),
  p(Event.generic(next))
]

describe("Predicates: update-based predicates", () => {
  const cases: ReadonlyArray<readonly [string, P, Obj, Obj]> = [
    ["generationChanged", Predicates.generationChanged, base, obj({ ...base.metadata, generation: 2 })],
    [
      "resourceVersionChanged",
      Predicates.resourceVersionChanged,
      base,
      obj({ ...base.metadata, resourceVersion: "11" })
    ],
    ["labelsChanged", Predicates.labelsChanged, base, obj({ ...base.metadata, labels: { app: "web" } })],
    ["annotationsChanged", Predicates.annotationsChanged, base, obj({ ...base.metadata, annotations: { a: "1" } })]
  ]

  for (const [label, p, old, changed] of cases) {
    it(`${label}: passes Create/Delete/Generic; Update only when the field changed`, () => {
      const unchanged = obj({ ...old.metadata, finalizers: ["x"] }) // another field changed
      assert.deepStrictEqual(table(p, old, changed), [true, true, true, true])
      assert.deepStrictEqual(table(p, old, unchanged), [true, false, true, true])
      assert.deepStrictEqual(table(p, old, old), [true, false, true, true])
      assert.isTrue(p(Event.delete(old, { finalStateUnknown: true })))
      assert.isTrue(p(Event.create(old, { initial: true })))
    })
  }

  it("generationChanged ignores status-only updates (same generation, new resourceVersion)", () => {
    const statusUpdate = obj({ ...base.metadata, resourceVersion: "11" })
    assert.isFalse(Predicates.generationChanged(Event.update(base, statusUpdate)))
    assert.isTrue(Predicates.resourceVersionChanged(Event.update(base, statusUpdate)))
  })

  it("each carries its name (the inspector shows which predicate dropped an event)", () => {
    assert.deepStrictEqual(
      [
        Predicates.generationChanged,
        Predicates.resourceVersionChanged,
        Predicates.labelsChanged,
        Predicates.annotationsChanged
      ].map((p) => p.name),
      ["generationChanged", "resourceVersionChanged", "labelsChanged", "annotationsChanged"]
    )
  })

  it("objects without metadata compare equal", () => {
    assert.isFalse(Predicates.generationChanged(Event.update({}, {})))
    assert.isFalse(Predicates.labelsChanged(Event.update({}, obj({}))))
    assert.isTrue(Predicates.generationChanged(Event.update({}, obj({ generation: 1 }))))
  })

  it("labels and annotations compare as sets of pairs: order is irrelevant, missing equals empty", () => {
    const l1 = obj({ labels: { a: "1", b: "2" } })
    const l2 = obj({ labels: { b: "2", a: "1" } })
    assert.isFalse(Predicates.labelsChanged(Event.update(l1, l2)))
    assert.isFalse(Predicates.labelsChanged(Event.update(obj({}), obj({ labels: {} }))))
    assert.isTrue(Predicates.labelsChanged(Event.update(l1, obj({ labels: { a: "1" } }))))
    assert.isTrue(Predicates.labelsChanged(Event.update(l1, obj({ labels: { a: "1", b: "3" } }))))
    assert.isTrue(Predicates.labelsChanged(Event.update(obj({ labels: { a: "1" } }), obj({ labels: { b: "1" } }))))
    assert.isTrue(
      Predicates.annotationsChanged(Event.update(obj({ annotations: { a: "1" } }), obj({ annotations: { a: "2" } })))
    )
    assert.isFalse(
      Predicates.annotationsChanged(Event.update(obj({ annotations: { a: "1" } }), obj({ annotations: { a: "1" } })))
    )
  })

  it.prop(
    "deletes are never dropped by update-based predicates or their and/or compositions",
    [Arb.deleteEvent],
    ([e]) => {
      const ps = [
        Predicates.generationChanged,
        Predicates.resourceVersionChanged,
        Predicates.labelsChanged,
        Predicates.annotationsChanged
      ]
      for (const p of ps) assert.isTrue(p(e))
      assert.isTrue(Predicates.and(...ps)(e))
      assert.isTrue(Predicates.or(...ps)(e))
      assert.isTrue(Predicates.all(ps)(e))
    }
  )
})

describe("Predicates.labelSelector", () => {
  const withLabels = (labels?: Record<string, string>) =>
    obj(labels === undefined ? { name: "x" } : { name: "x", labels })
  const matches = (sel: Predicates.LabelSelector, labels?: Record<string, string>) =>
    Predicates.labelSelector(sel)(Event.generic(withLabels(labels)))

  it("matchLabels requires every pair", () => {
    const sel = { matchLabels: { app: "web", tier: "fe" } }
    assert.isTrue(matches(sel, { app: "web", tier: "fe", extra: "1" }))
    assert.isFalse(matches(sel, { app: "web" }))
    assert.isFalse(matches(sel, { app: "web", tier: "be" }))
    assert.isFalse(matches(sel))
  })

  it("operators: In, NotIn (also matches a missing key), Exists, DoesNotExist", () => {
    const inSel = { matchExpressions: [{ key: "env", operator: "In", values: ["prod", "stage"] }] } as const
    assert.isTrue(matches(inSel, { env: "prod" }))
    assert.isFalse(matches(inSel, { env: "dev" }))
    assert.isFalse(matches(inSel, {}))
    const notIn = { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] } as const
    assert.isFalse(matches(notIn, { env: "prod" }))
    assert.isTrue(matches(notIn, { env: "dev" }))
    assert.isTrue(matches(notIn, {}))
    const exists = { matchExpressions: [{ key: "env", operator: "Exists" }] } as const
    assert.isTrue(matches(exists, { env: "" }))
    assert.isFalse(matches(exists, { other: "x" }))
    const doesNotExist = { matchExpressions: [{ key: "env", operator: "DoesNotExist" }] } as const
    assert.isFalse(matches(doesNotExist, { env: "x" }))
    assert.isTrue(matches(doesNotExist, {}))
    assert.isTrue(matches(doesNotExist))
  })

  it("matchLabels and matchExpressions must all hold; an empty selector matches everything", () => {
    const sel = {
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }]
    } as const
    assert.isTrue(matches(sel, { app: "web" }))
    assert.isFalse(matches(sel, { app: "web", env: "prod" }))
    assert.isFalse(matches(sel, { env: "dev" }))
    assert.isTrue(matches({}))
    assert.isTrue(matches({}, { a: "b" }))
  })

  it("a label named like an Object.prototype member is not present unless set", () => {
    assert.isFalse(matches({ matchExpressions: [{ key: "toString", operator: "Exists" }] }, {}))
    assert.isTrue(matches({ matchExpressions: [{ key: "constructor", operator: "NotIn", values: ["x"] }] }, {}))
  })

  it("applies to every kind of event, by the new object on Update", () => {
    const p = Predicates.labelSelector({ matchLabels: { app: "web" } })
    const yes = withLabels({ app: "web" })
    const no = withLabels({ app: "db" })
    assert.deepStrictEqual(table(p, no, yes), [true, true, true, true])
    assert.deepStrictEqual(table(p, yes, no), [false, false, false, false])
    assert.isTrue(p(Event.delete(yes, { finalStateUnknown: true })))
  })

  it("invalid selectors are reported by validateLabelSelector and pass nothing", () => {
    const invalid: ReadonlyArray<Predicates.LabelSelector> = [
      { matchExpressions: [{ key: "env", operator: "In", values: [] }] },
      { matchExpressions: [{ key: "env", operator: "NotIn" }] },
      { matchExpressions: [{ key: "env", operator: "Exists", values: ["x"] }] },
      { matchExpressions: [{ key: "env", operator: "DoesNotExist", values: ["x"] }] },
      { matchExpressions: [{ key: "env", operator: "Equals", values: ["x"] }] }
    ]
    for (const sel of invalid) {
      const result = Predicates.validateLabelSelector(sel)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) assert.strictEqual(result.failure._tag, "InvalidLabelSelector")
      assert.isFalse(Predicates.labelSelector(sel)(Event.delete(withLabels({ env: "x" }))))
      assert.isFalse(Predicates.labelSelector(sel)(Event.generic(withLabels({}))))
      assert.isFalse(Predicates.matchesLabelSelector(sel, { env: "y" }))
    }
    assert.isTrue(Result.isSuccess(Predicates.validateLabelSelector({ matchLabels: { a: "b" } })))
  })
})

describe("Predicates.funcs", () => {
  it("a missing function passes its kind; a given one decides only its kind", () => {
    const none = Predicates.funcs<Obj>({})
    assert.deepStrictEqual(table(none, base, base), [true, true, true, true])
    const kinds = ["create", "update", "delete", "generic"] as const
    kinds.forEach((kind, i) => {
      const p = Predicates.funcs<Obj>({ [kind]: () => false })
      const expected = [true, true, true, true]
      expected[i] = false
      assert.deepStrictEqual(table(p, base, base), expected, kind)
    })
  })

  it("the function receives the event of its kind", () => {
    const p = Predicates.funcs<Obj>({
      create: (e) => e.initial,
      update: (e) => e.old !== e.object,
      delete: (e) => !e.finalStateUnknown
    })
    assert.isTrue(p(Event.create(base, { initial: true })))
    assert.isFalse(p(Event.create(base)))
    assert.isFalse(p(Event.update(base, base)))
    assert.isFalse(p(Event.delete(base, { finalStateUnknown: true })))
    assert.isTrue(p(Event.delete(base)))
  })
})

/** A random predicate built from the real ones and constant/per-kind functions. */
const predicate: Arbitrary.Arbitrary<P> = Arb.oneOf(
  Arb.constantFrom<ReadonlyArray<P>>(
    Predicates.generationChanged,
    Predicates.resourceVersionChanged,
    Predicates.labelsChanged,
    Predicates.annotationsChanged,
    Predicates.labelSelector({ matchLabels: { app: "x" } }),
    Predicates.labelSelector({ matchExpressions: [{ key: "tier", operator: "Exists" }] })
  ),
  Arbitrary.map(Arbitrary.schema(Schema.Tuple([Schema.Boolean, Schema.Boolean, Schema.Boolean, Schema.Boolean])), (
    [c, u, d, g]
  ) => Predicates.funcs<Obj>({ create: () => c, update: () => u, delete: () => d, generic: () => g }))
)

describe("Predicates: combinators", () => {
  it.prop("not(not(p)) ≡ p", [predicate, Arb.event], ([p, e]) => {
    assert.strictEqual(Predicates.not(Predicates.not(p))(e), p(e))
    assert.strictEqual(Predicates.not(p)(e), !p(e))
  })

  it.prop("De Morgan: not(and(p, q)) ≡ or(not p, not q) and not(or(p, q)) ≡ and(not p, not q)", [
    predicate,
    predicate,
    Arb.event
  ], ([p, q, e]) => {
    const { and, not, or } = Predicates
    assert.strictEqual(not(and(p, q))(e), or(not(p), not(q))(e))
    assert.strictEqual(not(or(p, q))(e), and(not(p), not(q))(e))
  })

  it.prop("and/or/all agree with every/some over the predicates", [
    Arbitrary.array(predicate, { maxLength: 4 }),
    Arb.event
  ], (
    [ps, e]
  ) => {
    assert.strictEqual(Predicates.and(...ps)(e), ps.every((p) => p(e)))
    assert.strictEqual(Predicates.all(ps)(e), ps.every((p) => p(e)))
    assert.strictEqual(Predicates.or(...ps)(e), ps.some((p) => p(e)))
  })

  it.prop("identities: and() passes all, or() passes none, and(p) ≡ or(p) ≡ p", [predicate, Arb.event], (
    [p, e]
  ) => {
    assert.isTrue(Predicates.and<Obj>()(e))
    assert.isTrue(Predicates.all<Obj>([])(e))
    assert.isFalse(Predicates.or<Obj>()(e))
    assert.strictEqual(Predicates.and(p)(e), p(e))
    assert.strictEqual(Predicates.or(p)(e), p(e))
  })

  it("not of an update-based predicate drops Create, Delete and Generic (controller-runtime semantics)", () => {
    const p = Predicates.not<Obj>(Predicates.generationChanged)
    assert.deepStrictEqual(table(p, base, base), [false, true, false, false])
  })

  it.effect("predicates type-check directly as Stream.filter arguments on a concrete object type", () =>
    Effect.gen(function*() {
      interface Widget extends HasMetadata {
        readonly spec: { readonly size: number }
      }
      const w = (generation: number): Widget => ({ metadata: { name: "w", generation }, spec: { size: generation } })
      const kept = yield* Stream.make(Event.update(w(1), w(1)), Event.update(w(1), w(2)), Event.delete(w(2))).pipe(
        Stream.filter(Predicates.generationChanged),
        Stream.filter(Predicates.or(Predicates.labelsChanged, Predicates.generationChanged)),
        Stream.runCollect
      )
      // effect 4's Stream.runCollect returns an array (effect 3: a Chunk).
      assert.deepStrictEqual(kept.map((e) => `${e._tag}:${e.object.spec.size}`), [
        "Update:2",
        "Delete:2"
      ])
    }))

  it.effect.prop("Stream.filter with a predicate keeps exactly the events it passes", [
    predicate,
    Arbitrary.array(Arb.event, { maxLength: 20 })
  ], ([p, events]) =>
    Effect.gen(function*() {
      const kept = yield* Stream.fromIterable(events).pipe(Stream.filter(p), Stream.runCollect)
      assert.deepStrictEqual(kept, events.filter(p))
    }))
})
