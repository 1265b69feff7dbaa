import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as KubeController from "../KubeController.js"
import type * as Operator from "../Operator.js"

/** @internal */
export const TypeId = "~@reconcile/kube/Operator" as const

/** @internal */
export const make = (
  options: Operator.Options<ReadonlyArray<KubeController.Declaration>> & {
    readonly layer?: Layer.Layer<never, any, any> | undefined
    readonly webhooks?: Operator.Webhooks<any> | undefined
  }
): Operator.Operator<any, any> => ({
  [TypeId]: TypeId,
  name: options.name,
  resources: options.resources ?? [],
  controllers: options.controllers,
  rules: options.rules ?? [],
  layer: options.layer ?? merged(options.controllers),
  webhooks: options.webhooks
})

/** Every controller's Layer, merged (the default `layer`: then every controller is a `KubeController`). */
const merged = (controllers: ReadonlyArray<KubeController.Declaration>): Layer.Layer<never, any, any> => {
  const layers = controllers.filter(KubeController.isKubeController).map(KubeController.layer)
  return layers.length === 0 ? Layer.empty : Layer.mergeAll(...(layers as unknown as [Layer.Layer<never, any, any>]))
}

/** @internal */
export const isOperator = (u: unknown): u is Operator.Operator<unknown, unknown> => Predicate.hasProperty(u, TypeId)

/** controller-runtime's default `CertDir`, where a cert-manager Secret is mounted. */
const defaultCertDir = "/tmp/k8s-webhook-server/serving-certs"

/** @internal */
export const webhookSettings = <E, R>(
  operator: Operator.Operator<E, R>,
  namespace: string
): Operator.WebhookSettings<R> | undefined => {
  const webhooks = operator.webhooks
  const admission = webhooks?.admission ?? []
  const conversion = webhooks?.conversion ?? []
  if (webhooks === undefined || (admission.length === 0 && conversion.length === 0)) return undefined
  const serviceName = webhooks.service?.name ?? `${operator.name}-webhook`
  const ns = webhooks.service?.namespace ?? namespace
  const mutatingConfigurations = admission.some((w) => w.kind === "Mutating") ? [`${operator.name}-mutating`] : []
  const validatingConfigurations = admission.some((w) => w.kind === "Validating")
    ? [`${operator.name}-validating`]
    : []
  const customResourceDefinitions = conversion.map((w) => w.crd)
  const certificates = webhooks.certificates ?? "managed"
  return {
    admission,
    conversion,
    routes: [...admission, ...conversion.map((w) => w.route)],
    serviceName,
    namespace: ns,
    port: webhooks.port ?? 9443,
    mutatingConfigurations,
    validatingConfigurations,
    customResourceDefinitions,
    certificates: certificates === "managed"
      ? {
        _tag: "Managed",
        options: {
          serviceName,
          namespace: ns,
          mutatingWebhookConfigurations: mutatingConfigurations,
          validatingWebhookConfigurations: validatingConfigurations,
          customResourceDefinitions
        }
      }
      : { _tag: "Directory", secretName: certificates.secretName, directory: certificates.directory ?? defaultCertDir }
  }
}
