/**
 * The storage of the in-memory API server: objects by storage (`group/plural`) and key (`namespace/name`), their
 * uids, one cluster-wide resourceVersion counter, a bounded history of events, lists and watches.
 *
 * - Every change goes through `commit`: recorded in the journal first (durable, when the cluster has a data
 *   directory), then applied in memory, then delivered to the watches of its storage.
 * - A list reads one snapshot (the current state, or an older one rebuilt from the history) and pages through it
 *   with `limit`/`continue`, label and field selectors; a continue token or resourceVersion older than the history
 *   gets 410 Expired.
 * - A watch starts with the objects in scope (`ADDED`) or replays the history after its resourceVersion; an object
 *   entering or leaving its selection arrives as ADDED or DELETED.
 *
 * The storage knows nothing of admission: what it stores is shown through the `present` function the core passes
 * (custom resources pruned and defaulted, events in the form of the group asked). It is just over 500 lines: lists,
 * watches and commits share the history and the resourceVersion counter, which nothing else may touch.
 */
import * as ApiError from "../ApiError.js"
import type { KubeObject, ObjectList, WatchEvent } from "../KubeObject.js"
import { apiVersion, type ResourceType } from "../ResourceType.js"
import * as FieldSelectors from "./fieldSelectors.js"
import { goContinueToken, type Obj } from "./json.js"
import { type FieldRequirement, matches, parse as parseLabels, type Requirement } from "./labelSelector.js"
import type { Change, CoreStorage, Journal } from "./persistence.js"
import { fromCrd, type Registry, storageKey } from "./resourceType.js"
import * as ShardSelector from "./shardSelector.js"
import { badRequest, expired } from "./statuses.js"
import { each } from "./suspension.js"

/** The parameters of a list. */
export interface ListOptions {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** A range of the hash space (`shardSelector.ts`): applied only with the `ShardedListAndWatch` gate. */
  readonly shardSelector?: string | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: string | undefined
}

/** The parameters of a watch. */
export interface WatchOptions {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** As for lists. */
  readonly shardSelector?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly sendInitialEvents?: boolean | undefined
  readonly allowWatchBookmarks?: boolean | undefined
}

/** An open watch. */
export interface WatchHandle {
  /** False when the watch ended at once (410 Expired was sent). */
  readonly open: boolean
  readonly close: () => void
}

/** What a committed event did to its object. */
export type EventType = "ADDED" | "MODIFIED" | "DELETED"

interface HistoryEvent {
  readonly rv: number
  readonly storage: string
  readonly type: EventType
  readonly object: Obj
  readonly prev: Obj | undefined
}

interface Watcher {
  readonly storage: string
  readonly rt: ResourceType
  readonly namespace: string | undefined
  readonly labels: ReadonlyArray<Requirement>
  readonly fields: ReadonlyArray<FieldRequirement>
  /** The shard ranges it selects (none: every object). */
  readonly shards: ReadonlyArray<ShardSelector.ShardRange>
  readonly sink: (event: WatchEvent) => void
  readonly reading: Reading
  /** Only events after this resourceVersion (a watch from one the server has not reached yet waits for it). */
  after: number
}

/** Options of {@link Storage}. */
export interface StorageOptions {
  /** The served kinds (restoring CRDs adds theirs). */
  readonly registry: Registry
  /** How many events the watch history keeps before compacting. */
  readonly historySize: number
  /** Where each event is made durable before it is applied. */
  readonly journal: Journal | undefined
  /** How a stored object of a kind is shown (lists and watches), to a reader that copies or only views it. */
  readonly present: (rt: ResourceType, obj: Obj, reading: Reading) => KubeObject
  /** The `ShardedListAndWatch` feature gate: `shardSelector` on list and watch (default off, as kube-apiserver). */
  readonly shardedListAndWatch?: boolean | undefined
}

/**
 * What a reader does with the objects it gets: `copy`, they are its own (a deep copy); `view`, it only serializes
 * them and never mutates them (the HTTP handler), so a built-in kind's object may share the stored one's fields;
 * `stored`, it converts them itself (a watch of a kind converted by a webhook): a copy as stored.
 */
export type Reading = "copy" | "view" | "stored"

/** The key of an object in its storage: `namespace/name`, or `name` for cluster-scoped kinds. */
export const objKey = (namespace: string | undefined, name: string): string =>
  namespace === undefined ? name : `${namespace}/${name}`

const parseRv = (value: string): number => {
  if (!/^\d+$/.test(value)) {
    const quoted = JSON.stringify(value)
    throw badRequest(
      `invalid resource version: resourceVersion: Invalid value: ${quoted}: strconv.ParseUint: parsing ${quoted}: invalid syntax`
    )
  }
  return Number(value)
}

const labelsOf = (obj: Obj): Obj | undefined => obj.metadata?.labels

/** The stored objects, their history and the watches on them. */
export class Storage {
  readonly registry: Registry
  private readonly stores = new Map<string, Map<string, Obj>>()
  private readonly storageTypes = new Map<string, ResourceType>()
  private readonly uids = new Map<string, { readonly storage: string; readonly key: string }>()
  /** Uids of objects deleted since the start: owners the garbage collector knows are gone. */
  private readonly deletedUids = new Set<string>()
  private readonly watchers = new Set<Watcher>()
  private history: Array<HistoryEvent> = []
  private rv = 0
  private compactedRv = 0
  private readonly historySize: number
  private readonly journal: Journal | undefined
  private readonly present: (rt: ResourceType, obj: Obj, reading: Reading) => KubeObject
  private readonly shardedListAndWatch: boolean

  constructor(options: StorageOptions) {
    this.registry = options.registry
    this.shardedListAndWatch = options.shardedListAndWatch ?? false
    this.historySize = options.historySize
    this.journal = options.journal
    this.present = options.present
  }

  /**
   * Loads stored objects: CRDs first (their kinds are served again), then every object under its storage, the
   * counter where it stopped (it never goes back). The watch history starts empty: a watch from an older
   * resourceVersion gets 410 Expired and relists, as after a kube-apiserver restart.
   */
  restore({ deletedUids, objects, rv }: CoreStorage): void {
    const crdStorage = storageKey(this.registry.byKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")!)
    for (const { object, storage } of objects) {
      if (storage === crdStorage) this.registry.setCrd(object.spec.group, object.spec.names.plural, fromCrd(object))
    }
    for (const { key, object, storage } of objects) {
      const slash = storage.indexOf("/")
      const rt = this.registry.versionsOf(storage.slice(0, slash), storage.slice(slash + 1))[0]
      let store = this.stores.get(storage)
      if (store === undefined) {
        store = new Map()
        this.stores.set(storage, store)
      }
      // Objects of a kind no longer served (a CRD without served versions) are kept, as in memory.
      if (rt !== undefined && !this.storageTypes.has(storage)) this.storageTypes.set(storage, rt)
      store.set(key, object)
      this.uids.set(object.metadata.uid, { storage, key })
    }
    for (const uid of deletedUids) this.deletedUids.add(uid)
    this.rv = rv
    this.compactedRv = rv
  }

  // ---------------------------------------------------------------------------------------------------------------
  // objects

  resourceVersion(): string {
    return String(this.rv)
  }

  /** The stored objects of a kind's storage, by key (live: writes show). */
  objects(rt: ResourceType): Map<string, Obj> {
    const key = storageKey(rt)
    let store = this.stores.get(key)
    if (store === undefined) {
      store = new Map()
      this.stores.set(key, store)
    }
    if (!this.storageTypes.has(key)) this.storageTypes.set(key, rt)
    return store
  }

  /** One stored object (a cluster-scoped kind's namespace is ignored). */
  stored(rt: ResourceType, namespace: string | undefined, name: string): Obj | undefined {
    return this.objects(rt).get(objKey(rt.scope === "Namespaced" ? namespace : undefined, name))
  }

  /** Each storage with the kind it is served as (storages of kinds no longer served are left out). */
  *kinds(): Generator<readonly [ResourceType, Map<string, Obj>]> {
    for (const [storage, store] of [...this.stores]) {
      const rt = this.storageTypes.get(storage)
      if (rt !== undefined) yield [rt, store]
    }
  }

  /** The object stored with a uid now, and its kind. */
  lookupUid(uid: string): { readonly rt: ResourceType; readonly obj: Obj } | undefined {
    const where = this.uids.get(uid)
    if (where === undefined) return undefined
    const obj = this.stores.get(where.storage)?.get(where.key)
    const rt = this.storageTypes.get(where.storage)
    return obj === undefined || rt === undefined ? undefined : { rt, obj }
  }

  /** Whether an object with this uid is stored now. */
  hasUid(uid: string): boolean {
    return this.uids.has(uid)
  }

  /** Whether an object with this uid was removed since the start. */
  wasDeleted(uid: string): boolean {
    return this.deletedUids.has(uid)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // lists

  /** The sorted keys and objects of `rt` at `at`: computed once per list, reused by its continue pages. */
  private listCache: {
    readonly storage: string
    readonly at: number
    readonly keys: Array<string>
    readonly source: Map<string, Obj>
    /** Per namespace ("" for all): how many of `keys[0..i)` are in scope, for `remainingItemCount`. */
    readonly inScope: Map<string, Int32Array>
  } | undefined

  private listSnapshot(
    rt: ResourceType,
    at: number
  ): { readonly keys: Array<string>; readonly source: Map<string, Obj> } {
    const storage = storageKey(rt)
    const cached = this.listCache
    if (cached !== undefined && cached.storage === storage && cached.at === at) return cached
    // A copy even of the current state: later writes must not change what this list's pages see.
    const source = at === this.rv ? new Map(this.objects(rt)) : this.snapshot(rt, at)
    const keys = [...source.keys()].sort()
    this.listCache = { storage, at, keys, source, inScope: new Map() }
    return this.listCache
  }

  /**
   * How many keys of the cached snapshot from index `from` on are in scope (no label or field selector): counted
   * once per list and namespace, so each continue page costs its own size, not the whole list's.
   */
  private remainingInScope(rt: ResourceType, namespace: string | undefined, from: number): number {
    const cache = this.listCache!
    const scope = rt.scope === "Namespaced" && namespace !== undefined ? namespace : ""
    let counts = cache.inScope.get(scope)
    if (counts === undefined) {
      counts = new Int32Array(cache.keys.length + 1)
      for (let i = 0; i < cache.keys.length; i++) {
        counts[i + 1] = counts[i]! +
          (this.matchesScope(rt, namespace, [], [], cache.source.get(cache.keys[i]!)!) ? 1 : 0)
      }
      cache.inScope.set(scope, counts)
    }
    return counts[cache.keys.length]! - counts[from]!
  }

  private snapshot(rt: ResourceType, at: number): Map<string, Obj> {
    const storage = storageKey(rt)
    const out = new Map(this.objects(rt))
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > at; i--) {
      const e = this.history[i]!
      if (e.storage !== storage) continue
      const key = objKey(e.object.metadata.namespace, e.object.metadata.name)
      if (e.type === "ADDED") out.delete(key)
      else out.set(key, e.prev!)
    }
    return out
  }

  list(rt: ResourceType, namespace: string | undefined, options: ListOptions, reading: Reading = "copy"): ObjectList {
    const labels = this.labelRequirements(options.labelSelector)
    const fields = this.fieldRequirements(rt, options.fieldSelector)
    const shards = this.shardRanges(options.shardSelector)
    let at = this.rv
    let startAfter: string | undefined
    if (options.continue !== undefined && options.continue !== "") {
      const token = decodeContinue(options.continue)
      if (token.rv < this.compactedRv) {
        throw expired(
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."
        )
      }
      at = token.rv
      startAfter = token.start
    } else if (
      options.resourceVersion !== undefined && options.resourceVersion !== "" && options.resourceVersion !== "0"
    ) {
      const requested = parseRv(options.resourceVersion)
      if (options.resourceVersionMatch === "Exact") {
        if (requested < this.compactedRv) {
          throw expired(`too old resource version: ${requested} (${this.compactedRv + 1})`)
        }
        if (requested > this.rv) {
          throw ApiError.make(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${this.rv}`)
        }
        at = requested
      } else if (requested > this.rv) {
        throw ApiError.make(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${this.rv}`, {
          causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
          retryAfterSeconds: 1
        })
      }
    }
    const { keys, source } = this.listSnapshot(rt, at)
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined
    const page: Array<readonly [string, Obj]> = []
    let i = startAfter === undefined ? 0 : upperBound(keys, startAfter)
    let more = false
    for (; i < keys.length; i++) {
      const obj = source.get(keys[i]!)!
      if (!this.matchesScope(rt, namespace, labels, fields, obj)) continue
      if (!ShardSelector.matches(shards, obj.metadata)) continue
      if (limit !== undefined && page.length === limit) {
        more = true
        break
      }
      page.push([keys[i]!, obj])
    }
    const metadata: {
      resourceVersion: string
      continue?: string
      remainingItemCount?: number
      shardInfo?: { selector: string }
    } = { resourceVersion: String(at) }
    if (more) {
      metadata.continue = encodeContinue(at, page[page.length - 1]![0])
      if (labels.length === 0 && fields.length === 0 && shards.length === 0) {
        metadata.remainingItemCount = this.remainingInScope(rt, namespace, i)
      }
    }
    if (shards.length > 0) metadata.shardInfo = { selector: ShardSelector.format(shards) }
    return {
      apiVersion: apiVersion(rt),
      kind: rt.listKind,
      metadata,
      // every item's conversion asked for at once when a webhook converts them
      items: each(page, ([, obj]) => this.present(rt, obj, reading))
    }
  }

  private labelRequirements(selector: string | undefined): ReadonlyArray<Requirement> {
    if (selector === undefined) return []
    const parsed = parseLabels(selector)
    if (parsed._tag === "Err") throw badRequest(parsed.message)
    return parsed.requirements
  }

  /** The ranges of a `shardSelector`; none without the feature gate (kube-apiserver then ignores the parameter). */
  private shardRanges(selector: string | undefined): ReadonlyArray<ShardSelector.ShardRange> {
    return selector === undefined || !this.shardedListAndWatch ? [] : ShardSelector.parse(selector)
  }

  private fieldRequirements(rt: ResourceType, selector: string | undefined): ReadonlyArray<FieldRequirement> {
    return FieldSelectors.parse(rt, selector)
  }

  private matchesScope(
    rt: ResourceType,
    namespace: string | undefined,
    labels: ReadonlyArray<Requirement>,
    fields: ReadonlyArray<FieldRequirement>,
    obj: Obj
  ): boolean {
    if (rt.scope === "Namespaced" && namespace !== undefined && obj.metadata.namespace !== namespace) return false
    return matches(labels, labelsOf(obj)) && FieldSelectors.matches(rt, fields, obj)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // watches

  watch(
    rt: ResourceType,
    namespace: string | undefined,
    options: WatchOptions,
    sink: (event: WatchEvent) => void,
    reading: Reading = "copy"
  ): WatchHandle {
    const watcher: Watcher = {
      storage: storageKey(rt),
      rt,
      namespace: rt.scope === "Namespaced" ? namespace : undefined,
      labels: this.labelRequirements(options.labelSelector),
      fields: this.fieldRequirements(rt, options.fieldSelector),
      shards: this.shardRanges(options.shardSelector),
      sink,
      reading,
      after: 0
    }
    const rvParam = options.resourceVersion
    const initial = options.sendInitialEvents === true ||
      (options.sendInitialEvents === undefined && (rvParam === undefined || rvParam === "" || rvParam === "0"))
    if (initial) {
      for (const [, obj] of [...this.objects(rt)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (
          this.matchesScope(rt, watcher.namespace, watcher.labels, watcher.fields, obj) &&
          ShardSelector.matches(watcher.shards, obj.metadata)
        ) {
          sink({ type: "ADDED", object: this.present(rt, obj, reading) })
        }
      }
      if (options.sendInitialEvents === true && options.allowWatchBookmarks === true) {
        sink(this.bookmark(rt, { "k8s.io/initial-events-end": "true" }))
      }
    } else {
      const from = parseRv(rvParam!)
      if (from < this.compactedRv) {
        sink({
          type: "ERROR",
          object: expired(`too old resource version: ${from} (${this.compactedRv + 1})`).status as unknown as KubeObject
        })
        return { open: false, close: () => {} }
      }
      for (const e of this.history) if (e.rv > from && e.storage === watcher.storage) this.deliver(watcher, e)
      watcher.after = from
    }
    this.watchers.add(watcher)
    return { open: true, close: () => this.watchers.delete(watcher) }
  }

  /** A BOOKMARK event at the current resourceVersion. */
  bookmark(rt: ResourceType, annotations?: Record<string, string>): WatchEvent {
    return {
      type: "BOOKMARK",
      object: {
        apiVersion: apiVersion(rt),
        kind: rt.kind,
        metadata: { resourceVersion: String(this.rv), ...(annotations !== undefined ? { annotations } : {}) }
      }
    }
  }

  private deliver(w: Watcher, e: HistoryEvent): void {
    if (e.rv <= w.after) return
    // the hashed fields (uid, namespace) never change: an object is in a watch's shard for all its life
    if (!ShardSelector.matches(w.shards, e.object.metadata)) return
    const now = e.type !== "DELETED" && this.matchesScope(w.rt, w.namespace, w.labels, w.fields, e.object)
    const before = e.prev !== undefined && this.matchesScope(w.rt, w.namespace, w.labels, w.fields, e.prev)
    let type: WatchEvent["type"] | undefined
    if (e.type === "ADDED") type = now ? "ADDED" : undefined
    else if (e.type === "DELETED") type = before ? "DELETED" : undefined
    else type = now && before ? "MODIFIED" : now ? "ADDED" : before ? "DELETED" : undefined
    if (type === undefined) return
    // an object leaving the selection goes as DELETED in the state that matched, at the event's resourceVersion
    const leaving = type === "DELETED" && e.type === "MODIFIED"
    const object = leaving ? { ...e.prev!, metadata: { ...e.prev!.metadata, resourceVersion: String(e.rv) } } : e.object
    try {
      w.sink({ type, object: this.present(w.rt, object, w.reading) })
    } catch {
      this.watchers.delete(w)
    }
  }

  /** Forgets the watch history: watches and continue tokens from earlier versions get 410. */
  compact(): void {
    this.compactedRv = this.rv
    this.history = []
  }

  /** The number of open watches (for tests and fault injection). */
  watchCount(): number {
    return this.watchers.size
  }

  // ---------------------------------------------------------------------------------------------------------------
  // commits

  /**
   * Stores one change at the next resourceVersion (set on `obj`): durable first, then in memory, then in the
   * history and to the watches. Returns `obj`.
   */
  commit(rt: ResourceType, type: EventType, obj: Obj, prev: Obj | undefined): Obj {
    const rv = this.rv + 1
    obj.metadata.resourceVersion = String(rv)
    const store = this.objects(rt)
    const key = objKey(obj.metadata.namespace, obj.metadata.name)
    // Durable before anything sees it: the response, watches, and the in-memory state.
    if (this.journal !== undefined) {
      this.record(
        rv,
        storageKey(rt),
        key,
        type === "DELETED" ? { _tag: "Remove", uid: obj.metadata.uid } : { _tag: "Put", object: obj }
      )
    }
    this.rv = rv
    if (type === "DELETED") {
      store.delete(key)
      this.uids.delete(obj.metadata.uid)
      this.deletedUids.add(obj.metadata.uid)
    } else {
      store.set(key, obj)
      this.uids.set(obj.metadata.uid, { storage: storageKey(rt), key })
    }
    const event: HistoryEvent = { rv: this.rv, storage: storageKey(rt), type, object: obj, prev }
    this.history.push(event)
    if (this.history.length > this.historySize) {
      const dropped = this.history.splice(0, this.history.length - this.historySize)
      this.compactedRv = dropped[dropped.length - 1]!.rv
    }
    for (const w of [...this.watchers]) if (w.storage === event.storage) this.deliver(w, event)
    return obj
  }

  private record(rv: number, storage: string, key: string, change: Change): void {
    try {
      this.journal!.record(rv, storage, key, change)
    } catch (e) {
      throw ApiError.make(
        500,
        "InternalError",
        `storage write of ${storage} ${key} failed (nothing was changed): ${e instanceof Error ? e.message : String(e)}`
      )
    }
  }
}

const encodeContinue = (rv: number, start: string): string =>
  Buffer.from(JSON.stringify({ v: "testkit/v1", rv, start }), "utf8").toString("base64url")

const decodeContinue = (token: string): { readonly rv: number; readonly start: string } => {
  const decoded = goContinueToken(token, ["testkit/v1"])
  if ("error" in decoded) throw badRequest(`invalid continue token: ${decoded.error}`)
  return decoded
}

/** The index of the first key greater than `key` in sorted `keys`. */
const upperBound = (keys: ReadonlyArray<string>, key: string): number => {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keys[mid]! <= key) lo = mid + 1
    else hi = mid
  }
  return lo
}
