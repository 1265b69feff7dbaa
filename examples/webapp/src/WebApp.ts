/**
 * The WebApp custom resource: `{ image, replicas, port }` → a Deployment and a
 * Service. The Schemas are the single source of truth: the CRD in
 * `config/crd.yaml` is generated from them (`npm run generate -w examples/webapp`).
 *
 * The wire Schema is deliberately permissive (any integer for replicas and
 * port): an out-of-range value must still reach the reconcile, which answers
 * with a `Terminal` outcome and a `Ready=False` condition saying why — a spec
 * the Schema rejected would never be reconciled at all.
 *
 * `replicas` is optional on the wire: the defaulting webhook (`webhooks.ts`)
 * fills in {@link defaultReplicas} when a WebApp is created or updated without
 * it. The reconcile reads it through {@link replicasOf}, which treats a missing
 * value as that same default: an object stored while no webhook was registered
 * (a cluster where the operator's manifests were applied without its
 * configurations, or the CRD installed first) runs exactly as the webhook would
 * have made it, and the operator never writes the spec it reads.
 */
import { Conditions, Resource } from "@reconcile/kube"
import { Result, Schema } from "effect"

export const WebAppSpec = Schema.Struct({
  image: Schema.String.annotate({ description: "Container image to run" }),
  replicas: Schema.optional(
    Schema.Int.annotate({ description: "Number of pods (0–20); default 1, set by the defaulting webhook" })
  ),
  port: Schema.Int.annotate({ description: "Container and Service port (1–65535)" })
})

/** `observedGeneration` and `conditions` (metav1.Condition, from `Conditions`), and the ready Pods. */
export const WebAppStatus = Conditions.status({ readyReplicas: Schema.optional(Schema.Int) })

/** The resource descriptor. */
export const WebApp = Resource.custom({
  group: "apps.reconcile.dev",
  version: "v1",
  kind: "WebApp",
  plural: "webapps",
  shortNames: ["wa"],
  scope: "Namespaced",
  spec: WebAppSpec,
  status: WebAppStatus,
  // `kubectl get webapps`: READY, REPLICAS and (added by Resource.custom) AGE
  printerColumns: [
    { name: "Ready", type: "string", jsonPath: `.status.conditions[?(@.type=="Ready")].status` },
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }
  ],
  // `kubectl scale webapp/web --replicas=3` (and a HorizontalPodAutoscaler) write `.spec.replicas`
  scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.readyReplicas" }
})

export type WebApp = Resource.Type<typeof WebApp>

/**
 * The same kind with any spec: how the operator reads and writes the status of
 * an app whose spec no longer decodes (to say so in a condition). Never used
 * for the CRD.
 */
export const WebAppAnySpec = Resource.custom({
  group: WebApp.group,
  version: WebApp.version,
  kind: WebApp.kind,
  plural: WebApp.plural,
  scope: "Namespaced",
  spec: Schema.Unknown,
  status: WebAppStatus
})
export type WebAppSpec = typeof WebAppSpec.Type

/** The replicas of a WebApp created without `spec.replicas` (as a Deployment's). */
export const defaultReplicas = 1

/** The replicas a spec asks for: `spec.replicas`, or {@link defaultReplicas} when it is missing. */
export const replicasOf = (spec: WebAppSpec): number => spec.replicas ?? defaultReplicas

/** What the reconcile checks beyond the wire Schema; a `Failure` says why the spec is invalid. */
export const validate = (spec: WebAppSpec): Result.Result<WebAppSpec, string> => {
  if (spec.image.trim() === "") return Result.fail("spec.image must not be empty")
  const replicas = replicasOf(spec)
  if (replicas < 0 || replicas > 20) return Result.fail(`spec.replicas must be 0–20, got ${replicas}`)
  if (spec.port < 1 || spec.port > 65535) return Result.fail(`spec.port must be 1–65535, got ${spec.port}`)
  return Result.succeed(spec)
}
