/**
 * Request bodies, patches, selectors and list parameters that kube-apiserver refuses, answered in its words (each
 * expected text checked against a real kube-apiserver v1.36.3): Go's encoding/json syntax errors, a custom resource
 * without `kind`, duplicate fields under `fieldValidation=Strict|Warn`, the patched object a Strict patch quotes
 * (as Go's json-patch marshals it), labels.Parse's errors, the storage's resourceVersion and continue-token errors.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { LabelSelector, TestApiServer } from "../src/index.js"
import * as Json from "../src/internal/json.js"
import { request } from "./support/drivers.js"

describe("Go's JSON errors", () => {
  it("the first syntax error, worded as encoding/json words it", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["{not json", "invalid character 'n' looking for beginning of object key string"],
      ["", "unexpected end of JSON input"],
      ["[1 2]", "invalid character '2' after array element"],
      ["{\"a\" 1}", "invalid character '1' after object key"],
      ["{\"a\":1 \"b\":2}", "invalid character '\"' after object key:value pair"],
      ["nul", "invalid character ' ' in literal null (expecting 'l')"],
      ["01", "invalid character '1' after top-level value"],
      ["1.x", "invalid character 'x' after decimal point in numeric literal"],
      ["'x'", "invalid character '\\'' looking for beginning of value"],
      ["{\"a\":[1,{\"b\":null}]}", undefined]
    ]
    for (const [text, error] of cases) assert.strictEqual(Json.goScan(text).error, error, text)
    assert.strictEqual(
      Json.goScan(Uint8Array.of(0x81)).error,
      "invalid character '\\u0081' looking for beginning of value"
    )
  })

  it("repeated object keys by path", () => {
    const keys = Json.goScan("{\"a\":1,\"a\":2,\"b\":{\"c\":[{\"d\":1,\"d\":2}]}}").keys
    assert.deepStrictEqual(keys.filter((k) => k.duplicate).map((k) => k.path), ["a", "b.c[0].d"])
  })
})

describe("LabelSelector: labels.Parse's errors", () => {
  const message = (selector: string) =>
    Result.match(LabelSelector.parse(selector), { onSuccess: () => "ok", onFailure: (m) => m })
  it("parse errors, inside a requirement or between them", () => {
    assert.strictEqual(message("tier in (web"), "unable to parse requirement: found '', expected: ',' or ')'")
    assert.strictEqual(message("tier in web"), "unable to parse requirement: found 'web' expected: '('")
    assert.strictEqual(message("tier,"), "found '', expected: identifier after ','")
    assert.strictEqual(message(",tier"), "found ',', expected: !, identifier, or 'end of string'")
    assert.strictEqual(message("tier=a b"), "found 'b', expected: ',' or 'end of string'")
    assert.strictEqual(message("tier in ()"), "ok")
  })
  it("invalid keys and values as field errors, values sorted and aggregated", () => {
    assert.strictEqual(
      message("/a=b"),
      "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"
    )
    assert.strictEqual(
      message("tier>abc"),
      "unable to parse requirement: values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer"
    )
    const value = (v: string, i: number) =>
      `values[${i}][tier]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric ` +
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or " +
      "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    assert.strictEqual(message("tier=-bad-"), `unable to parse requirement: ${value("-bad-", 0)}`)
    assert.strictEqual(
      message("tier in (z,-x-,-w-)"),
      `unable to parse requirement: [${value("-w-", 0)}, ${value("-x-", 1)}]`
    )
  })
})

const configMaps = "/api/v1/namespaces/default/configmaps"

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gizmos.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: { spec: { type: "object", properties: { n: { type: "integer" } } } }
        }
      }
    }]
  }
}

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("TestApiServer: refused bodies", (it) => {
  it.effect("metadata of the wrong JSON type, a body of another kind, YAML 1.1 booleans: Go's typed decoding", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const post = (body: string, contentType = "application/json") =>
        Effect.map(
          Effect.promise(() => request(server, "POST", configMaps, { body, contentType })),
          (r) => ({ status: r.status, message: JSON.parse(r.body).message as string | undefined })
        )
      const cannot = (what: string) => `ConfigMap in version "v1" cannot be handled as a ConfigMap: ${what}`
      const cases: ReadonlyArray<readonly [unknown, string | undefined]> = [
        [{ name: 5 }, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"],
        [
          { name: "typed-a", labels: { x: 1 } },
          "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
        ],
        [
          { name: "typed-b", labels: "x" },
          "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"
        ],
        [
          { name: "typed-c", annotations: [1] },
          "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of type map[string]string"
        ],
        [{ name: "typed-d", labels: { x: null } }, undefined],
        [{ name: null, generateName: "typed-" }, undefined]
      ]
      for (const [metadata, error] of cases) {
        const answer = yield* post(JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata }))
        assert.deepStrictEqual(
          answer,
          error === undefined ? { status: 201, message: undefined } : {
            status: 400,
            message: cannot(error)
          },
          JSON.stringify(metadata)
        )
      }
      const stored = yield* Effect.promise(() => request(server, "GET", `${configMaps}/typed-d`))
      assert.deepStrictEqual(JSON.parse(stored.body).metadata.labels, { x: "" })
      const secret = yield* post(JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name: "typed-s" } }))
      assert.strictEqual(
        secret.message,
        `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`
      )
      const yes = yield* post("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n", "application/yaml")
      assert.deepStrictEqual(yes, {
        status: 400,
        message: cannot("json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.name of type string")
      })
    }))

  it.effect("a body that is not JSON, a custom resource without kind, duplicate fields under Strict and Warn", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const call = (method: string, path: string, body: string, contentType = "application/json") =>
        Effect.promise(() => request(server, method, path, { body, contentType }))
      const notJson = yield* call("POST", configMaps, "{not json")
      assert.strictEqual(notJson.status, 400)
      assert.strictEqual(
        JSON.parse(notJson.body).message,
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse " +
          "error: invalid character 'n' looking for beginning of object key string ({not json)"
      )

      assert.strictEqual(
        (yield* call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", JSON.stringify(crd))).status,
        201
      )
      const kindless = JSON.stringify({ apiVersion: "example.com/v1", metadata: { name: "g" } })
      const missing = yield* call("POST", "/apis/example.com/v1/namespaces/default/gizmos", kindless)
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(
        JSON.parse(missing.body).message,
        `the object provided is unrecognized (must be of type Gizmo): Object 'Kind' is missing in '${kindless}' ` +
          "({\"apiVersion\":\"example.com/v1\" ...)"
      )

      const twice = `{"apiVersion":"v1","kind":"ConfigMap","zz":1,"metadata":{"name":"d"},"data":{"k":"1","k":"2"}}`
      const strict = yield* call("POST", `${configMaps}?fieldValidation=Strict`, twice)
      assert.strictEqual(strict.status, 400)
      assert.strictEqual(
        JSON.parse(strict.body).message,
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"zz\", " +
          "duplicate field \"data.k\""
      )
      const warned = yield* call("POST", `${configMaps}?fieldValidation=Warn`, twice)
      assert.strictEqual(warned.status, 201)
      assert.include(String(warned.headers.warning), "duplicate field \\\"data.k\\\"")
    }))

  it.effect("a Strict merge patch quotes the patched object as Go marshals it; patches that are not JSON", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const call = (method: string, path: string, body: string, contentType: string) =>
        Effect.promise(() => request(server, method, path, { body, contentType }))
      const merge = "application/merge-patch+json"
      const created = yield* call(
        "POST",
        configMaps,
        JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "m", labels: { b: "1", a: "2" } } }),
        "application/json"
      )
      const meta = JSON.parse(created.body).metadata
      const refused = yield* call(
        "PATCH",
        `${configMaps}/m?fieldValidation=Strict`,
        `{"extra":{"z":1,"a":null}}`,
        merge
      )
      assert.strictEqual(refused.status, 422)
      // keys the patch reaches sorted, metadata as Go's ObjectMeta orders its fields, the patch's nulls dropped
      const patched = `{"apiVersion":"v1","extra":{"z":1},"kind":"ConfigMap","metadata":{"name":"m","namespace":` +
        `"default","uid":"${meta.uid}","resourceVersion":"${meta.resourceVersion}","creationTimestamp":` +
        `"${meta.creationTimestamp}","labels":{"a":"2","b":"1"},"managedFields":${
          JSON.stringify(meta.managedFields.map((m: Record<string, unknown>) => ({
            manager: m.manager,
            operation: m.operation,
            apiVersion: m.apiVersion,
            time: m.time,
            fieldsType: m.fieldsType,
            fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:a": {}, "f:b": {} } } }
          })))
        }}}`
      assert.strictEqual(
        JSON.parse(refused.body).message,
        ` "" is invalid: patch: Invalid value: ${JSON.stringify(patched)}: strict decoding error: unknown field "extra"`
      )
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        ["", merge, "error decoding patch: unexpected end of JSON input"],
        ["?fieldValidation=Ignore", merge, "Invalid JSON Patch"],
        [
          "",
          "application/strategic-merge-patch+json",
          "invalid character 'o' looking for beginning of object key string"
        ],
        [
          "",
          "application/json-patch+json",
          "error decoding patch: invalid character 'o' looking for beginning of object key string"
        ]
      ]
      for (const [query, type, expected] of cases) {
        const answer = yield* call(
          "PATCH",
          `${configMaps}/m${query}`,
          query === "" && type === merge ? "" : "{oops",
          type
        )
        assert.strictEqual(answer.status, 400)
        assert.strictEqual(JSON.parse(answer.body).message, expected, type)
      }
    }))

  it.effect("a resourceVersion that is not a number and a continue token that is garbage", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const rv = yield* Effect.promise(() => request(server, "GET", `${configMaps}?resourceVersion=abc`))
      assert.strictEqual(
        JSON.parse(rv.body).message,
        "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": " +
          "invalid syntax"
      )
      const token = yield* Effect.promise(() => request(server, "GET", `${configMaps}?limit=1&continue=garbage`))
      assert.strictEqual(
        JSON.parse(token.body).message,
        "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value"
      )
    }))
})
