/**
 * The WebApp operator as one value: its name, its custom resource (served as
 * `v1` and `v1alpha1`), its controller and its webhooks (admission and
 * conversion). The main job runs it (`src/main.ts`): the controller under
 * leader election, the webhooks on every replica (on the embedded cluster it
 * also installs their configurations and the CRD's conversion stanza).
 * `Manifests.generate` turns it into `config/` (`npm run generate -w examples/webapp`, or
 * `reconcile manifests --entry examples/webapp/src/operator.ts`): the RBAC
 * from what the controller value declares, whatever its Layer is built with,
 * the webhooks' configurations, Service and certificate RBAC, and the CRD with
 * both versions and its conversion stanza.
 */
import { Operator } from "@reconcile/kube"
import * as Controller from "./controller.js"
import { conversion } from "./conversion.js"
import { WebApp, WebAppV1alpha1 } from "./WebApp.js"
import * as Webhooks from "./webhooks.js"

/** The operator's name: its ServiceAccount, ClusterRole, Deployment and leader-election Lease. */
export const name = "webapp-operator"

/** The operator with the controller's hooks (the main job narrates outcomes through `onOutcome`). */
export const make = (options?: Controller.Options) =>
  Operator.make({
    name,
    // one CRD serving both versions, stored as v1
    resources: [WebApp, WebAppV1alpha1],
    // what the controller declares: the RBAC
    controllers: [Controller.make(options)],
    // what runs: the controller's Layer with its EventRecorder
    layer: Controller.layer(options),
    // defaulting and validation (`webhooks.ts`), v1alpha1 ⇄ v1 (`conversion.ts`); the certificate is the operator's
    // own ("managed", the default)
    webhooks: { admission: Webhooks.admission, conversion: [conversion] }
  })

/** The operator. */
export const operator = make()
