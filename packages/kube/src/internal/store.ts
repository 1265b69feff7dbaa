import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Store from "../Store.js"
import type * as Undecodable from "../Undecodable.js"

/** @internal */
export const keyOf = (object: HasMetadata): string => {
  const namespace = object.metadata?.namespace
  const name = object.metadata?.name ?? ""
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`
}

const namespaceIndex = (object: HasMetadata): ReadonlyArray<string> => [object.metadata?.namespace ?? ""]
const ownerUidIndex = (object: HasMetadata): ReadonlyArray<string> =>
  (object.metadata?.ownerReferences ?? []).map((ref) => ref.uid)

/**
 * Objects by key, with incrementally maintained indexes.
 *
 * @internal
 */
export class MutableStore<A extends HasMetadata> implements Store.Store.Store<A> {
  private objects = new Map<string, A>()
  /** Objects that do not decode, by key: never also in `objects`. */
  private undecodables = new Map<string, Undecodable.Undecodable>()
  private readonly indexers = new Map<string, Store.IndexFunction<A>>()
  private readonly indexes = new Map<string, Map<string, Set<string>>>()

  constructor() {
    this.addIndex("namespace", namespaceIndex)
    this.addIndex("ownerUid", ownerUidIndex)
  }

  readonly get = (name: string, namespace?: string | undefined): A | undefined =>
    this.objects.get(namespace === undefined || namespace === "" ? name : `${namespace}/${name}`)

  readonly getByKey = (key: string): A | undefined => this.objects.get(key)

  readonly list = (
    options: {
      readonly namespace?: string | undefined
      readonly labels?: Readonly<Record<string, string>> | undefined
    } = {}
  ): ReadonlyArray<A> => {
    const candidates = options.namespace === undefined
      ? this.objects.values()
      : this.byIndex("namespace", options.namespace)
    const labels = options.labels === undefined ? [] : Object.entries(options.labels)
    const out: Array<A> = []
    for (const object of candidates) {
      if (labels.every(([k, v]) => object.metadata?.labels?.[k] === v)) out.push(object)
    }
    return out
  }

  readonly byIndex = (name: string, value: string): ReadonlyArray<A> => {
    const keys = this.indexes.get(name)?.get(value)
    if (keys === undefined) return []
    const out: Array<A> = []
    for (const key of keys) {
      const object = this.objects.get(key)
      if (object !== undefined) out.push(object)
    }
    return out
  }

  readonly size = (): number => this.objects.size

  readonly undecodable = (name: string, namespace?: string | undefined): Undecodable.Undecodable | undefined =>
    this.undecodables.get(namespace === undefined || namespace === "" ? name : `${namespace}/${name}`)

  readonly listUndecodable = (): ReadonlyArray<Undecodable.Undecodable> => [...this.undecodables.values()]

  readonly undecodableByKey = (key: string): Undecodable.Undecodable | undefined => this.undecodables.get(key)

  readonly undecodableKeys = (): IterableIterator<string> => this.undecodables.keys()

  readonly undecodableCount = (): number => this.undecodables.size

  /** Records an object that does not decode; returns the previous undecodable entry of its key. */
  upsertUndecodable(object: Undecodable.Undecodable): Undecodable.Undecodable | undefined {
    const key = keyOf(object)
    const old = this.undecodables.get(key)
    this.undecodables.set(key, object)
    return old
  }

  /** Forgets the undecodable entry of `key`; returns it. */
  removeUndecodable(key: string): Undecodable.Undecodable | undefined {
    if (this.undecodables.size === 0) return undefined
    const old = this.undecodables.get(key)
    if (old !== undefined) this.undecodables.delete(key)
    return old
  }

  readonly keys = (): IterableIterator<string> => this.objects.keys()

  readonly addIndex = (name: string, index: Store.IndexFunction<A>): void => {
    this.indexers.set(name, index)
    const values = new Map<string, Set<string>>()
    this.indexes.set(name, values)
    for (const [key, object] of this.objects) this.indexInto(values, index, key, object)
  }

  /** Inserts or replaces one object (under `key`, its `keyOf` when given); returns the previous one. */
  upsert(object: A, key: string = keyOf(object)): A | undefined {
    const old = this.objects.get(key)
    this.objects.set(key, object)
    for (const [name, index] of this.indexers) {
      const values = this.indexes.get(name)!
      const next = index(object)
      if (old !== undefined) {
        // an update rarely moves an object between index values (same namespace, same owners): then nothing to do
        const previous = index(old)
        if (sameValues(previous, next)) continue
        this.unindexFrom(values, key, previous)
      }
      this.indexValues(values, key, next)
    }
    return old
  }

  /** Removes one object; returns it. */
  remove(object: HasMetadata): A | undefined {
    const key = keyOf(object)
    const old = this.objects.get(key)
    if (old === undefined) return undefined
    this.unindex(key, old)
    this.objects.delete(key)
    return old
  }

  /** Replaces every object at once (a relist), and the undecodable ones when given. */
  replace(objects: Map<string, A>, undecodables?: Map<string, Undecodable.Undecodable>): void {
    this.objects = objects
    if (undecodables !== undefined) this.undecodables = undecodables
    for (const [name, index] of this.indexers) {
      const values = new Map<string, Set<string>>()
      this.indexes.set(name, values)
      for (const [key, object] of objects) this.indexInto(values, index, key, object)
    }
  }

  private indexInto(values: Map<string, Set<string>>, index: Store.IndexFunction<A>, key: string, object: A) {
    this.indexValues(values, key, index(object))
  }

  private indexValues(values: Map<string, Set<string>>, key: string, indexed: ReadonlyArray<string>) {
    for (const value of indexed) {
      let keys = values.get(value)
      if (keys === undefined) values.set(value, keys = new Set())
      keys.add(key)
    }
  }

  private unindexFrom(values: Map<string, Set<string>>, key: string, indexed: ReadonlyArray<string>) {
    for (const value of indexed) {
      const keys = values.get(value)
      if (keys === undefined) continue
      keys.delete(key)
      if (keys.size === 0) values.delete(value)
    }
  }

  private unindex(key: string, object: A) {
    for (const [name, index] of this.indexers) this.unindexFrom(this.indexes.get(name)!, key, index(object))
  }
}

const sameValues = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
