/**
 * The controller metrics, with controller-runtime's names and labels, so that
 * existing Grafana dashboards for kubebuilder operators work unchanged:
 *
 * | metric | type | labels |
 * |---|---|---|
 * | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`, `error`, `requeue`, `requeue_after`) |
 * | `controller_runtime_reconcile_errors_total` | counter | `controller` |
 * | `controller_runtime_terminal_reconcile_errors_total` | counter | `controller` |
 * | `controller_runtime_reconcile_panics_total` | counter | `controller` |
 * | `controller_runtime_reconcile_timeouts_total` | counter | `controller` |
 * | `controller_runtime_reconcile_time_seconds` | histogram | `controller` |
 * | `controller_runtime_max_concurrent_reconciles` | gauge | `controller` |
 * | `controller_runtime_active_workers` | gauge | `controller` |
 *
 * `result="requeue"` exists for dashboard compatibility and stays at zero:
 * "requeue now" is not an outcome here (use `RequeueAfter`).
 *
 * @since 0.1.0
 */
import * as internal from "./internal/controllerMetrics.js"

/**
 * The metric names.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: typeof internal.names = internal.names

/**
 * The metrics of the controller called `controller`, for reading with `Metric.value`.
 *
 * @example
 * ```ts
 * import { Metric } from "effect"
 * import { ControllerMetrics } from "@reconcile/core"
 *
 * const successes = Metric.value(ControllerMetrics.forController("webapp").total.success)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const forController = (controller: string): ControllerMetrics => internal.make(controller)

/**
 * One controller's metrics.
 *
 * @since 0.1.0
 * @category models
 */
export type ControllerMetrics = internal.ControllerMetrics
