import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"

/** Buckets of client-go's queue and work duration histograms: 10 ns … 1000 s. @internal */
export const durationBoundaries = MetricBoundaries.exponential({ start: 1e-8, factor: 10, count: 12 })

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
export const labels = (name: string, controller: string): ReadonlyArray<MetricLabel.MetricLabel> => [
  MetricLabel.make("controller", controller),
  MetricLabel.make("name", name)
]

/**
 * The queue's metrics, already tagged with its labels. Built from tagged
 * `MetricKey`s so that every update goes straight to a cached hook (tagging a
 * `Metric` would re-resolve the hook on every update).
 *
 * @internal
 */
export interface QueueMetrics {
  readonly depth: Metric.Metric.Gauge<number>
  readonly adds: Metric.Metric.Counter<number>
  readonly queueDuration: Metric.Metric.Histogram<number>
  readonly workDuration: Metric.Metric.Histogram<number>
  readonly unfinishedWork: Metric.Metric.Gauge<number>
  readonly longestRunning: Metric.Metric.Gauge<number>
  readonly retries: Metric.Metric.Counter<number>
}

/**
 * Makes (and registers, so that every series is exported from the start, at
 * zero, as client-go does) the metrics of one queue.
 *
 * @internal
 */
export const make = (name: string, controller: string): QueueMetrics => {
  const tags = labels(name, controller)
  const tagged = <K extends MetricKey.MetricKey.Untyped>(key: K): K => MetricKey.taggedWithLabels(key, tags) as K
  const metrics: QueueMetrics = {
    depth: Metric.fromMetricKey(tagged(MetricKey.gauge(names.depth, { description: "Current depth of workqueue" }))),
    adds: Metric.fromMetricKey(
      tagged(MetricKey.counter(names.adds, { description: "Total number of adds handled by workqueue" }))
    ),
    queueDuration: Metric.fromMetricKey(
      tagged(
        MetricKey.histogram(
          names.queueDuration,
          durationBoundaries,
          "How long in seconds an item stays in workqueue before being requested"
        )
      )
    ),
    workDuration: Metric.fromMetricKey(
      tagged(
        MetricKey.histogram(
          names.workDuration,
          durationBoundaries,
          "How long in seconds processing an item from workqueue takes"
        )
      )
    ),
    unfinishedWork: Metric.fromMetricKey(
      tagged(
        MetricKey.gauge(names.unfinishedWork, {
          description: "How many seconds of work has been done that is in progress and hasn't been observed by " +
            "work_duration. Large values indicate stuck threads."
        })
      )
    ),
    longestRunning: Metric.fromMetricKey(
      tagged(
        MetricKey.gauge(names.longestRunning, {
          description: "How many seconds has the longest running processor for workqueue been running"
        })
      )
    ),
    retries: Metric.fromMetricKey(
      tagged(MetricKey.counter(names.retries, { description: "Total number of retries handled by workqueue" }))
    )
  }
  for (const metric of Object.values(metrics)) metric.register()
  return metrics
}
