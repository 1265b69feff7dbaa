/**
 * The ConfigMaps the kube benchmarks cache: ~410 bytes of JSON each (~720 with the managedFields a server adds).
 */

/** The `i`-th ConfigMap of a namespace; `round` changes its data (a watch's updates). */
export const configMap = (namespace: string, i: number, round = 0) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: `settings-${String(i).padStart(6, "0")}`,
    namespace,
    labels: { "app.kubernetes.io/name": "bench", "app.kubernetes.io/part-of": "reconcile", shard: String(i % 16) }
  },
  data: {
    "log-level": round % 2 === 0 ? "info" : "debug",
    endpoint: `https://service-${i % 64}.bench.svc.cluster.local:8443/api`,
    round: String(round)
  }
})
