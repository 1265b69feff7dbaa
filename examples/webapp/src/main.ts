/**
 * The main job (`npm start`): the WebApp operator, run by `@reconcile/cli`'s `Main.run`.
 *
 * - By default, on an embedded API server (in memory, HTTPS on 127.0.0.1): the WebApp CRD (`v1` and `v1alpha1`) is
 *   installed, the admission and conversion webhooks served and registered, a sample WebApp applied and every
 *   reconcile shown until Ctrl-C; the "Try it" lines show the admission webhooks at work with kubectl (the README,
 *   the conversion). `KUBECONFIG` alone does not change that.
 * - `--kubeconfig PATH`, `--context NAME` or `--in-cluster`: the same operator on that cluster (`--install-crds`
 *   installs the CRD first). `npm start -- --help` lists every option.
 */
import { Main } from "@reconcile/cli"
import type * as Reconcile from "@reconcile/core/Reconcile"
import type { Undecodable } from "@reconcile/kube"
import { WorkqueueMetrics } from "@reconcile/workqueue"
import { Effect, type Exit, Metric } from "effect"
import * as Controller from "./controller.js"
import { make } from "./operator.js"
import { fieldManager } from "./reconcile.js"
import { samples, tryIt } from "./samples.js"
import type { WebApp } from "./WebApp.js"

/** Prints each reconcile with its outcome and the queue depth (with `--log-format json`: a record of the same). */
const depth = Metric.value(WorkqueueMetrics.forQueue(fieldManager).depth)
const onOutcome = (app: WebApp | Undecodable.Undecodable, exit: Exit.Exit<void, Reconcile.Outcome>) =>
  Effect.gen(function*() {
    const key = `${app.metadata.namespace}/${app.metadata.name}`
    const queueDepth = (yield* depth).value
    const deleting = app.metadata.deletionTimestamp !== undefined
    const outcome = Controller.describeExit(exit)
    yield* Main.narrate(
      `  ${new Date().toISOString().slice(11, 23)} reconcile ${key} gen=${app.metadata.generation}${
        deleting ? " (deleting)" : ""
      } → ${outcome}  [queue depth ${queueDepth}]`,
      "reconciled",
      { object: key, generation: app.metadata.generation, ...(deleting ? { deleting } : {}), outcome, queueDepth }
    )
  })

Main.run(make({ onOutcome }), { samples, tryIt })
