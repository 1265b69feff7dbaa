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
 *
 * The CRD also serves the WebApp as it was in `v1alpha1` ({@link WebAppV1alpha1}: `image: { repository, tag }` and
 * `instances`). Objects are stored as `v1`, the storage version and the conversion's hub: kube-apiserver calls the
 * conversion webhook (`conversion.ts`) to write or read them as `v1alpha1`. The operator itself only reads `v1`.
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

/** The resource descriptor: `v1`, the version objects are stored in (and the conversion's hub). */
export const WebApp = Resource.custom({
  group: "apps.reconcile.dev",
  version: "v1",
  storage: true, // WebAppV1alpha1 is converted to it
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

// ---------------------------------------------------------------------------------------------------------------
// v1alpha1: the image as { repository, tag }, `instances` instead of `replicas`

/** Docker's tag grammar: a word character, then at most 127 word characters, `.` or `-` (no `:`, `/` or `@`). */
export const tagPattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/

/** An image reference as `v1alpha1` says it: a repository and, when the reference has one, a tag. */
export interface ImageParts {
  readonly repository: string
  readonly tag?: string | undefined
}

/**
 * A `v1` image reference in `v1alpha1`'s parts. The tag is what follows the last `:` after the last `/`
 * (`registry:5000/app:1.2` → `registry:5000/app` and `1.2`; the `:5000` is the registry's port, not a tag), when it
 * is a tag by Docker's grammar ({@link tagPattern}). A reference with a digest (`nginx@sha256:…`, also
 * `nginx:1.27@sha256:…`) is kept whole in `repository`, without a tag: v1alpha1 has no field for a digest, and the
 * one alternative — a repository without it, the digest kept in the conversion's annotation — would show a
 * `v1alpha1` reader an image other than the one that runs, and lose the digest for good when that reader writes
 * the image back. Whole, it round-trips losslessly both ways (with {@link joinImage}), and needs no annotation.
 * Anything else that is not `repository:tag` (no tag, `nginx:`, an empty string) is a repository alone.
 */
export const splitImage = (image: string): ImageParts => {
  if (!image.includes("@")) {
    const colon = image.lastIndexOf(":")
    const tag = image.slice(colon + 1)
    if (colon > image.lastIndexOf("/") && tagPattern.test(tag)) return { repository: image.slice(0, colon), tag }
  }
  return { repository: image }
}

/** A `v1alpha1` image as a `v1` reference: `repository:tag`, or the repository alone when there is no tag. */
export const joinImage = (image: ImageParts): string =>
  image.tag === undefined ? image.repository : `${image.repository}:${image.tag}`

/**
 * `v1alpha1`'s image. `joinImage` then `splitImage` must give it back (so that a WebApp written as `v1alpha1` reads
 * back as written): the tag follows Docker's grammar (the CRD checks it too); a repository with a digest has no
 * tag, and one without a tag does not end in one (`nginx:1.27` is `{ repository: nginx, tag: "1.27" }`). The
 * conversion webhook refuses an image that breaks the last two (the CRD's schema cannot say them), with the message
 * of this check.
 */
export const ImageV1alpha1 = Schema.Struct({
  repository: Schema.String.annotate({
    description: "Image repository (registry:5000/app), or a whole reference with a digest (app@sha256:…)"
  }),
  tag: Schema.optional(
    Schema.String.check(Schema.isPattern(tagPattern)).annotate({ description: "Image tag; none: the default" })
  )
}).check(Schema.makeFilter((image) => {
  const back = splitImage(joinImage(image))
  if (back.repository === image.repository && back.tag === image.tag) return true
  if (image.tag === undefined) return `the repository ${JSON.stringify(image.repository)} ends in a tag: give it as tag`
  return image.repository.includes("@")
    ? `a repository with a digest (${JSON.stringify(image.repository)}) takes no tag`
    : `${JSON.stringify(joinImage(image))} is not a repository and a tag`
}))

/** `v1alpha1`'s spec: the image in parts, `instances` (optional, defaulted as `v1`'s `replicas`), the port. */
export const WebAppSpecV1alpha1 = Schema.Struct({
  image: ImageV1alpha1,
  instances: Schema.optional(
    Schema.Int.annotate({ description: "Number of pods (0–20); default 1, set by the defaulting webhook" })
  ),
  port: WebAppSpec.fields.port
})

/**
 * The WebApp as it was in `v1alpha1`, served beside `v1` by the same CRD (`operator.ts` lists both in `resources`).
 * Objects are stored as `v1`: kube-apiserver converts through the conversion webhook (`conversion.ts`).
 */
export const WebAppV1alpha1 = Resource.custom({
  group: WebApp.group,
  version: "v1alpha1",
  kind: WebApp.kind,
  plural: WebApp.plural,
  shortNames: WebApp.shortNames,
  scope: WebApp.scope,
  spec: WebAppSpecV1alpha1,
  status: WebAppStatus,
  // `kubectl get webapps.v1alpha1.apps.reconcile.dev`: READY, INSTANCES and AGE
  printerColumns: [
    { name: "Ready", type: "string", jsonPath: `.status.conditions[?(@.type=="Ready")].status` },
    { name: "Instances", type: "integer", jsonPath: ".spec.instances" }
  ],
  scale: { specReplicasPath: ".spec.instances", statusReplicasPath: ".status.readyReplicas" }
})

/** A `v1alpha1` WebApp. */
export type WebAppV1alpha1 = Resource.Type<typeof WebAppV1alpha1>

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
