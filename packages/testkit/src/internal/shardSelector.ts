/**
 * `shardSelector` on list and watch (Kubernetes 1.36, feature gate `ShardedListAndWatch`, alpha): an object is
 * selected when the 64-bit FNV-1a hash of its `metadata.uid` (or `metadata.namespace`), as 16 hex digits, falls in
 * one of the ranges — `shardRange(object.metadata.uid, '0x<16 hex>', '0x<16 hex>')`, joined by `||`, each from its
 * start (included) to its end (excluded; `0x10000000000000000` is the top). Parsed as kube-apiserver parses it
 * (k8s.io/apiserver/pkg/sharding): the same accepted forms and the same error messages, under "invalid shard
 * selector: ", answered as kube-apiserver 1.36 answers them — 500 without a reason (checked against it by
 * packages/kube/test/ShardSelectorHttp.test.ts). A server without the gate ignores the parameter, as kube-apiserver
 * does.
 */
import * as ApiError from "../ApiError.js"

/** One range of a selector. */
export interface ShardRange {
  readonly key: "object.metadata.uid" | "object.metadata.namespace"
  readonly start: string
  readonly end: string
}

/** A refused selector as kube-apiserver 1.36 answers it: a plain error (status 500, no reason), not a 400. */
const invalid = (message: string) => ApiError.make(500, "" as never, `invalid shard selector: ${message}`)

const offset = 0xcbf29ce484222325n
const prime = 0x100000001b3n
const mask = 0xffffffffffffffffn
const encoder = new TextEncoder()

/** The 64-bit FNV-1a hash of a string's UTF-8 bytes, as 16 lowercase hex digits (apimachinery's `HashField`). */
export const hash = (value: string): string => {
  let h = offset
  for (const byte of encoder.encode(value)) h = ((h ^ BigInt(byte)) * prime) & mask
  return h.toString(16).padStart(16, "0")
}

/** apimachinery's `HexLess`: a shorter hex string is smaller; equal lengths compare as text. */
const hexLess = (a: string, b: string): boolean => a.length !== b.length ? a.length < b.length : a < b

const hexLiteral = (text: string, name: string): string => {
  if (!text.startsWith("0x")) throw invalid(`${name} must have '0x' prefix, got ${JSON.stringify(text)}`)
  const digits = text.slice(2)
  if (digits === "") throw invalid(`${name}: hex value is required after '0x'`)
  if (digits.length > 17) {
    throw invalid(`${name}: hex value too long (${digits.length} chars, max 17): ${JSON.stringify(digits)}`)
  }
  for (const c of digits) {
    if (!/[0-9a-f]/.test(c)) {
      throw invalid(`${name}: invalid hex character ${JSON.stringify(c)} in ${JSON.stringify(text)}`)
    }
  }
  if (digits.length === 17 && text !== "0x10000000000000000") {
    throw invalid(`${name}: a 17-digit value must be 0x10000000000000000, got ${JSON.stringify(text)}`)
  }
  if (digits.length < 16) {
    throw invalid(
      `${name} must be a 0x-prefixed 16-digit hex value, got ${JSON.stringify(text)} (did you mean ${
        JSON.stringify(`0x${digits.padStart(16, "0")}`)
      }?)`
    )
  }
  return text
}

const call = /^\s*shardRange\s*\(\s*([A-Za-z_][\w.]*)\s*,\s*'([^']*)'\s*,\s*'([^']*)'\s*\)\s*$/

/** Parses a selector; throws kube-apiserver's 400 for one it refuses. */
export const parse = (selector: string): ReadonlyArray<ShardRange> => {
  const text = selector.trim()
  if (text === "") throw invalid("empty shard selector is not allowed; omit the parameter for unfiltered lists")
  const ranges = text.split("||").map((part): ShardRange => {
    const match = call.exec(part)
    if (match === null) {
      throw invalid(`unexpected expression ${JSON.stringify(part.trim())}; expected shardRange() call or || operator`)
    }
    const [, field, start, end] = match as unknown as [string, string, string, string]
    if (field !== "object.metadata.uid" && field !== "object.metadata.namespace") {
      throw invalid(
        `shardRange() first argument: unsupported field path ${
          JSON.stringify(field)
        }; supported: object.metadata.uid, object.metadata.namespace`
      )
    }
    const from = hexLiteral(start, "hexStart")
    const to = hexLiteral(end, "hexEnd")
    if (!hexLess(from, to)) throw invalid(`shard range start ${from} must be less than end ${to}`)
    return { key: field, start: from, end: to }
  })
  if (ranges.some((r) => r.key !== ranges[0]!.key)) {
    throw invalid(
      `all shard ranges must use the same field, got "${ranges[0]!.key}" and "${
        ranges.find((r) => r.key !== ranges[0]!.key)!.key
      }"`
    )
  }
  return ranges
}

/** The selector as kube-apiserver writes it back in `metadata.shardInfo.selector`. */
export const format = (ranges: ReadonlyArray<ShardRange>): string =>
  ranges.map((r) => `shardRange(${r.key}, '${r.start}', '${r.end}')`).join(" || ")

/** Whether an object falls in one of the ranges. */
export const matches = (
  ranges: ReadonlyArray<ShardRange>,
  metadata: { readonly uid?: unknown; readonly namespace?: unknown }
): boolean => {
  if (ranges.length === 0) return true
  const field = ranges[0]!.key === "object.metadata.uid" ? metadata.uid : metadata.namespace
  const value = `0x${hash(typeof field === "string" ? field : "")}`
  return ranges.some((r) => !hexLess(value, r.start) && hexLess(value, r.end))
}
