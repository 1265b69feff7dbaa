/**
 * @since 0.1.0
 */
export * as PriorityWorkqueue from "./PriorityWorkqueue.js"

/**
 * @since 0.1.0
 */
export * as RateLimiter from "./RateLimiter.js"

/**
 * @since 0.1.0
 */
export * as Workqueue from "./Workqueue.js"

/**
 * @since 0.1.0
 */
export * as WorkqueueError from "./WorkqueueError.js"

/**
 * @since 0.1.0
 */
export * as WorkqueueMetrics from "./WorkqueueMetrics.js"
