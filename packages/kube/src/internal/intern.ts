/**
 * One copy of each short string many cached objects repeat (a namespace, a creation time, a label value): the
 * parser gives every object its own. One table for the process, shared by every cache. Bounded: past `internLimit`
 * distinct strings, new ones are kept as they are.
 */
const internTable = new Map<string, string>()
const internLimit = 65_536

/**
 * The shared copy of a short string (the string itself the first time it is seen); anything else as it is.
 *
 * @internal
 */
export const intern = (value: unknown): unknown => {
  if (typeof value !== "string" || value.length > 64) return value
  const shared = internTable.get(value)
  if (shared !== undefined) return shared
  if (internTable.size < internLimit) internTable.set(value, value)
  return value
}
