/**
 * The manifests the operator needs in a real cluster, generated from code by
 * `Manifests.generate`: the CRD (from the WebApp Schemas), least-privilege
 * RBAC (from what the controller declares), the ServiceAccount, the
 * leader-election Role, the Deployment and its metrics Service; and, in `config/monitoring/`, the Grafana dashboard
 * (a ConfigMap for Grafana's sidecar; its JSON in `config/grafana/`), the PrometheusRule of its alerts and the
 * ServiceMonitor (`kubectl apply -f config/monitoring/` where the Prometheus Operator runs).
 */
import { Manifests } from "@reconcile/kube"
import { Effect } from "effect"
import { operator } from "./operator.js"

/** The image the generated Deployment runs. */
export const image = "ghcr.io/reconcile-dev/webapp-operator:0.1.0"

/** Every object, in `kubectl apply` order, the monitoring objects last. */
export const objects = () => Effect.runSync(Manifests.generate(operator, { image, dashboard: true, alerts: true }))

/** The ClusterRole's rules. */
export const rules = () => Manifests.rules(operator)

const header =
  "# Generated from examples/webapp/src/operator.ts by `npm run generate -w examples/webapp`. Do not edit.\n"

/**
 * The files under `config/`, as text (`kubectl apply --server-side -f examples/webapp/config/`): the YAML with a
 * header, the dashboard's JSON (`grafana/`) as Grafana imports it.
 */
export const files = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(Manifests.files(objects())).map((
      [name, text]
    ) => [name, name.endsWith(".yaml") ? header + text : text])
  )
