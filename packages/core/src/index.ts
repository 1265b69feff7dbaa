/**
 * @since 0.1.0
 */
export * as Controller from "./Controller.js"

/**
 * @since 0.1.0
 */
export * as ControllerMetrics from "./ControllerMetrics.js"

/**
 * @since 0.1.0
 */
export * as Event from "./Event.js"

/**
 * @since 0.1.0
 */
export * as Handler from "./Handler.js"

/**
 * @since 0.1.0
 */
export * as HealthServer from "./HealthServer.js"

/**
 * @since 0.1.0
 */
export * as Inspector from "./Inspector.js"

/**
 * @since 0.1.0
 */
export * as InspectorServer from "./InspectorServer.js"

/**
 * @since 0.1.0
 */
export * as LeaderElection from "./LeaderElection.js"

/**
 * @since 0.1.0
 */
export * as Logging from "./Logging.js"

/**
 * @since 0.1.0
 */
export * as Manager from "./Manager.js"

/**
 * @since 0.1.0
 */
export * as ObjectMeta from "./ObjectMeta.js"

/**
 * @since 0.1.0
 */
export * as Predicates from "./Predicates.js"

/**
 * @since 0.1.0
 */
export * as ProfilingServer from "./ProfilingServer.js"

/**
 * @since 0.1.0
 */
export * as Prometheus from "./Prometheus.js"

/**
 * @since 0.1.0
 */
export * as Reconcile from "./Reconcile.js"

/**
 * @since 0.1.0
 */
export * as Request from "./Request.js"

/**
 * @since 0.1.0
 */
export * as Source from "./Source.js"

/**
 * @since 0.1.0
 */
export * as Telemetry from "./Telemetry.js"
