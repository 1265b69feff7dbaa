/**
 * The monitoring objects of `Manifests.generate` (`dashboard`, `alerts`, `serviceMonitor`) and the leader-election
 * gauge the NoLeader alert reads. That every query selects series the operator exposes is checked against the
 * running webapp operator (examples/webapp/test/monitoring.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { TestKube } from "@reconcile/testkit"
import { Effect, Exit, Metric, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Admission from "../src/Admission.js"
import { masterStatus } from "../src/internal/leaseLeaderElection.js"
import * as KubeController from "../src/KubeController.js"
import * as LeaseLeaderElection from "../src/LeaseLeaderElection.js"
import * as Manifests from "../src/Manifests.js"
import * as Operator from "../src/Operator.js"
import * as Resource from "../src/Resource.js"

const Note = Resource.custom({
  group: "example.com",
  version: "v1",
  kind: "Note",
  plural: "notes",
  scope: "Namespaced",
  spec: Schema.Struct({ text: Schema.String })
})

const controller = KubeController.make({ name: "notes", for: Note, reconcile: () => Effect.void })

const plain = Operator.make({ name: "notes-operator", resources: [Note], controllers: [controller] })

const withWebhooks = Operator.make({
  name: "notes-operator",
  resources: [Note],
  controllers: [controller],
  webhooks: {
    admission: [Admission.validator(Note, { create: () => Effect.void })]
  }
})

const generate = (operator: Operator.Operator<any, any>, options?: Manifests.Options) =>
  Manifests.generate(operator, options).pipe(Effect.map((objects) => objects as ReadonlyArray<any>))

const names = (objects: ReadonlyArray<any>) => objects.map((o) => `${o.kind}/${o.metadata.name}`)

describe("Manifests: dashboard and alerts", () => {
  it.effect("off by default: the objects and files are those without them", () =>
    Effect.gen(function*() {
      const objects = yield* generate(plain)
      assert.isFalse(objects.some((o) => ["ServiceMonitor", "PrometheusRule", "ConfigMap"].includes(o.kind)))
      assert.deepStrictEqual(Object.keys(Manifests.files(objects)), [
        "crd.yaml",
        "namespace.yaml",
        "rbac.yaml",
        "workload.yaml"
      ])
    }))

  it.effect("dashboard and alerts: ServiceMonitor, the dashboard's ConfigMap and the PrometheusRule, last", () =>
    Effect.gen(function*() {
      const without = yield* generate(plain)
      const objects = yield* generate(plain, { dashboard: true, alerts: true })
      assert.deepStrictEqual(names(objects).slice(0, without.length), names(without))
      assert.deepStrictEqual(names(objects).slice(without.length), [
        "ServiceMonitor/notes-operator-metrics",
        "ConfigMap/notes-operator-dashboard",
        "PrometheusRule/notes-operator-alerts"
      ])
      for (const o of objects.slice(without.length)) assert.strictEqual(o.metadata.namespace, "notes-operator-system")
      const monitor = objects.find((o) => o.kind === "ServiceMonitor")
      // the metrics Service's labels and port name
      const service = objects.find((o) => o.kind === "Service" && o.metadata.name === "notes-operator-metrics")
      assert.deepStrictEqual(monitor.spec.selector.matchLabels, service.metadata.labels)
      assert.deepStrictEqual(monitor.spec.endpoints.map((e: any) => e.port), service.spec.ports.map((p: any) => p.name))
      const configMap = objects.find((o) => o.kind === "ConfigMap")
      assert.strictEqual(configMap.metadata.labels.grafana_dashboard, "1")
      assert.deepStrictEqual(JSON.parse(configMap.data["notes-operator.json"]), yield* Manifests.dashboard(plain))

      const files = Manifests.files(objects)
      assert.deepStrictEqual(Object.keys(files), [
        "crd.yaml",
        "monitoring/grafana-dashboard.yaml",
        "monitoring/prometheus.yaml",
        "namespace.yaml",
        "rbac.yaml",
        "workload.yaml",
        "grafana/notes-operator.json"
      ])
      assert.deepStrictEqual(JSON.parse(files["grafana/notes-operator.json"]!), yield* Manifests.dashboard(plain))
    }))

  it.effect("each option alone; serviceMonitor: false leaves the ServiceMonitor out", () =>
    Effect.gen(function*() {
      const kinds = (objects: ReadonlyArray<any>) =>
        objects.filter((o) => ["ServiceMonitor", "ConfigMap", "PrometheusRule"].includes(o.kind)).map((o) => o.kind)
      assert.deepStrictEqual(kinds(yield* generate(plain, { dashboard: true })), ["ServiceMonitor", "ConfigMap"])
      assert.deepStrictEqual(kinds(yield* generate(plain, { alerts: true })), ["ServiceMonitor", "PrometheusRule"])
      assert.deepStrictEqual(kinds(yield* generate(plain, { alerts: true, serviceMonitor: false })), ["PrometheusRule"])
      assert.deepStrictEqual(kinds(yield* generate(plain, { serviceMonitor: true })), ["ServiceMonitor"])
    }))

  it.effect("alerts: each with a severity, a summary and a description; NoLeader with leader election only, WebhookFailures with webhooks only", () =>
    Effect.gen(function*() {
      const alerts = (objects: ReadonlyArray<any>) =>
        objects.find((o) => o.kind === "PrometheusRule").spec.groups.flatMap((g: any) => g.rules)
      const all = alerts(yield* generate(withWebhooks, { alerts: true }))
      assert.deepStrictEqual(all.map((r: any) => r.alert), [
        "ReconcileErrorsPersisting",
        "ReconcilePanics",
        "WorkqueueGrowing",
        "ReconcileStuck",
        "WatchDisconnected",
        "UndecodableObjects",
        "NoLeader",
        "WebhookFailures"
      ])
      for (const rule of all) {
        assert.include(["warning", "critical"], rule.labels.severity, rule.alert)
        assert.isAbove(rule.annotations.summary.length, 10, rule.alert)
        assert.isAbove(rule.annotations.description.length, 40, rule.alert)
        // scoped to this operator's scrape job and namespace
        assert.include(rule.expr, `job="notes-operator-metrics"`, rule.alert)
        assert.include(rule.expr, `namespace="notes-operator-system"`, rule.alert)
      }
      const noLeader = all.find((r: any) => r.alert === "NoLeader")
      assert.include(noLeader.expr, `leader_election_master_status{`)
      assert.include(noLeader.expr, `name="notes-operator"`)

      const plainAlerts = alerts(yield* generate(plain, { alerts: true })).map((r: any) => r.alert)
      assert.notInclude(plainAlerts, "WebhookFailures")
      assert.include(plainAlerts, "NoLeader")
      for (const options of [{ leaderElection: false }, { sharding: true }]) {
        assert.notInclude(
          alerts(yield* generate(plain, { alerts: true, ...options })).map((r: any) => r.alert),
          "NoLeader"
        )
      }
    }))

  it.effect("the dashboard: data source, namespace and job variables; rows and panels on a 24-column grid", () =>
    Effect.gen(function*() {
      const dashboard: any = yield* Manifests.dashboard(withWebhooks, { namespace: "notes" })
      assert.deepStrictEqual(dashboard.templating.list.map((v: any) => [v.name, v.type]), [
        ["datasource", "datasource"],
        ["namespace", "query"],
        ["job", "query"]
      ])
      assert.strictEqual(dashboard.templating.list[1].current.value, "notes")
      assert.deepStrictEqual(dashboard.templating.list[2].current.value, ["notes-operator-metrics"])
      assert.strictEqual(dashboard.uid, "reconcile-notes-operator")
      const rows = dashboard.panels.filter((p: any) => p.type === "row").map((p: any) => p.title)
      assert.deepStrictEqual(rows, [
        "Reconciles",
        "Work queue",
        "API server requests",
        "Watches and cache",
        "Webhooks",
        "Process"
      ])
      const ids = dashboard.panels.map((p: any) => p.id)
      assert.strictEqual(new Set(ids).size, ids.length, "unique panel ids")
      for (const panel of dashboard.panels) {
        assert.isAtMost(panel.gridPos.x + panel.gridPos.w, 24, panel.title)
        if (panel.type === "row") continue
        assert.strictEqual(panel.datasource.uid, "${datasource}")
        assert.isAbove(panel.targets.length, 0, panel.title)
        for (const target of panel.targets) assert.include(target.expr, `namespace="$namespace", job=~"$job"`)
      }
      const titles = dashboard.panels.map((p: any) => p.title)
      assert.include(titles, "Leader")
      // no webhooks, no leader election: neither their row nor their panel
      const bare: any = yield* Manifests.dashboard(plain, { leaderElection: false })
      const bareTitles = bare.panels.map((p: any) => p.title)
      assert.notInclude(bareTitles, "Webhooks")
      assert.notInclude(bareTitles, "Leader")
    }))

  it.effect("an invalid option fails the dashboard as it fails generate", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Manifests.dashboard(plain, { namespace: "Not A Label" }))
      assert.strictEqual(error.reason, "InvalidNamespace")
    }))
})

describe("LeaseLeaderElection: leader_election_master_status", () => {
  it.effect("1 while this replica holds the Lease, 0 once it released it", () =>
    Effect.gen(function*() {
      const status = masterStatus("gauge-operator")
      const scope = yield* Scope.make()
      const election = yield* LeaseLeaderElection.make({ name: "gauge-operator", identity: "a" }).pipe(
        Scope.provide(scope),
        Effect.orDie
      )
      yield* election.awaitLeadership
      yield* TestClock.adjust(0)
      assert.strictEqual((yield* Metric.value(status)).value, 1)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual((yield* Metric.value(status)).value, 0)
    }).pipe(Effect.provide(TestKube.layerWithCluster())))
})
