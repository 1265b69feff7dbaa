/**
 * The assignment rules of sharded controllers (`internal/shardRules.ts`), checked against a model of replicas and a
 * sharder under random scripts: joins, graceful leaves, kills and partitions (a partitioned replica reconciles from
 * a stale cache until it stops itself, before its Lease can expire), creates and deletes, the sharder's steps, the
 * shards' reconciles and acknowledgements, in any interleaving. At every step no object is reconciled by two
 * replicas; once membership settles, every object ends on the shard the ring places it on; the ring is balanced.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import * as Sharding from "../src/internal/shardRules.js"

type Labels = Record<string, string>

interface ObjectState {
  labels: Labels
  readonly owner: string | undefined
}

/** A replica: live (renewing its Lease), partitioned (still reconciling from the cache it had), or stopped. */
interface Replica {
  state: "live" | "partitioned" | "stopped"
  /** Whether its Lease still counts (the sharder's view): until it expires after the replica stopped renewing. */
  leaseValid: boolean
  /** A partitioned replica's cache: the labels it saw last. */
  seen: Map<string, Labels> | undefined
}

const ringName = "web"
const names = ["r0", "r1", "r2", "r3", "r4"]

const metaOf = (uid: string, o: ObjectState): Sharding.Meta => ({
  uid,
  labels: o.labels,
  ...(o.owner !== undefined ? { ownerReferences: [{ uid: o.owner, controller: true }] } : {})
})

/** One step of a script: its kind (0–11, below) and an argument that picks the replica and the object. */
type Step = readonly [kind: number, arg: number]

/**
 * A drawn number as a step: mixed with its index (an integer hash), so that the small numbers an arbitrary favours
 * still give every kind of step and every replica.
 */
const stepOf = (n: number, i: number): Step => {
  let h = (Math.imul(n, 2654435761) + Math.imul(i + 1, 40503)) >>> 0
  h = Math.imul(h ^ (h >>> 15), 2246822519) >>> 0
  h = (h ^ (h >>> 13)) >>> 0
  return [h % 12, Math.floor(h / 12) % 100_000]
}

/** Runs a script and checks that no object is ever reconciled by two replicas. */
const run = (script: ReadonlyArray<Step>) => {
  const replicas = new Map<string, Replica>([["r0", { state: "live", leaseValid: true, seen: undefined }]])
  const objects = new Map<string, ObjectState>()
  const inFlight = new Map<string, Set<string>>()
  let created = 0
  const live = () => Sharding.ring([...replicas].filter(([, r]) => r.leaseValid).map(([n]) => n))
  const uids = () => [...objects.keys()]
  const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined =>
    items.length === 0 ? undefined : items[n % items.length]
  /** What a replica believes an object's labels are. */
  const view = (r: Replica, uid: string) => r.state === "partitioned" ? r.seen?.get(uid) : objects.get(uid)?.labels
  const sharderStep = (uid: string) => {
    const o = objects.get(uid)!
    const decision = Sharding.decide(ringName, live(), metaOf(uid, o))
    if (decision._tag === "Assign") {
      const { [Sharding.drainLabel(ringName)]: _drain, ...rest } = o.labels
      o.labels = { ...rest, [Sharding.shardLabel(ringName)]: decision.shard }
    } else if (decision._tag === "Drain") {
      o.labels = { ...o.labels, [Sharding.drainLabel(ringName)]: "true" }
    }
  }
  for (const [kind, arg] of script) {
    const name = names[arg % names.length]!
    const replica = replicas.get(name)
    switch (kind) {
      case 0: // a replica joins (a new process under a free name)
        if (replica === undefined || (replica.state === "stopped" && !replica.leaseValid)) {
          replicas.set(name, { state: "live", leaseValid: true, seen: undefined })
        }
        break
      case 1: // graceful leave: it finishes its reconciles, releases its Lease
        if (replica?.state === "live" && ![...inFlight.values()].some((s) => s.has(name))) {
          replica.state = "stopped"
          replica.leaseValid = false
        }
        break
      case 2: // killed: its reconciles die with it; its Lease expires later
        if (replica !== undefined && replica.state !== "stopped") {
          replica.state = "stopped"
          for (const s of inFlight.values()) s.delete(name)
        }
        break
      case 3: // partitioned from the API server: it goes on from its cache
        if (replica?.state === "live") {
          replica.state = "partitioned"
          replica.seen = new Map([...objects].map(([uid, o]) => [uid, { ...o.labels }]))
        }
        break
      case 4: // a partitioned replica has not renewed for renewDeadline: it stops itself (and its reconciles)
        if (replica?.state === "partitioned") {
          replica.state = "stopped"
          for (const s of inFlight.values()) s.delete(name)
        }
        break
      case 5: // a stopped replica's Lease expires (leaseDuration > renewDeadline: never before it stopped)
        if (replica?.state === "stopped") replica.leaseValid = false
        break
      case 6: { // an object is created, controlled by an existing one half the time
        const owner = arg % 2 === 0 ? pick(uids(), arg) : undefined
        objects.set(`u${created++}`, { labels: {}, owner })
        break
      }
      case 7: { // deleted (its reconciles end)
        const uid = pick(uids(), arg)
        if (uid !== undefined && (inFlight.get(uid)?.size ?? 0) === 0) objects.delete(uid)
        break
      }
      case 8: { // the sharder's step for one object
        const uid = pick(uids(), arg)
        if (uid !== undefined) sharderStep(uid)
        break
      }
      case 9: { // a replica starts reconciling an object it owns (as far as it knows)
        const uid = pick(uids(), arg)
        const r = replicas.get(pick(names, arg >> 3)!)
        const who = pick(names, arg >> 3)!
        if (uid === undefined || r === undefined || r.state === "stopped") break
        const labels = view(r, uid)
        if (labels !== undefined && Sharding.owns(ringName, who, { uid, labels })) {
          const set = inFlight.get(uid) ?? new Set()
          set.add(who)
          inFlight.set(uid, set)
        }
        break
      }
      case 10: { // a reconcile ends
        const uid = pick([...inFlight.keys()], arg)
        if (uid !== undefined) {
          const first = [...inFlight.get(uid)!][0]
          if (first !== undefined) inFlight.get(uid)!.delete(first)
        }
        break
      }
      case 11: { // a live replica lets a drained object go, once none of its reconciles of it is in flight
        const uid = pick(uids(), arg)
        const who = pick(names, arg >> 3)!
        const r = replicas.get(who)
        if (uid === undefined || r?.state !== "live" || inFlight.get(uid)?.has(who) === true) break
        const o = objects.get(uid)!
        const remove = Sharding.acknowledge(ringName, who, metaOf(uid, o))
        if (remove !== undefined) {
          o.labels = Object.fromEntries(Object.entries(o.labels).filter(([k]) => !remove.includes(k)))
        }
        break
      }
    }
    for (const [uid, s] of inFlight) {
      assert.isAtMost(s.size, 1, `object ${uid} reconciled by ${[...s].join(" and ")} at once`)
    }
  }
  return { replicas, objects, inFlight, live, sharderStep }
}

// long scripts: a move needs a join or a loss, a sharder step, reconciles on both sides and an acknowledgement
const Script = Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))).check(
  Schema.isMinLength(200),
  Schema.isMaxLength(600)
)

describe("sharding: assignment rules", () => {
  it.prop("no object is reconciled by two replicas at once, whatever happens to the replicas", [
    Arbitrary.schema(Script)
  ], ([script]) => {
    run(script.map(stepOf))
  }, { arbitrary: { runs: 300 } })

  it.prop(
    "once membership settles, every object ends on the shard the ring places it on (drains acknowledged)",
    [Arbitrary.schema(Script)],
    ([script]) => {
      const { inFlight, live, objects, replicas, sharderStep } = run(script.map(stepOf))
      // settle: partitions heal as stops, every stopped replica's Lease expires, reconciles end; one replica stays
      for (const r of replicas.values()) {
        if (r.state === "partitioned") r.state = "stopped"
        if (r.state === "stopped") r.leaseValid = false
      }
      if (![...replicas.values()].some((r) => r.state === "live")) {
        replicas.set("r0", { state: "live", leaseValid: true, seen: undefined })
      }
      inFlight.clear()
      for (let round = 0; round < 3; round++) {
        for (const uid of objects.keys()) sharderStep(uid)
        for (const [uid, o] of objects) {
          for (const [name, r] of replicas) {
            const remove = r.state === "live" ? Sharding.acknowledge(ringName, name, metaOf(uid, o)) : undefined
            if (remove !== undefined) {
              o.labels = Object.fromEntries(Object.entries(o.labels).filter(([k]) => !remove.includes(k)))
            }
          }
        }
      }
      const ring = live()
      for (const [uid, o] of objects) {
        const target = ring.place(Sharding.keyOf(metaOf(uid, o)))!
        assert.isTrue(
          Sharding.owns(ringName, target, metaOf(uid, o)),
          `${uid}: ${JSON.stringify(o.labels)} ≠ ${target}`
        )
      }
    },
    { arbitrary: { runs: 200 } }
  )

  it("a move waits for the old shard: it drains, finishes its reconcile, lets go; then the new shard gets it", () => {
    // names[arg % 5] is the replica (for reconciles and acknowledgements names[(arg >> 3) % 5]); objects by arg too
    const step = (kind: number, arg: number): Step => [kind, arg]
    // u0 created, assigned to r0 (the only replica), r0 reconciles it; r1 joins and the sharder runs for u0
    const prefix = [step(6, 1), step(8, 0), step(9, 0), step(0, 1), step(8, 0)]
    const { objects, replicas } = run(prefix)
    assert.strictEqual(replicas.get("r1")?.state, "live")
    const live = Sharding.ring(["r0", "r1"])
    const target = live.place("u0")
    const labels = objects.get("u0")!.labels
    if (target === "r0") {
      assert.deepStrictEqual(labels, { [Sharding.shardLabel(ringName)]: "r0" })
      return
    }
    // r1 is where it goes: it is drained, not moved, while r0's reconcile runs
    assert.deepStrictEqual(labels, { [Sharding.shardLabel(ringName)]: "r0", [Sharding.drainLabel(ringName)]: "true" })
    // r1 tries to reconcile it (nothing: not its), r0 cannot let go while reconciling, then does once it ends
    const after = run([...prefix, step(9, 8), step(11, 0), step(8, 0)])
    assert.strictEqual(after.objects.get("u0")!.labels[Sharding.shardLabel(ringName)], "r0")
    const moved = run([...prefix, step(10, 0), step(11, 0), step(8, 0), step(9, 8)])
    assert.deepStrictEqual(moved.objects.get("u0")!.labels, { [Sharding.shardLabel(ringName)]: "r1" })
    assert.deepStrictEqual([...moved.inFlight.get("u0")!], ["r1"])
  })

  it("a partitioned shard's objects move only after it stopped itself and its Lease expired", () => {
    // u0 goes to r1 in a ring of r0 and r1 (the test above); r0 holds it, is partitioned and reconciles it from its
    // cache; r1 joins; the Lease of r0 cannot expire yet (it has not stopped), so u0 is only drained
    const { inFlight, objects } = run([
      [6, 1],
      [8, 0],
      [3, 0],
      [9, 0],
      [0, 1],
      [5, 0],
      [8, 0],
      [9, 8],
      // r0 stops itself (renewDeadline), then its Lease expires: u0 is r1's at once
      [4, 0],
      [5, 0],
      [8, 0],
      [9, 8]
    ])
    assert.deepStrictEqual(objects.get("u0")!.labels, { [Sharding.shardLabel(ringName)]: "r1" })
    assert.deepStrictEqual([...inFlight.get("u0")!], ["r1"])
  })

  it("a shard only listed, not yet seen renewed (maybe dead), neither gives nor takes objects", () => {
    const ring = Sharding.ring(["r0"], ["r1"])
    const label = Sharding.shardLabel("apps")
    // some uid the ring places on r1, another on r0
    const uids = Array.from({ length: 64 }, (_, i) => `u${i}`)
    const onPending = uids.find((uid) => ring.place(uid) === "r1")!
    const onLive = uids.find((uid) => ring.place(uid) === "r0")!
    // unassigned, placed on the pending shard: waits
    assert.deepStrictEqual(Sharding.decide("apps", ring, { uid: onPending }), { _tag: "Keep" })
    // on the live shard, placed on the pending one: not drained towards it
    assert.deepStrictEqual(Sharding.decide("apps", ring, { uid: onPending, labels: { [label]: "r0" } }), {
      _tag: "Keep"
    })
    // on the pending shard: left there (not reassigned as if it were gone)
    assert.deepStrictEqual(Sharding.decide("apps", ring, { uid: onLive, labels: { [label]: "r1" } }), { _tag: "Keep" })
    // placed on the live shard: assigned
    assert.deepStrictEqual(Sharding.decide("apps", ring, { uid: onLive }), { _tag: "Assign", shard: "r0" })
    // once it is gone (its Lease expired), its objects are reassigned at once
    assert.deepStrictEqual(
      Sharding.decide("apps", Sharding.ring(["r0"]), { uid: onLive, labels: { [label]: "r1" } }),
      { _tag: "Assign", shard: "r0" }
    )
  })

  it("an owner and the objects it controls are placed on one shard", () => {
    const ring = Sharding.ring(["a", "b", "c"])
    for (let i = 0; i < 200; i++) {
      const owner = `owner-${i}`
      const child = Sharding.keyOf({ uid: `child-${i}`, ownerReferences: [{ uid: owner, controller: true }] })
      assert.strictEqual(ring.place(child), ring.place(Sharding.keyOf({ uid: owner })))
    }
    // a reference that is not the controller does not move it
    assert.strictEqual(Sharding.keyOf({ uid: "x", ownerReferences: [{ uid: "o" }] }), "x")
  })

  it.prop(
    "balanced: with 3 to 5 shards and 300 objects or more, no shard holds more than 1.5× the mean",
    [
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 3, maximum: 5 }))),
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 300, maximum: 3000 })))
    ],
    ([shards, count]) => {
      const ring = Sharding.ring(names.slice(0, shards))
      const per = new Map<string, number>()
      for (let i = 0; i < count; i++) {
        const shard = ring.place(crypto.randomUUID())!
        per.set(shard, (per.get(shard) ?? 0) + 1)
      }
      const max = Math.max(...per.values())
      assert.isAtMost(max, 1.5 * count / shards, JSON.stringify([...per]))
    },
    { arbitrary: { runs: 100 } }
  )

  it("a ring change moves only the objects of the shard that left, or a share for the one that joined", () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `k${i}`)
    const three = Sharding.ring(["a", "b", "c"])
    const two = Sharding.ring(["a", "b"])
    for (const k of keys) if (three.place(k) !== "c") assert.strictEqual(two.place(k), three.place(k))
    const four = Sharding.ring(["a", "b", "c", "d"])
    const moved = keys.filter((k) => four.place(k) !== three.place(k))
    assert.isTrue(moved.every((k) => four.place(k) === "d"))
    // about a quarter (the new shard's share of four)
    assert.isAtMost(moved.length, 0.35 * keys.length)
    assert.isAtLeast(moved.length, 0.15 * keys.length)
  })
})
