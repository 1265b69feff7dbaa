/**
 * The seeded schedule of a chaos run: which faults and which load operations happen, and when (in seconds after
 * the fault phase starts). The same seed and duration give the same plan; only the timing of the processes is
 * real. Pure: no I/O.
 */

/** A deterministic pseudo-random source (mulberry32). */
export class Rng {
  private state: number

  constructor(seed: number) {
    this.state = (seed ^ 0x9e3779b9) >>> 0
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** Uniform in [min, max]. */
  between(min: number, max: number): number {
    return min + (max - min) * this.next()
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return Math.floor(this.between(min, max + 1 - 1e-9))
  }

  /** One of `items`, by weight. */
  weighted<A extends string>(items: ReadonlyArray<readonly [A, number]>): A {
    const total = items.reduce((sum, [, w]) => sum + w, 0)
    let r = this.next() * total
    for (const [item, w] of items) {
      if ((r -= w) < 0) return item
    }
    return items[items.length - 1]![0]
  }
}

/** Which proxy listener a connection fault applies to. */
export type Listener = "passthrough" | "terminating" | "any"

/** One fault. `at` and durations are in seconds; `pick` chooses among what exists at that moment. */
export type Fault =
  | {
    readonly kind: "reset"
    readonly at: number
    readonly listener: Listener
    readonly all: boolean
    readonly pick: number
  }
  | {
    readonly kind: "stall"
    readonly at: number
    readonly duration: number
    readonly listener: Listener
    readonly all: boolean
    readonly pick: number
  }
  | { readonly kind: "blackhole"; readonly at: number; readonly listener: Listener; readonly pick: number }
  | { readonly kind: "fragment"; readonly at: number; readonly duration: number; readonly listener: Listener }
  | {
    readonly kind: "latency"
    readonly at: number
    readonly duration: number
    readonly listener: Listener
    readonly ms: number
  }
  | { readonly kind: "freeze"; readonly at: number; readonly duration: number }
  | {
    readonly kind: "restart"
    readonly at: number
    readonly signal: "SIGTERM" | "SIGKILL"
    readonly down: number
  }
  | { readonly kind: "leader-kill"; readonly at: number; readonly signal: "SIGTERM" | "SIGKILL" }
  /** The real control plane only: etcd killed (SIGKILL) and started again on its data after `down` seconds. */
  | { readonly kind: "etcd-restart"; readonly at: number; readonly down: number }
  /** The real control plane only: etcd's history compacted to its current revision. */
  | { readonly kind: "compact"; readonly at: number }
  /** Sharding only: every connection of one replica stalled for `duration` seconds (longer than its Lease). */
  | { readonly kind: "partition"; readonly at: number; readonly duration: number; readonly pick: number }
  /** Sharding only: one replica killed (started again 1 s later under a new identity, as every exited replica). */
  | {
    readonly kind: "replica-kill"
    readonly at: number
    readonly signal: "SIGTERM" | "SIGKILL"
    readonly pick: number
  }
  /** Sharding only: one more replica joins the ring (a new identity; at most 5 replicas). */
  | { readonly kind: "replica-add"; readonly at: number }
  | {
    readonly kind: "stale-takeover"
    readonly at: number
    /** How long every connection of the follower stays stalled. */
    readonly duration: number
    /** Seconds into the stall when the leader is killed. */
    readonly killAfter: number
    readonly signal: "SIGTERM" | "SIGKILL"
  }

/** Every fault kind, in report order. */
export const faultKinds = [
  "reset",
  "stall",
  "blackhole",
  "fragment",
  "latency",
  "freeze",
  "restart",
  "leader-kill",
  "stale-takeover",
  "etcd-restart",
  "compact",
  "partition",
  "replica-kill",
  "replica-add"
] as const

/** A fault kind. */
export type FaultKind = typeof faultKinds[number]

/** The fault kinds only a real control plane has (etcd is its own process there). */
export const realOnlyFaultKinds: ReadonlySet<FaultKind> = new Set(["etcd-restart", "compact"])

/** The fault kinds only a sharded run has (they act on one replica of the ring). */
export const shardingOnlyFaultKinds: ReadonlySet<FaultKind> = new Set(["partition", "replica-kill", "replica-add"])

/** Which server a plan is for: the real control plane adds etcd faults. */
export type Cluster = "embedded" | "real"

/** One load operation on WebApps; `pick` chooses the app among the candidates at that moment. */
export interface LoadOp {
  readonly at: number
  readonly op: "create" | "edit" | "delete" | "edit-delete" | "replace" | "recreate" | "poison-delete"
  readonly pick: number
  /** Chooses the new spec, the note, and the like. */
  readonly variant: number
}

/** What else shapes a plan. */
export interface PlanOptions {
  /** Whether the operators run as a sharded ring: the sharding faults join the schedule. */
  readonly sharding?: boolean | undefined
  /** WebApps created before the faults (default 12); the load keeps at most `apps + 28` live. */
  readonly apps?: number | undefined
}

/** A whole run's schedule. */
export interface Plan {
  readonly seed: number
  readonly duration: number
  /** WebApps created (and Ready) before the faults start. */
  readonly initialApps: number
  readonly faults: ReadonlyArray<Fault>
  readonly load: ReadonlyArray<LoadOp>
}

const round = (x: number) => Math.round(x * 10) / 10

/**
 * The plan of `seed` for a fault phase of `duration` seconds. An embedded plan is the same as before the real
 * cluster's faults existed (the seeds of earlier runs still give their plans).
 */
export const make = (
  seed: number,
  duration: number,
  cluster: Cluster = "embedded",
  options: PlanOptions = {}
): Plan => {
  const planned = planFaults(new Rng(seed), duration, cluster)
  // the sharding faults draw from a source of their own: the other faults stay those of the seed without sharding
  const faults = options.sharding === true
    ? [...planned, ...shardingFaults(new Rng(seed * 104_729 + 3), duration)].sort((a, b) => a.at - b.at)
    : planned
  const load = planLoad(new Rng(seed * 7919 + 17), duration)
  return { seed, duration, initialApps: options.apps ?? 12, faults, load }
}

/**
 * The sharding faults, in every block of 60 s (a last block shorter than 20 s has none): a partition of one replica
 * at 10–30 % of the block for 20–30 s (longer than the 15 s Lease, so its objects move; shorter when the phase
 * ends first), a replica killed at 40–55 % (SIGKILL 60 %: its objects move once its Lease expires; else SIGTERM:
 * it drains and releases), and a replica added at 60–75 %.
 */
const shardingFaults = (rng: Rng, duration: number): ReadonlyArray<Fault> => {
  const out: Array<Fault> = []
  for (let start = 0; duration - start >= 20; start += 60) {
    const length = Math.min(60, duration - start)
    const at = (from: number, to: number) => round(start + length * rng.between(from, to))
    const partitionAt = at(0.1, 0.3)
    out.push({
      kind: "partition",
      at: partitionAt,
      duration: round(Math.min(duration - partitionAt - 0.5, rng.between(20, 30))),
      pick: rng.next()
    })
    out.push({
      kind: "replica-kill",
      at: at(0.4, 0.55),
      signal: rng.next() < 0.6 ? "SIGKILL" : "SIGTERM",
      pick: rng.next()
    })
    out.push({ kind: "replica-add", at: at(0.6, 0.75) })
  }
  return out
}

const listenerOf = (rng: Rng): Listener => rng.weighted([["terminating", 2], ["passthrough", 1], ["any", 1]])

const planFaults = (rng: Rng, duration: number, cluster: Cluster): ReadonlyArray<Fault> => {
  const out: Array<Fault> = []
  // server faults (freeze, restart) never overlap; leader kills are spaced out
  let serverFreeAt = 0
  let leaderFreeAt = 0
  for (let t = rng.between(1, 4); t < duration - 1; t += rng.between(1.5, 6)) {
    const at = round(t)
    const left = duration - at
    const kind = rng.weighted<FaultKind>([
      ["reset", 3],
      ["stall", 3],
      ["fragment", 2],
      ["latency", 2],
      ["blackhole", 0.6],
      ["freeze", 1.2],
      ["restart", 1.2],
      ["leader-kill", 1],
      ["stale-takeover", 1],
      ...(cluster === "real" ? [["etcd-restart", 1.2], ["compact", 1]] as const : [])
    ])
    switch (kind) {
      case "reset":
        out.push({ kind, at, listener: listenerOf(rng), all: rng.next() < 0.3, pick: rng.next() })
        break
      case "stall":
        out.push({
          kind,
          at,
          duration: round(Math.min(left, rng.between(8, 40))),
          listener: listenerOf(rng),
          all: rng.next() < 0.4,
          pick: rng.next()
        })
        break
      case "blackhole":
        out.push({ kind, at, listener: listenerOf(rng), pick: rng.next() })
        break
      case "fragment":
        out.push({ kind, at, duration: round(Math.min(left, rng.between(3, 15))), listener: listenerOf(rng) })
        break
      case "latency":
        out.push({
          kind,
          at,
          duration: round(Math.min(left, rng.between(3, 15))),
          listener: listenerOf(rng),
          ms: rng.int(20, 800)
        })
        break
      case "freeze": {
        if (at < serverFreeAt) break
        const d = round(Math.min(left, rng.between(4, 35)))
        out.push({ kind, at, duration: d })
        serverFreeAt = at + d + 5
        break
      }
      case "restart": {
        if (at < serverFreeAt) break
        const down = round(rng.between(0, 3))
        out.push({ kind, at, signal: rng.next() < 0.5 ? "SIGTERM" : "SIGKILL", down })
        serverFreeAt = at + down + 8
        break
      }
      case "etcd-restart": {
        if (at < serverFreeAt) break
        const down = round(rng.between(0, 3))
        out.push({ kind, at, down })
        serverFreeAt = at + down + 8
        break
      }
      case "compact":
        out.push({ kind, at })
        break
      case "leader-kill":
        if (at < leaderFreeAt) break
        out.push({ kind, at, signal: rng.next() < 0.5 ? "SIGTERM" : "SIGKILL" })
        leaderFreeAt = at + 15
        break
      case "stale-takeover": {
        if (at < leaderFreeAt || left < 10) break
        const d = round(Math.min(left, rng.between(15, 40)))
        out.push({
          kind,
          at,
          duration: d,
          killAfter: round(rng.between(3, Math.min(10, d - 2))),
          signal: rng.next() < 0.7 ? "SIGTERM" : "SIGKILL"
        })
        leaderFreeAt = at + d
        break
      }
    }
  }
  return cluster === "real" ? withServerFaults(rng, out) : out
}

/** Seconds a server fault holds the server (no other server fault starts within them). */
const serverWindow = (fault: Fault): number | undefined =>
  fault.kind === "freeze"
    ? fault.duration + 5
    : fault.kind === "restart" || fault.kind === "etcd-restart"
    ? fault.down + 8
    : undefined

/**
 * A real plan has at least one kube-apiserver restart, one etcd crash and one compaction when the phase has room:
 * each missing one takes the place of the first connection fault (reset, stall, blackhole, latency, fragment) or
 * freeze that overlaps no other server fault.
 */
const replaceable: ReadonlySet<FaultKind> = new Set(["reset", "stall", "blackhole", "latency", "fragment", "freeze"])

const withServerFaults = (rng: Rng, planned: ReadonlyArray<Fault>): ReadonlyArray<Fault> => {
  const out = [...planned]
  for (const kind of ["restart", "etcd-restart", "compact"] as const) {
    if (out.some((f) => f.kind === kind)) continue
    const down = round(rng.between(0, 3))
    const signal = rng.next() < 0.5 ? "SIGTERM" : "SIGKILL"
    const replacement = (at: number): Fault =>
      kind === "restart" ? { kind, at, signal, down } : kind === "etcd-restart" ? { kind, at, down } : { kind, at }
    const index = out.findIndex((f) => {
      if (!replaceable.has(f.kind)) return false
      const mine = serverWindow(replacement(f.at)) ?? 0
      // a compaction needs etcd up, nothing more (a frozen kube-apiserver is fine)
      return out.every((g) => {
        if (g === f) return true
        const theirs = kind === "compact" && g.kind !== "etcd-restart" ? undefined : serverWindow(g)
        return theirs === undefined || f.at + mine <= g.at || g.at + theirs <= f.at
      })
    })
    if (index >= 0) out[index] = replacement(out[index]!.at)
  }
  return out
}

const planLoad = (rng: Rng, duration: number): ReadonlyArray<LoadOp> => {
  const out: Array<LoadOp> = []
  for (let t = rng.between(0, 1); t < duration - 0.5; t += rng.between(0.2, 1.4)) {
    const op = rng.weighted<LoadOp["op"]>([
      ["create", 26],
      ["edit", 34],
      ["delete", 14],
      ["edit-delete", 8],
      ["replace", 6],
      ["recreate", 6],
      ["poison-delete", 4]
    ])
    out.push({ at: round(t), op, pick: rng.next(), variant: rng.int(0, 1_000_000) })
  }
  return out
}

/** Counts of the planned faults by kind. */
export const countFaults = (plan: Plan): Record<FaultKind, number> => {
  const counts = Object.fromEntries(faultKinds.map((k) => [k, 0])) as Record<FaultKind, number>
  for (const f of plan.faults) counts[f.kind]++
  return counts
}

const listenerText = (listener: Listener) => listener === "any" ? "" : ` ${listener}`

/** One line per fault, for `--plan` and failure reports. */
export const describeFault = (fault: Fault): string => {
  const at = `t=${fault.at.toFixed(1)}s`.padEnd(8)
  switch (fault.kind) {
    case "reset":
      return `${at} reset ${fault.all ? "every" : "one"}${listenerText(fault.listener)} connection mid-response`
    case "stall":
      return `${at} stall ${fault.all ? "every" : "one"}${
        listenerText(fault.listener)
      } connection for ${fault.duration}s`
    case "blackhole":
      return `${at} blackhole one${listenerText(fault.listener)} connection (silent until the operator closes it)`
    case "fragment":
      return `${at} fragment${listenerText(fault.listener)} traffic into 1–7 byte pieces for ${fault.duration}s`
    case "latency":
      return `${at} ${fault.ms} ms latency on${listenerText(fault.listener)} traffic for ${fault.duration}s`
    case "freeze":
      return `${at} freeze the API server (SIGSTOP) for ${fault.duration}s`
    case "restart":
      return `${at} restart the API server (${fault.signal}, down ${fault.down}s)`
    case "leader-kill":
      return `${at} kill the leading operator (${fault.signal})`
    case "etcd-restart":
      return `${at} kill etcd (SIGKILL), start it again after ${fault.down}s`
    case "compact":
      return `${at} compact etcd's history`
    case "partition":
      return `${at} partition one replica from the API server for ${fault.duration}s`
    case "replica-kill":
      return `${at} kill one replica (${fault.signal}); it comes back under a new identity`
    case "replica-add":
      return `${at} add a replica (a new identity joins the ring)`
    case "stale-takeover":
      return `${at} stall the follower's watches for ${fault.duration}s, kill the leader (${fault.signal}) ` +
        `${fault.killAfter}s in`
  }
}
