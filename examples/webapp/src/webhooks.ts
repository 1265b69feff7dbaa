/**
 * The WebApp's admission webhooks, which kube-apiserver calls before it stores a WebApp (`docs/webhooks.md`):
 *
 * - **defaulting** (`defaults`, a mutating webhook, on create and update): a WebApp without `spec.replicas` gets
 *   {@link defaultReplicas} — a default of the webhook, not of the CRD, so that the operator decides it in code;
 * - **validation** (`checks`, a validating webhook): an image without a pinned tag (none, or `:latest`) is admitted
 *   with a warning naming `spec.image` (kubectl prints it as `Warning: …`); a {@link deletionProtection} annotation
 *   other than `"true"` or `"false"` is refused (a typo must not leave an app unprotected); deleting a WebApp
 *   annotated `apps.reconcile.dev/deletion-protection: "true"` is denied until the annotation is removed.
 *
 * Both let an object that does not decode through (`undecodable: "allow"`): the CRD's schema already refuses a spec
 * of the wrong shape, so one only exists when the CRD changed under it, and the operator's own writes to such an app
 * (its finalizer's removal) must not be held up; the reconcile reports it (`reportUndecodable`). The operator carries
 * them (`operator.ts`): the main job serves them on every replica, and installs their configurations on the embedded
 * cluster; `reconcile manifests` writes them for a real one. They are registered for `v1` only: a WebApp written as
 * `v1alpha1` reaches them converted to `v1` by the conversion webhook (`conversion.ts`; kube-apiserver's
 * `matchPolicy: Equivalent`), so it is defaulted and checked as any other.
 */
import { Admission } from "@reconcile/kube"
import { Effect } from "effect"
import { imageTag } from "./reconcile.js"
import { defaultReplicas, WebApp } from "./WebApp.js"

/** The annotation that protects a WebApp from deletion while its value is `"true"`. */
export const deletionProtection = "apps.reconcile.dev/deletion-protection"

/**
 * Whether an image reference pins what runs: a digest (`nginx@sha256:…`), or a tag other than `latest`
 * (`nginx:1.27`). `nginx`, `nginx:latest` and `registry:5000/app` do not.
 */
export const isPinned = (image: string): boolean => {
  if (image.includes("@")) return true
  const tag = imageTag(image)
  return tag !== undefined && tag !== "latest"
}

/** The warning of an unpinned image: what kubectl prints after `Warning: `. */
export const unpinnedWarning = (image: string): string =>
  `spec.image: ${JSON.stringify(image)} has no pinned tag: its Pods may run different images; ` +
  `use a version tag or a digest (e.g. nginx:1.27)`

/** The mutating webhook: `spec.replicas` defaults to {@link defaultReplicas}. */
export const defaults = Admission.defaulter(
  WebApp,
  (app) =>
    Effect.succeed(
      app.spec.replicas !== undefined ? app : { ...app, spec: { ...app.spec, replicas: defaultReplicas } }
    ),
  { undecodable: "allow" }
)

/**
 * The warnings and refusals of a WebApp being created, or updated from `old`. An invalid annotation is refused only
 * when it is new: an app stored with one before this webhook existed can still be updated (by its finalizer's
 * removal, say) — the ratcheting kube-apiserver applies to CRD validation.
 */
const admissible = (app: WebApp, old?: WebApp): Effect.Effect<ReadonlyArray<string>, Admission.Denied> => {
  const protection = app.metadata.annotations?.[deletionProtection]
  const changed = old === undefined || old.metadata.annotations?.[deletionProtection] !== protection
  if (changed && protection !== undefined && protection !== "true" && protection !== "false") {
    return Admission.invalid([{
      field: `metadata.annotations[${deletionProtection}]`,
      message: `${JSON.stringify(protection)}: must be "true" or "false"`
    }])
  }
  // an empty image is the reconcile's to report (Ready=False, InvalidSpec)
  const image = app.spec.image
  return Effect.succeed(image.trim() === "" || isPinned(image) ? [] : [unpinnedWarning(image)])
}

/** The validating webhook: warnings on create and update, deletion protection on delete. */
export const checks = Admission.validator(WebApp, {
  create: (app) => admissible(app),
  update: (old, app) => admissible(app, old),
  delete: (old) =>
    old.metadata.annotations?.[deletionProtection] === "true"
      ? Admission.deny(
        `WebApp ${old.metadata.namespace}/${old.metadata.name} is protected by the annotation ` +
          `${deletionProtection}: "true"; remove it to delete the WebApp ` +
          `(kubectl annotate webapp ${old.metadata.name} -n ${old.metadata.namespace} ${deletionProtection}-)`
      )
      : Effect.void
}, { undecodable: "allow" })

/** Every admission webhook of the operator. */
export const admission = [defaults, checks] as const
