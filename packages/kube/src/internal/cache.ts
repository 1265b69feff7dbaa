import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type * as Cache from "../Cache.js"
import type * as Informer from "../Informer.js"
import * as KubeClient from "../KubeClient.js"
import * as KubeError from "../KubeError.js"
import * as KubeStatus from "../KubeStatus.js"
import type * as Resource from "../Resource.js"
import { Namespace as Namespaces } from "../Resource.js"
import type * as Watcher from "../Watcher.js"
import * as diagnose from "./diagnose.js"
import * as internalInformer from "./informer.js"
import { compactObject, isMetadataOnly } from "./metadataOnly.js"
import { type ServerSelection, Sharding } from "./shardingService.js"

/** @internal */
export const informerKey = (resource: Resource.Resource<any>, selection: Cache.Selection = {}): string =>
  [
    resource.apiVersion,
    // a metadata-only informer is one of its own: a full read is never answered from metadata
    isMetadataOnly(resource) ? `${resource.plural}(metadata)` : resource.plural,
    selection.namespace ?? "",
    selection.labelSelector ?? "",
    selection.fieldSelector ?? "",
    selection.shardSelector ?? ""
  ].join("|")

/** @internal */
export const listWatch = <A extends HasMetadata>(
  client: KubeClient.KubeClient.Service,
  resource: Resource.Resource<A>,
  selection: Cache.Selection = {}
): Watcher.ListWatch<A> => {
  const select = {
    namespace: selection.namespace,
    labelSelector: selection.labelSelector,
    fieldSelector: selection.fieldSelector,
    shardSelector: selection.shardSelector
  }
  const parts = [`${resource.apiVersion}/${resource.plural}${isMetadataOnly(resource) ? " (metadata only)" : ""}`]
  if (selection.namespace !== undefined) parts.push(`in ${selection.namespace}`)
  if (selection.labelSelector !== undefined) parts.push(`labels ${selection.labelSelector}`)
  if (selection.fieldSelector !== undefined) parts.push(`fields ${selection.fieldSelector}`)
  if (selection.shardSelector !== undefined) parts.push("a shard of the hash space")
  // errors name the kind (a missing CRD's message says which Kind it serves)
  const named = Effect.mapError((error: KubeError.KubeError) => diagnose.attach(error, { kind: resource.kind }))
  const namedWatch = (error: KubeError.KubeError) => diagnose.attach(error, { kind: resource.kind, watch: true })
  // A list in a namespace that does not exist answers an empty list: before the first list of a namespaced
  // selection, ask for the namespace (a 403 — no right to read namespaces — skips the check).
  let namespaceChecked = selection.namespace === undefined
  const checkNamespace = Effect.suspend(() => {
    if (namespaceChecked) return Effect.void
    const namespace = selection.namespace!
    return client.get(Namespaces, namespace).pipe(
      Effect.asVoid,
      Effect.catch((error): Effect.Effect<void, KubeError.KubeError> =>
        error._tag === "NotFound"
          ? Effect.fail(diagnose.withDiagnosis(error, diagnose.namespaceMissing(namespace)))
          : Effect.void
      ),
      Effect.andThen(Effect.sync(() => {
        namespaceChecked = true
      }))
    )
  })
  return {
    name: parts.join(" "),
    list: (options) =>
      Effect.andThen(
        options.continue === undefined ? checkNamespace : Effect.void,
        client.list(resource, { ...select, limit: options.limit, continue: options.continue }).pipe(named)
      ),
    watch: (options) => Stream.mapError(client.watch(resource, { ...select, ...options }), namedWatch),
    // one item "not older than" the resourceVersion: a reset server answers 504 "Too large resource version"
    checkResourceVersion: (resourceVersion) =>
      Effect.asVoid(
        client.list(resource, { ...select, limit: 1, resourceVersion, resourceVersionMatch: "NotOlderThan" })
      ).pipe(named),
    resourceVersion: (object) => object.metadata?.resourceVersion
  }
}

/** @internal */
export const fromClient = (options?: Cache.Options) =>
  Effect.flatMap(
    Effect.all([KubeClient.KubeClient, Effect.serviceOption(Sharding)]),
    ([client, sharding]) =>
      make((resource, selection) => {
        const server = sharding._tag === "Some" ? sharding.value.serverSelectionOf(resource) : undefined
        return server === undefined
          ? listWatch(client, resource, selection)
          : following(server, (shardSelector) => listWatch(client, resource, { ...selection, shardSelector }))
      }, {
        ...options,
        // a shard's cache holds its own objects of the ring's kinds
        labelSelectorOf: options?.labelSelectorOf ??
          (sharding._tag === "Some" ? sharding.value.labelSelectorOf : undefined)
      }, {
        get: (resource, name, namespace) => client.get(resource, name, { namespace }),
        list: (resource, namespace, labels) =>
          Effect.map(
            client.listAll(resource, {
              namespace,
              labelSelector: labels === undefined
                ? undefined
                : Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(",")
            }),
            (list) => list.items
          )
      })
  )

/**
 * The list and watch of a shard whose ranges change (the API server's `shardSelector`): each list uses the ranges of
 * the moment, and a watch ends with 410 Gone once they change, so the watcher relists — the store then drops what
 * left and adds what came, as after any relist.
 */
const following = <A>(
  selection: ServerSelection,
  listWatchOf: (shardSelector: string) => Watcher.ListWatch<A>
): Watcher.ListWatch<A> => {
  let inUse = selection.current()
  let current = listWatchOf(inUse)
  const gone = new KubeError.Gone({
    status: { kind: "Status", status: "Failure", reason: "Expired", code: 410, message: "this shard's ranges changed" }
  })
  return {
    name: current.name,
    list: (options) =>
      Effect.suspend(() => {
        if (options.continue === undefined && inUse !== selection.current()) {
          inUse = selection.current()
          current = listWatchOf(inUse)
        }
        return current.list(options)
      }),
    watch: (options) =>
      Stream.suspend(() => {
        const watching = inUse
        if (watching !== selection.current()) return Stream.fail(gone)
        return Stream.merge(
          current.watch(options),
          Stream.fromEffect(selection.changed(watching)).pipe(Stream.flatMap(() => Stream.fail(gone))),
          { haltStrategy: "either" }
        )
      }),
    checkResourceVersion: (resourceVersion) =>
      Effect.suspend(() => current.checkResourceVersion?.(resourceVersion) ?? Effect.void),
    resourceVersion: (object) => current.resourceVersion(object)
  }
}

/** Live reads for kinds the cache does not watch. @internal */
export interface LiveReader {
  readonly get: <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    namespace: string | undefined
  ) => Effect.Effect<A, KubeError.KubeError>
  readonly list: <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    namespace: string | undefined,
    labels: Readonly<Record<string, string>> | undefined
  ) => Effect.Effect<ReadonlyArray<A>, KubeError.KubeError>
}

const notFound = (resource: Resource.Resource<any>, name: string) =>
  KubeStatus.toError({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason: "NotFound",
    code: 404,
    message: `${resource.plural}${resource.group === "" ? "" : `.${resource.group}`} "${name}" not found (cache)`,
    details: { name, group: resource.group, kind: resource.plural }
  }, { code: 404 })

/** @internal */
export const make = (
  listWatchFor: Cache.ListWatchFor,
  options: Cache.Options = {},
  live?: LiveReader
): Effect.Effect<Cache.Cache.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const informers = yield* SynchronizedRef.make(new Map<string, Informer.Informer<any>>())

    const only = options.namespace
    /**
     * A namespaced kind's selection in a cache restricted to one namespace (`options.namespace`) is that namespace;
     * a kind with a label selector of its own (`options.labelSelectorOf`: a shard's kinds) adds it.
     */
    const restrict = (resource: Resource.Resource<any>, selection: Cache.Selection): Cache.Selection => {
      const inNamespace = only !== undefined && resource.scope === "Namespaced"
        ? { ...selection, namespace: only }
        : selection
      const labels = options.labelSelectorOf?.(resource)
      if (labels === undefined) return inNamespace
      const requested = inNamespace.labelSelector
      return {
        ...inNamespace,
        labelSelector: requested === undefined || requested === "" ? labels : `${requested},${labels}`
      }
    }
    /** The namespace a `get`/`list` reads: the one asked for, else the cache's own for a namespaced kind. */
    const readIn = (resource: Resource.Resource<any>, namespace: string | undefined) =>
      namespace ?? (resource.scope === "Namespaced" ? only : undefined)

    const informer = <A extends HasMetadata>(resource: Resource.Resource<A>, requested: Cache.Selection = {}) =>
      SynchronizedRef.modifyEffect(informers, (map) => {
        const selection = restrict(resource, requested)
        const key = informerKey(resource, selection)
        const existing = map.get(key)
        if (existing !== undefined) return Effect.succeed([existing as Informer.Informer<A>, map] as const)
        // a metadata-only informer keeps its objects compact unless the cache was given a transform
        const informerOptions = isMetadataOnly(resource) && options.informer?.transform === undefined
          ? { ...options.informer, transform: compactObject }
          : options.informer
        return internalInformer.make(listWatchFor(resource, selection), informerOptions).pipe(
          Scope.provide(scope),
          Effect.map((created) => [created, new Map(map).set(key, created)] as const)
        )
      })

    /** The unfiltered informer that holds `namespace`'s objects of `resource`, if one runs. */
    const covering = (resource: Resource.Resource<any>, namespace: string | undefined) =>
      Effect.map(SynchronizedRef.get(informers), (map) =>
        map.get(informerKey(resource, restrict(resource, {}))) ??
          (namespace === undefined ? undefined : map.get(informerKey(resource, restrict(resource, { namespace })))))

    const missing = (resource: Resource.Resource<any>) =>
      Effect.die(new Error(`Cache: ${resource.kind} is not watched and this cache has no live reader`))

    const service: Cache.Cache.Service = {
      get: (resource, name, getOptions) => {
        const namespace = readIn(resource, getOptions?.namespace)
        return Effect.flatMap(covering(resource, namespace), (informer) => {
          if (informer === undefined) {
            return live === undefined ? missing(resource) : live.get(resource, name, namespace)
          }
          return Effect.flatMap(informer.synced, () => {
            const object = informer.store.get(name, namespace)
            if (object !== undefined) return Effect.succeed(object)
            // an object that exists but does not decode is no NotFound: its Decode error carries its metadata
            const undecodable = informer.store.undecodable(name, namespace)
            return Effect.fail(undecodable === undefined ? notFound(resource, name) : undecodable.error)
          })
        })
      },
      list: (resource, requested) => {
        const namespace = readIn(resource, requested?.namespace)
        const listOptions = namespace === requested?.namespace ? requested : { ...requested, namespace }
        return Effect.flatMap(covering(resource, namespace), (informer) => {
          if (informer === undefined) {
            return live === undefined ? missing(resource) : live.list(resource, namespace, listOptions?.labels)
          }
          return Effect.as(informer.synced, informer.store.list(listOptions))
        })
      },
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
