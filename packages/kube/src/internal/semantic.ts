/**
 * Semantic comparison and merge-patch diffs of objects in their wire (JSON)
 * form, shared by Apply, Status and Finalizer.
 *
 * "Semantic" means what the API server would store: `undefined`, `null`,
 * empty maps and empty lists are all "absent" (Go's `omitempty`), key order
 * does not matter, `Date`s compare as their RFC 3339 text.
 */

type Json = Record<string, unknown>

/** @internal */
export const isRecord = (u: unknown): u is Json =>
  typeof u === "object" && u !== null && !Array.isArray(u) && !(u instanceof Date)

const isAbsent = (u: unknown): boolean =>
  u === undefined || u === null || (Array.isArray(u) && u.length === 0) || (isRecord(u) && Object.keys(u).length === 0)

/**
 * The canonical form of a JSON-like value: absent values dropped (recursively,
 * so a map whose fields are all absent is absent too), `Date`s as strings.
 *
 * @internal
 */
export const normalize = (u: unknown): unknown => {
  if (u instanceof Date) return u.toISOString()
  if (Array.isArray(u)) return u.map((x) => normalize(x) ?? null)
  if (isRecord(u)) {
    const out: Json = {}
    for (const key of Object.keys(u).sort()) {
      const value = normalize(u[key])
      if (!isAbsent(value)) out[key] = value
    }
    return out
  }
  return u === null ? undefined : u
}

const equalNormalized = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => equalNormalized(x, b[i]))
  }
  if (isRecord(a)) {
    if (!isRecord(b)) return false
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && equalNormalized(a[k], b[k]))
  }
  return false
}

/**
 * Whether two values are the same once normalized.
 *
 * @internal
 */
export const equal = (a: unknown, b: unknown): boolean => {
  const na = normalize(a)
  const nb = normalize(b)
  return (isAbsent(na) && isAbsent(nb)) || equalNormalized(na, nb)
}

/**
 * The RFC 7386 JSON merge patch that turns `from` into `to` (both
 * normalized): changed and new fields with their new values, removed fields as
 * `null`, maps recursively, lists whole. `undefined` when nothing differs.
 *
 * @internal
 */
export const mergePatch = (from: unknown, to: unknown): unknown => {
  const a = normalize(from)
  const b = normalize(to)
  return diff(a, b)
}

const diff = (a: unknown, b: unknown): unknown => {
  if (isAbsent(b)) return isAbsent(a) ? undefined : null
  if (!isRecord(a) || !isRecord(b)) return equalNormalized(a, b) ? undefined : b
  const out: Json = {}
  for (const key of Object.keys(a)) {
    if (!Object.hasOwn(b, key)) out[key] = null
  }
  for (const key of Object.keys(b)) {
    const d = diff(a[key], b[key])
    if (d !== undefined) out[key] = d
  }
  return Object.keys(out).length === 0 ? undefined : out
}
