/**
 * kubectl rollout status|history|undo, get pods, describe deployment, scale against TestApiServer with its
 * controller manager (Pods Ready 300 ms after creation, real time).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApiServer } from "../src/index.js"
import * as Kubectl from "./support/kubectl.js"

const { ok } = Kubectl.make({ prefix: "testkit-rollout-", timeout: 30_000 })

const manifest = (image: string, replicas = 3) =>
  `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {kubernetes.io/change-cause: "image ${image}"}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "${image}"}]}
`

layer(
  TestApiServer.layerWithCluster({ controllers: { podReadyDelay: "300 millis" } }),
  { excludeTestServices: true }
)("kubectl rollout", (it) => {
  it.effect(
    "apply → rollout status; set image → revision 2; history; undo → revision 3; scale",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* ok(server, ["apply", "-f", "-"], manifest("nginx:1.26"))
        const status = yield* ok(server, ["rollout", "status", "deployment/web", "--timeout=20s"])
        assert.match(status, /deployment "web" successfully rolled out/)

        const pods = yield* ok(server, ["get", "pods", "-l", "app=web", "-o", "json"])
        const items = JSON.parse(pods).items
        assert.strictEqual(items.length, 3)
        for (const pod of items) {
          assert.strictEqual(pod.status.phase, "Running")
          assert.strictEqual(pod.spec.nodeName, "testkit-node")
        }

        // a template change: a new ReplicaSet, the old one scaled to 0
        yield* ok(server, ["apply", "-f", "-"], manifest("nginx:1.27"))
        assert.match(
          yield* ok(server, ["rollout", "status", "deployment/web", "--timeout=20s"]),
          /deployment "web" successfully rolled out/
        )
        const rss = JSON.parse(yield* ok(server, ["get", "rs", "-l", "app=web", "-o", "json"])).items
        assert.strictEqual(rss.length, 2)
        const byRevision = new Map<string, any>(
          rss.map((rs: any) => [rs.metadata.annotations["deployment.kubernetes.io/revision"], rs])
        )
        assert.strictEqual(byRevision.get("1").spec.replicas, 0)
        assert.strictEqual(byRevision.get("2").spec.replicas, 3)
        assert.strictEqual(byRevision.get("2").spec.template.spec.containers[0].image, "nginx:1.27")

        const history = yield* ok(server, ["rollout", "history", "deployment/web"])
        assert.match(history, /REVISION\s+CHANGE-CAUSE/)
        assert.match(history, /1\s+image nginx:1\.26/)
        assert.match(history, /2\s+image nginx:1\.27/)
        const revision1 = yield* ok(server, ["rollout", "history", "deployment/web", "--revision=1"])
        assert.match(revision1, /Image:\s+nginx:1\.26/)

        // undo (client-side: patches the template from revision 1's ReplicaSet): revision 1 becomes revision 3
        assert.match(yield* ok(server, ["rollout", "undo", "deployment/web"]), /deployment.apps\/web rolled back/)
        assert.match(
          yield* ok(server, ["rollout", "status", "deployment/web", "--timeout=20s"]),
          /deployment "web" successfully rolled out/
        )
        const after = JSON.parse(yield* ok(server, ["get", "deploy", "web", "-o", "json"]))
        assert.strictEqual(after.spec.template.spec.containers[0].image, "nginx:1.26")
        assert.strictEqual(after.metadata.annotations["deployment.kubernetes.io/revision"], "3")
        const undone = yield* ok(server, ["rollout", "history", "deployment/web"])
        assert.match(undone, /2\s+image nginx:1\.27/)
        assert.match(undone, /3\s+image nginx:1\.26/)
        assert.notMatch(undone, /^1\s/m, undone)

        // describe shows the ReplicaSets and the rollout's events
        const described = yield* ok(server, ["describe", "deployment", "web"])
        assert.match(described, /Replicas:\s+3 desired \| 3 updated \| 3 total \| 3 available \| 0 unavailable/)
        assert.match(described, /StrategyType:\s+RollingUpdate/)
        assert.match(described, /RollingUpdateStrategy:\s+25% max unavailable, 25% max surge/)
        assert.match(described, /NewReplicaSet:\s+web-[a-z0-9]+ \(3\/3 replicas created\)/)
        assert.match(described, /Available\s+True\s+MinimumReplicasAvailable/)
        assert.match(described, /Progressing\s+True\s+NewReplicaSetAvailable/)

        assert.match(described, /ScalingReplicaSet\s+.*Scaled up replica set web-[a-z0-9]+ from 0 to 1/)
        const table = yield* ok(server, ["get", "pods", "-l", "app=web"])
        assert.match(table, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/)
        assert.strictEqual(table.match(/web-[a-z0-9]+-[a-z0-9]{5}\s+1\/1\s+Running\s+0\s/g)?.length, 3, table)

        // scale (the /scale subresource)
        assert.match(yield* ok(server, ["scale", "deployment", "web", "--replicas=1"]), /deployment.apps\/web scaled/)
        assert.match(
          yield* ok(server, ["rollout", "status", "deployment/web", "--timeout=20s"]),
          /successfully rolled out/
        )
        const scaled = JSON.parse(yield* ok(server, ["get", "pods", "-l", "app=web", "-o", "json"])).items
        assert.strictEqual(scaled.length, 1)

        // deleting the Deployment removes its ReplicaSets and Pods (garbage collection)
        yield* ok(server, ["delete", "deployment", "web"])
        assert.strictEqual(JSON.parse(yield* ok(server, ["get", "rs", "-o", "json"])).items.length, 0)
        assert.strictEqual(JSON.parse(yield* ok(server, ["get", "pods", "-o", "json"])).items.length, 0)
      }),
    { timeout: 60_000 }
  )
})

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })(
  "controllers: false",
  (it) => {
    it.effect("a bare server: no ReplicaSets for a Deployment", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* ok(server, ["apply", "-f", "-"], manifest("nginx:1.26", 1))
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        assert.strictEqual(JSON.parse(yield* ok(server, ["get", "rs", "-o", "json"])).items.length, 0)
      }))
  }
)
