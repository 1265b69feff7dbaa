/** JSON merge patch, JSON patch and (approximate) strategic merge patch. */
import jsonpatch from "fast-json-patch"
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { clone, deepEqual, isObject, type Obj } from "./json.js"
import { itemKey } from "./managedFields.js"

/** RFC 7386 JSON merge patch. */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return clone(patch)
  const out: Obj = isObject(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

/** RFC 6902 JSON patch; a failed `test` or a bad path is a 422. */
export const jsonPatch = (target: Obj, operations: unknown): Obj => {
  if (!Array.isArray(operations)) {
    throw ApiError.make(400, "BadRequest", "json patch must be an array of operations")
  }
  try {
    return jsonpatch.applyPatch(clone(target), operations as Array<jsonpatch.Operation>, true, false).newDocument
  } catch {
    // upstream's generic 422 for a patch that does not apply: no detail, empty details
    throw ApiError.make(422, "Invalid", "the server rejected our request due to an error in our request", {})
  }
}

/**
 * Strategic merge patch, approximated: a JSON merge patch in which lists with
 * known merge keys (containers by name, ports, env, conditions by type, …) are
 * merged item by item, `$patch: delete` / `$patch: replace` work on items and
 * maps, `$deleteFromPrimitiveList/<field>` works, and other directives
 * (`$setElementOrder`, `$retainKeys`) are ignored. A merged list is in upstream's element order (`inPatchOrder`).
 */
export const strategicMergePatch = (rt: ResourceType, target: unknown, patch: unknown): unknown =>
  smp(rt, target, patch, "")

const smp = (rt: ResourceType, target: unknown, patch: unknown, schemaPath: string): unknown => {
  if (!isObject(patch)) return clone(patch)
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch
    return stripDirectives(rest)
  }
  if (patch.$patch === "delete") return undefined
  const out: Obj = isObject(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length)
      if (Array.isArray(out[field]) && Array.isArray(v)) {
        out[field] = (out[field] as Array<unknown>).filter((x) => !v.some((y) => deepEqual(x, y)))
      }
      continue
    }
    if (k.startsWith("$")) continue
    const childPath = schemaPath === "" ? k : `${schemaPath}.${k}`
    if (v === null) {
      delete out[k]
      continue
    }
    const mergeKeys = rt.listKeys.get(childPath)
    if (Array.isArray(v) && mergeKeys !== undefined && Array.isArray(out[k])) {
      out[k] = mergeList(rt, out[k] as Array<unknown>, v, mergeKeys, childPath)
      continue
    }
    const merged = smp(rt, out[k], v, childPath)
    if (merged === undefined) delete out[k]
    else out[k] = merged
  }
  return out
}

const mergeList = (
  rt: ResourceType,
  live: Array<unknown>,
  patch: Array<unknown>,
  mergeKeys: ReadonlyArray<string>,
  schemaPath: string
): Array<unknown> => {
  if (patch.some((x) => isObject(x) && x.$patch === "replace")) {
    return patch.filter((x) => !(isObject(x) && x.$patch === "replace")).map(stripDirectives)
  }
  if (mergeKeys.length === 0) {
    const out = [...live]
    for (const item of patch) if (!out.some((x) => deepEqual(x, item))) out.push(item)
    return out
  }
  const keyOf = (x: unknown): string | undefined => (isObject(x) ? itemKey(x, mergeKeys) : undefined)
  const out: Array<unknown> = [...live]
  // the keys the patch merges (not deletes), in the patch's order
  const patchKeys: Array<string> = []
  for (const item of patch) {
    if (!isObject(item)) continue
    const key = itemKey(item, mergeKeys)
    const i = out.findIndex((x) => keyOf(x) === key)
    if (item.$patch === "delete") {
      if (i >= 0) out.splice(i, 1)
      continue
    }
    if (!patchKeys.includes(key)) patchKeys.push(key)
    if (i >= 0) out[i] = smp(rt, out[i], item, `${schemaPath}[]`)
    else out.push(stripDirectives(item))
  }
  return inPatchOrder(out, live.map(keyOf), patchKeys, keyOf)
}

/**
 * The order of a merged list (strategic merge's element order): the patched items in the patch's order, the
 * live-only ones in the live order, interleaved so that a live-only item comes before a patched one only when both
 * are live and the live list has it first — so items new to the list come before the live items left after them.
 */
const inPatchOrder = (
  merged: ReadonlyArray<unknown>,
  liveKeys: ReadonlyArray<string | undefined>,
  patchKeys: ReadonlyArray<string>,
  keyOf: (x: unknown) => string | undefined
): Array<unknown> => {
  const patched = patchKeys.map((k) => merged.find((x) => keyOf(x) === k)).filter((x) => x !== undefined)
  const liveOnly = merged.filter((x) => {
    const k = keyOf(x)
    return k === undefined || !patchKeys.includes(k)
  })
  const liveIndex = (x: unknown): number => {
    const k = keyOf(x)
    return k === undefined ? -1 : liveKeys.indexOf(k)
  }
  const out: Array<unknown> = []
  let i = 0
  let j = 0
  while (i < liveOnly.length || j < patched.length) {
    if (j >= patched.length) out.push(liveOnly[i++])
    else if (i >= liveOnly.length) out.push(patched[j++])
    else {
      const a = liveIndex(liveOnly[i])
      const b = liveIndex(patched[j])
      if (a >= 0 && b >= 0 && a < b) out.push(liveOnly[i++])
      else out.push(patched[j++])
    }
  }
  return out
}

const stripDirectives = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stripDirectives)
  if (!isObject(value)) return value
  const out: Obj = {}
  for (const [k, v] of Object.entries(value)) if (!k.startsWith("$")) out[k] = stripDirectives(v)
  return out
}
