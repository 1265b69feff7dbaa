/**
 * Arbitraries shared by the core tests: effect's `Arbitrary` module (what
 * `@effect/vitest`'s `it.prop` runs), mostly derived from Schemas. effect 4
 * no longer bundles fast-check; `oneOf` and `constantFrom` stand in for
 * fast-check's combinators of the same meaning.
 */
import { Arbitrary, Schema } from "effect"
import * as Event from "../src/Event.js"
import type { HasMetadata, ObjectMeta, OwnerReference } from "../src/ObjectMeta.js"

/** An index in `0..length - 1`. */
const index = (length: number): Arbitrary.Arbitrary<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: length - 1 })))

/** One of the values, any kind of value (fast-check's `constantFrom`). */
export const constantFrom = <const A extends ReadonlyArray<unknown>>(...values: A): Arbitrary.Arbitrary<A[number]> =>
  Arbitrary.map(index(values.length), (i) => values[i])

/** A value of one of the arbitraries, each picked alike (fast-check's `oneof`). */
export const oneOf = <A>(...arbitraries: ReadonlyArray<Arbitrary.Arbitrary<A>>): Arbitrary.Arbitrary<A> =>
  Arbitrary.flatMap(index(arbitraries.length), (i) => arbitraries[i]!)

/** A short name from a small alphabet, so collisions (and dedup) happen often. */
const Name = Schema.Literals(["a", "b", "c", "web", "db"])
export const name: Arbitrary.Arbitrary<string> = Arbitrary.schema(Name)

const LabelValue = Schema.Literals(["x", "y", "z"])
/** Up to three labels with the keys `app`, `tier`, `env`, or none at all. */
const Labels = Schema.UndefinedOr(
  Schema.Struct({
    app: Schema.optionalKey(LabelValue),
    tier: Schema.optionalKey(LabelValue),
    env: Schema.optionalKey(LabelValue)
  })
)
export const labels: Arbitrary.Arbitrary<Readonly<Record<string, string>> | undefined> = Arbitrary.schema(Labels)

const OwnerReferenceSchema = Schema.Struct({
  apiVersion: Schema.Literals(["v1", "apps/v1", "apps/v1beta1", "batch/v1", "example.com/v1", "a/b/c"]),
  kind: Schema.Literals(["Deployment", "Job", "Widget"]),
  name: Schema.Literals(["a", "b", "c", ""]),
  uid: Schema.Literals(["u1", "u2"]),
  controller: Schema.optionalKey(Schema.UndefinedOr(Schema.Boolean))
})
export const ownerReference: Arbitrary.Arbitrary<OwnerReference> = Arbitrary.schema(OwnerReferenceSchema)

/** Every field optional (fast-check's `record` with no required keys). */
const Metadata = Schema.Struct({
  name: Schema.optionalKey(Name),
  namespace: Schema.optionalKey(Schema.Literals(["default", "kube-system"])),
  generation: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 }))),
  resourceVersion: Schema.optionalKey(Schema.Literals(["1", "2", "3"])),
  labels: Schema.optionalKey(Labels),
  annotations: Schema.optionalKey(Labels),
  ownerReferences: Schema.optionalKey(Schema.Array(OwnerReferenceSchema).check(Schema.isMaxLength(4)))
})
export const metadata: Arbitrary.Arbitrary<ObjectMeta> = Arbitrary.schema(Metadata)

/** An object with or without metadata. */
export const object: Arbitrary.Arbitrary<HasMetadata> = Arbitrary.schema(
  Schema.Struct({ metadata: Schema.optionalKey(Metadata) })
)

const flag = Arbitrary.schema(Schema.Boolean)

export const event: Arbitrary.Arbitrary<Event.Event<HasMetadata>> = oneOf(
  Arbitrary.map(Arbitrary.all([object, flag]), ([o, initial]) => Event.create(o, { initial })),
  Arbitrary.map(Arbitrary.all([object, object]), ([old, o]) => Event.update(old, o)),
  Arbitrary.map(Arbitrary.all([object, flag]), ([o, finalStateUnknown]) => Event.delete(o, { finalStateUnknown })),
  Arbitrary.map(object, (o) => Event.generic(o))
)

export const deleteEvent: Arbitrary.Arbitrary<Event.Event<HasMetadata>> = Arbitrary.map(
  Arbitrary.all([object, flag]),
  ([o, finalStateUnknown]) => Event.delete(o, { finalStateUnknown })
)
