/**
 * Finalizers: split an object reconcile into an `apply` phase (the object is
 * live) and a `cleanup` phase (the object is being deleted), with the
 * guarantee that **if `apply` ever started, `cleanup` succeeded before the
 * object disappears** (kube-rs' `finalizer`, controller-runtime's
 * `controllerutil.AddFinalizer`/`RemoveFinalizer` pattern).
 *
 * - Live object without our finalizer: add it first (a JSON patch that
 *   `test`s the object's uid and its current finalizer list — or its
 *   `resourceVersion` when the list is empty — then appends), then `apply`
 *   on the object the server answered.
 * - Live object with our finalizer: read it from the server, then `apply` on
 *   that fresh copy — or decide again if the server says otherwise.
 * - Object being deleted (`deletionTimestamp` set) with our finalizer: read
 *   it from the server; if it still carries our finalizer, `cleanup`; once
 *   that succeeds, remove **only our** finalizer (a JSON patch that tests the
 *   uid and the list, then removes our entry).
 * - Object being deleted without our finalizer: nothing (`apply` never runs
 *   on an object being deleted).
 *
 * **The cache may lag the server by any amount** (a stalled watch, a slow
 * relist): the object a reconcile gets can be the copy of an object already
 * deleted, whose finalizer we already released. So `apply` and `cleanup` run
 * only on the server's answer from the same reconcile — the answer of the
 * guarded patch that added the finalizer, or a live `GET`: `apply` never runs
 * for an object that is gone, is being deleted, or is another object of the
 * same name (a new uid), and `cleanup` runs once per deletion. The cost is one
 * `GET` per reconcile that runs `apply`, `cleanup` or `onUndecodable` (none
 * when the finalizer was just added: the patch's answer is the confirmation).
 *
 * **Objects that do not decode** (see `Undecodable`) are handled too: one
 * being deleted gets `cleanup` — with its metadata — and its finalizer
 * released; a live one goes to `onUndecodable` (default: `Undecodable.terminal`,
 * a `Terminal` outcome naming the issue), never to `apply`.
 *
 * Writes never clobber other writers: when a `test` fails (someone changed
 * the finalizers, or the object, since it was read) the object is read again
 * and the step is decided afresh, a few times, then the reconcile fails
 * `Retryable`. `cleanup` failures are the reconcile's outcome (`Retryable`:
 * retried with backoff; `Terminal`: the object stays until the next change).
 * `cleanup` runs once per deletion when it succeeds and our finalizer is then
 * removed; it may run again if it fails or if the removal keeps failing, so it
 * should be idempotent.
 *
 * @example
 * ```ts
 * import type { Effect } from "effect"
 * import type { ObjectMeta, Reconcile } from "@reconcile/core"
 * import { Finalizer, type KubeClient, KubeController, type Resource } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom)
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 * declare const ensureDeployment: (app: WebApp) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>
 * declare const deleteExternalDatabase: (metadata: ObjectMeta.ObjectMeta) => Effect.Effect<void, Reconcile.Outcome>
 *
 * const reconcile = Finalizer.reconcile({
 *   resource: WebApp,
 *   name: "example.com/cleanup",
 *   apply: (app) => ensureDeployment(app),
 *   cleanup: (app) => deleteExternalDatabase(app.metadata) // a WebApp, or an Undecodable: its metadata
 * })
 *
 * const controller = KubeController.make({ name: "webapp", for: WebApp, reconcile })
 * ```
 *
 * @since 0.1.0
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Reconcile from "@reconcile/core/Reconcile"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/finalizer.js"
import type * as KubeClient from "./KubeClient.js"
import type * as Resource from "./Resource.js"
import type * as Undecodable from "./Undecodable.js"

/**
 * Options of {@link reconcile}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<A extends HasMetadata, R1, R2, R3 = never> {
  /** The kind of the reconciled objects. */
  readonly resource: Resource.Resource<A>
  /** The finalizer, a qualified name: `example.com/cleanup`. */
  readonly name: string
  /** Reconciles a live object, as the server has it; our finalizer is on it when this runs. */
  readonly apply: (object: A) => Effect.Effect<void, Reconcile.Outcome, R1>
  /**
   * Releases what `apply` created, for an object being deleted; should be
   * idempotent. An object that no longer decodes comes as an `Undecodable`
   * (its latest metadata): a cleanup that reads only `metadata` compiles as
   * is, one that needs the spec must say what to do without it.
   */
  readonly cleanup: (object: A | Undecodable.Undecodable) => Effect.Effect<void, Reconcile.Outcome, R2>
  /**
   * For a live object that does not decode (e.g. to set a condition saying
   * why); default `Undecodable.terminal`. `apply` never runs on it.
   */
  readonly onUndecodable?: ((object: Undecodable.Undecodable) => Effect.Effect<void, Reconcile.Outcome, R3>) | undefined
  /** The field manager of the finalizer patches (default: the client's). */
  readonly fieldManager?: string | undefined
  /**
   * How many guarded patches to try (re-reading the object after each failed
   * `test`) before the reconcile fails `Retryable` (default 5).
   */
  readonly attempts?: number | undefined
}

/**
 * Wraps `apply` and `cleanup` into one object reconcile (see the module
 * documentation for the rules). It takes the decoded object or its
 * `Undecodable`, as `KubeController`'s by-object `reconcile` does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Finalizer, Resource } from "@reconcile/kube"
 *
 * const reconcile = Finalizer.reconcile({
 *   resource: Resource.ConfigMap,
 *   name: "example.com/mirror",
 *   apply: (cm) => Effect.log(`mirroring ${cm.metadata?.name}`),
 *   cleanup: (cm) => Effect.log(`removing the mirror of ${cm.metadata?.name}`)
 * })
 * // (cm: ConfigMap | Undecodable) => Effect<void, Outcome, KubeClient>
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reconcile: <A extends HasMetadata, R1 = never, R2 = never, R3 = never>(
  options: Options<A, R1, R2, R3>
) => (
  object: A | Undecodable.Undecodable
) => Effect.Effect<void, Reconcile.Outcome, R1 | R2 | R3 | KubeClient.KubeClient> = internal.reconcile

/**
 * Whether the object carries the finalizer `name`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const has: (object: HasMetadata, name: string) => boolean = internal.has

/**
 * Whether the object is being deleted (`metadata.deletionTimestamp` is set).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isDeleting: (object: HasMetadata) => boolean = internal.isDeleting
