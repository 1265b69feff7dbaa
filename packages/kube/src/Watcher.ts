/**
 * The watcher: list + watch of one resource as a `Stream`, that never ends
 * and never fails on its own.
 *
 * - **List** (paginated, 500 per page by default) then **watch** from the
 *   list's resourceVersion with `allowWatchBookmarks`. The next page is asked
 *   for as soon as a page arrives, while its objects are being applied: a
 *   paged list costs about the slower of the server and the client, not their
 *   sum.
 * - Bookmarks advance the resourceVersion; a watch that ends normally (server
 *   timeout) resumes from the last resourceVersion at once.
 * - `410 Gone` — as a watch `ERROR` event, as a failed watch request, or for
 *   an expired `continue` token while listing — **relists**.
 * - Any other error backs off 800 ms → 30 s (×2, with jitter) and retries; the
 *   backoff resets only after real progress (a list completed, an event
 *   received). A `Retry-After` (429, 503) longer than the delay is waited
 *   out in full.
 * - **Silent connections** are noticed within the idle limit (55 s by
 *   default): a watch that delivers nothing — no event, no bookmark, no end —
 *   for `idleTimeout` (default the smaller of `timeoutSeconds` + 5 s and twice
 *   the server's `bookmarkInterval`) is dropped and resumed. The default
 *   `timeoutSeconds` (50) is short so that a healthy kube-apiserver, which
 *   sends a bookmark 2 s before a watch's timeout and ends it at the timeout,
 *   is never silent for longer than that.
 * - **Resets**: before resuming after a failure, or after a watch that
 *   delivered nothing, the watcher asks the server whether it still serves the
 *   resourceVersion (`checkResourceVersion`: a one-item list "not older than"
 *   it). A server whose resourceVersions went back (restarted over a new or
 *   restored store) answers 504 "Too large resource version" — as it does to a
 *   list or a watch-list from there — and the watcher **relists** from scratch;
 *   the informer then deletes what vanished and creates what is new.
 * - Health: `onHealth` hears when the connection is lost (the first failure
 *   after the server was last heard from) and when it is back (the next list
 *   page, event, bookmark, check or normal end); `watcher_reconnects_total
 *   {watch, reason}` counts the attempts to re-establish the list+watch after
 *   something went wrong (`error`, `idle`, `expired`, `reset`).
 * - Objects that do not decode never stop the watch. One whose error carries
 *   its metadata (an object with a readable, named `metadata`) is an
 *   `Undecodable` event, so the cache keeps it visible; any other line is
 *   reported (log + `watcher_undecodable_total`) and skipped.
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
import type { Health } from "@reconcile/core/Source"
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
  /**
   * Items that did not decode: those whose error carries the object's metadata
   * become `Undecodable` events, the others are reported and skipped.
   */
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
  | {
    readonly _tag: "Undecodable"
    readonly error: KubeError.Decode
    /** The event the line was, when it was an added, modified or deleted object that did not decode. */
    readonly type?: "Added" | "Modified" | "Deleted" | undefined
  }

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
  /**
   * Succeeds when the server can still serve `resourceVersion` (a one-item list not older than it); fails with
   * its answer otherwise — 504 "Too large resource version" from a reset server, 410 when it is too old. Optional:
   * without it the watcher resumes without checking (and a reset is noticed only when the server says so).
   */
  readonly checkResourceVersion?: ((resourceVersion: string) => Effect.Effect<void, KubeError.KubeError>) | undefined
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
  /**
   * An object that does not decode, named by its error's `metadata`: an item of
   * the ongoing list (`event: "InitApply"`), or an object added or modified
   * (`"Apply"`) or deleted (`"Delete"`).
   */
  Undecodable: { readonly error: KubeError.Decode; readonly event: "InitApply" | "Apply" | "Delete" }
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
  /**
   * Server-side watch timeout in seconds (default 50; client-go's reflector picks 5–10 min, kube-rs 290).
   * kube-apiserver sends a bookmark 2 s before it and ends the watch at it, so with 50 s a healthy watch is
   * never silent for more than ~50 s and a silent connection is noticed within the idle limit (55 s). The cost:
   * one watch request per informer every 50 s instead of every 5 minutes. Raise it (and the idle limit with it)
   * to trade detection time for fewer requests.
   */
  readonly timeoutSeconds?: number | undefined
  /**
   * How often the server sends a bookmark on a quiet watch (default 1 minute: kube-apiserver's fixed period;
   * the testkit's `bookmarkInterval`). Twice this bounds the idle limit.
   */
  readonly bookmarkInterval?: Duration.Input | undefined
  /**
   * A watch that delivers nothing — no event, no bookmark, no end — for this long is taken for dead, dropped
   * and resumed (default: the smaller of `timeoutSeconds` + 5 s and 2 × `bookmarkInterval`, 55 s).
   */
  readonly idleTimeout?: Duration.Input | undefined
  /**
   * Hears the connection's health: `Disconnected` at the first failure (a failed list, watch or check, or an
   * idle watch) after the server was last heard from — `since` is that last time — and `Connected` when the
   * server is heard from again. The informer makes it its source's `health`.
   */
  readonly onHealth?: ((health: Health) => Effect.Effect<void>) | undefined
  /** First backoff delay (default 800 ms). */
  readonly initialBackoff?: Duration.Input | undefined
  /** Largest backoff delay (default 30 s). */
  readonly maxBackoff?: Duration.Input | undefined
  /** Jitter factor of each delay: delay × (1 ± jitter/2) (default 1: a delay in [0.5d, 1.5d], capped at max). */
  readonly jitter?: number | undefined
  /**
   * What a failure retrying will not fix — one that carries a `Diagnosis`: a CRD not installed, a
   * missing namespace, 403, 401, an unreachable server (after the client's own short retries) — does before the
   * first list has completed: `"retry"` (the default) backs off and retries as for any failure; `"fail"` ends the
   * stream with that error at once (what an informer does, so an operator fails at start with the fix instead of
   * waiting for a cache-sync timeout). After the first list, such failures are always retried.
   *
   * Either way each distinct failure is logged once — at error with its fix when diagnosed, else as a warning —
   * and retried quietly (debug) until the list or watch works again ("watch connected again" at info).
   */
  readonly startup?: "retry" | "fail" | undefined
}

/**
 * The watcher stream of `listWatch`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Cache, KubeClient, Resource, Watcher } from "@reconcile/kube"
 *
 * const events = Effect.map(KubeClient.KubeClient, (client) =>
 *   Watcher.watch(Cache.listWatch(client, Resource.ConfigMap, { namespace: "default" })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch: {
  <A>(listWatch: ListWatch<A>, options: Options & { readonly startup: "fail" }): Stream.Stream<
    WatcherEvent<A>,
    KubeError.KubeError
  >
  <A>(listWatch: ListWatch<A>, options?: Options): Stream.Stream<WatcherEvent<A>>
} = (<A>(listWatch: ListWatch<A>, options?: Options) => internal.watch(listWatch, options)) as any
