/**
 * Reconcile IDs (the `reconcileID` log annotation and span attribute): unique per reconcile, shaped as UUIDs
 * (RFC 9562 version 8): 74 random bits drawn once per process, then a 48-bit counter. A reconcile pays a few table
 * lookups and concatenations instead of 16 random bytes formatted (`crypto.randomUUID`: 3–4 % of a no-op
 * reconcile). Unique across processes unless two draw the same 74 bits; ordered within a process, as
 * controller-runtime's time-based (version 1) UUIDs are.
 */

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))
const LIMIT = 0x1000000

/** `xxxxxxxx-xxxx-8xxx-yxxx-`: random digits, version 8, variant `10`. */
let random = ""
/** The counter's high 24 bits, and the random part followed by them (6 hex digits). */
let high = LIMIT - 1
let prefix = ""
/** The counter's low 24 bits: the next ID's. */
let low = LIMIT

const draw = (): string => {
  const r = Array.from(crypto.getRandomValues(new Uint8Array(10)), (b) => HEX[b]!).join("")
  const variant = (8 | (parseInt(r[15]!, 16) & 3)).toString(16)
  return `${r.slice(0, 8)}-${r.slice(8, 12)}-8${r.slice(12, 15)}-${variant}${r.slice(16, 19)}-`
}

/** A new reconcile ID. @internal */
export const next = (): string => {
  if (low === LIMIT) {
    // Every 2²⁴ IDs the high part moves on; after 2⁴⁸ (and on first use) a new random part is drawn.
    high = high + 1 === LIMIT ? 0 : high + 1
    if (high === 0) random = draw()
    prefix = random + HEX[high >>> 16]! + HEX[(high >>> 8) & 255]! + HEX[high & 255]!
    low = 0
  }
  const n = low++
  return prefix + HEX[n >>> 16]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!
}
