/**
 * Event handlers: what turns an event into the requests to reconcile
 * (controller-runtime's `handler` package).
 *
 * A handler is a function `Event<A> => Effect<ReadonlyArray<Request>, E, R>`;
 * effectful so a mapping can read a cache or call a service. The built-in
 * handlers return requests without duplicates (by `Request.key`); `forObject`
 * and `forOwner` skip objects and owners without a name.
 *
 * @since 0.1.0
 */
import { PriorityWorkqueue } from "@reconcile/workqueue"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type { Event } from "./Event.js"
import * as Ev from "./Event.js"
import * as internal from "./internal/handler.js"
import type { HasMetadata } from "./ObjectMeta.js"
import type * as Request from "./Request.js"

/**
 * Maps an event to the requests it causes. A handler may carry a
 * {@link Priority} rule ({@link withPriority}) for a controller with a
 * priority queue.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handler<A, E = never, R = never> {
  (event: Event<A>): Effect.Effect<ReadonlyArray<Request.Request>, E, R>
  /** The priority of the requests an event causes; `undefined`: no opinion (see {@link withPriority}). */
  readonly priority?: Priority<A> | undefined
}

/**
 * The priority at which an event's requests enter a priority queue (higher is
 * served first); `undefined` leaves the choice to the next rule: the
 * source's, then {@link lowPriorityWhenUnchanged}. A FIFO queue ignores
 * priorities.
 *
 * @since 0.1.0
 * @category models
 */
export type Priority<A> = (event: Event<A>) => number | undefined

/**
 * The priority of objects from the initial list and of resync updates:
 * `-100` (controller-runtime's `handler.LowPriority`, equal to
 * `PriorityWorkqueue.LowPriority`).
 *
 * @since 0.1.0
 * @category constants
 */
export const LowPriority: number = PriorityWorkqueue.LowPriority

/**
 * The default priority rule of every watch (controller-runtime's
 * `WithLowPriorityWhenUnchanged`, which its built-in handlers apply):
 * {@link LowPriority} for a `Create` with `initial: true` and for an `Update`
 * whose old and new objects have the same `metadata.resourceVersion` (a
 * resync); no opinion otherwise (the queue's default, 0). Objects without a
 * `resourceVersion` are never taken for a resync.
 *
 * @since 0.1.0
 * @category priorities
 */
export const lowPriorityWhenUnchanged = <A>(event: Event<A>): number | undefined => {
  if (event._tag === "Create") return event.initial ? LowPriority : undefined
  if (event._tag !== "Update") return undefined
  const old = internal.resourceVersion(event.old)
  return old !== undefined && old === internal.resourceVersion(event.object) ? LowPriority : undefined
}

/**
 * Gives a handler's requests a priority: a number for every event, or a
 * {@link Priority} rule per event (`undefined` falls back to the source's
 * rule, then to {@link lowPriorityWhenUnchanged}). Only a controller with a
 * priority queue (`queue: Workqueue.priority`) uses it; the key keeps the priority
 * through its retries.
 *
 * @example
 * ```ts
 * import { Handler } from "@reconcile/core"
 *
 * // changes to Secrets are urgent, initial list included
 * const urgent = Handler.withPriority(Handler.forObject, 10)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPriority: {
  <A = unknown>(priority: number | Priority<A>): <B extends A, E, R>(self: Handler<B, E, R>) => Handler<B, E, R>
  <A, E, R>(self: Handler<A, E, R>, priority: number | Priority<NoInfer<A>>): Handler<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Handler<A, E, R>, priority: number | Priority<A>): Handler<A, E, R> =>
    Object.assign((event: Event<A>) => self(event), {
      priority: typeof priority === "number" ? () => priority : priority
    })
)

/**
 * Enqueues the object itself (on `Update`, the new object — it has the same
 * namespace and name as the old one). controller-runtime's
 * `EnqueueRequestForObject`, what `For(...)` uses.
 *
 * @since 0.1.0
 * @category handlers
 */
export const forObject: <A extends HasMetadata>(event: Event<A>) => Effect.Effect<ReadonlyArray<Request.Request>> = (
  event
) => Effect.succeed(internal.requestOfObject(Ev.object(event)))

/**
 * Options of {@link forOwner}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ForOwnerOptions {
  /** The owner's `apiVersion`; only its group is compared (`apps/v1` and `apps/v1beta1` match alike). */
  readonly apiVersion: string
  /** The owner's kind. */
  readonly kind: string
  /** Only follow the reference marked `controller: true` (default `true`). */
  readonly onlyController?: boolean | undefined
  /**
   * The owner kind's scope, as a CRD's `spec.scope` says it: `"Cluster"` requests have no namespace (default
   * `"Namespaced"`: the owned object's namespace).
   */
  readonly scope?: "Namespaced" | "Cluster" | undefined
}

/**
 * Enqueues the owners of the event's objects (old and new on `Update`) whose
 * owner reference has the given kind and the group of the given `apiVersion`
 * (controller-runtime's `EnqueueRequestForOwner`, what `Owns(...)` uses).
 * Deduplicated.
 *
 * With `onlyController` (the default) only the object's controller reference
 * (the first with `controller: true`) is considered; otherwise every owner
 * reference is. The request's namespace is the owned object's namespace, or
 * none with `scope: "Cluster"`. References with a malformed `apiVersion`
 * (more than one `/`) are skipped.
 *
 * @example
 * ```ts
 * import { Handler } from "@reconcile/core"
 *
 * // a ReplicaSet's changes enqueue the Deployment that controls it
 * const handler = Handler.forOwner({ apiVersion: "apps/v1", kind: "Deployment" })
 * ```
 *
 * @since 0.1.0
 * @category handlers
 */
export const forOwner = (
  options: ForOwnerOptions
): <A extends HasMetadata>(event: Event<A>) => Effect.Effect<ReadonlyArray<Request.Request>> => {
  const owners = internal.ownerRequests(options)
  return (event) => Effect.succeed(owners(Ev.objects(event)))
}

/**
 * Enqueues what an effectful function maps each object to — old and new on
 * `Update` — deduplicated by key, in first-seen order
 * (controller-runtime's `EnqueueRequestsFromMapFunc`, what `Watches(...)` uses).
 * A failure of `f` fails the handler.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Handler, Request } from "@reconcile/core"
 *
 * // a ConfigMap change enqueues every app that names it in an annotation
 * const handler = Handler.fromMap((cm: { metadata?: { namespace?: string } }) =>
 *   Effect.succeed([Request.make("web", cm.metadata?.namespace)])
 * )
 * ```
 *
 * @since 0.1.0
 * @category handlers
 */
export const fromMap = <A, E = never, R = never>(
  f: (obj: A) => Effect.Effect<Iterable<Request.Request>, E, R>
): Handler<A, E, R> =>
(event) => Effect.map(Effect.forEach(Ev.objects(event), f), internal.dedupe)
