/**
 * What a source tells a controller about an object: it was created, updated,
 * deleted, or something else happened to it (a resync, a webhook, an external
 * system).
 *
 * Events are `Data` values (structural equality). The controller is
 * level-based: an event only says *which* object to look at, the reconcile
 * reads the current state itself.
 *
 * @since 0.1.0
 */
import type * as Data from "effect/Data"
import { dual } from "effect/Function"

/**
 * An object appeared. `initial` is `true` when it comes from a source's
 * initial state (the first list of a watch, or a late subscriber catching up)
 * rather than from a real creation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Create<A> {
  readonly _tag: "Create"
  readonly object: A
  readonly initial: boolean
}

/**
 * An object changed from `old` to `object`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Update<A> {
  readonly _tag: "Update"
  readonly old: A
  readonly object: A
}

/**
 * An object disappeared. `finalStateUnknown` is `true` when the deletion was
 * missed (e.g. noticed on a relist) and `object` is the last state seen, not
 * the final one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Delete<A> {
  readonly _tag: "Delete"
  readonly object: A
  readonly finalStateUnknown: boolean
}

/**
 * Something happened to an object that is not a create, update or delete: a
 * periodic resync, an external trigger.
 *
 * @since 0.1.0
 * @category models
 */
export interface Generic<A> {
  readonly _tag: "Generic"
  readonly object: A
}

/**
 * An event about an object of type `A`: a `Data.TaggedEnum`-style union.
 *
 * @example
 * ```ts
 * import { Event } from "@reconcile/core"
 *
 * const describe = (e: Event.Event<{ readonly metadata: { readonly name: string } }>) =>
 *   Event.match(e, {
 *     Create: (c) => `created ${c.object.metadata.name}`,
 *     Update: (u) => `updated ${u.object.metadata.name}`,
 *     Delete: (d) => `deleted ${d.object.metadata.name}`,
 *     Generic: (g) => `touched ${g.object.metadata.name}`
 *   })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Event<A> = Create<A> | Update<A> | Delete<A> | Generic<A>

/**
 * The `Data.TaggedEnum.WithGenerics` definition of {@link Event}, for use with
 * `Data.TaggedEnum` utilities.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: Event<this["A"]>
}

// The constructors build plain objects of `Data.taggedEnum`'s shape (its fields, then `_tag`) without going through
// its Proxy: an event is made per object per watch event, on the informer's hot path.

/**
 * Makes a `Create` event; `initial` defaults to `false`.
 *
 * @example
 * ```ts
 * import { Event } from "@reconcile/core"
 *
 * const e = Event.create({ metadata: { name: "web" } }, { initial: true })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const create = <A>(object: A, options?: { readonly initial?: boolean | undefined }): Event<A> => ({
  object,
  initial: options?.initial ?? false,
  _tag: "Create"
})

/**
 * Makes an `Update` event from the old and the new state of an object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const update = <A>(old: A, object: A): Event<A> => ({ old, object, _tag: "Update" })

/**
 * Makes a `Delete` event; `finalStateUnknown` defaults to `false`. Exported as
 * `delete` (a reserved word, so it is declared under another name).
 *
 * @since 0.1.0
 * @category constructors
 */
const delete_ = <A>(object: A, options?: { readonly finalStateUnknown?: boolean | undefined }): Event<A> => ({
  object,
  finalStateUnknown: options?.finalStateUnknown ?? false,
  _tag: "Delete"
})

export {
  /**
   * Makes a `Delete` event; `finalStateUnknown` defaults to `false`.
   *
   * @example
   * ```ts
   * import { Event } from "@reconcile/core"
   *
   * const e = Event.delete({ metadata: { name: "web" } }, { finalStateUnknown: true })
   * ```
   *
   * @since 0.1.0
   * @category constructors
   */
  delete_ as delete
}

/**
 * Makes a `Generic` event.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generic = <A>(object: A): Event<A> => ({ object, _tag: "Generic" })

/**
 * Whether an event is a `Create`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isCreate = <A>(e: Event<A>): e is Create<A> => e._tag === "Create"

/**
 * Whether an event is an `Update`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isUpdate = <A>(e: Event<A>): e is Update<A> => e._tag === "Update"

/**
 * Whether an event is a `Delete`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDelete = <A>(e: Event<A>): e is Delete<A> => e._tag === "Delete"

/**
 * Whether an event is a `Generic`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isGeneric = <A>(e: Event<A>): e is Generic<A> => e._tag === "Generic"

/**
 * One function per kind of event, as taken by {@link match}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cases<A, B, C, D, E> {
  readonly Create: (e: Create<A>) => B
  readonly Update: (e: Update<A>) => C
  readonly Delete: (e: Delete<A>) => D
  readonly Generic: (e: Generic<A>) => E
}

/**
 * Folds an event with one function per kind. Data-first or pipeable.
 *
 * @since 0.1.0
 * @category pattern matching
 */
export const match: {
  <A, B, C = B, D = B, E = B>(cases: Cases<A, B, C, D, E>): (self: Event<A>) => B | C | D | E
  <A, B, C = B, D = B, E = B>(self: Event<A>, cases: Cases<A, B, C, D, E>): B | C | D | E
} = dual(2, <A, B, C, D, E>(self: Event<A>, cases: Cases<A, B, C, D, E>): B | C | D | E => {
  switch (self._tag) {
    case "Create":
      return cases.Create(self)
    case "Update":
      return cases.Update(self)
    case "Delete":
      return cases.Delete(self)
    case "Generic":
      return cases.Generic(self)
  }
})

/**
 * The object an event is about; the new state on `Update`.
 *
 * @since 0.1.0
 * @category getters
 */
export const object = <A>(e: Event<A>): A => e.object

/**
 * Every object an event carries: `[old, object]` on `Update`, `[object]`
 * otherwise.
 *
 * @since 0.1.0
 * @category getters
 */
export const objects = <A>(e: Event<A>): ReadonlyArray<A> => e._tag === "Update" ? [e.old, e.object] : [e.object]
