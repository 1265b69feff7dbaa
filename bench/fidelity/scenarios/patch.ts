/** Merge, JSON, strategic-merge and apply patches; managedFields; dryRun of writes. */
import {
  area,
  cms,
  configMap,
  deployment,
  deployments,
  get,
  patch,
  post,
  put,
  widget,
  widgets,
  withoutController
} from "../scenario.js"

const apply = (path: string, body: unknown, query = "fieldManager=alice") => patch("apply", `${path}?${query}`, body)

export const patches = area("patch", [
  {
    name: "merge patch adds and removes keys",
    steps: [
      post(cms, configMap("a", { k1: "1", k2: "2" })),
      patch("merge", `${cms}/a`, { data: { k1: null, k3: "3" } })
    ]
  },
  {
    name: "merge patch of labels",
    steps: [post(cms, configMap("a")), patch("merge", `${cms}/a`, { metadata: { labels: { x: "y" } } })]
  },
  { name: "merge patch of a missing object", steps: [patch("merge", `${cms}/missing`, { data: { k: "v" } })] },
  {
    name: "merge patch that changes nothing",
    steps: [post(cms, configMap("a", { k: "v" })), patch("merge", `${cms}/a`, { data: { k: "v" } })]
  },
  {
    name: "merge patch with a stale resourceVersion",
    steps: [
      post(cms, configMap("a", { k: "1" })),
      patch("merge", `${cms}/a`, { data: { k: "2" } }),
      patch("merge", `${cms}/a`, { metadata: { resourceVersion: "{rv:0}" }, data: { k: "3" } })
    ]
  },
  { name: "merge patch that is not JSON", steps: [post(cms, configMap("a")), patch("merge", `${cms}/a`, "{oops")] },
  {
    name: "json patch add replace remove",
    steps: [
      post(cms, configMap("a", { k1: "1", k2: "2" })),
      patch("jsonpatch", `${cms}/a`, [
        { op: "add", path: "/data/k3", value: "3" },
        { op: "replace", path: "/data/k1", value: "one" },
        { op: "remove", path: "/data/k2" }
      ])
    ]
  },
  {
    name: "json patch test that fails",
    steps: [
      post(cms, configMap("a", { k: "1" })),
      patch("jsonpatch", `${cms}/a`, [{ op: "test", path: "/data/k", value: "2" }])
    ]
  },
  {
    name: "json patch remove of a missing path",
    steps: [post(cms, configMap("a", { k: "1" })), patch("jsonpatch", `${cms}/a`, [{ op: "remove", path: "/data/x" }])]
  },
  {
    name: "json patch with an unknown op",
    steps: [post(cms, configMap("a")), patch("jsonpatch", `${cms}/a`, [{ op: "frobnicate", path: "/data" }])]
  },
  {
    name: "json patch of a custom resource",
    steps: [
      post(widgets, widget("w")),
      patch("jsonpatch", `${widgets}/w`, [{ op: "replace", path: "/spec/replicas", value: 3 }])
    ]
  },
  {
    name: "strategic merge of containers by name",
    steps: [
      post(deployments, deployment("d")),
      patch("strategic", `${deployments}/d`, {
        spec: { template: { spec: { containers: [{ name: "sidecar", image: "busybox:1.36" }] } } }
      }, { compare: withoutController })
    ]
  },
  {
    name: "strategic merge $patch delete",
    steps: [
      post(deployments, deployment("d")),
      patch("strategic", `${deployments}/d`, {
        spec: { template: { spec: { containers: [{ name: "sidecar", image: "busybox:1.36" }] } } }
      }, { compare: withoutController }),
      patch("strategic", `${deployments}/d`, {
        spec: { template: { spec: { containers: [{ name: "sidecar", $patch: "delete" }] } } }
      }, { compare: withoutController })
    ]
  },
  {
    name: "strategic merge of a configmap",
    steps: [
      post(cms, configMap("a", { k1: "1" })),
      patch("strategic", `${cms}/a`, { data: { k2: "2" }, metadata: { labels: { l: "v" } } })
    ]
  },
  {
    name: "strategic merge of a custom resource",
    steps: [post(widgets, widget("w")), patch("strategic", `${widgets}/w`, { spec: { replicas: 2 } })]
  },
  {
    name: "apply creates",
    steps: [apply(`${cms}/a`, configMap("a", { k: "v" }))]
  },
  {
    name: "apply twice is a no-op",
    steps: [apply(`${cms}/a`, configMap("a", { k: "v" })), apply(`${cms}/a`, configMap("a", { k: "v" }))]
  },
  {
    name: "apply without fieldManager",
    steps: [patch("apply", `${cms}/a`, configMap("a", { k: "v" }))]
  },
  {
    name: "apply conflict with an update manager",
    steps: [
      apply(`${cms}/a`, configMap("a", { k: "v" })),
      patch("merge", `${cms}/a?fieldManager=bob`, { data: { k: "bob" } }),
      apply(`${cms}/a`, configMap("a", { k: "alice" }))
    ]
  },
  {
    name: "apply conflict with another applier",
    steps: [
      apply(`${deployments}/d`, deployment("d", 2)),
      apply(`${deployments}/d`, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "d" },
        spec: { replicas: 3 }
      }, "fieldManager=hpa")
    ]
  },
  {
    name: "apply force takes ownership",
    steps: [
      apply(`${cms}/a`, configMap("a", { k: "v" })),
      apply(`${cms}/a`, configMap("a", { k: "bob" }), "fieldManager=bob&force=true"),
      get(`${cms}/a`)
    ]
  },
  {
    name: "apply same value shares ownership",
    steps: [
      apply(`${cms}/a`, configMap("a", { k: "v" })),
      apply(`${cms}/a`, configMap("a", { k: "v" }), "fieldManager=bob")
    ]
  },
  {
    name: "apply drops a field no longer applied",
    steps: [
      apply(`${cms}/a`, configMap("a", { k1: "1", k2: "2" })),
      apply(`${cms}/a`, configMap("a", { k1: "1" }))
    ]
  },
  {
    name: "apply keeps a field another manager owns",
    steps: [
      apply(`${cms}/a`, configMap("a", { k1: "1", k2: "2" })),
      apply(`${cms}/a`, configMap("a", { k2: "2" }), "fieldManager=bob"),
      apply(`${cms}/a`, configMap("a", { k1: "1" }))
    ]
  },
  {
    name: "apply with force=true on a non-apply patch",
    steps: [post(cms, configMap("a")), patch("merge", `${cms}/a?force=true`, { data: { k: "v" } })]
  },
  {
    name: "apply from YAML",
    steps: [
      patch(
        "apply",
        `${cms}/from-yaml?fieldManager=alice`,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n"
      )
    ]
  },
  {
    name: "apply with a name mismatch",
    steps: [apply(`${cms}/a`, configMap("b"))]
  },
  {
    name: "managedFields of create, update and apply",
    steps: [
      post(cms, configMap("a", { k1: "1" }), {}),
      put(`${cms}/a?fieldManager=editor`, configMap("a", { k1: "1", k2: "2" })),
      apply(`${cms}/a`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", labels: { l: "v" } } })
    ]
  },
  {
    name: "apply of a custom resource list map",
    steps: [
      apply(`${widgets}/w`, widget("w", { ports: [{ name: "http", port: 80 }] })),
      apply(
        `${widgets}/w`,
        {
          ...widget("w", { ports: [{ name: "metrics", port: 9090 }] }),
          spec: { ports: [{ name: "metrics", port: 9090 }] }
        },
        "fieldManager=bob"
      )
    ]
  },
  {
    name: "apply of a deployment with containers",
    steps: [
      apply(`${deployments}/d`, deployment("d")),
      { ...apply(`${deployments}/d`, deployment("d", 1, "nginx:1.28")), compare: withoutController }
    ]
  },
  {
    name: "apply with a stale resourceVersion",
    steps: [
      apply(`${cms}/a`, configMap("a", { k: "1" })),
      apply(`${cms}/a`, configMap("a", { k: "2" })),
      apply(`${cms}/a`, configMap("a", { k: "3" }, { resourceVersion: "{rv:0}" }))
    ]
  },
  {
    name: "dryRun patch leaves the object",
    steps: [
      post(cms, configMap("a", { k: "1" })),
      patch("merge", `${cms}/a?dryRun=All`, { data: { k: "2" } }),
      get(`${cms}/a`)
    ]
  },
  {
    name: "dryRun apply of a missing object",
    steps: [apply(`${cms}/a`, configMap("a", { k: "1" }), "fieldManager=alice&dryRun=All"), get(`${cms}/a`)]
  }
])
