/**
 * The `Sharding` service's tag and shape, apart from its implementation (`sharding.ts`) so that the cache
 * (which restricts a shard's informers) and the controller builder (which gates its reconciles) can read it without
 * importing the sharder.
 */
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Reconcile from "@reconcile/core/Reconcile"
import type * as Request from "@reconcile/core/Request"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Resource from "../Resource.js"
import type * as Store from "../Store.js"

/** What a shard runs before each reconcile of a sharded controller (see `shardGate.ts`). */
export type Gate = <E, R>(
  request: Request.Request,
  reconcile: (request: Request.Request) => Effect.Effect<void, E, R>
) => Effect.Effect<void, E | Reconcile.Outcome, R>

/** A shard's ranges of the hash space, as they change (the API server's `shardSelector`). */
export interface ServerSelection {
  /** The selector now. */
  readonly current: () => string
  /** Completes once the selector is no longer `from`. */
  readonly changed: (from: string) => Effect.Effect<void>
}

/** The service: this replica's shard of a ring. */
export interface Service {
  /** The ring's name. */
  readonly ring: string
  /** How objects are assigned: by labels the sharder writes, or by the API server's `shardSelector`. */
  readonly mode: "labels" | "server"
  /** This replica's shard: its name on the ring, the value of its assignment label, its Lease's holder. */
  readonly identity: string
  /** The label selector of this shard's objects when `resource` is one of the ring's kinds, else `undefined`. */
  readonly labelSelectorOf: (resource: Resource.Resource<any>) => string | undefined
  /** The ranges of this shard when the server selects them and `resource` is a primary kind, else `undefined`. */
  readonly serverSelectionOf: (resource: Resource.Resource<any>) => ServerSelection | undefined
  /**
   * The gate of a controller whose `for` kind is `resource`, over the store of its primary informer: it runs a
   * reconcile only for an object assigned to this shard and not being drained, and lets a drained object go.
   * `undefined` when `resource` is not one of the ring's primary kinds.
   */
  readonly gateOf: (resource: Resource.Resource<any>, store: Store.Store<HasMetadata>) => Gate | undefined
}

/** The tag. */
export class Sharding extends Context.Service<Sharding, Service>()("@reconcile/kube/Sharding") {}

/** A kind's identity on the ring: metadata-only views of a kind are the kind. */
export const kindKey = (resource: Resource.Resource<any>): string => `${resource.apiVersion}/${resource.plural}`
