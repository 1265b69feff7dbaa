import * as Controller from "@reconcile/core/Controller"
import * as Handler from "@reconcile/core/Handler"
import type { Manager } from "@reconcile/core/Manager"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type { Predicate } from "@reconcile/core/Predicates"
import type * as Request from "@reconcile/core/Request"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import type * as Scope from "effect/Scope"
import * as Cache from "../Cache.js"
import type * as KubeController from "../KubeController.js"
import * as Resource from "../Resource.js"
import type * as Undecodable from "../Undecodable.js"
import { Sharding } from "./shardingService.js"
import { drainLabel } from "./shardRules.js"

/** A handler with the priority option of a `for` / `owns` / `watches` entry, if any. */
const prioritized = <A, E, R>(
  handler: Handler.Handler<A, E, R>,
  priority: number | Handler.Priority<A> | undefined
): Handler.Handler<A, E, R> => priority === undefined ? handler : Handler.withPriority(handler, priority)

/** For the undecodable source of an entry: a number applies, a rule (written for decoded objects) does not. */
const numeric = (priority: number | Handler.Priority<any> | undefined): number | undefined =>
  typeof priority === "number" ? priority : undefined

/** The predicates of a source: its own, then the event filter; an event `bypass` accepts passes whatever they say. */
const withFilter = <A extends HasMetadata>(
  predicates: ReadonlyArray<Predicate<A>> | undefined,
  filter: Predicate<HasMetadata> | undefined,
  bypass?: Predicate<HasMetadata> | undefined
): ReadonlyArray<Predicate<A>> => {
  const all = [...(predicates ?? []), ...(filter === undefined ? [] : [filter])]
  if (bypass === undefined || all.length === 0) return all
  return [(event) => bypass(event) || all.every((p) => p(event))]
}

/** An update that adds the ring's drain label: the shard must see it to let the object go. */
const drainRequested = (ring: string): Predicate<HasMetadata> => {
  const label = drainLabel(ring)
  return (event) =>
    event._tag === "Update" && event.object.metadata?.labels?.[label] !== undefined &&
    event.old.metadata?.labels?.[label] === undefined
}

/** An `owns` entry with options (not a bare `Resource`). */
const isOwns = (
  entry: Resource.Resource<any> | KubeController.Owns<any>
): entry is KubeController.Owns<any> => !(Resource.TypeId in entry)

/** Starts a definition: its sources over the cache, its reconcile by object or by key, under the Manager. */
const startConfig = <A extends HasMetadata, E, R, RW>(config: KubeController.Config<A, E, R, RW>) =>
  Effect.gen(function*() {
    const cache = yield* Cache.Cache
    const primary = yield* cache.informer(config.for, config.selection)
    // a shard of a ring reconciles only the objects assigned to it (internal/shardGate.ts)
    const sharding = yield* Effect.serviceOption(Sharding)
    const gate = Option.isSome(sharding) ? sharding.value.gateOf(config.for, primary.store) : undefined
    // a shard must see the drain request of its objects, whatever the predicates drop: it answers it
    const drained = gate !== undefined && Option.isSome(sharding) ? drainRequested(sharding.value.ring) : undefined
    // Objects that stop decoding enqueue their key too: `forPredicates` read `A`, so only the event filter applies.
    const undecodableFilter = withFilter<Undecodable.Undecodable>(undefined, config.eventFilter, drained)
    const watches: Array<Controller.Watch<E, RW>> = [
      Controller.watch(
        primary.source,
        prioritized(Handler.forObject<A>, config.forPriority),
        ...withFilter(config.forPredicates, config.eventFilter, drained)
      ),
      Controller.watch(
        primary.undecodable,
        prioritized(Handler.forObject<Undecodable.Undecodable>, numeric(config.forPriority)),
        ...undecodableFilter
      )
    ]
    for (const entry of config.owns ?? []) {
      const { priority, resource: owned } = isOwns(entry) ? entry : { resource: entry, priority: undefined }
      const informer = yield* cache.informer(owned, { namespace: config.selection?.namespace })
      const toOwner = Handler.forOwner({
        apiVersion: config.for.apiVersion,
        kind: config.for.kind,
        scope: config.for.scope
      })
      watches.push(
        Controller.watch(informer.source, prioritized(toOwner, priority), ...withFilter(undefined, config.eventFilter)),
        Controller.watch(informer.undecodable, prioritized(toOwner, numeric(priority)), ...undecodableFilter)
      )
    }
    for (const w of config.watches ?? []) {
      const informer = yield* cache.informer(w.resource, w.selection)
      watches.push(
        Controller.watch(
          informer.source,
          prioritized(Handler.fromMap(w.map), w.priority),
          ...withFilter(w.predicates, config.eventFilter)
        )
      )
    }
    const byKey = "reconcile" in config
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
    if (gate === undefined || Option.isNone(sharding)) {
      return yield* Controller.make({ name: config.name, watches, reconcile: byKey, options: config.options })
    }
    const reconcile = (request: Request.Request) => gate(request, byKey)
    // each reconcile's log lines name the replica, so overlapping reconciles across replicas show in the logs
    return yield* Controller.make({ name: config.name, watches, reconcile, options: config.options }).pipe(
      Effect.annotateLogs({ replica: sharding.value.identity })
    )
  })

/** @internal */
export const TypeId = "~@reconcile/kube/KubeController" as const

const variance = { _E: (_: never) => _, _R: (_: never) => _ }

const Proto = {
  [TypeId]: variance,
  pipe() {
    return pipeArguments(this, arguments)
  }
}

/** What a definition declares (`Manifests` reads it). */
const declare = <A extends HasMetadata, E, R, RW>(
  config: KubeController.Config<A, E, R, RW>
): KubeController.Declaration => ({
  name: config.name,
  for: config.for,
  owns: (config.owns ?? []).map((entry) => isOwns(entry) ? entry.resource : entry),
  watches: (config.watches ?? []).map((w) => w.resource),
  namespace: config.selection?.namespace,
  rbac: config.rbac ?? []
})

/** @internal */
export const make = <A extends HasMetadata, E, R, RW>(
  config: KubeController.Config<A, E, R, RW>
): KubeController.KubeController<E, R | RW> => Object.assign(Object.create(Proto), { ...declare(config), config })

/** @internal */
export const start = <E, R>(
  self: KubeController.KubeController<E, R>
): Effect.Effect<Controller.Controller<E>, never, Cache.Cache | Manager | R | Scope.Scope> =>
  startConfig(self.config) as any

/** @internal */
export const layer = <E, R>(
  self: KubeController.KubeController<E, R>
): Layer.Layer<never, never, Cache.Cache | Manager | Exclude<R, Scope.Scope>> => Layer.effectDiscard(start(self))

/** @internal */
export const isKubeController = (u: unknown): u is KubeController.KubeController<unknown, unknown> =>
  typeof u === "object" && u !== null && TypeId in u
