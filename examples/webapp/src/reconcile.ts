/**
 * The WebApp reconcile, in two phases (wrapped by a finalizer in `controller.ts`):
 *
 * - **apply**: validate the spec (invalid → `Terminal` + `Ready=False`), apply
 *   the Deployment and the Service with server-side apply (owned by the
 *   WebApp), record the app in the external registry, then report status:
 *   `Ready`/`Progressing` conditions with `observedGeneration`. While the
 *   Deployment is not ready yet → `RequeueAfter` (deliberately: a bounded
 *   poll, even though owned-Deployment changes also enqueue the app).
 * - **cleanup**: remove the app from the external registry.
 *
 * Any API error is `Retryable`: the controller backs off and tries again.
 * The "external registry" is, for the example, a ConfigMap `webapp-registry`
 * in the app's namespace: one key per app.
 */
import type { OwnerReference as OwnerRef } from "@reconcile/core/ObjectMeta"
import type * as Reconcile from "@reconcile/core/Reconcile"
import { asRetryable, requeueAfter, terminal } from "@reconcile/core/Reconcile"
import { Conditions, EventRecorder, KubeClient, KubeError, OwnerReference, Resource } from "@reconcile/kube"
import { Effect, Result } from "effect"
import { validate, WebApp } from "./WebApp.js"

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

/** The Deployment a WebApp wants. */
export const desiredDeployment = (app: WebApp, owner: OwnerRef) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: ownedMetadata(app, owner),
  spec: {
    replicas: app.spec.replicas,
    selector: { matchLabels: labelsOf(app) },
    template: {
      metadata: { labels: labelsOf(app) },
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

/** Writes status (conditions, observedGeneration, readyReplicas) when it changed. */
const writeStatus = (
  app: WebApp,
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
    yield* KubeClient.patchStatus(WebApp, app.metadata.name!, { status }, {
      type: "merge",
      namespace: app.metadata.namespace
    })
  })

/** Adds or refreshes the app's entry in the external registry. */
export const register = (app: WebApp) =>
  KubeClient.patch(Resource.ConfigMap, registryName, { data: { [app.metadata.name!]: app.spec.image } }, {
    type: "merge",
    namespace: app.metadata.namespace
  }).pipe(
    Effect.catchTag("NotFound", () =>
      KubeClient.create(Resource.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: registryName, namespace: app.metadata.namespace! },
        data: { [app.metadata.name!]: app.spec.image }
      }, { namespace: app.metadata.namespace }))
  )

/** The apply phase. */
export const applyWebApp = (
  app: WebApp
): Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient | EventRecorder.EventRecorder> =>
  Effect.gen(function*() {
    const generation = app.metadata.generation
    const valid = validate(app.spec)
    if (Result.isFailure(valid)) {
      yield* writeStatus(app, app.status?.readyReplicas ?? 0, [
        {
          type: "Ready",
          status: "False",
          reason: "InvalidSpec",
          message: valid.failure,
          observedGeneration: generation
        },
        {
          type: "Progressing",
          status: "False",
          reason: "InvalidSpec",
          message: valid.failure,
          observedGeneration: generation
        }
      ])
      if (!Conditions.isFalse(app.status?.conditions, "Ready") || readyReason(app) !== "InvalidSpec") {
        yield* EventRecorder.record(app, {
          type: "Warning",
          reason: "InvalidSpec",
          action: "Validate",
          note: valid.failure
        })
      }
      return yield* terminal(valid.failure)
    }
    const owner = yield* controllerRef(app)
    yield* apply(Resource.Deployment, desiredDeployment(app, owner))
    yield* apply(Resource.Service, desiredService(app, owner))
    yield* register(app)

    const deployment = yield* KubeClient.get(Resource.Deployment, app.metadata.name!, {
      namespace: app.metadata.namespace
    })
    const readyReplicas = deployment.status?.readyReplicas ?? 0
    const rolledOut = (deployment.status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0) &&
      readyReplicas >= app.spec.replicas && (deployment.status?.updatedReplicas ?? readyReplicas) >= app.spec.replicas
    yield* writeStatus(
      app,
      readyReplicas,
      rolledOut
        ? [
          {
            type: "Ready",
            status: "True",
            reason: "DeploymentAvailable",
            message: `${readyReplicas}/${app.spec.replicas} ready`,
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
            message: `${readyReplicas}/${app.spec.replicas} ready`,
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
        note: `${readyReplicas}/${app.spec.replicas} replicas of ${app.spec.image} ready`
      })
    }
    if (!rolledOut) return yield* requeueAfter(progressInterval)
  }).pipe(asRetryable)

const readyReason = (app: WebApp) => Conditions.find(app.status?.conditions, "Ready")?.reason

/** The cleanup phase: forget the app in the external registry. */
export const cleanupWebApp = (
  app: WebApp
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
    asRetryable
  )
