/**
 * Lists: label and field selectors, pagination, resourceVersion semantics. Lists of ConfigMaps select by label: the
 * real namespace controller side (kube-root-ca.crt, published into every namespace) has its own scenario.
 */
import { area, at, cms, compact, configMap, gadgets, get, post, put, secrets, widget, widgets } from "../scenario.js"

const labelled = (name: string, labels: Readonly<Record<string, string>>) =>
  post(cms, configMap(name, undefined, { labels }))

const three = [
  labelled("a", { tier: "web", env: "prod" }),
  labelled("b", { tier: "db", env: "prod" }),
  labelled("c", { tier: "web" })
]

const select = (selector: string) => get(`${cms}?labelSelector=${encodeURIComponent(selector)}`)

export const lists = area("list", [
  { name: "configmaps in a fresh namespace", steps: [get(cms)] },
  { name: "label selector equality", steps: [...three, select("tier=web")] },
  { name: "label selector inequality", steps: [...three, select("tier,env!=prod")] },
  { name: "label selector in", steps: [...three, select("tier in (web,db),env")] },
  { name: "label selector notin", steps: [...three, select("tier,tier notin (db)")] },
  { name: "label selector does not exist", steps: [...three, select("tier,!env")] },
  { name: "label selector that does not parse", steps: [select("tier in (web")] },
  { name: "label selector with an invalid value", steps: [select("tier=-bad-")] },
  {
    name: "field selector metadata.name",
    steps: [...three, get(`${cms}?fieldSelector=metadata.name%3Db&labelSelector=tier`)]
  },
  {
    name: "field selector inequality",
    steps: [...three, get(`${cms}?fieldSelector=metadata.name!%3Db&labelSelector=tier`)]
  },
  { name: "field selector that is not supported", steps: [get(`${cms}?fieldSelector=data.k%3Dv`)] },
  {
    name: "field selector on secret type",
    steps: [
      post(secrets, { apiVersion: "v1", kind: "Secret", metadata: { name: "s1" }, type: "example.com/x" }),
      post(secrets, { apiVersion: "v1", kind: "Secret", metadata: { name: "s2" } }),
      get(`${secrets}?fieldSelector=type%3Dexample.com%2Fx`)
    ]
  },
  {
    name: "field selector on a selectable custom field",
    steps: [
      post(widgets, widget("w1", { size: "large" })),
      post(widgets, widget("w2")),
      get(`${widgets}?fieldSelector=spec.size%3Dlarge`)
    ]
  },
  { name: "field selector on an unselectable custom field", steps: [get(`${widgets}?fieldSelector=spec.image%3Dx`)] },
  {
    name: "limit and continue",
    steps: [
      ...three,
      get(`${cms}?labelSelector=tier&limit=2`),
      get(`${cms}?labelSelector=tier&limit=2&continue={3:metadata.continue}`)
    ]
  },
  {
    name: "limit without selectors counts the rest",
    steps: [
      post(widgets, widget("w1")),
      post(widgets, widget("w2")),
      post(widgets, widget("w3")),
      get(`${widgets}?limit=1`),
      get(`${widgets}?limit=1&continue={3:metadata.continue}`),
      get(`${widgets}?limit=5&continue={4:metadata.continue}`)
    ]
  },
  {
    name: "continue keeps its snapshot",
    steps: [
      post(widgets, widget("w1")),
      post(widgets, widget("w2")),
      get(`${widgets}?limit=1`),
      post(widgets, widget("w3")),
      get(`${widgets}?limit=5&continue={2:metadata.continue}`)
    ]
  },
  { name: "continue token that is garbage", steps: [get(`${widgets}?limit=1&continue=garbage`)] },
  { name: "negative limit", steps: [post(widgets, widget("w1")), get(`${widgets}?limit=-1`)] },
  { name: "limit that is not a number", steps: [get(`${widgets}?limit=ten`)] },
  { name: "list resourceVersion 0", steps: [post(widgets, widget("w1")), get(`${widgets}?resourceVersion=0`)] },
  {
    name: "list Exact at an older resourceVersion",
    steps: [
      post(widgets, widget("w1")),
      post(widgets, widget("w2")),
      put(`${widgets}/w1`, at(widget("w1", { replicas: 3 }), 0)),
      get(`${widgets}?resourceVersion={rv:1}&resourceVersionMatch=Exact`)
    ]
  },
  {
    name: "list NotOlderThan an older resourceVersion",
    steps: [
      post(widgets, widget("w1")),
      put(`${widgets}/w1`, at(widget("w1", { replicas: 3 }), 0)),
      get(`${widgets}?resourceVersion={rv:0}&resourceVersionMatch=NotOlderThan`)
    ]
  },
  { name: "resourceVersionMatch without resourceVersion", steps: [get(`${widgets}?resourceVersionMatch=Exact`)] },
  {
    name: "resourceVersionMatch that is unknown",
    steps: [get(`${widgets}?resourceVersion=1&resourceVersionMatch=Sometimes`)]
  },
  { name: "list resourceVersion too new", steps: [get(`${widgets}?resourceVersion=999999999`)] },
  { name: "paginated list resourceVersion too new", steps: [get(`${widgets}?resourceVersion=999999999&limit=5`)] },
  { name: "list resourceVersion that is not a number", steps: [get(`${widgets}?resourceVersion=abc`)] },
  {
    name: "list Exact after compaction is Gone",
    serial: true,
    steps: [
      post(widgets, widget("w1")),
      put(`${widgets}/w1`, at(widget("w1", { replicas: 2 }), 0)),
      compact,
      get(`${widgets}?resourceVersion={rv:0}&resourceVersionMatch=Exact`),
      get(`${widgets}?resourceVersion={rv:1}&resourceVersionMatch=Exact`)
    ]
  },
  {
    name: "continue after compaction is Gone",
    serial: true,
    steps: [
      post(widgets, widget("w1")),
      post(widgets, widget("w2")),
      get(`${widgets}?limit=1`),
      put(`${widgets}/w1`, at(widget("w1", { replicas: 2 }), 0)),
      compact,
      get(`${widgets}?limit=1&continue={2:metadata.continue}`)
    ]
  },
  {
    name: "get with resourceVersion 0",
    steps: [post(cms, configMap("a")), get(`${cms}/a?resourceVersion=0`)]
  },
  {
    name: "list across namespaces by label",
    steps: [
      labelled("a", { owner: "{ns}" }),
      get(`/api/v1/configmaps?labelSelector=owner%3D{ns}`)
    ]
  },
  {
    name: "list cluster-scoped custom resources by label",
    steps: [
      post(gadgets, {
        apiVersion: "fidelity.example.com/v1",
        kind: "Gadget",
        metadata: { name: "{ns}-g", labels: { owner: "{ns}" } }
      }),
      get(`${gadgets}?labelSelector=owner%3D{ns}`)
    ]
  },
  {
    name: "list namespaces by name",
    steps: [get("/api/v1/namespaces?fieldSelector=metadata.name%3D{ns}")]
  },
  {
    name: "list namespaces by phase",
    steps: [get("/api/v1/namespaces?fieldSelector=status.phase%3DActive,metadata.name%3D{ns}")]
  }
])
