/**
 * OpenAPI v2/v3 with object schemas, through the real kubectl (explain, apply of a `kind: List`, client-side
 * validation, which reads /openapi/v2 in protobuf) and raw requests (content negotiation, ETags, hashes).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Https from "node:https"
import protobuf from "protobufjs"
import { TestApiServer } from "../src/index.js"
import * as Kubectl from "./support/kubectl.js"

const { ok, run: kubectl } = Kubectl.make("testkit-openapi-")

interface Reply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

const get = (server: TestApiServer.TestApiServer.Service, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<Reply>((resolve, reject) => {
      const req = Https.request(
        `${server.url}${path}`,
        { ca: server.certificateAuthority, headers: { authorization: `Bearer ${server.token}`, ...headers } },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on(
            "end",
            () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })
          )
        }
      )
      req.on("error", reject)
      req.end()
    })
  )

const crd = (extraField: string) =>
  `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webapps.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: webapps, singular: webapp, kind: WebApp, shortNames: [wa]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A web application.
        properties:
          spec:
            type: object
            description: The desired state of the web application.
            required: [image]
            properties:
              image: {type: string, description: The container image to run.}
              replicas: {type: integer, minimum: 0, description: How many pods to run.}
              ${extraField}: {type: string, description: Added later.}
              port: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const list = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed, namespace: default}
  data: {a: "1"}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: listed, namespace: default}
  spec:
    replicas: 1
    selector: {matchLabels: {app: listed}}
    template:
      metadata: {labels: {app: listed}}
      spec:
        containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}]
- apiVersion: example.com/v1
  kind: WebApp
  metadata: {name: listed, namespace: default}
  spec: {image: "nginx:1.27", replicas: 2, port: 8080, note: null, extra: {anything: [1, 2]}}
`

const badList = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: bad, namespace: default}
  data: {a: "1"}
  foo: bar
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: bad, namespace: default}
  spec:
    replicas: "two"
    selector: {matchLabels: {app: bad}}
    template:
      metadata: {labels: {app: bad}}
      spec:
        containers: [{image: nginx, ports: [{containerPort: 80, bogus: 1}]}]
`

/** Every `$ref` in a document names one of its schemas. */
const danglingRefs = (doc: any, prefix: string, schemas: Record<string, unknown>): Array<string> => {
  const out: Array<string> = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (node === null || typeof node !== "object") return
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string" && !(v.startsWith(prefix) && v.slice(prefix.length) in schemas)) {
        out.push(v)
      } else walk(v)
    }
  }
  walk(doc)
  return out
}

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("openapi", (it) => {
  it.effect("kubectl explain: built-in kinds and nested fields, from client-node's models", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const containers = yield* ok(server, ["explain", "pods.spec.containers"])
      assert.match(containers, /^KIND:\s+Pod\nVERSION:\s+v1\n/)
      assert.match(containers, /FIELD: containers <\[\]Container>/)
      assert.match(containers, /List of containers belonging to the pod\./)
      assert.match(containers, /\n {2}name\t<string> -required-\n/)
      assert.match(containers, /\n {2}ports\t<\[\]ContainerPort>\n/)
      const deployment = yield* ok(server, ["explain", "deployment"])
      assert.match(deployment, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/)
      assert.match(deployment, /Deployment enables declarative updates for Pods and ReplicaSets\./)
      assert.match(deployment, /\n {2}metadata\t<ObjectMeta>\n {4}Standard object's metadata\./)
      assert.match(deployment, /\n {2}spec\t<DeploymentSpec>\n/)
      const replicas = yield* ok(server, ["explain", "deploy.spec.replicas"])
      assert.match(replicas, /FIELD: replicas <integer>/)
      const limits = yield* ok(server, ["explain", "pod.spec.containers.resources.limits"])
      assert.match(limits, /FIELD: limits <map\[string\]Quantity>/)
    }))

  it.effect("kubectl explain a custom resource; a changed CRD changes the document and its hash", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["apply", "-f", "-"], crd("tier"))
      const spec = yield* ok(server, ["explain", "webapps.spec"])
      assert.match(spec, /^GROUP:\s+example.com\nKIND:\s+WebApp\nVERSION:\s+v1\n/)
      assert.match(spec, /The desired state of the web application\./)
      assert.match(spec, /\n {2}image\t<string> -required-\n {4}The container image to run\./)
      assert.match(spec, /\n {2}replicas\t<integer>\n {4}How many pods to run\./)
      assert.match(spec, /\n {2}tier\t<string>\n/)
      const before = JSON.parse((yield* get(server, "/openapi/v3")).body.toString()).paths["apis/example.com/v1"]
      yield* ok(server, ["apply", "-f", "-"], crd("zone"))
      const after = JSON.parse((yield* get(server, "/openapi/v3")).body.toString()).paths["apis/example.com/v1"]
      assert.notStrictEqual(after.serverRelativeURL, before.serverRelativeURL)
      const zone = yield* ok(server, ["explain", "wa.spec.zone"])
      assert.match(zone, /FIELD: zone <string>/)
      const gone = yield* kubectl(server, ["explain", "wa.spec.tier"])
      assert.notStrictEqual(gone.code, 0)
      assert.match(gone.stderr, /field "tier" does not exist/)
    }))

  it.effect("kubectl apply -f of a List of mixed kinds (client-side validation reads /openapi/v2 in protobuf)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      yield* ok(server, ["apply", "-f", "-"], crd("tier"))
      const out = yield* ok(server, ["apply", "-f", "-"], list)
      assert.match(out, /configmap\/listed created/)
      assert.match(out, /deployment.apps\/listed created/)
      assert.match(out, /webapp.example.com\/listed created/)
      const again = yield* ok(server, ["apply", "-f", "-"], list)
      assert.match(again, /configmap\/listed unchanged/)
      const webapp = JSON.parse(yield* ok(server, ["get", "webapp", "listed", "-o", "json"]))
      assert.deepStrictEqual(webapp.spec.extra, { anything: [1, 2] })
      assert.strictEqual(webapp.spec.port, 8080)
      // A changed custom resource is patched with a JSON merge patch (no strategic merge for custom resources).
      // … and a built-in kind with a strategic merge patch computed from the v3 schemas' merge keys.
      const edited = list.replace("replicas: 2, port: 8080", "port: http")
        .replace(
          `image: "nginx:1.27", ports: [{containerPort: 80}]`,
          `image: "nginx:1.28", ports: [{containerPort: 8080}]`
        )
      const changed = yield* ok(server, ["apply", "-f", "-"], edited)
      assert.match(changed, /webapp.example.com\/listed configured/)
      assert.match(changed, /deployment.apps\/listed configured/)
      const deployment = JSON.parse(yield* ok(server, ["get", "deployment", "listed", "-o", "json"]))
      const containers = deployment.spec.template.spec.containers
      assert.strictEqual(containers.length, 1)
      assert.strictEqual(containers[0].image, "nginx:1.28")
      assert.deepStrictEqual(containers[0].ports.map((p: any) => p.containerPort), [8080])
      const patched = JSON.parse(yield* ok(server, ["get", "webapp", "listed", "-o", "json"]))
      assert.strictEqual(patched.spec.port, "http")
      assert.isUndefined(patched.spec.replicas)
    }))

  it.effect("client-side validation errors of a List, as kubectl prints them (--validate=strict and default)", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      for (const flags of [["--validate=strict"], []]) {
        const r = yield* kubectl(server, ["apply", ...flags, "-f", "-"], badList)
        assert.notStrictEqual(r.code, 0)
        assert.include(r.stderr, "error validating data: [")
        assert.include(r.stderr, `ValidationError(ConfigMap): unknown field "foo" in io.k8s.api.core.v1.ConfigMap`)
        assert.include(
          r.stderr,
          `ValidationError(Deployment.spec.replicas): invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: ` +
            `got "string", expected "integer"`
        )
        assert.include(
          r.stderr,
          `ValidationError(Deployment.spec.template.spec.containers[0].ports[0]): unknown field "bogus" in ` +
            `io.k8s.api.core.v1.ContainerPort`
        )
        assert.include(
          r.stderr,
          `ValidationError(Deployment.spec.template.spec.containers[0]): missing required field "name" in ` +
            `io.k8s.api.core.v1.Container`
        )
      }
      const skipped = yield* kubectl(server, ["apply", "--validate=false", "--dry-run=client", "-f", "-"], badList)
      assert.strictEqual(skipped.code, 0, skipped.stderr)
    }))

  it.effect("/openapi/v2: protobuf (gnostic Document) when asked, JSON otherwise, 406, ETag", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const json = yield* get(server, "/openapi/v2", { accept: "application/json" })
      assert.strictEqual(json.status, 200)
      assert.strictEqual(json.headers["content-type"], "application/json")
      const doc = JSON.parse(json.body.toString())
      assert.strictEqual(doc.swagger, "2.0")
      const pod = doc.definitions["io.k8s.api.core.v1.Pod"]
      assert.deepStrictEqual(pod["x-kubernetes-group-version-kind"], [{ group: "", kind: "Pod", version: "v1" }])
      assert.strictEqual(pod.properties.metadata.$ref, "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
      assert.deepStrictEqual(doc.definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].format, "int-or-string")
      assert.deepStrictEqual(danglingRefs(doc, "#/definitions/", doc.definitions), [])
      const etag = String(json.headers.etag)
      assert.match(etag, /^"[0-9A-F]{128}"$/)
      const cached = yield* get(server, "/openapi/v2", { accept: "application/json", "if-none-match": etag })
      assert.strictEqual(cached.status, 304)

      const pb = yield* get(server, "/openapi/v2", {
        accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
      })
      assert.strictEqual(pb.status, 200)
      assert.strictEqual(pb.headers["content-type"], "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
      // Read back with field numbers of gnostic's OpenAPIv2.proto (Document.definitions = 9, …).
      const reader = protobuf.Root.fromJSON({
        nested: {
          Document: { fields: { swagger: { id: 1, type: "string" }, definitions: { id: 9, type: "Definitions" } } },
          Definitions: { fields: { additionalProperties: { id: 1, type: "NamedSchema", rule: "repeated" } } },
          NamedSchema: { fields: { name: { id: 1, type: "string" }, value: { id: 2, type: "Schema" } } },
          Schema: {
            fields: {
              _ref: { id: 1, type: "string" },
              type: { id: 22, type: "TypeItem" },
              vendorExtension: { id: 31, type: "NamedAny", rule: "repeated" }
            }
          },
          TypeItem: { fields: { value: { id: 1, type: "string", rule: "repeated" } } },
          NamedAny: { fields: { name: { id: 1, type: "string" }, value: { id: 2, type: "Any" } } },
          Any: { fields: { yaml: { id: 2, type: "string" } } }
        }
      }).lookupType("Document")
      const decoded = reader.toObject(reader.decode(pb.body)) as any
      assert.strictEqual(decoded.swagger, "2.0")
      const names = decoded.definitions.additionalProperties.map((d: any) => d.name)
      assert.deepStrictEqual(names, Object.keys(doc.definitions))
      const podPb = decoded.definitions.additionalProperties.find((d: any) => d.name === "io.k8s.api.core.v1.Pod")
      assert.deepStrictEqual(podPb.value.type.value, ["object"])
      const gvk = podPb.value.vendorExtension.find((e: any) => e.name === "x-kubernetes-group-version-kind")
      assert.strictEqual(gvk.value.yaml, `- group: ""\n  kind: Pod\n  version: v1\n`)

      const refused = yield* get(server, "/openapi/v2", { accept: "text/html" })
      assert.strictEqual(refused.status, 406)
      const preferred = yield* get(server, "/openapi/v2", {
        accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json"
      })
      assert.strictEqual(preferred.headers["content-type"], "application/json")
    }))

  it.effect("/openapi/v3: one document per group version, schemas resolve, hash redirect and immutable caching", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const index = yield* get(server, "/openapi/v3")
      // kube-openapi serves the root as an extension-less file: Go sniffs text/plain; never cached
      assert.strictEqual(index.headers["content-type"], "text/plain; charset=utf-8")
      assert.strictEqual(index.headers["cache-control"], "no-cache, private")
      const root = JSON.parse(index.body.toString())
      for (const gv of ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1"]) {
        assert.isDefined(root.paths[gv], gv)
      }
      // the discovery paths and /version have their documents too (not a custom group: apiextensions has none)
      for (const path of ["api", "apis", "apis/apps", "version"]) assert.isDefined(root.paths[path], path)
      assert.isUndefined(root.paths["apis/example.com"])
      for (const [gv, { serverRelativeURL }] of Object.entries<{ serverRelativeURL: string }>(root.paths)) {
        const reply = yield* get(server, serverRelativeURL)
        assert.strictEqual(reply.status, 200, gv)
        assert.strictEqual(reply.headers["cache-control"], "public, immutable")
        assert.strictEqual(reply.headers.etag, `"${new URL(serverRelativeURL, server.url).searchParams.get("hash")}"`)
        const doc = JSON.parse(reply.body.toString())
        const schemas = doc.components.schemas
        assert.deepStrictEqual(danglingRefs(doc, "#/components/schemas/", schemas), [], gv)
        // a group version's document declares its kinds (the discovery and version documents declare none or few)
        if (gv.split("/").length !== (gv.startsWith("apis/") ? 3 : 2)) continue
        const kinds = Object.values<any>(schemas).filter((s) => s["x-kubernetes-group-version-kind"] !== undefined)
        assert.isAbove(kinds.length, 0, gv)
      }
      const version = JSON.parse((yield* get(server, "/openapi/v3/version")).body.toString())
      assert.deepStrictEqual(
        version.paths["/version/"].get.responses["200"].content["application/json"].schema,
        { $ref: "#/components/schemas/io.k8s.apimachinery.pkg.version.Info" }
      )
      assert.property(version.components.schemas["io.k8s.apimachinery.pkg.version.Info"].properties, "emulationMinor")
      const group = JSON.parse((yield* get(server, "/openapi/v3/apis/rbac.authorization.k8s.io")).body.toString())
      assert.strictEqual(
        group.paths["/apis/rbac.authorization.k8s.io/"].get.operationId,
        "getRbacAuthorizationAPIGroup"
      )
      // fetched without its hash, a document is not cacheable
      const unhashed = yield* get(server, "/openapi/v3/api/v1")
      assert.strictEqual(unhashed.headers["cache-control"], "no-cache, private")
      assert.strictEqual(JSON.parse(unhashed.body.toString()).info.version, "1.36")
      const apps = JSON.parse((yield* get(server, "/openapi/v3/apis/apps/v1")).body.toString()).components.schemas
      const containers = apps["io.k8s.api.core.v1.PodSpec"].properties.containers
      assert.strictEqual(containers["x-kubernetes-patch-merge-key"], "name")
      assert.strictEqual(containers["x-kubernetes-patch-strategy"], "merge")
      assert.strictEqual(containers["x-kubernetes-list-type"], "map")
      const ports = apps["io.k8s.api.core.v1.Container"].properties.ports
      assert.deepStrictEqual(ports["x-kubernetes-list-map-keys"], ["containerPort", "protocol"])
      assert.deepStrictEqual(apps["io.k8s.api.apps.v1.DeploymentSpec"].properties.replicas, {
        type: "integer",
        format: "int32",
        description: apps["io.k8s.api.apps.v1.DeploymentSpec"].properties.replicas.description
      })
      assert.deepStrictEqual(apps["io.k8s.apimachinery.pkg.apis.meta.v1.Time"].format, "date-time")
      const coordination = JSON.parse((yield* get(server, "/openapi/v3/apis/coordination.k8s.io/v1")).body.toString())
      const acquireTime = coordination.components.schemas["io.k8s.api.coordination.v1.LeaseSpec"].properties.acquireTime
      assert.deepStrictEqual(acquireTime, {
        $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
      })
      const stale = yield* get(server, "/openapi/v3/apis/apps/v1?hash=0123")
      assert.strictEqual(stale.status, 301)
      assert.strictEqual(stale.headers.location, root.paths["apis/apps/v1"].serverRelativeURL)
      // kube-openapi's 404: no body, no Content-Type
      const missing = yield* get(server, "/openapi/v3/apis/nothing.example.com/v1")
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(missing.body.length, 0)
      assert.isUndefined(missing.headers["content-type"])
    }))
})
