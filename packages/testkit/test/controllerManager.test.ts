/**
 * The controller manager in-process, on TestClock: Deployments → ReplicaSets → Pods → Ready → status.
 */
import { assert, describe, it } from "@effect/vitest"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Resource from "@reconcile/kube/Resource"
import { type Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Simulators, TestCluster, TestKube } from "../src/index.js"
import { deployment, ref } from "./support/fixtures.js"

const settle = Effect.gen(function*() {
  for (let i = 0; i < 10; i++) yield* TestClock.adjust(0)
})

const Env = (delay: Duration.Input = "5 seconds") =>
  Simulators.layerControllerManager({ podReadyDelay: delay }).pipe(Layer.provideMerge(Layer.fresh(TestCluster.layer)))

const replicaSets = (cluster: TestCluster.TestCluster.Service) =>
  Effect.map(
    cluster.list({ apiVersion: "apps/v1", kind: "ReplicaSet", namespace: "default" }),
    (l) => l.items as Array<any>
  )
const pods = (cluster: TestCluster.TestCluster.Service, selector?: string) =>
  Effect.map(
    cluster.list({ apiVersion: "v1", kind: "Pod", namespace: "default", labelSelector: selector }),
    (l) => l.items as Array<any>
  )

describe("controller manager", () => {
  it.effect("create → ReplicaSet + Pods → Ready after the delay → Deployment Available", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created: any = yield* cluster.create(deployment("web", 3) as any)
      yield* settle
      const [rs] = yield* replicaSets(cluster)
      assert.isDefined(rs)
      const hash = rs.metadata.labels["pod-template-hash"]
      // the decimal digits of a 32-bit FNV-1a, each encoded by rand.SafeEncodeString (0→4 … 5→9, 6→b … 9→f)
      assert.match(hash, /^[456789bcdf]{1,10}$/)
      const digits = [...hash].map((c: string) => "456789bcdf".indexOf(c)).join("")
      assert.isBelow(Number(digits), 2 ** 32)
      assert.strictEqual(hash, Simulators.podTemplateHash(created.spec.template))
      assert.strictEqual(rs.metadata.name, `web-${hash}`)
      assert.deepStrictEqual(rs.spec.selector.matchLabels, { app: "web", "pod-template-hash": hash })
      assert.strictEqual(rs.metadata.annotations["deployment.kubernetes.io/revision"], "1")
      assert.strictEqual(rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"], "3")
      assert.strictEqual(rs.metadata.annotations["deployment.kubernetes.io/max-replicas"], "4")
      assert.deepStrictEqual(rs.metadata.ownerReferences, [{
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "web",
        uid: created.metadata.uid,
        controller: true,
        blockOwnerDeletion: true
      }])
      const pending = yield* pods(cluster)
      assert.strictEqual(pending.length, 3)
      for (const pod of pending) {
        assert.match(pod.metadata.name, new RegExp(`^web-${hash}-[bcdfghjklmnpqrstvwxz2456789]{5}$`))
        assert.strictEqual(pod.metadata.ownerReferences[0].uid, rs.metadata.uid)
        assert.strictEqual(pod.spec.nodeName, "testkit-node")
        assert.strictEqual(pod.status.phase, "Pending")
      }
      let d: any = yield* cluster.get(ref(created))
      assert.strictEqual(d.status.observedGeneration, 1)
      assert.strictEqual(d.status.replicas, 3)
      assert.strictEqual(d.status.updatedReplicas, 3)
      assert.isUndefined(d.status.readyReplicas)
      assert.strictEqual(d.status.unavailableReplicas, 3)
      assert.strictEqual(d.metadata.annotations["deployment.kubernetes.io/revision"], "1")
      assert.deepStrictEqual(
        d.status.conditions.map((c: any) => [c.type, c.status, c.reason]),
        [["Available", "False", "MinimumReplicasUnavailable"], ["Progressing", "True", "ReplicaSetUpdated"]]
      )

      yield* TestClock.adjust("4 seconds")
      assert.strictEqual((yield* pods(cluster)).filter((p) => p.status.phase === "Running").length, 0)
      yield* TestClock.adjust("1 second")
      yield* settle
      const running = yield* pods(cluster)
      for (const pod of running) {
        assert.strictEqual(pod.status.phase, "Running")
        assert.match(pod.status.podIP, /^10\.244\./)
        assert.isTrue(pod.status.containerStatuses[0].ready)
        assert.deepStrictEqual(pod.status.conditions.find((c: any) => c.type === "Ready").status, "True")
      }
      const readyRS: any = (yield* replicaSets(cluster))[0]
      assert.deepStrictEqual(readyRS.status, {
        replicas: 3,
        fullyLabeledReplicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        observedGeneration: 1
      })
      d = yield* cluster.get(ref(created))
      assert.deepStrictEqual(
        { ...d.status, conditions: undefined },
        {
          observedGeneration: 1,
          replicas: 3,
          updatedReplicas: 3,
          readyReplicas: 3,
          availableReplicas: 3,
          conditions: undefined
        }
      )
      assert.deepStrictEqual(
        d.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message]),
        [
          ["Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."],
          ["Progressing", "True", "NewReplicaSetAvailable", `ReplicaSet "web-${hash}" has successfully progressed.`]
        ]
      )
    }).pipe(Effect.provide(Env())))

  it.effect("scale up and down", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(deployment("web", 2) as any)
      yield* settle
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* pods(cluster)).length, 2)
      yield* cluster.patch(ref(created), { type: "merge", patch: { spec: { replicas: 4 } } })
      yield* settle
      assert.strictEqual((yield* replicaSets(cluster)).length, 1)
      assert.strictEqual((yield* pods(cluster)).length, 4)
      let d: any = yield* cluster.get(ref(created))
      assert.strictEqual(d.status.observedGeneration, 2)
      assert.strictEqual(d.status.readyReplicas, 2)
      yield* TestClock.adjust("1 second")
      d = yield* cluster.get(ref(created))
      assert.strictEqual(d.status.availableReplicas, 4)
      yield* cluster.patch(ref(created), { type: "merge", patch: { spec: { replicas: 1 } } })
      yield* settle
      assert.strictEqual((yield* pods(cluster)).length, 1)
      const [rs] = yield* replicaSets(cluster)
      assert.strictEqual(rs.spec.replicas, 1)
      assert.strictEqual(rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"], "1")
      d = yield* cluster.get(ref(created))
      assert.deepStrictEqual([d.status.replicas, d.status.availableReplicas, d.status.observedGeneration], [1, 1, 3])
    }).pipe(Effect.provide(Env("1 second"))))

  it.effect("template change: a new ReplicaSet (revision 2), rolled within maxSurge/maxUnavailable; rollback", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(deployment("web", 4) as any)
      yield* settle
      yield* TestClock.adjust("1 second")
      const [first] = yield* replicaSets(cluster)
      yield* cluster.patch(ref(created), {
        type: "json",
        patch: [{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "nginx:2" }]
      })
      yield* settle
      // 25% of 4: one Pod over 4 (surge), one under (unavailable): new 1, old 4 → 3, new 2 — 5 Pods, 3 available
      let all = yield* replicaSets(cluster)
      assert.strictEqual(all.length, 2)
      const second = all.find((rs) => rs.metadata.uid !== first.metadata.uid)
      assert.strictEqual(second.metadata.annotations["deployment.kubernetes.io/revision"], "2")
      assert.strictEqual(second.spec.replicas, 2)
      assert.strictEqual(all.find((rs) => rs.metadata.uid === first.metadata.uid).spec.replicas, 3)
      assert.strictEqual((yield* pods(cluster)).length, 5)
      let d: any = yield* cluster.get(ref(created))
      assert.strictEqual(d.status.updatedReplicas, 2)
      assert.strictEqual(d.status.replicas, 5)
      assert.strictEqual(d.status.availableReplicas, 3)
      assert.strictEqual(d.status.conditions[1].reason, "ReplicaSetUpdated")
      assert.strictEqual(d.metadata.annotations["deployment.kubernetes.io/revision"], "2")
      // every second one more new Pod is Ready, one old goes
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("1 second")
      all = yield* replicaSets(cluster)
      assert.deepStrictEqual(
        all.map((rs) => [rs.metadata.annotations["deployment.kubernetes.io/revision"], rs.spec.replicas]).sort(),
        [["1", 0], ["2", 4]]
      )
      const running = yield* pods(cluster)
      assert.strictEqual(running.length, 4)
      assert.isTrue(running.every((p) => p.spec.containers[0].image === "nginx:2" && p.status.phase === "Running"))
      d = yield* cluster.get(ref(created))
      assert.deepStrictEqual(
        [d.status.replicas, d.status.updatedReplicas, d.status.availableReplicas, d.status.unavailableReplicas],
        [4, 4, 4, undefined]
      )
      assert.strictEqual(d.status.conditions[1].reason, "NewReplicaSetAvailable")

      // kubectl rollout undo: the template of revision 1 (without its hash label) patched back
      const template = structuredClone(first.spec.template)
      delete template.metadata.labels["pod-template-hash"]
      yield* cluster.patch(ref(created), {
        type: "json",
        patch: [{ op: "replace", path: "/spec/template", value: template }]
      })
      yield* settle
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("1 second")
      all = yield* replicaSets(cluster)
      assert.strictEqual(all.length, 2)
      const back = all.find((rs) => rs.metadata.uid === first.metadata.uid)
      assert.strictEqual(back.metadata.annotations["deployment.kubernetes.io/revision"], "3")
      assert.strictEqual(back.metadata.annotations["deployment.kubernetes.io/revision-history"], "1")
      assert.strictEqual(back.spec.replicas, 4)
      d = yield* cluster.get(ref(created))
      assert.strictEqual(d.metadata.annotations["deployment.kubernetes.io/revision"], "3")
      assert.strictEqual(d.status.updatedReplicas, 4)
    }).pipe(Effect.provide(Env("1 second"))))

  it.effect("minReadySeconds: Ready Pods count as available only after it", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const base = deployment("web", 2)
      const created = yield* cluster.create({ ...base, spec: { ...base.spec, minReadySeconds: 10 } } as any)
      yield* settle
      yield* TestClock.adjust("1 second")
      let d: any = yield* cluster.get(ref(created))
      assert.deepStrictEqual([d.status.readyReplicas, d.status.availableReplicas], [2, undefined])
      assert.strictEqual((yield* replicaSets(cluster))[0].spec.minReadySeconds, 10)
      yield* TestClock.adjust("9 seconds")
      d = yield* cluster.get(ref(created))
      assert.deepStrictEqual([d.status.readyReplicas, d.status.availableReplicas], [2, undefined])
      yield* TestClock.adjust("1 second") // Ready at 1 s, available at 11 s
      d = yield* cluster.get(ref(created))
      assert.deepStrictEqual([d.status.readyReplicas, d.status.availableReplicas], [2, 2])
      assert.strictEqual(d.status.conditions[0].status, "True")
    }).pipe(Effect.provide(Env("1 second"))))

  it.effect("Recreate: the old Pods go before new ones are created", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(deployment("web", 2, { spec: {} }) as any)
      yield* cluster.patch(ref(created), {
        type: "merge",
        patch: { spec: { strategy: { type: "Recreate", rollingUpdate: null } } }
      })
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* cluster.patch(ref(created), {
        type: "json",
        patch: [{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "nginx:2" }]
      })
      yield* settle
      const now = yield* pods(cluster)
      assert.strictEqual(now.length, 2)
      assert.isTrue(now.every((p) => p.spec.containers[0].image === "nginx:2"))
      const d: any = yield* cluster.get(ref(created))
      assert.strictEqual(d.status.conditions[0].status, "False")
    }).pipe(Effect.provide(Env("1 second"))))

  it.effect("standalone ReplicaSets and Pods run too; deleting the Deployment collects its ReplicaSets and Pods", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "solo", namespace: "default" },
        spec: { containers: [{ name: "c", image: "busybox" }] }
      })
      yield* cluster.create({
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: "rs", namespace: "default" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "rs" } },
          template: { metadata: { labels: { app: "rs" } }, spec: { containers: [{ name: "c", image: "busybox" }] } }
        }
      })
      const created = yield* cluster.create(deployment("web", 2) as any)
      yield* settle
      yield* TestClock.adjust("1 second")
      const solo: any = yield* cluster.get({ apiVersion: "v1", kind: "Pod", namespace: "default", name: "solo" })
      assert.strictEqual(solo.status.phase, "Running")
      assert.strictEqual(solo.spec.nodeName, "testkit-node")
      assert.strictEqual((yield* pods(cluster, "app=rs")).length, 2)
      const rs: any = yield* cluster.get({
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        namespace: "default",
        name: "rs"
      })
      assert.strictEqual(rs.status.readyReplicas, 2)
      yield* cluster.delete(ref(created))
      yield* settle
      assert.strictEqual((yield* pods(cluster, "app=web")).length, 0)
      assert.strictEqual((yield* replicaSets(cluster)).length, 1)
    }).pipe(Effect.provide(Env("1 second"))))
})

const replicaSet = (name: string, replicas: number) => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name, namespace: "default" },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "busybox" }] } }
  }
})

const controlledBy = (pods: ReadonlyArray<any>, owner: any) =>
  pods.filter((p) => p.metadata.ownerReferences?.find((o: any) => o.controller === true)?.uid === owner.metadata.uid)

describe("controller manager: a ReplicaSet's Pods are those it controls now", () => {
  it.effect("a Pod whose controller changes counts for its new ReplicaSet, which scales down; the old one replaces it", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const a: any = yield* cluster.create(replicaSet("a", 2) as any)
      const b: any = yield* cluster.create(replicaSet("b", 1) as any)
      yield* settle
      const moved = controlledBy(yield* pods(cluster), a)[0]
      yield* cluster.patch(ref(moved), {
        type: "merge",
        patch: {
          metadata: {
            ownerReferences: [{
              apiVersion: "apps/v1",
              kind: "ReplicaSet",
              name: "b",
              uid: b.metadata.uid,
              controller: true
            }]
          }
        }
      })
      yield* settle
      // b synced (the Pod's new controller): two Pods, one goes
      assert.strictEqual(controlledBy(yield* pods(cluster), b).length, 1)
      // a is synced on its next change (as before: a Pod's change syncs its new controller only)
      yield* cluster.patch(ref(a), { type: "merge", patch: { metadata: { labels: { touched: "yes" } } } })
      yield* settle
      const now = yield* pods(cluster)
      assert.strictEqual(controlledBy(now, a).length, 2)
      assert.strictEqual(controlledBy(now, b).length, 1)
      assert.notInclude(controlledBy(now, a).map((p) => p.metadata.name), moved.metadata.name)
      assert.strictEqual(now.length, 3)
      const rs = (name: string) =>
        cluster.get({ apiVersion: "apps/v1", kind: "ReplicaSet", namespace: "default", name })
      assert.strictEqual(((yield* rs("a")) as any).status.replicas, 2)
      assert.strictEqual(((yield* rs("b")) as any).status.replicas, 1)
    }).pipe(Effect.provide(Env("1 second"))))

  it.effect("a Pod being deleted (held by a finalizer) no longer counts: a replacement is created", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const a: any = yield* cluster.create(replicaSet("a", 2) as any)
      yield* settle
      const held = (yield* pods(cluster))[0]
      yield* cluster.patch(ref(held), { type: "merge", patch: { metadata: { finalizers: ["example.com/hold"] } } })
      yield* cluster.delete(ref(held))
      yield* settle
      const now = yield* pods(cluster)
      assert.strictEqual(controlledBy(now, a).length, 3)
      assert.strictEqual(now.filter((p) => p.metadata.deletionTimestamp === undefined).length, 2)
      const rs: any = yield* cluster.get({ apiVersion: "apps/v1", kind: "ReplicaSet", namespace: "default", name: "a" })
      assert.strictEqual(rs.status.replicas, 2)
    }).pipe(Effect.provide(Env("1 second"))))
})

describe("controller manager under kube's KubeClient (TestKube)", () => {
  it.effect("a Deployment created through KubeClient is Available once its Pods' delay has passed", () =>
    Effect.gen(function*() {
      yield* KubeClient.create(Resource.Deployment, deployment("api", 2) as Resource.Deployment)
      yield* TestKube.settle
      const pods = yield* KubeClient.list(Resource.Pod, { namespace: "default", labelSelector: "app=api" })
      assert.deepStrictEqual(pods.items.map((p) => p.status?.phase), ["Pending", "Pending"])
      yield* TestClock.adjust("2 seconds")
      const d = yield* KubeClient.get(Resource.Deployment, "api", { namespace: "default" })
      assert.strictEqual(d.status?.availableReplicas, 2)
      assert.strictEqual(d.status?.conditions?.find((c) => c.type === "Available")?.status, "True")
    }).pipe(
      Effect.provide(
        Simulators.layerControllerManager({ podReadyDelay: "2 seconds" }).pipe(
          Layer.provideMerge(TestKube.layerWithCluster())
        )
      )
    ))
})

describe("workload defaults", () => {
  it.effect("Deployment, ReplicaSet template and Pod defaults as kube-apiserver's", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const d: any = yield* cluster.create(deployment("web", 1, {}) as any)
      const { template, ...spec } = d.spec
      assert.deepStrictEqual(spec, {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600
      })
      assert.deepStrictEqual(template.spec, {
        containers: [{
          name: "app",
          image: "nginx:1",
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          imagePullPolicy: "IfNotPresent",
          resources: {}
        }],
        dnsPolicy: "ClusterFirst",
        restartPolicy: "Always",
        terminationGracePeriodSeconds: 30,
        securityContext: {},
        schedulerName: "default-scheduler"
      })
      const pod: any = yield* cluster.create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p", namespace: "default" },
        spec: {
          containers: [
            { name: "a", image: "nginx", ports: [{ containerPort: 80 }] },
            { name: "b", image: "registry:5000/x/y:latest" },
            { name: "c", image: "x@sha256:abc" }
          ]
        }
      })
      assert.deepStrictEqual(pod.spec.containers.map((c: any) => c.imagePullPolicy), [
        "Always",
        "Always",
        "IfNotPresent"
      ])
      assert.strictEqual(pod.spec.containers[0].ports[0].protocol, "TCP")
      assert.strictEqual(pod.spec.enableServiceLinks, true)
      assert.strictEqual(pod.spec.serviceAccountName, "default")
      assert.strictEqual(pod.spec.priority, 0)
      assert.deepStrictEqual(pod.spec.tolerations.map((t: any) => t.key), [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable"
      ])
      const recreate: any = yield* cluster.create(
        { ...deployment("re", 1), spec: { ...deployment("re", 1).spec, strategy: { type: "Recreate" } } } as any
      )
      assert.deepStrictEqual(recreate.spec.strategy, { type: "Recreate" })
    }).pipe(Effect.provide(Layer.fresh(TestCluster.layer))))
})
