/**
 * OpenTelemetry export over OTLP/HTTP: the traces (a span per reconcile, its
 * API requests as children), the metrics `/metrics` shows and the log records,
 * sent to an OpenTelemetry Collector (or any OTLP receiver) from one option —
 * what an operator's main job sets from `--otlp-endpoint` or the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT`.
 *
 * - Built on effect's exporters (`effect/observability`): batched, JSON by
 *   default (`protocol: "http/protobuf"` for protobuf).
 * - Never in a reconcile's way: a span or a record is put in a bounded queue
 *   (`maxQueueSize` per signal) and sent by a background fiber, one request
 *   per signal at a time, each bounded by `exportTimeout`. What cannot be sent
 *   (the collector is down, slow, answers an error, or the queue is full while
 *   a request is in flight) is dropped, counted in
 *   `telemetry_export_dropped_total{signal}`, and logged once per outage (and
 *   once when the collector accepts again).
 * - Logs go to the collector in addition to the process's own loggers (the same
 *   redacted records), with the trace and span IDs of the reconcile they were
 *   written in.
 * - Without this layer no tracer is installed and a reconcile builds no span.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Telemetry } from "@reconcile/core"
 *
 * const work = Effect.logInfo("hello")
 *
 * // an explicit endpoint
 * export const explicit = work.pipe(
 *   Effect.provide(Telemetry.layer({ endpoint: "http://127.0.0.1:4318", serviceName: "webapp-operator" }))
 * )
 *
 * // OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, …: nothing sent when unset
 * export const fromEnv = Effect.gen(function*() {
 *   const options = Telemetry.resolve(yield* Telemetry.optionsFromEnv(process.env))
 *   yield* options === undefined ? work : Effect.provide(work, Telemetry.layer(options))
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as internal from "./internal/telemetry.js"

/**
 * The wire format: OTLP/HTTP with JSON bodies (default) or protobuf.
 *
 * @since 0.1.0
 * @category models
 */
export type Protocol = "http/json" | "http/protobuf"

/**
 * Where and how telemetry is sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The collector's OTLP/HTTP base URL (`http://127.0.0.1:4318`): signals go to `/v1/traces`, `/v1/metrics`, `/v1/logs`. */
  readonly endpoint: string
  /** A full URL for traces instead of `endpoint` + `/v1/traces` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). */
  readonly tracesEndpoint?: string | undefined
  /** A full URL for metrics (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`). */
  readonly metricsEndpoint?: string | undefined
  /** A full URL for logs (`OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`). */
  readonly logsEndpoint?: string | undefined
  /** The resource's `service.name` (default: `service.name` of `resourceAttributes`, else `reconcile`). */
  readonly serviceName?: string | undefined
  /** The resource's `service.version`. */
  readonly serviceVersion?: string | undefined
  /** More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`): `deployment.environment`, `k8s.pod.name`, … */
  readonly resourceAttributes?: Readonly<Record<string, string>> | undefined
  /** Headers of every export request (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. a collector's API key. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly protocol?: Protocol | undefined
  /** How often spans and log records are sent (default 1 s; sooner when `maxQueueSize` are waiting). */
  readonly exportInterval?: Duration.Input | undefined
  /** How often the metrics are sent (default 15 s). */
  readonly metricsExportInterval?: Duration.Input | undefined
  /** Spans (and log records) waiting to be sent, per signal, beyond which a batch is dropped (default 2048). */
  readonly maxQueueSize?: number | undefined
  /** How long one export request may take before its batch is dropped (default 10 s). */
  readonly exportTimeout?: Duration.Input | undefined
  /** While a signal's exports fail, how often one is tried again (default 1 s; the batches between are dropped). */
  readonly retryInterval?: Duration.Input | undefined
  /** How long the last export may take when the layer is released (default 3 s). */
  readonly shutdownTimeout?: Duration.Input | undefined
  /** Signals to leave out (all are sent by default). */
  readonly signals?: { readonly traces?: boolean; readonly metrics?: boolean; readonly logs?: boolean } | undefined
}

/**
 * What the standard OpenTelemetry variables say (each field only when its variable is set).
 *
 * @since 0.1.0
 * @category models
 */
export interface EnvOptions {
  /** `OTEL_SDK_DISABLED=true`: export nothing, whatever else is set. */
  readonly disabled?: boolean | undefined
  readonly endpoint?: string | undefined
  readonly tracesEndpoint?: string | undefined
  readonly metricsEndpoint?: string | undefined
  readonly logsEndpoint?: string | undefined
  readonly serviceName?: string | undefined
  readonly resourceAttributes?: Readonly<Record<string, string>> | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly protocol?: Protocol | undefined
  /** `OTEL_BSP_SCHEDULE_DELAY` (milliseconds). */
  readonly exportInterval?: number | undefined
  /** `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds). */
  readonly metricsExportInterval?: number | undefined
  /** `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds). */
  readonly exportTimeout?: number | undefined
  /** `OTEL_TRACES_EXPORTER=none`, `OTEL_METRICS_EXPORTER=none`, `OTEL_LOGS_EXPORTER=none`: signals left out. */
  readonly signals?: { readonly traces?: boolean; readonly metrics?: boolean; readonly logs?: boolean } | undefined
}

/**
 * An invalid `OTEL_*` variable; the message names it.
 *
 * @since 0.1.0
 * @category errors
 */
export class TelemetryError extends Data.TaggedError("TelemetryError")<{ readonly message: string }> {}

/**
 * Reads the variables OpenTelemetry SDKs read: `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (and the signal-specific `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT`),
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (`k=v,k=v`, percent-decoded),
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/json`,
 * `http/protobuf`), `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_SCHEDULE_DELAY`,
 * `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds), `OTEL_{TRACES,METRICS,LOGS}_EXPORTER`
 * (`otlp` or `none`) and `OTEL_SDK_DISABLED`.
 *
 * @since 0.1.0
 * @category options
 */
export const optionsFromEnv = (
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<EnvOptions, TelemetryError> =>
  Effect.suspend(() => {
    const parsed = internal.parseEnv(env)
    return "problem" in parsed
      ? Effect.fail(new TelemetryError({ message: parsed.problem }))
      : Effect.succeed(parsed as EnvOptions)
  })

/**
 * The options to export with: an explicit endpoint (a flag) wins over the
 * environment's; `undefined` when there is none (or `OTEL_SDK_DISABLED=true`
 * and no explicit endpoint): nothing is exported then.
 *
 * @since 0.1.0
 * @category options
 */
export const resolve = (
  env: EnvOptions,
  overrides: Partial<Options> = {}
): Options | undefined => {
  if (overrides.endpoint === undefined && env.disabled === true) return undefined
  const endpoint = overrides.endpoint ?? env.endpoint
  const own = overrides.endpoint === undefined
    ? { tracesEndpoint: env.tracesEndpoint, metricsEndpoint: env.metricsEndpoint, logsEndpoint: env.logsEndpoint }
    : {}
  if (endpoint === undefined && own.tracesEndpoint === undefined) return undefined
  const defined = Object.fromEntries(
    Object.entries({
      protocol: env.protocol,
      headers: env.headers,
      resourceAttributes: env.resourceAttributes,
      serviceName: env.serviceName,
      exportInterval: env.exportInterval,
      metricsExportInterval: env.metricsExportInterval,
      exportTimeout: env.exportTimeout,
      signals: env.signals,
      ...own
    }).filter(([, value]) => value !== undefined)
  )
  return {
    ...defined,
    ...overrides,
    endpoint: endpoint ?? new URL(own.tracesEndpoint!).origin
  }
}

/**
 * Installs the OTLP tracer, sends the metrics and adds an OTLP logger beside
 * the current ones (provide it inside `Logging.layer`). Nothing it does fails
 * or waits on the collector.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (options: Options) => Layer.Layer<never> = internal.layer

/**
 * The name of the counter of telemetry dropped (label `signal`: `traces`,
 * `metrics`, `logs`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const droppedMetricName: string = internal.droppedName
