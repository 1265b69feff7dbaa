/** Custom resources against their structural schema: defaulting, pruning, nullable, validation and CEL rules. */
import { area, at, get, patch, post, put, unorderedCauses, widget, widgets } from "../scenario.js"

const create = (spec: Readonly<Record<string, unknown>>, extra?: Readonly<Record<string, unknown>>) =>
  post(widgets, widget("w", spec, extra))

export const crd = area("crd", [
  { name: "defaults applied", steps: [create({}), get(`${widgets}/w`)] },
  { name: "defaults inside a defaulted object", steps: [create({ settings: { level: 2 } })] },
  { name: "default of a list map item", steps: [create({ ports: [{ name: "http" }] })] },
  { name: "unknown fields pruned", steps: [create({ bogus: 1, settings: { junk: true } }), get(`${widgets}/w`)] },
  { name: "unknown top-level field pruned", steps: [create({}, { extra: { a: 1 } })] },
  { name: "preserve-unknown-fields kept", steps: [create({ config: { anything: [1, "two", { three: 3 }] } })] },
  { name: "nullable field keeps null", steps: [create({ note: null })] },
  { name: "null in a non-nullable field with a default", steps: [create({ size: null })] },
  { name: "null in a non-nullable field without a default", steps: [create({ image: null })] },
  { name: "wrong type", steps: [create({ replicas: "three" })] },
  { name: "number where an integer is required", steps: [create({ replicas: 1.5 })] },
  { name: "above maximum", steps: [create({ replicas: 11 })] },
  { name: "below minimum", steps: [create({ replicas: -1 })] },
  { name: "not in enum", steps: [create({ size: "medium" })] },
  { name: "pattern mismatch", steps: [create({ image: "Not Valid" })] },
  { name: "too long", steps: [create({ image: "a".repeat(41) })] },
  { name: "too many items", steps: [create({ replicas: 5, tags: ["a", "b", "c", "d"] })] },
  { name: "duplicate items in a set", steps: [create({ tags: ["a", "a"] })] },
  { name: "duplicate keys in a list map", steps: [create({ ports: [{ name: "x" }, { name: "x", port: 81 }] })] },
  { name: "required field missing", steps: [post(widgets, { ...widget("w"), spec: { size: "small" } })] },
  { name: "spec of the wrong type", steps: [post(widgets, { ...widget("w"), spec: "nope" })] },
  { name: "additionalProperties of the wrong type", steps: [create({ labels: { a: 1 } })] },
  {
    name: "several schema errors",
    // the real server's order of sibling properties' errors is Go map order (unorderedCauses says why)
    steps: [post(widgets, widget("w", { replicas: 20, size: "huge", image: "BAD" }), { compare: unorderedCauses })]
  },
  { name: "CEL rule message", steps: [create({ replicas: 1, minReplicas: 3 })] },
  { name: "CEL rule with fieldPath", steps: [create({ replicas: 0, tags: ["a", "b"] })] },
  { name: "CEL messageExpression and reason", steps: [create({ window: { start: 5, end: 2 } })] },
  { name: "CEL rule that holds", steps: [create({ replicas: 3, minReplicas: 2, window: { start: 1, end: 2 } })] },
  {
    name: "CEL transition rule",
    steps: [
      create({ immutableName: "first" }),
      patch("merge", `${widgets}/w`, { spec: { immutableName: "second" } })
    ]
  },
  {
    name: "CEL transition rule on an unchanged value",
    steps: [create({ immutableName: "first" }), patch("merge", `${widgets}/w`, { spec: { replicas: 2 } })]
  },
  {
    name: "CEL rule skipped after a schema error",
    steps: [create({ replicas: "x", minReplicas: 3 })]
  },
  {
    name: "update that breaks the schema",
    steps: [create({}), put(`${widgets}/w`, at(widget("w", { replicas: 100 }), 0))]
  },
  {
    name: "ratcheting keeps an unchanged invalid value",
    steps: [create({ tags: ["a"] }), patch("merge", `${widgets}/w`, { spec: { size: "large" } })]
  },
  { name: "metadata name invalid", steps: [post(widgets, widget("Bad_Name"))] },
  {
    name: "apiVersion of another group",
    steps: [post(widgets, { ...widget("w"), apiVersion: "other.example.com/v1" })]
  },
  {
    name: "kind missing",
    steps: [post(widgets, { apiVersion: "fidelity.example.com/v1", metadata: { name: "w" }, spec: { replicas: 1 } })]
  },
  {
    name: "invalid CRD",
    steps: [
      post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "wrong.fidelity.example.com" },
        spec: {
          group: "fidelity.example.com",
          scope: "Namespaced",
          names: { plural: "things", kind: "Thing" },
          versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }]
        }
      })
    ]
  },
  {
    name: "CRD whose CEL rule exceeds the cost budget",
    steps: [
      post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "costly{ns}.costly.example.com" },
        spec: {
          group: "costly.example.com",
          scope: "Namespaced",
          names: { plural: "costly{ns}", kind: "Costly" },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    properties: { n: { type: "integer" } },
                    "x-kubernetes-validations": [{ rule: "self.n > 0", messageExpression: "'n is ' + string(self.n)" }]
                  }
                }
              }
            }
          }]
        }
      }, { compare: (b) => (b as { code?: number; details?: unknown }).details ?? "accepted" })
    ]
  },
  {
    name: "apply to a custom resource with defaults",
    steps: [
      patch("apply", `${widgets}/w?fieldManager=alice`, widget("w", { size: "large" })),
      patch("apply", `${widgets}/w?fieldManager=alice`, widget("w", {}))
    ]
  }
])
