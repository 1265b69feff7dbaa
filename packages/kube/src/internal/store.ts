import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Store from "../Store.js"
import type * as Undecodable from "../Undecodable.js"

/** @internal */
export const keyOf = (object: HasMetadata): string => {
  const namespace = object.metadata?.namespace
  const name = object.metadata?.name ?? ""
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`
}

const ownerUidIndex = (object: HasMetadata): ReadonlyArray<string> =>
  (object.metadata?.ownerReferences ?? []).map((ref) => ref.uid)

const namespaceOf = (object: HasMetadata): string => object.metadata?.namespace ?? ""

/** The namespace and name of a `keyOf` key (names and namespaces have no `/`). */
const splitKey = (key: string): readonly [namespace: string, name: string] => {
  const slash = key.indexOf("/")
  return slash < 0 ? ["", key] : [key.slice(0, slash), key.slice(slash + 1)]
}

const emptyObjects: ReadonlyMap<string, never> = new Map<string, never>()

/**
 * Objects by namespace, then by name, with incrementally maintained indexes.
 *
 * No string is kept per object beyond the object's own: the namespaces' maps are the namespace index, and the
 * other indexes hold the objects themselves (an `namespace/name` key per object would cost as much as a small
 * object's metadata).
 *
 * @internal
 */
export class MutableStore<A extends HasMetadata> implements Store.Store.Store<A> {
  /** Objects by namespace (`""` when cluster-scoped), then by name. */
  private namespaces = new Map<string, Map<string, A>>()
  private count = 0
  /** Objects that do not decode, by key: never also in `namespaces`. */
  private undecodables = new Map<string, Undecodable.Undecodable>()
  /** Every index but the built-in namespace index (answered by `namespaces`, unless replaced with `addIndex`). */
  private readonly indexers = new Map<string, Store.IndexFunction<A>>()
  private readonly indexes = new Map<string, Map<string, Set<A>>>()

  constructor() {
    this.addIndex("ownerUid", ownerUidIndex)
  }

  readonly get = (name: string, namespace?: string | undefined): A | undefined =>
    this.namespaces.get(namespace ?? "")?.get(name)

  readonly getByKey = (key: string): A | undefined => {
    if (this.count === 0) return undefined
    const [namespace, name] = splitKey(key)
    return this.namespaces.get(namespace)?.get(name)
  }

  readonly list = (
    options: {
      readonly namespace?: string | undefined
      readonly labels?: Readonly<Record<string, string>> | undefined
    } = {}
  ): ReadonlyArray<A> => {
    const candidates: Iterable<A> = options.namespace === undefined
      ? this.values()
      : this.indexers.has("namespace")
      ? this.byIndex("namespace", options.namespace)
      : (this.namespaces.get(options.namespace) ?? emptyObjects).values()
    const labels = options.labels === undefined ? [] : Object.entries(options.labels)
    const out: Array<A> = []
    for (const object of candidates) {
      if (labels.every(([k, v]) => object.metadata?.labels?.[k] === v)) out.push(object)
    }
    return out
  }

  readonly byIndex = (name: string, value: string): ReadonlyArray<A> => {
    const objects = this.indexes.get(name)?.get(value)
    if (objects !== undefined) return [...objects]
    if (name === "namespace" && !this.indexers.has(name)) {
      return [...(this.namespaces.get(value) ?? emptyObjects).values()]
    }
    return []
  }

  readonly size = (): number => this.count

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

  /** The keys (`keyOf`) of the stored objects, built as they are iterated. */
  *keys(): IterableIterator<string> {
    for (const [namespace, objects] of this.namespaces) {
      if (namespace === "") yield* objects.keys()
      else for (const name of objects.keys()) yield `${namespace}/${name}`
    }
  }

  private *values(): IterableIterator<A> {
    for (const objects of this.namespaces.values()) yield* objects.values()
  }

  readonly addIndex = (name: string, index: Store.IndexFunction<A>): void => {
    this.indexers.set(name, index)
    const values = new Map<string, Set<A>>()
    this.indexes.set(name, values)
    for (const object of this.values()) indexValues(values, object, index(object))
  }

  /**
   * Inserts or replaces one object (under its namespace and name: `key`, its `keyOf`, is accepted for callers that
   * have it); returns the previous one.
   */
  upsert(object: A, _key?: string): A | undefined {
    const namespace = namespaceOf(object)
    const name = object.metadata?.name ?? ""
    let objects = this.namespaces.get(namespace)
    if (objects === undefined) this.namespaces.set(namespace, objects = new Map())
    const old = objects.get(name)
    objects.set(name, object)
    if (old === undefined) this.count++
    for (const [indexName, index] of this.indexers) {
      const values = this.indexes.get(indexName)!
      if (old !== undefined) unindexValues(values, old, index(old))
      indexValues(values, object, index(object))
    }
    return old
  }

  /** Removes one object; returns it. */
  remove(object: HasMetadata): A | undefined {
    const namespace = namespaceOf(object)
    const objects = this.namespaces.get(namespace)
    const name = object.metadata?.name ?? ""
    const old = objects?.get(name)
    if (old === undefined) return undefined
    objects!.delete(name)
    if (objects!.size === 0) this.namespaces.delete(namespace)
    this.count--
    for (const [indexName, index] of this.indexers) unindexValues(this.indexes.get(indexName)!, old, index(old))
    return old
  }

  /** Replaces every object at once (a relist: `objects` by their `keyOf`), and the undecodable ones when given. */
  replace(objects: ReadonlyMap<string, A>, undecodables?: Map<string, Undecodable.Undecodable>): void {
    this.namespaces = new Map()
    this.count = 0
    for (const object of objects.values()) {
      const namespace = namespaceOf(object)
      let byName = this.namespaces.get(namespace)
      if (byName === undefined) this.namespaces.set(namespace, byName = new Map())
      if (!byName.has(object.metadata?.name ?? "")) this.count++
      byName.set(object.metadata?.name ?? "", object)
    }
    if (undecodables !== undefined) this.undecodables = undecodables
    for (const [name, index] of this.indexers) {
      const values = new Map<string, Set<A>>()
      this.indexes.set(name, values)
      for (const object of this.values()) indexValues(values, object, index(object))
    }
  }
}

const indexValues = <A>(values: Map<string, Set<A>>, object: A, indexed: ReadonlyArray<string>) => {
  for (const value of indexed) {
    let objects = values.get(value)
    if (objects === undefined) values.set(value, objects = new Set())
    objects.add(object)
  }
}

const unindexValues = <A>(values: Map<string, Set<A>>, object: A, indexed: ReadonlyArray<string>) => {
  for (const value of indexed) {
    const objects = values.get(value)
    if (objects === undefined) continue
    objects.delete(object)
    if (objects.size === 0) values.delete(value)
  }
}
