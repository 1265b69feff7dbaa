/** Deletes: preconditions, propagation policies, finalizers and deletion timestamps, namespaces. */
import { area, cms, configMap, del, get, patch, post, put, widget, widgets } from "../scenario.js"

const owned = (name: string, ownerStep: number, extra?: Readonly<Record<string, unknown>>) =>
  configMap(name, undefined, {
    ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: `{uid:${ownerStep}}`, ...extra }]
  })

export const deletes = area("delete", [
  { name: "delete a configmap", steps: [post(cms, configMap("a")), del(`${cms}/a`), get(`${cms}/a`)] },
  { name: "delete a missing configmap", steps: [del(`${cms}/missing`)] },
  { name: "delete a custom resource", steps: [post(widgets, widget("w")), del(`${widgets}/w`)] },
  {
    name: "delete with a uid precondition that fails",
    steps: [
      post(cms, configMap("a")),
      del(`${cms}/a`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: "00000000-0000-0000-0000-000000000000" }
      })
    ]
  },
  {
    name: "delete with a resourceVersion precondition that fails",
    steps: [
      post(cms, configMap("a", { k: "1" })),
      put(`${cms}/a`, configMap("a", { k: "2" })),
      del(`${cms}/a`, { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion: "{rv:0}" } })
    ]
  },
  {
    name: "delete with preconditions that hold",
    steps: [
      post(cms, configMap("a")),
      del(`${cms}/a`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: "{uid:0}", resourceVersion: "{rv:0}" }
      })
    ]
  },
  {
    name: "delete with an invalid propagationPolicy",
    steps: [post(cms, configMap("a")), del(`${cms}/a?propagationPolicy=Sometimes`)]
  },
  {
    name: "delete held by a finalizer",
    steps: [
      post(cms, configMap("a", undefined, { finalizers: ["example.com/hold"] })),
      del(`${cms}/a`),
      get(`${cms}/a`),
      patch("merge", `${cms}/a`, { metadata: { finalizers: null } }),
      get(`${cms}/a`)
    ]
  },
  {
    name: "delete twice while finalizing",
    steps: [
      post(cms, configMap("a", undefined, { finalizers: ["example.com/hold"] })),
      del(`${cms}/a`),
      del(`${cms}/a`)
    ]
  },
  {
    name: "no new finalizers while deleting",
    steps: [
      post(cms, configMap("a", undefined, { finalizers: ["example.com/hold"] })),
      del(`${cms}/a`),
      patch("merge", `${cms}/a`, { metadata: { finalizers: ["example.com/hold", "example.com/other"] } })
    ]
  },
  {
    name: "deletionTimestamp cannot be set by a client",
    steps: [post(cms, configMap("a", undefined, { deletionTimestamp: "2020-01-01T00:00:00Z" })), get(`${cms}/a`)]
  },
  {
    name: "custom resource held by a finalizer",
    steps: [
      post(widgets, { ...widget("w"), metadata: { name: "w", finalizers: ["example.com/hold"] } }),
      del(`${widgets}/w`),
      get(`${widgets}/w`)
    ]
  },
  {
    name: "foreground deletion",
    steps: [
      post(cms, configMap("owner")),
      post(cms, owned("dep", 0, { blockOwnerDeletion: true })),
      del(`${cms}/owner?propagationPolicy=Foreground`),
      get(`${cms}/dep`, { delay: 2500 }),
      get(`${cms}/owner`)
    ]
  },
  {
    name: "background deletion collects dependents",
    steps: [
      post(cms, configMap("owner")),
      post(cms, owned("dep", 0)),
      del(`${cms}/owner?propagationPolicy=Background`),
      get(`${cms}/dep`, { delay: 2500 })
    ]
  },
  {
    name: "orphan deletion keeps dependents",
    steps: [
      post(cms, configMap("owner")),
      post(cms, owned("dep", 0)),
      del(`${cms}/owner?propagationPolicy=Orphan`),
      get(`${cms}/dep`, { delay: 2500 }),
      get(`${cms}/owner`)
    ]
  },
  {
    name: "orphan deletion from DeleteOptions body",
    steps: [
      post(cms, configMap("owner")),
      post(cms, owned("dep", 0)),
      del(`${cms}/owner`, { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Orphan" }),
      get(`${cms}/dep`, { delay: 2500 })
    ]
  },
  {
    name: "delete collection by label",
    steps: [
      post(cms, configMap("a", undefined, { labels: { group: "x" } })),
      post(cms, configMap("b", undefined, { labels: { group: "x" } })),
      post(cms, configMap("c", undefined, { labels: { group: "y" } })),
      del(`${cms}?labelSelector=group%3Dx`),
      get(`${cms}?labelSelector=group`)
    ]
  },
  {
    name: "dryRun delete leaves the object",
    steps: [post(cms, configMap("a")), del(`${cms}/a?dryRun=All`), get(`${cms}/a`)]
  },
  {
    name: "delete the default namespace is forbidden",
    steps: [del("/api/v1/namespaces/default", undefined, { compare: "full" })]
  },
  {
    name: "terminating namespace",
    steps: [
      post(cms, configMap("held", undefined, { finalizers: ["example.com/hold"] })),
      del("/api/v1/namespaces/{ns}"),
      post(cms, configMap("new"), { delay: 500 }),
      get(`${cms}/held`, { delay: 2000 }),
      patch("merge", `${cms}/held`, { metadata: { finalizers: null } })
    ]
  },
  {
    name: "terminating namespace status",
    steps: [
      post(cms, configMap("held", undefined, { finalizers: ["example.com/hold"] })),
      del("/api/v1/namespaces/{ns}"),
      get("/api/v1/namespaces/{ns}", { delay: 3000 })
    ]
  },
  {
    name: "delete a namespace",
    steps: [
      post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "{ns}-x" } }),
      del("/api/v1/namespaces/{ns}-x"),
      get("/api/v1/namespaces/{ns}-x", { delay: 3000 })
    ]
  }
])
