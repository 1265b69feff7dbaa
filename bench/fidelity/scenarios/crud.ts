/** Create, get, update, generation, content types and request errors. */
import {
  area,
  at,
  cms,
  configMap,
  deployment,
  deployments,
  gadgets,
  get,
  ns,
  pod,
  pods,
  post,
  put,
  secrets,
  services,
  widget,
  widgets,
  withoutController
} from "../scenario.js"

export const crud = area("crud", [
  { name: "configmap create", steps: [post(cms, configMap("a", { k: "v" }))] },
  { name: "configmap create then get", steps: [post(cms, configMap("a", { k: "v" })), get(`${cms}/a`)] },
  {
    name: "configmap labels and annotations",
    steps: [post(cms, configMap("a", { k: "v" }, { labels: { app: "x" }, annotations: { "example.com/n": "1" } }))]
  },
  { name: "create twice is AlreadyExists", steps: [post(cms, configMap("a")), post(cms, configMap("a"))] },
  { name: "get missing is NotFound", steps: [get(`${cms}/missing`)] },
  { name: "get missing custom resource", steps: [get(`${widgets}/missing`)] },
  { name: "get in a missing namespace", steps: [get("/api/v1/namespaces/no-such-ns/configmaps/a")] },
  { name: "create in a missing namespace", steps: [post("/api/v1/namespaces/no-such-ns/configmaps", configMap("a"))] },
  {
    name: "update with current resourceVersion",
    steps: [
      post(cms, configMap("a", { k: "1" })),
      put(`${cms}/a`, configMap("a", { k: "2" }, { resourceVersion: "{rv:0}" }))
    ]
  },
  {
    name: "update with stale resourceVersion is Conflict",
    steps: [
      post(cms, configMap("a", { k: "1" })),
      put(`${cms}/a`, configMap("a", { k: "2" })),
      put(`${cms}/a`, configMap("a", { k: "3" }, { resourceVersion: "{rv:0}" }))
    ]
  },
  {
    name: "update without resourceVersion",
    steps: [post(cms, configMap("a", { k: "1" })), put(`${cms}/a`, configMap("a", { k: "2" })), get(`${cms}/a`)]
  },
  {
    name: "update that changes nothing keeps resourceVersion",
    steps: [post(cms, configMap("a", { k: "1" })), put(`${cms}/a`, configMap("a", { k: "1" }))]
  },
  {
    name: "update with a name mismatch",
    steps: [post(cms, configMap("a")), put(`${cms}/a`, configMap("b"))]
  },
  { name: "update of a missing configmap", steps: [put(`${cms}/missing`, configMap("missing"))] },
  { name: "update of a missing custom resource", steps: [put(`${widgets}/missing`, widget("missing"))] },
  {
    name: "create with generateName",
    steps: [post(cms, { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "gen-" } })]
  },
  {
    name: "secret stringData and default type",
    steps: [
      post(secrets, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, stringData: { user: "admin" } }),
      get(`${secrets}/s`)
    ]
  },
  {
    name: "secret with invalid base64",
    steps: [post(secrets, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { k: "not base64!" } })]
  },
  {
    name: "namespace of the body does not match",
    steps: [post(cms, configMap("a", undefined, { namespace: "other" }))]
  },
  {
    name: "kind of the body does not match",
    steps: [post(cms, { apiVersion: "v1", kind: "Secret", metadata: { name: "a" } })]
  },
  { name: "body that is not JSON", steps: [post(cms, "{not json")] },
  {
    name: "create from YAML",
    steps: [
      post(cms, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n", {
        headers: { "content-type": "application/yaml" }
      })
    ]
  },
  {
    name: "YAML 1.1 booleans",
    steps: [
      post(cms, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n", {
        headers: { "content-type": "application/yaml" }
      })
    ]
  },
  { name: "unsupported content type", steps: [post(cms, "a=b", { headers: { "content-type": "text/plain" } })] },
  { name: "POST to a named path", steps: [post(`${cms}/a`, configMap("a"))] },
  { name: "unknown resource path", steps: [get(`${ns}/nosuchthings`)] },
  {
    name: "immutable configmap",
    steps: [
      post(cms, { ...configMap("a", { k: "1" }), immutable: true }),
      put(`${cms}/a`, { ...configMap("a", { k: "2" }), immutable: true })
    ]
  },
  {
    name: "headless service defaults",
    steps: [
      post(services, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "svc" },
        spec: { clusterIP: "None", selector: { app: "x" }, ports: [{ port: 80 }] }
      })
    ]
  },
  { name: "pod defaults", steps: [post(pods, pod("p"))] },
  {
    name: "pod with ports and probe defaults",
    steps: [
      post(
        pods,
        pod("p", [{
          name: "web",
          image: "nginx:latest",
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: "/", port: 8080 } }
        }])
      )
    ]
  },
  { name: "deployment defaults", steps: [post(deployments, deployment("d"))] },
  {
    name: "statefulset generation on spec and metadata updates",
    steps: [
      post("/apis/apps/v1/namespaces/{ns}/statefulsets", { ...deployment("s"), kind: "StatefulSet" }, {
        compare: withoutController
      }),
      put("/apis/apps/v1/namespaces/{ns}/statefulsets/s", { ...deployment("s", 2), kind: "StatefulSet" }, {
        compare: withoutController
      }),
      put("/apis/apps/v1/namespaces/{ns}/statefulsets/s", {
        ...deployment("s", 2),
        kind: "StatefulSet",
        metadata: { name: "s", labels: { a: "b" } }
      }, { compare: withoutController })
    ]
  },
  {
    name: "deployment generation on spec and metadata updates",
    steps: [
      post(deployments, deployment("d")),
      put(`${deployments}/d`, deployment("d", 2), { compare: withoutController }),
      put(`${deployments}/d`, { ...deployment("d", 2), metadata: { name: "d", labels: { a: "b" } } }, {
        compare: withoutController
      })
    ]
  },
  {
    name: "custom resource generation",
    steps: [
      post(widgets, widget("w")),
      put(`${widgets}/w`, at(widget("w", { replicas: 2 }), 0)),
      put(`${widgets}/w`, {
        ...widget("w", { replicas: 2 }),
        metadata: { name: "w", labels: { a: "b" }, resourceVersion: "{rv:1}" }
      })
    ]
  },
  {
    name: "custom resource update without resourceVersion",
    steps: [post(widgets, widget("w")), put(`${widgets}/w`, widget("w", { replicas: 2 }))]
  },
  {
    name: "custom resource status update without resourceVersion",
    steps: [post(widgets, widget("w")), put(`${widgets}/w/status`, widget("w", {}, { status: { phase: "Ready" } }))]
  },
  {
    name: "configmap has no generation",
    steps: [post(cms, configMap("a", { k: "1" })), put(`${cms}/a`, configMap("a", { k: "2" }))]
  },
  {
    name: "cluster-scoped custom resource",
    steps: [
      post(gadgets, {
        apiVersion: "fidelity.example.com/v1",
        kind: "Gadget",
        metadata: { name: "{ns}-g" },
        spec: { anything: { nested: [1, 2] } }
      }),
      get(`${gadgets}/{ns}-g`)
    ]
  },
  {
    name: "namespace create and get",
    steps: [
      post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "{ns}-x" } }),
      get("/api/v1/namespaces/{ns}-x")
    ]
  }
])
