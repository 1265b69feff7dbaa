/**
 * Server-side apply of a configuration holding fields its schema does not declare (refused as kube-apiserver
 * refuses it, whatever `fieldValidation` says), managedFields never naming a pruned field, and the 406 a client
 * taking protobuf only gets for an object that cannot be protobuf. Over HTTPS (kubectl, client-node, raw requests)
 * and in-process through `TestCluster`.
 */
import { assert, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { TestApiServer, TestCluster } from "../src/index.js"
import { decodeObject } from "../src/internal/protobuf/envelope.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Fixtures from "./support/fixtures.js"
import { PROTO, type Reply, request } from "./support/https.js"
import * as Kubectl from "./support/kubectl.js"

const { run: kubectl } = Kubectl.make("testkit-applyunknown-")

const json = (reply: Reply): Record<string, unknown> => JSON.parse(reply.body.toString("utf8"))

const crd = Fixtures.crd("Namespaced", false, "widgets", {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        size: { type: "integer" },
        extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true }
      }
    }
  }
})

const widget = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name, namespace: "default" },
  spec
})

const configMap = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", ...metadata },
  data: { a: "1" }
})

const deployment = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
    ...spec
  }
})

const refusal = (ns: string, name: string, gvk: string, path: string) =>
  `failed to create typed patch object (${ns}/${name}; ${gvk}): ${path}: field not declared in schema`

/** Every `f:<name>` key of a managedFields entry's fieldsV1, flattened. */
const ownedKeys = (object: unknown): Array<string> => {
  const out: Array<string> = []
  const walk = (v: unknown) => {
    if (typeof v !== "object" || v === null) return
    for (const [k, c] of Object.entries(v)) {
      out.push(k)
      walk(c)
    }
  }
  const entries = (object as { metadata?: { managedFields?: Array<{ fieldsV1?: unknown }> } }).metadata
    ?.managedFields ?? []
  for (const e of entries) walk(e.fieldsV1)
  return out
}

const APPLY = "application/apply-patch+yaml"

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })(
  "apply of undeclared fields over HTTPS",
  (it) => {
    it.effect("kubectl apply --server-side: a custom resource and built-ins with an undeclared field are refused", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const crdRun = yield* kubectl(server, ["apply", "-f", "-"], JSON.stringify(crd))
        assert.strictEqual(crdRun.code, 0, crdRun.stderr)

        const cr = yield* kubectl(
          server,
          ["apply", "--server-side", "-f", "-"],
          JSON.stringify(widget("w1", { size: 1, foo: "x" }))
        )
        assert.notStrictEqual(cr.code, 0)
        assert.strictEqual(
          cr.stderr.trim(),
          `Error from server: ${refusal("default", "w1", "example.com/v1, Kind=Widget", ".spec.foo")}`
        )
        const missing = yield* kubectl(server, ["get", "widget", "w1", "-n", "default"])
        assert.notStrictEqual(missing.code, 0)

        const cm = yield* kubectl(
          server,
          ["apply", "--server-side", "-f", "-"],
          JSON.stringify(configMap("cm1", { colour: "blue" }))
        )
        assert.notStrictEqual(cm.code, 0)
        assert.strictEqual(
          cm.stderr.trim(),
          `Error from server: ${refusal("default", "cm1", "/v1, Kind=ConfigMap", ".metadata.colour")}`
        )

        const deploy = yield* kubectl(
          server,
          ["apply", "--server-side", "-f", "-"],
          JSON.stringify(deployment("d1", { foo: 1 }))
        )
        assert.notStrictEqual(deploy.code, 0)
        assert.strictEqual(
          deploy.stderr.trim(),
          `Error from server: ${refusal("default", "d1", "apps/v1, Kind=Deployment", ".spec.foo")}`
        )

        // declared fields (and anything under preserve-unknown-fields) apply
        const good = yield* kubectl(
          server,
          ["apply", "--server-side", "-f", "-"],
          JSON.stringify(widget("w2", { size: 2, extra: { anything: { goes: true } } }))
        )
        assert.strictEqual(good.code, 0, good.stderr)
      }))

    it.effect("raw apply: 500 with no reason under every fieldValidation; nothing stored; several fields listed", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* kubectl(server, ["apply", "-f", "-"], JSON.stringify(crd))
        for (const directive of ["Strict", "Warn", "Ignore"]) {
          const reply = yield* request(
            server,
            "PATCH",
            `/apis/apps/v1/namespaces/default/deployments/raw?fieldManager=m&fieldValidation=${directive}`,
            { "content-type": APPLY, accept: "application/json" },
            JSON.stringify(deployment("raw", { foo: 1 }))
          )
          assert.strictEqual(reply.status, 500, directive)
          const status = json(reply)
          assert.strictEqual(status.kind, "Status")
          assert.strictEqual(status.status, "Failure")
          assert.strictEqual(status.code, 500)
          assert.isFalse("reason" in status)
          assert.strictEqual(status.message, refusal("default", "raw", "apps/v1, Kind=Deployment", ".spec.foo"))
        }
        const get = yield* request(server, "GET", "/apis/apps/v1/namespaces/default/deployments/raw", {})
        assert.strictEqual(get.status, 404)

        // two objects with an undeclared field each: structured-merge-diff lists both under "errors:"
        const two = yield* request(
          server,
          "PATCH",
          `/apis/example.com/v1/namespaces/default/widgets/w3?fieldManager=m`,
          { "content-type": APPLY },
          JSON.stringify({ ...widget("w3", { size: 1, foo: 1 }), metadata: { name: "w3", colour: "red" } })
        )
        assert.strictEqual(two.status, 500)
        const message = String(json(two).message)
        assert.isTrue(
          message.startsWith("failed to create typed patch object (/w3; example.com/v1, Kind=Widget): errors:\n")
        )
        assert.include(message, "\n  .spec.foo: field not declared in schema")
        assert.include(message, "\n  .metadata.colour: field not declared in schema")

        // an existing object: the refusal leaves it (and its managedFields) as they were
        const cm = yield* request(
          server,
          "PATCH",
          `/api/v1/namespaces/default/configmaps/kept?fieldManager=m`,
          { "content-type": APPLY },
          JSON.stringify(configMap("kept"))
        )
        assert.strictEqual(cm.status, 201)
        const again = yield* request(
          server,
          "PATCH",
          `/api/v1/namespaces/default/configmaps/kept?fieldManager=m`,
          { "content-type": APPLY },
          JSON.stringify({ ...configMap("kept"), data: { a: "2" }, binaryData: undefined, colour: "x" })
        )
        assert.strictEqual(again.status, 500)
        assert.strictEqual(json(again).message, refusal("default", "kept", "/v1, Kind=ConfigMap", ".colour"))
        const kept = json(yield* request(server, "GET", "/api/v1/namespaces/default/configmaps/kept", {}))
        assert.deepStrictEqual(kept.data, { a: "1" })
      }))

    it.effect("client-node: apply refused with the same Status; create and update with fieldValidation=Ignore prune", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* kubectl(server, ["apply", "-f", "-"], JSON.stringify(crd))
        const kc = new k8s.KubeConfig()
        kc.loadFromFile(server.kubeconfigPath)
        const api = k8s.KubernetesObjectApi.makeApiClient(kc)
        const error = yield* Effect.flip(Effect.tryPromise(() =>
          api.patch(
            widget("cn", { size: 1, foo: "x" }),
            undefined,
            undefined,
            "client-node",
            undefined,
            k8s.PatchStrategy.ServerSideApply
          )
        ))
        const cause = error.cause as { code?: number; body?: string }
        assert.strictEqual(cause.code, 500)
        assert.strictEqual(
          JSON.parse(String(cause.body)).message,
          refusal("default", "cn", "example.com/v1, Kind=Widget", ".spec.foo")
        )

        // create and update keep their fieldValidation: Ignore prunes silently — and managedFields never list it
        const created = yield* request(
          server,
          "POST",
          "/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Ignore&fieldManager=m",
          { "content-type": "application/json" },
          JSON.stringify(widget("pruned", { size: 1, foo: "x" }))
        )
        assert.strictEqual(created.status, 201)
        assert.deepStrictEqual(json(created).spec, { size: 1 })
        assert.notInclude(ownedKeys(json(created)), "f:foo")
        const updated = yield* request(
          server,
          "PUT",
          "/apis/example.com/v1/namespaces/default/widgets/pruned?fieldValidation=Ignore&fieldManager=other",
          { "content-type": "application/json" },
          // a custom resource's update must name the resourceVersion it replaces (422 without, as upstream)
          JSON.stringify({
            ...widget("pruned", { size: 2, bar: "y" }),
            metadata: {
              name: "pruned",
              namespace: "default",
              resourceVersion: (json(created).metadata as { resourceVersion: string }).resourceVersion
            }
          })
        )
        assert.strictEqual(updated.status, 200)
        assert.deepStrictEqual(json(updated).spec, { size: 2 })
        assert.notInclude(ownedKeys(json(updated)), "f:bar")
        const cm = yield* request(
          server,
          "POST",
          "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore&fieldManager=m",
          { "content-type": "application/json" },
          JSON.stringify(configMap("cm-pruned", { colour: "blue" }))
        )
        assert.strictEqual(cm.status, 201)
        assert.isUndefined((json(cm).metadata as Record<string, unknown>).colour)
        assert.notInclude(ownedKeys(json(cm)), "f:colour")
      }))

    it.effect("Accept: protobuf only — 406 NotAcceptable for custom resources; JSON when JSON is also accepted", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* kubectl(server, ["apply", "-f", "-"], JSON.stringify(crd))
        yield* request(
          server,
          "PATCH",
          "/apis/example.com/v1/namespaces/default/widgets/p1?fieldManager=m",
          { "content-type": APPLY },
          JSON.stringify(widget("p1", { size: 1 }))
        )
        const one = yield* request(server, "GET", "/apis/example.com/v1/namespaces/default/widgets/p1", {
          accept: PROTO
        })
        assert.strictEqual(one.status, 406)
        assert.strictEqual(one.contentType, PROTO)
        const status = decodeObject(one.body) as Record<string, unknown>
        assert.strictEqual(status.kind, "Status")
        assert.strictEqual(status.code, 406)
        assert.strictEqual(status.reason, "NotAcceptable")
        assert.strictEqual(
          status.message,
          "object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be " +
            "encoded to a protobuf message"
        )

        const list = yield* request(server, "GET", "/apis/example.com/v1/namespaces/default/widgets", { accept: PROTO })
        assert.strictEqual(list.status, 406)
        assert.include(
          String((decodeObject(list.body) as Record<string, unknown>).message),
          "*unstructured.UnstructuredList"
        )

        // a write is made before the answer is refused, as upstream (the encoder runs after the storage)
        const created = yield* request(
          server,
          "POST",
          "/apis/example.com/v1/namespaces/default/widgets",
          { "content-type": "application/json", accept: PROTO },
          JSON.stringify(widget("p2", { size: 1 }))
        )
        assert.strictEqual(created.status, 406)

        for (const accept of [`${PROTO}, application/json`, `${PROTO}, */*`]) {
          const reply = yield* request(server, "GET", "/apis/example.com/v1/namespaces/default/widgets/p1", { accept })
          assert.strictEqual(reply.status, 200, accept)
          assert.strictEqual(reply.contentType, "application/json")
          assert.deepStrictEqual(json(reply).spec, { size: 1 })
        }

        // a built-in kind the table holds still answers protobuf; errors stay Statuses (protobuf) as before
        const ns = yield* request(server, "GET", "/api/v1/namespaces/default", { accept: PROTO })
        assert.strictEqual(ns.status, 200)
        assert.strictEqual(ns.contentType, PROTO)
        const gone = yield* request(server, "GET", "/apis/example.com/v1/namespaces/default/widgets/nope", {
          accept: PROTO
        })
        assert.strictEqual(gone.status, 404)
        assert.strictEqual((decodeObject(gone.body) as Record<string, unknown>).reason, "NotFound")
      }))
  }
)

layer(TestCluster.layer, { excludeTestServices: true })("apply of undeclared fields in-process (TestCluster)", (it) => {
  it.effect("the same refusals; Ignore-level creates are pruned with managedFields to match", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create(crd as unknown as KubeObject)
      const cr = yield* Effect.flip(
        cluster.apply(widget("w1", { size: 1, foo: "x" }) as unknown as KubeObject, { fieldManager: "m" })
      )
      assert.strictEqual(cr.status.code, 500)
      assert.strictEqual(cr.status.message, refusal("default", "w1", "example.com/v1, Kind=Widget", ".spec.foo"))
      const cm = yield* Effect.flip(
        cluster.apply(configMap("cm1", { colour: "blue" }) as unknown as KubeObject, { fieldManager: "m" })
      )
      assert.strictEqual(cm.status.message, refusal("default", "cm1", "/v1, Kind=ConfigMap", ".metadata.colour"))
      const deploy = yield* Effect.flip(
        cluster.apply(deployment("d1", { foo: 1 }) as unknown as KubeObject, { fieldManager: "m" })
      )
      assert.strictEqual(deploy.status.message, refusal("default", "d1", "apps/v1, Kind=Deployment", ".spec.foo"))
      // list items are named as structured-merge-diff names them: by their keys in associative lists
      const container = deployment("d2")
      const template = container.spec.template as { spec: { containers: Array<Record<string, unknown>> } }
      template.spec.containers[0]!.bar = true
      template.spec.containers[0]!.ports = [{ containerPort: 80, colour: "red" }]
      const nested = yield* Effect.flip(cluster.apply(container as unknown as KubeObject, { fieldManager: "m" }))
      assert.strictEqual(
        nested.status.message,
        "failed to create typed patch object (default/d2; apps/v1, Kind=Deployment): errors:\n" +
          "  .spec.template.spec.containers[name=\"web\"].bar: field not declared in schema\n" +
          "  .spec.template.spec.containers[name=\"web\"].ports[containerPort=80,protocol=\"TCP\"].colour: field not " +
          "declared in schema"
      )

      const applied = yield* cluster.apply(
        widget("w2", { size: 2, extra: { free: 1 } }) as unknown as KubeObject,
        { fieldManager: "m" }
      )
      assert.deepStrictEqual(applied.spec, { size: 2, extra: { free: 1 } })
      assert.include(ownedKeys(applied), "f:free")

      const created = yield* cluster.create(widget("pruned", { size: 1, foo: "x" }) as unknown as KubeObject)
      assert.deepStrictEqual(created.spec, { size: 1 })
      assert.notInclude(ownedKeys(created), "f:foo")
    }))
})
