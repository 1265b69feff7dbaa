/**
 * Deletion, as kube-apiserver's registry and the controllers behind it carry it out — here synchronously, within
 * the request:
 *
 * - an object something holds (finalizers, the garbage collector's `foregroundDeletion` / `orphan`, a namespace's
 *   contents) gets a `deletionTimestamp` and stays until the last finalizer goes; no finalizer can be added then;
 * - the garbage collector: dependents of a removed owner go (Background), a Foreground owner waits for its
 *   dependents, an Orphan owner's dependents lose their owner reference; an object written after all its owners
 *   were deleted is collected at once;
 * - the namespace controller: a terminating namespace's objects are deleted and it goes once empty;
 * - a removed CRD takes its custom resources and its kinds with it;
 * - at the start of a cluster with stored data, what a crash cut short is finished.
 */
import * as ApiError from "../ApiError.js"
import type { KubeObject } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import { clone, formatTime, type Obj } from "./json.js"
import * as ManagedFields from "./managedFields.js"
import { details, groupOf } from "./statuses.js"
import type { Storage } from "./storage.js"
import { tracksGeneration } from "./strategy.js"

/** Options of a delete (`metav1.DeleteOptions`). */
export interface DeleteOptions {
  readonly propagationPolicy?: "Background" | "Foreground" | "Orphan" | undefined
  readonly orphanDependents?: boolean | undefined
  readonly preconditions?:
    | { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined }
    | undefined
  /** `dryRun=All`: check the delete and return what it would leave, changing nothing. */
  readonly dryRun?: boolean | undefined
}

/** What deletion works on: the storage, the clock, and whether the namespace controller runs. */
export interface Cluster {
  readonly storage: Storage
  /** Milliseconds since the epoch. */
  readonly now: () => number
  readonly namespaceLifecycle: boolean
}

type Policy = "Background" | "Foreground" | "Orphan"

const FOREGROUND = "foregroundDeletion"
const ORPHAN = "orphan"
const protectedNamespaces = new Set(["default", "kube-system", "kube-public", "kube-node-lease"])

const isNamespaceKind = (rt: ResourceType): boolean => rt.kind === "Namespace" && rt.group === ""
const isCrdKind = (rt: ResourceType): boolean =>
  rt.kind === "CustomResourceDefinition" && rt.group === "apiextensions.k8s.io"

/** An object's finalizers. */
export const finalizersOf = (obj: Obj): Array<string> => (obj.metadata?.finalizers ?? []) as Array<string>

/** Go's `%#v` of a `[]string`. */
const goStrings = (values: ReadonlyArray<string>): string =>
  `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`

/**
 * The answer to a delete: the object while something holds it (a `deletionTimestamp`: finalizers, the garbage
 * collector's `foregroundDeletion` / `orphan`, a terminating namespace), answered as it was once marked even when
 * the embedded collector finished at once; a success Status when the delete removed it outright (kube-apiserver).
 */
export const deleteAnswer = (
  rt: ResourceType,
  name: string,
  result: { readonly object: KubeObject }
): { readonly _tag: "Object"; readonly object: KubeObject } | { readonly _tag: "Status"; readonly status: Obj } =>
  result.object.metadata.deletionTimestamp !== undefined
    ? { _tag: "Object", object: result.object }
    : {
      _tag: "Status",
      status: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name, ...groupOf(rt), kind: rt.plural, uid: result.object.metadata.uid }
      }
    }

/**
 * A DELETE of a stored object: its preconditions (uid, resourceVersion), the namespaces that may not go, then the
 * propagation policy (Background unless `orphanDependents`). Returns the object as stored after (or, on a dry run,
 * as the delete would leave it) and whether it is gone.
 */
export const request = (
  c: Cluster,
  rt: ResourceType,
  existing: Obj,
  options: DeleteOptions
): { readonly object: Obj; readonly deleted: boolean } => {
  const name = existing.metadata.name as string
  const pre = options.preconditions
  if (pre?.uid !== undefined && pre.uid !== existing.metadata.uid) {
    throw ApiError.make(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${rt.kind} "${name}": the UID in the precondition (${pre.uid}) does not match the UID in record (${existing.metadata.uid}). The object might have been deleted and then recreated`,
      { ...details(rt, name), kind: rt.kind }
    )
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== existing.metadata.resourceVersion) {
    throw ApiError.make(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${rt.kind} "${name}": the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${existing.metadata.resourceVersion}). The object might have been modified`,
      { ...details(rt, name), kind: rt.kind }
    )
  }
  if (isNamespaceKind(rt) && protectedNamespaces.has(name)) {
    throw ApiError.make(
      403,
      "Forbidden",
      `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      details(rt, name)
    )
  }
  const policy = options.propagationPolicy ?? (options.orphanDependents === true ? "Orphan" : "Background")
  if (options.dryRun === true) return dryDelete(c, rt, existing, policy)
  return deleteObject(c, rt, existing, policy)
}

/**
 * What a delete would do, without doing it: an object finalizers (or foreground dependents) keep comes back with
 * its `deletionTimestamp`, one that would go comes back as stored; nothing cascades.
 */
const dryDelete = (
  c: Cluster,
  rt: ResourceType,
  existing: Obj,
  policy: Policy
): { readonly object: Obj; readonly deleted: boolean } => {
  if (existing.metadata.deletionTimestamp !== undefined) return { object: existing, deleted: false }
  const marked = markedForDeletion(c, rt, existing, policy)
  return marked === undefined ? { object: existing, deleted: true } : { object: marked, deleted: false }
}

/**
 * The object a delete leaves behind while something holds it — finalizers, foreground dependents (which add
 * `foregroundDeletion`), a namespace's contents — with its `deletionTimestamp` (and a `Terminating` namespace);
 * `undefined` when nothing holds it and it goes at once.
 */
const markedForDeletion = (c: Cluster, rt: ResourceType, existing: Obj, policy: Policy): Obj | undefined => {
  const finalizers = [...finalizersOf(existing)]
  const isNamespace = isNamespaceKind(rt)
  // the registry adds the garbage collector's finalizer of the policy, dependents or not (kube-apiserver)
  const gcFinalizer = isNamespace
    ? undefined
    : policy === "Foreground"
    ? FOREGROUND
    : policy === "Orphan"
    ? ORPHAN
    : undefined
  if (gcFinalizer !== undefined && !finalizers.includes(gcFinalizer)) finalizers.push(gcFinalizer)
  if (finalizers.length === 0 && !isNamespace) return undefined
  const next = clone(existing)
  next.metadata.deletionTimestamp = formatTime(c.now())
  if (!isNamespace) next.metadata.deletionGracePeriodSeconds = 0
  if (finalizers.length > 0) next.metadata.finalizers = finalizers
  if (tracksGeneration(rt)) next.metadata.generation = (existing.metadata.generation ?? 0) + 1
  if (isNamespace) next.status = { ...next.status, phase: "Terminating" }
  return next
}

const deleteObject = (
  c: Cluster,
  rt: ResourceType,
  existing: Obj,
  policy: Policy
): { readonly object: Obj; readonly deleted: boolean } => {
  if (existing.metadata.deletionTimestamp !== undefined) return { object: existing, deleted: false }
  const uid = existing.metadata.uid as string
  const next = markedForDeletion(c, rt, existing, policy)
  if (next !== undefined) {
    delete next.metadata.resourceVersion
    const stored = c.storage.commit(rt, "MODIFIED", next, existing)
    if (finalizersOf(next).includes(FOREGROUND)) {
      for (const dep of dependentsOf(c, uid)) {
        const current = c.storage.lookupUid(dep.obj.metadata.uid)
        if (current !== undefined) deleteObject(c, current.rt, current.obj, "Background")
      }
      releaseForeground(c, uid)
    }
    // the garbage collector, once the owner is marked: it orphans the dependents, then removes its finalizer
    if (policy === "Orphan") {
      orphanDependents(c, uid)
      releaseFinalizer(c, uid, ORPHAN)
    }
    if (isNamespaceKind(rt)) {
      if (c.namespaceLifecycle) deleteNamespaceContents(c, existing.metadata.name)
      finishNamespace(c, existing.metadata.name)
    }
    const current = c.storage.lookupUid(uid)
    return current === undefined ? { object: stored, deleted: true } : { object: current.obj, deleted: false }
  }
  return { object: remove(c, rt, clone(existing), existing), deleted: true }
}

/**
 * Removes an object for good (`finalState` is what the DELETED event carries) and runs what follows a removal
 * (GC, foreground owners, namespaces, CRDs).
 */
export const remove = (c: Cluster, rt: ResourceType, finalState: Obj, existing: Obj): Obj => {
  const registry = c.storage.registry
  if (isCrdKind(rt)) {
    const types = registry.versionsOf(existing.spec.group, existing.spec.names.plural)
    if (types.length > 0) {
      const instances = c.storage.objects(types[0]!)
      for (const obj of [...instances.values()]) c.storage.commit(types[0]!, "DELETED", clone(obj), obj)
    }
  }
  delete finalState.metadata.resourceVersion
  const gone = c.storage.commit(rt, "DELETED", finalState, existing)
  if (isCrdKind(rt)) registry.removeCrd(existing.spec.group, existing.spec.names.plural)
  const uid = existing.metadata.uid as string
  for (const dep of dependentsOf(c, uid)) {
    const current = c.storage.lookupUid(dep.obj.metadata.uid)
    if (current === undefined) continue
    const owners = (current.obj.metadata.ownerReferences ?? []) as Array<Obj>
    if (owners.every((o) => !c.storage.hasUid(o.uid))) deleteObject(c, current.rt, current.obj, "Background")
  }
  for (const owner of (existing.metadata.ownerReferences ?? []) as Array<Obj>) releaseForeground(c, owner.uid)
  const ns = existing.metadata.namespace
  if (ns !== undefined) finishNamespace(c, ns)
  return gone
}

/**
 * kube's garbage collector deletes a dependent whose owners are all gone — one created or updated after its owner
 * vanished too (a controller acting on a stale cache): it looks each owner uid up live. The testkit collects such
 * an object at once (Background), for owner uids it saw deleted; a uid it never stored is kept (tests invent
 * owners), and so is an object with one owner left.
 */
export const collectIfOrphaned = (c: Cluster, obj: Obj): void => {
  const refs = (obj.metadata.ownerReferences ?? []) as Array<Obj>
  if (refs.length === 0 || obj.metadata.deletionTimestamp !== undefined) return
  if (refs.some((o) => c.storage.hasUid(o.uid)) || !refs.some((o) => c.storage.wasDeleted(o.uid))) return
  const current = c.storage.lookupUid(obj.metadata.uid)
  if (current !== undefined) deleteObject(c, current.rt, current.obj, "Background")
}

/**
 * The update of an object being deleted may not add finalizers: 422 Invalid naming the new ones (upstream checks it
 * twice, `ValidateObjectMetaUpdate` and the deletion rules: two causes, one message).
 */
export const checkNoNewFinalizers = (rt: ResourceType, existing: Obj, next: Obj): void => {
  if (existing.metadata.deletionTimestamp === undefined) return
  const added = finalizersOf(next).filter((f) => !finalizersOf(existing).includes(f))
  if (added.length === 0) return
  const name = existing.metadata.name as string
  throw ApiError.make(
    422,
    "Invalid",
    `${rt.kind} "${name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${
      goStrings(added)
    }`,
    {
      name,
      ...groupOf(rt),
      kind: rt.kind,
      causes: [1, 2].map(() => ({
        reason: "FieldValueForbidden",
        message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${
          goStrings(added)
        }`,
        field: "metadata.finalizers"
      }))
    }
  )
}

const dependentsOf = (c: Cluster, uid: string): Array<{ readonly rt: ResourceType; readonly obj: Obj }> => {
  const out: Array<{ rt: ResourceType; obj: Obj }> = []
  for (const [rt, store] of c.storage.kinds()) {
    for (const obj of store.values()) {
      if (((obj.metadata.ownerReferences ?? []) as Array<Obj>).some((o) => o.uid === uid)) out.push({ rt, obj })
    }
  }
  return out
}

/** Removes the owner reference to `uid` from its dependents, as the garbage collector's patch does. */
const orphanDependents = (c: Cluster, uid: string): void => {
  for (const dep of dependentsOf(c, uid)) {
    const next = clone(dep.obj)
    const refs = (next.metadata.ownerReferences as Array<Obj>).filter((o) => o.uid !== uid)
    if (refs.length === 0) delete next.metadata.ownerReferences
    else next.metadata.ownerReferences = refs
    delete next.metadata.resourceVersion
    // a write that only removes: the fields leave their managers, the collector owns nothing new
    const entries = ManagedFields.afterUpdate(
      dep.rt,
      dep.obj,
      next,
      "kube-controller-manager",
      undefined,
      formatTime(c.now())
    )
    if (entries.length > 0) next.metadata.managedFields = entries
    else delete next.metadata.managedFields
    c.storage.commit(dep.rt, "MODIFIED", next, dep.obj)
  }
}

/** Drops the foregroundDeletion finalizer of `uid` once it has no dependents left. */
const releaseForeground = (c: Cluster, uid: string): void => {
  if (dependentsOf(c, uid).length > 0) return
  releaseFinalizer(c, uid, FOREGROUND)
}

/** Removes one finalizer of an object being deleted; the object goes with its last one. */
const releaseFinalizer = (c: Cluster, uid: string, finalizer: string): void => {
  const owner = c.storage.lookupUid(uid)
  if (owner === undefined || !finalizersOf(owner.obj).includes(finalizer)) return
  const next = clone(owner.obj)
  const rest = finalizersOf(next).filter((f) => f !== finalizer)
  if (rest.length === 0) {
    delete next.metadata.finalizers
    remove(c, owner.rt, next, owner.obj)
  } else {
    next.metadata.finalizers = rest
    delete next.metadata.resourceVersion
    c.storage.commit(owner.rt, "MODIFIED", next, owner.obj)
  }
}

const namespaceType = (c: Cluster): ResourceType => c.storage.registry.byKind("", "v1", "Namespace")!

const namespacedContents = (
  c: Cluster,
  namespace: string
): Array<{ readonly rt: ResourceType; readonly obj: Obj }> => {
  const out: Array<{ rt: ResourceType; obj: Obj }> = []
  for (const [rt, store] of c.storage.kinds()) {
    if (rt.scope === "Cluster") continue
    for (const obj of store.values()) if (obj.metadata.namespace === namespace) out.push({ rt, obj })
  }
  return out
}

const deleteNamespaceContents = (c: Cluster, namespace: string): void => {
  for (const { obj, rt } of namespacedContents(c, namespace)) {
    const current = c.storage.lookupUid(obj.metadata.uid)
    if (current !== undefined) deleteObject(c, rt, current.obj, "Background")
  }
}

/** Removes a terminating namespace once it is empty and has no finalizers left (the namespace controller). */
export const finishNamespace = (c: Cluster, namespace: string): void => {
  if (!c.namespaceLifecycle) return
  const nsType = namespaceType(c)
  const ns = c.storage.objects(nsType).get(namespace)
  if (ns === undefined || ns.metadata.deletionTimestamp === undefined) return
  if (namespacedContents(c, namespace).length > 0) return
  if (finalizersOf(ns).length > 0) return
  const next = clone(ns)
  next.spec = { ...next.spec, finalizers: [] }
  remove(c, nsType, next, ns)
}

/**
 * Finishes what a crash may have cut short: each step of a cascade is its own durable event, so the disk can hold
 * a namespace still terminating with contents left, an owner deleted with dependents left, or a foreground
 * deletion with its dependents gone. The namespace controller and the garbage collector would finish them; here
 * they run once at start, with the rule of `collectIfOrphaned` (owner uids seen deleted; invented ones are kept).
 */
export const resume = (c: Cluster): void => {
  for (const ns of [...c.storage.objects(namespaceType(c)).values()]) {
    if (ns.metadata.deletionTimestamp === undefined || !c.namespaceLifecycle) continue
    deleteNamespaceContents(c, ns.metadata.name)
    finishNamespace(c, ns.metadata.name)
  }
  for (const [rt, store] of c.storage.kinds()) {
    for (const obj of [...store.values()]) {
      const current = c.storage.lookupUid(obj.metadata.uid)
      if (current === undefined) continue
      const owners = (current.obj.metadata.ownerReferences ?? []) as Array<Obj>
      if (
        owners.length > 0 && owners.every((o) => !c.storage.hasUid(o.uid)) &&
        owners.some((o) => c.storage.wasDeleted(o.uid))
      ) {
        deleteObject(c, rt, current.obj, "Background")
      } else if (
        current.obj.metadata.deletionTimestamp !== undefined && finalizersOf(current.obj).includes(FOREGROUND)
      ) {
        for (const dep of dependentsOf(c, obj.metadata.uid)) {
          const live = c.storage.lookupUid(dep.obj.metadata.uid)
          if (live !== undefined) deleteObject(c, live.rt, live.obj, "Background")
        }
        releaseForeground(c, obj.metadata.uid)
      }
    }
  }
}
