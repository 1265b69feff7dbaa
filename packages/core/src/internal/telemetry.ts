import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpResource from "effect/observability/OtlpResource"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Telemetry from "../Telemetry.js"
import * as logging from "./logging.js"

/** The signals, as OTLP names them (`/v1/traces`, …). */
type Signal = "traces" | "metrics" | "logs"

/** The series of the telemetry that could not be sent. @internal */
export const droppedName = "telemetry_export_dropped_total"

const dropped = (signal: Signal) =>
  Metric.counter(droppedName, {
    description: "Telemetry items (spans, metric points, log records) dropped: the OTLP collector was down, " +
      "slow or refused them, or the export queue was full",
    attributes: { signal }
  })

// --- the environment ---------------------------------------------------------

/** `k=v,k=v` with percent-encoded keys and values (the W3C Baggage format `OTEL_RESOURCE_ATTRIBUTES` uses). */
export const parseResourceAttributes = (value: string): Record<string, string> | string => {
  const out: Record<string, string> = {}
  for (const part of value.split(",")) {
    const item = part.trim()
    if (item === "") continue
    const eq = item.indexOf("=")
    if (eq <= 0) return `"${item}" is not key=value`
    try {
      out[decodeURIComponent(item.slice(0, eq).trim())] = decodeURIComponent(item.slice(eq + 1).trim())
    } catch {
      return `"${item}" is not percent-encoded properly`
    }
  }
  return out
}

/** `k=v,k=v` headers (`OTEL_EXPORTER_OTLP_HEADERS`), percent-decoded. */
const parseHeaders = parseResourceAttributes

const validUrl = (name: string, value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : `${name} must be an http(s) URL`
  } catch {
    return `${name} "${value}" is not a URL`
  }
}

/** The options `OTEL_*` variables give, or why they are invalid. @internal */
export const parseEnv = (
  env: Readonly<Record<string, string | undefined>>
): Telemetry.EnvOptions | { readonly problem: string } => {
  const get = (name: string) => {
    const value = env[name]?.trim()
    return value === undefined || value === "" ? undefined : value
  }
  if (get("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return { disabled: true }
  const out: {
    -readonly [K in keyof Telemetry.EnvOptions]: Telemetry.EnvOptions[K]
  } = {}
  const urls = [
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "endpoint"],
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "tracesEndpoint"],
    ["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "metricsEndpoint"],
    ["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "logsEndpoint"]
  ] as const
  for (const [name, key] of urls) {
    const value = get(name)
    if (value === undefined) continue
    const problem = validUrl(name, value)
    if (problem !== undefined) return { problem }
    out[key] = value
  }
  const serviceName = get("OTEL_SERVICE_NAME")
  if (serviceName !== undefined) out.serviceName = serviceName
  const attributes = get("OTEL_RESOURCE_ATTRIBUTES")
  if (attributes !== undefined) {
    const parsed = parseResourceAttributes(attributes)
    if (typeof parsed === "string") return { problem: `OTEL_RESOURCE_ATTRIBUTES: ${parsed}` }
    out.resourceAttributes = parsed
  }
  const headers = get("OTEL_EXPORTER_OTLP_HEADERS")
  if (headers !== undefined) {
    const parsed = parseHeaders(headers)
    if (typeof parsed === "string") return { problem: `OTEL_EXPORTER_OTLP_HEADERS: ${parsed}` }
    out.headers = parsed
  }
  const millis = [
    ["OTEL_BSP_SCHEDULE_DELAY", "exportInterval"],
    ["OTEL_METRIC_EXPORT_INTERVAL", "metricsExportInterval"],
    ["OTEL_EXPORTER_OTLP_TIMEOUT", "exportTimeout"]
  ] as const
  for (const [name, key] of millis) {
    const value = get(name)
    if (value === undefined) continue
    if (!/^\d+$/.test(value)) return { problem: `${name} "${value}" is not a number of milliseconds` }
    out[key] = Number(value)
  }
  // OTEL_TRACES_EXPORTER=none (also METRICS, LOGS): that signal is not sent; "otlp" (the default) is
  const signals: { traces?: boolean; metrics?: boolean; logs?: boolean } = {}
  for (const signal of ["traces", "metrics", "logs"] as const) {
    const name = `OTEL_${signal.toUpperCase()}_EXPORTER`
    const value = get(name)?.toLowerCase()
    if (value === undefined || value === "otlp") continue
    if (value !== "none") return { problem: `${name} "${value}": only otlp and none are supported` }
    signals[signal] = false
  }
  if (Object.keys(signals).length > 0) out.signals = signals
  const protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
  if (protocol !== undefined) {
    if (protocol !== "http/json" && protocol !== "http/protobuf") {
      return { problem: `OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}": only http/json and http/protobuf are supported` }
    }
    out.protocol = protocol
  }
  return out
}

/** The URL of a signal: its own endpoint as given, else the base endpoint with `/v1/<signal>` appended. */
export const signalUrl = (options: Telemetry.Options, signal: Signal): string => {
  const own = signal === "traces"
    ? options.tracesEndpoint
    : signal === "metrics"
    ? options.metricsEndpoint
    : options.logsEndpoint
  if (own !== undefined) return own
  return `${options.endpoint.replace(/\/+$/, "")}/v1/${signal}`
}

// --- the guarded transport -------------------------------------------------

/**
 * What effect's exporter (`OtlpExporter.make`) does on its own, and why it is guarded here:
 * - it retries a failed export three times (1 s apart), then drops its buffer and stops exporting for 60 s, without
 *   counting what it dropped and with a debug line only;
 * - a full buffer (`maxBatchSize`) forks one more export at once, whatever is in flight: with a collector that never
 *   answers (no timeout), exports pile up, each holding its batch — memory without bound.
 * The client given to it here answers every export itself: at most one request per signal in flight, bounded by
 * `exportTimeout`; a batch that comes while one is in flight, or whose request fails, is dropped and counted
 * (`telemetry_export_dropped_total{signal}`), and the exporter always sees a success (so it never retries nor
 * disables itself). While a signal's exports fail, one is tried per `retryInterval` (the others are dropped). The
 * first failure of an outage is logged once (per signal), and so is the recovery. A batch that will be dropped is
 * not serialized (the serialization asks first), so an outage costs less than a working collector.
 */
interface Guard {
  readonly client: HttpClient.HttpClient
  /**
   * Whether a span starting now is sampled: not while the traces' exports fail and none is due to be tried (it would
   * be dropped: it is counted now, and costs neither its IDs nor its OTLP form).
   */
  readonly sample: () => boolean
  readonly serialization: (base: OtlpSerialization.OtlpSerialization["Service"]) => OtlpSerialization.OtlpSerialization[
    "Service"
  ]
}

const accepted = (request: HttpClientRequest.HttpClientRequest) =>
  HttpClientResponse.fromWeb(request, new Response(null, { status: 204 }))

const makeGuard = (options: {
  readonly urls: ReadonlyMap<string, Signal>
  readonly exportTimeout: Duration.Duration
  readonly retryInterval: Duration.Duration
  readonly endpoint: string
}): Effect.Effect<Guard, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const base = yield* HttpClient.HttpClient
    const context = yield* Effect.context<never>()
    const clock = yield* Clock.Clock
    const retryMillis = Duration.toMillis(options.retryInterval)
    /** The number of items of each body the serialization made. */
    const sizes = new WeakMap<HttpBody.HttpBody, number>()
    /** The bodies of batches dropped without serializing them. */
    const skipped = new WeakSet<HttpBody.HttpBody>()
    const inFlight = new Set<Signal>()
    /** The signals whose exports fail, with the items dropped since. */
    const failing = new Map<Signal, number>()
    const lastAttempt = new Map<Signal, number>()
    /** Whether a batch of `signal` made now may be sent. */
    const admit = (signal: Signal): boolean =>
      !inFlight.has(signal) &&
      !(failing.has(signal) && clock.currentTimeMillisUnsafe() - (lastAttempt.get(signal) ?? 0) < retryMillis)
    // the series exist from the start, at 0
    for (const signal of ["traces", "metrics", "logs"] as const) dropped(signal).updateUnsafe(0, context)
    const count = (signal: Signal, items: number) => {
      if (items > 0) dropped(signal).updateUnsafe(items, context)
    }
    const failed = (signal: Signal, items: number, reason: string): Effect.Effect<void> => {
      count(signal, items)
      const before = failing.get(signal)
      failing.set(signal, (before ?? 0) + items)
      if (before !== undefined) return Effect.void
      return Effect.logWarning("OTLP export failing: dropping telemetry until the collector accepts it again").pipe(
        annotated({ signal, endpoint: options.endpoint, reason })
      )
    }
    const succeeded = (signal: Signal): Effect.Effect<void> => {
      const lost = failing.get(signal)
      if (lost === undefined) return Effect.void
      failing.delete(signal)
      return Effect.logInfo("OTLP export recovered").pipe(
        annotated({ signal, endpoint: options.endpoint, dropped: lost })
      )
    }
    const client: HttpClient.HttpClient = HttpClient.makeWith(
      (effect: Effect.Effect<HttpClientRequest.HttpClientRequest, HttpClientError.HttpClientError>) =>
        Effect.flatMap(effect, (request) => {
          const signal = options.urls.get(request.url) ?? "traces"
          const items = sizes.get(request.body) ?? 0
          if (skipped.has(request.body) || inFlight.has(signal)) {
            count(signal, items)
            if (failing.has(signal)) failing.set(signal, failing.get(signal)! + items)
            return Effect.succeed(accepted(request))
          }
          inFlight.add(signal)
          lastAttempt.set(signal, clock.currentTimeMillisUnsafe())
          return base.execute(request).pipe(
            Effect.flatMap((response) =>
              Effect.flatMap(Effect.exit(response.arrayBuffer), () =>
                response.status >= 200 && response.status < 300
                  ? succeeded(signal)
                  : failed(signal, items, `HTTP ${response.status}`))
            ),
            Effect.timeoutOrElse({
              duration: options.exportTimeout,
              orElse: () => failed(signal, items, `no answer within ${Duration.format(options.exportTimeout)}`)
            }),
            Effect.catchCause((cause) => failed(signal, items, logging.errorText(causeError(cause)))),
            Effect.ensuring(Effect.sync(() => inFlight.delete(signal))),
            Effect.as(accepted(request)),
            // the exporter's own requests are never traced (they would export themselves)
            Effect.withTracerEnabled(false)
          )
        }),
      Effect.succeed
    )
    const serialization = (base: OtlpSerialization.OtlpSerialization["Service"]) => {
      const body = <A>(signal: Signal, data: A, items: number, serialize: (data: A) => HttpBody.HttpBody) => {
        let made: HttpBody.HttpBody
        if (admit(signal)) {
          made = serialize(data)
        } else {
          made = HttpBody.uint8Array(new Uint8Array(0))
          skipped.add(made)
        }
        sizes.set(made, items)
        return made
      }
      return {
        traces: (data) =>
          body(
            "traces",
            data,
            sum(data.resourceSpans, (r) => sum(r.scopeSpans, (s) => s.spans?.length ?? 0)),
            base.traces
          ),
        metrics: (data) =>
          body(
            "metrics",
            data,
            sum(data.resourceMetrics, (r) => sum(r.scopeMetrics, (s) => sum(s.metrics, pointsOf))),
            base.metrics
          ),
        logs: (data) =>
          body(
            "logs",
            data,
            sum(data.resourceLogs, (r) => sum(r.scopeLogs, (s) => s.logRecords?.length ?? 0)),
            base.logs
          )
      } satisfies OtlpSerialization.OtlpSerialization["Service"]
    }
    const sample = () => {
      if (
        !failing.has("traces") || !(clock.currentTimeMillisUnsafe() - (lastAttempt.get("traces") ?? 0) < retryMillis)
      ) {
        return true
      }
      count("traces", 1)
      failing.set("traces", failing.get("traces")! + 1)
      return false
    }
    return { client, serialization, sample }
  })

/** These annotations only (not those effect's exporter sets around its export: `package`, `module`). */
const annotated = (annotations: Record<string, unknown>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, References.CurrentLogAnnotations, annotations)

const causeError = (cause: Cause.Cause<unknown>): unknown => {
  const reason = cause.reasons[0]
  if (reason === undefined) return "failed"
  if (reason._tag === "Fail") return reason.error
  if (reason._tag === "Die") return reason.defect
  return "interrupted"
}

const sum = <A>(items: ReadonlyArray<A> | undefined, f: (a: A) => number): number => {
  let total = 0
  for (const item of items ?? []) total += f(item)
  return total
}

const pointsOf = (metric: unknown): number => {
  const m = metric as Record<string, { readonly dataPoints?: ReadonlyArray<unknown> } | undefined>
  return m.sum?.dataPoints?.length ?? m.gauge?.dataPoints?.length ?? m.histogram?.dataPoints?.length ??
    m.exponentialHistogram?.dataPoints?.length ?? m.summary?.dataPoints?.length ?? 1
}

// --- logs ----------------------------------------------------------------------

const severity: Record<string, number> = {
  trace: 1,
  debug: 5,
  info: 9,
  warn: 13,
  warning: 13,
  error: 17,
  fatal: 21
}

const attributeValue = (value: unknown): Record<string, unknown> => {
  switch (typeof value) {
    case "string":
      return { stringValue: value }
    case "boolean":
      return { boolValue: value }
    case "number":
      return Number.isInteger(value) ? { intValue: value } : { doubleValue: value }
    default:
      return { stringValue: JSON.stringify(value) ?? "null" }
  }
}

/**
 * A logger sending each record over OTLP: the record the process's own loggers write (internal/logging.ts: redacted,
 * its fields as attributes), with the trace and span of the fiber when it runs in one.
 */
const otlpLogger = (options: {
  readonly url: string
  readonly headers: Record<string, string> | undefined
  readonly resource: OtlpResource.Resource
  readonly exportInterval: Duration.Duration
  readonly maxQueueSize: number
  readonly shutdownTimeout: Duration.Duration
}): Effect.Effect<
  Logger.Logger<unknown, void>,
  never,
  OtlpExporter.Flusher | OtlpSerialization.OtlpSerialization | HttpClient.HttpClient | Scope.Scope
> =>
  Effect.gen(function*() {
    const serialization = yield* OtlpSerialization.OtlpSerialization
    const scope = { name: "reconcile" }
    const exporter = yield* OtlpExporter.make({
      label: "OtlpLogger",
      url: options.url,
      headers: options.headers,
      exportInterval: options.exportInterval,
      maxBatchSize: options.maxQueueSize,
      shutdownTimeout: options.shutdownTimeout,
      body: (logRecords) => [
        serialization.logs({ resourceLogs: [{ resource: options.resource, scopeLogs: [{ scope, logRecords }] }] }),
        Effect.void
      ]
    })
    return Logger.make((input) => {
      const record = logging.record(input, "number")
      const nanos = `${BigInt(input.date.getTime()) * 1_000_000n}`
      const span = input.fiber.cache.span
      const out: Record<string, unknown> = {
        timeUnixNano: nanos,
        observedTimeUnixNano: nanos,
        severityNumber: severity[record.level] ?? 9,
        severityText: record.level.toUpperCase(),
        body: { stringValue: record.msg },
        attributes: record.fields.map(([key, value]) => ({ key, value: attributeValue(value) })),
        droppedAttributesCount: 0
      }
      if (span !== undefined) {
        out.traceId = span.traceId
        out.spanId = span.spanId
      }
      exporter.push(out)
    })
  })

// --- the layer -------------------------------------------------------------------

/** @internal */
export const layer = (options: Telemetry.Options): Layer.Layer<never> => {
  const exportTimeout = Duration.fromInputUnsafe(options.exportTimeout ?? "10 seconds")
  const exportInterval = Duration.fromInputUnsafe(options.exportInterval ?? "1 second")
  const metricsExportInterval = Duration.fromInputUnsafe(options.metricsExportInterval ?? "15 seconds")
  const shutdownTimeout = Duration.fromInputUnsafe(options.shutdownTimeout ?? "3 seconds")
  const retryInterval = Duration.fromInputUnsafe(options.retryInterval ?? "1 second")
  const maxQueueSize = Math.max(1, Math.floor(options.maxQueueSize ?? 2048))
  const urls = new Map<string, Signal>(
    (["traces", "metrics", "logs"] as const).map((signal) => [signalUrl(options, signal), signal])
  )
  const resourceOptions = {
    serviceName: options.serviceName ?? options.resourceAttributes?.["service.name"] ?? "reconcile",
    serviceVersion: options.serviceVersion ?? options.resourceAttributes?.["service.version"],
    attributes: { ...options.resourceAttributes }
  }

  return Layer.unwrap(Effect.gen(function*() {
    const guard = yield* makeGuard({ urls, exportTimeout, retryInterval, endpoint: options.endpoint })
    const base = options.protocol === "http/protobuf"
      ? OtlpSerialization.layerProtobuf
      : OtlpSerialization.layerJson
    const transport = Layer.mergeAll(
      Layer.succeed(HttpClient.HttpClient, guard.client),
      Layer.effect(
        OtlpSerialization.OtlpSerialization,
        Effect.map(OtlpSerialization.OtlpSerialization, guard.serialization)
      ).pipe(Layer.provide(base)),
      // only these options: effect's layers would also read the process's OTEL_* variables
      ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} }))
    )
    const traces = Layer.effect(
      Tracer.Tracer,
      Effect.map(
        OtlpTracer.make({
          url: signalUrl(options, "traces"),
          resource: resourceOptions,
          headers: options.headers,
          exportInterval,
          maxBatchSize: maxQueueSize,
          shutdownTimeout
        }),
        (tracer) =>
          Tracer.make({
            span: (span) => tracer.span(span.sampled && !guard.sample() ? { ...span, sampled: false } : span),
            ...(tracer.context === undefined ? {} : { context: tracer.context })
          })
      )
    )
    const metrics = OtlpMetrics.layer({
      url: signalUrl(options, "metrics"),
      resource: resourceOptions,
      headers: options.headers,
      exportInterval: metricsExportInterval,
      shutdownTimeout
    })
    const logs = Logger.layer(
      [otlpLogger({
        url: signalUrl(options, "logs"),
        headers: options.headers,
        resource: OtlpResource.make(resourceOptions),
        exportInterval,
        maxQueueSize,
        shutdownTimeout
      })],
      { mergeWithExisting: true }
    )
    const signals = [
      options.signals?.traces === false ? undefined : traces,
      options.signals?.metrics === false ? undefined : metrics,
      options.signals?.logs === false ? undefined : logs
    ].filter((l) => l !== undefined)
    return Layer.mergeAll(Layer.empty, ...signals).pipe(
      Layer.provide(OtlpExporter.layerFlusher),
      Layer.provide(transport)
    ) as Layer.Layer<never>
  })).pipe(Layer.provide(FetchHttpClient.layer))
}
