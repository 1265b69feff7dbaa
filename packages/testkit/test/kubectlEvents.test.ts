/**
 * Events recorded by our EventRecorder (packages/kube, events.k8s.io/v1 through KubeClient over HTTPS) as kubectl
 * shows them: `describe` (core/v1 list with involvedObject field selectors, uid included), `kubectl events --for`,
 * `get events --field-selector`; and `get pods --field-selector status.phase=…`.
 */
import { assert, layer } from "@effect/vitest"
import * as EventRecorder from "@reconcile/kube/EventRecorder"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import { Effect, Layer } from "effect"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Fixtures from "./support/fixtures.js"
import * as Kubectl from "./support/kubectl.js"

const { ok, run: kubectl } = Kubectl.make("testkit-kubectl-events-")
const NS = "kev"

const manifests = [
  Fixtures.crd(),
  { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }
]

/** Records through our EventRecorder, over HTTPS, with the server's kubeconfig. */
const record = (
  server: TestApiServer.TestApiServer.Service,
  object: KubeObject,
  event: EventRecorder.Event
) =>
  Effect.gen(function*() {
    const recorder = yield* EventRecorder.make({ controller: "example.com/webapp-controller", instance: "op-0" })
    yield* recorder.record(object, event)
  }).pipe(Effect.provide(KubeClient.layer.pipe(Layer.provide(Kube.layerFromFile(server.kubeconfigPath)))))

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("kubectl events", (it) => {
  it.effect("setup: a CRD, a namespace, a WebApp and a ConfigMap with events from our EventRecorder", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const cluster = yield* TestCluster.TestCluster
      yield* ok(server, ["create", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: manifests }))
      yield* ok(server, ["wait", "--for=condition=Established", "crd/webapps.example.com", "--timeout=10s"])
      const app = yield* cluster.create({
        apiVersion: "example.com/v1",
        kind: "WebApp",
        metadata: { name: "sample", namespace: NS },
        spec: { replicas: 2, image: "nginx:1.27" }
      } as KubeObject)
      const cfg = yield* cluster.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "cfg", namespace: NS },
        data: { a: "1" }
      } as KubeObject)
      yield* record(server, app, {
        type: "Normal",
        reason: "Ready",
        action: "Reconcile",
        note: "2/2 replicas of nginx:1.27 ready"
      })
      yield* record(server, cfg, { type: "Warning", reason: "BadKey", action: "Validate", note: "key a is odd" })
      const events = yield* cluster.list({ apiVersion: "v1", kind: "Event", namespace: NS })
      assert.strictEqual(events.items.length, 2)
    }))

  it.effect("describe shows the Events section (core/v1 list by involvedObject name, namespace, kind, uid)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const app = yield* ok(server, ["describe", "webapp", "sample", "-n", NS])
      assert.match(
        app,
        /\nEvents:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n\s+----\s+------\s+----\s+----\s+-------\n/
      )
      assert.match(
        app,
        /\n\s+Normal\s+Ready\s+\d+s\s+example\.com\/webapp-controller\s+2\/2 replicas of nginx:1\.27 ready\n/
      )
      assert.notInclude(app, "BadKey")
      const cfg = yield* ok(server, ["describe", "configmap", "cfg", "-n", NS])
      assert.match(cfg, /\n\s+Warning\s+BadKey\s+\d+s\s+example\.com\/webapp-controller\s+key a is odd\n/)
      assert.notInclude(cfg, "Events:  <none>")
    }))

  it.effect("kubectl events --for kind/name", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const app = yield* ok(server, ["events", "--for", "webapp/sample", "-n", NS])
      assert.match(app, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/)
      assert.match(app, /\n\d+s\s+Normal\s+Ready\s+WebApp\/sample\s+2\/2 replicas of nginx:1\.27 ready\n$/)
      const cfg = yield* ok(server, ["events", "--for", "configmap/cfg", "-n", NS, "--types", "Warning"])
      assert.match(cfg, /\n\d+s\s+Warning\s+BadKey\s+ConfigMap\/cfg\s+key a is odd\n$/)
      const all = yield* ok(server, ["events", "-n", NS, "-o", "json"])
      const items = JSON.parse(all).items as Array<{ readonly reason: string }>
      assert.deepStrictEqual(items.map((e) => e.reason).sort(), ["BadKey", "Ready"])
    }))

  it.effect("get events with field selectors (core/v1 and events.k8s.io/v1)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const reasons = (args: ReadonlyArray<string>) =>
        Effect.map(ok(server, ["get", ...args, "-n", NS, "-o", "jsonpath={.items[*].reason}"]), (s) => s.trim())
      assert.strictEqual(yield* reasons(["events", "--field-selector", "involvedObject.kind=WebApp"]), "Ready")
      assert.strictEqual(yield* reasons(["events", "--field-selector", "involvedObject.kind=ConfigMap"]), "BadKey")
      assert.strictEqual(yield* reasons(["events", "--field-selector", "type=Warning,reason=BadKey"]), "BadKey")
      assert.strictEqual(
        yield* reasons(["events.events.k8s.io", "--field-selector", "regarding.name=sample"]),
        "Ready"
      )
      const notes = yield* ok(server, [
        "get",
        "events.v1.events.k8s.io",
        "-n",
        NS,
        "--field-selector",
        "reportingController=example.com/webapp-controller",
        "-o",
        "jsonpath={.items[*].note}"
      ])
      assert.strictEqual(notes, "key a is odd 2/2 replicas of nginx:1.27 ready")
      const bad = yield* kubectl(server, ["get", "events", "-n", NS, "--field-selector", "regarding.kind=WebApp"])
      assert.strictEqual(bad.code, 1)
      assert.include(bad.stderr, "field label not supported: regarding.kind")
    }))

  it.effect("get pods --field-selector status.phase=Running, spec.nodeName", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const cluster = yield* TestCluster.TestCluster
      for (const [name, phase] of [["a", "Running"], ["b", "Pending"], ["c", "Running"]] as const) {
        const pod = yield* cluster.create({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, namespace: NS },
          spec: { containers: [{ name: "app", image: "nginx:1.27" }], nodeName: phase === "Running" ? "n1" : "" }
        } as KubeObject)
        yield* cluster.updateStatus({ ...pod, status: { phase } } as KubeObject)
      }
      const names = (selector: string) =>
        ok(server, ["get", "pods", "-n", NS, "--field-selector", selector, "-o", "name"])
      assert.strictEqual(yield* names("status.phase=Running"), "pod/a\npod/c\n")
      assert.strictEqual(yield* names("status.phase!=Running"), "pod/b\n")
      assert.strictEqual(yield* names("spec.nodeName=n1,metadata.name!=a"), "pod/c\n")
      const none = yield* kubectl(server, ["get", "pods", "-n", NS, "--field-selector", "status.phase=Failed"])
      assert.strictEqual(none.code, 0)
      assert.include(none.stderr, `No resources found in ${NS} namespace.`)
      const bad = yield* kubectl(server, ["get", "pods", "-n", NS, "--field-selector", "spec.image=x"])
      assert.strictEqual(bad.code, 1)
      assert.include(bad.stderr, "field label not supported: spec.image")
    }))
})
