/**
 * The built-in kinds beyond the core ones, as kube-apiserver 1.36 stores them: defaults and validation of the
 * workload kinds operators create (each expectation is what a real server answered for the same object), the job
 * controller of the simulated control plane on TestClock, and their `kubectl get` columns.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { type Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Simulators, TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Kubectl from "./support/kubectl.js"

const settle = Effect.gen(function*() {
  for (let i = 0; i < 10; i++) yield* TestClock.adjust(0)
})

const container = { name: "c", image: "busybox" }

const job = (name: string, spec: object = {}) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: "default" },
  spec: { template: { spec: { restartPolicy: "Never", containers: [container] } }, ...spec }
})

const create = (o: object) =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster.TestCluster
    return (yield* cluster.create(o as KubeObject)) as any
  })
const invalid = (o: object) =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster.TestCluster
    const e: any = yield* Effect.flip(cluster.create(o as KubeObject))
    return String(e.status?.message ?? e)
  })

describe("defaults and validation", () => {
  it.effect("Job: SetDefaults_Job, the generated selector and labels", () =>
    Effect.gen(function*() {
      const j = yield* create(job("j1"))
      const uid = j.metadata.uid
      const labels = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "j1",
        "controller-uid": uid,
        "job-name": "j1"
      }
      assert.deepStrictEqual(j.metadata.labels, labels)
      assert.strictEqual(j.metadata.generation, 1)
      assert.deepStrictEqual({ ...j.spec, template: undefined }, {
        backoffLimit: 6,
        completionMode: "NonIndexed",
        completions: 1,
        manualSelector: false,
        parallelism: 1,
        podReplacementPolicy: "TerminatingOrFailed",
        selector: { matchLabels: { "batch.kubernetes.io/controller-uid": uid } },
        suspend: false,
        template: undefined
      })
      assert.deepStrictEqual(j.spec.template.metadata, { labels })
      assert.strictEqual(j.spec.template.spec.terminationGracePeriodSeconds, 30)
      assert.deepStrictEqual(j.status, {})
      const indexed = yield* create(job("j2", { completions: 3, completionMode: "Indexed", backoffLimitPerIndex: 2 }))
      assert.strictEqual(indexed.spec.backoffLimit, 2147483647)
      assert.strictEqual(indexed.spec.parallelism, 1)
    }).pipe(Effect.provide(Layer.fresh(TestCluster.layer))))

  it.effect("Job, CronJob, Ingress, PDB, HPA, StatefulSet: upstream's 422 messages", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* invalid({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "b", namespace: "default" } }),
        "Job.batch \"b\" is invalid: [spec.template.spec.containers: Required value, " +
          "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"]"
      )
      const manual = job("m", {
        selector: { matchLabels: { app: "one" } },
        template: { metadata: { labels: { app: "one" } }, spec: { restartPolicy: "Never", containers: [container] } }
      })
      assert.match(yield* invalid(manual), /spec\.selector: Invalid value: .*: `selector` not auto-generated$/)
      assert.strictEqual(
        yield* invalid({
          apiVersion: "batch/v1",
          kind: "CronJob",
          metadata: { name: "c", namespace: "default" },
          spec: { jobTemplate: { spec: { template: { spec: { containers: [container] } } } } }
        }),
        "CronJob.batch \"c\" is invalid: [spec.schedule: Required value, " +
          "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"]"
      )
      const backend = { service: { name: "s", port: { number: 80 } } }
      assert.strictEqual(
        yield* invalid({
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          metadata: { name: "i", namespace: "default" },
          spec: { rules: [{ http: { paths: [{ path: "/", backend }] } }] }
        }),
        "Ingress.networking.k8s.io \"i\" is invalid: spec.rules[0].http.paths[0].pathType: Required value: " +
          "pathType must be specified"
      )
      assert.match(
        yield* invalid({
          apiVersion: "policy/v1",
          kind: "PodDisruptionBudget",
          metadata: { name: "p", namespace: "default" },
          spec: { minAvailable: 1, maxUnavailable: 1 }
        }),
        /minAvailable and maxUnavailable cannot be both set$/
      )
      assert.strictEqual(
        yield* invalid({
          apiVersion: "autoscaling/v2",
          kind: "HorizontalPodAutoscaler",
          metadata: { name: "h", namespace: "default" },
          spec: {}
        }),
        "HorizontalPodAutoscaler.autoscaling \"h\" is invalid: [spec.maxReplicas: Required value: must be set and " +
          "greater than 0, spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`, " +
          "spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value, " +
          "spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group]"
      )
      assert.strictEqual(
        yield* invalid({
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          metadata: { name: "s", namespace: "default" },
          spec: { template: { metadata: { labels: { app: "other" } }, spec: { containers: [container] } } }
        }),
        "StatefulSet.apps \"s\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: " +
          "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`]"
      )
    }).pipe(Effect.provide(Layer.fresh(TestCluster.layer))))

  it.effect("CronJob, DaemonSet, StatefulSet, HPA, NetworkPolicy, webhooks: defaults", () =>
    Effect.gen(function*() {
      const cj = yield* create({
        apiVersion: "batch/v1",
        kind: "CronJob",
        metadata: { name: "c", namespace: "default" },
        spec: {
          schedule: "*/5 * * * *",
          jobTemplate: { spec: { template: { spec: { restartPolicy: "OnFailure", containers: [container] } } } }
        }
      })
      assert.deepStrictEqual(
        [
          cj.spec.concurrencyPolicy,
          cj.spec.suspend,
          cj.spec.successfulJobsHistoryLimit,
          cj.spec.failedJobsHistoryLimit
        ],
        ["Allow", false, 3, 1]
      )
      assert.deepStrictEqual(cj.spec.jobTemplate.metadata, {})
      const template = { metadata: { labels: { app: "one" } }, spec: { containers: [container] } }
      const ds = yield* create({
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "d", namespace: "default" },
        spec: { selector: { matchLabels: { app: "one" } }, template }
      })
      assert.deepStrictEqual(ds.spec.updateStrategy, {
        type: "RollingUpdate",
        rollingUpdate: { maxUnavailable: 1, maxSurge: 0 }
      })
      assert.strictEqual(ds.spec.revisionHistoryLimit, 10)
      assert.strictEqual(ds.metadata.annotations["deprecated.daemonset.template.generation"], "1")
      const sts = yield* create({
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "s", namespace: "default" },
        spec: { selector: { matchLabels: { app: "one" } }, template }
      })
      assert.deepStrictEqual(
        [sts.spec.podManagementPolicy, sts.spec.updateStrategy, sts.spec.persistentVolumeClaimRetentionPolicy],
        ["OrderedReady", { type: "RollingUpdate", rollingUpdate: { partition: 0 } }, {
          whenDeleted: "Retain",
          whenScaled: "Retain"
        }]
      )
      const hpa = yield* create({
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "h", namespace: "default" },
        spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "d" }, maxReplicas: 5 }
      })
      assert.strictEqual(hpa.spec.minReplicas, 1)
      assert.deepStrictEqual(hpa.spec.metrics, [{
        type: "Resource",
        resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } }
      }])
      const np = yield* create({
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "n", namespace: "default" },
        spec: { podSelector: {}, egress: [{}] }
      })
      assert.deepStrictEqual(np.spec.policyTypes, ["Ingress", "Egress"])
      const vwc = yield* create({
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "v" },
        webhooks: [{
          name: "v.example.com",
          clientConfig: { service: { name: "s", namespace: "default" } },
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }]
        }]
      })
      const w = vwc.webhooks[0]
      assert.deepStrictEqual(
        [w.failurePolicy, w.matchPolicy, w.timeoutSeconds, w.rules[0].scope, w.clientConfig.service.port],
        ["Fail", "Equivalent", 10, "*", 443]
      )
    }).pipe(Effect.provide(Layer.fresh(TestCluster.layer))))
})

const Env = (delay: Duration.Input) =>
  Simulators.layerControllerManager({ podReadyDelay: delay }).pipe(Layer.provideMerge(Layer.fresh(TestCluster.layer)))

const jobPods = (cluster: TestCluster.TestCluster.Service, name: string) =>
  Effect.map(
    cluster.list({ apiVersion: "v1", kind: "Pod", namespace: "default", labelSelector: `job-name=${name}` }),
    (l) => l.items as Array<any>
  )

describe("job controller", () => {
  it.effect("parallelism 2, completions 3: Pods in waves, Succeeded after the delay, then Complete", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* create(job("work", { completions: 3, parallelism: 2 }))
      yield* settle
      const first = yield* jobPods(cluster, "work")
      assert.strictEqual(first.length, 2)
      for (const pod of first) {
        assert.match(pod.metadata.name, /^work-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
        assert.deepStrictEqual(pod.metadata.ownerReferences, [{
          apiVersion: "batch/v1",
          kind: "Job",
          name: "work",
          uid: created.metadata.uid,
          controller: true,
          blockOwnerDeletion: true
        }])
        assert.strictEqual(pod.status.phase, "Pending")
      }
      let j: any = yield* cluster.get({ apiVersion: "batch/v1", kind: "Job", namespace: "default", name: "work" })
      const startTime = j.status.startTime
      assert.deepStrictEqual(j.status, { startTime, active: 2, terminating: 0, uncountedTerminatedPods: {}, ready: 0 })

      yield* TestClock.adjust("2 seconds")
      yield* settle
      j = yield* cluster.get({ apiVersion: "batch/v1", kind: "Job", namespace: "default", name: "work" })
      assert.deepStrictEqual([j.status.active, j.status.succeeded], [1, 2])
      const done = (yield* jobPods(cluster, "work")).filter((p) => p.status.phase === "Succeeded")
      assert.strictEqual(done.length, 2)
      assert.deepStrictEqual(done[0].status.containerStatuses[0].state.terminated.reason, "Completed")

      yield* TestClock.adjust("2 seconds")
      yield* settle
      j = yield* cluster.get({ apiVersion: "batch/v1", kind: "Job", namespace: "default", name: "work" })
      const completionTime = j.status.completionTime
      assert.isString(completionTime)
      const condition = (type: string) => ({
        type,
        status: "True",
        lastProbeTime: completionTime,
        lastTransitionTime: completionTime,
        reason: "CompletionsReached",
        message: "Reached expected number of succeeded pods"
      })
      assert.deepStrictEqual(j.status, {
        startTime,
        succeeded: 3,
        terminating: 0,
        uncountedTerminatedPods: {},
        ready: 0,
        completionTime,
        conditions: [condition("SuccessCriteriaMet"), condition("Complete")]
      })
      assert.strictEqual((yield* jobPods(cluster, "work")).length, 3)
      const events = yield* cluster.list({ apiVersion: "v1", kind: "Event", namespace: "default" })
      const reasons = (events.items as Array<any>).filter((e) => e.involvedObject.kind === "Job").map((e) => e.reason)
      assert.deepStrictEqual(reasons.sort(), ["Completed", "SuccessfulCreate", "SuccessfulCreate", "SuccessfulCreate"])
    }).pipe(Effect.provide(Env("2 seconds"))))

  it.effect("Indexed: one Pod per index, completedIndexes; suspend deletes the active Pods", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      yield* create(job("idx", { completions: 3, parallelism: 3, completionMode: "Indexed" }))
      yield* settle
      const pods = yield* jobPods(cluster, "idx")
      assert.deepStrictEqual(
        pods.map((p) => p.metadata.annotations["batch.kubernetes.io/job-completion-index"]).sort(),
        ["0", "1", "2"]
      )
      assert.deepStrictEqual(pods.map((p) => p.spec.hostname).sort(), ["idx-0", "idx-1", "idx-2"])
      yield* TestClock.adjust("1 second")
      yield* settle
      const j: any = yield* cluster.get({ apiVersion: "batch/v1", kind: "Job", namespace: "default", name: "idx" })
      assert.strictEqual(j.status.completedIndexes, "0-2")
      assert.strictEqual(j.status.conditions[1].type, "Complete")

      yield* create(job("paused", { suspend: true }))
      yield* settle
      const paused: any = yield* cluster.get({
        apiVersion: "batch/v1",
        kind: "Job",
        namespace: "default",
        name: "paused"
      })
      assert.strictEqual((yield* jobPods(cluster, "paused")).length, 0)
      assert.deepStrictEqual(
        paused.status.conditions.map((c: any) => [c.type, c.status, c.reason]),
        [["Suspended", "True", "JobSuspended"]]
      )
    }).pipe(Effect.provide(Env("1 second"))))
})

const { ok } = Kubectl.make("testkit-kinds-")

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("tables", (it) => {
  it.effect("kubectl get jobs, cronjobs, ingresses, pdb, hpa print upstream's columns", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(
        server,
        ["apply", "--server-side", "-f", "-"],
        `apiVersion: batch/v1
kind: Job
metadata: {name: j1}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing}
spec:
  rules:
  - host: a.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: s, port: {number: 80}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb}
spec: {minAvailable: 1, selector: {matchLabels: {app: x}}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: hpa}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  maxReplicas: 5
`
      )
      const header = "^NAME\\s+STATUS\\s+COMPLETIONS\\s+DURATION\\s+AGE\\s+CONTAINERS\\s+IMAGES\\s+SELECTOR\\n"
      const row =
        "j1\\s+Running\\s+0/1\\s+\\d+s\\s+c\\s+busybox\\s+batch\\.kubernetes\\.io/controller-uid=[0-9a-f-]+\\n$"
      assert.match(yield* ok(server, ["get", "jobs", "-o", "wide"]), new RegExp(header + row))
      assert.match(
        yield* ok(server, ["get", "ingresses"]),
        /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\ning\s+<none>\s+a\.example\.com\s+80\s+\d+s\n$/
      )
      assert.match(
        yield* ok(server, ["get", "pdb"]),
        /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\npdb\s+1\s+N\/A\s+0\s+\d+s\n$/
      )
      assert.match(
        yield* ok(server, ["get", "hpa"]),
        new RegExp(
          "^NAME\\s+REFERENCE\\s+TARGETS\\s+MINPODS\\s+MAXPODS\\s+REPLICAS\\s+AGE\\n" +
            "hpa\\s+Deployment/d\\s+cpu: <unknown>/80%\\s+1\\s+5\\s+0\\s+\\d+s\\n$"
        )
      )
    }))
})
