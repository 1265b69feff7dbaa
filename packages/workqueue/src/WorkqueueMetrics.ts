/**
 * The queue metrics, with client-go / controller-runtime names, labelled by
 * `name` and `controller`:
 * `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
 * `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`.
 *
 * Metrics are Effect `Metric`s recorded in the `Metric.MetricRegistry` of the
 * fiber that makes the queue (unless one is provided, the process-wide default
 * registry); every series is created, at zero, when the queue is made. The
 * Manager exports them in Prometheus format. `workqueue_retries_total` counts
 * every delayed add (`addAfter`, `addRateLimited`), as client-go does. The two
 * in-flight gauges are refreshed every 500 ms.
 *
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import type * as Metric from "effect/Metric"
import * as internal from "./internal/metrics.js"

/**
 * The metric names.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: {
  readonly depth: "workqueue_depth"
  readonly adds: "workqueue_adds_total"
  readonly queueDuration: "workqueue_queue_duration_seconds"
  readonly workDuration: "workqueue_work_duration_seconds"
  readonly unfinishedWork: "workqueue_unfinished_work_seconds"
  readonly longestRunning: "workqueue_longest_running_processor_seconds"
  readonly retries: "workqueue_retries_total"
} = internal.names

/**
 * The metrics of the queue called `name` (with `controller` label, default
 * `name`), for reading their values with `Metric.value` (from a fiber that
 * sees the queue's `Metric.MetricRegistry`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const forQueue = (name: string, controller: string = name): QueueMetrics => internal.make(name, controller)

/**
 * The metrics of one queue.
 *
 * @since 0.1.0
 * @category models
 */
export type QueueMetrics = internal.QueueMetrics

/**
 * Records one value into a metric series.
 *
 * @since 0.1.0
 * @category models
 */
export type Update = internal.Update

/**
 * The update function of the series `metric` has in the registry of
 * `context` (created at zero if missing), looked up once. `Metric.updateUnsafe`
 * looks the series up on every call, which costs more than a queue operation
 * or a no-op reconcile; the queue and the controller record through this.
 * Updates go to the very series `Metric.updateUnsafe` would update, for as long
 * as that series stays in the registry.
 *
 * @since 0.1.0
 * @category utils
 */
export const updater: (metric: Metric.Metric<number, unknown>, context: Context.Context<never>) => Update =
  internal.updater
