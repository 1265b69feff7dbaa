/**
 * The store (`MutableStore`) and the reflector that writes it from a watcher stream, in one module: `Store.ts`
 * exposes both, and the reflector works on the store's keys and writes.
 */
import * as Event from "@reconcile/core/Event"
import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type * as KubeError from "../KubeError.js"
import type * as Store from "../Store.js"
import type * as Undecodable from "../Undecodable.js"
import type * as Watcher from "../Watcher.js"
import * as internalUndecodable from "./undecodable.js"

/** @internal */
export const keyOf = (object: HasMetadata): string => {
  const namespace = object.metadata?.namespace
  const name = object.metadata?.name ?? ""
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`
}

const noValues: ReadonlyArray<string> = []

const ownerUidIndex = (object: HasMetadata): ReadonlyArray<string> => {
  const refs = object.metadata?.ownerReferences
  return refs === undefined || refs.length === 0 ? noValues : refs.map((ref) => ref.uid)
}

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
export class MutableStore<A extends HasMetadata> implements Store.Store<A> {
  /** Objects by namespace (`""` when cluster-scoped), then by name. */
  private namespaces = new Map<string, Map<string, A>>()
  private count = 0
  /** Objects that do not decode, by key: never also in `namespaces`. */
  private undecodables = new Map<string, Undecodable.Undecodable>()
  /** Every index but the built-in namespace index (answered by `namespaces`, unless replaced with `addIndex`). */
  private readonly indexers = new Map<string, Store.IndexFunction<A>>()
  private readonly indexes = new Map<string, Map<string, Set<A>>>()
  /** The indexes as a list, for the writes (iterating a Map makes an entry array per index per write). */
  private indexList: Array<{ readonly index: Store.IndexFunction<A>; values: Map<string, Set<A>> }> = []
  /** How many writes changed the store. */
  private writes = 0

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

  /**
   * How many writes have changed the store (upserts, removals, relists, undecodable entries): a snapshot read
   * together with it holds every change up to it.
   */
  readonly revision = (): number => this.writes

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
    this.writes++
    return old
  }

  /** Forgets the undecodable entry of `key`; returns it. */
  removeUndecodable(key: string): Undecodable.Undecodable | undefined {
    if (this.undecodables.size === 0) return undefined
    const old = this.undecodables.get(key)
    if (old !== undefined) {
      this.undecodables.delete(key)
      this.writes++
    }
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
    this.indexList = [...this.indexers].map(([name, index]) => ({ index, values: this.indexes.get(name)! }))
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
    this.writes++
    if (old === undefined) this.count++
    const indexes = this.indexList
    for (let i = 0; i < indexes.length; i++) {
      const { index, values } = indexes[i]!
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
    this.writes++
    for (const { index, values } of this.indexList) unindexValues(values, old, index(old))
    return old
  }

  /** Replaces every object at once (a relist: `objects` by their `keyOf`), and the undecodable ones when given. */
  replace(objects: ReadonlyMap<string, A>, undecodables?: Map<string, Undecodable.Undecodable>): void {
    this.namespaces = new Map()
    this.count = 0
    this.writes++
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
    this.indexList = [...this.indexers].map(([name, index]) => ({ index, values: this.indexes.get(name)! }))
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

// The reflector

const rv = (object: HasMetadata) => object.metadata?.resourceVersion
const uid = (object: HasMetadata) => object.metadata?.uid

/** Whether a relisted object is another version (or, after a reset server's relist, another object) than `old`. */
const changed = (old: HasMetadata, object: HasMetadata) => rv(old) !== rv(object) || uid(old) !== uid(object)

/**
 * Applies watcher events to a store and collects the core events they mean — for decoded objects (`events`) and
 * for objects that do not decode (`undecodable`). A key is decoded or undecodable, never both: when an object stops
 * decoding its decoded copy goes (a `Delete` with `finalStateUnknown`, since the server still has it) and it becomes
 * undecodable (a `Create`); when it decodes again, the reverse. A list is buffered from `Init` and replaces the store
 * at `InitDone`, with `Create`/`Update` for what is new or changed and `Delete { finalStateUnknown }` for what
 * vanished; the first list's creates are `initial`.
 */
class Reflector<A extends HasMetadata> {
  private buffer: Map<string, A> | undefined
  private undecodableBuffer: Map<string, Undecodable.Undecodable> | undefined
  private listed = false

  constructor(private readonly store: MutableStore<A>, private readonly transform: (a: A) => A) {}

  /** Applies one chunk of watcher events in one synchronous step; `undefined` when it changed nothing to report. */
  applyAll(chunk: ReadonlyArray<Watcher.WatcherEvent<A>>): Store.Changes<A> | undefined {
    const events: Array<Event.Event<A>> = []
    const undecodable: Array<Event.Event<Undecodable.Undecodable>> = []
    let decodeFailures: Array<KubeError.Decode> | undefined
    let listed = false
    for (const event of chunk) {
      this.apply(event, events, undecodable)
      if (event._tag === "InitDone") listed = true
      else if (event._tag === "Undecodable") (decodeFailures ??= []).push(event.error)
    }
    if (!listed && decodeFailures === undefined && events.length === 0 && undecodable.length === 0) return undefined
    return { events, undecodable, decodeFailures: decodeFailures ?? [], listed, revision: this.store.revision() }
  }

  private apply(
    event: Watcher.WatcherEvent<A>,
    out: Array<Event.Event<A>>,
    undecodable: Array<Event.Event<Undecodable.Undecodable>>
  ): void {
    const store = this.store
    switch (event._tag) {
      case "Init":
        this.buffer = new Map()
        this.undecodableBuffer = new Map()
        return
      case "InitApply": {
        const object = this.transform(event.object)
        this.buffer?.set(keyOf(object), object)
        return
      }
      case "InitDone": {
        const next = this.buffer ?? new Map<string, A>()
        const nextUndecodable = this.undecodableBuffer ?? new Map<string, Undecodable.Undecodable>()
        this.buffer = undefined
        this.undecodableBuffer = undefined
        const initial = !this.listed
        for (const [key, object] of next) {
          const old = store.getByKey(key)
          if (old === undefined) out.push(Event.create(object, { initial }))
          else if (changed(old, object)) out.push(Event.update(old, object))
        }
        for (const key of store.keys()) {
          if (!next.has(key)) out.push(Event.delete(store.getByKey(key)!, { finalStateUnknown: true }))
        }
        for (const [key, object] of nextUndecodable) {
          const old = store.undecodableByKey(key)
          if (old === undefined) undecodable.push(Event.create(object, { initial }))
          else if (changed(old, object)) undecodable.push(Event.update(old, object))
        }
        for (const key of store.undecodableKeys()) {
          if (!nextUndecodable.has(key)) {
            undecodable.push(Event.delete(store.undecodableByKey(key)!, { finalStateUnknown: true }))
          }
        }
        store.replace(next, nextUndecodable)
        this.listed = true
        return
      }
      case "Apply": {
        const object = this.transform(event.object)
        if (store.undecodableCount() > 0) {
          const was = store.removeUndecodable(keyOf(object))
          if (was !== undefined) undecodable.push(Event.delete(was))
        }
        const old = store.upsert(object)
        out.push(old === undefined ? Event.create(object) : Event.update(old, object))
        return
      }
      case "Delete": {
        const key = keyOf(event.object)
        const was = store.removeUndecodable(key)
        if (was !== undefined) undecodable.push(Event.delete(was))
        const old = store.remove(event.object)
        if (old !== undefined || was === undefined) out.push(Event.delete(old ?? this.transform(event.object)))
        return
      }
      case "Undecodable": {
        const object = internalUndecodable.fromDecode(event.error)
        if (object === undefined) return
        const key = keyOf(object)
        if (event.event === "InitApply") {
          this.undecodableBuffer?.set(key, object)
          return
        }
        // the decoded copy no longer says what is on the server
        const stale = store.getByKey(key)
        if (stale !== undefined) {
          store.remove(stale)
          out.push(Event.delete(stale, { finalStateUnknown: true }))
        }
        if (event.event === "Delete") {
          store.removeUndecodable(key)
          undecodable.push(Event.delete(object))
          return
        }
        const old = store.upsertUndecodable(object)
        undecodable.push(old === undefined ? Event.create(object) : Event.update(old, object))
        return
      }
    }
  }
}

const identity = <A>(a: A): A => a

/** @internal */
export const reflector = <A extends HasMetadata, E, R>(
  stream: Stream.Stream<Watcher.WatcherEvent<A>, E, R>,
  store: MutableStore<A>,
  options?: Store.ReflectorOptions<A>
): Stream.Stream<Store.Changes<A>, E, R> =>
  Stream.transformPull(stream, (pull) =>
    Effect.sync(() => {
      // one reflector per run of the stream: its list buffer and whether it has listed yet
      const reflector = new Reflector(store, options?.transform ?? identity)
      // a chunk that changes nothing to report (a page of a list) pulls the next one: chunks are never empty
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<Store.Changes<A>>, E> = Effect.flatMap(pull, (chunk) => {
        const changes = reflector.applyAll(chunk)
        return changes === undefined ? next : Effect.succeed([changes] as const)
      })
      return next
    }))
