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

/** The series `metric` has in the registry of `context`, if any. */
const findSeries = (
  metric: Metric.Metric<number, unknown>,
  context: Context.Context<never>
): Metric.Metric.Metadata<number, unknown> | undefined => {
  // The series' attributes: the metric's, merged with the context's (as `Metric.updateUnsafe` merges them).
  const attributes = { ...metric.attributes, ...Context.get(context, Metric.CurrentMetricAttributes) }
  for (const series of Context.get(context, Metric.MetricRegistry).values()) {
    if (
      series.id === metric.id && series.type === metric.type && series.description === metric.description &&
      sameAttributes(series.attributes, attributes)
    ) {
      return series as Metric.Metric.Metadata<number, unknown>
    }
  }
  return undefined
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
  const series = findSeries(metric, context)
  if (series === undefined) return (input) => metric.updateUnsafe(input, context)
  const hooks = series.hooks
  return (input) => hooks.update(input, context)
}

/** The update functions of a queue's series. @internal */
export type QueueRecorder = { readonly [K in keyof QueueMetrics]: Update }

/**
 * The update function of each series a queue registered itself, by the series' `get` hook: a second queue with
 * the same name and controller in the same registry records into the same series, as with `Metric.updateUnsafe`.
 */
const queueSeries = new WeakMap<object, Update>()

/** A series the queue keeps itself: its hooks (for the registry) and its update (for the queue). */
interface OwnSeries {
  readonly hooks: Metric.Metric.Hooks<number, unknown>
  readonly update: Update
}

/** A counter's state, as effect's (non-incremental, number) counters report it. */
const counterSeries = (): OwnSeries => {
  let count = 0
  const update: Update = (input) => {
    count += input
  }
  return { hooks: { get: () => ({ count, incremental: false }), update, modify: update }, update }
}

/** A gauge's state, as effect's (number) gauges report it. */
const gaugeSeries = (): OwnSeries => {
  let value = 0
  const update: Update = (input) => {
    value = input
  }
  return { hooks: { get: () => ({ value }), update, modify: update }, update }
}

/**
 * A histogram's state and update over `boundaries` (ascending, ending with `Infinity`), with the state effect's
 * histograms report: cumulative buckets, count, min, max and sum. A value goes to the first bucket whose boundary
 * is not below it, found from the smallest boundary up: queue and work durations are mostly small.
 */
const histogramSeries = (boundaries: ReadonlyArray<number>): OwnSeries => {
  const bounds = Float64Array.from(boundaries)
  const last = bounds.length - 1
  const counts = new Float64Array(bounds.length)
  let count = 0
  let sum = 0
  let min = Number.MAX_VALUE
  let max = -Number.MAX_VALUE
  const update: Update = (input) => {
    let i = 0
    while (i < last && input > bounds[i]!) i++
    counts[i]!++
    count++
    sum += input
    if (input < min) min = input
    if (input > max) max = input
  }
  const get = () => {
    const buckets: Array<[number, number]> = new Array(bounds.length)
    let cumulated = 0
    for (let i = 0; i < bounds.length; i++) {
      cumulated += counts[i]!
      buckets[i] = [bounds[i]!, cumulated]
    }
    return { buckets, count, min, max, sum }
  }
  return { hooks: { get, update, modify: update }, update }
}

/**
 * The update function of a queue series: the series is created in the registry of `context` if missing, kept by
 * the queue (a plain number or array updated in place, read when the registry is read: `Metric.registerUnsafe`),
 * which costs a fraction of an effect series update on the queue's hot path. The registry reports the same state
 * as an effect series of that type would. A series that already exists is kept: one a queue registered is shared,
 * any other is updated through its own hooks ({@link updater}).
 */
const seriesUpdater = (
  metric: Metric.Metric<number, unknown>,
  context: Context.Context<never>,
  make: () => OwnSeries
): Update => {
  const existing = findSeries(metric, context)
  if (existing !== undefined) return queueSeries.get(existing.hooks.get) ?? updater(metric, context)
  const series = make()
  Metric.registerUnsafe(metric, context, series.hooks)
  queueSeries.set(series.hooks.get, series.update)
  return series.update
}

/**
 * Creates every series of `metrics` in the registry of `context` (effect 4
 * registers a series lazily, at its first read or update), so that each one is
 * exported from the start, at zero, as client-go does (existing series are
 * kept as they are), and resolves their update functions. The queue's own
 * series ignore `Metric.update` from elsewhere: the queue alone records them.
 *
 * @internal
 */
export const recorder = (metrics: QueueMetrics, context: Context.Context<never>): QueueRecorder => ({
  depth: seriesUpdater(metrics.depth, context, gaugeSeries),
  adds: seriesUpdater(metrics.adds, context, counterSeries),
  queueDuration: seriesUpdater(metrics.queueDuration, context, () => histogramSeries(durationBoundaries)),
  workDuration: seriesUpdater(metrics.workDuration, context, () => histogramSeries(durationBoundaries)),
  unfinishedWork: seriesUpdater(metrics.unfinishedWork, context, gaugeSeries),
  longestRunning: seriesUpdater(metrics.longestRunning, context, gaugeSeries),
  retries: seriesUpdater(metrics.retries, context, counterSeries)
})
