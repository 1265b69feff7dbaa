/**
 * Custom resources validated against their CRD's `openAPIV3Schema` over HTTPS, seen by real clients: kubectl
 * (the 422 text it prints, pruning and defaulting of what it stores) and client-node (the Status body with one
 * cause per field); the same requests in-process through `TestCluster`.
 */
import { assert, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Fixtures from "./support/fixtures.js"
import * as Kubectl from "./support/kubectl.js"

const { ok, run: kubectl } = Kubectl.make("testkit-crdvalidation-")

const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      required: ["image"],
      properties: {
        image: { type: "string" },
        replicas: { type: "integer", minimum: 1, maximum: 5, default: 1 },
        tier: { type: "string", enum: ["web", "worker"], default: "web" },
        port: { "x-kubernetes-int-or-string": true }
      }
    },
    status: { type: "object", properties: { ready: { type: "boolean" } } }
  }
}

const crd = Fixtures.crd("Namespaced", true, "webapps", schema)

const gadgetCrd = Fixtures.crd("Namespaced", false, "gadgets", {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        id: {
          type: "string",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "id is immutable" }]
        },
        min: { type: "integer" },
        max: { type: "integer" }
      },
      "x-kubernetes-validations": [{
        rule: "self.min <= self.max",
        messageExpression: "'min (' + string(self.min) + ') must not exceed max (' + string(self.max) + ')'"
      }]
    }
  }
})

const webapp = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: "example.com/v1", kind: "WebApp", metadata: { name, namespace: "default" }, spec })

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("CRD validation over HTTPS", (it) => {
  it.effect("kubectl: an invalid custom resource prints the server's 422; a valid one is stored pruned, defaulted", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["apply", "-f", "-"], JSON.stringify(crd))

      const three = yield* kubectl(
        server,
        ["apply", "-f", "-"],
        webapp("sample", { image: "nginx", replicas: "three" })
      )
      assert.notStrictEqual(three.code, 0)
      assert.strictEqual(
        three.stderr.trim(),
        "The WebApp \"sample\" is invalid: spec.replicas: Invalid value: \"string\": spec.replicas in body must be of " +
          "type integer: \"string\""
      )

      const several = yield* kubectl(
        server,
        ["create", "-f", "-"],
        webapp("several", { replicas: 9, tier: "db", port: 80 })
      )
      assert.notStrictEqual(several.code, 0)
      const lines = several.stderr.trim().split("\n")
      assert.strictEqual(lines[0], "The WebApp \"several\" is invalid: ")
      assert.deepStrictEqual(lines.slice(1).sort(), [
        "* spec.image: Required value",
        "* spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5",
        "* spec.tier: Unsupported value: \"db\": supported values: \"web\", \"worker\""
      ])

      yield* ok(
        server,
        ["create", "--validate=false", "-f", "-"],
        webapp("good", { image: "nginx", extra: "dropped", port: "http" })
      )
      const stored = JSON.parse(yield* ok(server, ["get", "webapp", "good", "-o", "json"]))
      assert.deepStrictEqual(stored.spec, { image: "nginx", replicas: 1, tier: "web", port: "http" })

      const strict = yield* kubectl(
        server,
        ["create", "--validate=strict", "-f", "-"],
        webapp("strict", { image: "nginx", extra: "x" })
      )
      assert.notStrictEqual(strict.code, 0)
      assert.include(strict.stderr, "unknown field \"spec.extra\"")
    }))

  it.effect("kubectl: x-kubernetes-validations rules (CEL), transition rules on update, blocked by schema errors", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["apply", "-f", "-"], JSON.stringify(gadgetCrd))
      const gadget = (name: string, spec: Record<string, unknown>) =>
        JSON.stringify({ apiVersion: "example.com/v1", kind: "Gadget", metadata: { name, namespace: "default" }, spec })

      const rule = yield* kubectl(server, ["create", "-f", "-"], gadget("g", { id: "a", min: 5, max: 1 }))
      assert.notStrictEqual(rule.code, 0)
      assert.strictEqual(
        rule.stderr.trim(),
        "The Gadget \"g\" is invalid: spec: Invalid value: min (5) must not exceed max (1)"
      )
      const blocked = yield* kubectl(server, ["create", "-f", "-"], gadget("g", { id: "a", min: "x", max: 1 }))
      assert.deepStrictEqual(blocked.stderr.trim().split("\n").slice(1).sort(), [
        "* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; " +
        "correct the existing errors to complete validation",
        "* spec.min: Invalid value: \"string\": spec.min in body must be of type integer: \"string\""
      ])
      yield* ok(server, ["create", "-f", "-"], gadget("g", { id: "a", min: 1, max: 5 }))
      const changed = yield* kubectl(server, ["replace", "-f", "-"], gadget("g", { id: "b", min: 1, max: 5 }))
      assert.notStrictEqual(changed.code, 0)
      assert.strictEqual(
        changed.stderr.trim(),
        "The Gadget \"g\" is invalid: spec.id: Invalid value: \"b\": id is immutable"
      )
      yield* ok(server, ["replace", "-f", "-"], gadget("g", { id: "a", min: 2, max: 5 }))
    }))

  it.effect("client-node: the Status of a 422 has one cause per field; /status is validated too", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const kc = new k8s.KubeConfig()
      kc.loadFromFile(server.kubeconfigPath)
      const api = kc.makeApiClient(k8s.CustomObjectsApi)
      const ext = kc.makeApiClient(k8s.ApiextensionsV1Api)
      yield* Effect.promise(async () => {
        await ext.createCustomResourceDefinition({ body: crd as k8s.V1CustomResourceDefinition }).catch(() => undefined)
        const base = { group: "example.com", version: "v1", namespace: "default", plural: "webapps" }
        const error = await api.createNamespacedCustomObject({
          ...base,
          body: JSON.parse(webapp("bad", { image: "x", replicas: 0, tier: "db" }))
        }).then(() => undefined, (e: unknown) => e as k8s.ApiException<string>)
        assert.strictEqual(error?.code, 422)
        const status = JSON.parse(error!.body)
        assert.strictEqual(status.kind, "Status")
        assert.strictEqual(status.reason, "Invalid")
        assert.strictEqual(
          status.message,
          "WebApp.example.com \"bad\" is invalid: [spec.replicas: Invalid value: 0: spec.replicas in body should be " +
            "greater than or equal to 1, spec.tier: Unsupported value: \"db\": supported values: \"web\", \"worker\"]"
        )
        assert.deepStrictEqual(status.details, {
          name: "bad",
          group: "example.com",
          kind: "WebApp",
          causes: [
            {
              reason: "FieldValueInvalid",
              message: "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
              field: "spec.replicas"
            },
            {
              reason: "FieldValueNotSupported",
              message: "Unsupported value: \"db\": supported values: \"web\", \"worker\"",
              field: "spec.tier"
            }
          ]
        })
        const created = await api.createNamespacedCustomObject({
          ...base,
          body: JSON.parse(webapp("fine", { image: "x" }))
        }) as KubeObject
        assert.deepStrictEqual(created.spec, { image: "x", replicas: 1, tier: "web" })
        const badStatus = await api.replaceNamespacedCustomObjectStatus({
          ...base,
          name: "fine",
          body: { ...created, status: { ready: "yes" } }
        }).then(() => undefined, (e: unknown) => e as k8s.ApiException<string>)
        assert.strictEqual(badStatus?.code, 422)
        assert.strictEqual(
          JSON.parse(badStatus!.body).message,
          "WebApp.example.com \"fine\" is invalid: status.ready: Invalid value: \"string\": status.ready in body must " +
            "be of type boolean: \"string\""
        )
      })
    }))
})

layer(TestCluster.layer, { excludeTestServices: true })("CRD validation in-process (TestCluster)", (it) => {
  it.effect("the same object gets the same 422 and the same stored form", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create(crd as KubeObject)
      const error = yield* Effect.flip(
        cluster.create(JSON.parse(webapp("sample", { image: "nginx", replicas: "three" })) as KubeObject)
      )
      assert.strictEqual(
        error.status.message,
        "WebApp.example.com \"sample\" is invalid: spec.replicas: Invalid value: \"string\": spec.replicas in body " +
          "must be of type integer: \"string\""
      )
      const created = yield* cluster.create(
        JSON.parse(webapp("good", { image: "nginx", extra: "dropped", port: "http" })) as KubeObject
      )
      assert.deepStrictEqual(created.spec, { image: "nginx", replicas: 1, tier: "web", port: "http" })
    }))
})
