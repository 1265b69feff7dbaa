/**
 * The benchmark's operator written with Reconcile, as the README shows it: a `KubeController` (for WebApp, owns
 * Deployment and Service) on the shared `Cache`, `KubeClient` from the kubeconfig, a `Manager` with `/metrics` and
 * `/healthz` served (on random ports); the reconcile reads the cached owner, applies both children with
 * `Apply.apply` (owner reference through its `owner` option) and patches status.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as LeaderElection from "@reconcile/core/LeaderElection"
import * as Manager from "@reconcile/core/Manager"
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Apply from "@reconcile/kube/Apply"
import * as Cache from "@reconcile/kube/Cache"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as KubeController from "@reconcile/kube/KubeController"
import * as KubeOutcome from "@reconcile/kube/KubeOutcome"
import * as Resource from "@reconcile/kube/Resource"
import * as Undecodable from "@reconcile/kube/Undecodable"
import { Effect, Layer } from "effect"
import { CONCURRENCY, deployment, FIELD_MANAGER, serveDriver, service, statusPatch, WebApp } from "./shared.js"

const reconcile = (app: WebApp) =>
  Effect.gen(function*() {
    yield* Apply.apply(Resource.Deployment, deployment(app) as Resource.Deployment, {
      fieldManager: FIELD_MANAGER,
      force: true,
      owner: app
    })
    yield* Apply.apply(Resource.Service, service(app) as Resource.Service, {
      fieldManager: FIELD_MANAGER,
      force: true,
      owner: app
    })
    const patch = statusPatch(app)
    if (patch !== undefined) {
      yield* KubeClient.patchStatus(WebApp, app.metadata.name!, patch, {
        type: "merge",
        namespace: app.metadata.namespace
      })
    }
  }).pipe(KubeOutcome.classify, Reconcile.asTerminal) // API errors by their kind; another owner's child: Terminal

const Controller = KubeController.make({
  name: FIELD_MANAGER,
  for: WebApp,
  owns: [Resource.Deployment, Resource.Service],
  reconcile,
  onUndecodable: Undecodable.terminal,
  options: { maxConcurrentReconciles: CONCURRENCY }
})

const Main = KubeController.layer(Controller).pipe(
  Layer.provideMerge(Manager.layer({ metricsPort: 0, healthPort: 0 })),
  Layer.provide(LeaderElection.layerAlwaysLeader),
  Layer.provide(Cache.layer()),
  Layer.provideMerge(KubeClient.layer),
  Layer.provide(Kube.layerFromFile(process.env.BENCH_KUBECONFIG!))
)

serveDriver()
Manager.launch(Main).pipe(NodeRuntime.runMain({ teardown: Manager.teardown }))
