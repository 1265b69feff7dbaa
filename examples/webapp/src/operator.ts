/**
 * The WebApp operator as one value: its name, its custom resource and its
 * controller. The main job runs it (`src/main.ts`), and `Manifests.generate`
 * turns it into `config/` (`npm run generate -w examples/webapp`, or
 * `reconcile manifests --entry examples/webapp/src/operator.ts`): the RBAC
 * from what the controller value declares, whatever its Layer is built with.
 */
import { Operator } from "@reconcile/kube"
import * as Controller from "./controller.js"
import { WebApp } from "./WebApp.js"

/** The operator's name: its ServiceAccount, ClusterRole, Deployment and leader-election Lease. */
export const name = "webapp-operator"

/** The operator with the controller's hooks (the main job narrates outcomes through `onOutcome`). */
export const make = (options?: Controller.Options) =>
  Operator.make({
    name,
    resources: [WebApp],
    // what the controller declares: the RBAC
    controllers: [Controller.make(options)],
    // what runs: the controller's Layer with its EventRecorder
    layer: Controller.layer(options)
  })

/** The operator. */
export const operator = make()
