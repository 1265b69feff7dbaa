/**
 * Discovery, OpenAPI v3, Table and PartialObjectMetadata output, protobuf.
 *
 * Out of scope, by projection: resources the embedded server does not serve at all (discovery is compared for the
 * resources both serve), `/version`'s build information (its field names are compared), the address in `/api`'s
 * `serverAddressByClientCIDRs` (the port), OpenAPI hashes (content hashes of different documents) and the OpenAPI
 * schemas of built-in kinds beyond their property names and required fields (descriptions come from different
 * sources). Protobuf answers are compared by status and Content-Type only.
 */
import {
  area,
  cms,
  configMap,
  del,
  deployment,
  deployments,
  get,
  ns,
  post,
  secrets,
  tableWithoutController,
  watch,
  widget,
  widgets
} from "../scenario.js"

type Obj = Record<string, unknown>

const TABLE = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" }
const PARTIAL = { accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io" }
const PARTIAL_LIST = { accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io" }
const PROTOBUF = { accept: "application/vnd.kubernetes.protobuf" }
const PROTOBUF_OR_JSON = { accept: "application/vnd.kubernetes.protobuf, application/json" }
const AGGREGATED = { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json" }

const CORE = new Set([
  "configmaps",
  "secrets",
  "namespaces",
  "namespaces/status",
  "pods",
  "pods/status",
  "pods/log",
  "services",
  "services/status",
  "events"
])
const APPS = new Set(["deployments", "deployments/status", "deployments/scale"])

/** An APIResourceList restricted to the given resources. */
const resources = (names: ReadonlySet<string>) => (b: unknown) => {
  const list = b as Obj & { resources?: ReadonlyArray<{ name: string }> }
  return { ...list, resources: (list.resources ?? []).filter((r) => names.has(r.name)) }
}

const fieldNames = (b: unknown) => Object.keys(b as Obj).sort()

/** An OpenAPI schema's shape: property names, types and required fields, recursively one level. */
const shape = (schema: unknown): unknown => {
  const s = schema as { type?: string; required?: ReadonlyArray<string>; properties?: Record<string, unknown> }
  if (typeof s !== "object" || s === null) return s
  return {
    type: s.type,
    required: s.required,
    properties: s.properties === undefined ? undefined : Object.keys(s.properties).sort()
  }
}

const openapiSchema = (name: string, deep: boolean) => (b: unknown) => {
  const schema = (b as { components?: { schemas?: Record<string, unknown> } }).components?.schemas?.[name]
  if (schema === undefined) return "<missing>"
  if (deep) return schema
  return shape(schema)
}

export const meta = area("meta", [
  { name: "version", steps: [get("/version", { compare: fieldNames })] },
  {
    name: "core API versions",
    steps: [get("/api", { compare: (b) => ({ ...(b as Obj), serverAddressByClientCIDRs: undefined }) })]
  },
  { name: "core v1 resources", steps: [get("/api/v1", { compare: resources(CORE) })] },
  { name: "apps v1 resources", steps: [get("/apis/apps/v1", { compare: resources(APPS) })] },
  { name: "custom resource discovery", steps: [get("/apis/fidelity.example.com/v1")] },
  { name: "custom group discovery", steps: [get("/apis/fidelity.example.com")] },
  {
    name: "group list has the custom group",
    steps: [
      get("/apis", {
        compare: (b) =>
          (b as { groups: ReadonlyArray<{ name: string }> }).groups.find((g) => g.name === "fidelity.example.com")
      })
    ]
  },
  {
    name: "aggregated discovery of the custom group",
    steps: [
      get("/apis", {
        headers: AGGREGATED,
        compare: (b) =>
          (b as { items?: ReadonlyArray<{ metadata: { name: string } }> }).items?.find((g) =>
            g.metadata.name === "fidelity.example.com"
          )
      })
    ]
  },
  { name: "discovery of an unknown group", steps: [get("/apis/nosuch.example.com/v1")] },
  {
    name: "openapi v3 index",
    steps: [
      get("/openapi/v3", {
        compare: (b) => {
          const paths = (b as { paths?: Record<string, unknown> }).paths ?? {}
          return ["api/v1", "apis/apps/v1", "apis/fidelity.example.com/v1"].map((p) => p in paths)
        }
      })
    ]
  },
  {
    name: "openapi v3 custom resource schema",
    steps: [
      get("/openapi/v3/apis/fidelity.example.com/v1", {
        compare: openapiSchema("com.example.fidelity.v1.Widget", false)
      })
    ]
  },
  {
    name: "openapi v3 custom resource spec properties",
    steps: [
      get("/openapi/v3/apis/fidelity.example.com/v1", {
        compare: (b) => {
          const w = openapiSchema("com.example.fidelity.v1.Widget", true)(b) as { properties?: { spec?: unknown } }
          return shape(w.properties?.spec)
        }
      })
    ]
  },
  {
    name: "openapi v3 configmap schema",
    steps: [get("/openapi/v3/api/v1", { compare: openapiSchema("io.k8s.api.core.v1.ConfigMap", false) })]
  },
  {
    name: "openapi v3 deployment spec",
    steps: [get("/openapi/v3/apis/apps/v1", { compare: openapiSchema("io.k8s.api.apps.v1.DeploymentSpec", false) })]
  },
  {
    name: "openapi v3 of an unknown group",
    steps: [get("/openapi/v3/apis/nosuch.example.com/v1", { compare: "head" })]
  },
  { name: "table of a configmap", steps: [post(cms, configMap("a", { k: "v" })), get(`${cms}/a`, { headers: TABLE })] },
  {
    name: "table of configmaps",
    steps: [
      post(cms, configMap("a", { k: "v" }, { labels: { t: "1" } })),
      post(cms, configMap("b", undefined, { labels: { t: "1" } })),
      get(`${cms}?labelSelector=t`, { headers: TABLE })
    ]
  },
  {
    name: "table with includeObject Object",
    steps: [post(cms, configMap("a")), get(`${cms}/a?includeObject=Object`, { headers: TABLE })]
  },
  {
    name: "table of secrets",
    steps: [
      post(secrets, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, stringData: { a: "1", b: "2" } }),
      get(secrets, { headers: TABLE })
    ]
  },
  {
    name: "table of custom resources with printer columns",
    steps: [post(widgets, widget("w", { replicas: 2, size: "large" })), get(widgets, { headers: TABLE })]
  },
  { name: "table of a namespace", steps: [get(ns, { headers: TABLE })] },
  {
    name: "table of a deployment",
    steps: [
      post(deployments, deployment("d", 0)),
      get(`${deployments}/d`, { headers: TABLE, delay: 1500, compare: tableWithoutController })
    ]
  },
  { name: "table of a missing object", steps: [get(`${cms}/missing`, { headers: TABLE })] },
  {
    name: "partial object metadata",
    steps: [post(cms, configMap("a", { k: "v" })), get(`${cms}/a`, { headers: PARTIAL })]
  },
  {
    name: "partial object metadata list",
    steps: [post(widgets, widget("w")), get(widgets, { headers: PARTIAL_LIST })]
  },
  {
    name: "table watch",
    steps: [post(widgets, widget("w")), watch(`${widgets}?resourceVersion={rv:0}`, 1, { headers: TABLE })]
  },
  { name: "protobuf get", steps: [post(cms, configMap("a")), get(`${cms}/a`, { headers: PROTOBUF, compare: "head" })] },
  { name: "protobuf list", steps: [post(cms, configMap("a")), get(cms, { headers: PROTOBUF, compare: "head" })] },
  { name: "protobuf not found", steps: [get(`${cms}/missing`, { headers: PROTOBUF, compare: "head" })] },
  { name: "protobuf create answer", steps: [post(cms, configMap("a"), { headers: PROTOBUF, compare: "head" })] },
  {
    name: "protobuf delete answer",
    steps: [post(cms, configMap("a")), del(`${cms}/a`, undefined, { headers: PROTOBUF, compare: "head" })]
  },
  {
    name: "protobuf watch",
    steps: [
      post(cms, configMap("a")),
      watch(`${cms}?resourceVersion={rv:0}`, 1, { headers: PROTOBUF, compare: "head" })
    ]
  },
  {
    name: "protobuf or JSON for a custom resource",
    steps: [post(widgets, widget("w")), get(`${widgets}/w`, { headers: PROTOBUF_OR_JSON, compare: "head" })]
  },
  {
    name: "protobuf only for a custom resource",
    steps: [post(widgets, widget("w")), get(`${widgets}/w`, { headers: PROTOBUF, compare: "head" })]
  },
  { name: "protobuf discovery", steps: [get("/api/v1", { headers: PROTOBUF, compare: "head" })] }
])
