/**
 * The manifests the operator needs in a real cluster, generated from code:
 * the CRD (from the WebApp Schemas) and a least-privilege ClusterRole for
 * exactly the calls the controller makes.
 */
import { Resource } from "@reconcile/kube"
import { stringify } from "yaml"
import { fieldManager } from "./reconcile.js"
import { WebApp } from "./WebApp.js"

/** The CustomResourceDefinition, generated from the Schemas. */
export const crd = () => Resource.crdManifest(WebApp)

/** The ClusterRole: only what the controller reads and writes. */
export const clusterRole = () => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: fieldManager },
  rules: [
    { apiGroups: [WebApp.group], resources: [WebApp.plural], verbs: ["get", "list", "watch", "patch", "update"] },
    { apiGroups: [WebApp.group], resources: [`${WebApp.plural}/status`], verbs: ["get", "patch", "update"] },
    // Setting blockOwnerDeletion on owned objects needs update on the owner's finalizers subresource.
    { apiGroups: [WebApp.group], resources: [`${WebApp.plural}/finalizers`], verbs: ["update"] },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch", "create", "patch"] },
    { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "create", "patch"] },
    // The example's "external registry".
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "patch"] },
    { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
    // Leader election when several replicas run.
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }
  ]
})

/** The files under `config/`, as text. */
export const files = (): Record<string, string> => ({
  "crd.yaml":
    "# Generated from examples/webapp/src/WebApp.ts by `npm run generate -w examples/webapp`. Do not edit.\n" +
    stringify(crd()),
  "rbac.yaml":
    "# Generated from examples/webapp/src/manifests.ts by `npm run generate -w examples/webapp`. Do not edit.\n" +
    stringify(clusterRole())
})
