/**
 * config-rollout: when a ConfigMap changes, every Deployment that references
 * it (volumes, `envFrom`, `env[].valueFrom`) gets a new pod-template
 * annotation with the hash of its ConfigMaps' data, so Kubernetes rolls it.
 *
 * The ConfigMap → Deployments mapping is a `watches` map function over a
 * cache index on Deployments (`configmap` → `namespace/name` of each
 * referenced ConfigMap): no list call per event.
 */
import { Request } from "@reconcile/core"
import { Cache, KubeClient, KubeController, KubeOutcome, Resource, Undecodable } from "@reconcile/kube"
import { Effect } from "effect"
import { createHash } from "node:crypto"

/** The pod-template annotation that carries the hash. */
export const hashAnnotation = "config-rollout.reconcile.dev/config-hash"
/** The name of the Deployment index. */
export const configMapIndex = "configmap"

/** The ConfigMaps a Deployment references, by name. */
export const referencedConfigMaps = (deployment: Resource.Deployment): ReadonlyArray<string> => {
  const spec = deployment.spec?.template?.spec
  const names = new Set<string>()
  for (const volume of spec?.volumes ?? []) if (volume.configMap?.name) names.add(volume.configMap.name)
  for (const container of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    for (const from of container.envFrom ?? []) if (from.configMapRef?.name) names.add(from.configMapRef.name)
    for (const env of container.env ?? []) {
      const name = env.valueFrom?.configMapKeyRef?.name
      if (name) names.add(name)
    }
  }
  return [...names].sort()
}

/** The hash of the referenced ConfigMaps' data (a missing ConfigMap hashes as missing). */
export const configHash = (configMaps: ReadonlyArray<readonly [string, Resource.ConfigMap | undefined]>): string => {
  const hash = createHash("sha256")
  for (const [name, cm] of configMaps) {
    hash.update(name)
    hash.update(cm === undefined ? "\u0000missing" : JSON.stringify([cm.data ?? {}, cm.binaryData ?? {}], sortKeys))
  }
  return hash.digest("hex").slice(0, 16)
}

const sortKeys = (_key: string, value: unknown) =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
    : value

/** Starts the controller in the current scope, under the Manager (requires the Manager, Cache and KubeClient). */
export const make = Effect.gen(function*() {
  const cache = yield* Cache.Cache
  const deployments = yield* cache.informer(Resource.Deployment)
  const configMaps = yield* cache.informer(Resource.ConfigMap)
  deployments.store.addIndex(
    configMapIndex,
    (d) => referencedConfigMaps(d).map((name) => `${d.metadata?.namespace}/${name}`)
  )

  return yield* KubeController.make({
    name: "config-rollout",
    for: Resource.Deployment,
    watches: [
      KubeController.watches({
        resource: Resource.ConfigMap,
        map: (cm: Resource.ConfigMap) =>
          Effect.succeed(
            deployments.store.byIndex(configMapIndex, `${cm.metadata?.namespace}/${cm.metadata?.name}`).map((d) =>
              Request.make(d.metadata!.name!, d.metadata!.namespace)
            )
          )
      })
    ],
    reconcile: (deployment: Resource.Deployment) =>
      Effect.gen(function*() {
        const names = referencedConfigMaps(deployment)
        if (names.length === 0) return
        const namespace = deployment.metadata?.namespace
        const hash = configHash(names.map((name) => [name, configMaps.store.get(name, namespace)] as const))
        if (deployment.spec?.template?.metadata?.annotations?.[hashAnnotation] === hash) return
        yield* KubeClient.patch(Resource.Deployment, deployment.metadata!.name!, {
          spec: { template: { metadata: { annotations: { [hashAnnotation]: hash } } } }
        }, { type: "merge", namespace })
        yield* Effect.logInfo(`rolled ${namespace}/${deployment.metadata?.name}: config hash ${hash}`)
      }).pipe(KubeOutcome.classify), // a 422 or a 403 on the patch is Terminal (until the Deployment changes)
    // a Deployment the client cannot decode has no config to roll: wait for its next change
    onUndecodable: Undecodable.terminal
  }).pipe(KubeController.start)
})
