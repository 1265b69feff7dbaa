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
 * matched with {@link Store.list}'s `labels` filter; custom indexes are
 * added with `addIndex`.
 *
 * **Reflector.** {@link reflector} feeds a store from any watcher stream
 * (kube-rs's `reflector(writer, stream)`): each chunk of watcher events is
 * applied in one step, and the stream says what changed. `Informer.make` is
 * a reflector over `Watcher.watch` plus a broadcast of its changes.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Cache, KubeClient, Resource, Store, Watcher } from "@reconcile/kube"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* KubeClient.KubeClient
 *   const store = Store.make<Resource.ConfigMap>()
 *   yield* Watcher.watch(Cache.listWatch(client, Resource.ConfigMap, { namespace: "default" })).pipe(
 *     Store.reflector(store),
 *     Stream.runForEach((changes) => Effect.log(`${changes.events.length} changes, ${store.size()} objects`))
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { Event } from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import { dual } from "effect/Function"
import * as Stream from "effect/Stream"
import * as internal from "./internal/store.js"
import type * as KubeError from "./KubeError.js"
import type * as Undecodable from "./Undecodable.js"
import type * as Watcher from "./Watcher.js"

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

/**
 * The key of an object in a store: `namespace/name`, or `name` when cluster-scoped.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyOf: (object: HasMetadata) => string = internal.keyOf

/**
 * An empty mutable store: what {@link reflector} writes to.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A extends HasMetadata>(): internal.MutableStore<A> => new internal.MutableStore<A>()

/**
 * A mutable store: a {@link Store} plus the writes a reflector performs, and
 * its `revision` (how many writes changed it).
 *
 * @since 0.1.0
 * @category models
 */
export type MutableStore<A extends HasMetadata> = internal.MutableStore<A>

/**
 * What one chunk of watcher events changed in a store, as {@link reflector}
 * emits it: the core events the changes mean (what an informer broadcasts).
 *
 * @since 0.1.0
 * @category models
 */
export interface Changes<A> {
  /**
   * The decoded objects' events: `Create` (`initial` for the first list), `Update` with the old object, `Delete`
   * (`finalStateUnknown` when a relist no longer has the object, or when it stopped decoding).
   */
  readonly events: ReadonlyArray<Event<A>>
  /** The same for objects that do not decode: their `Undecodable` values. */
  readonly undecodable: ReadonlyArray<Event<Undecodable.Undecodable>>
  /** The decode failures among the watcher events (each `Undecodable` watcher event's error). */
  readonly decodeFailures: ReadonlyArray<KubeError.Decode>
  /** Whether the chunk completed a list (`InitDone`): the store then holds a whole state of the server. */
  readonly listed: boolean
  /**
   * The store's `revision` once the chunk was applied: a snapshot of the store read at a revision at least this one
   * already holds these changes (how a late subscriber skips what its snapshot has).
   */
  readonly revision: number
}

/**
 * Options of {@link reflector}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReflectorOptions<A> {
  /** Applied to every object before it is stored (default: none; the informer strips `managedFields`). */
  readonly transform?: ((object: A) => A) | undefined
}

/**
 * Feeds `store` from a watcher stream and emits what each chunk changed
 * (kube-rs's `reflector`). A list (`Init`, `InitApply`…, `InitDone`) replaces
 * the store atomically at `InitDone`; `Apply` and `Delete` write through; an
 * `Undecodable` event keeps the object's latest metadata apart (see the module
 * header). Each chunk is applied in one synchronous step; chunks that change
 * nothing to report (pages of a list) emit nothing. One reflector per store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reflector: {
  <A extends HasMetadata>(
    store: MutableStore<A>,
    options?: ReflectorOptions<A>
  ): <E, R>(stream: Stream.Stream<Watcher.WatcherEvent<A>, E, R>) => Stream.Stream<Changes<A>, E, R>
  <A extends HasMetadata, E, R>(
    stream: Stream.Stream<Watcher.WatcherEvent<A>, E, R>,
    store: MutableStore<A>,
    options?: ReflectorOptions<A>
  ): Stream.Stream<Changes<A>, E, R>
} = dual((args) => Stream.isStream(args[0]), internal.reflector)
