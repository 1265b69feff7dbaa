/**
 * The webhook benchmark's load generator: a child process (its own event loop, heap and core) driving one server at
 * a time over HTTPS keep-alive connections (an undici `Pool` that trusts the benchmark's CA), asked over IPC:
 *
 * - `open`: open loop, `rate` requests per second for `seconds` (paced by 1 ms timers, sent whether or not earlier
 *   ones were answered); the latency of each, from the moment it is handed to the pool to the end of its response
 *   body; and how late the pacing sent it (the client's own lag).
 * - `closed`: `connections` workers, each sending its next review as soon as the last is answered, for `warmup`
 *   seconds (not counted) and then `seconds`: the reviews answered in that window.
 *
 * Every answer must be a 200 carrying its review's uid, or it is counted as an error. Requests are bounded in count
 * (open) and time (closed), and every phase waits at most `timeoutMs` for its last answers.
 */
import { performance } from "node:perf_hooks"
import { Pool } from "undici"
import { type Review, reviews } from "./webhookReviews.js"

export type Command =
  | {
    readonly op: "open"
    readonly id: number
    readonly origin: string
    readonly ca: string
    readonly rate: number
    readonly seconds: number
    readonly connections: number
  }
  | {
    readonly op: "closed"
    readonly id: number
    readonly origin: string
    readonly ca: string
    readonly connections: number
    readonly warmup: number
    readonly seconds: number
  }

export interface OpenResult {
  readonly sent: number
  readonly answered: number
  readonly errors: number
  readonly firstError?: string | undefined
  /** Latencies, ms: p50, p90, p99, p99.9, max. */
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly p999: number
  readonly max: number
  /** How late the pacing handed requests to the pool (ms): p99 and max. */
  readonly lagP99: number
  readonly lagMax: number
  readonly seconds: number
  readonly clientCpuSeconds: number
}

export interface ClosedResult {
  readonly answered: number
  readonly errors: number
  readonly firstError?: string | undefined
  readonly seconds: number
  readonly perSec: number
  /** Latencies under full load, ms. */
  readonly p50: number
  readonly p99: number
  readonly clientCpuSeconds: number
}

export type Reply =
  | { readonly op: "result"; readonly id: number; readonly result: OpenResult | ClosedResult }
  | { readonly op: "failed"; readonly id: number; readonly message: string }

const timeoutMs = 30_000
const all: ReadonlyArray<Review & { readonly bytes: Buffer }> = reviews(512).map((r) => ({
  ...r,
  bytes: Buffer.from(r.body)
}))
const headers = { "content-type": "application/json" }

const poolOf = (origin: string, ca: string, connections: number) =>
  new Pool(origin, {
    connections,
    pipelining: 1,
    connect: { ca, rejectUnauthorized: true },
    keepAliveTimeout: 30_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs
  })

/** Sends the `n`-th review; resolves with its latency in ms, or a string saying what was wrong with its answer. */
const send = async (pool: Pool, n: number): Promise<number | string> => {
  const review = all[n % all.length]!
  const t0 = performance.now()
  try {
    const res = await pool.request({ path: review.path, method: "POST", headers, body: review.bytes })
    const text = await res.body.text()
    const ms = performance.now() - t0
    if (res.statusCode !== 200) return `HTTP ${res.statusCode}: ${text.slice(0, 200)}`
    if (!text.includes(review.uid)) return `the answer does not carry the review's uid: ${text.slice(0, 200)}`
    return ms
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

const pick = (sorted: ArrayLike<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const round3 = (x: number) => Math.round(x * 1000) / 1000
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return round3((used.user + used.system) / 1e6)
}

const open = async (command: Extract<Command, { op: "open" }>): Promise<OpenResult> => {
  const pool = poolOf(command.origin, command.ca, command.connections)
  const total = Math.round(command.rate * command.seconds)
  const latencies = new Float64Array(total).fill(NaN)
  const lags = new Float64Array(total)
  let answered = 0
  let errors = 0
  let firstError: string | undefined
  let sent = 0
  const cpu = process.cpuUsage()
  const begin = performance.now()
  let allAnswered!: () => void
  const finished = new Promise<void>((resolve) => (allAnswered = resolve))
  const sendOne = (n: number) =>
    void send(pool, n).then((outcome) => {
      if (typeof outcome === "number") latencies[n] = outcome
      else {
        errors++
        firstError ??= outcome
      }
      if (++answered === total) allAnswered()
    })
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now()
      const due = Math.min(total, Math.floor(((now - begin) / 1000) * command.rate) + 1)
      while (sent < due) {
        lags[sent] = now - (begin + (sent * 1000) / command.rate)
        sendOne(sent++)
      }
      if (sent < total) setTimeout(tick, 1)
      else resolve()
    }
    tick()
  })
  const timer = setTimeout(allAnswered, timeoutMs)
  await finished
  clearTimeout(timer)
  const seconds = (performance.now() - begin) / 1000
  await pool.close()
  if (answered < total) {
    errors += total - answered
    firstError ??= `${total - answered} reviews not answered within ${timeoutMs} ms`
  }
  const sorted = latencies.filter((x) => !Number.isNaN(x)).sort()
  const sortedLags = lags.sort()
  return {
    sent,
    answered,
    errors,
    firstError,
    p50: round3(pick(sorted, 0.5)),
    p90: round3(pick(sorted, 0.9)),
    p99: round3(pick(sorted, 0.99)),
    p999: round3(pick(sorted, 0.999)),
    max: round3(sorted[sorted.length - 1] ?? NaN),
    lagP99: round3(pick(sortedLags, 0.99)),
    lagMax: round3(sortedLags[sortedLags.length - 1] ?? NaN),
    seconds: round3(seconds),
    clientCpuSeconds: cpuSeconds(cpu)
  }
}

const closed = async (command: Extract<Command, { op: "closed" }>): Promise<ClosedResult> => {
  const pool = poolOf(command.origin, command.ca, command.connections)
  let counting = false
  let answered = 0
  let errors = 0
  let firstError: string | undefined
  const latencies: Array<number> = []
  let next = 0
  let stop = false
  const worker = async () => {
    while (!stop) {
      const outcome = await send(pool, next++)
      if (stop || !counting) continue
      if (typeof outcome === "number") {
        answered++
        latencies.push(outcome)
      } else {
        errors++
        firstError ??= outcome
      }
    }
  }
  const workers = Array.from({ length: command.connections }, worker)
  await new Promise((resolve) => setTimeout(resolve, command.warmup * 1000))
  counting = true
  const cpu = process.cpuUsage()
  const begin = performance.now()
  await new Promise((resolve) => setTimeout(resolve, command.seconds * 1000))
  stop = true
  const seconds = (performance.now() - begin) / 1000
  const clientCpuSeconds = cpuSeconds(cpu)
  // every worker has at most one review in flight, answered within the pool's timeouts
  await Promise.all(workers)
  await pool.close()
  latencies.sort((a, b) => a - b)
  return {
    answered,
    errors,
    firstError,
    seconds: round3(seconds),
    perSec: Math.round(answered / seconds),
    p50: round3(pick(latencies, 0.5)),
    p99: round3(pick(latencies, 0.99)),
    clientCpuSeconds
  }
}

process.on("message", (command: Command) => {
  const run = command.op === "open" ? open(command) : closed(command)
  run.then(
    (result) => process.send!({ op: "result", id: command.id, result } satisfies Reply),
    (error) => process.send!({ op: "failed", id: command.id, message: String(error) } satisfies Reply)
  )
})
process.send!({ op: "ready" })
