/**
 * The two sides of the webhook benchmark (`bench/webhook.ts`): our webhooks (`Admission.defaulter` and
 * `Admission.validator` of a Deployment-sized `WebApp` custom resource) and the floor's hand-written handlers of the
 * same rules on the raw AdmissionReview (`floorRoutes`), which answer the same responses.
 */
import * as Admission from "@reconcile/kube/Admission"
import * as Resource from "@reconcile/kube/Resource"
import { Effect, Schema } from "effect"
import jsonpatch from "fast-json-patch"
import { paths } from "./webhookReviews.js"

// -----------------------------------------------------------------------------------------------------------------
// ours

const EnvVar = Schema.Struct({ name: Schema.String, value: Schema.String })
const Quantities = Schema.Record(Schema.String, Schema.String)

/** A WebApp: a Deployment-sized custom resource (image, replicas, env, resources, ingress, probes, volumes). */
export const WebApp = Resource.custom({
  group: "apps.reconcile.dev",
  version: "v1",
  kind: "WebApp",
  plural: "webapps",
  scope: "Namespaced",
  spec: Schema.Struct({
    image: Schema.String,
    replicas: Schema.optional(Schema.Int),
    tier: Schema.optional(Schema.Literals(["standard", "gold"])),
    port: Schema.optional(Schema.Int),
    env: Schema.optional(Schema.Array(EnvVar)),
    resources: Schema.optional(Schema.Struct({
      limits: Schema.optional(Quantities),
      requests: Schema.optional(Quantities)
    })),
    ingress: Schema.optional(Schema.Struct({
      host: Schema.String,
      path: Schema.optional(Schema.String),
      tls: Schema.optional(Schema.Boolean)
    })),
    probes: Schema.optional(Schema.Struct({ path: Schema.String, periodSeconds: Schema.optional(Schema.Int) })),
    volumes: Schema.optional(Schema.Array(Schema.Struct({
      name: Schema.String,
      mountPath: Schema.String,
      size: Schema.String
    }))),
    labels: Schema.optional(Quantities)
  })
})
export type WebApp = Resource.Type<typeof WebApp>

const defaultRequests = { cpu: "100m", memory: "128Mi" }

/** Six defaults: replicas, tier, port, resource requests, the ingress path, the probe period. */
export const webAppDefaults = Admission.defaulter(WebApp, (app) => {
  const { ingress, probes, resources } = app.spec
  return Effect.succeed<WebApp>({
    ...app,
    spec: {
      ...app.spec,
      replicas: app.spec.replicas ?? 2,
      tier: app.spec.tier ?? "standard",
      port: app.spec.port ?? 8080,
      resources: { ...resources, requests: resources?.requests ?? defaultRequests },
      ...(ingress === undefined ? {} : { ingress: { ...ingress, path: ingress.path ?? "/" } }),
      ...(probes === undefined ? {} : { probes: { ...probes, periodSeconds: probes.periodSeconds ?? 10 } })
    }
  })
})

const hasTag = (image: string) => image.lastIndexOf(":") > image.lastIndexOf("/")

const checkWebApp = (app: WebApp): Effect.Effect<Admission.Warnings, Admission.Denied> => {
  const { env = [], image, replicas, tier } = app.spec
  if (!hasTag(image)) return Admission.deny("spec.image needs a tag")
  const causes: Array<Admission.Cause> = []
  if (replicas !== undefined && (replicas < 0 || replicas > 100)) {
    causes.push({ field: "spec.replicas", message: "must be between 0 and 100" })
  }
  if (tier === "gold" && (replicas ?? 0) < 2) causes.push({ field: "spec.replicas", message: "gold runs at least 2" })
  if (new Set(env.map((e) => e.name)).size !== env.length) {
    causes.push({ field: "spec.env", message: "names must be unique" })
  }
  if (causes.length > 0) return Admission.invalid(causes)
  return Effect.succeed(image.endsWith(":latest") ? ["spec.image: prefer a pinned tag"] : [])
}

/** Create and update: a tag on the image, replicas in bounds, unique env names, a gold tier's replicas, fixed tier. */
export const webAppChecks = Admission.validator(WebApp, {
  create: checkWebApp,
  update: (old, app) => old.spec.tier !== app.spec.tier ? Admission.deny("spec.tier cannot change") : checkWebApp(app)
})

// -----------------------------------------------------------------------------------------------------------------
// the floor: the same rules by hand

export type Json = Record<string, any>

const failure = (uid: string, code: number, message: string, reason: string) => ({
  uid,
  allowed: false,
  status: { status: "Failure", code, message, reason }
})

const floorDefault = (uid: string, object: Json): Json => {
  const after = jsonpatch.deepClone(object)
  const spec = after.spec
  spec.replicas ??= 2
  spec.tier ??= "standard"
  spec.port ??= 8080
  spec.resources ??= {}
  spec.resources.requests ??= { ...defaultRequests }
  if (spec.ingress !== undefined) spec.ingress.path ??= "/"
  if (spec.probes !== undefined) spec.probes.periodSeconds ??= 10
  const patch = jsonpatch.compare(object, after)
  return patch.length === 0 ? { uid, allowed: true } : {
    uid,
    allowed: true,
    patchType: "JSONPatch",
    patch: Buffer.from(JSON.stringify(patch)).toString("base64")
  }
}

const floorCheck = (uid: string, spec: Json): Json => {
  const image: string = spec.image
  const env: Array<Json> = spec.env ?? []
  if (!hasTag(image)) return failure(uid, 403, "spec.image needs a tag", "Forbidden")
  const causes: Array<Json> = []
  if (spec.replicas !== undefined && (spec.replicas < 0 || spec.replicas > 100)) {
    causes.push({ field: "spec.replicas", message: "must be between 0 and 100", reason: "FieldValueInvalid" })
  }
  if (spec.tier === "gold" && (spec.replicas ?? 0) < 2) {
    causes.push({ field: "spec.replicas", message: "gold runs at least 2", reason: "FieldValueInvalid" })
  }
  if (new Set(env.map((e: Json) => e.name)).size !== env.length) {
    causes.push({ field: "spec.env", message: "names must be unique", reason: "FieldValueInvalid" })
  }
  if (causes.length > 0) {
    return { uid, allowed: false, status: { ...failure(uid, 422, "invalid", "Invalid").status, details: { causes } } }
  }
  return image.endsWith(":latest") ? { uid, allowed: true, warnings: ["spec.image: prefer a pinned tag"] } : {
    uid,
    allowed: true
  }
}

const floorValidate = (uid: string, request: Json): Json => {
  if (request.operation === "UPDATE" && request.oldObject?.spec?.tier !== request.object.spec.tier) {
    return failure(uid, 403, "spec.tier cannot change", "Forbidden")
  }
  return floorCheck(uid, request.object.spec)
}

/** The envelope checks any webhook makes: an admission.k8s.io/v1 AdmissionReview of a WebApp with a uid. */
const floorAnswer = (handle: (uid: string, request: Json) => Json) => (review: Json): Json => {
  const request = review?.request
  const uid = typeof request?.uid === "string" ? request.uid : ""
  const response = review?.apiVersion !== "admission.k8s.io/v1" || review.kind !== "AdmissionReview" || uid === ""
    ? failure(uid, 400, "not an admission.k8s.io/v1 AdmissionReview", "BadRequest")
    : request.kind?.group !== "apps.reconcile.dev" || request.kind.kind !== "WebApp"
    ? failure(uid, 400, "not a WebApp", "BadRequest")
    : handle(uid, request)
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }
}

/** The floor: the same rules by hand on the parsed AdmissionReview, answering the same responses. */
export const floorRoutes = new Map<string, (review: Json) => Json>([
  [paths.mutate, floorAnswer((uid, request) => floorDefault(uid, request.object))],
  [paths.validate, floorAnswer(floorValidate)]
])
