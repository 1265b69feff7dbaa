/**
 * The typed Kubernetes client: CRUD, patches, the status subresource and raw
 * watches for any {@link Resource.Resource}.
 *
 * Every request path comes from the resource descriptor (no discovery);
 * objects are decoded with the descriptor (custom resources through their
 * Schemas) and every failure is a {@link KubeError.KubeError}.
 *
 * Namespaces: `get`, `patch`, `delete` use `options.namespace`, else the
 * kubeconfig context's namespace; `create`/`replace` use the object's
 * `metadata.namespace` first. `list` and `watch` without a namespace cover
 * all namespaces. Cluster-scoped kinds ignore namespaces.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Kube, KubeClient, KubeError, Resource } from "@reconcile/kube"
 *
 * const program = Effect.gen(function*() {
 *   yield* KubeClient.create(Resource.ConfigMap, { metadata: { name: "settings" }, data: { mode: "fast" } }).pipe(
 *     KubeError.ignoreAlreadyExists
 *   )
 *   const cms = yield* KubeClient.listAll(Resource.ConfigMap, { namespace: "default", labelSelector: "app=web" })
 *   yield* KubeClient.patch(Resource.ConfigMap, "settings", { data: { mode: "safe" } }, { type: "merge" })
 * })
 *
 * program.pipe(Effect.provide(KubeClient.layer.pipe(Layer.provide(Kube.layerFromDefault()))))
 * ```
 *
 * @since 0.1.0
 */
import type { ObjectMeta } from "@reconcile/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as internal from "./internal/kubeClient.js"
import type * as Kube from "./Kube.js"
import type * as KubeError from "./KubeError.js"
import type * as KubeStatus from "./KubeStatus.js"
import type * as Resource from "./Resource.js"

/**
 * The client service.
 *
 * @since 0.1.0
 * @category tags
 */
export class KubeClient extends Context.Service<KubeClient, KubeClient.Service>()("@reconcile/kube/KubeClient") {}

/**
 * @since 0.1.0
 */
export declare namespace KubeClient {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Reads one object. */
    readonly get: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      name: string,
      options?: GetOptions
    ) => Effect.Effect<A, KubeError.KubeError>
    /** Reads one page (`limit`/`continue`); undecodable items are reported in `undecodable`, not failed. */
    readonly list: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      options?: ListOptions
    ) => Effect.Effect<ObjectList<A>, KubeError.KubeError>
    /** Reads every page (`limit` per page, default 500) of one consistent snapshot; an expired continue is `Gone`. */
    readonly listAll: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      options?: ListOptions
    ) => Effect.Effect<ObjectList<A>, KubeError.KubeError>
    /** Creates an object. */
    readonly create: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      object: A,
      options?: WriteOptions
    ) => Effect.Effect<A, KubeError.KubeError>
    /** Replaces an object (PUT); with `metadata.resourceVersion` set, a stale write is a `Conflict`. */
    readonly replace: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      object: A,
      options?: WriteOptions
    ) => Effect.Effect<A, KubeError.KubeError>
    /** Patches an object: JSON merge, JSON patch, strategic merge or server-side apply. */
    readonly patch: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      name: string,
      patch: unknown,
      options: PatchOptions
    ) => Effect.Effect<A, KubeError.KubeError>
    /** Deletes an object: `Deleted`, or `Pending` with the object while finalizers hold it. */
    readonly delete: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      name: string,
      options?: DeleteOptions
    ) => Effect.Effect<DeleteResult<A>, KubeError.KubeError>
    /** Replaces the `status` subresource (only `status` changes). */
    readonly replaceStatus: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      object: A,
      options?: WriteOptions
    ) => Effect.Effect<A, KubeError.KubeError>
    /** Patches the `status` subresource. */
    readonly patchStatus: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      name: string,
      patch: unknown,
      options: PatchOptions
    ) => Effect.Effect<A, KubeError.KubeError>
    /**
     * One raw watch request as a stream of events (see {@link WatchEvent}).
     * It ends when the server closes the watch (timeout), fails when the
     * request fails or the connection breaks; it is not resumed or retried
     * (that is the watcher's job). A line that is not JSON, or an object
     * that does not decode, is an `Undecodable` element: it never fails or
     * ends the stream.
     */
    readonly watch: <A extends ObjectMeta.HasMetadata>(
      resource: Resource.Resource<A>,
      options?: WatchOptions
    ) => Stream.Stream<WatchEvent<A>, KubeError.KubeError>
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface GetOptions {
  readonly namespace?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  /** Without one, all namespaces. */
  readonly namespace?: string | undefined
  /** `app=web,tier!=db`, `env in (a,b)`, … */
  readonly labelSelector?: string | undefined
  /** `metadata.name=x`, `metadata.namespace!=kube-system`. */
  readonly fieldSelector?: string | undefined
  /**
   * A range of the hash space (`shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`, joined
   * by `||`): Kubernetes ≥ 1.36 with the `ShardedListAndWatch` feature gate; other servers ignore it (see
   * {@link ObjectList}'s `shardSelector`).
   */
  readonly shardSelector?: string | undefined
  /** Page size (`listAll`: default 500). */
  readonly limit?: number | undefined
  /** The `continue` token of the previous page. */
  readonly continue?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "Exact" | "NotOlderThan" | undefined
}

/**
 * A page of objects.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectList<A> {
  readonly items: ReadonlyArray<A>
  /** The collection's resourceVersion: watch from here. */
  readonly resourceVersion: string
  /** The token of the next page, if any. */
  readonly continue: string | undefined
  readonly remainingItemCount: number | undefined
  /** The shard selector the server applied (`metadata.shardInfo.selector`); `undefined` when it applied none. */
  readonly shardSelector?: string | undefined
  /** Items that did not decode (skipped). */
  readonly undecodable: ReadonlyArray<KubeError.Decode>
}

/**
 * Options of writes.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  /** For `create`: the namespace when the object has none. */
  readonly namespace?: string | undefined
  /** The field manager recorded in `managedFields` (default: the user agent's product, `reconcile`). */
  readonly fieldManager?: string | undefined
  /** Validate without persisting (`dryRun=All`). */
  readonly dryRun?: boolean | undefined
}

/**
 * The patch formats.
 *
 * @since 0.1.0
 * @category models
 */
export type PatchType = "merge" | "json" | "strategic" | "apply"

/**
 * Options of patches. Bodies: `merge` and `strategic` take a partial object,
 * `json` an array of RFC 6902 operations, `apply` the fully specified intent
 * (with `apiVersion`, `kind`, `metadata.name`; custom resources in their
 * encoded form).
 *
 * @since 0.1.0
 * @category models
 */
export interface PatchOptions {
  readonly type: PatchType
  readonly namespace?: string | undefined
  /** Required by the server for `apply`; defaults to `reconcile`. */
  readonly fieldManager?: string | undefined
  /** `apply` only: take ownership of fields other managers own instead of failing with a `Conflict`. */
  readonly force?: boolean | undefined
  readonly dryRun?: boolean | undefined
}

/**
 * Options of deletes.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeleteOptions {
  readonly namespace?: string | undefined
  /** Garbage collection of dependents (server default: Background). */
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan" | undefined
  /** Delete only this exact object (`Conflict` otherwise). */
  readonly preconditions?:
    | { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined }
    | undefined
  readonly gracePeriodSeconds?: number | undefined
  readonly dryRun?: boolean | undefined
}

/**
 * What a delete did: `Deleted` (gone; the server's Status, or the last state
 * of the object for kinds that return it) or `Pending` (finalizers, or a
 * foreground/orphan propagation, hold the object: it has a
 * `deletionTimestamp` and is returned).
 *
 * @since 0.1.0
 * @category models
 */
export type DeleteResult<A> =
  | { readonly _tag: "Deleted"; readonly status: KubeStatus.Status | undefined; readonly object: A | undefined }
  | { readonly _tag: "Pending"; readonly object: A }

/**
 * Options of a raw watch.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchOptions {
  /** Without one, all namespaces. */
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** A range of the hash space, as for lists (`ListOptions.shardSelector`). */
  readonly shardSelector?: string | undefined
  /** Start after this version (history replay); without one, `ADDED` events for every existing object first. */
  readonly resourceVersion?: string | undefined
  /** Ask for `BOOKMARK` events (the resourceVersion moves on without changes). */
  readonly allowWatchBookmarks?: boolean | undefined
  /** The server ends the watch after this long. */
  readonly timeoutSeconds?: number | undefined
  /** Watch-list: initial `ADDED` events then a bookmark annotated `k8s.io/initial-events-end`. */
  readonly sendInitialEvents?: boolean | undefined
}

/**
 * An event of a raw watch.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchEvent<A> =
  | { readonly _tag: "Added"; readonly object: A }
  | { readonly _tag: "Modified"; readonly object: A }
  | { readonly _tag: "Deleted"; readonly object: A }
  | {
    readonly _tag: "Bookmark"
    readonly resourceVersion: string
    readonly annotations: Readonly<Record<string, string>>
  }
  | {
    readonly _tag: "Error"
    /** The `metav1.Status` the server sent. */
    readonly status: KubeStatus.Status
    /** The status as an error: `Gone` for 410 (watch again after a fresh list). */
    readonly error: KubeError.StatusError
  }
  | {
    readonly _tag: "Undecodable"
    readonly error: KubeError.Decode
    /** The event the line was, when it was an `ADDED`, `MODIFIED` or `DELETED` event whose object did not decode. */
    readonly type?: "Added" | "Modified" | "Deleted" | undefined
  }

/**
 * The client over the {@link Kube.Kube} connection in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<KubeClient.Service, never, Kube.Kube> = internal.make

/**
 * Provides {@link KubeClient} from a {@link Kube.Kube} layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<KubeClient, never, Kube.Kube> = Layer.effect(KubeClient, make)

/**
 * Parses one line of a watch stream (exposed for tests and custom transports).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseWatchLine: <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  line: string
) => Effect.Effect<WatchEvent<A>> = internal.parseWatchLine

/**
 * Parses a byte stream of newline-delimited watch events, incrementally
 * (chunks may split lines and UTF-8 characters).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseWatchStream: <A extends ObjectMeta.HasMetadata, E, R>(
  resource: Resource.Resource<A>,
  bytes: Stream.Stream<Uint8Array, E, R>
) => Stream.Stream<WatchEvent<A>, E, R> = internal.parseWatchStream

/**
 * {@link KubeClient.Service.get} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const get = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  name: string,
  options?: GetOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.get(resource, name, options))

/**
 * {@link KubeClient.Service.list} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const list = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  options?: ListOptions
): Effect.Effect<ObjectList<A>, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.list(resource, options))

/**
 * {@link KubeClient.Service.listAll} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const listAll = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  options?: ListOptions
): Effect.Effect<ObjectList<A>, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.listAll(resource, options))

/**
 * {@link KubeClient.Service.create} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const create = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  options?: WriteOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.create(resource, object, options))

/**
 * {@link KubeClient.Service.replace} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const replace = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  options?: WriteOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.replace(resource, object, options))

/**
 * {@link KubeClient.Service.patch} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const patch = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  name: string,
  patch: unknown,
  options: PatchOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.patch(resource, name, patch, options))

/**
 * {@link KubeClient.Service.delete} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const del = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  name: string,
  options?: DeleteOptions
): Effect.Effect<DeleteResult<A>, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.delete(resource, name, options))

/**
 * {@link KubeClient.Service.replaceStatus} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const replaceStatus = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  options?: WriteOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.replaceStatus(resource, object, options))

/**
 * {@link KubeClient.Service.patchStatus} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const patchStatus = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  name: string,
  patch: unknown,
  options: PatchOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient> =>
  Effect.flatMap(KubeClient, (c) => c.patchStatus(resource, name, patch, options))

/**
 * {@link KubeClient.Service.watch} with the client from context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const watch = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  options?: WatchOptions
): Stream.Stream<WatchEvent<A>, KubeError.KubeError, KubeClient> =>
  Stream.unwrap(Effect.map(KubeClient, (c) => c.watch(resource, options)))

/**
 * Builds `listAll` from a `list`: follows `continue` tokens over one
 * consistent snapshot. For alternative `KubeClient` implementations (the
 * testkit's in-process client uses it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const paginate: (list: KubeClient.Service["list"]) => KubeClient.Service["listAll"] = internal.paginate

/**
 * Decodes the items of a list response with `decode`, reporting the ones that
 * do not decode in `undecodable` instead of failing (what `list` does). For
 * alternative `KubeClient` implementations.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeItems: <A>(
  raw: ReadonlyArray<unknown>,
  decode: (u: unknown) => Effect.Effect<A, KubeError.Decode>
) => Effect.Effect<{ readonly items: Array<A>; readonly undecodable: Array<KubeError.Decode> }> = internal.decodeItems
