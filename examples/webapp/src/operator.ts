/**
 * The WebApp operator as one value: its name, its custom resource, its
 * controller and its admission webhooks. The main job runs it (`src/main.ts`):
 * the controller under leader election, the webhooks on every replica (on the
 * embedded cluster it also installs their configurations). `Manifests.generate`
 * turns it into `config/` (`npm run generate -w examples/webapp`, or
 * `reconcile manifests --entry examples/webapp/src/operator.ts`): the RBAC
 * from what the controller value declares, whatever its Layer is built with,
 * and the webhooks' configurations, Service and certificate RBAC.
 */
import { Operator } from "@reconcile/kube"
import * as Controller from "./controller.js"
import { WebApp } from "./WebApp.js"
import * as Webhooks from "./webhooks.js"

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
    layer: Controller.layer(options),
    // defaulting and validation (`webhooks.ts`); the certificate is the operator's own ("managed", the default)
    webhooks: { admission: Webhooks.admission }
  })

/** The operator. */
export const operator = make()
