import type { ObjectMeta, OwnerReference } from "@reconcile/core/ObjectMeta"
import * as Predicate from "effect/Predicate"
import type * as KubeError from "../KubeError.js"
import type * as Undecodable from "../Undecodable.js"

/** @internal */
export const TypeId: Undecodable.TypeId = Symbol.for("@reconcile/kube/Undecodable") as Undecodable.TypeId

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const str = (u: unknown): string | undefined => typeof u === "string" ? u : undefined

const strings = (u: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(u) ? u.filter((x): x is string => typeof x === "string") : undefined

const stringMap = (u: unknown): Readonly<Record<string, string>> | undefined => {
  if (!isRecord(u)) return undefined
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(u)) if (typeof v === "string") out[k] = v
  return out
}

const ownerReferences = (u: unknown): ReadonlyArray<OwnerReference> | undefined => {
  if (!Array.isArray(u)) return undefined
  const out: Array<OwnerReference> = []
  for (const ref of u) {
    if (!isRecord(ref)) continue
    const { apiVersion, kind, name, uid } = ref
    if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof name !== "string") continue
    if (typeof uid !== "string") continue
    out.push({
      apiVersion,
      kind,
      name,
      uid,
      ...(typeof ref.controller === "boolean" ? { controller: ref.controller } : {}),
      ...(typeof ref.blockOwnerDeletion === "boolean" ? { blockOwnerDeletion: ref.blockOwnerDeletion } : {})
    })
  }
  return out
}

/** kubectl's copy of the whole applied object: for a Secret, its data. */
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

/**
 * The core metadata view of a raw object whose `metadata` is a JSON object
 * with a string `name` (undefined otherwise): only the fields that are well
 * typed are kept. For sensitive kinds (Secrets) kubectl's last-applied
 * annotation, which holds the object's data, is dropped.
 *
 * @internal
 */
export const metadataOf = (u: unknown, sensitive: boolean): ObjectMeta | undefined => {
  if (!isRecord(u) || !isRecord(u.metadata)) return undefined
  const m = u.metadata
  const name = str(m.name)
  if (name === undefined || name === "") return undefined
  const meta: { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] } = { name }
  const namespace = str(m.namespace)
  if (namespace !== undefined) meta.namespace = namespace
  const uid = str(m.uid)
  if (uid !== undefined) meta.uid = uid
  if (typeof m.generation === "number") meta.generation = m.generation
  const resourceVersion = str(m.resourceVersion)
  if (resourceVersion !== undefined) meta.resourceVersion = resourceVersion
  const labels = stringMap(m.labels)
  if (labels !== undefined) meta.labels = labels
  const annotations = stringMap(m.annotations)
  if (annotations !== undefined) {
    if (sensitive && lastApplied in annotations) {
      const { [lastApplied]: _, ...rest } = annotations
      meta.annotations = rest
    } else {
      meta.annotations = annotations
    }
  }
  const refs = ownerReferences(m.ownerReferences)
  if (refs !== undefined) meta.ownerReferences = refs
  const deletionTimestamp = str(m.deletionTimestamp)
  if (deletionTimestamp !== undefined && deletionTimestamp !== "") meta.deletionTimestamp = deletionTimestamp
  const finalizers = strings(m.finalizers)
  if (finalizers !== undefined) meta.finalizers = finalizers
  return meta
}

/** @internal */
export const isUndecodable = (u: unknown): u is Undecodable.Undecodable => Predicate.hasProperty(u, TypeId)

/** @internal */
export const fromDecode = (error: KubeError.Decode): Undecodable.Undecodable | undefined => {
  const metadata = error.metadata
  if (metadata?.name === undefined || metadata.name === "") return undefined
  return {
    [TypeId]: TypeId,
    _tag: "Undecodable",
    apiVersion: error.apiVersion,
    kind: error.kind,
    metadata,
    error
  }
}
