import * as Context from "effect/Context"
import * as Metric from "effect/Metric"

/** Buckets of client-go's queue and work duration histograms: 10 ns … 1000 s. @internal */
export const durationBoundaries = Metric.exponentialBoundaries({ start: 1e-8, factor: 10, count: 12 })

/** @internal */
export const names = {
  depth: "workqueue_depth",
  adds: "workqueue_adds_total",
  queueDuration: "workqueue_queue_duration_seconds",
  workDuration: "workqueue_work_duration_seconds",
  unfinishedWork: "workqueue_unfinished_work_seconds",
  longestRunning: "workqueue_longest_running_processor_seconds",
  retries: "workqueue_retries_total"
} as const

/** @internal */
export const attributes = (name: string, controller: string): Metric.Metric.AttributeSet => ({ controller, name })

/**
 * The queue's metrics, already carrying its attributes (labels). A series is
 * identified by type, name, description and attributes, so two handles made
 * with the same arguments address the same series of a registry.
 *
 * @internal
 */
export interface QueueMetrics {
  readonly depth: Metric.Gauge<number>
  readonly adds: Metric.Counter<number>
  readonly queueDuration: Metric.Histogram<number>
  readonly workDuration: Metric.Histogram<number>
  readonly unfinishedWork: Metric.Gauge<number>
  readonly longestRunning: Metric.Gauge<number>
  readonly retries: Metric.Counter<number>
}

/**
 * Makes the metric handles of one queue (registering nothing: see
 * {@link register}).
 *
 * @internal
 */
export const make = (name: string, controller: string): QueueMetrics => {
  const labels = attributes(name, controller)
  return {
    depth: Metric.gauge(names.depth, { description: "Current depth of workqueue", attributes: labels }),
    adds: Metric.counter(names.adds, { description: "Total number of adds handled by workqueue", attributes: labels }),
    queueDuration: Metric.histogram(names.queueDuration, {
      description: "How long in seconds an item stays in workqueue before being requested",
      attributes: labels,
      boundaries: durationBoundaries
    }),
    workDuration: Metric.histogram(names.workDuration, {
      description: "How long in seconds processing an item from workqueue takes",
      attributes: labels,
      boundaries: durationBoundaries
    }),
    unfinishedWork: Metric.gauge(names.unfinishedWork, {
      description: "How many seconds of work has been done that is in progress and hasn't been observed by " +
        "work_duration. Large values indicate stuck threads.",
      attributes: labels
    }),
    longestRunning: Metric.gauge(names.longestRunning, {
      description: "How many seconds has the longest running processor for workqueue been running",
      attributes: labels
    }),
    retries: Metric.counter(names.retries, {
      description: "Total number of retries handled by workqueue",
      attributes: labels
    })
  }
}

/**
 * The context a queue records its metrics with: only the `MetricRegistry` of
 * the fiber that made the queue. Ambient `Metric.CurrentMetricAttributes` are
 * left out on purpose (client-go series carry exactly `name` and `controller`).
 *
 * @internal
 */
export const recordingContext = (registry: Metric.MetricRegistry): Context.Context<never> =>
  Context.make(Metric.MetricRegistry, registry)

/** Records one value into a series. @internal */
export type Update = (input: number) => void

const sameAttributes = (a: Metric.Metric.AttributeSet | undefined, b: Metric.Metric.AttributeSet): boolean => {
  const keys = a === undefined ? [] : Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => a![key] === b[key])
}

/**
 * The update function of the series `metric` has in the registry of
 * `context` (created at zero if missing), resolved once: `Metric.updateUnsafe`
 * looks the series up in the registry on every call (its key, the registry,
 * the map), which costs more than the queue operation it records. Updates
 * through it go to the very series `Metric.updateUnsafe` would update, for as
 * long as that series stays in the registry.
 *
 * @internal
 */
export const updater = (metric: Metric.Metric<number, unknown>, context: Context.Context<never>): Update => {
  metric.valueUnsafe(context)
  // The series' attributes: the metric's, merged with the context's (as `Metric.updateUnsafe` merges them).
  const attributes = { ...metric.attributes, ...Context.get(context, Metric.CurrentMetricAttributes) }
  for (const series of Context.get(context, Metric.MetricRegistry).values()) {
    if (
      series.id === metric.id && series.type === metric.type && series.description === metric.description &&
      sameAttributes(series.attributes, attributes)
    ) {
      const hooks = series.hooks as Metric.Metric.Hooks<number, unknown>
      return (input) => hooks.update(input, context)
    }
  }
  return (input) => metric.updateUnsafe(input, context)
}

/** The update functions of a queue's series. @internal */
export type QueueRecorder = { readonly [K in keyof QueueMetrics]: Update }

/**
 * Creates every series of `metrics` in the registry of `context` (effect 4
 * registers a series lazily, at its first read or update), so that each one is
 * exported from the start, at zero, as client-go does (existing series are
 * kept as they are), and resolves their update functions.
 *
 * @internal
 */
export const recorder = (metrics: QueueMetrics, context: Context.Context<never>): QueueRecorder => ({
  depth: updater(metrics.depth, context),
  adds: updater(metrics.adds, context),
  queueDuration: updater(metrics.queueDuration, context),
  workDuration: updater(metrics.workDuration, context),
  unfinishedWork: updater(metrics.unfinishedWork, context),
  longestRunning: updater(metrics.longestRunning, context),
  retries: updater(metrics.retries, context)
})
