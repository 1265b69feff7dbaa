/**
 * An operator as one value: its name, the custom resources it serves, its
 * controllers and any extra permissions. The main job runs it
 * (`@reconcile/cli`'s `Main.run`), and `Manifests.generate` / `reconcile
 * manifests` turn it into the YAML a cluster needs (CRDs, least-privilege
 * RBAC, ServiceAccount, Deployment).
 *
 * The operator is given its controllers as values (`KubeController.make`):
 * `Manifests` computes RBAC from what they declare. It runs `layer`: by default
 * every controller's `KubeController.layer`, merged; when controllers need
 * services of their own (an `EventRecorder`, a client of another system), give
 * the Layer built from them with ordinary Layer functions — what it is built
 * with never changes what the controllers declare. List each controller that
 * `layer` runs in `controllers`: a controller that runs without being listed
 * has no permissions in the generated RBAC.
 *
 * An operator may also carry its webhooks ({@link Webhooks}): admission
 * webhooks (`Admission.defaulter`, `Admission.validator`) and conversion
 * webhooks (`Conversion.webhook`), with how their serving certificate is
 * provided. The main job serves them on every replica, and `Manifests`
 * generates their configurations, Service and certificate RBAC. The
 * webhooks' requirements join the operator's, as the controllers' do.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { EventRecorder, KubeController, Manifests, Operator, Resource } from "@reconcile/kube"
 *
 * const Settings = KubeController.make({ name: "settings", for: Resource.ConfigMap, reconcile: () => Effect.void })
 * const Secrets = KubeController.make({
 *   name: "secrets",
 *   for: Resource.Secret,
 *   reconcile: (secret) => EventRecorder.record(secret, { type: "Normal", reason: "Seen", action: "Reconcile" })
 * })
 *
 * // every controller's Layer, merged
 * export const operator = Operator.make({ name: "settings-operator", controllers: [Settings] })
 *
 * // a controller with a service of its own: the Layer that runs them, built from the values
 * export const withEvents = Operator.make({
 *   name: "settings-operator",
 *   controllers: [Settings, Secrets],
 *   layer: Layer.mergeAll(
 *     KubeController.layer(Settings),
 *     KubeController.layer(Secrets).pipe(Layer.provide(EventRecorder.layer({ controller: "example.com/secrets" })))
 *   )
 * })
 *
 * const rules = Manifests.rules(withEvents) // what the ClusterRole grants: both controllers' needs
 * ```
 *
 * @since 0.1.0
 */
import type * as Layer from "effect/Layer"
import type * as Admission from "./Admission.js"
import type * as CertificateManager from "./CertificateManager.js"
import type * as Conversion from "./Conversion.js"
import * as internal from "./internal/operator.js"
import type { PolicyRule } from "./internal/policyRule.js"
import type * as KubeController from "./KubeController.js"
import type * as Resource from "./Resource.js"
import type * as WebhookServer from "./WebhookServer.js"

const TypeId = internal.TypeId

// One RBAC rule (declared by `internal/policyRule.ts`, so that `KubeController` need not import this module).
export type { PolicyRule }

/**
 * An operator: see the module documentation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operator<E = never, R = never> {
  readonly [TypeId]: typeof TypeId
  /** A DNS-1123 label: the field manager, the leader-election Lease, the ServiceAccount, ClusterRole and Deployment. */
  readonly name: string
  /** The custom resources the operator serves: their CRDs are installed on the embedded cluster and generated. */
  readonly resources: ReadonlyArray<Resource.AnyCustomResource>
  /** What each controller reads and writes (`KubeController` values are declarations): the RBAC's source. */
  readonly controllers: ReadonlyArray<KubeController.Declaration>
  /** Permissions beyond what the controllers declare. */
  readonly rules: ReadonlyArray<PolicyRule>
  /** The Layer that runs the controllers (by default every controller's `KubeController.layer`, merged). */
  readonly layer: Layer.Layer<never, E, R>
  /** The webhooks the operator serves on every replica (`undefined`: none). */
  readonly webhooks: Webhooks<R> | undefined
}

/**
 * An operator's webhooks, as controller-runtime's `WebhookManagedBy(mgr).For(&T{}).WithDefaulter(…).WithValidator(…)`
 * and kubebuilder's `config/webhook`: the main job serves them on every replica (not leader-elected) at `port`, and
 * `Manifests` generates their configurations (named `<operator>-mutating` and `<operator>-validating`), the Service
 * `service.name` (port 443 to `port`), the CRDs' conversion stanzas and, with managed certificates, the
 * `CertificateManager`'s RBAC.
 *
 * @since 0.1.0
 * @category models
 */
export interface Webhooks<R = never> {
  /** Defaulters and validators (`Admission.defaulter`, `Admission.validator`). */
  readonly admission?: ReadonlyArray<Admission.Webhook<R>> | undefined
  /** Conversion webhooks (`Conversion.webhook`), one per kind of `resources` served in several versions. */
  readonly conversion?: ReadonlyArray<Conversion.Webhook> | undefined
  /**
   * Where the serving certificate comes from: `"managed"` (the default), the operator's own CA and certificate in a
   * Secret (`CertificateManager`, which injects the CA bundle); or a Secret (`kubernetes.io/tls`, e.g. made by
   * cert-manager) mounted at `directory` (default controller-runtime's `/tmp/k8s-webhook-server/serving-certs`) and
   * read with `WebhookServer.fromDirectory` — then the CA bundle is injected by whoever made it.
   */
  readonly certificates?:
    | "managed"
    | { readonly secretName: string; readonly directory?: string | undefined }
    | undefined
  /**
   * The webhook Service kube-apiserver calls: default name `<operator>-webhook`, namespace the operator's (the
   * manifests' namespace; the Pod's at run time). A namespace given here is the operator's: the manifests' default,
   * and an error when they are given another (a Service reaches the Pods of its own namespace only).
   */
  readonly service?: { readonly name?: string | undefined; readonly namespace?: string | undefined } | undefined
  /** The port the server listens on in the Pod (the Service's target port); default 9443. */
  readonly port?: number | undefined
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Controllers extends ReadonlyArray<KubeController.Declaration>> {
  readonly name: string
  readonly resources?: ReadonlyArray<Resource.AnyCustomResource> | undefined
  /** The controllers: what Manifests grants is computed from what they declare. */
  readonly controllers: Controllers
  readonly rules?: ReadonlyArray<PolicyRule> | undefined
}

/**
 * Describes an operator. Without `layer`, it runs every controller's `KubeController.layer`, merged; with `layer`, it
 * runs that Layer (built from the controllers with any Layer functions), and `controllers` may also hold plain
 * `KubeController.Declaration`s of controllers made otherwise. With `webhooks`, their requirements join the
 * operator's.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <const Controllers extends ReadonlyArray<KubeController.KubeController<any, any>>, RW = never>(
    options: Options<Controllers> & { readonly layer?: undefined; readonly webhooks?: Webhooks<RW> | undefined }
  ): Operator<never, KubeController.Services<Controllers[number]> | RW>
  <E, R, RW = never>(
    options: Options<ReadonlyArray<KubeController.Declaration>> & {
      readonly layer: Layer.Layer<never, E, R>
      readonly webhooks?: Webhooks<RW> | undefined
    }
  ): Operator<E, R | RW>
} = internal.make as any

/**
 * Whether a value is an {@link Operator} (how `reconcile manifests` finds one among a module's exports).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isOperator: (u: unknown) => u is Operator<unknown, unknown> = internal.isOperator

/**
 * An operator's webhooks with their defaults resolved for the namespace it runs in (see {@link Webhooks}): what the
 * main job serves and `Manifests` generates.
 *
 * @since 0.1.0
 * @category models
 */
export interface WebhookSettings<R = never> {
  readonly admission: ReadonlyArray<Admission.Webhook<R>>
  readonly conversion: ReadonlyArray<Conversion.Webhook>
  /** Every route the server serves: the admission webhooks', then the conversion webhooks'. */
  readonly routes: ReadonlyArray<WebhookServer.Route<R>>
  readonly serviceName: string
  readonly namespace: string
  readonly port: number
  /** `<operator>-mutating` when there are defaulters (else none), as `Admission.configurations` names it. */
  readonly mutatingConfigurations: ReadonlyArray<string>
  /** `<operator>-validating` when there are validators (else none). */
  readonly validatingConfigurations: ReadonlyArray<string>
  /** The CRDs (`<plural>.<group>`) with a conversion webhook. */
  readonly customResourceDefinitions: ReadonlyArray<string>
  readonly certificates:
    | { readonly _tag: "Managed"; readonly options: CertificateManager.Options }
    | { readonly _tag: "Directory"; readonly secretName: string; readonly directory: string }
}

/**
 * The operator's webhook settings in `namespace` (the one it runs in), or `undefined` when it has no webhook.
 *
 * @since 0.1.0
 * @category getters
 */
export const webhookSettings: <E, R>(
  operator: Operator<E, R>,
  namespace: string
) => WebhookSettings<R> | undefined = internal.webhookSettings
