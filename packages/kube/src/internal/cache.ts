import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Cache from "../Cache.js"
import type * as Informer from "../Informer.js"
import * as internalInformer from "./informer.js"

/** @internal */
export const informerKey = (resource: Cache.ResourceKey<any>, selection: Cache.Selection = {}): string =>
  [
    resource.apiVersion,
    resource.plural,
    selection.namespace ?? "",
    selection.labelSelector ?? "",
    selection.fieldSelector ?? ""
  ].join("|")

/** @internal */
export const make = (
  listWatchFor: Cache.ListWatchFor,
  options: Cache.Options = {}
): Effect.Effect<Cache.Cache.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const informers = yield* SynchronizedRef.make(new Map<string, Informer.Informer<any>>())

    const informer = <A extends HasMetadata>(resource: Cache.ResourceKey<A>, selection: Cache.Selection = {}) =>
      SynchronizedRef.modifyEffect(informers, (map) => {
        const key = informerKey(resource, selection)
        const existing = map.get(key)
        if (existing !== undefined) return Effect.succeed([existing as Informer.Informer<A>, map] as const)
        return internalInformer.make(listWatchFor(resource, selection), options.informer).pipe(
          Scope.extend(scope),
          Effect.map((created) => [created, new Map(map).set(key, created)] as const)
        )
      })

    const service: Cache.Cache.Service = {
      informer,
      source: (resource, selection) => Effect.map(informer(resource, selection), (i) => i.source),
      waitForSync: Effect.flatMap(
        SynchronizedRef.get(informers),
        (map) => Effect.forEach(map.values(), (i) => i.synced, { discard: true, concurrency: "unbounded" })
      ),
      informers: Effect.map(SynchronizedRef.get(informers), (map) => map.size)
    }
    return service
  })
