/**
 * authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview: create-only, never stored; the test
 * server has no RBAC, so every access review is allowed (the reason says so) and the rules review lists `*` rules.
 * Over HTTP (JSON), client-node, kubectl (`auth can-i`, `auth can-i --list`) and in-process.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import { request } from "./support/drivers.js"
import * as Kubectl from "./support/kubectl.js"

const { run: kubectl } = Kubectl.make("testkit-auth-")

const reason = "allowed: the testkit API server has no RBAC, every request is allowed"
const ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
const ssrr = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"

const review = (spec: unknown) =>
  JSON.stringify({ apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec })

describe("access reviews in-process", () => {
  it.effect("TestCluster answers a SelfSubjectAccessReview and stores nothing", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const rv = yield* cluster.resourceVersion
      const answer = yield* cluster.create({
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        metadata: {},
        spec: { resourceAttributes: { verb: "create", group: "apps", resource: "deployments", namespace: "default" } }
      } as unknown as KubeObject)
      assert.deepStrictEqual((answer as any).status, { allowed: true, reason })
      assert.strictEqual(yield* cluster.resourceVersion, rv)
      const types = yield* cluster.resources
      const kinds = types.filter((t) => t.group === "authorization.k8s.io").map((t) => [t.kind, t.createOnly])
      // kube-apiserver 1.36 serves four authorization reviews, all create-only
      assert.deepStrictEqual(kinds, [
        ["LocalSubjectAccessReview", true],
        ["SelfSubjectAccessReview", true],
        ["SelfSubjectRulesReview", true],
        ["SubjectAccessReview", true]
      ])
    }))
})

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("access reviews over HTTP", (it) => {
  it.effect("POST answers 201 with status; other verbs are 405; a spec without attributes is a 422", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const http = (method: string, path: string, body?: string) =>
        Effect.promise(() =>
          request(server, method, path, body === undefined ? {} : { contentType: "application/json", body })
        )
      const created = yield* http("POST", ssar, review({ nonResourceAttributes: { path: "/healthz", verb: "get" } }))
      assert.strictEqual(created.status, 201)
      assert.deepStrictEqual(JSON.parse(created.body), {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        metadata: { creationTimestamp: null },
        spec: { nonResourceAttributes: { path: "/healthz", verb: "get" } },
        status: { allowed: true, reason }
      })
      const rules = yield* http(
        "POST",
        ssrr,
        JSON.stringify({
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectRulesReview",
          spec: { namespace: "default" }
        })
      )
      assert.strictEqual(rules.status, 201)
      assert.deepStrictEqual(JSON.parse(rules.body).status, {
        resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        incomplete: false
      })
      for (const [method, path] of [["GET", ssar], ["GET", `${ssar}/x`], ["DELETE", `${ssar}/x`], ["GET", ssrr]]) {
        const r = yield* http(method!, path!)
        assert.strictEqual(r.status, 405, `${method} ${path}`)
        assert.strictEqual(JSON.parse(r.body).reason, "MethodNotAllowed")
      }
      const invalid = yield* http("POST", ssar, review({}))
      assert.strictEqual(invalid.status, 422)
      assert.deepStrictEqual(JSON.parse(invalid.body).details, {
        group: "authorization.k8s.io",
        kind: "SelfSubjectAccessReview",
        causes: [{
          reason: "FieldValueInvalid",
          message:
            "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
          field: "spec.resourceAttributes"
        }]
      })

      const discovery = JSON.parse((yield* http("GET", "/apis/authorization.k8s.io/v1")).body)
      assert.deepStrictEqual(
        discovery.resources.map((r: any) => [r.name, r.kind, r.namespaced, r.verbs]),
        [
          ["localsubjectaccessreviews", "LocalSubjectAccessReview", true, ["create"]],
          ["selfsubjectaccessreviews", "SelfSubjectAccessReview", false, ["create"]],
          ["selfsubjectrulesreviews", "SelfSubjectRulesReview", false, ["create"]],
          ["subjectaccessreviews", "SubjectAccessReview", false, ["create"]]
        ]
      )
    }))

  it.effect("client-node's AuthorizationV1Api", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const kc = new k8s.KubeConfig()
      kc.loadFromFile(server.kubeconfigPath)
      const api = kc.makeApiClient(k8s.AuthorizationV1Api)
      const answer = yield* Effect.promise(() =>
        api.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { verb: "delete", resource: "secrets", namespace: "kube-system" } } }
        })
      )
      assert.strictEqual(answer.status?.allowed, true)
      assert.strictEqual(answer.status?.reason, reason)
      const rules = yield* Effect.promise(() =>
        api.createSelfSubjectRulesReview({ body: { spec: { namespace: "default" } } })
      )
      assert.deepStrictEqual(rules.status?.resourceRules, [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }])
      assert.strictEqual(rules.status?.incomplete, false)
    }))

  it.effect("kubectl auth can-i answers yes, and --list prints the * rules", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      for (
        const args of [
          ["auth", "can-i", "create", "deployments"],
          ["auth", "can-i", "delete", "pods", "-n", "kube-system"],
          ["auth", "can-i", "get", "/healthz"],
          ["auth", "can-i", "*", "*"]
        ]
      ) {
        const r = yield* kubectl(server, args)
        assert.strictEqual(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`)
        assert.strictEqual(r.stdout, "yes\n")
      }
      const list = yield* kubectl(server, ["auth", "can-i", "--list"])
      assert.strictEqual(list.code, 0, list.stderr)
      const lines = list.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/))
      assert.deepStrictEqual(lines[0], ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"])
      assert.deepStrictEqual(lines.slice(1), [["*.*", "[]", "[]", "[*]"], ["[*]", "[]", "[*]"]])
    }), { timeout: 30_000 })
})
