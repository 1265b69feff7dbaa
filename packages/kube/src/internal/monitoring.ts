/**
 * What `Manifests` generates for monitoring: the Grafana dashboard of an operator's metrics, the Prometheus
 * Operator's ServiceMonitor that has Prometheus scrape the metrics Service, and the PrometheusRule of its alerts.
 * Every query uses the series the main job serves on `/metrics` (controller-runtime's, client-go's and the
 * process's names): `examples/webapp/test/monitoring.test.ts` checks them against a running operator's scrape.
 */
type Json = Record<string, unknown>

/** What the monitoring objects are made for. @internal */
export interface Target {
  /** The operator's name: the Lease of its leader election, the prefix of its objects. */
  readonly name: string
  readonly namespace: string
  /** The `job` label Prometheus gives the metrics: the metrics Service's name, as a ServiceMonitor scrapes it. */
  readonly job: string
  readonly labels: Record<string, string>
  readonly leaderElection: boolean
  readonly webhooks: boolean
}

// ---------------------------------------------------------------------------------------------------------------
// dashboard

/** The selector of every dashboard query: the namespace and job variables. */
const scope = `namespace="$namespace", job=~"$job"`
const rate = (metric: string, extra = "") => `rate(${metric}{${scope}${extra}}[$__rate_interval])`
const quantile = (q: number, metric: string, by: string) =>
  `histogram_quantile(${q}, sum by (${by}, le) (${rate(`${metric}_bucket`)}))`

interface PanelSpec {
  readonly title: string
  readonly description: string
  readonly unit: string
  readonly targets: ReadonlyArray<readonly [expr: string, legend: string]>
}

interface RowSpec {
  readonly title: string
  readonly panels: ReadonlyArray<PanelSpec>
}

const webhookRow: RowSpec = {
  title: "Webhooks",
  panels: [
    {
      title: "Webhook requests by code",
      description: "Admission and conversion requests per second by webhook and HTTP status code (a denial is " +
        "a 200 answer).",
      unit: "reqps",
      targets: [[
        `sum by (webhook, code) (${rate("controller_runtime_webhook_requests_total")})`,
        "{{webhook}} {{code}}"
      ]]
    },
    {
      title: "Webhook latency",
      description: "50th and 99th percentiles of the time the operator takes to answer the API server.",
      unit: "s",
      targets: [
        [quantile(0.5, "controller_runtime_webhook_latency_seconds", "webhook"), "{{webhook}} p50"],
        [quantile(0.99, "controller_runtime_webhook_latency_seconds", "webhook"), "{{webhook}} p99"]
      ]
    }
  ]
}

const leaderPanel = (name: string): PanelSpec => ({
  title: "Leader",
  description: `Which replica holds the leader-election Lease ${name} (1): one should, at all times.`,
  unit: "short",
  targets: [
    [
      `max by (instance) (leader_election_master_status{${scope}, name="${name}"})`,
      "{{instance}}"
    ]
  ]
})

const rows = (target: Target): ReadonlyArray<RowSpec> => [
  {
    title: "Reconciles",
    panels: [
      {
        title: "Reconcile rate",
        description: "Reconciles per second by controller and result (success, error, requeue, requeue_after).",
        unit: "ops",
        targets: [[
          `sum by (controller, result) (${rate("controller_runtime_reconcile_total")})`,
          "{{controller}} {{result}}"
        ]]
      },
      {
        title: "Reconcile errors",
        description: "Reconciles that failed (each is retried with backoff), those that failed terminally (not " +
          "retried) and defects (panics), per second by controller.",
        unit: "ops",
        targets: [
          [`sum by (controller) (${rate("controller_runtime_reconcile_errors_total")})`, "{{controller}} errors"],
          [
            `sum by (controller) (${rate("controller_runtime_terminal_reconcile_errors_total")})`,
            "{{controller}} terminal"
          ],
          [`sum by (controller) (${rate("controller_runtime_reconcile_panics_total")})`, "{{controller}} panics"]
        ]
      },
      {
        title: "Reconcile latency",
        description: "How long a reconcile takes: 50th and 99th percentiles by controller.",
        unit: "s",
        targets: [
          [quantile(0.5, "controller_runtime_reconcile_time_seconds", "controller"), "{{controller}} p50"],
          [quantile(0.99, "controller_runtime_reconcile_time_seconds", "controller"), "{{controller}} p99"]
        ]
      },
      {
        title: "Workers",
        description: "Workers reconciling now, and the most a controller runs at once (maxConcurrentReconciles).",
        unit: "short",
        targets: [
          [`sum by (controller) (controller_runtime_active_workers{${scope}})`, "{{controller}} active"],
          [`max by (controller) (controller_runtime_max_concurrent_reconciles{${scope}})`, "{{controller}} max"]
        ]
      }
    ]
  },
  {
    title: "Work queue",
    panels: [
      {
        title: "Queue depth",
        description: "Requests waiting in each controller's queue. A depth that only grows means the workers " +
          "cannot keep up.",
        unit: "short",
        targets: [[`sum by (name) (workqueue_depth{${scope}})`, "{{name}}"]]
      },
      {
        title: "Queue wait and work time",
        description: "99th percentile of the time a request waits in the queue, and of the time its processing takes.",
        unit: "s",
        targets: [
          [quantile(0.99, "workqueue_queue_duration_seconds", "name"), "{{name}} wait p99"],
          [quantile(0.99, "workqueue_work_duration_seconds", "name"), "{{name}} work p99"]
        ]
      },
      {
        title: "Adds and retries",
        description: "Requests added to the queue, and those added back after a failure or a requeue (rate limited), " +
          "per second.",
        unit: "ops",
        targets: [
          [`sum by (name) (${rate("workqueue_adds_total")})`, "{{name}} adds"],
          [`sum by (name) (${rate("workqueue_retries_total")})`, "{{name}} retries"]
        ]
      },
      {
        title: "Longest running reconcile",
        description: "How long the longest reconcile in progress has been running; a growing line is a stuck worker.",
        unit: "s",
        targets: [[`max by (name) (workqueue_longest_running_processor_seconds{${scope}})`, "{{name}}"]]
      }
    ]
  },
  {
    title: "API server requests",
    panels: [
      {
        title: "Request rate by code",
        description: "Requests to the API server per second by HTTP method and status code (`<error>`: no answer).",
        unit: "reqps",
        targets: [[`sum by (method, code) (${rate("rest_client_requests_total")})`, "{{method}} {{code}}"]]
      },
      {
        title: "Request latency",
        description: "99th percentile of API requests by verb, rate-limit waits and retries included.",
        unit: "s",
        targets: [[quantile(0.99, "rest_client_request_duration_seconds", "verb"), "{{verb}} p99"]]
      }
    ]
  },
  {
    title: "Watches and cache",
    panels: [
      {
        title: "Watch reconnects",
        description: "Lists and watches re-established by reason: error (a failed request), idle (nothing arrived in " +
          "time), expired (410 Gone: relist), reset (the API server's history went back: relist).",
        unit: "short",
        targets: [[
          `sum by (watch, reason) (increase(watcher_reconnects_total{${scope}}[$__rate_interval]))`,
          "{{watch}} {{reason}}"
        ]]
      },
      {
        title: "Undecodable objects",
        description: "Objects in the cache that do not match the operator's Schema (they are skipped by the " +
          "reconciles that need them decoded), and decode failures per second by kind.",
        unit: "short",
        targets: [
          [`sum by (informer) (informer_undecodable_objects{${scope}})`, "{{informer}} held"],
          [`sum by (kind) (${rate("informer_decode_failures_total")})`, "{{kind}} failures/s"]
        ]
      }
    ]
  },
  ...(target.webhooks ? [webhookRow] : []),
  {
    title: "Process",
    panels: [
      {
        title: "Memory",
        description: "Resident memory of each replica, and the JavaScript heap in use.",
        unit: "bytes",
        targets: [
          [`sum by (instance) (process_resident_memory_bytes{${scope}})`, "{{instance}} resident"],
          [`sum by (instance) (nodejs_heap_size_used_bytes{${scope}})`, "{{instance}} heap used"]
        ]
      },
      {
        title: "CPU",
        description: "CPU time per second of each replica (1 is one core).",
        unit: "short",
        targets: [[`sum by (instance) (${rate("process_cpu_seconds_total")})`, "{{instance}}"]]
      },
      {
        title: "Event loop lag",
        description: "How late the event loop runs what is due: the 99th percentile and the mean since the last " +
          "scrape. A lag of seconds delays every reconcile and webhook answer of the replica.",
        unit: "s",
        targets: [
          [`max by (instance) (nodejs_eventloop_lag_p99_seconds{${scope}})`, "{{instance}} p99"],
          [`max by (instance) (nodejs_eventloop_lag_mean_seconds{${scope}})`, "{{instance}} mean"]
        ]
      },
      ...(target.leaderElection ? [leaderPanel(target.name)] : [])
    ]
  }
]

const panel = (spec: PanelSpec, id: number, gridPos: Json): Json => ({
  id,
  type: "timeseries",
  title: spec.title,
  description: spec.description,
  datasource: { type: "prometheus", uid: "${datasource}" },
  gridPos,
  fieldConfig: {
    defaults: { unit: spec.unit, min: 0, custom: { lineWidth: 1, fillOpacity: 10, showPoints: "never" } },
    overrides: []
  },
  options: {
    legend: { displayMode: "list", placement: "bottom", showLegend: true },
    tooltip: { mode: "multi", sort: "desc" }
  },
  targets: spec.targets.map(([expr, legendFormat], i) => ({
    refId: String.fromCharCode(65 + i),
    datasource: { type: "prometheus", uid: "${datasource}" },
    expr,
    legendFormat,
    range: true
  }))
})

/** A Grafana uid: at most 40 characters of `[a-zA-Z0-9-_]`. */
const uid = (name: string) => `reconcile-${name}`.slice(0, 40).replace(/-+$/, "")

/** @internal */
export const dashboard = (target: Target): Json => {
  const panels: Array<Json> = []
  let id = 1
  let y = 0
  for (const row of rows(target)) {
    panels.push({
      id: id++,
      type: "row",
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y: y++ },
      panels: []
    })
    row.panels.forEach((spec, i) => {
      // two panels a line, 8 units high
      panels.push(panel(spec, id++, { h: 8, w: 12, x: (i % 2) * 12, y: y + Math.floor(i / 2) * 8 }))
    })
    y += Math.ceil(row.panels.length / 2) * 8
  }
  const variable = (name: string, label: string, query: string, current: string): Json => ({
    name,
    label,
    type: "query",
    datasource: { type: "prometheus", uid: "${datasource}" },
    query: { query, refId: `${name}-variable` },
    definition: query,
    refresh: 2,
    sort: 1,
    includeAll: false,
    multi: name === "job",
    current: name === "job" ? { text: [current], value: [current] } : { text: current, value: current }
  })
  return {
    title: `${target.name} (Reconcile operator)`,
    uid: uid(target.name),
    description: `Reconciles, work queues, API requests, watches${
      target.webhooks ? ", webhooks" : ""
    } and the process of the ${target.name} operator. Generated by reconcile manifests --dashboard.`,
    tags: ["reconcile", "kubernetes", "operator"],
    editable: true,
    graphTooltip: 1,
    refresh: "30s",
    schemaVersion: 39,
    version: 1,
    time: { from: "now-1h", to: "now" },
    timepicker: {},
    timezone: "browser",
    annotations: { list: [] },
    links: [],
    templating: {
      list: [
        {
          name: "datasource",
          label: "Data source",
          type: "datasource",
          // no current value: Grafana picks the default Prometheus data source
          query: "prometheus",
          refresh: 1,
          hide: 0
        },
        variable(
          "namespace",
          "Namespace",
          "label_values(controller_runtime_reconcile_total, namespace)",
          target.namespace
        ),
        variable(
          "job",
          "Job",
          `label_values(controller_runtime_reconcile_total{namespace="$namespace"}, job)`,
          target.job
        )
      ]
    },
    panels
  }
}

// ---------------------------------------------------------------------------------------------------------------
// alerts

/** One alerting rule of the PrometheusRule. @internal */
export interface Alert {
  readonly alert: string
  readonly expr: string
  readonly for: string
  readonly labels: { readonly severity: "warning" | "critical" }
  readonly annotations: { readonly summary: string; readonly description: string }
}

/** @internal */
export const alerts = (target: Target): Array<Alert> => {
  const s = `namespace="${target.namespace}", job="${target.job}"`
  const by = "namespace, job"
  const out: Array<Alert> = [
    {
      alert: "ReconcileErrorsPersisting",
      expr: `sum by (${by}, controller) (rate(controller_runtime_reconcile_errors_total{${s}}[5m])) > 0`,
      for: "15m",
      labels: { severity: "warning" },
      annotations: {
        summary: "Reconciles of {{ $labels.controller }} keep failing",
        description: "The {{ $labels.controller }} controller of {{ $labels.namespace }}/{{ $labels.job }} has " +
          "failed {{ $value | humanize }} reconciles per second for 15 minutes: the objects it retries do not " +
          "converge. Read the operator's error logs for the controller."
      }
    },
    {
      alert: "ReconcilePanics",
      expr: `sum by (${by}, controller) (increase(controller_runtime_reconcile_panics_total{${s}}[10m])) > 0`,
      for: "0m",
      labels: { severity: "critical" },
      annotations: {
        summary: "A reconcile of {{ $labels.controller }} died of a defect",
        description: "The {{ $labels.controller }} controller of {{ $labels.namespace }}/{{ $labels.job }} had " +
          "{{ $value | humanize }} reconciles end with a defect (an exception, not a typed failure) in the last 10 " +
          "minutes: a bug in the reconcile. The operator's error log has the stack."
      }
    },
    {
      alert: "WorkqueueGrowing",
      expr: `sum by (${by}, name) (workqueue_depth{${s}}) > 0 and ` +
        `sum by (${by}, name) (deriv(workqueue_depth{${s}}[30m])) > 0`,
      for: "30m",
      labels: { severity: "warning" },
      annotations: {
        summary: "The work queue of {{ $labels.name }} only grows",
        description: "The queue of {{ $labels.name }} ({{ $labels.namespace }}/{{ $labels.job }}) has grown for " +
          "30 minutes: reconciles do not keep up with the changes (too few workers, slow API requests, or a " +
          "client rate limit)."
      }
    },
    {
      alert: "ReconcileStuck",
      expr: `max by (${by}, name) (workqueue_longest_running_processor_seconds{${s}}) > 600`,
      for: "5m",
      labels: { severity: "warning" },
      annotations: {
        summary: "A reconcile of {{ $labels.name }} has run for more than 10 minutes",
        description: "The longest reconcile in progress in {{ $labels.name }} ({{ $labels.namespace }}/" +
          "{{ $labels.job }}) has run for {{ $value | humanizeDuration }}: a worker is stuck (a call without a " +
          "timeout, a lock never released)."
      }
    },
    {
      alert: "WatchDisconnected",
      expr: `sum by (${by}, watch) (increase(watcher_reconnects_total{${s}, reason=~"error|idle"}[10m])) > 2`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: "The watch {{ $labels.watch }} keeps disconnecting",
        description: "The watch {{ $labels.watch }} of {{ $labels.namespace }}/{{ $labels.job }} failed or went " +
          "silent {{ $value | humanize }} times in 10 minutes: the operator's cache is not in sync with the API " +
          "server, and changes reach its controllers late. Check the API server's health and the network path, " +
          "and the operator's logs for the watch's errors."
      }
    },
    {
      alert: "UndecodableObjects",
      expr: `max by (${by}, informer) (informer_undecodable_objects{${s}}) > 0`,
      for: "15m",
      labels: { severity: "warning" },
      annotations: {
        summary: "{{ $value }} objects of {{ $labels.informer }} do not match the operator's Schema",
        description: "The cache of {{ $labels.informer }} ({{ $labels.namespace }}/{{ $labels.job }}) holds " +
          "{{ $value }} objects that do not decode: their reconciles only see them as undecodable. Fix the objects " +
          "(the operator's warning log names them) or the Schema (a CRD version the code does not know)."
      }
    }
  ]
  if (target.leaderElection) {
    out.push({
      alert: "NoLeader",
      expr: `absent(max(leader_election_master_status{${s}, name="${target.name}"}) == 1)`,
      for: "5m",
      labels: { severity: "critical" },
      annotations: {
        summary: `No replica of ${target.name} leads`,
        description: `No replica of ${target.job} in ${target.namespace} has held the leader-election Lease ` +
          `${target.name} for 5 minutes (or none is scraped): nothing is reconciled. Check that the Pods run ` +
          "(kubectl get pods), their logs (leadership lost, cannot acquire the lease), the Lease (kubectl get " +
          "lease) and the Role that lets them update it."
      }
    })
  }
  if (target.webhooks) {
    out.push({
      alert: "WebhookFailures",
      expr: `sum by (${by}, webhook) (rate(controller_runtime_webhook_requests_total{${s}, code!="200"}[5m])) / ` +
        `sum by (${by}, webhook) (rate(controller_runtime_webhook_requests_total{${s}}[5m])) > 0.05`,
      for: "10m",
      labels: { severity: "critical" },
      annotations: {
        summary: "The webhook {{ $labels.webhook }} fails {{ $value | humanizePercentage }} of its requests",
        description: "The webhook {{ $labels.webhook }} of {{ $labels.namespace }}/{{ $labels.job }} answered " +
          "{{ $value | humanizePercentage }} of the API server's requests with an error status for 10 minutes: " +
          "with failurePolicy Fail the API server rejects those writes. Read the operator's logs for the webhook."
      }
    })
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// objects

/** The ServiceMonitor that scrapes the metrics Service's `metrics` port. @internal */
export const serviceMonitor = (target: Target): Json => ({
  apiVersion: "monitoring.coreos.com/v1",
  kind: "ServiceMonitor",
  metadata: { name: target.job, namespace: target.namespace, labels: { ...target.labels } },
  spec: {
    selector: { matchLabels: { ...target.labels } },
    namespaceSelector: { matchNames: [target.namespace] },
    endpoints: [{ port: "metrics", path: "/metrics", interval: "30s" }]
  }
})

/** @internal */
export const prometheusRule = (target: Target): Json => ({
  apiVersion: "monitoring.coreos.com/v1",
  kind: "PrometheusRule",
  metadata: { name: `${target.name}-alerts`, namespace: target.namespace, labels: { ...target.labels } },
  spec: { groups: [{ name: `${target.name}.rules`, rules: alerts(target) }] }
})

/** The dashboard in a ConfigMap the Grafana sidecar loads (label `grafana_dashboard: "1"`). @internal */
export const dashboardConfigMap = (target: Target): Json => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: `${target.name}-dashboard`,
    namespace: target.namespace,
    labels: { ...target.labels, grafana_dashboard: "1" }
  },
  data: { [`${target.name}.json`]: JSON.stringify(dashboard(target), null, 2) }
})
