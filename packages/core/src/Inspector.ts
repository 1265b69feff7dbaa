/**
 * What every controller is doing, key by key: the answer to "why has my object not been reconciled?" — is its key
 * waiting, delayed by backoff (until when, after how many failures), in flight for too long, stuck on a `Terminal`
 * outcome, or was its event dropped by a predicate? `InspectorServer` serves it as a JSON API and a web page.
 *
 * - **Off unless provided.** A controller (`Controller.make`, and so every `KubeController`) records only when the
 *   {@link Inspector} service is in its context when it is made (it looks it up once); otherwise it records nothing
 *   and its hot path is the same code as before.
 * - **What is recorded**, per controller and key: the last `historyPerKey` reconciles (start, duration, outcome, the
 *   error's message — redacted as the logs are, `Logging.redact` — the attempt number from the rate limiter, the
 *   reconcileID, the trace ID when a span exists) and the last `eventsPerKey` events that mapped to the key (source,
 *   event type, each evaluated predicate's verdict, whether it was enqueued; an event a predicate dropped is mapped
 *   by the watch's handler too, to find the key it would have enqueued). And a global timeline of the last
 *   `timeline` reconciles.
 * - **What is read when asked**: the queue (`Workqueue.inspect`: waiting keys with their priority, delayed ones with
 *   their due time, keys in flight with their start), the rate limiter's failure count, the workers, the sources'
 *   connection (`Source.health`). Why a key is delayed comes from its last outcome: a `RequeueAfter`, or a backoff
 *   retry after a failure (an error, a timeout, a panic).
 * - **Bounded memory**: at most `maxKeys` key records per controller (the least recently seen are dropped first),
 *   and keys not seen for `keyTtl` are dropped; a key still in the queue is listed from the queue whatever its
 *   record. The figure (bytes per key with full histories) is in `bench/results/inspector.json`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as internal from "./internal/inspector.js"
import type * as ApiSchemas from "./internal/inspectorApi.js"

/**
 * The Schemas of the JSON API's answers (`InspectorServer`): `Controllers`, `Keys`, `Key`, `Timeline`, `ErrorBody`,
 * and their parts.
 *
 * @since 0.1.0
 */
export * as Api from "./internal/inspectorApi.js"

/**
 * How much the inspector keeps.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Reconciles kept per key (default 20). */
  readonly historyPerKey?: number | undefined
  /** Events kept per key (default 10). */
  readonly eventsPerKey?: number | undefined
  /** Key records kept per controller (default 10,000); the least recently seen are dropped first. */
  readonly maxKeys?: number | undefined
  /** A key not seen (no event, no reconcile) for this long is dropped (default 15 minutes). */
  readonly keyTtl?: Duration.Input | undefined
  /** Reconciles kept on the timeline, across controllers (default 1,000). */
  readonly timeline?: number | undefined
}

/**
 * The inspector: controllers record into it, `InspectorServer` reads it.
 *
 * @since 0.1.0
 * @category tags
 */
export class Inspector extends Context.Service<Inspector, Inspector.Service>()("@reconcile/core/Inspector") {}

/**
 * @since 0.1.0
 */
export declare namespace Inspector {
  /**
   * The inspector's reads (each answer as its `Api` Schema types it), and the registration controllers use.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** A counter bumped on every recorded change (a reconcile started or ended, an event, a controller). */
    readonly version: Effect.Effect<number>
    readonly controllers: Effect.Effect<typeof ApiSchemas.Controllers.Type>
    /** One page of a controller's keys; `None` for an unknown controller. */
    readonly keys: (
      controller: string,
      query?: ApiSchemas.KeysQuery
    ) => Effect.Effect<Option.Option<typeof ApiSchemas.Keys.Type>>
    /** A key of a controller; `None` for an unknown controller, or a key neither queued nor recorded. */
    readonly key: (controller: string, key: string) => Effect.Effect<Option.Option<typeof ApiSchemas.Key.Type>>
    readonly timeline: (query?: ApiSchemas.TimelineQuery) => Effect.Effect<typeof ApiSchemas.Timeline.Type>
    /** @internal */
    readonly register: (registration: internal.Registration) => internal.Recorder
  }
}

/**
 * Makes an inspector (recording nothing until controllers are made with it in their context).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): Effect.Effect<Inspector.Service> => Effect.sync(() => internal.make(options))

/**
 * A Layer providing the {@link Inspector}: controllers made with it record what they do.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Inspector, InspectorServer } from "@reconcile/core"
 *
 * // beside the controllers' Layers (they must be built with the Inspector in their context)
 * const Inspected = Layer.effectDiscard(
 *   Effect.flatMap(InspectorServer.serve({ port: 8082 }), ({ port }) => Effect.log(`http://127.0.0.1:${port}/`))
 * ).pipe(Layer.provideMerge(Inspector.layer({ maxKeys: 5_000 })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Inspector> => Layer.effect(Inspector, make(options))
