/**
 * The CRDs installed on both servers before the scenarios run: a namespaced `Widget` exercising structural
 * schemas (defaults, pruning, nullable, list types, CEL rules, status and scale subresources, printer columns,
 * selectable fields) and a cluster-scoped `Gadget` without subresources.
 */

const widgetSchema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      required: ["replicas"],
      properties: {
        replicas: { type: "integer", minimum: 0, maximum: 10 },
        minReplicas: { type: "integer", default: 0 },
        size: { type: "string", enum: ["small", "large"], default: "small" },
        image: { type: "string", pattern: "^[a-z0-9./:-]+$", maxLength: 40 },
        note: { type: "string", nullable: true },
        tags: { type: "array", items: { type: "string" }, maxItems: 3, "x-kubernetes-list-type": "set" },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, port: { type: "integer", default: 80 } }
          }
        },
        settings: {
          type: "object",
          default: {},
          properties: { mode: { type: "string", default: "auto" }, level: { type: "integer" } }
        },
        config: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        labels: { type: "object", additionalProperties: { type: "string" } },
        immutableName: {
          type: "string",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "immutableName is immutable" }]
        },
        window: {
          type: "object",
          properties: { start: { type: "integer" }, end: { type: "integer" }, unit: { type: "string", maxLength: 10 } },
          "x-kubernetes-validations": [{
            rule: "self.start < self.end",
            messageExpression: "'the ' + (has(self.unit) ? self.unit : 'window') + ' starts after it ends'",
            reason: "FieldValueForbidden"
          }]
        }
      },
      "x-kubernetes-validations": [
        { rule: "self.minReplicas <= self.replicas", message: "minReplicas must not exceed replicas" },
        {
          rule: "!has(self.tags) || size(self.tags) <= self.replicas + 1",
          message: "too many tags",
          fieldPath: ".tags"
        }
      ]
    },
    status: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        selector: { type: "string" },
        phase: { type: "string", enum: ["Pending", "Ready"] }
      }
    }
  }
}

export const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.fidelity.example.com" },
  spec: {
    group: "fidelity.example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList", shortNames: ["wg"] },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: widgetSchema },
      subresources: {
        status: {},
        scale: {
          specReplicasPath: ".spec.replicas",
          statusReplicasPath: ".status.replicas",
          labelSelectorPath: ".status.selector"
        }
      },
      additionalPrinterColumns: [
        { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
        { name: "Size", type: "string", jsonPath: ".spec.size" },
        { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
      ],
      selectableFields: [{ jsonPath: ".spec.size" }]
    }]
  }
}

export const gadgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.fidelity.example.com" },
  spec: {
    group: "fidelity.example.com",
    scope: "Cluster",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            status: { type: "object", properties: { state: { type: "string" } } }
          }
        }
      }
    }]
  }
}

export const crds: ReadonlyArray<unknown> = [widgetCrd, gadgetCrd]
