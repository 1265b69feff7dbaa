/**
 * Prometheus text exposition (format 0.0.4) of Effect's metrics, what a
 * `/metrics` endpoint serves.
 *
 * The text is produced by `prom-client`, which owns the format and its
 * escaping; this module only maps Effect's metric snapshots to prom-client
 * metric families (effect's own `PrometheusMetrics` neither sorts families
 * nor guards against type clashes, and rewrites names such as `__proto__`):
 *
 * | Effect metric | Prometheus family |
 * |---|---|
 * | counter | `counter` |
 * | gauge | `gauge` |
 * | histogram | `histogram`: `_bucket{le=...}` (cumulative, ending with `le="+Inf"`), `_sum`, `_count` |
 * | summary | `summary`: `{quantile=...}` (`NaN` before the first sample), `_sum`, `_count` |
 * | frequency | `counter` with one sample per occurrence, labelled {@link frequencyLabel} (`key`) |
 *
 * - Metrics with one name and different attributes are one family with
 *   several label sets; the attributes become labels, in their record's order.
 * - The description becomes `# HELP` (the first non-empty one of the family).
 * - The `le` label of histogram buckets and the `quantile` label of summaries
 *   replace attributes of the same name.
 * - Names are made valid: characters outside `[a-zA-Z0-9_:]` (`[a-zA-Z0-9_]`
 *   for labels) become `_`, and a leading digit gets a `_` prefix.
 * - Prometheus allows one type per name: when Effect metrics of different
 *   kinds share a name, the first one in Effect's registry keeps it and the
 *   others are left out. Two metrics with one name and one label set (they
 *   differ only by description or histogram boundaries) give one series: the
 *   first.
 * - Families are sorted by name and series by labels, so the output is stable.
 *
 * {@link text} adds the process and Node.js metrics of prom-client's default
 * collectors (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
 * `nodejs_heap_size_used_bytes`, `nodejs_eventloop_lag_seconds`,
 * `nodejs_gc_duration_seconds`, …), sorted among Effect's families; those
 * names belong to the collectors (an Effect metric of the same name is left
 * out). This is what the Manager's `/metrics` serves.
 *
 * Each call builds a fresh prom-client `Registry` from one `Metric.snapshot`:
 * the text is a consistent reading of every metric at one instant, families
 * that appear later need no registration, and concurrent scrapes share no
 * mutable state. Building it costs about as much as formatting it.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as Metric from "effect/Metric"
import * as internal from "./internal/prometheus.js"

/**
 * The HTTP `Content-Type` of the exposition text:
 * `text/plain; version=0.0.4; charset=utf-8` (prom-client's
 * `prometheusContentType`).
 *
 * @since 0.1.0
 * @category constants
 */
export const contentType: string = internal.contentType

/**
 * The label that carries the occurrence of a frequency metric: a frequency
 * `errors` that saw `"conflict"` twice is exposed as
 * `errors{key="conflict"} 2`. It replaces an attribute of the same name.
 *
 * @since 0.1.0
 * @category constants
 */
export const frequencyLabel: string = internal.frequencyLabel

/**
 * The exposition text of every metric in Effect's global registry, read when
 * the effect runs.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Prometheus } from "@reconcile/core"
 *
 * const adds = Metric.counter("workqueue_adds_total", {
 *   description: "Total adds",
 *   attributes: { name: "webapp" }
 * })
 *
 * Effect.gen(function*() {
 *   yield* Metric.update(adds, 1)
 *   const text = yield* Prometheus.snapshotText
 *   // # HELP workqueue_adds_total Total adds
 *   // # TYPE workqueue_adds_total counter
 *   // workqueue_adds_total{name="webapp"} 1
 * })
 * ```
 *
 * @since 0.1.0
 * @category exposition
 */
export const snapshotText: Effect.Effect<string> = internal.snapshotText

/**
 * The exposition text of the given metric snapshots, e.g. a filtered
 * `Metric.snapshot`.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Prometheus } from "@reconcile/core"
 *
 * // Only the controller-runtime metrics.
 * const controllerMetrics = Metric.snapshot.pipe(
 *   Effect.map((snapshots) => snapshots.filter((snapshot) => snapshot.id.startsWith("controller_runtime_"))),
 *   Effect.flatMap(Prometheus.format)
 * )
 * ```
 *
 * @since 0.1.0
 * @category exposition
 */
export const format: (snapshots: ReadonlyArray<Metric.Metric.Snapshot>) => Effect.Effect<string> = internal.format

/**
 * Options of {@link text}.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextOptions {
  /**
   * Include prom-client's default collectors: process (CPU, memory, file descriptors, start time) and Node.js (heap,
   * event loop lag, garbage collection, active handles, version) metrics. Default `true`.
   */
  readonly processMetrics?: boolean | undefined
}

/**
 * The exposition text of Effect's metrics and, unless turned off, the process
 * and Node.js metrics of prom-client's default collectors: what the Manager's
 * `/metrics` serves. The collectors are made on the first call with
 * `processMetrics` on, once per process (some of them observe the process
 * from then on: the event loop delay, garbage collection).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Prometheus } from "@reconcile/core"
 *
 * Effect.gen(function*() {
 *   const text = yield* Prometheus.text()
 *   // # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
 *   // # TYPE process_cpu_seconds_total counter
 *   // process_cpu_seconds_total 0.42
 *   // …
 * })
 * ```
 *
 * @since 0.1.0
 * @category exposition
 */
export const text: (options?: TextOptions) => Effect.Effect<string> = internal.text
