/**
 * The __Kind__ controller. For each __Kind__ it server-side applies a
 * ConfigMap the __Kind__ owns (a controller owner reference: deleting the
 * ConfigMap enqueues the __Kind__ and the next reconcile repairs it; deleting
 * the __Kind__ garbage-collects it), reports a `Ready` condition with the
 * generation it observed, and records events. A finalizer runs `cleanup`
 * before a __Kind__ goes: release there what lives outside the cluster.
 *
 * The error channel says what happens next: `Retryable` (backoff),
 * `Terminal` (wait for the next change), `RequeueAfter` (again later).
 */
import { Reconcile } from "@reconcile/core"
import {
  Apply,
  Conditions,
  EventRecorder,
  Finalizer,
  KubeController,
  KubeOutcome,
  Resource,
  Status,
  type Undecodable
} from "@reconcile/kube"
import { Effect, Layer } from "effect"
import { __Kind__ } from "./__Kind__.js"

/** The controller's name: the field manager of its writes. */
export const fieldManager = "__lower__-controller"

/** The finalizer guarding `cleanup`. */
export const finalizerName = "__group__/__lower__-cleanup"

/** The name of the ConfigMap a __Kind__ owns. */
export const configMapName = (object: { readonly metadata: { readonly name?: string | undefined } }) =>
  `${object.metadata.name}-__lower__`

/** The ConfigMap a __Kind__ wants. */
export const desiredConfigMap = (object: __Kind__) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: configMapName(object),
    namespace: object.metadata.namespace!,
    labels: { "app.kubernetes.io/managed-by": fieldManager }
  },
  data: { message: object.spec.message }
})

/** `Ready=False` with a reason, and one Warning event when it was not already False for that reason. */
const notReady = (object: __Kind__, reason: string, message: string) =>
  Effect.gen(function*() {
    const ready = Conditions.find(object.status?.conditions, "Ready")
    yield* Status.setConditions(__Kind__, object, [{ type: "Ready", status: "False", reason, message }], {
      fieldManager
    })
    if (ready?.status !== "False" || ready.reason !== reason) {
      yield* EventRecorder.record(object, { type: "Warning", reason, action: "Reconcile", note: message })
    }
  })

/** Reconciles a live __Kind__ (the finalizer is on it). */
export const apply = (object: __Kind__) =>
  Effect.gen(function*() {
    // What the Schema cannot say is checked here: a spec that can never work is Terminal.
    if (object.spec.message.trim() === "") {
      yield* notReady(object, "InvalidSpec", "spec.message is blank")
      return yield* Reconcile.terminal("spec.message is blank")
    }
    // Server-side apply with a controller reference to the __Kind__ (its uid, blockOwnerDeletion).
    yield* Apply.apply(Resource.ConfigMap, desiredConfigMap(object), { fieldManager, force: true, owner: object })
    yield* Status.setConditions(__Kind__, object, [{
      type: "Ready",
      status: "True",
      reason: "ConfigMapApplied",
      message: `ConfigMap ${configMapName(object)} is up to date`
    }], { fieldManager })
    if (!Conditions.isTrue(object.status?.conditions, "Ready")) {
      yield* EventRecorder.record(object, {
        type: "Normal",
        reason: "Ready",
        action: "Apply",
        note: `applied ConfigMap ${configMapName(object)}`
      })
    }
  }).pipe(
    KubeOutcome.classify, // API errors: Terminal when the server rejects the write for good, else Retryable
    Reconcile.asTerminal // the owner reference cannot be set (another controller owns the ConfigMap)
  )

/** Runs before a __Kind__ is deleted (also for one whose spec no longer decodes: it gets the metadata). */
export const cleanup = (object: __Kind__ | Undecodable.Undecodable) =>
  EventRecorder.record(object, {
    type: "Normal",
    reason: "CleanedUp",
    action: "Cleanup",
    note: `released what ${object.metadata.name} held outside the cluster`
  })

/**
 * The controller, as a value: `for` __Kind__, `owns` ConfigMaps, reconciled by object through the finalizer. What
 * it declares here is what `npm run manifests` grants it (`rbac: [...]` adds what the reconcile touches beyond that).
 */
export const controller = KubeController.make({
  name: fieldManager,
  for: __Kind__,
  owns: [Resource.ConfigMap],
  reconcile: Finalizer.reconcile({ resource: __Kind__, name: finalizerName, fieldManager, apply, cleanup })
})

/** The Layer running the controller, with the `EventRecorder` it records events through. */
export const layer = KubeController.layer(controller).pipe(
  Layer.provide(EventRecorder.layer({ controller: `__group__/${fieldManager}` }))
)
