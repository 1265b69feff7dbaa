/**
 * A store of objects keyed by `namespace/name`, with indexes: the state an
 * informer keeps and a reconcile reads (level-based: the reconcile reads
 * current state here, never from the event).
 *
 * Objects that exist but do not decode are kept apart, as `Undecodable`
 * values with their latest metadata (`undecodable`, `listUndecodable`): typed
 * reads never see them, and they never shadow a stale decoded copy.
 *
 * Built-in indexes: {@link byNamespace} and {@link byOwnerUid}; labels are
 * matched with {@link Store.Store.list}'s `labels` filter; custom indexes are
 * added with `addIndex`.
 *
 * @since 0.1.0
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as internal from "./internal/store.js"
import type * as Undecodable from "./Undecodable.js"

/**
 * The name of the namespace index (cluster-scoped objects index as `""`).
 *
 * @since 0.1.0
 * @category constants
 */
export const byNamespace = "namespace"

/**
 * The name of the owner-uid index: every owner reference's uid.
 *
 * @since 0.1.0
 * @category constants
 */
export const byOwnerUid = "ownerUid"

/**
 * An index function: the values `object` is indexed under.
 *
 * @since 0.1.0
 * @category models
 */
export type IndexFunction<A> = (object: A) => ReadonlyArray<string>

/**
 * @since 0.1.0
 */
export declare namespace Store {
  /**
   * A read view of a store. Reads are synchronous snapshots; the objects are
   * shared, so treat them as read-only.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Store<A> {
    /** The object `name` in `namespace` (omit for cluster-scoped objects). */
    readonly get: (name: string, namespace?: string | undefined) => A | undefined
    /** All objects, optionally of one namespace and/or matching every given label. */
    readonly list: (options?: {
      readonly namespace?: string | undefined
      readonly labels?: Readonly<Record<string, string>> | undefined
    }) => ReadonlyArray<A>
    /** The objects indexed under `value` by the index `name`. */
    readonly byIndex: (name: string, value: string) => ReadonlyArray<A>
    /** Number of objects. */
    readonly size: () => number
    /**
     * The object `name` in `namespace` when it exists but does not decode: its
     * latest metadata and the decode failure (such an object is not in
     * `get`/`list`/`byIndex`).
     */
    readonly undecodable: (name: string, namespace?: string | undefined) => Undecodable.Undecodable | undefined
    /** Every object that does not decode. */
    readonly listUndecodable: () => ReadonlyArray<Undecodable.Undecodable>
    /** Adds an index (existing objects are indexed at once). */
    readonly addIndex: (name: string, index: IndexFunction<A>) => void
  }
}

/**
 * The key of an object in a store: `namespace/name`, or `name` when cluster-scoped.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyOf: (object: HasMetadata) => string = internal.keyOf

/**
 * An empty mutable store (the informer's); exposed for tests and custom reflectors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A extends HasMetadata>(): internal.MutableStore<A> => new internal.MutableStore<A>()

/**
 * A mutable store: a {@link Store.Store} plus the writes a reflector performs.
 *
 * @since 0.1.0
 * @category models
 */
export type MutableStore<A extends HasMetadata> = internal.MutableStore<A>
