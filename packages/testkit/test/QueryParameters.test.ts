/**
 * Boolean query parameters are read as kube-apiserver reads them (apimachinery's string → bool conversion):
 * only "0" and "false" in any case are false. Python's official client sends `watch=True`; a server that only
 * knew "true" answered it with a list, and the Python watch saw no event at all.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApiServer } from "../src/index.js"
import { request, watchLines } from "./support/drivers.js"
import * as Kubectl from "./support/kubectl.js"

const configMaps = "/api/v1/namespaces/default/configmaps"

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })(
  "TestApiServer: boolean query parameters",
  (it) => {
    it.effect(
      "watch=True, watch=1 and watch= start a watch; watch=False and watch=0 list",
      () =>
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const rv = yield* server.cluster.resourceVersion
          for (const value of ["True", "TRUE", "1", "", "yes"]) {
            const { lines } = yield* Effect.promise(() =>
              watchLines(server, `${configMaps}?watch=${value}&resourceVersion=${rv}&timeoutSeconds=1`, 1, () =>
                void request(server, "POST", configMaps, {
                  contentType: "application/json",
                  body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "q-" } })
                }))
            )
            assert.strictEqual(JSON.parse(lines[0]!).type, "ADDED", `watch=${value} is a watch`)
          }
          for (const value of ["False", "false", "0"]) {
            const listed = yield* Effect.promise(() =>
              request(server, "GET", `${configMaps}?watch=${value}`)
            )
            assert.strictEqual(JSON.parse(listed.body).kind, "ConfigMapList", `watch=${value} is a list`)
          }
        }),
      { timeout: 15_000 }
    )
  }
)

const ok = (server: TestApiServer.TestApiServer.Service, method: string, path: string, body?: unknown) =>
  Effect.promise(() =>
    request(
      server,
      method,
      path,
      body === undefined ? {} : { contentType: "application/json", body: JSON.stringify(body) }
    )
  )

const configMap = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { a: "1" },
  ...extra
})

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })(
  "TestApiServer: integer, option and unknown query parameters",
  (it) => {
    it.effect("integers are parsed as strconv.ParseInt: a bad value is a 400 with its message", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        for (
          const [query, message] of [
            ["limit=abc", "strconv.ParseInt: parsing \"abc\": invalid syntax"],
            ["limit=", "strconv.ParseInt: parsing \"\": invalid syntax"],
            ["limit=1.5", "strconv.ParseInt: parsing \"1.5\": invalid syntax"],
            ["limit=99999999999999999999", "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"],
            ["watch=1&timeoutSeconds=soon", "strconv.ParseInt: parsing \"soon\": invalid syntax"]
          ] as const
        ) {
          const r = yield* ok(server, "GET", `${configMaps}?${query}`)
          assert.strictEqual(r.status, 400, query)
          const status = JSON.parse(r.body)
          assert.strictEqual(status.reason, "BadRequest")
          assert.strictEqual(status.message, message)
        }
        // a sign is allowed; a limit below one is no limit; unknown parameters are ignored
        const listed = yield* ok(server, "GET", `${configMaps}?limit=-1&frobnicate=yes&limit=abc`)
        assert.strictEqual(listed.status, 200)
        assert.strictEqual(JSON.parse(listed.body).kind, "ConfigMapList")
        assert.strictEqual((yield* ok(server, "GET", `${configMaps}?limit=%2B1`)).status, 200)
      }))

    it.effect("ListOptions are validated as ValidateListOptions does (422 ListOptions.meta.k8s.io)", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const cases: ReadonlyArray<readonly [string, string]> = [
          [
            "resourceVersionMatch=Exact",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
          ],
          [
            "resourceVersionMatch=Newest&resourceVersion=1",
            "resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""
          ],
          ["sendInitialEvents=true", "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"],
          [
            "watch=1&sendInitialEvents=true",
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
          ],
          [
            "watch=1&resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is " +
            "provided"
          ]
        ]
        for (const [query, message] of cases) {
          const r = yield* ok(server, "GET", `${configMaps}?${query}`)
          assert.strictEqual(r.status, 422, query)
          const status = JSON.parse(r.body)
          assert.strictEqual(status.message, `ListOptions.meta.k8s.io "" is invalid: ${message}`)
          assert.strictEqual(status.details.kind, "ListOptions")
        }
        const two = JSON.parse((yield* ok(server, "GET", `${configMaps}?resourceVersionMatch=Exact&continue=x`)).body)
        assert.strictEqual(
          two.message,
          "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden " +
            "unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden " +
            "when continue is provided]"
        )
        assert.strictEqual(two.details.causes.length, 2)
      }))

    it.effect("DeleteOptions from the query: gracePeriodSeconds is an integer, propagationPolicy is validated", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* ok(server, "POST", configMaps, configMap("del-q"))
        const grace = yield* ok(server, "DELETE", `${configMaps}/del-q?gracePeriodSeconds=now`)
        assert.strictEqual(grace.status, 400)
        assert.strictEqual(JSON.parse(grace.body).message, "strconv.ParseInt: parsing \"now\": invalid syntax")
        const policy = yield* ok(server, "DELETE", `${configMaps}/del-q?propagationPolicy=Later`)
        assert.strictEqual(policy.status, 422)
        assert.deepStrictEqual(JSON.parse(policy.body).details, {
          group: "meta.k8s.io",
          kind: "DeleteOptions",
          causes: [{
            reason: "FieldValueNotSupported",
            message:
              "Unsupported value: \"Later\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
            field: "propagationPolicy"
          }]
        })
        assert.strictEqual(
          JSON.parse(policy.body).message,
          "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Later\": supported " +
            "values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        )
        const both = yield* ok(server, "DELETE", `${configMaps}/del-q`, {
          propagationPolicy: "Orphan",
          orphanDependents: true
        })
        assert.strictEqual(both.status, 422)
        assert.include(JSON.parse(both.body).message, "orphanDependents and deletionPropagation cannot be both set")
        const gone = yield* ok(
          server,
          "DELETE",
          `${configMaps}/del-q?gracePeriodSeconds=0&propagationPolicy=Background`
        )
        assert.strictEqual(gone.status, 200)
      }))

    it.effect("fieldValidation: Strict rejects unknown fields, Warn (the default) warns, Ignore is silent", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const unknown = configMap("fv", { spec: { x: 1 }, metadata: { name: "fv", colour: "red" } })
        const strict = yield* ok(server, "POST", `${configMaps}?fieldValidation=Strict`, unknown)
        assert.strictEqual(strict.status, 400)
        assert.strictEqual(
          JSON.parse(strict.body).message,
          "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: " +
            "unknown field \"metadata.colour\", unknown field \"spec\""
        )
        const warned = yield* ok(server, "POST", configMaps, unknown)
        assert.strictEqual(warned.status, 201)
        // two Warning headers (Node's client joins them with ", ")
        assert.strictEqual(
          warned.headers.warning,
          "299 - \"unknown field \\\"metadata.colour\\\"\", 299 - \"unknown field \\\"spec\\\"\""
        )
        const ignored = yield* ok(server, "PUT", `${configMaps}/fv?fieldValidation=Ignore`, unknown)
        assert.strictEqual(ignored.status, 200)
        assert.isUndefined(ignored.headers.warning)
        const clean = yield* ok(server, "PUT", `${configMaps}/fv?fieldValidation=Strict`, configMap("fv"))
        assert.strictEqual(clean.status, 200)
        const patch = yield* Effect.promise(() =>
          request(server, "PATCH", `${configMaps}/fv?fieldValidation=Strict`, {
            contentType: "application/merge-patch+json",
            body: JSON.stringify({ data: { b: "2" }, extra: true })
          })
        )
        assert.strictEqual(patch.status, 422)
        const status = JSON.parse(patch.body)
        assert.match(
          status.message,
          /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field \\?"extra\\?"$/
        )
        assert.strictEqual(status.details.causes[0].field, "patch")
        const badValue = yield* ok(server, "POST", `${configMaps}?fieldValidation=strict`, configMap("fv2"))
        assert.strictEqual(badValue.status, 422)
        assert.strictEqual(
          JSON.parse(badValue.body).message,
          "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported " +
            "values: \"\", \"Ignore\", \"Strict\", \"Warn\""
        )
        // nested objects are checked against their own models
        const deployment = {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "fv" },
          spec: {
            selector: { matchLabels: { app: "fv" } },
            template: {
              metadata: { labels: { app: "fv" } },
              spec: { containers: [{ name: "c", image: "nginx", imagePolicy: "Always" }] }
            }
          }
        }
        const nested = yield* ok(
          server,
          "POST",
          "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict",
          deployment
        )
        assert.strictEqual(nested.status, 400)
        assert.strictEqual(
          JSON.parse(nested.body).message,
          "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: " +
            "unknown field \"spec.template.spec.containers[0].imagePolicy\""
        )
      }))

    it.effect("pretty=true indents the JSON answer, as curl's user agent does", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const pretty = yield* ok(server, "GET", "/api/v1/namespaces/default?pretty=true")
        assert.match(pretty.body, /^\{\n {2}"apiVersion": "v1",\n {2}"kind": "Namespace",\n/)
        const plain = yield* ok(server, "GET", "/api/v1/namespaces/default?pretty=nope")
        assert.notInclude(plain.body, "\n")
      }))
  }
)

const { run: kubectl } = Kubectl.make("testkit-query-")

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })(
  "kubectl and server-side field validation",
  (it) => {
    it.effect(
      "kubectl's default (Strict) is a 400 naming the unknown fields; --validate=warn prints warnings",
      () =>
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const manifest = (name: string) =>
            `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, colour: red}\ndata: {a: "1"}\n`
          const strict = yield* kubectl(server, ["create", "-f", "-"], manifest("k1"))
          assert.strictEqual(strict.code, 1)
          assert.strictEqual(
            strict.stderr,
            "Error from server (BadRequest): error when creating \"STDIN\": ConfigMap in version \"v1\" cannot be " +
              "handled as a ConfigMap: strict decoding error: unknown field \"metadata.colour\"\n"
          )
          const warn = yield* kubectl(server, ["apply", "--validate=warn", "-f", "-"], manifest("k2"))
          assert.strictEqual(warn.code, 0, warn.stderr)
          assert.strictEqual(warn.stdout, "configmap/k2 created\n")
          assert.strictEqual(warn.stderr, "Warning: unknown field \"metadata.colour\"\n")
          const ignore = yield* kubectl(server, ["apply", "--validate=false", "-f", "-"], manifest("k3"))
          assert.strictEqual(ignore.code, 0, ignore.stderr)
          assert.strictEqual(ignore.stderr, "")
        }),
      { timeout: 30_000 }
    )

    it.effect("custom resources: the fields pruning would drop are the unknown fields", () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        assert.strictEqual((yield* kubectl(server, ["apply", "-f", "-"], crd)).code, 0)
        const gadget = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 1, colour: red}\n"
        const body = { apiVersion: "example.com/v1", kind: "Gadget", metadata: { name: "g1" }, spec: { size: 1, x: 1 } }
        const path = "/apis/example.com/v1/namespaces/default/gadgets"
        // the CRD's kind may take a moment to be served by kubectl's discovery; the HTTP answer is immediate
        const strict = yield* ok(server, "POST", `${path}?fieldValidation=Strict`, body)
        assert.strictEqual(strict.status, 400)
        assert.strictEqual(
          JSON.parse(strict.body).message,
          "Gadget in version \"v1\" cannot be handled as a Gadget: strict decoding error: unknown field \"spec.x\""
        )
        const created = yield* kubectl(server, ["create", "-f", "-"], gadget)
        assert.strictEqual(created.code, 1)
        assert.include(created.stderr, "strict decoding error: unknown field \"spec.colour\"")
        const warned = yield* kubectl(server, ["create", "--validate=warn", "-f", "-", "-o", "json"], gadget)
        assert.strictEqual(warned.code, 0, warned.stderr)
        assert.strictEqual(warned.stderr, "Warning: unknown field \"spec.colour\"\n")
        assert.deepStrictEqual(JSON.parse(warned.stdout).spec, { size: 1 })
      }), { timeout: 30_000 })
  }
)
