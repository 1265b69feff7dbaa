type Obj = Record<string, any>

export const cm = (name: string, extra: Obj = {}, namespace = "default"): Obj => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, ...extra.metadata },
  data: extra.data ?? { key: "value" }
})

export const deployment = (name: string, replicas = 1, extra: Obj = {}, namespace = "default"): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace, ...extra.metadata },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image: "nginx:1" }] } }
  }
})

/**
 * A CustomResourceDefinition of `example.com/v1` (`webapps` → kind WebApp, others: the singular capitalised), with
 * the `status` subresource unless `status` is false, and `schema` as its `openAPIV3Schema` (default: anything goes).
 */
export const crd = (
  scope: "Namespaced" | "Cluster" = "Namespaced",
  status = true,
  plural = "webapps",
  schema: Obj = { type: "object", "x-kubernetes-preserve-unknown-fields": true }
): Obj => {
  const singular = plural.slice(0, -1)
  const kind = plural === "webapps" ? "WebApp" : singular[0]!.toUpperCase() + singular.slice(1)
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: "example.com",
      scope,
      names: { plural, singular, kind, shortNames: [] },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        ...(status ? { subresources: { status: {} } } : {}),
        schema: { openAPIV3Schema: schema }
      }]
    }
  }
}

export const ref = (obj: Obj) => ({
  apiVersion: obj.apiVersion as string,
  kind: obj.kind as string,
  name: obj.metadata.name as string,
  namespace: obj.metadata.namespace as string | undefined
})

export const cmList = (namespace?: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace })
