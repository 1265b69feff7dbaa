/**
 * Field ownership for server-side apply, in the `FieldsV1` format.
 *
 * A field set is a set of paths; a path is a list of segments as FieldsV1
 * spells them: `f:<field>`, `k:<json of the merge keys>` (an item of an
 * associative list), `v:<json value>` (an item of a set). A path ending in a
 * `k:` segment stands for the list item itself (the `.` entry of FieldsV1).
 * Lists without known merge keys are atomic: the list is one leaf.
 */
import * as ApiError from "../ApiError.js"
import type { ManagedFieldsEntry } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import { clone, deepEqual, isObject, type Obj, stableStringify } from "./json.js"

export type Segment = string
export type Path = ReadonlyArray<Segment>

export interface Leaf {
  readonly path: Path
  readonly value: unknown
}

const ITEM = Symbol.for("@reconcile/testkit/listItem")

const systemMeta = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink"
])

export const pathKey = (path: Path): string => path.join("\u0000")

/**
 * Fields that are one leaf although they hold an object (`+structType=atomic` / `+mapType=atomic` upstream): the
 * label selectors of workloads, a Service's selector.
 */
const atomicFields = new Set([
  "apps/Deployment:spec.selector",
  "apps/ReplicaSet:spec.selector",
  "apps/StatefulSet:spec.selector",
  "apps/DaemonSet:spec.selector",
  "batch/Job:spec.selector",
  "policy/PodDisruptionBudget:spec.selector",
  "/Service:spec.selector",
  // an OwnerReference is `+structType=atomic`: each item is one leaf
  "*:metadata.ownerReferences[]"
])

const isAtomic = (rt: ResourceType, schemaPath: string): boolean =>
  atomicFields.has(`${rt.group}/${rt.kind}:${schemaPath}`) || atomicFields.has(`*:${schemaPath}`)

/**
 * Walks the fields of an object (apiVersion, kind and system metadata excluded): every leaf, and every node — an
 * object with fields or an associative list with items, which structured-merge-diff tracks as a member of its own
 * (the `.` entry of FieldsV1) when a write adds it. Empty objects and lists are leaves.
 */
const walkFields = (
  obj: Obj,
  rt: ResourceType,
  onLeaf: (path: Path, value: unknown) => void,
  onNode: (path: Path) => void
): void => {
  const walk = (value: unknown, path: Path, schemaPath: string): void => {
    if (isObject(value)) {
      const keys = Object.keys(value).filter((k) => value[k] !== undefined)
      if ((keys.length === 0 || isAtomic(rt, schemaPath)) && path.length > 0) {
        onLeaf(path, keys.length === 0 ? {} : value)
        return
      }
      if (path.length > 0 && !path[path.length - 1]!.startsWith("k:")) onNode(path)
      for (const k of keys) walk(value[k], [...path, `f:${k}`], schemaPath === "" ? k : `${schemaPath}.${k}`)
      return
    }
    if (Array.isArray(value)) {
      const mergeKeys = rt.listKeys.get(schemaPath)
      if (mergeKeys === undefined || value.length === 0) {
        onLeaf(path, value)
        return
      }
      onNode(path)
      if (mergeKeys.length === 0) {
        for (const item of value) onLeaf([...path, `v:${stableStringify(item)}`], item)
        return
      }
      for (const item of value) {
        if (!isObject(item)) continue
        const seg = `k:${itemKey(item, mergeKeys)}`
        if (isAtomic(rt, `${schemaPath}[]`)) {
          onLeaf([...path, seg], item)
          continue
        }
        onLeaf([...path, seg], ITEM)
        walk(item, [...path, seg], `${schemaPath}[]`)
      }
      return
    }
    onLeaf(path, value)
  }
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion" || k === "kind" || v === undefined) continue
    if (k === "metadata" && isObject(v)) {
      for (const [mk, mv] of Object.entries(v)) {
        if (!systemMeta.has(mk) && mv !== undefined) walk(mv, ["f:metadata", `f:${mk}`], `metadata.${mk}`)
      }
      continue
    }
    walk(v, [`f:${k}`], k)
  }
}

/** Every leaf path of an object (apiVersion, kind and system metadata excluded). */
export const leaves = (obj: Obj, rt: ResourceType): Map<string, Leaf> => {
  const out = new Map<string, Leaf>()
  walkFields(obj, rt, (path, value) => out.set(pathKey(path), { path, value }), () => {})
  return out
}

/** Every node path of an object: objects holding fields (see {@link walkFields}). */
const nodes = (obj: Obj, rt: ResourceType): Map<string, Path> => {
  const out = new Map<string, Path>()
  walkFields(obj, rt, () => {}, (path) => out.set(pathKey(path), path))
  return out
}

/**
 * The empty object of a built-in kind as the API server's decoder makes it (Go's zero value: structs that are not
 * pointers are there, empty): what a create is compared with, so that only the nodes the request adds are owned.
 */
const zeroObjects: Record<string, Obj> = {
  "/Namespace": { spec: {}, status: {} },
  "/Service": { spec: {}, status: { loadBalancer: {} } },
  "/Pod": { spec: { containers: null }, status: {} },
  "/Event": { involvedObject: {}, source: {} },
  "apps/Deployment": { spec: { template: { metadata: {}, spec: { containers: null } }, strategy: {} }, status: {} },
  "apps/ReplicaSet": { spec: { template: { metadata: {}, spec: { containers: null } } }, status: {} },
  "apps/StatefulSet": {
    spec: { template: { metadata: {}, spec: { containers: null } }, updateStrategy: {}, serviceName: "" },
    status: {}
  },
  "apps/DaemonSet": {
    spec: { template: { metadata: {}, spec: { containers: null } }, updateStrategy: {} },
    status: {}
  },
  "coordination.k8s.io/Lease": { spec: {} },
  "apiextensions.k8s.io/CustomResourceDefinition": { spec: { names: {} }, status: { acceptedNames: {} } }
}

const zeroNodes = (zero: Obj, rt: ResourceType): Map<string, Path> => {
  // the zero object's structs count as present although empty: give each a placeholder field for the walk
  const mark = (o: Obj): Obj =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, isObject(v) ? { ...mark(v), "\u0000": true } : v]))
  return nodes(mark(zero), rt)
}

/**
 * The identity of a list-map item. Key fields the server defaults count with
 * their default (a port's `protocol` is `TCP`), as the real API server
 * defaults an applied configuration before merging it: otherwise re-applying
 * `{ port: 80 }` would not match the stored `{ port: 80, protocol: TCP }`.
 */
export const itemKey = (item: Obj, mergeKeys: ReadonlyArray<string>): string => {
  const key: Obj = {}
  for (const k of mergeKeys) {
    const value = item[k] ?? (k === "protocol" ? "TCP" : undefined)
    if (value !== undefined) key[k] = value
  }
  return stableStringify(key)
}

/** Renders a set of paths as a FieldsV1 tree. */
export const toFieldsV1 = (paths: Iterable<Path>): Obj => {
  const root: Obj = {}
  const members: Array<Obj> = []
  for (const path of paths) {
    let node = root
    for (const seg of path) node = node[seg] ??= {}
    if (path.length > 0) members.push(node)
  }
  // a member with fields below it is marked `.` (a list item always has its key fields)
  for (const node of members) if (Object.keys(node).some((k) => k !== ".")) node["."] = {}
  return root
}

/** Reads a FieldsV1 tree back into paths. */
export const fromFieldsV1 = (tree: unknown): Array<Path> => {
  const out: Array<Path> = []
  const walk = (node: unknown, path: Path): void => {
    if (!isObject(node)) return
    const keys = Object.keys(node)
    if (keys.length === 0) {
      if (path.length > 0) out.push(path)
      return
    }
    for (const k of keys) {
      if (k === ".") out.push(path)
      else walk(node[k], [...path, k])
    }
  }
  walk(tree, [])
  return out
}

interface Entry {
  manager: string
  operation: "Apply" | "Update"
  apiVersion: string
  /** Absent for an applier whose applies never changed the object (upstream records no time then). */
  time: string | undefined
  subresource: string | undefined
  paths: Map<string, Path>
}

const readEntries = (obj: Obj | undefined): Array<Entry> =>
  ((obj?.metadata?.managedFields ?? []) as Array<ManagedFieldsEntry>).filter((e) =>
    isObject(e) && e.manager !== undefined
  )
    .map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      subresource: e.subresource,
      paths: new Map(fromFieldsV1(e.fieldsV1).map((p) => [pathKey(p), p]))
    }))

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Entries in upstream's order (`sortEncodedManagedFields`): Apply before Update, then by time (seconds; none first),
 * manager, apiVersion and subresource.
 */
const byUpstreamOrder = (a: Entry, b: Entry): number =>
  compareText(a.operation, b.operation) ||
  (a.time === undefined ? 0 : Date.parse(a.time)) - (b.time === undefined ? 0 : Date.parse(b.time)) ||
  compareText(a.manager, b.manager) || compareText(a.apiVersion, b.apiVersion) ||
  compareText(a.subresource ?? "", b.subresource ?? "")

const writeEntries = (entries: ReadonlyArray<Entry>): Array<ManagedFieldsEntry> =>
  entries.filter((e) => e.paths.size > 0).sort(byUpstreamOrder).map((e) =>
    ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.time !== undefined ? { time: e.time } : {}),
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(e.paths.values()),
      ...(e.subresource !== undefined ? { subresource: e.subresource } : {})
    }) as ManagedFieldsEntry
  )

const inScope = (path: Path, rt: ResourceType, subresource: string | undefined): boolean =>
  !rt.hasStatus || (subresource === "status" ? path[0] === "f:status" : path[0] !== "f:status")

const findEntry = (
  entries: Array<Entry>,
  manager: string,
  operation: "Apply" | "Update",
  subresource: string | undefined,
  apiVersion: string,
  time: string | undefined
): Entry => {
  let entry = entries.find((e) => e.manager === manager && e.operation === operation && e.subresource === subresource)
  if (entry === undefined) {
    entry = { manager, operation, apiVersion, time, subresource, paths: new Map() }
    entries.push(entry)
  }
  return entry
}

/**
 * managedFields after a non-apply write (create, update, patch) by `manager`: it owns what the write added or
 * changed — leaves, and the nodes (objects) it added, as structured-merge-diff's comparison finds them; a create is
 * compared with the kind's empty object.
 */
export const afterUpdate = (
  rt: ResourceType,
  oldObj: Obj | undefined,
  newObj: Obj,
  manager: string,
  subresource: string | undefined,
  time: string
): Array<ManagedFieldsEntry> => {
  const entries = readEntries(oldObj)
  // an object stored without managedFields stays untracked by updates (upstream's skipNonAppliedManager)
  if (oldObj !== undefined && entries.length === 0) return []
  const zero = oldObj ?? zeroObjects[`${rt.group}/${rt.kind}`] ?? {}
  const before = leaves(zero, rt)
  const beforeNodes = oldObj === undefined ? zeroNodes(zero, rt) : nodes(oldObj, rt)
  const after = leaves(newObj, rt)
  const afterNodes = nodes(newObj, rt)
  const changed: Array<Path> = []
  for (const [k, leaf] of after) {
    const prev = before.get(k)
    if (prev === undefined || !deepEqual(prev.value, leaf.value)) changed.push(leaf.path)
  }
  for (const [k, path] of afterNodes) if (!beforeNodes.has(k) && !before.has(k)) changed.push(path)
  const removed = [...before.keys(), ...beforeNodes.keys()].filter((k) => !after.has(k) && !afterNodes.has(k))
  for (const e of entries) for (const k of removed) e.paths.delete(k)
  if (changed.length > 0) {
    for (const e of entries) for (const path of changed) e.paths.delete(pathKey(path))
    // kube-apiserver's scale handler records the `/scale` writer's entry without a time
    const at = subresource === "scale" ? undefined : time
    const entry = findEntry(entries, manager, "Update", subresource, newObj.apiVersion, at)
    entry.time = at
    entry.apiVersion = newObj.apiVersion
    for (const path of changed) entry.paths.set(pathKey(path), path)
  }
  return writeEntries(entries)
}

/** Renders a path as Kubernetes prints it in conflict messages (`.spec.containers[name="app"].image`). */
export const renderPath = (path: Path): string =>
  path.map((seg) => {
    if (seg.startsWith("f:")) return `.${seg.slice(2)}`
    if (seg.startsWith("k:")) {
      const key = JSON.parse(seg.slice(2)) as Obj
      return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}]`
    }
    return `[${seg.slice(2)}]`
  }).join("")

const mergeApply = (live: unknown, config: unknown, rt: ResourceType, schemaPath: string): unknown => {
  if (isObject(config)) {
    const out: Obj = isObject(live) ? { ...live } : {}
    for (const [k, v] of Object.entries(config)) {
      if (v === null) delete out[k]
      else out[k] = mergeApply(out[k], v, rt, schemaPath === "" ? k : `${schemaPath}.${k}`)
    }
    return out
  }
  if (Array.isArray(config)) {
    const mergeKeys = rt.listKeys.get(schemaPath)
    if (mergeKeys === undefined || !Array.isArray(live)) return clone(config)
    if (mergeKeys.length === 0) {
      const out = [...live]
      for (const item of config) if (!out.some((x) => deepEqual(x, item))) out.push(item)
      return out
    }
    const out: Array<unknown> = [...live]
    for (const item of config) {
      if (!isObject(item)) continue
      const key = itemKey(item, mergeKeys)
      const i = out.findIndex((x) => isObject(x) && itemKey(x, mergeKeys) === key)
      if (i >= 0) out[i] = mergeApply(out[i], item, rt, `${schemaPath}[]`)
      else out.push(clone(item))
    }
    return out
  }
  return config
}

const isPrefix = (prefix: Path, path: Path): boolean =>
  prefix.length <= path.length && prefix.every((seg, i) => path[i] === seg)

/** Removes the field at `path` from `obj` (in place); prunes containers the removal left empty. */
const removePath = (obj: Obj, path: Path): void => {
  const parents: Array<{ container: any; key: string | number }> = []
  let node: unknown = obj
  for (const seg of path) {
    if (node === undefined || node === null) return
    let key: string | number
    if (seg.startsWith("f:")) {
      key = seg.slice(2)
      if (!isObject(node) || !(key in node)) return
    } else if (Array.isArray(node)) {
      const want = seg.slice(2)
      key = seg.startsWith("k:")
        ? node.findIndex((x: unknown) =>
          isObject(x) && itemKey(x, Object.keys(JSON.parse(want) as Obj)) === stableStringify(JSON.parse(want))
        )
        : node.findIndex((x: unknown) => stableStringify(x) === want)
      if (key < 0) return
    } else {
      return
    }
    parents.push({ container: node, key })
    node = (node as any)[key]
  }
  for (let i = parents.length - 1; i >= 0; i--) {
    const { container, key } = parents[i]!
    if (Array.isArray(container)) container.splice(key as number, 1)
    else delete (container as Obj)[key as string]
    const empty = Array.isArray(container) ? container.length === 0 : Object.keys(container).length === 0
    if (!empty || i <= 1) break
  }
}

/**
 * The object and managedFields after a server-side apply of `config` by `manager`.
 * Throws an ApiError 409 on conflicts unless `force`.
 */
export const apply = (
  rt: ResourceType,
  live: Obj | undefined,
  config: Obj,
  manager: string,
  force: boolean,
  subresource: string | undefined,
  time: string
): { readonly object: Obj; readonly managedFields: Array<ManagedFieldsEntry> } => {
  const entries = readEntries(live)
  const applied = new Map([...leaves(config, rt)].filter(([, l]) => inScope(l.path, rt, subresource)))
  const liveLeaves = live === undefined ? new Map<string, Leaf>() : leaves(live, rt)
  const conflicts: Array<
    { manager: string; apiVersion: string; operation: string; subresource?: string | undefined; path: Path }
  > = []
  for (const e of entries) {
    if (e.manager === manager && e.operation === "Apply" && e.subresource === subresource) continue
    for (const [k, path] of e.paths) {
      const mine = applied.get(k)
      if (mine === undefined || mine.value === ITEM) continue
      const current = liveLeaves.get(k)
      if (current !== undefined && !deepEqual(current.value, mine.value)) {
        conflicts.push({
          manager: e.manager,
          apiVersion: e.apiVersion,
          operation: e.operation,
          subresource: e.subresource,
          path
        })
      }
    }
  }
  if (conflicts.length > 0 && !force) {
    const causes = conflicts.map((c) => ({
      reason: "FieldManagerConflict",
      // upstream's printManager: an applier by name; an updater with its apiVersion; a subresource named
      message: `conflict with "${c.manager}"${
        c.subresource === undefined ? "" : ` with subresource "${c.subresource}"`
      }${c.operation === "Update" ? ` using ${c.apiVersion}` : ""}`,
      field: renderPath(c.path)
    }))
    const list = causes.map((c) => `- ${c.message}: ${c.field}`).join("\n")
    throw ApiError.make(
      409,
      "Conflict",
      conflicts.length === 1
        ? `Apply failed with 1 conflict: ${causes[0]!.message}: ${causes[0]!.field}`
        : `Apply failed with ${conflicts.length} conflicts: conflicts with other managers:\n${list}`,
      { causes }
    )
  }
  for (const c of conflicts) {
    for (const e of entries) {
      if (e.manager === c.manager && !(e.manager === manager && e.operation === "Apply")) {
        e.paths.delete(pathKey(c.path))
      }
    }
  }
  const me = findEntry(entries, manager, "Apply", subresource, config.apiVersion, undefined)
  const previous = [...me.paths.values()]
  const scopedConfig = scopeConfig(config, rt, subresource)
  const merged = mergeApply(clone(live ?? {}), scopedConfig, rt, "") as Obj
  const others = entries.filter((e) => e !== me)
  const released = previous.filter((p) => !applied.has(pathKey(p)))
  // Whole list items first (their key fields go with them), then leaves deepest first so that
  // containers emptied by a removal are pruned. Removing an item's key field first would leave
  // a keyless remnant behind (e.g. a Service port reduced to `{ protocol: TCP }`).
  const isItem = (p: Path) => /^[kv]:/.test(p[p.length - 1] ?? "")
  released.sort((a, b) => Number(isItem(b)) - Number(isItem(a)) || b.length - a.length)
  for (const p of released) {
    const ownedElsewhere = others.some((e) => [...e.paths.values()].some((q) => isPrefix(p, q)))
    const stillApplied = [...applied.values()].some((l) => isPrefix(p, l.path))
    if (!ownedElsewhere && !stillApplied) removePath(merged, p)
  }
  me.paths = new Map([...applied].map(([k, l]) => [k, l.path]))
  // the time is the last apply that changed the object (none yet: no time, as upstream)
  if (live === undefined || !deepEqual(stripManaged(merged), stripManaged(live))) me.time = time
  else if (previous.length === 0) me.time = undefined
  me.apiVersion = config.apiVersion
  return { object: merged, managedFields: writeEntries(entries) }
}

const stripManaged = (obj: Obj): Obj => ({ ...obj, metadata: { ...obj.metadata, managedFields: undefined } })

const scopeConfig = (config: Obj, rt: ResourceType, subresource: string | undefined): Obj => {
  const out: Obj = {}
  for (const [k, v] of Object.entries(config)) {
    if (k === "metadata" && isObject(v)) {
      const meta: Obj = {}
      for (const [mk, mv] of Object.entries(v)) if (!systemMeta.has(mk)) meta[mk] = mv
      if (subresource !== "status" || !rt.hasStatus) out.metadata = meta
      continue
    }
    if (k === "apiVersion" || k === "kind") continue
    if (rt.hasStatus && (subresource === "status") !== (k === "status")) continue
    out[k] = v
  }
  return out
}
