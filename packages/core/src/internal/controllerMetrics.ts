import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"

/** controller-runtime's metric names. @internal */
export const names = {
  reconcileTotal: "controller_runtime_reconcile_total",
  reconcileErrors: "controller_runtime_reconcile_errors_total",
  terminalErrors: "controller_runtime_terminal_reconcile_errors_total",
  panics: "controller_runtime_reconcile_panics_total",
  timeouts: "controller_runtime_reconcile_timeouts_total",
  reconcileTime: "controller_runtime_reconcile_time_seconds",
  maxConcurrent: "controller_runtime_max_concurrent_reconciles",
  activeWorkers: "controller_runtime_active_workers"
} as const

/** The `result` label values of `controller_runtime_reconcile_total`. @internal */
export type Result = "success" | "error" | "requeue" | "requeue_after"

/** controller-runtime's reconcile-time buckets (seconds). @internal */
export const reconcileTimeBoundaries = MetricBoundaries.fromIterable([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60
])

/** A controller's metrics, tagged with `controller` (and `result`). @internal */
export interface ControllerMetrics {
  readonly total: Record<Result, Metric.Metric.Counter<number>>
  readonly errors: Metric.Metric.Counter<number>
  readonly terminalErrors: Metric.Metric.Counter<number>
  readonly panics: Metric.Metric.Counter<number>
  readonly timeouts: Metric.Metric.Counter<number>
  readonly reconcileTime: Metric.Metric.Histogram<number>
  readonly maxConcurrent: Metric.Metric.Gauge<number>
  readonly activeWorkers: Metric.Metric.Gauge<number>
}

/** @internal */
export const make = (controller: string): ControllerMetrics => {
  const tags = [MetricLabel.make("controller", controller)]
  const counter = (name: string, description: string, extra: ReadonlyArray<MetricLabel.MetricLabel> = []) =>
    Metric.fromMetricKey(MetricKey.taggedWithLabels(MetricKey.counter(name, { description }), [...tags, ...extra]))
  const total = (result: Result) =>
    counter(names.reconcileTotal, "Total number of reconciliations per controller", [
      MetricLabel.make("result", result)
    ])
  return {
    total: {
      success: total("success"),
      error: total("error"),
      requeue: total("requeue"),
      requeue_after: total("requeue_after")
    },
    errors: counter(names.reconcileErrors, "Total number of reconciliation errors per controller"),
    terminalErrors: counter(names.terminalErrors, "Total number of terminal reconciliation errors per controller"),
    panics: counter(names.panics, "Total number of reconciliation panics per controller"),
    timeouts: counter(names.timeouts, "Total number of reconciliation timeouts per controller"),
    reconcileTime: Metric.fromMetricKey(
      MetricKey.taggedWithLabels(
        MetricKey.histogram(names.reconcileTime, reconcileTimeBoundaries, "Length of time per reconciliation per controller"),
        tags
      )
    ),
    maxConcurrent: Metric.fromMetricKey(
      MetricKey.taggedWithLabels(
        MetricKey.gauge(names.maxConcurrent, { description: "Maximum number of concurrent reconciles per controller" }),
        tags
      )
    ),
    activeWorkers: Metric.fromMetricKey(
      MetricKey.taggedWithLabels(
        MetricKey.gauge(names.activeWorkers, { description: "Number of currently used workers per controller" }),
        tags
      )
    )
  }
}

/** Registers every series at zero so dashboards see them before the first event, as controller-runtime does. @internal */
export const initialize = (metrics: ControllerMetrics, maxConcurrent: number): void => {
  for (const counter of Object.values(metrics.total)) counter.unsafeUpdate(0, [])
  metrics.errors.unsafeUpdate(0, [])
  metrics.terminalErrors.unsafeUpdate(0, [])
  metrics.panics.unsafeUpdate(0, [])
  metrics.timeouts.unsafeUpdate(0, [])
  metrics.maxConcurrent.unsafeUpdate(maxConcurrent, [])
  metrics.activeWorkers.unsafeUpdate(0, [])
}
