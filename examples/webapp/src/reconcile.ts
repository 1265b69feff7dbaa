/**
 * The WebApp reconcile, in two phases (wrapped by a finalizer in `controller.ts`):
 *
 * - **apply**: validate the spec (invalid → `Terminal` + `Ready=False`), apply
 *   the Deployment and the Service with server-side apply (owned by the
 *   WebApp), record the app in the external registry, then report status:
 *   `Ready`/`Progressing` conditions with `observedGeneration`. While the
 *   Deployment is not ready yet → `RequeueAfter` (deliberately: a bounded
 *   poll, even though owned-Deployment changes also enqueue the app).
 * - **cleanup**: remove the app from the external registry (from the
 *   metadata only, so an app whose spec no longer decodes is cleaned up too).
 * - **undecodable** (`reportUndecodable`): a live app whose spec no longer
 *   decodes gets `Ready=False, reason=InvalidSpec` saying why, then `Terminal`.
 *
 * API errors are classified by `KubeOutcome.classify`: a child the API server
 * rejects for good (422 Invalid, 400, 403 on the write) is `Terminal` — the app
 * gets `Ready=False, reason=ChildRejected` with the server's message and one
 * Warning event, and waits for its next change instead of being retried
 * forever; everything else (409, 429, 5xx, timeouts, a lost connection) is
 * `Retryable`: the controller backs off and tries again.
 * The "external registry" is, for the example, a ConfigMap `webapp-registry`
 * in the app's namespace: one key per app, created by whichever worker needs it
 * first (a concurrent create that loses the race patches the winner's).
 */
import type { OwnerReference as OwnerRef } from "@reconcile/core/ObjectMeta"
import type * as Reconcile from "@reconcile/core/Reconcile"
import { asRetryable, requeueAfter, terminal } from "@reconcile/core/Reconcile"
import {
  Conditions,
  EventRecorder,
  KubeClient,
  KubeError,
  KubeOutcome,
  OwnerReference,
  Resource,
  type Undecodable
} from "@reconcile/kube"
import { Effect, Result } from "effect"
import type { WebApp } from "./WebApp.js"
import { replicasOf, validate, WebAppAnySpec } from "./WebApp.js"

/** The field manager of every write, and the controller's name. */
export const fieldManager = "webapp-controller"
/** The registry ConfigMap's name. */
export const registryName = "webapp-registry"
/** How long to wait before checking a Deployment that is not ready yet. */
export const progressInterval = "2 seconds"

const labelsOf = (app: WebApp) => ({
  "app.kubernetes.io/name": app.metadata.name!,
  "app.kubernetes.io/managed-by": fieldManager
})

/** The metadata of an object the app owns: same name and namespace, its labels, the app as controller. */
const ownedMetadata = (app: WebApp, owner: OwnerRef) => ({
  name: app.metadata.name!,
  namespace: app.metadata.namespace!,
  labels: labelsOf(app),
  ownerReferences: [owner]
})

/** The tag of an image reference (`nginx:1.27` → `1.27`, `host:5000/app` → none, a digest is not a tag). */
export const imageTag = (image: string): string | undefined => {
  const reference = image.split("@")[0]!
  const colon = reference.lastIndexOf(":")
  return colon > reference.lastIndexOf("/") ? reference.slice(colon + 1) : undefined
}

/**
 * The labels of the Deployment and its pods: the selector labels plus
 * `app.kubernetes.io/version` (the image tag), as Kubernetes recommends. A
 * label value has at most 63 characters, so a longer tag (or name) makes the
 * API server reject the Deployment: the app shows `ChildRejected`.
 */
const deploymentLabels = (app: WebApp) => {
  const tag = imageTag(app.spec.image)
  return tag === undefined ? labelsOf(app) : { ...labelsOf(app), "app.kubernetes.io/version": tag }
}

/** The Deployment a WebApp wants. */
export const desiredDeployment = (app: WebApp, owner: OwnerRef) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { ...ownedMetadata(app, owner), labels: deploymentLabels(app) },
  spec: {
    replicas: replicasOf(app.spec),
    selector: { matchLabels: labelsOf(app) },
    template: {
      metadata: { labels: deploymentLabels(app) },
      spec: {
        containers: [{ name: "app", image: app.spec.image, ports: [{ name: "http", containerPort: app.spec.port }] }]
      }
    }
  }
})

/** The Service a WebApp wants. */
export const desiredService = (app: WebApp, owner: OwnerRef) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: ownedMetadata(app, owner),
  spec: {
    selector: labelsOf(app),
    ports: [{ name: "http", port: app.spec.port, targetPort: app.spec.port }]
  }
})

/** The controller reference to `app`; a WebApp read from the API always has what it needs. */
const controllerRef = (app: WebApp) =>
  Effect.fromResult(OwnerReference.make(app, { controller: true, blockOwnerDeletion: true })).pipe(
    Effect.mapError((e) => terminal(e.message))
  )

const apply = (
  resource: Resource.Resource<any>,
  object: { readonly metadata: { readonly name: string; readonly namespace: string } }
) =>
  KubeClient.patch(resource, object.metadata.name, object, {
    type: "apply",
    namespace: object.metadata.namespace,
    fieldManager,
    force: true
  })

/** What `writeStatus` needs of an app: its metadata and status (a `WebApp`, or one read with any spec). */
type AppStatus = Pick<WebApp, "metadata" | "status">

/**
 * Writes status (conditions, observedGeneration, readyReplicas) when it
 * changed. The patch goes through `WebAppAnySpec`, so it also works for an
 * app whose spec does not decode (the answer is not used).
 */
const writeStatus = (
  app: AppStatus,
  readyReplicas: number,
  conditions: ReadonlyArray<Conditions.ConditionInput>
) =>
  Effect.gen(function*() {
    const current = app.status?.conditions ?? []
    const next = yield* Conditions.setNow(current, ...conditions)
    const status = { observedGeneration: app.metadata.generation, readyReplicas, conditions: next }
    const unchanged = JSON.stringify({ ...app.status, conditions: current }) ===
      JSON.stringify({ ...app.status, ...status })
    if (unchanged) return
    yield* KubeClient.patchStatus(WebAppAnySpec, app.metadata.name!, { status }, {
      type: "merge",
      namespace: app.metadata.namespace
    })
  })

/**
 * Adds or refreshes the app's entry in the external registry: a merge patch of
 * its key; when the registry does not exist yet, a create with the entry; when
 * another worker created it in between (`AlreadyExists`), the patch again.
 */
export const register = (app: WebApp) => {
  const entry = { [app.metadata.name!]: app.spec.image }
  const patchEntry = KubeClient.patch(Resource.ConfigMap, registryName, { data: entry }, {
    type: "merge",
    namespace: app.metadata.namespace
  })
  return patchEntry.pipe(
    Effect.catchTag("NotFound", () =>
      KubeClient.create(Resource.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: registryName, namespace: app.metadata.namespace! },
        data: entry
      }, { namespace: app.metadata.namespace }).pipe(Effect.catchTag("AlreadyExists", () => patchEntry)))
  )
}

/**
 * `Ready=False` and `Progressing=False` with `reason` and `message`, and a
 * Warning event when Ready was not already False for that reason (one event
 * per episode, not one per attempt).
 */
const notReady = (app: AppStatus & EventRecorder.Regarding, reason: string, action: string, message: string) =>
  Effect.gen(function*() {
    const generation = app.metadata.generation
    yield* writeStatus(app, app.status?.readyReplicas ?? 0, [
      { type: "Ready", status: "False", reason, message, observedGeneration: generation },
      { type: "Progressing", status: "False", reason, message, observedGeneration: generation }
    ])
    if (!Conditions.isFalse(app.status?.conditions, "Ready") || readyReason(app) !== reason) {
      yield* EventRecorder.record(app, { type: "Warning", reason, action, note: message })
    }
  })

/**
 * Applies the Deployment and the Service. A write the API server rejects for
 * good becomes `Ready=False, reason=ChildRejected` with the server's message,
 * and the reconcile ends `Terminal`.
 */
const applyChildren = (app: WebApp, owner: OwnerRef) =>
  Effect.andThen(
    apply(Resource.Deployment, desiredDeployment(app, owner)),
    apply(Resource.Service, desiredService(app, owner))
  ).pipe(
    KubeOutcome.classify,
    Effect.catchTag("Terminal", (rejected) =>
      Effect.andThen(
        notReady(app, "ChildRejected", "Apply", rejected.message ?? "the API server rejected a child object"),
        Effect.fail(rejected)
      ))
  )

/** The apply phase. */
export const applyWebApp = (
  app: WebApp
): Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient | EventRecorder.EventRecorder> =>
  Effect.gen(function*() {
    const generation = app.metadata.generation
    const valid = validate(app.spec)
    if (Result.isFailure(valid)) {
      yield* notReady(app, "InvalidSpec", "Validate", valid.failure)
      return yield* terminal(valid.failure)
    }
    const replicas = replicasOf(app.spec)
    const owner = yield* controllerRef(app)
    yield* applyChildren(app, owner)
    yield* register(app)

    const deployment = yield* KubeClient.get(Resource.Deployment, app.metadata.name!, {
      namespace: app.metadata.namespace
    })
    const readyReplicas = deployment.status?.readyReplicas ?? 0
    const rolledOut = (deployment.status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0) &&
      readyReplicas >= replicas && (deployment.status?.updatedReplicas ?? readyReplicas) >= replicas
    yield* writeStatus(
      app,
      readyReplicas,
      rolledOut
        ? [
          {
            type: "Ready",
            status: "True",
            reason: "DeploymentAvailable",
            message: `${readyReplicas}/${replicas} ready`,
            observedGeneration: generation
          },
          {
            type: "Progressing",
            status: "False",
            reason: "RolloutComplete",
            message: "",
            observedGeneration: generation
          }
        ]
        : [
          {
            type: "Ready",
            status: "False",
            reason: "RollingOut",
            message: `${readyReplicas}/${replicas} ready`,
            observedGeneration: generation
          },
          {
            type: "Progressing",
            status: "True",
            reason: "RollingOut",
            message: "waiting for the Deployment",
            observedGeneration: generation
          }
        ]
    )
    if (rolledOut && !Conditions.isTrue(app.status?.conditions, "Ready")) {
      yield* EventRecorder.record(app, {
        type: "Normal",
        reason: "Ready",
        action: "Rollout",
        note: `${readyReplicas}/${replicas} replicas of ${app.spec.image} ready`
      })
    }
    if (!rolledOut) return yield* requeueAfter(progressInterval)
  }).pipe(KubeOutcome.classify)

const readyReason = (app: AppStatus) => Conditions.find(app.status?.conditions, "Ready")?.reason

/**
 * A live app whose spec no longer decodes (edited to `replicas: "three"`):
 * `Ready=False, reason=InvalidSpec` saying why, one Warning event, then
 * `Terminal` — the next edit reconciles it again. The status is read and
 * written with any spec (`WebAppAnySpec`), so the condition keeps its
 * transition time and an unchanged one is not written again. Deletion needs
 * nothing here: the finalizer runs `cleanupWebApp` from the metadata.
 */
export const reportUndecodable = (
  object: Undecodable.Undecodable
): Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient | EventRecorder.EventRecorder> =>
  Effect.gen(function*() {
    const message = `spec does not decode: ${object.error.issue}`
    const app = yield* KubeClient.get(WebAppAnySpec, object.metadata.name!, {
      namespace: object.metadata.namespace
    })
    yield* notReady(app, "InvalidSpec", "Decode", message)
    return yield* terminal(object.error, message)
  }).pipe(KubeOutcome.classify)

/** The cleanup phase: forget the app in the external registry (any failure is retried with backoff). */
export const cleanupWebApp = (
  app: WebApp | Undecodable.Undecodable // an app that no longer decodes is cleaned up from its metadata
): Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient | EventRecorder.EventRecorder> =>
  KubeClient.patch(Resource.ConfigMap, registryName, { data: { [app.metadata.name!]: null } }, {
    type: "merge",
    namespace: app.metadata.namespace
  }).pipe(
    KubeError.ignoreNotFound,
    Effect.andThen(EventRecorder.record(app, {
      type: "Normal",
      reason: "Deregistered",
      action: "Cleanup",
      note: `removed ${app.metadata.name} from ${registryName}`
    })),
    // every failure is retried: a deletion must finish once the cause is fixed, and nothing else would re-trigger it
    asRetryable
  )
