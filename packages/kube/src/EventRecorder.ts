/**
 * Kubernetes events (`events.k8s.io/v1`) about objects, as client-go's
 * `tools/events` recorder writes them: what `kubectl describe` and
 * `kubectl events --for` show.
 *
 * - Each event names the object it is about (`regarding`), the controller
 *   that reports it (`reportingController`) and the replica
 *   (`reportingInstance`).
 * - Repeats are aggregated: when the same (type, reason, action, regarding
 *   object — its identity: kind, namespace, name, uid, not its
 *   resourceVersion — reporting controller) is recorded again within `window` (default
 *   10 minutes) of its last occurrence, the existing event's
 *   `series.count` and `series.lastObservedTime` are updated instead of a new
 *   event being created (`note` is not part of the key: the first note
 *   stays). Concurrent repeats are coalesced into as few writes as possible.
 * - Recording never fails: a failed write is logged (the event's type,
 *   reason, action and the object's kind and name — never the note or any
 *   object data) and `record` succeeds.
 *
 * Make one recorder per controller ({@link make}); {@link layer} provides the
 * {@link EventRecorder} service for a process with one controller (or one
 * reporting name). Times come from Effect's `Clock`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Reconcile } from "@reconcile/core"
 * import { EventRecorder, type KubeClient, type Resource } from "@reconcile/kube"
 *
 * // WebApp: a custom resource (Resource.custom)
 * declare const WebApp: Resource.Resource<Resource.CustomObject<{ readonly image: string }>>
 * type WebApp = Resource.Type<typeof WebApp>
 * declare const scaleUp: (app: WebApp) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>
 *
 * const reconcile = (app: WebApp) =>
 *   Effect.gen(function*() {
 *     yield* scaleUp(app)
 *     yield* EventRecorder.record(app, { type: "Normal", reason: "Scaled", action: "Scale", note: "3 replicas" })
 *   })
 *
 * const Recorder = EventRecorder.layer({ controller: "example.com/webapp-controller" })
 * ```
 *
 * @since 0.1.0
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/eventRecorder.js"
import type * as KubeClient from "./KubeClient.js"

/**
 * The recorder service.
 *
 * @since 0.1.0
 * @category tags
 */
export class EventRecorder extends Context.Service<
  EventRecorder,
  EventRecorder.Service
>()("@reconcile/kube/EventRecorder") {}

/**
 * @since 0.1.0
 */
export declare namespace EventRecorder {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The `reportingController` of the events. */
    readonly controller: string
    /** The `reportingInstance` of the events. */
    readonly instance: string
    /** Records an event about `object`; never fails (a failed write is logged). */
    readonly record: (object: Regarding, event: Event) => Effect.Effect<void>
  }
}

/**
 * The object an event is about: its `apiVersion`, `kind` and metadata
 * (`name`, `namespace`, `uid`, `resourceVersion`) make the event's
 * `regarding` reference.
 *
 * @since 0.1.0
 * @category models
 */
export interface Regarding extends HasMetadata {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
}

/**
 * An event to record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Event {
  readonly type: "Normal" | "Warning"
  /** Why the action was taken, CamelCase: `ScalingReplicaSet`, `FailedCreate`. */
  readonly reason: string
  /** What was done (or failed), CamelCase: `Scale`, `Create`. */
  readonly action: string
  /** A human-readable description (at most 1 kB; longer notes are cut). Not part of the aggregation key. */
  readonly note?: string | undefined
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** `reportingController`: the controller's name, e.g. `example.com/webapp-controller`. */
  readonly controller: string
  /** `reportingInstance`: this replica's identity (default: the host name, as a pod's name). */
  readonly instance?: string | undefined
  /** How long after its last occurrence a repeat still joins an event's series (default 10 minutes). */
  readonly window?: Duration.Input | undefined
}

/**
 * A recorder writing through the {@link KubeClient.KubeClient} in context.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { EventRecorder, type Resource } from "@reconcile/kube"
 *
 * declare const app: Resource.CustomObject<{ readonly image: string }> // the object the event is about
 *
 * const program = Effect.gen(function*() {
 *   const recorder = yield* EventRecorder.make({ controller: "webapp", window: "5 minutes" })
 *   yield* recorder.record(app, { type: "Warning", reason: "InvalidSpec", action: "Validate", note: "no image" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<EventRecorder.Service, never, KubeClient.KubeClient> =
  internal.make

/**
 * Provides an {@link EventRecorder} (see {@link make}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<EventRecorder, never, KubeClient.KubeClient> =>
  Layer.effect(EventRecorder, make(options))

/**
 * Records an event about `object` with the recorder in context; never fails.
 *
 * @example
 * ```ts
 * import { EventRecorder, type Resource } from "@reconcile/kube"
 *
 * declare const app: Resource.CustomObject<{ readonly image: string }> // the object the event is about
 *
 * const warn = EventRecorder.record(app, {
 *   type: "Warning",
 *   reason: "BackOff",
 *   action: "Deploy",
 *   note: "image pull failed"
 * })
 * // Effect<void, never, EventRecorder>
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const record = (object: Regarding, event: Event): Effect.Effect<void, never, EventRecorder> =>
  Effect.flatMap(EventRecorder, (recorder) => recorder.record(object, event))
