/**
 * The AdmissionReviews of the webhook benchmark (no effect, no Reconcile: the load generator imports it too): a
 * Deployment-sized custom resource (`apps.reconcile.dev/v1` WebApp, ~2.3 KB of JSON with its kubectl annotation and
 * managedFields) as kube-apiserver sends it — a CREATE to the defaulter, an UPDATE (object and oldObject) to the
 * validator.
 */

/** The paths of the two webhooks (controller-runtime's, as `Admission.defaulter`/`validator` name them). */
export const paths = {
  mutate: "/mutate-apps-reconcile-dev-v1-webapp",
  validate: "/validate-apps-reconcile-dev-v1-webapp"
} as const

/** The `i`-th WebApp; `round` changes its replicas (an update). Every fourth one runs `:latest` (a warning). */
export const webApp = (i: number, options: { readonly defaulted: boolean; readonly round?: number }) => {
  const name = `webapp-${String(i).padStart(5, "0")}`
  const image = i % 4 === 3
    ? "registry.example.com/team-a/webapp:latest"
    : `registry.example.com/team-a/webapp:1.4.${i % 10}`
  const spec = {
    image,
    ...(options.defaulted ? { replicas: 2 + (options.round ?? 0), tier: i % 2 === 0 ? "standard" : "gold" } : {}),
    ...(options.defaulted ? { port: 8080 } : {}),
    env: [
      { name: "LOG_LEVEL", value: "info" },
      { name: "DATABASE_URL", value: `postgres://db-${i % 8}.data.svc.cluster.local:5432/app` },
      { name: "CACHE_URL", value: `redis://cache-${i % 4}.data.svc.cluster.local:6379` },
      { name: "FEATURE_FLAGS", value: "search,checkout-v2,dark-mode" },
      { name: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://otel-collector.observability:4317" },
      { name: "REGION", value: "eu-west-1" }
    ],
    resources: {
      limits: { cpu: "1", memory: "512Mi" },
      ...(options.defaulted ? { requests: { cpu: "100m", memory: "128Mi" } } : {})
    },
    ingress: { host: `${name}.apps.example.com`, tls: true, ...(options.defaulted ? { path: "/" } : {}) },
    probes: { path: "/healthz", ...(options.defaulted ? { periodSeconds: 10 } : {}) },
    volumes: [
      { name: "data", mountPath: "/var/lib/webapp", size: "1Gi" },
      { name: "cache", mountPath: "/var/cache/webapp", size: "256Mi" }
    ],
    labels: { team: "team-a", "cost-center": `cc-${i % 16}` }
  }
  return {
    apiVersion: "apps.reconcile.dev/v1",
    kind: "WebApp",
    metadata: {
      name,
      namespace: "team-a",
      labels: { "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "storefront", tier: "web" },
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({
          apiVersion: "apps.reconcile.dev/v1",
          kind: "WebApp",
          metadata: { name, namespace: "team-a" },
          spec: { image, env: spec.env.slice(0, 2) }
        }) + "\n"
      },
      ...(options.round === undefined ? {} : {
        uid: `6f1c2a5e-0b7d-4c1e-9d3a-${String(i).padStart(12, "0")}`,
        resourceVersion: String(1000 + i * 7 + options.round),
        generation: 1 + options.round,
        creationTimestamp: "2026-12-04T20:00:00Z"
      }),
      managedFields: [{
        manager: "kubectl-client-side-apply",
        operation: "Update",
        apiVersion: "apps.reconcile.dev/v1",
        time: "2026-12-04T20:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": { "f:annotations": { ".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {} } },
          "f:spec": { ".": {}, "f:env": {}, "f:image": {}, "f:ingress": {}, "f:probes": {}, "f:resources": {} }
        }
      }]
    },
    spec
  }
}

const request = (uid: string, operation: "CREATE" | "UPDATE", name: string) => ({
  uid,
  kind: { group: "apps.reconcile.dev", version: "v1", kind: "WebApp" },
  resource: { group: "apps.reconcile.dev", version: "v1", resource: "webapps" },
  requestKind: { group: "apps.reconcile.dev", version: "v1", kind: "WebApp" },
  requestResource: { group: "apps.reconcile.dev", version: "v1", resource: "webapps" },
  name,
  namespace: "team-a",
  operation,
  userInfo: {
    username: "system:serviceaccount:ci:deployer",
    uid: "2c7f8b4a-55e1-4f0e-8a61-0d3b6a9c1e27",
    groups: ["system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"]
  },
  dryRun: false
})

const uidOf = (kind: "c" | "u", i: number) =>
  `${kind === "c" ? "a" : "b"}0e1c3f2-7d4b-4a8e-9c61-${String(i).padStart(12, "0")}`

/** A CREATE review of the `i`-th WebApp, its defaults missing (for the defaulter). */
export const createReview = (i: number) => {
  const object = webApp(i, { defaulted: false })
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      ...request(uidOf("c", i), "CREATE", object.metadata.name),
      object,
      oldObject: null,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions", fieldManager: "kubectl-client-side-apply" }
    }
  }
}

/** An UPDATE review of the `i`-th WebApp (one replica more, for the validator). */
export const updateReview = (i: number) => {
  const object = webApp(i, { defaulted: true, round: 1 })
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      ...request(uidOf("u", i), "UPDATE", object.metadata.name),
      object,
      oldObject: webApp(i, { defaulted: true, round: 0 }),
      options: { apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions", fieldManager: "kubectl-client-side-apply" }
    }
  }
}

/** A request the load generator sends: the path, the body, and the uid its answer must carry. */
export interface Review {
  readonly path: string
  readonly body: string
  readonly uid: string
}

/** `count` distinct reviews, alternating: a CREATE to the defaulter, an UPDATE to the validator. */
export const reviews = (count: number): ReadonlyArray<Review> =>
  Array.from({ length: count }, (_, n) => {
    const i = n >> 1
    const review = n % 2 === 0 ? createReview(i) : updateReview(i)
    return {
      path: n % 2 === 0 ? paths.mutate : paths.validate,
      body: JSON.stringify(review),
      uid: review.request.uid
    }
  })
