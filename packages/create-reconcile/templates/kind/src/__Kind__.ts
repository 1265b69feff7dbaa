/**
 * The __Kind__ custom resource (`__group__/__version__`). Its spec and status
 * are effect Schemas: objects are decoded with them, and `npm run manifests`
 * writes the CustomResourceDefinition from them (the Schemas' constraints
 * become the CRD's validation, the printer columns what `kubectl get` shows).
 */
import { Conditions, Resource } from "@reconcile/kube"
import { Schema } from "effect"

/** What a user asks for. */
export const __Kind__Spec = Schema.Struct({
  message: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)).annotate({
    description: "The text the __Kind__'s ConfigMap holds"
  })
})

/**
 * What the controller reports: `observedGeneration` and `conditions`
 * (`metav1.Condition`, as `Conditions` and `Status` write them). Add fields
 * with `Conditions.status({ ... })`.
 */
export const __Kind__Status = Conditions.status()

/** The resource descriptor. */
export const __Kind__ = Resource.custom({
  group: "__group__",
  version: "__version__",
  kind: "__Kind__",
  plural: "__plural__",
  scope: "Namespaced",
  spec: __Kind__Spec,
  status: __Kind__Status,
  printerColumns: [
    { name: "Message", type: "string", jsonPath: ".spec.message" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" },
    Resource.AgeColumn
  ]
})

/** A __Kind__ object. */
export type __Kind__ = Resource.Type<typeof __Kind__>

/** The sample `npm start` applies on the embedded cluster. */
export const __kind__Sample = (namespace: string) => ({
  apiVersion: __Kind__.apiVersion,
  kind: __Kind__.kind,
  metadata: { name: "sample", namespace },
  spec: { message: "Hello from __Kind__" }
})
