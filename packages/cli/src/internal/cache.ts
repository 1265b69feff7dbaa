import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import { Cache, type Resource } from "@reconcile/kube"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The Cache, with every informer of a namespaced kind restricted to `namespace` (`--namespace`): the controllers
 * then see (and reconcile) only that namespace's objects, as controller-runtime's `cache.Options.DefaultNamespaces`
 * does. Cluster-scoped kinds are watched as before. Without a namespace: the Cache as it is.
 *
 * @internal
 */
export const namespacedCache = (namespace: string | undefined): Layer.Layer<Cache.Cache, never, any> =>
  namespace === undefined ? Cache.layer() : Layer.effect(
    Cache.Cache,
    Effect.map(Cache.Cache, (cache): Cache.Cache.Service => {
      const select = <A extends HasMetadata>(resource: Resource.Resource<A>, selection?: Cache.Selection) =>
        resource.namespaced ? { ...selection, namespace } : selection
      return {
        ...cache,
        informer: (resource, selection) => cache.informer(resource, select(resource, selection)),
        source: (resource, selection) => cache.source(resource, select(resource, selection)),
        get: (resource, name, options) =>
          cache.get(resource, name, resource.namespaced ? { namespace: options?.namespace ?? namespace } : options),
        list: (resource, options) =>
          cache.list(
            resource,
            resource.namespaced ? { ...options, namespace: options?.namespace ?? namespace } : options
          )
      }
    })
  ).pipe(Layer.provide(Cache.layer()))
