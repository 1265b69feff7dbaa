/**
 * The objects of one kind as a watch of them last showed them, indexed by their controller: what an informer's
 * store with a controller-uid indexer is to kube-controller-manager, for the controller manager
 * (`controllerManager.ts`).
 *
 * - `apply` follows one watch event (`ADDED`, `MODIFIED`, `DELETED`) in time independent of how many objects there
 *   are: an object whose controller changed (or was added or removed) moves from one owner's entry to the other's.
 * - `get` is the current object of a name; `controlledBy` the current objects of a namespace whose controller — the
 *   first ownerReference with `controller: true` — has a uid, by name, as a list of the namespace filtered by
 *   `controllerUid` would give them.
 * - Fed from a watch the Core delivers synchronously within each commit, it is as current as the Core after every
 *   write.
 *
 * The objects are the watch's own (the Core copies each one for each watch), shared, never copied again: callers
 * read them and must not change them (a write goes through the Core, which copies what it is given).
 */
import type { Obj } from "./json.js"

/** The uid of an object's controller: its first ownerReference with `controller: true`, if it has one. */
export const controllerUid = (obj: Obj): string | undefined => {
  const refs = obj.metadata?.ownerReferences
  if (!Array.isArray(refs)) return undefined
  const uid = refs.find((o: Obj) => o?.controller === true)?.uid
  return typeof uid === "string" ? uid : undefined
}

/** A watch event's type, as `apply` follows it. */
export type EventType = "ADDED" | "MODIFIED" | "DELETED"

const byName = (a: Obj, b: Obj): number => {
  const x = a.metadata.name as string
  const y = b.metadata.name as string
  return x < y ? -1 : x > y ? 1 : 0
}

/** One kind's objects by namespace and name, and by namespace and controller uid. */
export class OwnerIndex {
  /** namespace ("" when cluster-scoped) → name → object */
  private readonly objects = new Map<string, Map<string, Obj>>()
  /** namespace → controller uid → name → object */
  private readonly controlled = new Map<string, Map<string, Map<string, Obj>>>()

  /** Follows one watch event of the kind. */
  apply(type: EventType, obj: Obj): void {
    const namespace: string = obj.metadata.namespace ?? ""
    const name: string = obj.metadata.name
    let names = this.objects.get(namespace)
    const previous = names?.get(name)
    if (previous !== undefined) this.unlink(namespace, name, previous)
    if (type === "DELETED") {
      if (names !== undefined) {
        names.delete(name)
        if (names.size === 0) this.objects.delete(namespace)
      }
      return
    }
    if (names === undefined) {
      names = new Map()
      this.objects.set(namespace, names)
    }
    names.set(name, obj)
    const uid = controllerUid(obj)
    if (uid === undefined) return
    let owners = this.controlled.get(namespace)
    if (owners === undefined) {
      owners = new Map()
      this.controlled.set(namespace, owners)
    }
    let dependents = owners.get(uid)
    if (dependents === undefined) {
      dependents = new Map()
      owners.set(uid, dependents)
    }
    dependents.set(name, obj)
  }

  private unlink(namespace: string, name: string, previous: Obj): void {
    const uid = controllerUid(previous)
    if (uid === undefined) return
    const owners = this.controlled.get(namespace)
    const dependents = owners?.get(uid)
    if (owners === undefined || dependents === undefined) return
    dependents.delete(name)
    if (dependents.size > 0) return
    owners.delete(uid)
    if (owners.size === 0) this.controlled.delete(namespace)
  }

  /** The current object `namespace/name` (namespace `undefined` for a cluster-scoped kind). */
  get(namespace: string | undefined, name: string): Obj | undefined {
    return this.objects.get(namespace ?? "")?.get(name)
  }

  /** The current objects of `namespace` whose controller has `uid`, by name (a new array of the shared objects). */
  controlledBy(namespace: string | undefined, uid: string): Array<Obj> {
    const dependents = this.controlled.get(namespace ?? "")?.get(uid)
    return dependents === undefined ? [] : [...dependents.values()].sort(byName)
  }
}
