/**
 * Typed admission webhooks, one Resource at a time: a **defaulter** (a
 * mutating webhook) returns the object with its defaults and the response's
 * RFC 6902 JSON patch is computed for it; a **validator** checks creates,
 * updates (`old`, `new`) and deletes (`old`), may return warnings, and fails
 * only with a typed {@link Denied}. A webhook is a value ({@link Webhook}):
 * what the `MutatingWebhookConfiguration`/`ValidatingWebhookConfiguration`
 * need ({@link configurations}) and the route `WebhookServer` serves.
 *
 * The rules, each tested (`test/Admission.test.ts`, and on kube-apiserver in
 * `test/WebhookReal.test.ts`):
 *
 * - The patch takes the object **as received** to the defaulted one: the
 *   changes the handler made (between the decoded object encoded back and the
 *   defaulted one encoded) are replayed on the raw JSON, so fields the Schema
 *   does not know are never dropped. A defaulter that changes nothing sends no
 *   patch. Schema decoding defaults are not patched in by themselves: the
 *   CRD's structural schema already has them as `default`s, applied by
 *   kube-apiserver before any webhook.
 * - A `Denied` answers `allowed: false` with a `metav1.Status`: its message,
 *   `reason` (default `Forbidden`, or `Invalid` from {@link invalid}), `code`
 *   (default 403, 422 for `Invalid`) and field causes, which kube-apiserver
 *   passes on: `admission webhook "<name>" denied the request: <message>`.
 * - An object that does not decode is denied (code 400, the message names the
 *   field), or allowed with `undecodable: "allow"`. An old object that does
 *   not decode (an update or delete of an object written before its Schema
 *   changed) is allowed without calling the handler, with a warning: a
 *   deletion is never held hostage to a decode failure.
 * - A defect in a handler is answered as an internal error (code 500, as
 *   controller-runtime's `Errored`), logged once and counted in
 *   `controller_runtime_webhook_panics_total{webhook}`; the server never
 *   sees it.
 * - A handler runs within {@link handlerTimeout} of the configuration's
 *   `timeoutSeconds` (default 10 s): a second less, on the fiber's Clock; a
 *   timeout is answered with code 500 and counted in
 *   `reconcile_webhook_timeouts_total{webhook}`.
 * - A review that is not one (not an object, not `admission.k8s.io/v1`
 *   `AdmissionReview`, no `request` or `uid`, an unknown operation, a kind the
 *   webhook was not built for) is answered `allowed: false` with a Status of
 *   code 400 naming the problem, the uid echoed when readable.
 * - The handlers' requirements `R` are the webhook's, and the server Layer's.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Admission, Resource } from "@reconcile/kube"
 *
 * const defaults = Admission.defaulter(Resource.ConfigMap, (cm) =>
 *   Effect.succeed({ ...cm, data: { tier: "standard", ...cm.data } }))
 *
 * const checks = Admission.validator(Resource.ConfigMap, {
 *   create: (cm) =>
 *     cm.data?.tier === "gold"
 *       ? Admission.invalid([{ field: "data.tier", message: "gold is sold out" }])
 *       : Effect.void,
 *   delete: (cm) =>
 *     cm.metadata?.labels?.protected === "true" ? Admission.deny("this ConfigMap is protected") : Effect.void
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as k8s from "@kubernetes/client-node"
import type { ObjectMeta } from "@reconcile/core"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as internal from "./internal/admission.js"
import * as ResourceInternal from "./internal/resource.js"
import type * as Resource from "./Resource.js"
import type * as WebhookServer from "./WebhookServer.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * One field's problem, as kubectl prints it: `spec.replicas: Invalid value: …`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cause {
  /** The field's path, e.g. `spec.replicas` or `metadata.labels[app]`. */
  readonly field: string
  readonly message: string
  /** A `metav1.CauseType`; default `FieldValueInvalid`. */
  readonly type?: string | undefined
}

/**
 * A denial: the request is refused with this message (and a `metav1.Status`
 * `reason`, `code` and field `causes`). The only failure a handler may have.
 *
 * @since 0.1.0
 * @category errors
 */
export class Denied extends Data.TaggedError("Denied")<{
  readonly message: string
  /** A `metav1.StatusReason` (`Forbidden`, `Invalid`, `Conflict`, …); default `Forbidden`. */
  readonly reason?: string | undefined
  /** The HTTP code kube-apiserver answers with; default 403 (422 for `Invalid`). */
  readonly code?: number | undefined
  readonly causes?: ReadonlyArray<Cause> | undefined
}> {}

/**
 * Fails with a {@link Denied} (reason `Forbidden`, code 403 unless given).
 *
 * @since 0.1.0
 * @category constructors
 */
export const deny = (
  message: string,
  options?: { readonly reason?: string | undefined; readonly code?: number | undefined }
): Effect.Effect<never, Denied> => Effect.fail(new Denied({ message, ...options }))

/**
 * Fails with a {@link Denied} of reason `Invalid` (code 422) listing the
 * fields at fault; the message is `field: message` of each, joined by `; `,
 * unless given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalid = (causes: ReadonlyArray<Cause>, message?: string): Effect.Effect<never, Denied> =>
  Effect.fail(
    new Denied({
      message: message ?? causes.map((c) => `${c.field}: Invalid value: ${c.message}`).join("; "),
      reason: "Invalid",
      code: 422,
      causes
    })
  )

/**
 * @since 0.1.0
 * @category models
 */
export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT"

/**
 * @since 0.1.0
 * @category models
 */
export interface GroupVersionKind {
  readonly group: string
  readonly version: string
  readonly kind: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface GroupVersionResource {
  readonly group: string
  readonly version: string
  readonly resource: string
}

/**
 * The user whose request is being admitted.
 *
 * @since 0.1.0
 * @category models
 */
export interface UserInfo {
  readonly username: string
  readonly uid?: string | undefined
  readonly groups: ReadonlyArray<string>
  readonly extra?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}

/**
 * What a handler sees besides the object(s): the `request` of the
 * AdmissionReview.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request<A extends ObjectMeta.HasMetadata> {
  /** The Resource the webhook was built for. */
  readonly resourceType: Resource.Resource<A>
  readonly uid: string
  readonly operation: Operation
  /** The object's name; empty on a create with `generateName`. */
  readonly name: string
  readonly namespace: string | undefined
  /** A dry run: the handler must have no side effects (`sideEffects: None`). */
  readonly dryRun: boolean
  readonly userInfo: UserInfo
  /** The kind of the object as sent to the webhook (after conversion, with `matchPolicy: Equivalent`). */
  readonly kind: GroupVersionKind
  readonly resource: GroupVersionResource
  readonly subResource: string | undefined
  /** The kind, resource and subresource of the original request, when kube-apiserver converted it. */
  readonly requestKind?: GroupVersionKind | undefined
  readonly requestResource?: GroupVersionResource | undefined
  readonly requestSubResource?: string | undefined
  /** The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`), as sent. */
  readonly options: unknown
}

/**
 * @since 0.1.0
 * @category models
 */
export type Kind = "Mutating" | "Validating"

/**
 * @since 0.1.0
 * @category models
 */
export type FailurePolicy = "Fail" | "Ignore"

/**
 * @since 0.1.0
 * @category models
 */
export type SideEffects = "None" | "NoneOnDryRun"

/**
 * @since 0.1.0
 * @category models
 */
export type MatchPolicy = "Exact" | "Equivalent"

/**
 * @since 0.1.0
 * @category models
 */
export type LabelSelector = Resource.Wire<k8s.V1LabelSelector>

/**
 * One rule of a webhook: the operations on a resource it is called for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly operations: ReadonlyArray<Operation>
  readonly apiGroups: ReadonlyArray<string>
  readonly apiVersions: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly scope: Resource.Scope
}

/**
 * An admission webhook: what its configuration entry needs, and the route the
 * `WebhookServer` serves it at (its `name` is the metrics' `webhook` label).
 * `R` is what its handlers require.
 *
 * @since 0.1.0
 * @category models
 */
export interface Webhook<R = never> extends WebhookServer.Route<R> {
  readonly [TypeId]: TypeId
  readonly kind: Kind
  /** The webhook's name (a DNS name of at least three labels): `m<kind>.<group>` or `v<kind>.<group>` by default. */
  readonly name: string
  /** `/mutate-<group with dashes>-<version>-<kind>` or `/validate-…` (controller-runtime's convention). */
  readonly path: string
  readonly rules: ReadonlyArray<Rule>
  readonly failurePolicy: FailurePolicy
  readonly sideEffects: SideEffects
  readonly timeoutSeconds: number
  readonly matchPolicy: MatchPolicy
  readonly namespaceSelector?: LabelSelector | undefined
  readonly objectSelector?: LabelSelector | undefined
  /** Mutating webhooks only. */
  readonly reinvocationPolicy?: "Never" | "IfNeeded" | undefined
}

/**
 * Options of both kinds of webhook.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default `m<kind lowercased>.<group>` (`v…` for validators), `.k8s.io` appended below three labels. */
  readonly name?: string | undefined
  /** Default controller-runtime's `/mutate-…` or `/validate-…`. */
  readonly path?: string | undefined
  /** Default `Fail`. */
  readonly failurePolicy?: FailurePolicy | undefined
  /** Default `None`. */
  readonly sideEffects?: SideEffects | undefined
  /** How long kube-apiserver waits (1..30); default 10. Handlers get {@link handlerTimeout} of it. */
  readonly timeoutSeconds?: number | undefined
  /** Default `Equivalent`. */
  readonly matchPolicy?: MatchPolicy | undefined
  readonly namespaceSelector?: LabelSelector | undefined
  readonly objectSelector?: LabelSelector | undefined
  /** What to answer for an object that does not decode: `deny` (default, code 400 naming the field) or `allow`. */
  readonly undecodable?: "deny" | "allow" | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DefaulterOptions extends Options {
  /** Default `["CREATE", "UPDATE"]`. */
  readonly operations?: ReadonlyArray<"CREATE" | "UPDATE"> | undefined
  /** Default `Never`. */
  readonly reinvocationPolicy?: "Never" | "IfNeeded" | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type ValidatorOptions = Options

/**
 * What a validator checks; an operation without a handler is not registered
 * (and allowed if it comes anyway).
 *
 * @since 0.1.0
 * @category models
 */
export interface ValidatorHandlers<A extends ObjectMeta.HasMetadata, R> {
  readonly create?: ((obj: A, request: Request<A>) => Effect.Effect<Warnings, Denied, R>) | undefined
  readonly update?: ((old: A, obj: A, request: Request<A>) => Effect.Effect<Warnings, Denied, R>) | undefined
  readonly delete?: ((old: A, request: Request<A>) => Effect.Effect<Warnings, Denied, R>) | undefined
}

/**
 * Warnings for the client (kubectl prints them), or nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type Warnings = ReadonlyArray<string> | void

/**
 * A mutating webhook for `resource`: `f` returns the object with its
 * defaults; the response patches the object as received into it.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Admission, Resource } from "@reconcile/kube"
 *
 * const WebApp = Resource.custom({
 *   group: "apps.reconcile.dev",
 *   version: "v1",
 *   kind: "WebApp",
 *   plural: "webapps",
 *   scope: "Namespaced",
 *   spec: Schema.Struct({ image: Schema.String, replicas: Schema.optional(Schema.Number) })
 * })
 *
 * const defaults = Admission.defaulter(WebApp, (app) =>
 *   Effect.succeed({ ...app, spec: { ...app.spec, replicas: app.spec.replicas ?? 1 } }))
 * // defaults.path === "/mutate-apps-reconcile-dev-v1-webapp"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaulter: <A extends ObjectMeta.HasMetadata, R = never>(
  resource: Resource.Resource<A>,
  f: (obj: A, request: Request<A>) => Effect.Effect<A, Denied, R>,
  options?: DefaulterOptions
) => Webhook<R> = internal.defaulter

/**
 * A validating webhook for `resource`, registered for the operations given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const validator: <A extends ObjectMeta.HasMetadata, R = never>(
  resource: Resource.Resource<A>,
  handlers: ValidatorHandlers<A, R>,
  options?: ValidatorOptions
) => Webhook<R> = internal.validator

/**
 * The time a handler of a webhook with this `timeoutSeconds` has: a second
 * less (at least half of it), so that the answer is the webhook's rather than
 * kube-apiserver's timeout.
 *
 * @since 0.1.0
 * @category utils
 */
export const handlerTimeout: (timeoutSeconds: number) => Duration.Duration = internal.handlerTimeout

/**
 * Whether a value is a {@link Webhook}.
 *
 * @since 0.1.0
 * @category refinements
 */
export const isWebhook: (u: unknown) => u is Webhook<unknown> = internal.isWebhook

/**
 * How kube-apiserver reaches the webhook server: a URL (paths appended) or a
 * Service in the cluster; `caBundle` is the CA that signed the server's
 * certificate, PEM (it is base64-encoded here) or already base64.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientConfig =
  | { readonly url: string; readonly caBundle: string }
  | {
    readonly service: { readonly name: string; readonly namespace: string; readonly port?: number | undefined }
    readonly caBundle: string
  }

/**
 * @since 0.1.0
 * @category models
 */
export interface ConfigurationOptions {
  readonly clientConfig: ClientConfig
  /** The configurations are named `<name>-mutating` and `<name>-validating`; default `webhooks`. */
  readonly name?: string | undefined
  readonly labels?: Readonly<Record<string, string>> | undefined
}

/**
 * A `MutatingWebhookConfiguration` or a `ValidatingWebhookConfiguration`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Configuration {
  readonly apiVersion: "admissionregistration.k8s.io/v1"
  readonly kind: "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> | undefined }
  readonly webhooks: ReadonlyArray<Record<string, unknown>>
}

/**
 * The configurations that register `webhooks` with kube-apiserver: one
 * `MutatingWebhookConfiguration` for the defaulters and one
 * `ValidatingWebhookConfiguration` for the validators (each only when it has
 * webhooks), `admissionReviewVersions: ["v1"]`.
 *
 * @example
 * ```ts
 * import type { Effect } from "effect"
 * import { Admission, Resource } from "@reconcile/kube"
 *
 * declare const checks: Admission.Webhook
 * declare const caPem: string
 *
 * const objects = Admission.configurations([checks], {
 *   clientConfig: { service: { name: "webapp-webhooks", namespace: "webapp-system", port: 443 }, caBundle: caPem }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const configurations: (
  webhooks: ReadonlyArray<Webhook<any>>,
  options: ConfigurationOptions
) => Array<Configuration> = internal.configurations

/**
 * The `admissionregistration.k8s.io/v1` `MutatingWebhookConfiguration` resource (to apply {@link configurations}).
 *
 * @since 0.1.0
 * @category built-ins
 */
export const MutatingWebhookConfiguration: Resource.Resource<Configuration> = ResourceInternal.make({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "MutatingWebhookConfiguration",
  plural: "mutatingwebhookconfigurations",
  scope: "Cluster"
})

/**
 * The `admissionregistration.k8s.io/v1` `ValidatingWebhookConfiguration` resource.
 *
 * @since 0.1.0
 * @category built-ins
 */
export const ValidatingWebhookConfiguration: Resource.Resource<Configuration> = ResourceInternal.make({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
  scope: "Cluster"
})
