import * as Controller from "@reconcile/core/Controller"
import * as Handler from "@reconcile/core/Handler"
import { Manager } from "@reconcile/core/Manager"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type { Predicate } from "@reconcile/core/Predicates"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Cache from "../Cache.js"
import type * as KubeController from "../KubeController.js"
import type * as Undecodable from "../Undecodable.js"

const withFilter = <A extends HasMetadata>(
  predicates: ReadonlyArray<Predicate<A>> | undefined,
  filter: Predicate<HasMetadata> | undefined
): ReadonlyArray<Predicate<A>> => [...(predicates ?? []), ...(filter === undefined ? [] : [filter])]

/** @internal */
export const make = <A extends HasMetadata, E, R, RW>(config: KubeController.Config<A, E, R, RW>) =>
  Effect.gen(function*() {
    const cache = yield* Cache.Cache
    const primary = yield* cache.informer(config.for, config.selection)
    // Objects that stop decoding enqueue their key too: `forPredicates` read `A`, so only the event filter applies.
    const undecodableFilter = withFilter<Undecodable.Undecodable>(undefined, config.eventFilter)
    const watches: Array<Controller.Watch<E, RW>> = [
      Controller.watch(primary.source, Handler.forObject, ...withFilter(config.forPredicates, config.eventFilter)),
      Controller.watch(primary.undecodable, Handler.forObject, ...undecodableFilter)
    ]
    for (const owned of config.owns ?? []) {
      const informer = yield* cache.informer(owned, { namespace: config.selection?.namespace })
      const toOwner = Handler.forOwner({
        apiVersion: config.for.apiVersion,
        kind: config.for.kind,
        clusterScoped: !config.for.namespaced
      })
      watches.push(
        Controller.watch(informer.source, toOwner, ...withFilter(undefined, config.eventFilter)),
        Controller.watch(informer.undecodable, toOwner, ...undecodableFilter)
      )
    }
    for (const w of config.watches ?? []) {
      const informer = yield* cache.informer(w.resource, w.selection)
      watches.push(
        Controller.watch(informer.source, Handler.fromMap(w.map), ...withFilter(w.predicates, config.eventFilter))
      )
    }
    const reconcile = "reconcile" in config
      ? (request: { readonly name: string; readonly namespace: string | undefined }) => {
        // By object: the current cached state; a key whose object is gone has nothing left to reconcile.
        const object = primary.store.get(request.name, request.namespace)
        if (object !== undefined) return config.reconcile(object)
        const undecodable = primary.store.undecodable(request.name, request.namespace)
        if (undecodable === undefined) return Effect.void
        // without `onUndecodable`, the types made `reconcile` take `A | Undecodable`
        return config.onUndecodable !== undefined
          ? config.onUndecodable(undecodable)
          : (config as KubeController.ByObject<A, E, R, RW>).reconcile(undecodable)
      }
      : config.reconcileRequest
    return yield* Controller.make({ name: config.name, watches, reconcile, options: config.options })
  })

/** @internal */
export const register = <A extends HasMetadata, E, R, RW>(config: KubeController.Config<A, E, R, RW>) =>
  Effect.gen(function*() {
    const controller = yield* make(config)
    const manager = yield* Effect.serviceOption(Manager)
    if (Option.isSome(manager)) {
      yield* manager.value.register({ name: controller.name, ready: controller.ready, await: controller.await })
    }
  })
