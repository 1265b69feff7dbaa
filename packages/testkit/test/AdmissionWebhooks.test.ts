/**
 * Admission webhooks: the embedded cluster calls the MutatingWebhookConfigurations and
 * ValidatingWebhookConfigurations it stores as kube-apiserver does. A `node:https` webhook server on 127.0.0.1
 * (certificates from `@reconcile/kube/Certificates`) answers AdmissionReviews with scripted behaviours; the cluster
 * is driven over HTTPS and every answer a client sees is asserted: codes, messages, causes, patched objects,
 * `Warning` headers, failurePolicy, selectors, reinvocation, dryRun, Services as targets.
 *
 * Differential: with `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`) the same scenarios run on the real
 * kube-apiserver (started with `--enable-aggregator-routing`, so a webhook Service resolves to its Endpoints as
 * on the embedded cluster) and must give the same answers. The in-process checks (TestCluster, TestClock) run on
 * the embedded cluster only.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Certificates from "@reconcile/kube/Certificates"
import * as Resource from "@reconcile/kube/Resource"
import { Arbitrary, Effect, Exit, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import type { AddressInfo } from "node:net"
import { TestCluster, TestKube } from "../src/index.js"
import { withChanges } from "../src/internal/admission.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Kubectl from "./support/kubectl.js"
import * as WebhookApi from "./support/webhookApi.js"
import { Api, onRealCluster, type Reply } from "./support/webhookApi.js"

type Obj = Record<string, any>

// -----------------------------------------------------------------------------------------------------------------
// the webhook server

const ca = Certificates.issue({ commonName: "admission-test-ca", ca: true })
const serving = Certificates.issue({
  commonName: "webhook",
  usages: ["server"],
  ips: ["127.0.0.1"],
  dnsNames: ["webhook.aw-service.svc"],
  issuer: ca
})
const caBundle = Buffer.from(ca.cert).toString("base64")

interface Received {
  readonly path: string
  readonly request: Obj
}

const received: Array<Received> = []
const calls = new Map<string, number>()

const patchOf = (ops: Array<Obj>) => ({
  patchType: "JSONPatch",
  patch: Buffer.from(JSON.stringify(ops)).toString("base64")
})

/** What the webhook at `path` answers to `request` (a body, a raw text with a code, or a delay first). */
const behaviour = (path: string, request: Obj): { code?: number; text?: string; response?: Obj; delay?: number } => {
  const allow = { allowed: true }
  const object = request.object ?? {}
  switch (path) {
    case "/allow":
      return { response: allow }
    case "/warn":
      return { response: { allowed: true, warnings: ["first warning", "second, with \"quotes\""] } }
    case "/deny-code":
      return {
        response: {
          allowed: false,
          warnings: ["denied with a warning"],
          status: {
            code: 403,
            reason: "Forbidden",
            message: "not allowed here",
            details: { causes: [{ reason: "FieldValueForbidden", field: "data.secret", message: "must not be set" }] }
          }
        }
      }
    case "/deny-bare":
      return { response: { allowed: false } }
    case "/deny-reason":
      return { response: { allowed: false, status: { code: 200, reason: "NotToday" } } }
    case "/label": {
      const labels = object.metadata?.labels
      return {
        response: {
          allowed: true,
          ...patchOf(
            labels === undefined
              ? [{ op: "add", path: "/metadata/labels", value: { patched: "yes" } }]
              : [{ op: "add", path: "/metadata/labels/patched", value: "yes" }]
          )
        }
      }
    }
    case "/count": {
      const key = `count/${object.metadata?.namespace}/${object.metadata?.name}`
      const n = (calls.get(key) ?? 0) + 1
      calls.set(key, n)
      const annotations = object.metadata?.annotations
      return {
        response: {
          allowed: true,
          ...patchOf(
            annotations === undefined
              ? [{ op: "add", path: "/metadata/annotations", value: { count: String(n) } }]
              : [{ op: "add", path: "/metadata/annotations/count", value: String(n) }]
          )
        }
      }
    }
    case "/tolerate":
      return {
        response: {
          allowed: true,
          ...patchOf([
            { op: "add", path: "/spec/tolerations/-", value: { key: "aw", operator: "Exists" } },
            { op: "replace", path: "/spec/dnsPolicy", value: "Default" }
          ])
        }
      }
    case "/add-data":
      return { response: { allowed: true, ...patchOf([{ op: "add", path: "/data/added", value: "by-webhook" }]) } }
    case "/slow":
      return { response: allow, delay: 2500 }
    case "/malformed":
      return { code: 200, text: "this is not json" }
    case "/wrong-uid":
      return { response: { uid: "wrong", allowed: true } }
    case "/status-500":
      return { code: 500, text: "boom" }
    case "/with-patch":
      return { response: { allowed: true, ...patchOf([{ op: "add", path: "/data/x", value: "y" }]) } }
    case "/patch-no-type":
      return { response: { allowed: true, patch: patchOf([{ op: "add", path: "/data/x", value: "y" }]).patch } }
    case "/bad-patch":
      return { response: { allowed: true, ...patchOf([{ op: "replace", path: "/spec/nothing", value: 1 }]) } }
    default:
      return { code: 404, text: "no such webhook" }
  }
}

const startWebhookServer = WebhookApi.reviewServer(serving, (path, review) => {
  received.push({ path, request: review.request })
  const b = behaviour(path, review.request)
  return b.text !== undefined ? b : {
    ...(b.delay !== undefined ? { delay: b.delay } : {}),
    json: {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: review.request.uid, ...b.response }
    }
  }
})

// -----------------------------------------------------------------------------------------------------------------
// scenarios

const cmPath = (ns: string, name?: string) =>
  `/api/v1/namespaces/${ns}/configmaps${name === undefined ? "" : `/${name}`}`
const configPath = (mutating: boolean, name?: string) =>
  `/apis/admissionregistration.k8s.io/v1/${mutating ? "mutating" : "validating"}webhookconfigurations${
    name === undefined ? "" : `/${name}`
  }`

const cm = (ns: string, name: string, extra: Obj = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, ...extra },
  data: { a: "1" }
})

/** A webhook of scenario `id` on ConfigMaps of its namespace, at `path` on the test's webhook server. */
const webhook = (port: number, id: string, name: string, path: string, extra: Obj = {}): Obj => ({
  name,
  admissionReviewVersions: ["v1"],
  sideEffects: "None",
  failurePolicy: "Fail",
  timeoutSeconds: 5,
  clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
  rules: [{ operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
  namespaceSelector: { matchLabels: { aw: id } },
  ...extra
})

/**
 * Scenario `id`: its namespace (labelled `aw: id`) and one configuration of the webhooks given (plus a probe
 * webhook), waited for until the server calls them (kube-apiserver reads configurations through an informer).
 */
const scenario = (id: string, mutating: boolean, hooks: (port: number) => Array<Obj>) =>
  Effect.gen(function*() {
    const api = yield* Api
    const ns = `aw-${id}`
    const created = yield* api.send("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { aw: id } }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const probe = webhook(api.webhookPort, id, "probe.aw.test", "/allow", {
      rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
      objectSelector: { matchLabels: { probe: id } }
    })
    const config = yield* api.send("POST", configPath(mutating), {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
      metadata: { name: `aw-${id}` },
      webhooks: [...hooks(api.webhookPort), probe]
    })
    assert.strictEqual(config.status, 201, JSON.stringify(config.body))
    for (let i = 0; i < 100; i++) {
      yield* api.send("POST", `${cmPath(ns)}?dryRun=All`, cm(ns, "probe", { labels: { probe: id } }))
      if (received.some((r) => r.path === "/allow" && r.request.object?.metadata?.labels?.probe === id)) break
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
    }
    return ns
  })

/** The last request the webhook at `path` received for namespace `ns` (and object `name`). */
const lastTo = (path: string, ns: string, name?: string): Obj | undefined =>
  received.filter((r) =>
    r.path === path && r.request.namespace === ns && (name === undefined || r.request.name === name)
  ).at(-1)?.request

const failedCalling = (name: string, port: number, path: string, why: string, timeout = 5) =>
  `failed calling webhook "${name}": failed to call webhook: Post "https://127.0.0.1:${port}${path}?timeout=${timeout}s": ${why}`

const internalError = (message: string) => ({
  code: 500,
  reason: "InternalError",
  message: `Internal error occurred: ${message}`
})

const assertStatus = (reply: Reply, expected: { code: number; reason?: string; message: string }) => {
  assert.strictEqual(reply.status, expected.code, JSON.stringify(reply.body))
  assert.strictEqual(reply.body.kind, "Status")
  assert.strictEqual(reply.body.code, expected.code)
  assert.strictEqual(reply.body.reason, expected.reason)
  assert.strictEqual(reply.body.message, expected.message)
}

const timeout = onRealCluster ? 120_000 : 30_000

layer(WebhookApi.layer(startWebhookServer), { timeout, excludeTestServices: true })(
  "admission webhooks over HTTPS",
  (it) => {
    it.effect("a validating webhook allows with warnings; the AdmissionReview carries the request", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("warn", false, (port) => [webhook(port, "warn", "warn.aw.test", "/warn")])
        const created = yield* api.send("POST", `${cmPath(ns)}?fieldManager=me`, cm(ns, "one"))
        assert.strictEqual(created.status, 201)
        assert.deepStrictEqual(created.warnings, ["first warning", "second, with \"quotes\""])
        const create = lastTo("/warn", ns, "one")!
        assert.strictEqual(create.operation, "CREATE")
        assert.deepStrictEqual(create.kind, { group: "", version: "v1", kind: "ConfigMap" })
        assert.deepStrictEqual(create.resource, { group: "", version: "v1", resource: "configmaps" })
        assert.deepStrictEqual(create.requestKind, create.kind)
        assert.deepStrictEqual(create.requestResource, create.resource)
        assert.strictEqual(create.name, "one")
        assert.strictEqual(create.namespace, ns)
        assert.strictEqual(create.dryRun, false)
        assert.isNull(create.oldObject)
        assert.strictEqual(create.object.metadata.name, "one")
        assert.isString(create.object.metadata.uid)
        assert.strictEqual(create.options.kind, "CreateOptions")
        assert.strictEqual(create.options.fieldManager, "me")
        assert.isString(create.uid)
        assert.isString(create.userInfo.username)
        // the object stored is the one the validating webhook saw
        const stored = yield* api.send("GET", cmPath(ns, "one"))
        assert.strictEqual(stored.body.metadata.uid, create.object.metadata.uid)
        assert.strictEqual(stored.body.metadata.creationTimestamp, create.object.metadata.creationTimestamp)

        const updated = yield* api.send("PUT", cmPath(ns, "one"), { ...stored.body, data: { a: "2" } })
        assert.strictEqual(updated.status, 200)
        assert.strictEqual(updated.warnings.length, 2)
        const update = lastTo("/warn", ns, "one")!
        assert.strictEqual(update.operation, "UPDATE")
        assert.strictEqual(update.oldObject.data.a, "1")
        assert.strictEqual(update.object.data.a, "2")
        assert.deepStrictEqual(update.options, { kind: "UpdateOptions", apiVersion: "meta.k8s.io/v1" })

        const patched = yield* api.send(
          "PATCH",
          cmPath(ns, "one"),
          { data: { a: "3" } },
          "application/merge-patch+json"
        )
        assert.strictEqual(patched.status, 200)
        const patch = lastTo("/warn", ns, "one")!
        assert.strictEqual(patch.operation, "UPDATE")
        assert.strictEqual(patch.object.data.a, "3")
        // a patch's options are sent as UpdateOptions (kube-apiserver converts them)
        assert.strictEqual(patch.options.kind, "UpdateOptions")

        // dryRun reaches webhooks whose sideEffects are None, with dryRun set
        const dry = yield* api.send("POST", `${cmPath(ns)}?dryRun=All`, cm(ns, "dry"))
        assert.strictEqual(dry.status, 201)
        assert.strictEqual(lastTo("/warn", ns, "dry")!.dryRun, true)
        assert.deepStrictEqual(lastTo("/warn", ns, "dry")!.options, {
          kind: "CreateOptions",
          apiVersion: "meta.k8s.io/v1",
          dryRun: ["All"]
        })

        // kubectl prints the webhook's warnings
        const kubectl = Kubectl.make("aw-kubectl-")
        const run = yield* kubectl.run(api.kubeconfigPath, ["create", "configmap", "by-kubectl", "-n", ns])
        assert.strictEqual(run.code, 0, run.stderr)
        assert.include(run.stderr, "Warning: first warning\n")
        assert.include(run.stderr, "Warning: second, with \"quotes\"\n")
      }))

    it.effect("denials: the webhook's code, reason and causes; 400 without a code; its warnings still sent", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("deny", false, (port) => [
          webhook(port, "deny", "code.aw.test", "/deny-code", { objectSelector: { matchLabels: { deny: "code" } } }),
          webhook(port, "deny", "bare.aw.test", "/deny-bare", { objectSelector: { matchLabels: { deny: "bare" } } }),
          webhook(port, "deny", "reason.aw.test", "/deny-reason", {
            objectSelector: { matchLabels: { deny: "reason" } }
          })
        ])
        const code = yield* api.send("POST", cmPath(ns), cm(ns, "c", { labels: { deny: "code" } }))
        assertStatus(code, {
          code: 403,
          reason: "Forbidden",
          message: "admission webhook \"code.aw.test\" denied the request: not allowed here"
        })
        assert.deepStrictEqual(code.body.details, {
          causes: [{ reason: "FieldValueForbidden", field: "data.secret", message: "must not be set" }]
        })
        assert.deepStrictEqual(code.warnings, ["denied with a warning"])
        const bare = yield* api.send("POST", cmPath(ns), cm(ns, "b", { labels: { deny: "bare" } }))
        assertStatus(bare, {
          code: 400,
          message: "admission webhook \"bare.aw.test\" denied the request without explanation"
        })
        const reason = yield* api.send("POST", cmPath(ns), cm(ns, "r", { labels: { deny: "reason" } }))
        assertStatus(reason, {
          code: 400,
          reason: "NotToday",
          message: "admission webhook \"reason.aw.test\" denied the request: NotToday"
        })
        // the objectSelector: an object none selects is admitted; an update is selected by its old object too
        const plain = yield* api.send("POST", cmPath(ns), cm(ns, "plain"))
        assert.strictEqual(plain.status, 201)
        const relabel = yield* api.send("PUT", cmPath(ns, "plain"), {
          ...plain.body,
          metadata: { ...plain.body.metadata, labels: { deny: "bare" } }
        })
        assert.strictEqual(relabel.status, 400)
        // another namespace is not selected
        const other = yield* api.send(
          "POST",
          cmPath("default"),
          cm("default", "aw-deny-other", { labels: { deny: "bare" } })
        )
        assert.strictEqual(other.status, 201)
        yield* api.send("DELETE", cmPath("default", "aw-deny-other"))
      }))

    it.effect("mutating webhooks patch in order; reinvocationPolicy IfNeeded calls a webhook again", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("mutate", true, (port) => [
          webhook(port, "mutate", "count.aw.test", "/count", { reinvocationPolicy: "IfNeeded" }),
          webhook(port, "mutate", "label.aw.test", "/label"),
          webhook(port, "mutate", "data.aw.test", "/add-data", { objectSelector: { matchLabels: { more: "yes" } } }),
          webhook(port, "mutate", "pods.aw.test", "/tolerate", {
            rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }]
          })
        ])
        // a created Pod is shown with its defaults (and those of the admission plugins before the webhooks)
        const pod = yield* api.send("POST", `/api/v1/namespaces/${ns}/pods`, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p", namespace: ns },
          spec: { containers: [{ name: "c", image: "busybox" }] }
        })
        assert.strictEqual(pod.status, 201, JSON.stringify(pod.body))
        const podSeen = lastTo("/tolerate", ns, "p")!.object
        assert.strictEqual(podSeen.spec.dnsPolicy, "ClusterFirst")
        assert.strictEqual(podSeen.spec.containers[0].imagePullPolicy, "Always")
        assert.deepStrictEqual(podSeen.spec.tolerations.map((t: Obj) => t.key), [
          "node.kubernetes.io/not-ready",
          "node.kubernetes.io/unreachable"
        ])
        assert.strictEqual(pod.body.spec.dnsPolicy, "Default")
        assert.deepStrictEqual(pod.body.spec.tolerations.map((t: Obj) => t.key), [
          "node.kubernetes.io/not-ready",
          "node.kubernetes.io/unreachable",
          "aw"
        ])
        assert.deepStrictEqual(
          Object.keys(pod.body.metadata.managedFields[0].fieldsV1["f:spec"]).sort(),
          [
            "f:containers",
            "f:dnsPolicy",
            "f:enableServiceLinks",
            "f:restartPolicy",
            "f:schedulerName",
            "f:securityContext",
            "f:terminationGracePeriodSeconds"
          ]
        )
        const created = yield* api.send("POST", cmPath(ns), cm(ns, "m"))
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        assert.deepStrictEqual(created.body.metadata.labels, { patched: "yes" })
        // count ran, then label changed the object: count ran again
        assert.deepStrictEqual(created.body.metadata.annotations, { count: "2" })
        const stored = yield* api.send("GET", cmPath(ns, "m"))
        // the fields the webhooks set are owned by no manager
        assert.deepStrictEqual(stored.body.metadata.managedFields.map((e: Obj) => e.fieldsV1), [
          { "f:data": { ".": {}, "f:a": {} } }
        ])
        assert.deepStrictEqual(stored.body.metadata.labels, { patched: "yes" })
        // the later webhook saw the earlier one's patch
        assert.strictEqual(lastTo("/label", ns)!.object.metadata.annotations.count, "1")
        const updated = yield* api.send("PUT", `${cmPath(ns, "m")}?fieldManager=upd`, {
          ...stored.body,
          metadata: { ...stored.body.metadata, annotations: { count: "0", mine: "x" } },
          data: { a: "1", b: "2" }
        })
        assert.strictEqual(updated.status, 200, JSON.stringify(updated.body))
        // an update: the count webhook again (3 calls); the managedFields as kube-apiserver's
        assert.deepStrictEqual(updated.body.metadata.annotations, { count: "3", mine: "x" })
        assert.deepStrictEqual(
          updated.body.metadata.managedFields.map((e: Obj) => [e.manager, e.fieldsV1]),
          [
            ["unknown", { "f:data": { ".": {}, "f:a": {} } }],
            ["upd", { "f:data": { "f:b": {} }, "f:metadata": { "f:annotations": { "f:count": {}, "f:mine": {} } } }]
          ]
        )
        // a mutating webhook sees the object before the name is generated
        const generated = yield* api.send("POST", cmPath(ns), {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { generateName: "gen-", namespace: ns, labels: { more: "yes" } },
          data: { a: "1" }
        })
        assert.strictEqual(generated.status, 201)
        assert.strictEqual(generated.body.data.added, "by-webhook")
        const seen = lastTo("/add-data", ns)!
        assert.isUndefined(seen.name)
        assert.strictEqual(seen.object.metadata.generateName, "gen-")
        assert.isUndefined(seen.object.metadata.name)
        // a dry run is patched alike and stores nothing
        const dry = yield* api.send("POST", `${cmPath(ns)}?dryRun=All`, cm(ns, "dry"))
        assert.strictEqual(dry.status, 201)
        assert.strictEqual(dry.body.metadata.labels.patched, "yes")
        assert.strictEqual((yield* api.send("GET", cmPath(ns, "dry"))).status, 404)
      }))

    it.effect("a mutating webhook's patch without patchType, or one that does not apply, fails the request", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("patches", true, (port) => [
          webhook(port, "patches", "notype.aw.test", "/patch-no-type", {
            objectSelector: { matchLabels: { case: "notype" } }
          }),
          webhook(port, "patches", "badpatch.aw.test", "/bad-patch", {
            objectSelector: { matchLabels: { case: "badpatch" } }
          })
        ])
        const notype = yield* api.send("POST", cmPath(ns), cm(ns, "n", { labels: { case: "notype" } }))
        assertStatus(
          notype,
          internalError(
            "failed calling webhook \"notype.aw.test\": received invalid webhook response: webhook returned response.patch but not response.patchType"
          )
        )
        const bad = yield* api.send("POST", cmPath(ns), cm(ns, "b", { labels: { case: "badpatch" } }))
        // kube-apiserver's wording: not a call failure (no webhook named)
        assertStatus(
          bad,
          internalError("replace operation does not apply: doc is missing path: /spec/nothing: missing value")
        )
      }))

    it.effect("matchPolicy: Equivalent calls a webhook for another served version of the resource, Exact does not", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const crd = yield* api.send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "widgets.aw.example.com" },
          spec: {
            group: "aw.example.com",
            scope: "Namespaced",
            names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
            versions: ["v1", "v2"].map((name) => ({
              name,
              served: true,
              storage: name === "v1",
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
            }))
          }
        })
        assert.strictEqual(crd.status, 201, JSON.stringify(crd.body))
        const rules = [{
          operations: ["CREATE"],
          apiGroups: ["aw.example.com"],
          apiVersions: ["v1"],
          resources: ["widgets"]
        }]
        const ns = yield* scenario("equivalent", false, (port) => [
          webhook(port, "equivalent", "equivalent.aw.test", "/warn", { rules }),
          webhook(port, "equivalent", "exact.aw.test", "/deny-bare", { rules, matchPolicy: "Exact" })
        ])
        const widgets = (version: string) => `/apis/aw.example.com/${version}/namespaces/${ns}/widgets`
        for (let i = 0; i < 100 && (yield* api.send("GET", widgets("v2"))).status !== 200; i++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        }
        const widget = (version: string, name: string) => ({
          apiVersion: `aw.example.com/${version}`,
          kind: "Widget",
          metadata: { name, namespace: ns },
          spec: { size: 1 }
        })
        const v2 = yield* api.send("POST", widgets("v2"), widget("v2", "two"))
        assert.strictEqual(v2.status, 201, JSON.stringify(v2.body))
        assert.strictEqual(v2.warnings.length, 2)
        const seen = lastTo("/warn", ns, "two")!
        assert.deepStrictEqual(seen.kind, { group: "aw.example.com", version: "v1", kind: "Widget" })
        assert.deepStrictEqual(seen.resource, { group: "aw.example.com", version: "v1", resource: "widgets" })
        assert.deepStrictEqual(seen.requestKind, { group: "aw.example.com", version: "v2", kind: "Widget" })
        assert.deepStrictEqual(seen.requestResource, { group: "aw.example.com", version: "v2", resource: "widgets" })
        assert.strictEqual(seen.object.apiVersion, "aw.example.com/v1")
        assert.strictEqual(v2.body.apiVersion, "aw.example.com/v2")
        const v1 = yield* api.send("POST", widgets("v1"), widget("v1", "one"))
        assertStatus(v1, {
          code: 400,
          message: "admission webhook \"exact.aw.test\" denied the request without explanation"
        })
        yield* api.send("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.aw.example.com")
      }))

    it.effect("matchConditions (CEL over object, oldObject and request) decide whether a webhook is called", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("conditions", true, (port) => [
          webhook(port, "conditions", "label.aw.test", "/label", {
            matchConditions: [
              { name: "m-only", expression: "object != null && object.metadata.name.startsWith('m')" },
              { name: "create-only", expression: "request.operation == 'CREATE' && oldObject == null" }
            ]
          }),
          webhook(port, "conditions", "error.aw.test", "/allow", {
            objectSelector: { matchLabels: { case: "error" } },
            matchConditions: [{ name: "missing-key", expression: "object.metadata.labels.missing == 'x'" }]
          }),
          webhook(port, "conditions", "ignored.aw.test", "/deny-bare", {
            objectSelector: { matchLabels: { case: "ignored" } },
            failurePolicy: "Ignore",
            matchConditions: [{ name: "missing-key", expression: "object.metadata.labels.missing == 'x'" }]
          })
        ])
        const failed = yield* api.send("POST", cmPath(ns), cm(ns, "e1", { labels: { case: "error" } }))
        // an evaluation error: 403 (failurePolicy Fail), the webhook skipped (Ignore)
        assertStatus(failed, {
          code: 403,
          reason: "Forbidden",
          message:
            `configmaps "e1" is forbidden: expression 'object.metadata.labels.missing == 'x'' resulted in error: no such key: missing`
        })
        assert.deepStrictEqual(failed.body.details, { name: "e1", kind: "configmaps" })
        const ignored = yield* api.send("POST", cmPath(ns), cm(ns, "e2", { labels: { case: "ignored" } }))
        assert.strictEqual(ignored.status, 201)
        const m = yield* api.send("POST", cmPath(ns), cm(ns, "m1"))
        assert.deepStrictEqual(m.body.metadata.labels, { patched: "yes" })
        const x = yield* api.send("POST", cmPath(ns), cm(ns, "x1"))
        assert.strictEqual(x.status, 201)
        assert.isUndefined(x.body.metadata.labels)
        const { labels: _, ...meta } = m.body.metadata
        const updated = yield* api.send("PUT", cmPath(ns, "m1"), { ...m.body, metadata: meta })
        assert.strictEqual(updated.status, 200)
        assert.isUndefined(updated.body.metadata.labels)
      }))

    it.effect("failurePolicy: a webhook down, slow, malformed, with the wrong uid or a 500 fails the request (Fail) or is skipped (Ignore)", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const down = yield* WebhookApi.closedPort
        const fail = (name: string, path: string, extra: Obj = {}) => (port: number) =>
          webhook(port, "fail", name, path, {
            objectSelector: { matchLabels: { case: name.split(".")[0]! } },
            ...extra
          })
        const ns = yield* scenario("fail", false, (port) => [
          fail("down.aw.test", "/down", { clientConfig: { url: `https://127.0.0.1:${down}/down`, caBundle } })(port),
          fail("ignored.aw.test", "/down", {
            clientConfig: { url: `https://127.0.0.1:${down}/down`, caBundle },
            failurePolicy: "Ignore"
          })(port),
          fail("slow.aw.test", "/slow", { timeoutSeconds: 1 })(port),
          fail("malformed.aw.test", "/malformed")(port),
          fail("uid.aw.test", "/wrong-uid")(port),
          fail("status.aw.test", "/status-500")(port),
          fail("patching.aw.test", "/with-patch")(port),
          fail("untrusted.aw.test", "/allow", { clientConfig: { url: `https://127.0.0.1:${port}/allow` } })(port)
        ])
        const port = api.webhookPort
        const create = (c: string) => api.send("POST", cmPath(ns), cm(ns, c, { labels: { case: c } }))

        const refused = yield* create("down")
        assertStatus(
          refused,
          internalError(
            failedCalling("down.aw.test", down, "/down", `dial tcp 127.0.0.1:${down}: connect: connection refused`)
          )
        )
        assert.deepStrictEqual(refused.body.details, {
          causes: [{
            message: failedCalling(
              "down.aw.test",
              down,
              "/down",
              `dial tcp 127.0.0.1:${down}: connect: connection refused`
            )
          }]
        })
        assert.strictEqual((yield* create("ignored")).status, 201)

        const slow = yield* create("slow")
        assertStatus(slow, internalError(failedCalling("slow.aw.test", port, "/slow", "context deadline exceeded", 1)))

        const malformed = yield* create("malformed")
        assertStatus(
          malformed,
          internalError(
            "failed calling webhook \"malformed.aw.test\": failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }"
          )
        )

        const uid = yield* create("uid")
        const sent = lastTo("/wrong-uid", ns)!.uid
        assertStatus(
          uid,
          internalError(
            `failed calling webhook "uid.aw.test": received invalid webhook response: expected response.uid="${sent}", got "wrong"`
          )
        )

        const status = yield* create("status")
        assertStatus(
          status,
          internalError(
            "failed calling webhook \"status.aw.test\": failed to call webhook: an error on the server (\"boom\") has prevented the request from succeeding"
          )
        )

        const patching = yield* create("patching")
        assertStatus(
          patching,
          internalError(
            "failed calling webhook \"patching.aw.test\": received invalid webhook response: validating webhook may not return response.patch"
          )
        )

        const untrusted = yield* create("untrusted")
        assertStatus(
          untrusted,
          internalError(
            failedCalling(
              "untrusted.aw.test",
              port,
              "/allow",
              "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            )
          )
        )
      }))

    it.effect("a Service as the webhook's target: its Endpoints on 127.0.0.1; none available fails the call", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const service = (name: string, path: string) => ({
          service: { namespace: "aw-service", name, path, port: 443 },
          caBundle
        })
        const ns = yield* scenario("service", false, () => [
          webhook(0, "service", "svc.aw.test", "/deny-bare", {
            clientConfig: service("webhook", "/deny-bare"),
            objectSelector: { matchLabels: { case: "svc" } }
          }),
          webhook(0, "service", "missing.aw.test", "/allow", {
            clientConfig: service("missing", "/allow"),
            objectSelector: { matchLabels: { case: "missing" } }
          }),
          webhook(0, "service", "empty.aw.test", "/allow", {
            clientConfig: service("empty", "/allow"),
            objectSelector: { matchLabels: { case: "empty" } }
          })
        ])
        const unavailable = (name: string, path: string, why: string) =>
          internalError(
            `failed calling webhook "${name}": failed to call webhook: Post "https://${
              name.split(".")[0] === "svc" ? "webhook" : name.split(".")[0]
            }.aw-service.svc:443${path}?timeout=5s": ${why}`
          )
        const missing = yield* api.send("POST", cmPath(ns), cm(ns, "missing", { labels: { case: "missing" } }))
        assertStatus(missing, unavailable("missing.aw.test", "/allow", "service \"missing\" not found"))
        for (const name of ["webhook", "empty"]) {
          const svc = yield* api.send("POST", `/api/v1/namespaces/${ns}/services`, {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name, namespace: ns },
            spec: { ports: [{ name: "https", port: 443, targetPort: api.webhookPort }] }
          })
          assert.strictEqual(svc.status, 201, JSON.stringify(svc.body))
        }
        const empty = yield* api.send("POST", cmPath(ns), cm(ns, "empty", { labels: { case: "empty" } }))
        assertStatus(empty, unavailable("empty.aw.test", "/allow", "no endpoints available for service \"empty\""))
        const eps = yield* api.send("POST", `/api/v1/namespaces/${ns}/endpoints`, {
          apiVersion: "v1",
          kind: "Endpoints",
          metadata: { name: "webhook", namespace: ns },
          subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: api.webhookPort }] }]
        })
        if (onRealCluster) {
          // kube-apiserver refuses loopback endpoints; the embedded cluster takes them (a documented difference) so
          // that a webhook Service can point at a test server on 127.0.0.1
          assert.strictEqual(eps.status, 422)
          const svc = yield* api.send("POST", cmPath(ns), cm(ns, "svc", { labels: { case: "svc" } }))
          assertStatus(svc, unavailable("svc.aw.test", "/deny-bare", "no endpoints available for service \"webhook\""))
          return
        }
        assert.strictEqual(eps.status, 201, JSON.stringify(eps.body))
        const reached = yield* api.send("POST", cmPath(ns), cm(ns, "svc", { labels: { case: "svc" } }))
        assertStatus(reached, {
          code: 400,
          message: "admission webhook \"svc.aw.test\" denied the request without explanation"
        })
      }))

    it.effect("rules: scope, a Namespace's own labels, subresources; a server-side apply that creates is a CREATE", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("rules", false, (port) => [
          webhook(port, "rules", "namespaces.aw.test", "/deny-bare", {
            rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["namespaces"] }],
            namespaceSelector: { matchLabels: { "aw-rules": "deny" } }
          }),
          webhook(port, "rules", "namespaced.aw.test", "/deny-reason", {
            rules: [{
              operations: ["CREATE"],
              apiGroups: [""],
              apiVersions: ["v1"],
              resources: ["namespaces"],
              scope: "Namespaced"
            }],
            namespaceSelector: {}
          }),
          webhook(port, "rules", "status.aw.test", "/deny-bare", {
            rules: [{ operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/status"] }]
          }),
          webhook(port, "rules", "apply.aw.test", "/warn", {
            objectSelector: { matchLabels: { applied: "yes" } }
          }),
          webhook(port, "rules", "services.aw.test", "/warn", {
            rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["services"] }]
          })
        ])
        // a Service (its address allocated once, whatever the number of webhook round trips)
        const service = yield* api.send("POST", `/api/v1/namespaces/${ns}/services`, {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "s", namespace: ns },
          spec: { ports: [{ port: 80 }] }
        })
        assert.strictEqual(service.status, 201, JSON.stringify(service.body))
        assert.strictEqual(service.warnings.length, 2)
        assert.strictEqual(lastTo("/warn", ns, "s")!.object.spec.clusterIP, service.body.spec.clusterIP)
        // a Namespace is selected by its own labels, and is told of as its own namespace; a Namespaced rule skips it
        const denied = yield* api.send("POST", "/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "aw-rules-denied", labels: { "aw-rules": "deny" } }
        })
        assertStatus(denied, {
          code: 400,
          message: "admission webhook \"namespaces.aw.test\" denied the request without explanation"
        })
        const seen = received.filter((r) => r.path === "/deny-bare" && r.request.name === "aw-rules-denied").at(-1)!
        assert.strictEqual(seen.request.namespace, "aw-rules-denied")
        assert.deepStrictEqual(seen.request.resource, { group: "", version: "v1", resource: "namespaces" })
        const allowed = yield* api.send("POST", "/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "aw-rules-allowed" }
        })
        assert.strictEqual(allowed.status, 201)
        // pods/status matches the status subresource only
        const pod = yield* api.send("POST", `/api/v1/namespaces/${ns}/pods`, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p", namespace: ns },
          spec: { containers: [{ name: "c", image: "busybox" }] }
        })
        assert.strictEqual(pod.status, 201, JSON.stringify(pod.body))
        const relabel = yield* api.send("PATCH", `/api/v1/namespaces/${ns}/pods/p`, {
          metadata: { labels: { a: "b" } }
        }, "application/merge-patch+json")
        assert.strictEqual(relabel.status, 200)
        const status = yield* api.send("PATCH", `/api/v1/namespaces/${ns}/pods/p/status`, {
          status: { message: "hi" }
        }, "application/merge-patch+json")
        assertStatus(status, {
          code: 400,
          message: "admission webhook \"status.aw.test\" denied the request without explanation"
        })
        const statusSeen = received.filter((r) => r.request.name === "p" && r.request.subResource === "status").at(-1)!
        assert.strictEqual(statusSeen.request.requestSubResource, "status")
        assert.deepStrictEqual(statusSeen.request.kind, { group: "", version: "v1", kind: "Pod" })
        // server-side apply creating its object: a CREATE with CreateOptions
        const applied = yield* api.send(
          "PATCH",
          `${cmPath(ns, "applied")}?fieldManager=applier`,
          cm(ns, "applied", { labels: { applied: "yes" } }),
          "application/apply-patch+yaml"
        )
        assert.strictEqual(applied.status, 201, JSON.stringify(applied.body))
        const apply = lastTo("/warn", ns, "applied")!
        assert.strictEqual(apply.operation, "CREATE")
        assert.deepStrictEqual(apply.options, {
          kind: "CreateOptions",
          apiVersion: "meta.k8s.io/v1",
          fieldManager: "applier"
        })
        const reapplied = yield* api.send(
          "PATCH",
          `${cmPath(ns, "applied")}?fieldManager=applier&force=true`,
          { ...cm(ns, "applied", { labels: { applied: "yes" } }), data: { a: "2" } },
          "application/apply-patch+yaml"
        )
        assert.strictEqual(reapplied.status, 200, JSON.stringify(reapplied.body))
        const reapply = lastTo("/warn", ns, "applied")!
        assert.strictEqual(reapply.operation, "UPDATE")
        // (the options of a patch are sent as UpdateOptions: `force` is not among them)
        assert.deepStrictEqual(reapply.options, {
          kind: "UpdateOptions",
          apiVersion: "meta.k8s.io/v1",
          fieldManager: "applier"
        })
        yield* api.send("DELETE", "/api/v1/namespaces/aw-rules-allowed")
      }))

    it.effect("webhook configurations are defaulted and validated as kube-apiserver does", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const post = (name: string, mutating: boolean, webhooks: Array<Obj>) =>
          api.send("POST", configPath(mutating), {
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
            metadata: { name },
            webhooks
          })
        const causes = (reply: Reply) => {
          assert.strictEqual(reply.status, 422, JSON.stringify(reply.body))
          return (reply.body.details.causes as Array<Obj>).map((c) => `${c.field}: ${c.message}`)
        }
        const base = { sideEffects: "None", admissionReviewVersions: ["v1"] }
        assert.deepStrictEqual(causes(yield* post("aw-invalid-empty", false, [{ name: "a.b.c" }])), [
          "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
          "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
          "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"
        ])
        assert.deepStrictEqual(
          causes(
            yield* post("aw-invalid-bad", false, [{
              name: "bad",
              clientConfig: { url: "http://x/y?q=1#f" },
              sideEffects: "Some",
              admissionReviewVersions: ["v2"],
              rules: [{
                operations: ["GET"],
                apiGroups: ["", "*"],
                apiVersions: [],
                resources: ["pods"],
                scope: "Any"
              }],
              failurePolicy: "Maybe",
              matchPolicy: "X",
              timeoutSeconds: 31
            }])
          ),
          [
            "webhooks[0].name: Invalid value: \"bad\": should be a domain with at least three segments separated by dots",
            "webhooks[0].rules[0].operations[0]: Unsupported value: \"GET\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
            "webhooks[0].rules[0].apiGroups: Invalid value: [\"\",\"*\"]: if '*' is present, must not specify other API groups",
            "webhooks[0].rules[0].apiVersions: Required value",
            "webhooks[0].rules[0].scope: Unsupported value: \"Any\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
            "webhooks[0].failurePolicy: Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\"",
            "webhooks[0].matchPolicy: Unsupported value: \"X\": supported values: \"Equivalent\", \"Exact\"",
            "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
            "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
            "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            "webhooks[0].clientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL",
            "webhooks[0].clientConfig.url: Invalid value: \"q=1\": query parameters are not permitted in the URL",
            "webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1"
          ]
        )
        assert.deepStrictEqual(
          causes(
            yield* post("aw-invalid-mutating", true, [{
              ...base,
              name: "a.b.c",
              clientConfig: { url: "https://u:p@/x" },
              reinvocationPolicy: "Sometimes",
              timeoutSeconds: 0,
              rules: [{ operations: [], apiGroups: [], apiVersions: ["*", "v1"], resources: [] }]
            }, { ...base, name: "a.b.c", clientConfig: { service: { namespace: "n", path: "x", port: 0 } } }])
          ),
          [
            "webhooks[0].rules[0].operations: Required value",
            "webhooks[0].rules[0].apiGroups: Required value",
            "webhooks[0].rules[0].apiVersions: Invalid value: [\"*\",\"v1\"]: if '*' is present, must not specify other API versions",
            "webhooks[0].rules[0].resources: Required value",
            "webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds",
            "webhooks[0].reinvocationPolicy: Unsupported value: \"Sometimes\": supported values: \"IfNeeded\", \"Never\"",
            "webhooks[0].clientConfig.url: Invalid value: \"\": host must be specified; desired format: https://host[/path]",
            "webhooks[0].clientConfig.url: Invalid value: \"u:p\": user information is not permitted in the URL",
            // kube-apiserver names a missing service name `namespace`
            "webhooks[1].clientConfig.service.namespace: Required value",
            "webhooks[1].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
            "webhooks[1].clientConfig.service.path: Invalid value: \"x\": must start with a '/'",
            "webhooks[1].clientConfig.service.path: Invalid value: \"x\": segment[0] may not be empty",
            "webhooks[1].name: Duplicate value: \"a.b.c\""
          ]
        )
        const created = yield* post("aw-defaults", true, [{
          ...base,
          name: "a.b.c",
          clientConfig: { service: { namespace: "n", name: "s" } },
          rules: [{ operations: ["*"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }]
        }])
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        assert.deepStrictEqual(created.body.webhooks, [{
          name: "a.b.c",
          clientConfig: { service: { namespace: "n", name: "s", port: 443 } },
          rules: [{ operations: ["*"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], scope: "*" }],
          failurePolicy: "Fail",
          matchPolicy: "Equivalent",
          namespaceSelector: {},
          objectSelector: {},
          sideEffects: "None",
          timeoutSeconds: 10,
          admissionReviewVersions: ["v1"],
          reinvocationPolicy: "Never"
        }])
        assert.strictEqual((yield* api.send("DELETE", configPath(true, "aw-defaults"))).status, 200)
      }))

    it.effect("DELETE: validating webhooks see the old object; webhook configurations are never sent to webhooks", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const ns = yield* scenario("delete", false, (port) => [
          webhook(port, "delete", "delete.aw.test", "/deny-bare", {
            rules: [{ operations: ["DELETE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }]
          }),
          webhook(port, "delete", "everything.aw.test", "/deny-bare", {
            rules: [{ operations: ["CREATE"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }],
            namespaceSelector: {},
            objectSelector: { matchLabels: { "aw-exempt": "check" } }
          })
        ])
        assert.strictEqual((yield* api.send("POST", cmPath(ns), cm(ns, "kept"))).status, 201)
        const refused = yield* api.send("DELETE", cmPath(ns, "kept"))
        assertStatus(refused, {
          code: 400,
          message: "admission webhook \"delete.aw.test\" denied the request without explanation"
        })
        const seen = received.filter((r) => r.path === "/deny-bare" && r.request.operation === "DELETE").at(-1)!.request
        assert.isNull(seen.object)
        assert.strictEqual(seen.oldObject.metadata.name, "kept")
        assert.strictEqual(seen.options.kind, "DeleteOptions")
        assert.strictEqual((yield* api.send("GET", cmPath(ns, "kept"))).status, 200)
        // a cluster-scoped object is selected whatever the namespaceSelector; the configurations are exempt
        const role = yield* api.send("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "aw-exempt-check", labels: { "aw-exempt": "check" } },
          rules: []
        })
        assert.strictEqual(role.status, 400)
        const config = yield* api.send("POST", configPath(false), {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: "aw-exempt-check", labels: { "aw-exempt": "check" } },
          webhooks: []
        })
        assert.strictEqual(config.status, 201, JSON.stringify(config.body))
        assert.strictEqual((yield* api.send("DELETE", configPath(false, "aw-exempt-check"))).status, 200)
        assert.strictEqual((yield* api.send("DELETE", configPath(false, `aw-delete`))).status, 200)
      }))
  }
)

// -----------------------------------------------------------------------------------------------------------------
// in process (the embedded cluster only)

describe.skipIf(onRealCluster)("admission webhooks in process", () => {
  const config = (port: number, path: string, extra: Obj = {}) =>
    ({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: `inproc${path.replace("/", "-")}` },
      webhooks: [{
        name: "inproc.aw.test",
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        timeoutSeconds: 2,
        clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
        rules: [{ operations: ["*"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
        ...extra
      }]
    }) as unknown as KubeObject

  it.effect(
    "TestCluster writes are denied by a validating webhook, and allowed once it is gone",
    () =>
      Effect.gen(function*() {
        const server = yield* startWebhookServer
        const port = (server.address() as AddressInfo).port
        const cluster = yield* TestCluster.make()
        yield* cluster.create(config(port, "/deny-code"))
        const exit = yield* Effect.exit(cluster.create(cm("default", "x") as KubeObject))
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as any).error : undefined
        assert.strictEqual(error.status.code, 403)
        assert.strictEqual(
          error.status.message,
          "admission webhook \"inproc.aw.test\" denied the request: not allowed here"
        )
        yield* cluster.delete({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          name: "inproc-deny-code"
        })
        const created = yield* cluster.create(cm("default", "x") as KubeObject)
        assert.strictEqual(created.metadata.name, "x")
      }),
    { timeout: 20_000 }
  )

  it.effect(
    "TestKube: KubeClient writes are patched by a mutating webhook and refused by a validating one",
    () =>
      Effect.gen(function*() {
        const server = yield* startWebhookServer
        const port = (server.address() as AddressInfo).port
        const cluster = yield* TestCluster.TestCluster
        const client = yield* TestKube.make()
        yield* cluster.create({
          ...config(port, "/label"),
          kind: "MutatingWebhookConfiguration",
          metadata: { name: "inproc-label" }
        } as KubeObject)
        yield* cluster.create(config(port, "/deny-code", { objectSelector: { matchLabels: { deny: "code" } } }))
        const created = yield* client.create(Resource.ConfigMap, {
          metadata: { name: "kube", namespace: "default" },
          data: { a: "1" }
        })
        assert.deepStrictEqual(created.metadata?.labels, { patched: "yes" })
        const error = yield* Effect.flip(client.create(Resource.ConfigMap, {
          metadata: { name: "denied", namespace: "default", labels: { deny: "code" } }
        }))
        assert.strictEqual(error._tag, "Forbidden")
        assert.strictEqual(
          (error as any).status.message,
          "admission webhook \"inproc.aw.test\" denied the request: not allowed here"
        )
      }).pipe(Effect.provide(TestCluster.layer)),
    { timeout: 20_000 }
  )

  it.effect("a webhook's timeoutSeconds runs on the fiber's Clock (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* startWebhookServer
      const port = (server.address() as AddressInfo).port
      const cluster = yield* TestCluster.make()
      yield* cluster.create(config(port, "/slow"))
      const fiber = yield* Effect.forkScoped(Effect.exit(cluster.create(cm("default", "slow") as KubeObject)), {
        startImmediately: true
      })
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.join(fiber)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as any).error : undefined
      assert.strictEqual(error.status.code, 500)
      assert.strictEqual(
        error.status.message,
        `Internal error occurred: ${failedCalling("inproc.aw.test", port, "/slow", "context deadline exceeded", 2)}`
      )
    }), { timeout: 20_000 })
})

// what the mutating webhooks change carried onto the request's object, and back (the object managedFields read)
// (JSON has no -0: integers from 0)
const Leaf = Schema.Union([Schema.String, Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 }))])
const Inner = Schema.Record(Schema.Literals(["x", "y"]), Leaf)
const Doc = Schema.Record(Schema.Literals(["a", "b", "c"]), Schema.Union([Leaf, Inner]))

describe("withChanges", () => {
  it.prop(
    "carries every change from one object to another, and nothing else",
    [Arbitrary.schema(Doc), Arbitrary.schema(Doc), Arbitrary.schema(Doc)],
    ([requested, mutated, view]) => {
      assert.deepStrictEqual(withChanges(mutated, mutated, requested), requested)
      assert.deepStrictEqual(withChanges(view, requested, requested), view)
      assert.deepStrictEqual(withChanges(requested, requested, mutated), mutated)
    },
    { arbitrary: { runs: 300 } }
  )
})
