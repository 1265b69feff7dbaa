/**
 * @since 0.1.0
 */
export * as Admission from "./Admission.js"

/**
 * @since 0.1.0
 */
export * as Apply from "./Apply.js"

/**
 * @since 0.1.0
 */
export * as Cache from "./Cache.js"

/**
 * @since 0.1.0
 */
export * as CertificateManager from "./CertificateManager.js"

/**
 * @since 0.1.0
 */
export * as Certificates from "./Certificates.js"

/**
 * @since 0.1.0
 */
export * as Conditions from "./Conditions.js"

/**
 * @since 0.1.0
 */
export * as Conversion from "./Conversion.js"

/**
 * @since 0.1.0
 */
export * as Diagnosis from "./Diagnosis.js"

/**
 * @since 0.1.0
 */
export * as EventRecorder from "./EventRecorder.js"

/**
 * @since 0.1.0
 */
export * as Finalizer from "./Finalizer.js"

/**
 * @since 0.1.0
 */
export * as Informer from "./Informer.js"

/**
 * @since 0.1.0
 */
export * as Kube from "./Kube.js"

/**
 * @since 0.1.0
 */
export * as KubeClient from "./KubeClient.js"

/**
 * @since 0.1.0
 */
export * as KubeController from "./KubeController.js"

/**
 * @since 0.1.0
 */
export * as KubeError from "./KubeError.js"

/**
 * @since 0.1.0
 */
export * as KubeOutcome from "./KubeOutcome.js"

/**
 * @since 0.1.0
 */
export * as KubeStatus from "./KubeStatus.js"

/**
 * @since 0.1.0
 */
export * as LeaseLeaderElection from "./LeaseLeaderElection.js"

/**
 * @since 0.1.0
 */
export * as Manifests from "./Manifests.js"

/**
 * @since 0.1.0
 */
export * as MetadataOnly from "./MetadataOnly.js"

/**
 * @since 0.1.0
 */
export * as Operator from "./Operator.js"

/**
 * @since 0.1.0
 */
export * as OwnerReference from "./OwnerReference.js"

/**
 * @since 0.1.0
 */
export * as Resource from "./Resource.js"

/**
 * @since 0.1.0
 */
export * as RestClient from "./RestClient.js"

/**
 * @since 0.1.0
 */
export * as Sharding from "./Sharding.js"

/**
 * @since 0.1.0
 */
export * as Status from "./Status.js"

/**
 * @since 0.1.0
 */
export * as Store from "./Store.js"

/**
 * @since 0.1.0
 */
export * as Undecodable from "./Undecodable.js"

/**
 * @since 0.1.0
 */
export * as Watcher from "./Watcher.js"

/**
 * @since 0.1.0
 */
export * as WebhookServer from "./WebhookServer.js"
