/**
 * An informer: a {@link Watcher} reflected into a {@link Store}, with a
 * stream of core `Event`s for any number of subscribers.
 *
 * - The first complete list marks the informer **synced**; its objects are
 *   `Create` events with `initial: true`.
 * - A relist replaces the store atomically: objects that appeared are
 *   `Create`, objects whose resourceVersion changed are `Update` (with the old
 *   object), objects that vanished are `Delete` with `finalStateUnknown: true`.
 * - Watch events become `Create`/`Update` (with the old object — what
 *   client-node's informer lacks, and what `generationChanged` needs) and
 *   `Delete`.
 * - **Late subscribers** first get every stored object as `Create` with
 *   `initial: true`, then the live events.
 * - A `transform` runs on every object before it is stored; the default strips
 *   `metadata.managedFields` (often half of an object's metadata, and rarely
 *   read by a reconcile).
 *
 * @since 0.1.0
 */
import type { Event } from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type { Source } from "@reconcile/core/Source"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/informer.js"
import type * as Store from "./Store.js"
import type * as Watcher from "./Watcher.js"

/**
 * A running informer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Informer<A> {
  readonly name: string
  /** The reflected objects. */
  readonly store: Store.Store.Store<A>
  /** Completes once the first list has been stored. */
  readonly synced: Effect.Effect<void>
  /** Whether the first list has been stored. */
  readonly hasSynced: Effect.Effect<boolean>
  /** Stored objects as `Create { initial: true }`, then live events; one subscription per run. */
  readonly events: Stream.Stream<Event<A>>
  /** The informer as a core `Source` (a Kind source). */
  readonly source: Source<A>
}

/**
 * Informer options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<A> {
  /** Applied to every object before it is stored; default {@link stripManagedFields}. */
  readonly transform?: ((object: A) => A) | undefined
  /** Options of the underlying watcher. */
  readonly watcher?: Watcher.Options | undefined
}

/**
 * The default transform: drops `metadata.managedFields`.
 *
 * @since 0.1.0
 * @category transforms
 */
export const stripManagedFields: <A extends HasMetadata>(object: A) => A = internal.stripManagedFields

/**
 * Starts an informer in the current scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <A extends HasMetadata>(
  listWatch: Watcher.ListWatch<A>,
  options?: Options<A>
) => Effect.Effect<Informer<A>, never, Scope.Scope> = internal.make
