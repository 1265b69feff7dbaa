/**
 * The watcher: list + watch of one resource as a `Stream`, that never ends
 * and never fails on its own.
 *
 * - **List** (paginated, 500 per page by default) then **watch** from the
 *   list's resourceVersion with `allowWatchBookmarks`.
 * - Bookmarks advance the resourceVersion; a watch that ends normally (server
 *   timeout) resumes from the last resourceVersion at once.
 * - `410 Gone` — as a watch `ERROR` event, as a failed watch request, or for
 *   an expired `continue` token while listing — **relists**.
 * - Any other error backs off 800 ms → 30 s (×2, with jitter) and retries; the
 *   backoff resets only after real progress (a list completed, an event
 *   received). A `Retry-After` (429, 503) longer than the delay is waited
 *   out in full.
 * - A client-side **idle timeout** (server `timeoutSeconds` + 5 s) ends a
 *   watch that has gone silent without closing, and resumes.
 * - Objects that do not decode are reported (log + `watcher_undecodable_total`)
 *   and skipped; the watch goes on.
 *
 * Output events follow kube-rs: a (re)list is `Init`, one `InitApply` per
 * object, then `InitDone` — consumers (the cache) swap their store
 * atomically at `InitDone` and emit deletes for objects that vanished — and
 * watch events are `Apply` (added or modified) and `Delete`.
 *
 * The watcher is usable alone: it depends only on a {@link ListWatch}, which
 * `KubeClient` provides for any `Resource`.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/watcher.js"
import type * as KubeError from "./KubeError.js"

/**
 * One page of a list.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListPage<A> {
  readonly items: ReadonlyArray<A>
  readonly resourceVersion: string
  readonly continue?: string | undefined
  /** Items that did not decode: reported and skipped by the watcher. */
  readonly undecodable?: ReadonlyArray<KubeError.Decode> | undefined
}

/**
 * A raw watch event as the API server sends it (decoded), or a line that did
 * not decode.
 *
 * @since 0.1.0
 * @category models
 */
export type RawEvent<A> =
  | { readonly _tag: "Added"; readonly object: A }
  | { readonly _tag: "Modified"; readonly object: A }
  | { readonly _tag: "Deleted"; readonly object: A }
  | { readonly _tag: "Bookmark"; readonly resourceVersion: string }
  | { readonly _tag: "Error"; readonly error: KubeError.KubeError }
  | { readonly _tag: "Undecodable"; readonly error: KubeError.Decode }

/**
 * What a watcher needs from the API: list one page, and watch from a
 * resourceVersion.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListWatch<A> {
  /** A name for logs and metrics, e.g. `configmaps` or `apps/v1/deployments in default`. */
  readonly name: string
  readonly list: (options: {
    readonly limit: number
    readonly continue?: string | undefined
  }) => Effect.Effect<ListPage<A>, KubeError.KubeError>
  readonly watch: (options: {
    readonly resourceVersion: string
    readonly allowWatchBookmarks: true
    readonly timeoutSeconds: number
  }) => Stream.Stream<RawEvent<A>, KubeError.KubeError>
  /** The resourceVersion of an object. */
  readonly resourceVersion: (object: A) => string | undefined
}

/**
 * The watcher's output.
 *
 * @since 0.1.0
 * @category models
 */
export type WatcherEvent<A> = Data.TaggedEnum<{
  /** A (re)list starts. */
  Init: {}
  /** An object of the ongoing list. */
  InitApply: { readonly object: A }
  /** The list is complete: the objects since `Init` are the whole state. */
  InitDone: { readonly resourceVersion: string }
  /** An object was added or modified. */
  Apply: { readonly object: A }
  /** An object was deleted. */
  Delete: { readonly object: A }
}>

interface WatcherEventDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: WatcherEvent<this["A"]>
}

/**
 * Constructors and `$match` for {@link WatcherEvent}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const WatcherEvent = Data.taggedEnum<WatcherEventDefinition>()

/**
 * Watcher options; defaults match client-go and kube-rs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Page size of lists (default 500). */
  readonly pageSize?: number | undefined
  /** Server-side watch timeout in seconds (default 290, as client-go's reflector picks 5–10 min; kube-rs 290). */
  readonly timeoutSeconds?: number | undefined
  /** First backoff delay (default 800 ms). */
  readonly initialBackoff?: Duration.Input | undefined
  /** Largest backoff delay (default 30 s). */
  readonly maxBackoff?: Duration.Input | undefined
  /** Jitter factor of each delay: delay × (1 ± jitter/2) (default 1: a delay in [0.5d, 1.5d], capped at max). */
  readonly jitter?: number | undefined
}

/**
 * The watcher stream of `listWatch`.
 *
 * @example
 * ```ts
 * const events = Watcher.watch(KubeClient.listWatch(Resource.ConfigMap, { namespace: "default" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch: <A>(listWatch: ListWatch<A>, options?: Options) => Stream.Stream<WatcherEvent<A>> = internal.watch
