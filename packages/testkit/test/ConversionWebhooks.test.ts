/**
 * Conversion webhooks: the embedded cluster calls a CRD's conversion webhook as kube-apiserver does. A `node:https`
 * webhook server on 127.0.0.1 (certificates from `@reconcile/kube/Certificates`) answers ConversionReviews with
 * scripted behaviours; CRDs with two versions (v1alpha1 `{ count }`, v1 `{ replicas }`, stored) point at them; the
 * cluster is driven over HTTPS and every answer a client sees is asserted: writes, reads, lists and watches across
 * versions, dry runs, an admission webhook matching the other version, and kube-apiserver's errors for a webhook
 * that fails, answers wrongly or cannot be reached.
 *
 * Differential: with `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`) the same scenarios run on the real
 * kube-apiserver and must give the same answers.
 */
import { assert, layer } from "@effect/vitest"
import * as Certificates from "@reconcile/kube/Certificates"
import { Effect } from "effect"
import type { AddressInfo } from "node:net"
import * as WebhookApi from "./support/webhookApi.js"
import { Api, onRealCluster, type Reply } from "./support/webhookApi.js"

type Obj = Record<string, any>

// -----------------------------------------------------------------------------------------------------------------
// the webhook server

const ca = Certificates.issue({ commonName: "conversion-test-ca", ca: true })
const serving = Certificates.issue({ commonName: "webhook", usages: ["server"], ips: ["127.0.0.1"], issuer: ca })
const caBundle = Buffer.from(ca.cert).toString("base64")

/** Every review received: the path it was sent to and its request. */
const received: Array<{ readonly path: string; readonly review: Obj }> = []

/** v1alpha1 `spec.count` ⇄ v1 `spec.replicas`; everything else kept. */
const convert = (object: Obj, desired: string): Obj => {
  const { count, replicas, ...rest } = object.spec ?? {}
  const spec = desired.endsWith("/v1")
    ? { ...rest, ...(count !== undefined ? { replicas: count } : {}) }
    : { ...rest, ...(replicas !== undefined ? { count: replicas } : {}) }
  return { ...object, apiVersion: desired, spec }
}

/** What the webhook at `path` answers (a `response`, or a raw text with a code). */
const behaviour = (path: string, request: Obj): { readonly code?: number; readonly text?: string; response?: Obj } => {
  const objects: Array<Obj> = request.objects ?? []
  const converted = objects.map((o) => convert(o, request.desiredAPIVersion))
  const success = { status: "Success" }
  switch (path) {
    case "/convert":
      return { response: { result: success, convertedObjects: converted } }
    case "/fail":
      return { response: { result: { status: "Failure", message: "no conversion today" }, convertedObjects: [] } }
    case "/wrong-uid":
      return { response: { uid: "wrong", result: success, convertedObjects: converted } }
    case "/two":
      return { response: { result: success, convertedObjects: [...converted, ...converted] } }
    case "/rename":
      return {
        response: {
          result: success,
          convertedObjects: converted.map((o) => ({ ...o, metadata: { ...o.metadata, name: "renamed" } }))
        }
      }
    case "/status-500":
      return { code: 500, text: "boom" }
    default:
      return { code: 404, text: "no such webhook" }
  }
}

const startWebhookServer = WebhookApi.reviewServer(serving, (path, review) => {
  received.push({ path, review })
  const b = behaviour(path, review.request)
  return b.text !== undefined ? b : {
    json: {
      apiVersion: review.apiVersion,
      kind: "ConversionReview",
      response: { uid: review.request.uid, ...b.response }
    }
  }
})

// -----------------------------------------------------------------------------------------------------------------
// scenarios

const ns = "default"

/** The group of scenario `id`'s CRD. */
const groupOf = (id: string) => `${id}.cw.test`

/** The path of scenario `id`'s widgets in `version`. */
const widgets = (id: string, version: string, name?: string, query = "") =>
  `/apis/${groupOf(id)}/${version}/namespaces/${ns}/widgets${name === undefined ? "" : `/${name}`}${query}`

const schema = (spec: Obj) => ({
  openAPIV3Schema: {
    type: "object",
    properties: { spec: { type: "object", properties: spec } }
  }
})

/**
 * Scenario `id`: a CRD of Widgets in v1alpha1 (`count`) and v1 (`replicas`, stored), converted by the webhook at
 * `url`; returned once both versions are served (the real kube-apiserver serves a new CRD after a moment).
 */
const scenario = (id: string, url: string) =>
  Effect.gen(function*() {
    const api = yield* Api
    const group = groupOf(id)
    const created = yield* api.send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
        versions: [
          { name: "v1alpha1", served: true, storage: false, schema: schema({ count: { type: "integer" } }) },
          {
            name: "v1",
            served: true,
            storage: true,
            schema: schema({ replicas: { type: "integer" }, color: { type: "string" } })
          }
        ],
        conversion: {
          strategy: "Webhook",
          webhook: { conversionReviewVersions: ["v1"], clientConfig: { url, caBundle } }
        }
      }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    for (let i = 0; i < 100; i++) {
      const [alpha, v1] = [
        yield* api.send("GET", widgets(id, "v1alpha1")),
        yield* api.send("GET", widgets(id, "v1"))
      ]
      if (v1.status === 200 && alpha.status !== 404) break
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
    }
  })

const widget = (version: "v1alpha1" | "v1", name: string, spec: Obj, id: string, metadata: Obj = {}) => ({
  apiVersion: `${groupOf(id)}/${version}`,
  kind: "Widget",
  metadata: { name, ...metadata },
  spec
})

/** A failure as kube-apiserver answers a conversion error: 500, no reason, the message. */
const assertFailure = (reply: Reply, message: string | RegExp) => {
  assert.strictEqual(reply.status, 500, JSON.stringify(reply.body))
  assert.strictEqual(reply.body.kind, "Status")
  assert.strictEqual(reply.body.code, 500)
  assert.isUndefined(reply.body.reason, JSON.stringify(reply.body))
  if (typeof message === "string") assert.strictEqual(reply.body.message, message)
  else assert.match(reply.body.message, message)
}

/** The reviews sent to `path` for scenario `id` since `from`. */
const reviewsTo = (path: string, id: string, from = 0) =>
  received.slice(from).filter((r) =>
    r.path === path && String(r.review.request.desiredAPIVersion).startsWith(`${groupOf(id)}/`)
  ).map((r) => r.review)

const timeout = onRealCluster ? 120_000 : 30_000

layer(WebhookApi.layer(startWebhookServer), { timeout, excludeTestServices: true })(
  "conversion webhooks over HTTPS",
  (it) => {
    it.effect("objects cross versions through the webhook: create, get, list, update, patch, dry run, delete", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const id = "convert"
        const url = `https://127.0.0.1:${api.webhookPort}/convert`
        yield* scenario(id, url)
        const from = received.length

        // created as v1alpha1: stored as v1 (the webhook asked for v1), answered as v1alpha1
        const created = yield* api.send("POST", widgets(id, "v1alpha1"), widget("v1alpha1", "a", { count: 2 }, id))
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        assert.strictEqual(created.body.apiVersion, `${groupOf(id)}/v1alpha1`)
        assert.deepStrictEqual(created.body.spec, { count: 2 })
        const toV1 = reviewsTo("/convert", id, from).find((r) => r.request.desiredAPIVersion === `${groupOf(id)}/v1`)
        assert.isDefined(toV1)
        assert.strictEqual(toV1!.apiVersion, "apiextensions.k8s.io/v1")
        assert.strictEqual(toV1!.kind, "ConversionReview")
        assert.lengthOf(toV1!.request.objects, 1)
        assert.strictEqual(toV1!.request.objects[0].apiVersion, `${groupOf(id)}/v1alpha1`)
        assert.deepStrictEqual(toV1!.request.objects[0].spec, { count: 2 })
        assert.match(toV1!.request.uid, /^[0-9a-f-]{36}$/)

        const asV1 = yield* api.send("GET", widgets(id, "v1", "a"))
        assert.strictEqual(asV1.body.apiVersion, `${groupOf(id)}/v1`)
        assert.deepStrictEqual(asV1.body.spec, { replicas: 2 })
        const asAlpha = yield* api.send("GET", widgets(id, "v1alpha1", "a"))
        assert.deepStrictEqual(asAlpha.body.spec, { count: 2 })
        assert.strictEqual(asAlpha.body.metadata.uid, asV1.body.metadata.uid)
        assert.strictEqual(asAlpha.body.metadata.resourceVersion, asV1.body.metadata.resourceVersion)

        // created as v1 with a field only v1 has: the webhook keeps it, v1alpha1's schema prunes it on read
        const v1 = yield* api.send("POST", widgets(id, "v1"), widget("v1", "b", { replicas: 3, color: "red" }, id))
        assert.strictEqual(v1.status, 201, JSON.stringify(v1.body))
        const list = yield* api.send("GET", widgets(id, "v1alpha1"))
        assert.strictEqual(list.status, 200, JSON.stringify(list.body))
        assert.strictEqual(list.body.apiVersion, `${groupOf(id)}/v1alpha1`)
        assert.deepStrictEqual(
          list.body.items.map((o: Obj) => [o.apiVersion, o.metadata.name, o.spec]),
          [[`${groupOf(id)}/v1alpha1`, "a", { count: 2 }], [`${groupOf(id)}/v1alpha1`, "b", { count: 3 }]]
        )

        // updated and patched through v1alpha1: the change is stored in v1
        const put = yield* api.send(
          "PUT",
          widgets(id, "v1alpha1", "a"),
          { ...asAlpha.body, spec: { count: 5 } }
        )
        assert.strictEqual(put.status, 200, JSON.stringify(put.body))
        assert.deepStrictEqual(put.body.spec, { count: 5 })
        assert.strictEqual(put.body.metadata.generation, 2)
        const patched = yield* api.send(
          "PATCH",
          widgets(id, "v1alpha1", "a"),
          { spec: { count: 6 } },
          "application/merge-patch+json"
        )
        assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
        assert.deepStrictEqual(patched.body.spec, { count: 6 })
        assert.deepStrictEqual((yield* api.send("GET", widgets(id, "v1", "a"))).body.spec, { replicas: 6 })
        // an update that changes nothing as stored stores nothing
        const same = yield* api.send("PUT", widgets(id, "v1alpha1", "a"), patched.body)
        assert.strictEqual(same.body.metadata.resourceVersion, patched.body.metadata.resourceVersion)

        // a dry run converts (the webhook is called) and stores nothing
        const before = received.length
        const dry = yield* api.send(
          "POST",
          widgets(id, "v1alpha1", undefined, "?dryRun=All"),
          widget("v1alpha1", "dry", { count: 9 }, id)
        )
        assert.strictEqual(dry.status, 201, JSON.stringify(dry.body))
        assert.deepStrictEqual(dry.body.spec, { count: 9 })
        assert.isAbove(reviewsTo("/convert", id, before).length, 0)
        assert.strictEqual((yield* api.send("GET", widgets(id, "v1", "dry"))).status, 404)

        // deleted through v1alpha1 (held by a finalizer: the answer is the object, in v1alpha1), then gone
        const held = yield* api.send(
          "PATCH",
          widgets(id, "v1", "b"),
          { metadata: { finalizers: ["cw.test/hold"] } },
          "application/merge-patch+json"
        )
        assert.strictEqual(held.status, 200, JSON.stringify(held.body))
        const deleting = yield* api.send("DELETE", widgets(id, "v1alpha1", "b"))
        assert.strictEqual(deleting.status, 200, JSON.stringify(deleting.body))
        assert.strictEqual(deleting.body.apiVersion, `${groupOf(id)}/v1alpha1`)
        assert.deepStrictEqual(deleting.body.spec, { count: 3 })
        assert.isString(deleting.body.metadata.deletionTimestamp)
        const released = yield* api.send(
          "PATCH",
          widgets(id, "v1alpha1", "b"),
          { metadata: { finalizers: null } },
          "application/merge-patch+json"
        )
        assert.strictEqual(released.status, 200, JSON.stringify(released.body))
        assert.strictEqual((yield* api.send("GET", widgets(id, "v1", "b"))).status, 404)
      }))

    it.effect("a watch in the version not stored gets every event converted, in order", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const id = "watch"
        yield* scenario(id, `https://127.0.0.1:${api.webhookPort}/convert`)
        const first = yield* api.send("POST", widgets(id, "v1"), widget("v1", "w1", { replicas: 1 }, id))
        const rv = first.body.metadata.resourceVersion
        for (let i = 2; i <= 4; i++) {
          yield* api.send("POST", widgets(id, "v1"), widget("v1", `w${i}`, { replicas: i }, id))
        }
        yield* api.send("PATCH", widgets(id, "v1", "w2"), { spec: { replicas: 20 } }, "application/merge-patch+json")
        yield* api.send("DELETE", widgets(id, "v1", "w3"))
        // a watch from the first object's resourceVersion, ended by the server after a second
        const watched = yield* api.send(
          "GET",
          widgets(id, "v1alpha1", undefined, `?watch=1&resourceVersion=${rv}&timeoutSeconds=1`)
        )
        assert.strictEqual(watched.status, 200)
        const events = String(watched.body.text ?? JSON.stringify(watched.body)).trim().split("\n").map((l) =>
          JSON.parse(l) as Obj
        )
        assert.deepStrictEqual(
          events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec]),
          [
            ["ADDED", `${groupOf(id)}/v1alpha1`, "w2", { count: 2 }],
            ["ADDED", `${groupOf(id)}/v1alpha1`, "w3", { count: 3 }],
            ["ADDED", `${groupOf(id)}/v1alpha1`, "w4", { count: 4 }],
            ["MODIFIED", `${groupOf(id)}/v1alpha1`, "w2", { count: 20 }],
            ["DELETED", `${groupOf(id)}/v1alpha1`, "w3", { count: 3 }]
          ]
        )
      }))

    it.effect("an admission webhook of the stored version is sent a write of the other converted, its patch converted back", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const id = "admit"
        yield* scenario(id, `https://127.0.0.1:${api.webhookPort}/convert`)
        const admission: Array<Obj> = []
        // a mutating webhook on v1 only: the webhook server's "/convert" path answers ConversionReviews, so the
        // admission webhook runs in this test's own server
        const server = yield* WebhookApi.reviewServer(serving, (_path, review) => {
          admission.push(review.request)
          const patch = [{ op: "replace", path: "/spec/replicas", value: 7 }]
          return {
            json: {
              apiVersion: "admission.k8s.io/v1",
              kind: "AdmissionReview",
              response: {
                uid: review.request.uid,
                allowed: true,
                patchType: "JSONPatch",
                patch: Buffer.from(JSON.stringify(patch)).toString("base64")
              }
            }
          }
        })
        const port = (server.address() as AddressInfo).port
        const config = yield* api.send("POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "MutatingWebhookConfiguration",
          metadata: { name: "cw-admit" },
          webhooks: [{
            name: "replicas.cw.test",
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            failurePolicy: "Fail",
            matchPolicy: "Equivalent",
            timeoutSeconds: 5,
            clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle },
            rules: [{
              operations: ["CREATE"],
              apiGroups: [groupOf(id)],
              apiVersions: ["v1"],
              resources: ["widgets"]
            }]
          }]
        })
        assert.strictEqual(config.status, 201, JSON.stringify(config.body))
        // the real kube-apiserver reads configurations through an informer: dry runs until the webhook is called
        let created: Reply | undefined
        for (let i = 0; i < 100 && admission.length === 0; i++) {
          created = yield* api.send(
            "POST",
            widgets(id, "v1alpha1", undefined, "?dryRun=All"),
            widget("v1alpha1", "probe", { count: 1 }, id)
          )
          if (admission.length === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        }
        assert.isAbove(admission.length, 0, JSON.stringify(created?.body))
        admission.length = 0
        const made = yield* api.send("POST", widgets(id, "v1alpha1"), widget("v1alpha1", "m", { count: 1 }, id))
        assert.strictEqual(made.status, 201, JSON.stringify(made.body))
        assert.deepStrictEqual(made.body.spec, { count: 7 })
        const request = admission.at(-1)!
        assert.deepStrictEqual(request.kind, { group: groupOf(id), version: "v1", kind: "Widget" })
        assert.deepStrictEqual(request.requestKind, { group: groupOf(id), version: "v1alpha1", kind: "Widget" })
        assert.strictEqual(request.object.apiVersion, `${groupOf(id)}/v1`)
        assert.deepStrictEqual(request.object.spec, { replicas: 1 })
        assert.deepStrictEqual((yield* api.send("GET", widgets(id, "v1", "m"))).body.spec, { replicas: 7 })
        yield* api.send("DELETE", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/cw-admit")
      }))

    it.effect("a webhook's Failure, or a call that fails, is kube-apiserver's 500 and nothing is stored", () =>
      Effect.gen(function*() {
        const api = yield* Api
        const port = yield* WebhookApi.closedPort
        const source = (id: string, version: string) => `${groupOf(id)}/${version}, Kind=Widget`
        const cases: ReadonlyArray<readonly [string, string, (id: string) => string | RegExp]> = [
          [
            "fail",
            `https://127.0.0.1:${api.webhookPort}/fail`,
            (id) => `conversion webhook for ${source(id, "v1alpha1")} failed: no conversion today`
          ],
          [
            "status",
            `https://127.0.0.1:${api.webhookPort}/status-500`,
            (id) =>
              `conversion webhook for ${
                source(id, "v1alpha1")
              } failed: an error on the server ("boom") has prevented the request from succeeding`
          ],
          ["uid", `https://127.0.0.1:${api.webhookPort}/wrong-uid`, (id) =>
            new RegExp(
              `^conversion webhook for ${
                source(id, "v1alpha1")
              } failed: expected response\\.uid="[0-9a-f-]{36}", got "wrong"$`
            )],
          [
            "two",
            `https://127.0.0.1:${api.webhookPort}/two`,
            (id) => `conversion webhook for ${source(id, "v1alpha1")} returned 2 objects, expected 1`
          ],
          [
            "rename",
            `https://127.0.0.1:${api.webhookPort}/rename`,
            (id) =>
              `conversion webhook for ${
                source(id, "v1alpha1")
              } returned invalid object: must have the same name: x != renamed`
          ],
          [
            "down",
            `https://127.0.0.1:${port}/convert`,
            (id) =>
              `conversion webhook for ${
                source(id, "v1alpha1")
              } failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused`
          ]
        ]
        for (const [id, url, message] of cases) {
          yield* scenario(id, url)
          const refused = yield* api.send("POST", widgets(id, "v1alpha1"), widget("v1alpha1", "x", { count: 1 }, id))
          assertFailure(refused, message(id))
          assert.strictEqual((yield* api.send("GET", widgets(id, "v1", "x"))).status, 404)
        }
        // stored as v1 (no conversion), it cannot be read as v1alpha1: the same error, from v1
        const id = "fail"
        const stored = yield* api.send("POST", widgets(id, "v1"), widget("v1", "y", { replicas: 1 }, id))
        assert.strictEqual(stored.status, 201, JSON.stringify(stored.body))
        assertFailure(
          yield* api.send("GET", widgets(id, "v1alpha1", "y")),
          `conversion webhook for ${source(id, "v1")} failed: no conversion today`
        )
        assert.strictEqual((yield* api.send("GET", widgets(id, "v1", "y"))).status, 200)
      }))

    // kube-apiserver serves lists and watches from its watch cache, where a conversion fails otherwise
    // (docs/testkit.md, "Where it knowingly differs"): the embedded cluster answers the conversion's error
    it.effect.skipIf(onRealCluster)(
      "a list or watch with an object that cannot be converted answers the error",
      () =>
        Effect.gen(function*() {
          const api = yield* Api
          const id = "fail-list"
          yield* scenario(id, `https://127.0.0.1:${api.webhookPort}/fail`)
          const stored = yield* api.send("POST", widgets(id, "v1"), widget("v1", "z", { replicas: 1 }, id))
          assert.strictEqual(stored.status, 201, JSON.stringify(stored.body))
          const message = `conversion webhook for ${groupOf(id)}/v1, Kind=Widget failed: no conversion today`
          assertFailure(yield* api.send("GET", widgets(id, "v1alpha1")), message)
          const watched = yield* api.send("GET", widgets(id, "v1alpha1", undefined, "?watch=1&timeoutSeconds=1"))
          const events = String(watched.body.text ?? JSON.stringify(watched.body)).trim().split("\n").map((l) =>
            JSON.parse(l) as Obj
          )
          assert.deepStrictEqual(events.map((e) => [e.type, e.object.code, e.object.message]), [[
            "ERROR",
            500,
            message
          ]])
        })
    )
  }
)
