/**
 * The WebApp controller: `for` WebApp, `owns` its Deployment and Service,
 * reconciled by object with a finalizer around the apply/cleanup phases.
 */
import type * as Reconcile from "@reconcile/core/Reconcile"
import { EventRecorder, Finalizer, KubeController, Resource, type Undecodable } from "@reconcile/kube"
import { Cause, Duration, Effect, Exit, Layer, Option } from "effect"
import { applyWebApp, cleanupWebApp, fieldManager, reportUndecodable } from "./reconcile.js"
import { WebApp } from "./WebApp.js"

/** The finalizer guarding the external registry entry. */
export const finalizerName = "apps.reconcile.dev/registry"

/** What a reconcile ended with, for display: `success`, `requeue_after 2s`, `error: …`, `terminal: …`. */
export const describeExit = (exit: Exit.Exit<void, Reconcile.Outcome>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const failure = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
  if (failure === undefined) return Cause.hasInterruptsOnly(exit.cause) ? "interrupted" : "defect (retried)"
  switch (failure._tag) {
    case "RequeueAfter":
      return `requeue_after ${Duration.format(failure.after)}`
    case "Retryable":
      return `retryable: ${failure.message}`
    case "Terminal":
      return `terminal: ${failure.message}`
  }
}

/** The reconcile of one WebApp, with its finalizer; `onCleanup` runs after each successful cleanup. */
export const reconcile = (
  onCleanup: (app: WebApp | Undecodable.Undecodable) => Effect.Effect<void> = () => Effect.void
) =>
  Finalizer.reconcile({
    resource: WebApp,
    name: finalizerName,
    fieldManager,
    apply: applyWebApp,
    cleanup: (app) => Effect.tap(cleanupWebApp(app), () => onCleanup(app)),
    // a live app whose spec does not decode: a condition saying why (when deleted, `cleanup` gets its metadata)
    onUndecodable: reportUndecodable
  })

/** Options of {@link make} and {@link layer}. */
export interface Options {
  /** Sees every reconcile's result (the main job prints them). */
  readonly onOutcome?:
    | ((app: WebApp | Undecodable.Undecodable, exit: Exit.Exit<void, Reconcile.Outcome>) => Effect.Effect<void>)
    | undefined
  /** Sees every successful cleanup (tests count them). */
  readonly onCleanup?: ((app: WebApp | Undecodable.Undecodable) => Effect.Effect<void>) | undefined
  readonly maxConcurrentReconciles?: number | undefined
}

/**
 * The controller as a value: what it runs and what it declares — `for` WebApp, `owns` Deployments and Services, and
 * the registry ConfigMap in `rbac` — from which `Manifests` computes the operator's RBAC.
 */
export const make = (options: Options = {}) => {
  const run = reconcile(options.onCleanup)
  return KubeController.make({
    name: fieldManager,
    for: WebApp,
    owns: [Resource.Deployment, Resource.Service],
    // an app that no longer decodes comes too (as an `Undecodable`): the finalizer handles it
    reconcile: (app: WebApp | Undecodable.Undecodable) =>
      options.onOutcome === undefined
        ? run(app)
        : Effect.flatMap(Effect.exit(run(app)), (exit) => Effect.andThen(options.onOutcome!(app, exit), exit)),
    options: { maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2 },
    // beyond `for` and `owns`: the example's "external registry" ConfigMap (`register`, `cleanupWebApp`)
    rbac: [{ resource: Resource.ConfigMap, verbs: ["create", "patch"] }]
  })
}

/** The Layer running the controller, with the `EventRecorder` its reconcile records events through. */
export const layer = (options: Options = {}) =>
  KubeController.layer(make(options)).pipe(
    Layer.provide(EventRecorder.layer({ controller: `${WebApp.group}/${fieldManager}` }))
  )
