/**
 * The sharding promise read from the logs: no object is reconciled by two replicas at once. Pure: lines in, intervals
 * and overlaps out.
 *
 * Every reconcile logs a first line (`Reconcile started`) and a last one (`Reconcile successful`, `Reconcile done,
 * requeueing after`, `Reconciler error`, `Terminal reconciler error…`, `Reconcile timed out`, `Observed a panic in
 * reconciler`, `Reconcile interrupted`), each with `namespace`, `name` and `reconcileID` (docs/logging.md). Pairing
 * them by reconcileID gives one interval per reconcile. A reconcile without a last line ran until its process ended
 * (killed mid-reconcile): its interval ends at that process's end, which the harness knows — or, when the process
 * logged `leadership lost` (its shard's or the sharder's Lease) after the reconcile started, at that line: the
 * controller halts its workers right then, interrupting the reconcile (since 2026-12-05 it logs `Reconcile
 * interrupted`; before, nothing), and the process may take seconds more to exit (releasing its Leases through a
 * partition times out after 10 s).
 *
 * A sharded controller's gate runs inside that interval, so not every interval is work on the object:
 *
 * - **release**: the gate let the object go to the ring (`Released to the ring`): the drain handshake, no reconcile;
 * - **gated**: the gate ran nothing (the object is not this shard's); the chaos operator's own `reconcile` line
 *   (logged after every reconcile its controller ran, whatever the outcome) is missing although the interval closed;
 * - **work**: everything else — the controller's reconcile ran (its `reconcile` line is there), or the interval
 *   never closed or ended in a way that says nothing (interrupted, timed out), which counts as work to be safe.
 *
 * Two intervals of one object (namespace/name) from two processes overlap when each starts strictly before the
 * other ends. Log times are milliseconds of one machine clock (the processes share it), so an interval that ends in
 * the millisecond another starts is not an overlap: at that resolution the order within a millisecond is unknown,
 * and the handshake between two shards takes several requests (the release, the sharder's watch event, its
 * assignment, the new shard's watch event), far more than a millisecond. Only two work intervals are reported.
 */

/** One parsed logfmt line: its time (epoch ms) and its fields. */
export interface Line {
  readonly time: number
  readonly fields: Readonly<Record<string, string>>
}

/** One reconcile of one object by one process. */
export interface Interval {
  readonly process: string
  readonly replica: string
  /** `namespace/name`. */
  readonly object: string
  readonly reconcileID: string
  readonly start: number
  readonly end: number
  /** Its last line's message; undefined when the process ended first. */
  readonly last: string | undefined
  readonly kind: "work" | "release" | "gated"
}

/** Two work intervals of one object from two processes that overlap. */
export interface Overlap {
  readonly object: string
  readonly a: Interval
  readonly b: Interval
  /** Milliseconds both ran. */
  readonly ms: number
}

/** One process's log: its name, its replica identity, its lines and when it ended (epoch ms; undefined: running). */
export interface ProcessLog {
  readonly process: string
  readonly identity: string
  readonly text: string
  readonly endedAt: number | undefined
}

const lastMessages = [
  "Reconcile successful",
  "Reconcile done, requeueing after",
  "Reconciler error",
  "Terminal reconciler error",
  "Reconcile timed out",
  "Observed a panic in reconciler",
  "Reconcile interrupted"
]

/** Whether `msg` is the last line of a reconcile. */
export const isLast = (msg: string): boolean => lastMessages.some((m) => msg.startsWith(m))

/** The chaos operator's own line after every reconcile its controller ran (chaos/operator.ts). */
const outcomeMessage = "reconcile"

/** Parses one logfmt line (`key=value`, values quoted with `\"` and `\\` escapes); undefined if it has no time. */
export const parseLine = (text: string): Line | undefined => {
  const fields: Record<string, string> = {}
  let i = 0
  const n = text.length
  while (i < n) {
    while (i < n && text[i] === " ") i++
    const eq = text.indexOf("=", i)
    if (eq < 0) break
    const key = text.slice(i, eq)
    if (key.includes(" ")) return undefined
    i = eq + 1
    let value = ""
    if (text[i] === "\"") {
      i++
      while (i < n && text[i] !== "\"") {
        if (text[i] === "\\" && i + 1 < n) {
          const next = text[i + 1]!
          value += next === "n" ? "\n" : next === "t" ? "\t" : next
          i += 2
        } else {
          value += text[i]
          i++
        }
      }
      i++
    } else {
      const space = text.indexOf(" ", i)
      const end = space < 0 ? n : space
      value = text.slice(i, end)
      i = end
    }
    fields[key] = value
  }
  const time = Date.parse(fields["time"] ?? "")
  return Number.isFinite(time) ? { time, fields } : undefined
}

/** The intervals of one process's log. */
export const intervals = (log: ProcessLog): ReadonlyArray<Interval> => {
  interface Open {
    readonly object: string
    readonly replica: string
    readonly start: number
    last: number
    lastMessage: string | undefined
    closed: boolean
    released: boolean
    outcome: boolean
  }
  const byId = new Map<string, Open>()
  /** When the process logged a lost Lease (its controllers halted then). */
  const losses: Array<number> = []
  for (const raw of log.text.split("\n")) {
    if (raw.includes("msg=\"leadership lost\"")) {
      const line = parseLine(raw)
      if (line !== undefined) losses.push(line.time)
      continue
    }
    if (!raw.includes("reconcileID=")) continue
    const line = parseLine(raw)
    const id = line?.fields["reconcileID"]
    if (line === undefined || id === undefined) continue
    const msg = line.fields["msg"] ?? ""
    let open = byId.get(id)
    if (msg === "Reconcile started") {
      if (open !== undefined) continue
      open = {
        object: `${line.fields["namespace"] ?? ""}/${line.fields["name"] ?? ""}`,
        replica: line.fields["replica"] ?? log.identity,
        start: line.time,
        last: line.time,
        lastMessage: undefined,
        closed: false,
        released: false,
        outcome: false
      }
      byId.set(id, open)
      continue
    }
    // a line of a reconcile whose first line is missing (a torn log) is no interval
    if (open === undefined || open.closed) continue
    open.last = Math.max(open.last, line.time)
    if (msg === "Released to the ring") open.released = true
    if (msg === outcomeMessage) open.outcome = true
    if (isLast(msg)) {
      open.closed = true
      open.lastMessage = msg
    }
  }
  const out: Array<Interval> = []
  for (const [reconcileID, o] of byId) {
    // an open interval ends when its process did (a running process's is still running), or at a lost Lease
    const lost = losses.find((t) => t >= o.start)
    const end = o.closed
      ? o.last
      : Math.max(o.last, Math.min(log.endedAt ?? Number.POSITIVE_INFINITY, lost ?? Number.POSITIVE_INFINITY))
    const saysNothing = o.lastMessage === undefined || o.lastMessage === "Reconcile interrupted" ||
      o.lastMessage === "Reconcile timed out"
    out.push({
      process: log.process,
      replica: o.replica,
      object: o.object,
      reconcileID,
      start: o.start,
      end,
      last: o.lastMessage,
      kind: o.released ? "release" : o.outcome || saysNothing ? "work" : "gated"
    })
  }
  return out
}

/** Every pair of work intervals of one object, from two processes, that overlap (equal-ms boundaries do not). */
export const overlaps = (all: ReadonlyArray<Interval>): ReadonlyArray<Overlap> => {
  const byObject = new Map<string, Array<Interval>>()
  for (const i of all) {
    if (i.kind !== "work") continue
    const list = byObject.get(i.object) ?? []
    list.push(i)
    byObject.set(i.object, list)
  }
  const out: Array<Overlap> = []
  for (const [object, list] of byObject) {
    list.sort((a, b) => a.start - b.start)
    for (let x = 0; x < list.length; x++) {
      const a = list[x]!
      for (let y = x + 1; y < list.length && list[y]!.start < a.end; y++) {
        const b = list[y]!
        if (b.process === a.process || !(a.start < b.end)) continue
        out.push({ object, a, b, ms: Math.min(a.end, b.end) - b.start })
      }
    }
  }
  return out
}

/**
 * The reconciles of `process` still running after `at` (epoch ms): those that ended later, or started later. A
 * replica cut off from the server must have stopped every reconcile within its renew deadline of its last renewal.
 */
export const runningAfter = (all: ReadonlyArray<Interval>, process: string, at: number): ReadonlyArray<Interval> =>
  all.filter((i) => i.process === process && i.kind !== "gated" && i.end > at)

/** The intervals and overlaps of every process's log. */
export const check = (
  logs: ReadonlyArray<ProcessLog>
): { readonly intervals: ReadonlyArray<Interval>; readonly overlaps: ReadonlyArray<Overlap> } => {
  const all = logs.flatMap(intervals)
  return { intervals: all, overlaps: overlaps(all) }
}

const describeInterval = (i: Interval) =>
  `${i.process} (${i.replica}) ${new Date(i.start).toISOString()}–${
    Number.isFinite(i.end) ? new Date(i.end).toISOString() : "running"
  } ${i.last ?? "(no last line: its process ended)"} reconcileID=${i.reconcileID}`

/** One line for an interval. */
export const describeOne: (i: Interval) => string = describeInterval

/** One line for an overlap. */
export const describe = (o: Overlap): string =>
  `${Number.isFinite(o.ms) ? `${o.ms} ms` : "open-ended"}: ${describeInterval(o.a)} and ${describeInterval(o.b)}`
