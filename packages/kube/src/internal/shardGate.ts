/**
 * A shard's gate before each reconcile of a sharded controller: the shard half of the drain handshake.
 *
 * The workqueue never runs two reconciles of one key at once, so when the drain label arrives (an update event
 * enqueues the key) any reconcile in flight has finished before the gate sees it; the gate then removes the
 * assignment and the drain label — a patch that carries the `resourceVersion` it read, so it lets go of exactly the
 * object it looked at — and only then can the sharder assign another shard.
 *
 * After letting go, the cache may still show the object as it was (the watch event of the patch is on its way): the
 * gate remembers the `resourceVersion` it let go of and runs nothing for the object while the cache still shows that
 * version. A reconcile of a key whose object left the cache runs once (the object was deleted while it was this
 * shard's: a by-key reconcile sees it gone) if this shard last held it, and never otherwise.
 */
import type { HasMetadata, ObjectMeta } from "@reconcile/core/ObjectMeta"
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Request from "@reconcile/core/Request"
import * as Effect from "effect/Effect"
import type * as KubeClient from "../KubeClient.js"
import type * as Resource from "../Resource.js"
import type * as Store from "../Store.js"
import type { Gate } from "./shardingService.js"
import { acknowledge, owns } from "./shardRules.js"

/** What the gate counts (the sharding metrics read them). */
export interface GateEvents {
  /** Runs once an object was let go of. */
  readonly released: Effect.Effect<void>
}

/** The gate of one controller of a shard. */
export const make = (params: {
  readonly client: KubeClient.KubeClient.Service
  readonly ring: string
  readonly identity: string
  readonly resource: Resource.Resource<any>
  readonly store: Store.Store<HasMetadata>
  readonly events: GateEvents
}): Gate => {
  const { client, events, identity, resource, ring, store } = params
  /** Keys whose object this shard last saw assigned to it. */
  const held = new Set<string>()
  /** Keys let go of, with the resourceVersion they were let go at. */
  const released = new Map<string, string | undefined>()

  const release = (request: Request.Request, meta: ObjectMeta, labels: ReadonlyArray<string>) =>
    client.patch(resource, request.name, {
      metadata: {
        resourceVersion: meta.resourceVersion,
        labels: Object.fromEntries(labels.map((label) => [label, null]))
      }
    }, { type: "merge", namespace: request.namespace }).pipe(
      Effect.andThen(Effect.sync(() => {
        const key = Request.key(request)
        held.delete(key)
        released.set(key, meta.resourceVersion)
      })),
      Effect.andThen(events.released),
      Effect.andThen(Effect.logDebug("Released to the ring")),
      Effect.catch((error) =>
        // changed meanwhile or gone: its event enqueues the key again, and the gate looks again
        error._tag === "Conflict" || error._tag === "NotFound"
          ? Effect.void
          : Effect.fail(Reconcile.retryable(error, "could not release the object to its ring"))
      )
    )

  return <E, R>(request: Request.Request, reconcile: (request: Request.Request) => Effect.Effect<void, E, R>) => {
    const key = Request.key(request)
    const meta: ObjectMeta | undefined = (store.get(request.name, request.namespace) ??
      store.undecodable(request.name, request.namespace))?.metadata
    if (meta === undefined) {
      released.delete(key)
      if (!held.delete(key)) return Effect.void
      return reconcile(request)
    }
    if (released.has(key)) {
      // the cache still shows the version let go of: nothing to do until it catches up
      if (released.get(key) === meta.resourceVersion) return Effect.void
      released.delete(key)
    }
    if (owns(ring, identity, meta)) {
      held.add(key)
      return reconcile(request)
    }
    const labels = acknowledge(ring, identity, meta)
    if (labels !== undefined) return release(request, meta, labels)
    held.delete(key)
    return Effect.void
  }
}
