import type * as Context from "effect/Context"
import * as Metric from "effect/Metric"

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

/** controller-runtime's reconcile-time buckets (seconds), then +Inf. @internal */
export const reconcileTimeBoundaries: ReadonlyArray<number> = Metric.boundariesFromIterable([
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.15,
  0.2,
  0.25,
  0.3,
  0.35,
  0.4,
  0.45,
  0.5,
  0.6,
  0.7,
  0.8,
  0.9,
  1.0,
  1.25,
  1.5,
  1.75,
  2.0,
  2.5,
  3.0,
  3.5,
  4.0,
  4.5,
  5,
  6,
  7,
  8,
  9,
  10,
  15,
  20,
  25,
  30,
  40,
  50,
  60
])

/** A controller's metrics, with the attributes `controller` (and `result`). @internal */
export interface ControllerMetrics {
  readonly total: Record<Result, Metric.Counter<number>>
  readonly errors: Metric.Counter<number>
  readonly terminalErrors: Metric.Counter<number>
  readonly panics: Metric.Counter<number>
  readonly timeouts: Metric.Counter<number>
  readonly reconcileTime: Metric.Histogram<number>
  readonly maxConcurrent: Metric.Gauge<number>
  readonly activeWorkers: Metric.Gauge<number>
}

/**
 * The metrics are built with their attributes rather than with `Metric.withAttributes`, whose wrapper would merge
 * the attributes into the context on every update.
 *
 * @internal
 */
export const make = (controller: string): ControllerMetrics => {
  const counter = (name: string, description: string, result?: Result) =>
    Metric.counter(name, {
      description,
      attributes: result === undefined ? { controller } : { controller, result }
    })
  const total = (result: Result) =>
    counter(names.reconcileTotal, "Total number of reconciliations per controller", result)
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
    reconcileTime: Metric.histogram(names.reconcileTime, {
      description: "Length of time per reconciliation per controller",
      boundaries: reconcileTimeBoundaries,
      attributes: { controller }
    }),
    maxConcurrent: Metric.gauge(names.maxConcurrent, {
      description: "Maximum number of concurrent reconciles per controller",
      attributes: { controller }
    }),
    activeWorkers: Metric.gauge(names.activeWorkers, {
      description: "Number of currently used workers per controller",
      attributes: { controller }
    })
  }
}

/**
 * Registers every series at zero so dashboards see them before the first event, as controller-runtime does. The
 * series live in the `MetricRegistry` of `context` (effect 4 keeps the registry in the context).
 *
 * @internal
 */
export const initialize = (
  metrics: ControllerMetrics,
  maxConcurrent: number,
  context: Context.Context<never>
): void => {
  for (const counter of Object.values(metrics.total)) counter.updateUnsafe(0, context)
  metrics.errors.updateUnsafe(0, context)
  metrics.terminalErrors.updateUnsafe(0, context)
  metrics.panics.updateUnsafe(0, context)
  metrics.timeouts.updateUnsafe(0, context)
  metrics.maxConcurrent.updateUnsafe(maxConcurrent, context)
  metrics.activeWorkers.updateUnsafe(0, context)
}
