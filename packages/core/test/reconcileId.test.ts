// Reconcile IDs: UUID-shaped (RFC 9562 version 8), unique, a counter under one random per-process prefix.
import { assert, describe, it } from "@effect/vitest"
import * as reconcileId from "../src/internal/reconcileId.js"

const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const counterOf = (id: string) => parseInt(id.slice(24), 16)

describe("reconcileId", () => {
  it("is a version 8, variant 10 UUID", () => {
    for (let i = 0; i < 1000; i++) assert.match(reconcileId.next(), shape)
  })

  it("never repeats: one prefix, a counter that goes up by one, also across its 24-bit halves", () => {
    const first = reconcileId.next()
    const seen = new Set([first])
    let previous = first
    // Run the counter's low half past its wrap (at most 2²⁴ IDs), checking every step around it and a sample.
    const steps = 0x1000000 - (counterOf(first) % 0x1000000) + 1
    for (let i = 1; i <= steps; i++) {
      const id = reconcileId.next()
      if (i % 4099 === 0 || steps - i < 4) {
        assert.match(id, shape)
        assert.strictEqual(id.slice(0, 24), first.slice(0, 24))
        assert.isFalse(seen.has(id))
        seen.add(id)
      }
      previous = id
    }
    assert.strictEqual(counterOf(previous), counterOf(first) + steps)
    assert.strictEqual(counterOf(previous) % 0x1000000, 1)
  })
})
