/**
 * Server-side tables and discovery as kubectl uses them: `kubectl get <kind> [-o wide]` prints the columns
 * kube-apiserver's printers define, `kubectl get all` finds the `all` category in discovery. One server, no
 * controller manager (objects and their statuses are written by the test, so the cells are known).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApiServer, TestCluster } from "../src/index.js"
import { tableColumns } from "../src/internal/http/tableColumns.generated.js"
import * as Table from "../src/internal/http/tableResponse.js"
import { builtins, fromCrd } from "../src/internal/resourceType.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Kubectl from "./support/kubectl.js"

const { ok } = Kubectl.make("testkit-tables-")

/** The rows of kubectl's table output, split on runs of 2+ spaces (cells may hold single spaces). */
const rows = (text: string): Array<Array<string>> => text.trim().split("\n").map((line) => line.trim().split(/\s{2,}/))

const template = {
  metadata: { labels: { app: "web", tier: "front" } },
  spec: { containers: [{ name: "app", image: "nginx:1.27" }, { name: "log", image: "busybox" }] }
}

const seed = Effect.gen(function*() {
  const cluster = yield* TestCluster.TestCluster
  const create = (o: object) => cluster.create(o as KubeObject)
  const status = (o: object) => cluster.updateStatus(o as KubeObject)
  const pod = yield* create({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web-1", namespace: "default", labels: { app: "web" } },
    spec: { nodeName: "testkit-node", containers: [{ name: "app", image: "nginx" }, { name: "log", image: "busybox" }] }
  })
  yield* status({
    ...pod,
    status: {
      phase: "Running",
      podIP: "10.0.0.7",
      podIPs: [{ ip: "10.0.0.7" }],
      conditions: [{ type: "Ready", status: "True" }],
      containerStatuses: [
        { name: "app", ready: true, restartCount: 0, state: { running: { startedAt: "2025-01-01T00:00:00Z" } } },
        { name: "log", ready: false, restartCount: 2, state: { waiting: { reason: "CrashLoopBackOff" } } }
      ]
    }
  })
  yield* create({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "pending", namespace: "default" },
    spec: { containers: [{ name: "app", image: "nginx" }] }
  })
  const dep = yield* create({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default" },
    spec: {
      replicas: 3,
      selector: {
        matchLabels: { app: "web" },
        matchExpressions: [{ key: "tier", operator: "In", values: ["front", "edge"] }]
      },
      template
    }
  })
  yield* status({ ...dep, status: { replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2 } })
  const rs = yield* create({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web-abc", namespace: "default" },
    spec: { replicas: 3, selector: { matchLabels: { app: "web" } }, template }
  })
  yield* status({ ...rs, status: { replicas: 3, readyReplicas: 1 } })
  const sts = yield* create({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", namespace: "default" },
    spec: { replicas: 2, serviceName: "db", selector: { matchLabels: { app: "web" } }, template }
  })
  yield* status({ ...sts, status: { replicas: 2, readyReplicas: 1 } })
  yield* create({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec: {
      type: "NodePort",
      clusterIP: "10.96.0.10",
      selector: { app: "web" },
      ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }, { port: 53, protocol: "UDP" }]
    }
  })
  yield* create({
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "web.1", namespace: "default" },
    involvedObject: { kind: "Deployment", name: "web", namespace: "default", apiVersion: "apps/v1" },
    reason: "ScalingReplicaSet",
    message: "Scaled up replica set web-abc to 3 ",
    type: "Normal",
    source: { component: "deployment-controller" },
    count: 4
  })
})

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("tables", (it) => {
  it.effect("kubectl get pods, deployments, replicasets, statefulsets, services, events (-o wide)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* seed

      const pods = rows(yield* ok(server, ["get", "pods", "-o", "wide"]))
      assert.deepStrictEqual(pods[0], [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES"
      ])
      const pending = pods.find((r) => r[0] === "pending")!
      assert.deepStrictEqual([pending[1], pending[3], pending[5], pending[6], pending[7]], [
        "0/1",
        "0",
        "<none>",
        "<none>",
        "<none>"
      ])
      const web = pods.find((r) => r[0] === "web-1")!
      assert.deepStrictEqual([web[1], web[2], web[3], web[5], web[6], web[8]], [
        "1/2",
        "CrashLoopBackOff",
        "2",
        "10.0.0.7",
        "testkit-node",
        "<none>"
      ])

      const deps = rows(yield* ok(server, ["get", "deployments", "-o", "wide"]))
      assert.deepStrictEqual(deps[0], [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR"
      ])
      const dep = deps[1]!
      assert.deepStrictEqual([dep[0], dep[1], dep[2], dep[3], dep[5], dep[6], dep[7]], [
        "web",
        "2/3",
        "3",
        "2",
        "app,log",
        "nginx:1.27,busybox",
        "app=web,tier in (edge,front)"
      ])
      assert.match(
        yield* ok(server, ["get", "deploy"]),
        /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+2\/3\s+3\s+2\s+\d+s\n$/
      )

      const rs = rows(yield* ok(server, ["get", "rs", "-o", "wide"]))
      assert.deepStrictEqual(rs[0], ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"])
      assert.deepStrictEqual([...rs[1]!.slice(0, 4), rs[1]![7]], ["web-abc", "3", "3", "1", "app=web"])

      const sts = rows(yield* ok(server, ["get", "statefulsets", "-o", "wide"]))
      assert.deepStrictEqual(sts[0], ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"])
      assert.deepStrictEqual([sts[1]![0], sts[1]![1], sts[1]![3]], ["db", "1/2", "app,log"])

      const svcs = rows(yield* ok(server, ["get", "svc", "-o", "wide"]))
      assert.deepStrictEqual(svcs[0], ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"])
      const svc = svcs.find((r) => r[0] === "web")!
      assert.deepStrictEqual([svc[1], svc[2], svc[3], svc[4], svc[6]], [
        "NodePort",
        "10.96.0.10",
        "<none>",
        "80:30080/TCP,53/UDP",
        "app=web"
      ])

      const events = rows(yield* ok(server, ["get", "events"]))
      assert.deepStrictEqual(events[0], ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
      const event = events.find((r) => r[2] === "ScalingReplicaSet")!
      assert.deepStrictEqual(event.slice(1), [
        "Normal",
        "ScalingReplicaSet",
        "deployment/web",
        "Scaled up replica set web-abc to 3"
      ])
      // events.k8s.io/v1 prints the same table from the same storage
      const v1events = rows(yield* ok(server, ["get", "events.events.k8s.io"]))
      assert.deepStrictEqual(v1events[0], events[0])
      assert.deepStrictEqual(v1events.find((r) => r[2] === "ScalingReplicaSet")!.slice(1), event.slice(1))
      const wide = rows(yield* ok(server, ["get", "events", "-o", "wide"]))
      assert.deepStrictEqual(wide[0], [
        "LAST SEEN",
        "TYPE",
        "REASON",
        "OBJECT",
        "SUBOBJECT",
        "SOURCE",
        "MESSAGE",
        "FIRST SEEN",
        "COUNT",
        "NAME"
      ])
      const wideEvent = wide.find((r) => r[2] === "ScalingReplicaSet")!
      assert.deepStrictEqual([wideEvent[4], wideEvent[7], wideEvent[8]], ["deployment-controller", "4", "web.1"])
    }))

  it.effect("kubectl get all, namespaces, configmaps, secrets, leases, CRDs; discovery categories and subresources", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const all = yield* ok(server, ["get", "all"])
      for (const prefix of ["pod/web-1", "service/web", "deployment.apps/web", "replicaset.apps/web-abc"]) {
        assert.include(all, prefix)
      }
      assert.include(all, "statefulset.apps/db")
      yield* ok(server, ["create", "configmap", "conf", "--from-literal=a=1", "--from-literal=b=2"])
      assert.match(yield* ok(server, ["get", "cm", "conf"]), /^NAME\s+DATA\s+AGE\nconf\s+2\s+/)
      assert.match(yield* ok(server, ["get", "ns", "default"]), /^NAME\s+STATUS\s+AGE\ndefault\s+Active\s+/)
      yield* ok(server, ["create", "-f", "-"], "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: YQ==}\n")
      assert.match(yield* ok(server, ["get", "secret", "s"]), /^NAME\s+TYPE\s+DATA\s+AGE\ns\s+Opaque\s+1\s+/)
      yield* ok(
        server,
        ["create", "-f", "-"],
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: leader}\nspec: {holderIdentity: pod-a}\n"
      )
      assert.match(yield* ok(server, ["get", "leases"]), /^NAME\s+HOLDER\s+AGE\nleader\s+pod-a\s+/)
      yield* ok(
        server,
        ["apply", "--server-side", "-f", "-"],
        `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
      )
      assert.match(
        yield* ok(server, ["get", "crd"]),
        /^NAME\s+CREATED AT\ngadgets\.example\.com\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/
      )
      yield* ok(server, ["create", "-f", "-"], "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\n")
      // a CRD version without printer columns prints NAME and AGE (apiextensions' default column)
      assert.match(yield* ok(server, ["get", "gadgets"]), /^NAME\s+AGE\ng1\s+\d+s\n$/)
      assert.include(yield* ok(server, ["get", "all"]), "gadget.example.com/g1")

      const resources = yield* ok(server, ["api-resources", "--categories", "all", "-o", "name"])
      assert.includeMembers(resources.trim().split("\n"), [
        "pods",
        "services",
        "deployments.apps",
        "replicasets.apps",
        "statefulsets.apps",
        "gadgets.example.com"
      ])
      const apps = JSON.parse(yield* ok(server, ["get", "--raw", "/apis/apps/v1"]))
      const scale = apps.resources.find((r: { name: string }) => r.name === "deployments/scale")
      assert.deepStrictEqual(scale, {
        name: "deployments/scale",
        singularName: "",
        namespaced: true,
        group: "autoscaling",
        version: "v1",
        kind: "Scale",
        verbs: ["get", "patch", "update"]
      })
      const core = JSON.parse(yield* ok(server, ["get", "--raw", "/api/v1"]))
      assert.deepStrictEqual(core.resources.find((r: { name: string }) => r.name === "pods/log")?.verbs, ["get"])
      assert.deepStrictEqual(core.resources.find((r: { name: string }) => r.name === "pods").categories, ["all"])
    }))
})

describe("table cells", () => {
  it("human durations as apimachinery prints them", () => {
    const now = Date.parse("2025-01-10T00:00:00Z")
    const ago = (seconds: number) => Table.age(new Date(now - seconds * 1000).toISOString(), now)
    assert.deepStrictEqual(
      [
        ago(5),
        ago(119),
        ago(200),
        ago(600),
        ago(3 * 3600 + 60),
        ago(5 * 3600 + 60 * 7),
        ago(30 * 3600),
        ago(50 * 3600)
      ],
      ["5s", "119s", "3m20s", "10m", "3h1m", "5h7m", "30h", "2d2h"]
    )
    assert.strictEqual(ago(-10), "<invalid>")
    assert.strictEqual(Table.age(undefined, now), "<unknown>")
  })
})

describe("table columns", () => {
  const columnsOf = (group: string, plural: string) =>
    Table.table(builtins.find((t) => t.group === group && t.plural === plural)!, [], {}, "None", 0).columnDefinitions

  it("a built-in kind's columns are upstream's, full documentation and an empty format included", () => {
    // the kinds whose cells tableResponse.ts prints, and one of kindTables.ts'
    for (
      const [group, plural] of [["", "configmaps"], ["", "secrets"], ["", "pods"], ["apps", "deployments"], [
        "",
        "events"
      ], ["batch", "jobs"]]
    ) {
      const expected = tableColumns[`${group}/${plural}`]!.map(([name, type, format, priority, description]) => ({
        name,
        type,
        format,
        description,
        priority
      }))
      const actual = columnsOf(group, plural).filter((c) => c.format !== "name")
      assert.deepStrictEqual(actual, expected, `${group}/${plural}`)
    }
    assert.deepStrictEqual(columnsOf("", "configmaps")[1], {
      name: "Data",
      type: "string",
      format: "",
      description:
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
      priority: 0
    })
    // NAME first with format `name`; the event printers put it last, with `-o wide`
    assert.include(columnsOf("", "configmaps")[0], { name: "Name", format: "name", priority: 0 })
    assert.include(columnsOf("", "events").at(-1), { name: "Name", format: "name", priority: 1 })
  })

  it("a custom resource's printer columns carry their format, empty when the CRD names none", () => {
    const [rt] = fromCrd({
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "widgets", kind: "Widget" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          additionalPrinterColumns: [
            { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
            { name: "Ratio", type: "number", format: "float", jsonPath: ".spec.ratio" }
          ]
        }]
      }
    })
    const columns = Table.table(rt!, [], {}, "None", 0).columnDefinitions
    assert.deepStrictEqual(columns.map((c) => [c.name, c.format]), [["Name", "name"], ["Replicas", ""], [
      "Ratio",
      "float"
    ]])
  })
})
