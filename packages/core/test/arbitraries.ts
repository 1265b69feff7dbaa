/**
 * fast-check arbitraries shared by the core tests (effect's bundled fast-check,
 * the one `@effect/vitest`'s `it.prop` runs).
 */
import { FastCheck as fc } from "effect"
import * as Event from "../src/Event.js"
import type { HasMetadata, ObjectMeta, OwnerReference } from "../src/ObjectMeta.js"

/** A short name from a small alphabet, so collisions (and dedup) happen often. */
export const name = fc.constantFrom("a", "b", "c", "web", "db")

export const labelKey = fc.constantFrom("app", "tier", "env")
export const labelValue = fc.constantFrom("x", "y", "z")
export const labels: fc.Arbitrary<Readonly<Record<string, string>> | undefined> = fc.option(
  fc.dictionary(labelKey, labelValue, { maxKeys: 3 }),
  { nil: undefined }
)

export const ownerReference: fc.Arbitrary<OwnerReference> = fc.record(
  {
    apiVersion: fc.constantFrom("v1", "apps/v1", "apps/v1beta1", "batch/v1", "example.com/v1", "a/b/c"),
    kind: fc.constantFrom("Deployment", "Job", "Widget"),
    name: fc.constantFrom("a", "b", "c", ""),
    uid: fc.constantFrom("u1", "u2"),
    controller: fc.option(fc.boolean(), { nil: undefined })
  },
  { requiredKeys: ["apiVersion", "kind", "name", "uid"] }
)

export const metadata: fc.Arbitrary<ObjectMeta> = fc.record(
  {
    name,
    namespace: fc.constantFrom("default", "kube-system"),
    generation: fc.integer({ min: 1, max: 3 }),
    resourceVersion: fc.constantFrom("1", "2", "3"),
    labels,
    annotations: labels,
    ownerReferences: fc.array(ownerReference, { maxLength: 4 })
  },
  { requiredKeys: [] }
)

export const object: fc.Arbitrary<HasMetadata> = fc.option(metadata, { nil: undefined }).map((metadata) =>
  metadata === undefined ? {} : { metadata }
)

export const event: fc.Arbitrary<Event.Event<HasMetadata>> = fc.oneof(
  fc.tuple(object, fc.boolean()).map(([o, initial]) => Event.create(o, { initial })),
  fc.tuple(object, object).map(([old, o]) => Event.update(old, o)),
  fc.tuple(object, fc.boolean()).map(([o, finalStateUnknown]) => Event.delete(o, { finalStateUnknown })),
  object.map((o) => Event.generic(o))
)

export const deleteEvent = fc.tuple(object, fc.boolean()).map(([o, finalStateUnknown]) =>
  Event.delete(o, { finalStateUnknown })
)
