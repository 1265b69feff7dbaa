/**
 * An object that exists on the server but does not decode with its
 * `Resource` — a custom resource edited to a shape its Schema rejects, an
 * object written by a newer version of the operator. It is **visible, not
 * frozen**: the cache keeps its latest metadata (the last good copy is
 * dropped, since it no longer says what is on the server), and controllers
 * receive it as an `Undecodable` value so they can report it, process its
 * deletion and release its finalizers.
 *
 * - `KubeController`'s by-object reconcile gets `A | Undecodable` — or, with
 *   an `onUndecodable` handler, `A` only (the compiler asks for one or the
 *   other).
 * - `Finalizer.reconcile` runs `cleanup` for an undecodable object being
 *   deleted (with its metadata) and releases its finalizer; a live one goes
 *   to its `onUndecodable` (default: a `Terminal` outcome naming the issue).
 * - `Cache.get` of an undecodable object fails with its `KubeError.Decode`
 *   (which carries the metadata); `Cache.list` lists decoded objects only.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Reconcile } from "@reconcile/core"
 * import { type KubeClient, type Resource, Undecodable } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom)
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 * declare const reconcileWebApp: (app: WebApp) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>
 *
 * const reconcile = (app: WebApp | Undecodable.Undecodable) =>
 *   Undecodable.isUndecodable(app)
 *     ? Effect.logWarning(`${app.metadata.name} does not decode: ${app.error.issue}`)
 *     : reconcileWebApp(app)
 * ```
 *
 * @since 0.1.0
 */
import type { ObjectMeta } from "@reconcile/core/ObjectMeta"
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { redact } from "./internal/errors.js"
import * as internal from "./internal/undecodable.js"
import type * as KubeError from "./KubeError.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * An object that does not decode: its latest metadata and the decode failure.
 * `apiVersion` and `kind` are the resource's (so it can be the `regarding`
 * object of an `EventRecorder` event).
 *
 * @since 0.1.0
 * @category models
 */
export interface Undecodable {
  readonly [TypeId]: TypeId
  readonly _tag: "Undecodable"
  readonly apiVersion: string | undefined
  readonly kind: string | undefined
  /** The latest metadata of the object (at least its name). */
  readonly metadata: ObjectMeta
  /** Why it does not decode (`issue`; `raw` is the truncated text, redacted for Secrets). */
  readonly error: KubeError.Decode
}

/**
 * Whether a value is an {@link Undecodable}; narrows `A | Undecodable`.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isUndecodable: (u: unknown) => u is Undecodable = internal.isUndecodable

/**
 * The undecodable object a `KubeError.Decode` is about, when the error carries
 * the object's metadata (a decode of an object with a readable, named
 * `metadata`); none for a body that was not an object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromDecode = (error: KubeError.Decode): Option.Option<Undecodable> =>
  Option.fromUndefinedOr(internal.fromDecode(error))

/**
 * A `Terminal` outcome for an undecodable object: nothing to do until the
 * object changes again (it is logged once and counted as a terminal error).
 * The handler to give `KubeController`'s `onUndecodable` when a controller
 * has nothing better to do with such objects.
 *
 * @example
 * ```ts
 * import type { Effect } from "effect"
 * import type { Reconcile } from "@reconcile/core"
 * import { type KubeClient, KubeController, type Resource, Undecodable } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom)
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 * declare const reconcileWebApp: (app: WebApp) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>
 *
 * KubeController.make({
 *   name: "webapp",
 *   for: WebApp,
 *   reconcile: reconcileWebApp, // takes a WebApp
 *   onUndecodable: Undecodable.terminal
 * })
 * ```
 *
 * @since 0.1.0
 * @category handlers
 */
export const terminal = (object: Undecodable): Effect.Effect<never, Reconcile.Terminal> =>
  Effect.fail(Reconcile.terminal(object.error, describe(object)))

/**
 * `Kind namespace/name does not decode: issue`, for logs and conditions.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (object: Undecodable): string => {
  const ns = object.metadata.namespace
  const name = object.metadata.name ?? "<unnamed>"
  const key = ns === undefined || ns === "" ? name : `${ns}/${name}`
  return `${object.kind ?? "object"} ${key} does not decode: ${redact(object.error.issue)}`
}
