/**
 * An in-memory Kubernetes API server as an Effect service: the semantics
 * controllers depend on, without a cluster.
 *
 * - Objects are stored per group/resource + namespace + name; every object gets
 *   a `uid`, a `creationTimestamp` and a `resourceVersion` from one cluster-wide
 *   counter (opaque strings to clients).
 * - `metadata.generation` (Deployments, CRDs, custom resources) is bumped only
 *   when something other than `metadata` (and `status`, when the kind has the
 *   status subresource) changes, and when deletion starts.
 * - Status subresource: `updateStatus` / `subresource: "status"` writes change
 *   only `status`; other writes keep the stored `status`.
 * - Optimistic concurrency: a stale `resourceVersion` is a 409 Conflict; a
 *   duplicate name a 409 AlreadyExists; missing objects a 404; invalid objects
 *   a 422 with causes. A write that changes nothing is a no-op (no new
 *   resourceVersion, no watch event), as on a real server.
 * - Deletion honours finalizers (`deletionTimestamp`, no new finalizers while
 *   deleting) and ownerReferences (garbage collection: Background by default,
 *   Foreground and Orphan honoured — synchronously, within the delete).
 * - Namespaces `default`, `kube-system`, `kube-public` and `kube-node-lease`
 *   exist; namespaced objects need an existing, non-terminating namespace;
 *   deleting a namespace deletes its objects (unless `namespaceLifecycle: false`).
 * - List with label/field selectors, `limit`/`continue` (consistent snapshots),
 *   watch from a resourceVersion with bookmarks and timeouts; a bounded event
 *   history: a watch or continue from a compacted version gets 410 Expired.
 * - Patches: JSON merge, JSON patch (with `test`), strategic merge
 *   (approximated, see `docs/testkit.md`), server-side apply with field
 *   ownership and `managedFields`.
 *
 * Time comes from Effect's `Clock` (captured by `make`), so `TestClock`
 * controls timestamps, latency faults, watch timeouts and bookmarks.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Path from "node:path"
import type { ApiError } from "./ApiError.js"
import * as Persistence from "./internal/persistence.js"
import * as internal from "./internal/testCluster.js"
import type { KubeObject, ObjectList, WatchEvent } from "./KubeObject.js"
import type { ResourceType } from "./ResourceType.js"

/**
 * The in-memory cluster service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TestCluster } from "@reconcile/testkit"
 *
 * const program = Effect.gen(function*() {
 *   const cluster = yield* TestCluster.TestCluster
 *   yield* cluster.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } })
 *   const cm = yield* cluster.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "a" })
 * }).pipe(Effect.provide(TestCluster.layer))
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class TestCluster
  extends Context.Service<TestCluster, TestCluster.Service>()("@reconcile/testkit/TestCluster")
{}

/**
 * @since 0.1.0
 */
export declare namespace TestCluster {
  /**
   * The operations of the cluster. Every failure is an `ApiError` carrying the
   * `metav1.Status` a real API server would answer.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Creates an object (its kind and apiVersion pick the resource). */
    readonly create: (object: KubeObject, options?: WriteOptions) => Effect.Effect<KubeObject, ApiError>
    /** Reads one object. */
    readonly get: (ref: ObjectRef) => Effect.Effect<KubeObject, ApiError>
    /** Lists objects (all namespaces when `namespace` is omitted). */
    readonly list: (query: ListQuery) => Effect.Effect<ObjectList, ApiError>
    /** Replaces an object (PUT); `metadata.resourceVersion`, when set, must be current. */
    readonly update: (object: KubeObject, options?: WriteOptions) => Effect.Effect<KubeObject, ApiError>
    /** Replaces the `status` of an object (PUT on `/status`). */
    readonly updateStatus: (object: KubeObject, options?: WriteOptions) => Effect.Effect<KubeObject, ApiError>
    /** Patches an object; a server-side apply of a missing object creates it. */
    readonly patch: (ref: ObjectRef, patch: Patch, options?: WriteOptions) => Effect.Effect<KubeObject, ApiError>
    /** Server-side apply of `object` (a patch of type `apply`). */
    readonly apply: (object: KubeObject, options: ApplyOptions) => Effect.Effect<KubeObject, ApiError>
    /** Deletes an object; `deleted` is false when finalizers keep it (then `object` has a `deletionTimestamp`). */
    readonly delete: (ref: ObjectRef, options?: DeleteOptions) => Effect.Effect<DeleteResult, ApiError>
    /** Watches a resource. Ends after an `ERROR` event, after `timeoutSeconds`, or when a fault drops it. */
    readonly watch: (query: WatchQuery) => Stream.Stream<WatchEvent, ApiError>
    /** The current cluster-wide resourceVersion. */
    readonly resourceVersion: Effect.Effect<string>
    /** Forgets the watch history now: older resourceVersions get 410 Expired. */
    readonly compact: Effect.Effect<void>
    /** The resource types served now (built-ins and CRD kinds). */
    readonly resources: Effect.Effect<ReadonlyArray<ResourceType>>
    /**
     * Reads the autoscaling/v1 `Scale` of an object whose kind has a `/scale` subresource (Deployments,
     * ReplicaSets, StatefulSets, custom resources whose CRD declares `subresources.scale`).
     */
    readonly getScale: (ref: ObjectRef) => Effect.Effect<KubeObject, ApiError>
    /**
     * Writes a `Scale` (PUT `/scale`): sets the object's spec replicas; the Scale's `metadata.resourceVersion`,
     * when set, must be current. Returns the new Scale.
     */
    readonly updateScale: (ref: ObjectRef, scale: KubeObject) => Effect.Effect<KubeObject, ApiError>
    /** Reads a pod's container log as GET `pods/<name>/log` does (empty until a test writes one). */
    readonly podLog: (query: PodLogQuery) => Effect.Effect<string, ApiError>
    /**
     * Sets (or, with `append`, extends) the simulated log of a pod's container; `previous` writes the log of its
     * previous, terminated instance (`kubectl logs --previous`). Appended lines reach `follow` readers. Logs belong
     * to the pod (its uid): the pod must exist and have the container (404 / 400 otherwise).
     */
    readonly writePodLog: (
      container: ContainerRef,
      text: string,
      options?: { readonly append?: boolean | undefined; readonly previous?: boolean | undefined }
    ) => Effect.Effect<void, ApiError>
  }
}

/**
 * Identifies one container of a pod.
 *
 * @since 0.1.0
 * @category models
 */
export interface ContainerRef {
  readonly namespace: string
  readonly pod: string
  readonly container: string
}

/**
 * A read of a pod's log (`PodLogOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface PodLogQuery {
  readonly namespace: string
  readonly name: string
  /** Required when the pod has more than one container. */
  readonly container?: string | undefined
  readonly previous?: boolean | undefined
  readonly tailLines?: number | undefined
  readonly limitBytes?: number | undefined
  readonly sinceSeconds?: number | undefined
  readonly timestamps?: boolean | undefined
}

/**
 * Identifies one object.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  /** Required for namespaced kinds, ignored for cluster-scoped ones. */
  readonly namespace?: string | undefined
}

/**
 * Options of writes.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  /** The manager recorded in `managedFields` (default `"testkit"`). */
  readonly fieldManager?: string | undefined
  /** `"status"` to write the status subresource. */
  readonly subresource?: "status" | undefined
  /**
   * `dryRun=All`: the write is validated, defaulted and admitted and the would-be object returned, but nothing is
   * stored, no watch event is sent and the resourceVersion does not move.
   */
  readonly dryRun?: boolean | undefined
}

/**
 * Options of server-side apply.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApplyOptions {
  readonly fieldManager: string
  /** Take ownership of conflicting fields instead of failing with 409. */
  readonly force?: boolean | undefined
  readonly subresource?: "status" | undefined
  /** `dryRun=All`, as for {@link WriteOptions}. */
  readonly dryRun?: boolean | undefined
}

/**
 * A patch, by content type: `merge` (application/merge-patch+json), `json`
 * (application/json-patch+json), `strategic`
 * (application/strategic-merge-patch+json), `apply` (application/apply-patch+yaml).
 *
 * @since 0.1.0
 * @category models
 */
export type Patch =
  | { readonly type: "merge"; readonly patch: { readonly [key: string]: unknown } }
  | { readonly type: "strategic"; readonly patch: { readonly [key: string]: unknown } }
  | { readonly type: "json"; readonly patch: ReadonlyArray<JsonPatchOperation> }
  | {
    readonly type: "apply"
    readonly patch: { readonly [key: string]: unknown }
    readonly fieldManager: string
    readonly force?: boolean | undefined
  }

/**
 * One RFC 6902 operation.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonPatchOperation {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test"
  readonly path: string
  readonly value?: unknown
  readonly from?: string
}

/**
 * Options of delete (`metav1.DeleteOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface DeleteOptions {
  readonly propagationPolicy?: "Background" | "Foreground" | "Orphan" | undefined
  readonly preconditions?:
    | { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined }
    | undefined
  /**
   * `dryRun=All`: the delete is checked and its result returned (with a `deletionTimestamp` when finalizers would
   * keep the object), but nothing changes.
   */
  readonly dryRun?: boolean | undefined
}

/**
 * What a delete did.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeleteResult {
  /** The object as deleted, or as it stays (with `deletionTimestamp`) while finalizers remain. */
  readonly object: KubeObject
  /** True when the object is gone. */
  readonly deleted: boolean
}

/**
 * A list request.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListQuery {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "Exact" | "NotOlderThan" | undefined
}

/**
 * A watch request. Without `resourceVersion` (or with `"0"`) the watch starts
 * with an `ADDED` event per existing object; with a resourceVersion it replays
 * the history after it (410 Expired as an `ERROR` event when compacted).
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchQuery {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly allowWatchBookmarks?: boolean | undefined
  readonly sendInitialEvents?: boolean | undefined
  readonly timeoutSeconds?: number | undefined
  /**
   * How often a BOOKMARK is sent when `allowWatchBookmarks` (default 1 minute); one also comes 2 s before
   * `timeoutSeconds`, and none older than the resourceVersion the watch started from (kube-apiserver).
   */
  readonly bookmarkInterval?: Duration.Input | undefined
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Events kept for watches from old resourceVersions (default 10 000). */
  readonly historySize?: number | undefined
  /** Whether deleting a namespace deletes its objects (default true). */
  readonly namespaceLifecycle?: boolean | undefined
  /** Seed of probabilistic fault injection (default 0). */
  readonly seed?: number | undefined
  /**
   * Feature gates, as kube-apiserver's `--feature-gates`: `ShardedListAndWatch` (alpha in 1.36, default off) makes
   * list and watch honour `shardSelector` and answer `metadata.shardInfo`; without it the parameter is ignored.
   */
  readonly featureGates?: { readonly ShardedListAndWatch?: boolean | undefined } | undefined
}

/**
 * Creates a fresh, empty cluster (with the default namespaces).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<TestCluster.Service> = internal.make

/**
 * A fresh cluster per use of the Layer. Effect 4 memoizes layers across nested
 * `Effect.provide` calls: providing `layer` inside an effect that already has
 * it from `layer` gives the same cluster (use `Layer.fresh` for another one).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TestCluster> = Layer.effect(TestCluster, internal.make())

/**
 * {@link layer} with options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<TestCluster> =>
  Layer.effect(TestCluster, internal.make(options))

/**
 * Options of {@link makeWithData}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DataOptions extends Options {
  /**
   * The directory of the on-disk store: created when missing (mode 0700), one SQLite database in it
   * (`cluster.sqlite`, mode 0600). One cluster at a time may use it.
   */
  readonly dataDir: string
}

/**
 * The data directory cannot be used, so the cluster does not start (nothing
 * is discarded): `Locked` (another server has it open), `Corrupt` (a damaged
 * or foreign file, or a stored object that no longer decodes), `Unavailable`
 * (it cannot be created, opened or written), `Unsupported` (no `node:sqlite`
 * in this Node, or a format written by a newer testkit). `path` is the file.
 *
 * @since 0.1.0
 * @category errors
 */
export class TestClusterStorageError extends Data.TaggedError("TestClusterStorageError")<{
  readonly reason: "Locked" | "Corrupt" | "Unavailable" | "Unsupported"
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return `test cluster data ${this.path}: ${this.reason}: ${this.detail}`
  }
}

/**
 * A cluster kept on disk in `dataDir`: it starts with the objects, uids,
 * resourceVersions, generations, managedFields, finalizers and deletion state
 * stored there (CRD kinds are served again; the resourceVersion counter
 * continues, never going back), or with the default namespaces when the
 * directory is new. Every write is durable (fsync) before it is answered or
 * seen by a watch. The watch history starts empty: a watch from an older
 * resourceVersion gets 410 Expired. Work a crash cut short (a namespace still
 * terminating, dependents of a deleted owner) is finished at start.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TestCluster } from "@reconcile/testkit"
 *
 * const program = Effect.gen(function*() {
 *   const cluster = yield* TestCluster.makeWithData({ dataDir: "/tmp/cluster" })
 *   yield* cluster.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } })
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWithData: (
  options: DataOptions
) => Effect.Effect<TestCluster.Service, TestClusterStorageError, Scope.Scope> = (options) =>
  Effect.gen(function*() {
    const opened = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => Persistence.open(options.dataDir),
        catch: (e) => {
          const f = Persistence.classify(Path.resolve(options.dataDir, Persistence.FILE), e)
          return new TestClusterStorageError({ reason: f.reason, path: f.path, detail: f.detail })
        }
      }),
      (o) => Effect.sync(() => o.journal.close())
    )
    const service = yield* internal.make(options, opened)
    const startupError = internal.coreOf(service).startupError
    if (startupError !== undefined) {
      return yield* Effect.fail(
        new TestClusterStorageError({
          reason: "Corrupt",
          path: opened.path,
          detail: startupError.status.message ?? "restore failed"
        })
      )
    }
    return service
  })

/**
 * {@link makeWithData} as a Layer: the database is closed when the Layer is released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithData = (options: DataOptions): Layer.Layer<TestCluster, TestClusterStorageError> =>
  Layer.effect(TestCluster, makeWithData(options))
