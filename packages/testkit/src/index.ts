/**
 * @since 0.1.0
 */
export * as ApiError from "./ApiError.js"

/**
 * @since 0.1.0
 */
export * as Envtest from "./Envtest.js"

/**
 * @since 0.1.0
 */
export * as Faults from "./Faults.js"

/**
 * @since 0.1.0
 */
export * as KubeObject from "./KubeObject.js"

/**
 * @since 0.1.0
 */
export * as LabelSelector from "./LabelSelector.js"

/**
 * @since 0.1.0
 */
export * as ResourceType from "./ResourceType.js"

/**
 * @since 0.1.0
 */
export * as Simulators from "./Simulators.js"

/**
 * @since 0.1.0
 */
export * as TestApiServer from "./TestApiServer.js"

/**
 * @since 0.1.0
 */
export * as TestCluster from "./TestCluster.js"

/**
 * @since 0.1.0
 */
export * as TestKube from "./TestKube.js"

/**
 * @since 0.1.0
 */
export * as WebhookChecks from "./WebhookChecks.js"
