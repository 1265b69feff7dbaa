/**
 * The shared cache: one informer per (resource, namespace, label selector,
 * field selector), shared by every controller that asks for it, each with a
 * store that answers `get`/`list` and indexes, and a Kind `Source` for
 * controllers.
 *
 * Informers start on first use and live as long as the Cache (its scope).
 * `waitForSync` completes when every informer started so far has synced.
 *
 * @since 0.1.0
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type { Source } from "@reconcile/core/Source"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Informer from "./Informer.js"
import * as internal from "./internal/cache.js"
import type * as KubeClient from "./KubeClient.js"
import type * as KubeError from "./KubeError.js"
import type * as Resource from "./Resource.js"
import type * as Watcher from "./Watcher.js"

/**
 * Which objects of a resource an informer holds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Selection {
  /** Only this namespace (default: all namespaces). */
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** A range of the hash space, where the server supports it (see `KubeClient.ListOptions.shardSelector`). */
  readonly shardSelector?: string | undefined
}

/**
 * Turns a resource and a selection into the list/watch calls of an informer.
 *
 * @since 0.1.0
 * @category models
 */
export type ListWatchFor = <A extends HasMetadata>(
  resource: Resource.Resource<A>,
  selection: Selection
) => Watcher.ListWatch<A>

/**
 * Cache options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Informer options for every informer (transform, watcher backoff…). */
  readonly informer?: Informer.Options<any> | undefined
  /**
   * Restricts the cache to one namespace (controller-runtime's `cache.Options.DefaultNamespaces`): every informer of
   * a namespaced kind watches only `namespace`, and `get`/`list` without a namespace read it. Cluster-scoped kinds
   * are watched as before.
   *
   * @since 0.1.0
   */
  readonly namespace?: string | undefined
  /**
   * A label selector that every informer of a kind adds to its own (controller-runtime's `ByObject` label), or
   * `undefined` for none. Default: when the Layer's context has a `Sharding` service, that shard's selector for the
   * ring's kinds, so a shard caches only its own objects.
   *
   * @since 0.1.0
   */
  readonly labelSelectorOf?: ((resource: Resource.Resource<any>) => string | undefined) | undefined
}

/**
 * The cache service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Cache extends Context.Service<Cache, Cache.Service>()("@reconcile/kube/Cache") {}

/**
 * @since 0.1.0
 */
export declare namespace Cache {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The shared informer for `resource` and `selection`, started on first use. */
    readonly informer: <A extends HasMetadata>(
      resource: Resource.Resource<A>,
      selection?: Selection
    ) => Effect.Effect<Informer.Informer<A>>
    /** A Kind source for controllers (late subscribers get existing objects as initial creates). */
    readonly source: <A extends HasMetadata>(
      resource: Resource.Resource<A>,
      selection?: Selection
    ) => Effect.Effect<Source<A>>
    /**
     * Completes when every informer started so far has synced; fails with the first informer's startup failure
     * (a diagnosed `KubeError`: a CRD not installed, a missing namespace, 403, 401, an unreachable server).
     */
    readonly waitForSync: Effect.Effect<void, KubeError.KubeError>
    /**
     * A cached read: from the store of an unfiltered informer of `resource`
     * (cluster-wide, or of that namespace) once it has synced — absent there
     * means `NotFound`, and an object that exists but does not decode fails
     * with its `KubeError.Decode` (carrying the object's metadata) — and a live
     * `KubeClient` read for kinds the cache does not watch.
     */
    readonly get: <A extends HasMetadata>(
      resource: Resource.Resource<A>,
      name: string,
      options?: { readonly namespace?: string | undefined }
    ) => Effect.Effect<A, KubeError.KubeError>
    /**
     * A cached list (or a live one for kinds the cache does not watch), optionally by namespace and labels; objects
     * that do not decode are not in it (see `Store.listUndecodable`).
     */
    readonly list: <A extends HasMetadata>(
      resource: Resource.Resource<A>,
      options?: {
        readonly namespace?: string | undefined
        readonly labels?: Readonly<Record<string, string>> | undefined
      }
    ) => Effect.Effect<ReadonlyArray<A>, KubeError.KubeError>
    /** Number of informers (each one list+watch connection). */
    readonly informers: Effect.Effect<number>
  }
}

/**
 * Makes a cache whose informers live in the current scope. Without a live
 * reader (`Cache.layer` uses the `KubeClient`), reads of kinds the cache does
 * not watch are defects.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (listWatchFor: ListWatchFor, options?: Options) => Effect.Effect<Cache.Service, never, Scope.Scope> =
  internal.make

/**
 * The list/watch calls of `client` for a resource and selection: what the
 * cache's informers (and any standalone `Watcher`) run on.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listWatch: <A extends HasMetadata>(
  client: KubeClient.KubeClient.Service,
  resource: Resource.Resource<A>,
  selection?: Selection
) => Watcher.ListWatch<A> = internal.listWatch

/**
 * A Layer providing the cache over the `KubeClient`. Resources given to the
 * cache must be `Resource` descriptors.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Cache, never, KubeClient.KubeClient> =>
  Layer.effect(Cache, internal.fromClient(options))

/**
 * The key identifying an informer: resource and selection.
 *
 * @since 0.1.0
 * @category utils
 */
export const informerKey: (resource: Resource.Resource<any>, selection?: Selection) => string = internal.informerKey
