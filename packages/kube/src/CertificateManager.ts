/**
 * The webhook server's certificates without cert-manager: the operator makes
 * its own CA and serving certificate, keeps them in a Secret, writes the CA
 * bundle where kube-apiserver reads it, and renews them before they expire.
 *
 * - **The Secret** (`kubernetes.io/tls`, in the webhook Service's namespace):
 *   `tls.crt`/`tls.key` the serving certificate and its key, `ca.crt` the CA
 *   bundle (the signing CA first, then older CAs still valid), `ca.key` the
 *   signing CA's key — kept beside its certificate under kubeadm's names
 *   (`ca.crt`/`ca.key`) so that any replica can renew; the CA signs nothing
 *   but this webhook's serving certificates, and whoever reads the Secret
 *   holds the serving key anyway.
 * - **The serving certificate** names the Service: `<service>`,
 *   `<service>.<namespace>`, `<service>.<namespace>.svc`,
 *   `<service>.<namespace>.svc.cluster.local`, plus `dnsNames` and `ips`.
 * - **Replicas agree through the Secret**: the first to find it missing
 *   creates it (`AlreadyExists`: another was first, read its Secret); every
 *   change is a replace with the read `resourceVersion` (`Conflict`: another
 *   wrote first, read what it wrote and judge again). Every replica serves
 *   what the Secret holds, and picks up another's renewal from its watch.
 * - **Renewal**: the serving certificate when less than a third of
 *   `servingValidity` is left, the CA when less than a third of `caValidity`
 *   is left (a new serving certificate with it); the old CA stays in the
 *   bundle until it expires, so a replica still serving a certificate it
 *   signed keeps working until it reloads. A Secret that cannot be used
 *   (bad PEM, a key that does not match its certificate, a serving certificate
 *   the CA did not sign) is replaced by a fresh pair: logged with the reason,
 *   never with its data. Times are Effect's `Clock` (so `TestClock` drives
 *   renewal in tests); the certificates' validity ends where the Clock says.
 * - **Bundle injection**: `ca.crt` goes into every webhook's
 *   `clientConfig.caBundle` of the named Mutating/ValidatingWebhookConfigurations
 *   and the named CRDs' `spec.conversion.webhook.clientConfig.caBundle` (CRDs
 *   whose conversion strategy is `Webhook`). The Secret and each named object
 *   are watched (one name each, by `metadata.name` field selector), so an
 *   object that appears later or a bundle someone reset is rewritten within a
 *   round trip; a check every `resync` (default 10 minutes) is the safety net
 *   for a watch that missed something, and the next renewal is scheduled at
 *   its due time.
 *
 * The permissions this needs are {@link rbac}.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { CertificateManager, Kube, KubeClient } from "@reconcile/kube"
 *
 * const Certificates = CertificateManager.layer({
 *   serviceName: "webapp-webhook",
 *   namespace: "operators",
 *   secretName: "webapp-webhook-tls",
 *   validatingWebhookConfigurations: ["webapp-validating"],
 *   customResourceDefinitions: ["webapps.example.com"]
 * }).pipe(Layer.provide(KubeClient.layer), Layer.provide(Kube.layerFromDefault()))
 *
 * const program = Effect.gen(function*() {
 *   const certificates = yield* CertificateManager.CertificateManager
 *   const first = yield* certificates.current
 *   yield* Effect.log(`serving a certificate of ${first.cert.length} characters`)
 *   yield* Stream.runForEach(certificates.changes, () => Effect.log("renewed"))
 * }).pipe(Effect.provide(Certificates))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/certificateManager.js"
import type { PolicyRule } from "./internal/policyRule.js"
import type * as KubeClient from "./KubeClient.js"
import type * as KubeError from "./KubeError.js"
import type { CertificateSource } from "./WebhookServer.js"

/**
 * Options of the manager.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The webhook Service's name: the serving certificate names its DNS names. */
  readonly serviceName: string
  /** The namespace of the Service and of the Secret. */
  readonly namespace: string
  /** The Secret holding the certificates (default `<serviceName>-tls`). */
  readonly secretName?: string | undefined
  /** More DNS names of the serving certificate. */
  readonly dnsNames?: ReadonlyArray<string> | undefined
  /** IPv4 addresses of the serving certificate (`127.0.0.1` for a webhook server run outside the cluster). */
  readonly ips?: ReadonlyArray<string> | undefined
  /** MutatingWebhookConfigurations whose webhooks get the CA bundle. */
  readonly mutatingWebhookConfigurations?: ReadonlyArray<string> | undefined
  /** ValidatingWebhookConfigurations whose webhooks get the CA bundle. */
  readonly validatingWebhookConfigurations?: ReadonlyArray<string> | undefined
  /** CRDs (by name, `<plural>.<group>`) whose conversion webhook gets the CA bundle. */
  readonly customResourceDefinitions?: ReadonlyArray<string> | undefined
  /** How long a serving certificate is valid (default 90 days); it is renewed with a third of that left. */
  readonly servingValidity?: Duration.Input | undefined
  /**
   * How long the CA is valid (default 3 years, at least 3 × `servingValidity`); it is renewed with a third of that
   * left, so a serving certificate never outlives its CA.
   */
  readonly caValidity?: Duration.Input | undefined
  /** How often everything is checked even when no watch said anything changed (default 10 minutes). */
  readonly resync?: Duration.Input | undefined
  /** How long to wait before trying again after a failed write or read (default 5 seconds). */
  readonly retryDelay?: Duration.Input | undefined
}

/**
 * The options cannot work (`caValidity` shorter than 3 × `servingValidity`, an empty name).
 *
 * @since 0.1.0
 * @category errors
 */
export class CertificateManagerError extends Data.TaggedError("CertificateManagerError")<{
  readonly reason: string
}> {
  override get message(): string {
    return `invalid certificate manager options: ${this.reason}`
  }
}

/**
 * The manager: a `WebhookServer.CertificateSource` (serve it with `WebhookServer.make({ certificate })`) and the
 * current CA bundle.
 *
 * @since 0.1.0
 * @category tags
 */
export class CertificateManager extends Context.Service<CertificateManager, CertificateManager.Service>()(
  "@reconcile/kube/CertificateManager"
) {}

/**
 * @since 0.1.0
 */
export declare namespace CertificateManager {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service extends CertificateSource {
    /** The CA bundle (PEM) clients should trust now: what is injected as `caBundle`. */
    readonly caBundle: Effect.Effect<string>
  }
}

/**
 * Starts the manager for the lifetime of the scope: reads (or creates, or
 * repairs) the Secret before it returns, then keeps the bundle injected and
 * the certificates renewed in the background. Fails when the Secret cannot be
 * read or written at start (a missing permission, an unreachable server).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: Options
) => Effect.Effect<
  CertificateManager.Service,
  CertificateManagerError | KubeError.KubeError,
  KubeClient.KubeClient | Scope.Scope
> = internal.make

/**
 * Provides the {@link CertificateManager} over the `KubeClient`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<CertificateManager, CertificateManagerError | KubeError.KubeError, KubeClient.KubeClient> =>
  Layer.effect(CertificateManager, internal.make(options))

/**
 * The RBAC rules the manager needs: get/list/watch/update on its Secret
 * (by name) and create on Secrets (Kubernetes cannot restrict a create by
 * name), get/list/watch/update/patch on the named webhook configurations and
 * CRDs (by name). Give them to the operator's `rules`.
 *
 * @example
 * ```ts
 * import { CertificateManager } from "@reconcile/kube"
 *
 * const rules = CertificateManager.rbac({
 *   serviceName: "webapp-webhook",
 *   namespace: "operators",
 *   validatingWebhookConfigurations: ["webapp-validating"]
 * })
 * ```
 *
 * @since 0.1.0
 * @category rbac
 */
export const rbac: (options: Options) => ReadonlyArray<PolicyRule> = internal.rbac

/**
 * The DNS names a serving certificate gets for a Service: `<service>`,
 * `<service>.<namespace>`, `<service>.<namespace>.svc` and
 * `<service>.<namespace>.svc.cluster.local`.
 *
 * @since 0.1.0
 * @category utils
 */
export const serviceDnsNames: (serviceName: string, namespace: string) => ReadonlyArray<string> =
  internal.serviceDnsNames
