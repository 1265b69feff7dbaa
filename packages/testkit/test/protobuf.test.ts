/**
 * The protobuf wire form: envelope bytes, Kubernetes' JSON ⇄ protobuf quirks, a JSON → proto → JSON round trip
 * for random objects of every served kind (drawn from the message table itself), and the HTTP behaviour of
 * TestApiServer for clients that send and accept `application/vnd.kubernetes.protobuf`.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Arbitrary, Effect, Schema } from "effect"
import { TestApiServer } from "../src/index.js"
import { decode, encode } from "../src/internal/protobuf/codec.js"
import { type Field, listWrappers, messages } from "../src/internal/protobuf/descriptors.generated.js"
import {
  decodeObject,
  encodeObject,
  messageOf,
  readFrames,
  unwrap,
  watchFrame,
  wrap
} from "../src/internal/protobuf/envelope.js"
import { PROTO, request } from "./support/https.js"

type Obj = Record<string, any>

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")

describe("envelope", () => {
  it("is k8s\\0 + runtime.Unknown{typeMeta, raw, contentEncoding, contentType}, field for field", () => {
    const bytes = encodeObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } })!
    assert.strictEqual(
      hex(bytes),
      "6b387300" + // magic
        "0a0f" + "0a027631" + "1209" + Buffer.from("ConfigMap").toString("hex") + // typeMeta{apiVersion, kind}
        "120d" + "0a03" + "0a0161" + "1206" + "0a016b" + "120176" + // raw: ConfigMap{metadata{name}, data{k: v}}
        "1a00" + "2200" // contentEncoding, contentType: empty, as apimachinery writes them
    )
    const opened = unwrap(bytes)
    assert.strictEqual(opened.apiVersion, "v1")
    assert.strictEqual(opened.kind, "ConfigMap")
    assert.deepStrictEqual(decodeObject(bytes), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a" },
      data: { k: "v" }
    })
  })

  it("refuses bytes without the magic and envelopes of kinds it has no message for", () => {
    assert.deepInclude(decodeObject(Buffer.from("{\"kind\":\"ConfigMap\"}")), { _tag: "Malformed" })
    assert.deepStrictEqual(decodeObject(wrap("example.com/v1", "WebApp", new Uint8Array(0))), {
      _tag: "UnknownKind",
      apiVersion: "example.com/v1",
      kind: "WebApp"
    })
    assert.isUndefined(encodeObject({ apiVersion: "example.com/v1", kind: "WebApp", metadata: { name: "a" } }))
  })

  it("the discovery documents of /api and /api/v1 name no apiVersion, in JSON and in the envelope", () => {
    const bytes = encodeObject({ kind: "APIVersions", versions: ["v1"] })!
    assert.include(unwrap(bytes), { apiVersion: "", kind: "APIVersions" })
    assert.deepStrictEqual(decodeObject(bytes), { apiVersion: "", kind: "APIVersions", versions: ["v1"] })
    assert.strictEqual(messageOf("v1", "APIResourceList"), "meta.v1.APIResourceList")
    assert.strictEqual(
      messageOf("apidiscovery.k8s.io/v2", "APIGroupDiscoveryList"),
      "apidiscovery.v2.APIGroupDiscoveryList"
    )
    assert.isUndefined(messageOf("apps/v1", "APIResourceList"))
  })

  it("meta kinds are known in every group version", () => {
    assert.strictEqual(messageOf("apps/v1", "DeleteOptions"), "meta.v1.DeleteOptions")
    assert.strictEqual(messageOf("v1", "Status"), "meta.v1.Status")
    assert.isUndefined(messageOf("apiextensions.k8s.io/v1", "CustomResourceDefinition"))
    assert.isUndefined(messageOf("example.com/v1", "Status"))
  })

  it("an object with a field the table lacks is not encoded (the server answers JSON instead)", () => {
    assert.isUndefined(encodeObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, extra: 1 }))
    assert.isUndefined(encodeObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: 7 } }))
    assert.isUndefined(
      encodeObject(JSON.parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"__proto__\":\"x\"}}"))
    )
  })

  it("watch frames: 4-byte big-endian length + WatchEvent{type, object: RawExtension{raw: envelope}}", () => {
    const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }
    const frame = watchFrame("ADDED", object)!
    const inner = encodeObject(object)!
    assert.strictEqual(new DataView(frame.buffer, frame.byteOffset).getUint32(0, false), frame.length - 4)
    assert.strictEqual(
      hex(frame.subarray(4)),
      "0a05" + Buffer.from("ADDED").toString("hex") + "12" + (inner.length + 2).toString(16).padStart(2, "0") + "0a" +
        inner.length.toString(16).padStart(2, "0") + hex(inner)
    )
    assert.deepStrictEqual(readFrames(frame), [{ type: "ADDED", object }])
    // a watch cannot switch to JSON midway: fields the table lacks are left out of the frame
    const [lossy] = readFrames(watchFrame("MODIFIED", { ...object, extra: true })!)
    assert.deepStrictEqual(lossy!.object, object)
  })
})

describe("JSON ⇄ protobuf quirks", () => {
  it("Time, MicroTime, Quantity, IntOrString, bytes, RawExtension-like FieldsV1", () => {
    const pod = {
      metadata: {
        name: "p",
        creationTimestamp: "2024-05-06T07:08:09Z",
        managedFields: [{ manager: "m", operation: "Apply", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } }]
      },
      spec: {
        containers: [{
          name: "c",
          resources: { limits: { cpu: "500m", memory: "1Gi" } },
          ports: [{ containerPort: 8080, name: "http" }],
          readinessProbe: { httpGet: { port: "http" }, periodSeconds: 3 },
          livenessProbe: { tcpSocket: { port: 8080 } }
        }]
      }
    }
    const bytes = encode("core.v1.Pod", pod)
    assert.deepStrictEqual(decode("core.v1.Pod", bytes), pod)
    const secret = { metadata: { name: "s" }, data: { k: Buffer.from([0, 255, 1]).toString("base64") }, type: "Opaque" }
    assert.deepStrictEqual(decode("core.v1.Secret", encode("core.v1.Secret", secret)), secret)
    const event = { metadata: { name: "e" }, eventTime: "2024-05-06T07:08:09.123456Z", note: "n" }
    assert.deepStrictEqual(decode("events.v1.Event", encode("events.v1.Event", event)), event)
  })

  it("a time with an offset is read as the same instant in UTC", () => {
    const decoded = decode(
      "meta.v1.ObjectMeta",
      encode("meta.v1.ObjectMeta", { creationTimestamp: "2024-05-06T09:08:09+02:00" })
    )
    assert.deepStrictEqual(decoded, { creationTimestamp: "2024-05-06T07:08:09Z" })
  })

  it("decoding follows Go: zero non-pointer omitempty fields and the zero Time are left out, pointers kept", () => {
    // what a Go client writes for an ObjectMeta with only a name: every non-pointer field, zero or not
    const meta = encode("meta.v1.ObjectMeta", { name: "x", generateName: "", namespace: "", generation: 0 })
    const withZeroTime = Buffer.concat([meta, Buffer.from("4200", "hex")]) // creationTimestamp (8): Time{}
    assert.deepStrictEqual(decode("meta.v1.ObjectMeta", withZeroTime), { name: "x" })
    // DeploymentSpec.replicas is *int32: 0 is kept; minReadySeconds is int32,omitempty: 0 is left out
    const spec = encode("apps.v1.DeploymentSpec", { replicas: 0, minReadySeconds: 0, paused: false })
    assert.deepStrictEqual(decode("apps.v1.DeploymentSpec", spec), { replicas: 0 })
    // non-omitempty fields keep their zero value (ContainerPort.containerPort)
    assert.deepStrictEqual(decode("core.v1.ContainerPort", encode("core.v1.ContainerPort", { containerPort: 0 })), {
      containerPort: 0
    })
  })

  it("inlined Go structs (Volume's VolumeSource, Probe's handler) are flat in JSON", () => {
    const volume = { name: "v", configMap: { name: "cm", defaultMode: 420 } }
    const bytes = encode("core.v1.Volume", volume)
    // name = 1, volumeSource = 2 { configMap = 19 { localObjectReference = 1 { name = 1 }, defaultMode = 3 } }
    assert.strictEqual(hex(bytes), "0a0176" + "120c" + "9a0109" + "0a04" + "0a02636d" + "18a403")
    assert.deepStrictEqual(decode("core.v1.Volume", bytes), volume)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// random objects of every served kind, from the table

/** A small seeded generator (mulberry32). */
const rng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const randomObject = (message: string, seed: number): Obj => {
  const next = rng(seed)
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  const words = ["a", "web", "x-1", "ünï", "with space", "0"]
  const time = () => new Date(Date.UTC(2020, 0, 1) + int(1e9) * 1000).toISOString().slice(0, 19) + "Z"
  const value = (type: string, depth: number, nonZero: boolean): unknown => {
    switch (type) {
      case "string":
        return nonZero ? pick(words) : pick(["", ...words])
      case "int32":
        return (nonZero ? 1 : 0) + int(1000) - (nonZero ? 0 : int(2) * 500)
      case "int64":
        return (nonZero ? 1 : 0) + int(2 ** 40)
      case "bool":
        return nonZero ? true : next() < 0.5
      case "double":
      case "float":
        return int(100) / 4 + 1
      case "bytes":
        return Buffer.from(words.slice(0, 1 + int(4)).join("")).toString("base64")
      case "meta.v1.Time":
        return time()
      case "meta.v1.MicroTime":
        return `${time().slice(0, 19)}.${String(int(1e6)).padStart(6, "0")}Z`
      case "resource.Quantity":
        return pick(["1", "500m", "1Gi", "0.5", "2k"])
      case "intstr.IntOrString":
        return next() < 0.5 ? int(65536) : pick(["http", "25%"])
      case "runtime.RawExtension":
      case "meta.v1.FieldsV1":
        return { "f:metadata": { "f:name": {} }, n: int(10) }
    }
    if (listWrappers.has(type)) return [value(messages[type]![0]![2], depth + 1, true)]
    return object(type, depth + 1)
  }
  const object = (type: string, depth: number): Obj => {
    const out: Obj = {}
    for (const [json, , ftype, flags = ""] of messages[type]!) {
      if (next() > (depth < 3 ? 0.6 : 0.25) || (depth > 6 && !(ftype in scalarNames))) continue
      const nonZero = flags.includes("z")
      if (flags.includes("m")) {
        out[json] = Object.fromEntries(
          Array.from({ length: 1 + int(2) }, (_, i) => [`k${i}.x/y`, value(ftype, depth, false)])
        )
      } else if (flags.includes("r")) {
        out[json] = Array.from({ length: 1 + int(2) }, () => value(ftype, depth, false))
      } else if (flags.includes("i")) {
        Object.assign(out, object(ftype, depth))
      } else {
        out[json] = value(ftype, depth, nonZero)
      }
    }
    return out
  }
  return object(message, 0)
}

const scalarNames: Record<string, true> = {
  string: true,
  int32: true,
  int64: true,
  bool: true,
  bytes: true,
  double: true
}

const servedKinds: ReadonlyArray<readonly [string, string, string]> = [
  ["v1", "Namespace", "core.v1.Namespace"],
  ["v1", "ConfigMap", "core.v1.ConfigMap"],
  ["v1", "Secret", "core.v1.Secret"],
  ["v1", "Service", "core.v1.Service"],
  ["v1", "Pod", "core.v1.Pod"],
  ["v1", "Event", "core.v1.Event"],
  ["apps/v1", "Deployment", "apps.v1.Deployment"],
  ["apps/v1", "ReplicaSet", "apps.v1.ReplicaSet"],
  ["apps/v1", "StatefulSet", "apps.v1.StatefulSet"],
  ["coordination.k8s.io/v1", "Lease", "coordination.v1.Lease"],
  ["events.k8s.io/v1", "Event", "events.v1.Event"],
  ["authorization.k8s.io/v1", "SelfSubjectAccessReview", "authorization.v1.SelfSubjectAccessReview"],
  ["authorization.k8s.io/v1", "SelfSubjectRulesReview", "authorization.v1.SelfSubjectRulesReview"],
  ["autoscaling/v1", "Scale", "autoscaling.v1.Scale"],
  ["v1", "Status", "meta.v1.Status"],
  ["v1", "DeleteOptions", "meta.v1.DeleteOptions"],
  ["v1", "PodList", "core.v1.PodList"],
  ["apps/v1", "DeploymentList", "apps.v1.DeploymentList"],
  ["v1", "APIResourceList", "meta.v1.APIResourceList"],
  ["v1", "APIGroupList", "meta.v1.APIGroupList"],
  ["v1", "APIVersions", "meta.v1.APIVersions"],
  ["apidiscovery.k8s.io/v2", "APIGroupDiscoveryList", "apidiscovery.v2.APIGroupDiscoveryList"]
]

describe("round trip", () => {
  it.prop(
    "JSON → protobuf → JSON is the identity for objects of every served kind",
    [
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 ** 31 }))),
      Arbitrary.schema(
        Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: servedKinds.length - 1 }))
      )
    ],
    ([seed, index]) => {
      const [apiVersion, kind, message] = servedKinds[index]!
      assert.strictEqual(messageOf(apiVersion, kind), message)
      const json = { apiVersion, kind, ...randomObject(message, seed) }
      const bytes = encodeObject(json)
      assert.isDefined(bytes, `${kind} could not be encoded`)
      assert.deepStrictEqual(decodeObject(bytes!), json)
    },
    { arbitrary: { runs: 300 } }
  )

  it("every message of the table has fields with unique numbers and JSON names", () => {
    for (const [name, fields] of Object.entries(messages)) {
      const numbers = new Set(fields.map((f: Field) => f[1]))
      assert.strictEqual(numbers.size, fields.length, name)
      const names = new Set(fields.map((f: Field) => f[0]))
      assert.strictEqual(names.size, fields.length, name)
      for (const [, , type] of fields) assert.isTrue(type in scalarNames || type in messages, `${name}: ${type}`)
    }
  })
})

// ---------------------------------------------------------------------------------------------------------------
// HTTP

layer(TestApiServer.layerWithCluster(), { excludeTestServices: true })("TestApiServer over protobuf", (it) => {
  it.effect("create with a protobuf body and a protobuf answer; get as JSON and as protobuf; list", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const body = encodeObject({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "proto-cm", labels: { via: "proto" } },
        data: { a: "1" },
        binaryData: { b: Buffer.from([0, 200]).toString("base64") }
      })!
      const created = yield* request(server, "POST", "/api/v1/namespaces/default/configmaps", {
        "content-type": PROTO,
        accept: `${PROTO},application/json`
      }, body)
      assert.strictEqual(created.status, 201)
      assert.strictEqual(created.contentType, PROTO)
      const fromProto = decodeObject(created.body) as Obj
      assert.strictEqual(fromProto.metadata.name, "proto-cm")
      assert.isString(fromProto.metadata.uid)
      const asJson = yield* request(server, "GET", "/api/v1/namespaces/default/configmaps/proto-cm", {
        accept: "application/json"
      })
      assert.strictEqual(asJson.contentType, "application/json")
      assert.deepStrictEqual(JSON.parse(asJson.body.toString("utf8")), fromProto)
      const list = yield* request(server, "GET", "/api/v1/namespaces/default/configmaps?labelSelector=via%3Dproto", {
        accept: `${PROTO}, */*`
      })
      const decoded = decodeObject(list.body) as Obj
      assert.strictEqual(decoded.kind, "ConfigMapList")
      assert.deepStrictEqual(decoded.items.map((i: Obj) => i.metadata.name), ["proto-cm"])
      assert.isString(decoded.metadata.resourceVersion)
    }))

  it.effect("discovery documents in protobuf: legacy when asked plainly, aggregated when asked as such", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      for (const path of ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1"]) {
        const json = JSON.parse((yield* request(server, "GET", path, { accept: "application/json" })).body.toString())
        const proto = yield* request(server, "GET", path, { accept: PROTO })
        assert.strictEqual(proto.status, 200, path)
        assert.strictEqual(proto.contentType, PROTO, path)
        assert.deepStrictEqual(decodeObject(proto.body), { apiVersion: "", ...json }, path)
      }
      const AGGREGATED = "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
      const json = yield* request(server, "GET", "/apis", { accept: `application/json;${AGGREGATED}` })
      const proto = yield* request(server, "GET", "/apis", { accept: `${PROTO};${AGGREGATED},application/json` })
      assert.strictEqual(proto.contentType, `${PROTO};${AGGREGATED}`)
      assert.deepStrictEqual(decodeObject(proto.body), JSON.parse(json.body.toString()))
    }))

  it.effect("JSON when JSON is asked first, for tables, and for kinds without a message", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const jsonFirst = yield* request(server, "GET", "/api/v1/namespaces", { accept: `application/json,${PROTO}` })
      assert.strictEqual(jsonFirst.contentType, "application/json")
      const table = yield* request(server, "GET", "/api/v1/namespaces", {
        accept: `${PROTO};as=Table;v=v1;g=meta.k8s.io,application/json`
      })
      assert.strictEqual(table.contentType, "application/json")
      const crds = yield* request(server, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        accept: `${PROTO},application/json`
      })
      assert.strictEqual(crds.status, 200)
      assert.strictEqual(crds.contentType, "application/json")
    }))

  it.effect("an object holding a field the table lacks is answered as JSON rather than lose it", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const created = yield* request(server, "POST", "/api/v1/namespaces/default/configmaps", {
        "content-type": "application/json"
      }, JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "odd" }, notAField: { x: 1 } }))
      assert.strictEqual(created.status, 201)
      const stored = JSON.parse(created.body.toString("utf8"))
      const got = yield* request(server, "GET", "/api/v1/namespaces/default/configmaps/odd", {
        accept: `${PROTO},application/json`
      })
      if (stored.notAField !== undefined) {
        // the server kept the unknown field: only JSON can carry it
        assert.strictEqual(got.contentType, "application/json")
        assert.deepStrictEqual(JSON.parse(got.body.toString("utf8")).notAField, { x: 1 })
      } else {
        // the server dropped it (as kube-apiserver does for built-ins): protobuf it is
        assert.strictEqual(got.contentType, PROTO)
      }
    }))

  it.effect("errors are protobuf Status objects for protobuf clients", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const missing = yield* request(server, "GET", "/api/v1/namespaces/default/configmaps/nope", {
        accept: `${PROTO},application/json`
      })
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(missing.contentType, PROTO)
      assert.deepInclude(decodeObject(missing.body), {
        kind: "Status",
        status: "Failure",
        reason: "NotFound",
        code: 404,
        message: "configmaps \"nope\" not found"
      })
    }))

  it.effect("a protobuf body of a kind without a message is a 415; garbage is a 400", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const unknown = yield* request(server, "POST", "/api/v1/namespaces/default/configmaps", {
        "content-type": PROTO
      }, wrap("example.com/v1", "WebApp", new Uint8Array(0)))
      assert.strictEqual(unknown.status, 415)
      const status = JSON.parse(unknown.body.toString("utf8"))
      assert.strictEqual(status.reason, "UnsupportedMediaType")
      assert.match(status.message, /accepted media types include: application\/json, application\/yaml/)
      const garbage = yield* request(server, "POST", "/api/v1/namespaces/default/configmaps", {
        "content-type": PROTO
      }, "{\"not\":\"protobuf\"}")
      assert.strictEqual(garbage.status, 400)
    }))

  it.effect("update and delete with protobuf bodies (DeleteOptions)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const base = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "upd" }, data: { a: "1" } }
      const created = decodeObject(
        (yield* request(server, "POST", "/api/v1/namespaces/default/configmaps", {
          "content-type": PROTO,
          accept: PROTO
        }, encodeObject(base)!)).body
      ) as Obj
      const updated = yield* request(server, "PUT", "/api/v1/namespaces/default/configmaps/upd", {
        "content-type": PROTO,
        accept: PROTO
      }, encodeObject({ ...created, data: { a: "2" } })!)
      assert.strictEqual(updated.status, 200)
      assert.deepStrictEqual((decodeObject(updated.body) as Obj).data, { a: "2" })
      const stale = yield* request(server, "DELETE", "/api/v1/namespaces/default/configmaps/upd", {
        "content-type": PROTO,
        accept: PROTO
      }, encodeObject({ apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: "not-the-uid" } })!)
      assert.strictEqual(stale.status, 409)
      const deleted = yield* request(server, "DELETE", "/api/v1/namespaces/default/configmaps/upd", {
        "content-type": PROTO,
        accept: PROTO
      }, encodeObject({ apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: created.metadata.uid } })!)
      assert.strictEqual(deleted.status, 200)
    }))

  it.effect("watch streams length-prefixed WatchEvent frames", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      for (const name of ["w1", "w2"]) {
        yield* request(
          server,
          "POST",
          "/api/v1/namespaces/default/configmaps",
          { "content-type": "application/json" },
          JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { watch: "me" } } })
        )
      }
      const complete = (bytes: Buffer) => readFrames(bytes).length >= 2
      const reply = yield* request(
        server,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=watch%3Dme&resourceVersion=0",
        { accept: `${PROTO},application/json` },
        undefined,
        complete
      )
      assert.strictEqual(reply.contentType, `${PROTO};stream=watch`)
      const frames = readFrames(reply.body)
      assert.deepStrictEqual(frames.map((f) => f.type), ["ADDED", "ADDED"])
      assert.deepStrictEqual(frames.map((f) => (f.object as Obj).metadata.name).sort(), ["w1", "w2"])
      assert.strictEqual((frames[0]!.object as Obj).kind, "ConfigMap")
      // a watch-list (client-go's WatchList): the initial events, then a BOOKMARK marking their end
      const watchList = yield* request(
        server,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=1&labelSelector=watch%3Dme&sendInitialEvents=true" +
          "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=",
        { accept: `${PROTO},application/json` },
        undefined,
        (bytes) => readFrames(bytes).length >= 3
      )
      const listFrames = readFrames(watchList.body)
      assert.deepStrictEqual(listFrames.map((f) => f.type), ["ADDED", "ADDED", "BOOKMARK"])
      assert.deepStrictEqual((listFrames[2]!.object as Obj).metadata.annotations, {
        "k8s.io/initial-events-end": "true"
      })
    }))
})
