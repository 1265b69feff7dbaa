/** Small JSON helpers shared by the internals. */

export type Obj = Record<string, any>

export const isObject = (value: unknown): value is Obj =>
  value !== null && typeof value === "object" && !Array.isArray(value)

export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a as Obj).filter((k) => (a as Obj)[k] !== undefined)
  const kb = Object.keys(b as Obj).filter((k) => (b as Obj)[k] !== undefined)
  if (ka.length !== kb.length) return false
  for (const k of ka) if (!deepEqual((a as Obj)[k], (b as Obj)[k])) return false
  return true
}

export const clone = <A>(value: A): A => (value === undefined ? value : JSON.parse(JSON.stringify(value)))

/** JSON with object keys sorted, for stable keys. */
export const stableStringify = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`
  if (isObject(value)) {
    return `{${
      Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${stableStringify(value[k])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value)
}

/** RFC 3339 timestamp with second precision, as Kubernetes writes `metav1.Time`. */
export const formatTime = (millis: number): string =>
  new Date(Math.floor(millis / 1000) * 1000).toISOString().replace(".000Z", "Z")
