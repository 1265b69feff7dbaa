/**
 * The manifests an operator needs in a cluster, computed from its code: the
 * CustomResourceDefinitions of its custom resources (every served version,
 * printer columns, status and scale subresources, validation from the
 * Schemas), least-privilege RBAC from what each controller declares, and the
 * workload that runs it (Namespace, ServiceAccount, Deployment with probes,
 * leader election and a metrics port, metrics Service). For an operator with
 * webhooks (`Operator.make({ webhooks })`), also their
 * Mutating/ValidatingWebhookConfigurations (`clientConfig.service`, the CA
 * bundle left to the injector), the webhook Service, the Deployment's webhook
 * port (and certificate volume), the CRDs' conversion stanzas and the
 * `CertificateManager`'s RBAC — and nothing else.
 *
 * Monitoring, when asked (`dashboard`, `alerts`: off by default, since they need Grafana's dashboard sidecar and the
 * Prometheus Operator's CRDs, which a cluster may not have): a Grafana dashboard of the operator's metrics in a
 * ConfigMap labelled `grafana_dashboard: "1"` ({@link dashboard} gives its JSON), a PrometheusRule of alerts
 * (reconcile errors persisting, panics, a queue that only grows, a stuck reconcile, a watch that keeps
 * disconnecting, undecodable objects, no leader, webhook failures) and the ServiceMonitor that has Prometheus
 * scrape the metrics Service.
 *
 * RBAC ({@link rules}): for each controller the operator is given (what its
 * `KubeController` value, or a plain `KubeController.Declaration`, declares),
 *
 * - its `for` kind: `get`, `list`, `watch` and `patch` (the cache, `Finalizer`,
 *   `Apply`); its `status` subresource: `patch` (`Status`, `Conditions`) when
 *   it is a custom resource with a status Schema; its `finalizers`
 *   subresource: `update` when the controller owns kinds (an owner reference
 *   with `blockOwnerDeletion` needs it);
 * - each `owns` kind: `get`, `list`, `watch`, `create` and `patch` (server-side
 *   apply creates with `patch`, which Kubernetes authorizes as `create` too);
 * - each `watches` kind: `get`, `list`, `watch`;
 * - `events.k8s.io` events: `create` and `patch` (`EventRecorder`);
 * - the controller's `rbac` entries and the operator's `rules`.
 *
 * Rules are merged (one verb list per resource) and sorted, so the output is
 * the same for the same code. Leader election's Lease permissions go in a Role
 * in the operator's namespace.
 *
 * With `sharding` ({@link Options}) the Deployment runs every replica as one
 * shard of the ring named after the operator (the main job's `--sharding`,
 * `Sharding.layer`): 3 replicas by default, a Role on the ring's Leases
 * (`get`, `list`, `watch`, `create`, `update`, `delete`) instead of leader
 * election's, and `list`, `watch` and `patch` of every `for` and `owns` kind
 * (the sharder and the shards write their labels) — which the rules above
 * already grant.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeController, Manifests, Operator, Resource } from "@reconcile/kube"
 *
 * const operator = Operator.make({
 *   name: "settings-operator",
 *   controllers: [
 *     KubeController.make({ name: "settings", for: Resource.ConfigMap, reconcile: () => Effect.void })
 *   ]
 * })
 *
 * const yaml = Manifests.generate(operator, { image: "ghcr.io/example/settings-operator:1.0.0" }).pipe(
 *   Effect.map(Manifests.toYaml)
 * ) // Effect<string, ManifestsError>
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/manifests.js"
import type * as Operator from "./Operator.js"

/**
 * Options of {@link generate}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The namespace the operator runs in (default `<name>-system`); the Namespace object is generated. */
  readonly namespace?: string | undefined
  /** The container image (default `<name>:latest`). */
  readonly image?: string | undefined
  /** Replicas of the Deployment (default 1, 3 with `sharding`; more than 1 needs leader election or sharding). */
  readonly replicas?: number | undefined
  /**
   * Whether the Deployment runs with `--leader-elect` (and the Lease Role is generated); default `true`, `false`
   * with `sharding`.
   */
  readonly leaderElection?: boolean | undefined
  /**
   * Whether the Deployment runs every replica as one shard of the ring named after the operator (`--sharding`, and
   * the `<name>-sharding` Role on the ring's Leases) instead of with leader election; default `false`.
   */
  readonly sharding?: boolean | undefined
  /** The `/metrics` port (default 8080). */
  readonly metricsPort?: number | undefined
  /** The `/healthz` and `/readyz` port (default 8081). */
  readonly healthPort?: number | undefined
  /**
   * Add the Grafana dashboard of the operator's metrics, in a ConfigMap `<name>-dashboard` labelled
   * `grafana_dashboard: "1"` (what Grafana's dashboard sidecar loads); default `false`.
   */
  readonly dashboard?: boolean | undefined
  /**
   * Add the PrometheusRule `<name>-alerts` (the Prometheus Operator's `monitoring.coreos.com/v1`); default `false`.
   */
  readonly alerts?: boolean | undefined
  /**
   * Add the ServiceMonitor `<name>-metrics` that has the Prometheus Operator scrape the metrics Service (the queries
   * select its `job`, `<name>-metrics`); default `true` with `dashboard` or `alerts`, else `false`.
   */
  readonly serviceMonitor?: boolean | undefined
}

/**
 * Why manifests cannot be generated: an invalid name, namespace, image or option, or custom resources that cannot
 * make one CRD. The message says what is wrong and what to do.
 *
 * @since 0.1.0
 * @category errors
 */
export class ManifestsError extends Data.TaggedError("ManifestsError")<{
  readonly reason:
    | "InvalidName"
    | "InvalidNamespace"
    | "InvalidImage"
    | "InvalidOption"
    | "CrdConflict"
  readonly message: string
}> {}

/**
 * The operator's manifests, in the order `kubectl apply` needs them: the Namespace, the CRDs, the ServiceAccount,
 * the ClusterRole and its binding, the leader-election Role (`sharding`: the sharding Role) and its binding, the
 * Deployment and the metrics Service; with webhooks, the certificate Role and its binding (managed certificates)
 * before the Deployment, and the webhook Service and the Mutating/ValidatingWebhookConfigurations
 * (`<name>-mutating`, `<name>-validating`) after the metrics Service.
 *
 * The Deployment runs `image` with `--in-cluster --leader-elect --metrics-port=8080 --health-port=8081
 * --log-format=json` (`@reconcile/cli`'s main job; `--sharding` instead of `--leader-elect` with `sharding`), as a
 * non-root user with a read-only root filesystem (an `emptyDir` on `/tmp`), without privilege escalation or
 * capabilities, with resource requests and limits, liveness on `/healthz` and readiness on `/readyz`, and
 * `POD_NAMESPACE` from the downward API. With webhooks it also gets `--webhook-port=<port>` and the container port
 * `webhook`, and, for certificates from a Secret, `--webhook-cert-dir=<directory>` with the Secret mounted there
 * read-only.
 *
 * With `dashboard`, `alerts` or `serviceMonitor`, the ServiceMonitor, the dashboard's ConfigMap and the
 * PrometheusRule come last, in the operator's namespace.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generate: (
  operator: Operator.Operator<any, any>,
  options?: Options
) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, ManifestsError> = (operator, options) =>
  internal.generate(operator, options ?? {}, (fields) => new ManifestsError(fields))

/**
 * The Grafana dashboard of an operator (the JSON model Grafana's "Import dashboard" takes, and what the ConfigMap of
 * `generate` with `dashboard` holds): reconcile rate, errors and latency per controller; work queue depth, wait,
 * retries and longest running reconcile; API request rate by code and latency; watch reconnects and undecodable
 * objects; webhook requests by code and latency (operators with webhooks); memory, CPU and event-loop lag; the
 * leader (with leader election). Its variables: the Prometheus data source, the namespace and the job (defaults: the
 * operator's namespace and `<name>-metrics`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Manifests, type Operator } from "@reconcile/kube"
 *
 * declare const operator: Operator.Operator<never, never>
 *
 * // the file to import in Grafana (Dashboards → New → Import)
 * export const json = Manifests.dashboard(operator).pipe(Effect.map((d) => JSON.stringify(d, null, 2)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const dashboard: (
  operator: Operator.Operator<any, any>,
  options?: Options
) => Effect.Effect<Record<string, unknown>, ManifestsError> = (operator, options) =>
  internal.dashboard(operator, options ?? {}, (fields) => new ManifestsError(fields))

/**
 * The ClusterRole rules of an operator (see the module documentation): merged, sorted, least privilege. With
 * webhooks and managed certificates they include the `CertificateManager`'s rules on its configurations and CRDs
 * (its Secret's are in a Role of the operator's namespace); with `sharding`, what a ring needs of its kinds.
 *
 * @since 0.1.0
 * @category getters
 */
export const rules: (
  operator: Operator.Operator<any, any>,
  options?: Pick<Options, "sharding">
) => ReadonlyArray<Operator.PolicyRule> = internal.rules

/**
 * Objects as one multi-document YAML text (`---` between documents), for `kubectl apply --server-side -f`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const toYaml: (objects: ReadonlyArray<object>) => string = internal.toYaml

/**
 * Objects split into files for a `config/` directory, named so that `kubectl apply -f config/` (which reads them
 * in name order) creates what others need first: `crd.yaml`, `namespace.yaml`, `rbac.yaml`, `webhook.yaml` (the
 * webhook configurations), `workload.yaml` (only the files that have objects). The monitoring objects are in
 * `monitoring/` (`prometheus.yaml`: the ServiceMonitor and the PrometheusRule; `grafana-dashboard.yaml`: the
 * dashboard's ConfigMap), which `kubectl apply -f config/` leaves out (it needs the Prometheus Operator's CRDs:
 * `kubectl apply -f config/monitoring/`), and each dashboard's JSON, to import in Grafana, is `grafana/<name>.json`.
 * The `.yaml` values are YAML texts as {@link toYaml} writes them.
 *
 * @since 0.1.0
 * @category formatting
 */
export const files: (objects: ReadonlyArray<object>) => Record<string, string> = internal.files
