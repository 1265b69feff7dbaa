/** The status and scale subresources. */
import {
  area,
  at,
  cms,
  configMap,
  deployment,
  deployments,
  gadgets,
  get,
  patch,
  post,
  put,
  widget,
  widgets
} from "../scenario.js"

const gadget = (status?: unknown) => ({
  apiVersion: "fidelity.example.com/v1",
  kind: "Gadget",
  metadata: { name: "{ns}-g" },
  spec: { a: 1 },
  ...(status === undefined ? {} : { status })
})

export const subresources = area("subresources", [
  {
    name: "status is dropped on create",
    steps: [post(widgets, widget("w", {}, { status: { phase: "Ready" } }))]
  },
  {
    name: "status update changes only status",
    steps: [
      post(widgets, widget("w")),
      put(`${widgets}/w/status`, at(widget("w", { replicas: 5 }, { status: { phase: "Ready", replicas: 1 } }), 0)),
      get(`${widgets}/w`)
    ]
  },
  {
    name: "main update keeps status",
    steps: [
      post(widgets, widget("w")),
      patch("merge", `${widgets}/w/status`, { status: { phase: "Ready" } }),
      put(`${widgets}/w`, at(widget("w", { replicas: 2 }, { status: { phase: "Pending" } }), 1))
    ]
  },
  {
    name: "status merge patch",
    steps: [post(widgets, widget("w")), patch("merge", `${widgets}/w/status`, { status: { replicas: 2 } })]
  },
  {
    name: "status apply",
    steps: [
      post(widgets, widget("w")),
      patch("apply", `${widgets}/w/status?fieldManager=ctrl`, {
        apiVersion: "fidelity.example.com/v1",
        kind: "Widget",
        metadata: { name: "w" },
        status: { phase: "Ready" }
      })
    ]
  },
  {
    name: "status validation",
    steps: [post(widgets, widget("w")), patch("merge", `${widgets}/w/status`, { status: { phase: "Gone" } })]
  },
  { name: "status of a configmap", steps: [post(cms, configMap("a")), get(`${cms}/a/status`)] },
  { name: "status get", steps: [post(widgets, widget("w")), get(`${widgets}/w/status`)] },
  {
    name: "status without the subresource bumps generation",
    steps: [post(gadgets, gadget({ state: "new" })), put(`${gadgets}/{ns}-g`, gadget({ state: "on" }))]
  },
  {
    name: "deployment status update",
    steps: [
      post(deployments, deployment("d", 0)),
      patch("merge", `${deployments}/d/status`, { status: { observedGeneration: 1, replicas: 0 } }, {
        compare: (b) => {
          const o = b as { kind?: string; metadata?: { generation?: number }; status?: { observedGeneration?: number } }
          return [o.kind, o.metadata?.generation, o.status?.observedGeneration]
        }
      })
    ]
  },
  {
    name: "scale of a custom resource",
    steps: [post(widgets, widget("w", { replicas: 2 })), get(`${widgets}/w/scale`)]
  },
  {
    name: "scale update",
    steps: [
      post(widgets, widget("w", { replicas: 2 })),
      put(`${widgets}/w/scale`, {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name: "w" },
        spec: { replicas: 4 }
      }),
      get(`${widgets}/w`)
    ]
  },
  {
    name: "scale merge patch",
    steps: [post(widgets, widget("w")), patch("merge", `${widgets}/w/scale`, { spec: { replicas: 3 } })]
  },
  {
    name: "scale update with a stale resourceVersion",
    steps: [
      post(widgets, widget("w")),
      patch("merge", `${widgets}/w`, { spec: { replicas: 2 } }),
      put(`${widgets}/w/scale`, {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name: "w", resourceVersion: "{rv:0}" },
        spec: { replicas: 4 }
      })
    ]
  },
  {
    name: "scale beyond the schema maximum",
    steps: [post(widgets, widget("w")), patch("merge", `${widgets}/w/scale`, { spec: { replicas: 50 } })]
  },
  { name: "scale of a configmap", steps: [post(cms, configMap("a")), get(`${cms}/a/scale`)] },
  {
    name: "scale of a deployment",
    steps: [
      post(deployments, deployment("d", 2)),
      // status.replicas follows the ReplicaSet the controller creates, whenever it does
      get(`${deployments}/d/scale`, {
        compare: (b) => {
          const { status, ...rest } = b as { status?: { replicas?: number; selector?: string } }
          return { ...rest, selector: status?.selector }
        }
      })
    ]
  },
  { name: "scale of a missing object", steps: [get(`${widgets}/missing/scale`)] }
])
