/**
 * The schedule: one seed, one plan; every fault inside the fault phase; server faults never overlap.
 */
import { describe, expect, it } from "vitest"
import * as Plan from "../Plan.js"

describe("Plan", () => {
  it("gives the same plan for the same seed and duration, and another for another seed", () => {
    expect(Plan.make(7, 60)).toEqual(Plan.make(7, 60))
    expect(Plan.make(7, 60, "real")).toEqual(Plan.make(7, 60, "real"))
    expect(Plan.make(7, 60).faults).not.toEqual(Plan.make(8, 60).faults)
    expect(Plan.make(7, 60).load).not.toEqual(Plan.make(8, 60).load)
  })

  it("keeps every fault and load operation inside the fault phase", () => {
    for (let seed = 0; seed < 200; seed++) {
      const duration = 10 + (seed % 7) * 20
      const plan = Plan.make(seed, duration, seed % 2 === 0 ? "embedded" : "real")
      for (const fault of plan.faults) {
        expect(fault.at).toBeGreaterThanOrEqual(0)
        expect(fault.at).toBeLessThan(duration)
        if ("duration" in fault) expect(fault.at + fault.duration).toBeLessThanOrEqual(duration + 0.11)
      }
      for (const op of plan.load) expect(op.at).toBeLessThan(duration)
    }
  })

  it("never overlaps two server faults (freeze, restart, etcd restart) and spaces leader kills", () => {
    for (let seed = 0; seed < 400; seed++) {
      const plan = Plan.make(seed >> 1, 300, seed % 2 === 0 ? "embedded" : "real")
      let serverFree = 0
      let lastKill = -Infinity
      for (const fault of plan.faults) {
        if (fault.kind === "freeze" || fault.kind === "restart" || fault.kind === "etcd-restart") {
          expect(fault.at).toBeGreaterThanOrEqual(serverFree)
          serverFree = fault.at + (fault.kind === "freeze" ? fault.duration : fault.down)
        }
        if (fault.kind === "leader-kill") {
          expect(fault.at - lastKill).toBeGreaterThanOrEqual(15)
          lastKill = fault.at
        }
      }
    }
  })

  it("covers every fault kind and load operation over 20 seeds of 60 seconds; etcd faults on the real one only", () => {
    const kinds = new Set<string>()
    const realKinds = new Set<string>()
    const ops = new Set<string>()
    for (let seed = 1; seed <= 20; seed++) {
      const plan = Plan.make(seed, 60)
      for (const fault of plan.faults) kinds.add(fault.kind)
      for (const op of plan.load) ops.add(op.op)
      for (const fault of Plan.make(seed, 60, "real").faults) realKinds.add(fault.kind)
    }
    const notSharded = Plan.faultKinds.filter((k) => !Plan.shardingOnlyFaultKinds.has(k))
    expect([...kinds].sort()).toEqual(notSharded.filter((k) => !Plan.realOnlyFaultKinds.has(k)).sort())
    expect([...realKinds].sort()).toEqual([...notSharded].sort())
    expect([...ops].sort()).toEqual([
      "create",
      "delete",
      "edit",
      "edit-delete",
      "poison-delete",
      "recreate",
      "replace"
    ])
  })

  it("adds to a sharded plan a partition longer than the Lease, a replica kill and a replica added per minute", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const plain = Plan.make(seed, 120)
      const sharded = Plan.make(seed, 120, "embedded", { sharding: true, apps: 1000 })
      expect(sharded.initialApps).toBe(1000)
      // the other faults and the load are those of the seed without sharding
      expect(sharded.faults.filter((f) => !Plan.shardingOnlyFaultKinds.has(f.kind))).toEqual(plain.faults)
      expect(sharded.load).toEqual(plain.load)
      const extra = sharded.faults.filter((f) => Plan.shardingOnlyFaultKinds.has(f.kind))
      expect(extra.map((f) => f.kind)).toEqual([
        "partition",
        "replica-kill",
        "replica-add",
        "partition",
        "replica-kill",
        "replica-add"
      ])
      for (const f of extra) {
        expect(f.at).toBeLessThan(120)
        if (f.kind === "partition") expect(f.duration).toBeGreaterThan(15)
      }
      expect(sharded.faults.map((f) => f.at)).toEqual([...sharded.faults.map((f) => f.at)].sort((a, b) => a - b))
    }
  })

  it("gives a real plan of 60 s a kube-apiserver restart, an etcd crash and a compaction", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const kinds = new Set(Plan.make(seed, 60, "real").faults.map((f) => f.kind))
      expect(kinds.has("restart") && kinds.has("etcd-restart") && kinds.has("compact")).toBe(true)
    }
  })

  it("describes each fault on one line", () => {
    const lines = Plan.make(3, 120).faults.map(Plan.describeFault)
    for (const line of lines) expect(line).toMatch(/^t=\d+\.\ds\s+\S/)
  })
})

describe("Rng", () => {
  it("stays in [0, 1) and is uniform enough", () => {
    const rng = new Plan.Rng(42)
    const buckets = Array.from({ length: 10 }, () => 0)
    for (let i = 0; i < 10_000; i++) {
      const x = rng.next()
      expect(x).toBeGreaterThanOrEqual(0)
      expect(x).toBeLessThan(1)
      buckets[Math.floor(x * 10)]!++
    }
    for (const b of buckets) expect(b).toBeGreaterThan(850)
  })

  it("int stays in its closed range", () => {
    const rng = new Plan.Rng(1)
    const seen = new Set<number>()
    for (let i = 0; i < 1000; i++) seen.add(rng.int(1, 7))
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5, 6, 7])
  })
})
