/** Validation of built-in kinds (422 bodies and their causes), fieldValidation and dryRun. */
import {
  area,
  cms,
  configMap,
  deployment,
  deployments,
  get,
  patch,
  pod,
  pods,
  post,
  put,
  services,
  widget,
  widgets
} from "../scenario.js"

const unknownField = { ...configMap("a", { k: "v" }), spec: { x: 1 }, extra: true }

export const validation = area("validation", [
  { name: "invalid configmap name", steps: [post(cms, configMap("Not_Valid"))] },
  { name: "name too long", steps: [post(cms, configMap("a".repeat(254)))] },
  { name: "neither name nor generateName", steps: [post(cms, { apiVersion: "v1", kind: "ConfigMap", metadata: {} })] },
  { name: "invalid label value", steps: [post(cms, configMap("a", undefined, { labels: { k: "-bad value-" } }))] },
  { name: "invalid label key", steps: [post(cms, configMap("a", undefined, { labels: { "a/b/c": "v" } }))] },
  {
    name: "invalid annotation key",
    steps: [post(cms, configMap("a", undefined, { annotations: { "bad key": "v" } }))]
  },
  { name: "invalid configmap data key", steps: [post(cms, configMap("a", { "bad key": "v" }))] },
  {
    name: "several errors at once",
    steps: [post(cms, configMap("Bad_Name", { "bad key": "v" }, { labels: { k: "-" } }))]
  },
  {
    name: "invalid namespace name",
    steps: [post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "a.b" } })]
  },
  { name: "invalid finalizer name", steps: [post(cms, configMap("a", undefined, { finalizers: ["no-slash"] }))] },
  {
    name: "ownerReference without uid",
    steps: [
      post(
        cms,
        configMap("a", undefined, { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "" }] })
      )
    ]
  },
  {
    name: "two controller ownerReferences",
    steps: [
      post(
        cms,
        configMap("a", undefined, {
          ownerReferences: [
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              name: "o1",
              uid: "11111111-1111-1111-1111-111111111111",
              controller: true
            },
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              name: "o2",
              uid: "22222222-2222-2222-2222-222222222222",
              controller: true
            }
          ]
        })
      )
    ]
  },
  { name: "pod without containers", steps: [post(pods, pod("p", []))] },
  { name: "pod container without image", steps: [post(pods, pod("p", [{ name: "app" }]))] },
  {
    name: "deployment selector does not match the template",
    steps: [
      post(deployments, {
        ...deployment("d"),
        spec: { ...deployment("d").spec, selector: { matchLabels: { app: "other" } } }
      })
    ]
  },
  {
    name: "deployment selector is immutable",
    steps: [
      post(deployments, deployment("d")),
      patch("merge", `${deployments}/d`, {
        spec: {
          selector: { matchLabels: { app: "d", v: "2" } },
          template: { metadata: { labels: { app: "d", v: "2" } } }
        }
      })
    ]
  },
  { name: "deployment with negative replicas", steps: [post(deployments, deployment("d", -1))] },
  {
    name: "service with an invalid port",
    steps: [
      post(services, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "svc" },
        spec: { clusterIP: "None", ports: [{ port: 70000 }] }
      })
    ]
  },
  {
    name: "fieldValidation Strict refuses unknown fields",
    steps: [post(`${cms}?fieldValidation=Strict`, unknownField)]
  },
  { name: "fieldValidation Warn warns", steps: [post(`${cms}?fieldValidation=Warn`, unknownField), get(`${cms}/a`)] },
  { name: "fieldValidation Ignore is silent", steps: [post(`${cms}?fieldValidation=Ignore`, unknownField)] },
  { name: "fieldValidation default is Warn", steps: [post(cms, unknownField)] },
  { name: "fieldValidation that is unknown", steps: [post(`${cms}?fieldValidation=Loud`, configMap("a"))] },
  {
    name: "fieldValidation Strict on a nested unknown field",
    steps: [
      post(`${deployments}?fieldValidation=Strict`, {
        ...deployment("d"),
        spec: { ...deployment("d").spec, replica: 2 }
      })
    ]
  },
  {
    name: "fieldValidation Strict on a merge patch",
    steps: [post(cms, configMap("a")), patch("merge", `${cms}/a?fieldValidation=Strict`, { extra: 1 })]
  },
  {
    name: "fieldValidation Warn on an update",
    steps: [post(cms, configMap("a")), put(`${cms}/a?fieldValidation=Warn`, { ...configMap("a"), extra: 1 })]
  },
  {
    name: "fieldValidation Strict on a duplicate field",
    steps: [
      post(
        `${cms}?fieldValidation=Strict`,
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"1","k":"2"}}`
      )
    ]
  },
  {
    name: "fieldValidation Strict on a custom resource",
    steps: [post(`${widgets}?fieldValidation=Strict`, widget("w", { unknown: 1 }))]
  },
  {
    name: "fieldValidation Warn on a custom resource",
    steps: [post(`${widgets}?fieldValidation=Warn`, widget("w", { unknown: 1 }, { extra: "x" }))]
  },
  {
    name: "apply with an undeclared field",
    steps: [patch("apply", `${cms}/a?fieldManager=alice`, { ...configMap("a"), extra: 1 })]
  },
  { name: "dryRun create is not stored", steps: [post(`${cms}?dryRun=All`, configMap("a")), get(`${cms}/a`)] },
  { name: "dryRun that is unknown", steps: [post(`${cms}?dryRun=Some`, configMap("a"))] },
  { name: "dryRun create of an invalid object", steps: [post(`${cms}?dryRun=All`, configMap("Bad_Name"))] },
  { name: "dryRun of a custom resource", steps: [post(`${widgets}?dryRun=All`, widget("w")), get(`${widgets}/w`)] }
])
