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
 * - `health` (also the sources' `health`) follows the watch connection, so a
 *   controller can report not ready while it is lost.
 * - **Objects that stop decoding** stay visible: the store drops the last
 *   decoded copy (a `Delete` with `finalStateUnknown: true` on `events`, since
 *   the server still has the object) and keeps the object's latest metadata as
 *   an `Undecodable` (on the `undecodable` source), until it decodes again or
 *   is deleted. `informer_decode_failures_total{informer, kind}` counts the
 *   objects received that did not decode; `informer_undecodable_objects{informer}`
 *   is how many the store holds.
 * - A `transform` runs on every object before it is stored; the default strips
 *   `metadata.managedFields` (often half of an object's metadata, and rarely
 *   read by a reconcile).
 *
 * @since 0.1.0
 */
import type { Event } from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type { Health, Source } from "@reconcile/core/Source"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/informer.js"
import type * as KubeError from "./KubeError.js"
import type * as Store from "./Store.js"
import type * as Undecodable from "./Undecodable.js"
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
  readonly store: Store.Store<A>
  /**
   * Completes once the first list has been stored. Fails when the informer cannot start: a failure retrying will
   * not fix before the first list (a diagnosed `KubeError`: a CRD not installed, a missing namespace, 403, 401, an
   * unreachable server); the informer then stops, its `events` and sources end with that error as a defect (so a
   * controller and its Manager stop with it at once), and the cache's reads of it fail with it.
   */
  readonly synced: Effect.Effect<void, KubeError.KubeError>
  /** Whether the first list has been stored. */
  readonly hasSynced: Effect.Effect<boolean>
  /**
   * Stored objects as `Create { initial: true }`, then live events; one subscription per run. Dies with the
   * startup failure (the `KubeError` of `synced`) when the informer could not start.
   */
  readonly events: Stream.Stream<Event<A>>
  /** The informer as a core `Source` (a Kind source); its `health` is the informer's. */
  readonly source: Source<A>
  /**
   * The watch connection: `Disconnected` (since the server was last heard from) after a failed list or
   * watch or an idle watch, `Connected` again once the server is heard from.
   */
  readonly health: Effect.Effect<Health>
  /**
   * Objects that exist but do not decode, as a `Source` of `Undecodable`
   * values (their latest metadata and the decode failure): `Create` when an
   * object stops decoding, `Update` on each new version, `Delete` when it is
   * deleted or decodes again. Late subscribers get the current ones first.
   */
  readonly undecodable: Source<Undecodable.Undecodable>
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
  /**
   * Fail at start (default `true`): a diagnosed failure before the first list fails `synced` at once instead of
   * retrying (see `Watcher.Options.startup`). `false` retries until it works, as before.
   */
  readonly failAtStart?: boolean | undefined
}

/**
 * The default transform: drops `metadata.managedFields`, and keeps one shared copy of the short strings many
 * cached objects repeat (namespace, creation time, label values) instead of one per object.
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
