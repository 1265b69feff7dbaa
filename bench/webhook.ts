/**
 * Webhook benchmark (issue 23): admission reviews per second and latency over HTTPS keep-alive, our `WebhookServer`
 * against a plain `node:https` server answering the same reviews, in the same run on the same machine.
 *
 * - **Ours**: `WebhookServer.make` (127.0.0.1, a port picked at start) serving two webhooks of a Deployment-sized
 *   custom resource (`WebApp`, `bench/support/webhooks.ts`): `Admission.defaulter`, which fills in six fields
 *   (so a six-operation JSON patch is computed), and `Admission.validator` with `create` and `update` (a tag on the
 *   image, replica bounds, unique env names, a gold tier's replicas, the tier fixed once set; a warning for
 *   `:latest`). Metrics on, as users run it.
 * - **The floor**: `https.createServer` with the same certificate: it reads the body, `JSON.parse`s the
 *   AdmissionReview, checks its envelope, runs the same rules on the raw object and answers the same response. Its
 *   defaulter computes its patch per request with the same fast-json-patch call (`jsonpatch.compare` of the object
 *   as received and a defaulted deep copy): nothing is precomputed.
 *
 * Before measuring, 64 reviews are sent to both and their answers compared (uid, allowed, warnings, status, and
 * each patch applied to the object as received); a difference is an error.
 *
 * The load generator (`bench/support/webhookLoad.ts`) is a child process (its own event loop and core) with an
 * undici `Pool` of keep-alive connections; the requests alternate a CREATE to the defaulter and an UPDATE (object
 * and oldObject) to the validator, 512 distinct reviews (2.6 and 4.9 KB). Per round, servers in alternating order:
 *
 * 1. open loop: 1,000 requests/s for BENCH_WEBHOOK_SECONDS (10) per server: latency p50/p99/max (`p99Ms`,
 *    `floorP99Ms`);
 * 2. closed loop: BENCH_WEBHOOK_CONNECTIONS (16) connections, each sending its next review when the last is
 *    answered, 1 s of warm-up then BENCH_WEBHOOK_CLOSED_SECONDS (5): `reviewsPerSec`, `floorReviewsPerSec`, and the
 *    server process's CPU µs per review (`process.cpuUsage`; the load generator is another process).
 *
 * BENCH_RUNS (3) rounds after a warm-up of each server (closed loop, BENCH_WEBHOOK_WARMUP = 10 s); every figure is
 * the median of the rounds (`ratio`: the median of the rounds' ratios). Writes bench/results/webhook.json. Run with
 * `npm run bench:webhook`.
 * BENCH_WEBHOOK_ONLY=ours (or floor) measures one server alone and writes nothing: for `tsx --cpu-prof`.
 */
import * as Certificates from "@reconcile/kube/Certificates"
import * as WebhookServer from "@reconcile/kube/WebhookServer"
import { Effect, Exit, Scope } from "effect"
import jsonpatch from "fast-json-patch"
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import { isDeepStrictEqual } from "node:util"
import { median } from "./support/heap.js"
import type { ClosedResult, Command, OpenResult, Reply } from "./support/webhookLoad.js"
import { paths, reviews } from "./support/webhookReviews.js"
import { floorRoutes, type Json, webAppChecks, webAppDefaults } from "./support/webhooks.js"

const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 1_000)
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10)
const CLOSED_SECONDS = Number(process.env.BENCH_WEBHOOK_CLOSED_SECONDS ?? 5)
/** Seconds of closed loop per server before the rounds: V8 takes 10–20 s to compile ours' paths fully. */
const WARMUP = Number(process.env.BENCH_WEBHOOK_WARMUP ?? 10)
const CONNECTIONS = Number(process.env.BENCH_WEBHOOK_CONNECTIONS ?? 16)
const CHECKED = 64
/** `ours` or `floor`: measure that server alone and write nothing (to profile it with `--cpu-prof`). */
const ONLY = process.env.BENCH_WEBHOOK_ONLY as "ours" | "floor" | undefined

// -----------------------------------------------------------------------------------------------------------------
// the floor's server: node:https, the same certificate

const maxBodyBytes = 7 * 1024 * 1024

const floorServer = (certificate: Certificates.Certificate) =>
  https.createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const plain = (status: number, message: string) =>
      res.writeHead(status, { "content-type": "text/plain" }).end(message)
    const route = floorRoutes.get(req.url ?? "")
    if (route === undefined) return plain(404, "not found")
    if (req.method !== "POST") return plain(405, "only POST")
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) req.destroy()
      else chunks.push(chunk)
    })
    req.on("end", () => {
      let review: Json
      try {
        review = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch (error) {
        return plain(400, `not JSON: ${String(error)}`)
      }
      const body = JSON.stringify(route(review))
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
    })
  })

// -----------------------------------------------------------------------------------------------------------------
// the same answers

const agentOf = (ca: string) => new https.Agent({ keepAlive: true, ca })

const post = (agent: https.Agent, port: number, requestPath: string, body: string) =>
  new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1",
      port,
      path: requestPath,
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")))
    req.end(body)
  })

/** What kube-apiserver takes from an answer: the patch applied to the object it sent, and the rest as is. */
const effectOf = (request: Json, answer: string) => {
  const { patch, patchType, ...rest } = JSON.parse(answer).response as Json
  return {
    ...rest,
    patchType,
    patched: patch === undefined
      ? undefined
      : jsonpatch.applyPatch(
        jsonpatch.deepClone(request.object),
        JSON.parse(Buffer.from(patch, "base64").toString("utf8"))
      ).newDocument
  }
}

const sameAnswers = async (ca: string, ours: number, floor: number) => {
  const agent = agentOf(ca)
  let identical = 0
  for (const review of reviews(CHECKED)) {
    const a = await post(agent, ours, review.path, review.body)
    const b = await post(agent, floor, review.path, review.body)
    if (a.status !== 200 || b.status !== 200) {
      throw new Error(`${review.path}: HTTP ${a.status} (ours) / ${b.status} (floor): ${a.body} / ${b.body}`)
    }
    const request = JSON.parse(review.body).request as Json
    const ea = effectOf(request, a.body)
    const eb = effectOf(request, b.body)
    if (!isDeepStrictEqual(ea, eb)) {
      throw new Error(`different answers at ${review.path}:\nours  ${a.body}\nfloor ${b.body}`)
    }
    if (review.path === paths.mutate && ea.patched === undefined) throw new Error("the defaulter sent no patch")
    if (a.body === b.body) identical++
  }
  agent.destroy()
  return identical
}

// -----------------------------------------------------------------------------------------------------------------
// the load generator

const loadGenerator = async () => {
  const child: ChildProcess = fork(path.join(import.meta.dirname, "support", "webhookLoad.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const waiting = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>()
  let ready!: () => void
  const started = new Promise<void>((resolve) => (ready = resolve))
  child.on("message", (m: Reply | { readonly op: "ready" }) => {
    if (m.op === "ready") return ready()
    const waiter = waiting.get(m.id)
    waiting.delete(m.id)
    if (m.op === "result") waiter?.resolve(m.result)
    else waiter?.reject(new Error(m.message))
  })
  child.on("exit", (code, signal) => {
    for (const w of waiting.values()) w.reject(new Error(`the load generator exited (${signal ?? code})`))
  })
  await Promise.race([
    started,
    new Promise((_, reject) => setTimeout(() => reject(new Error("the load generator did not start")), 60_000))
  ])
  let ids = 0
  const run = <A>(command: DistributiveOmit<Command, "id">, limitMs: number) =>
    new Promise<A>((resolve, reject) => {
      const id = ++ids
      const timer = setTimeout(() => {
        waiting.delete(id)
        reject(new Error(`the load generator did not answer within ${limitMs} ms`))
      }, limitMs)
      waiting.set(id, {
        resolve: (r) => {
          clearTimeout(timer)
          resolve(r as A)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        }
      })
      child.send({ ...command, id })
    })
  return { run, stop: () => child.kill() }
}

// -----------------------------------------------------------------------------------------------------------------

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

interface Measured<A> {
  readonly result: A
  /** The server process's CPU µs per review answered in the phase. */
  readonly cpuMicros: number
}

const round3 = (x: number) => Math.round(x * 1000) / 1000

const main = async () => {
  const ca = Certificates.issue({ commonName: "webhook-bench-ca", ca: true })
  const certificate = Certificates.issue({
    commonName: "webhook-bench",
    usages: ["server"],
    ips: ["127.0.0.1"],
    issuer: ca
  })
  const scope = Effect.runSync(Scope.make())
  const ours = await Effect.runPromise(
    Scope.provide(scope)(WebhookServer.make({
      routes: [webAppDefaults, webAppChecks],
      certificate: WebhookServer.fromPem(certificate),
      port: 0
    }))
  )
  const floor = floorServer(certificate)
  await new Promise<void>((resolve) => floor.listen(0, "127.0.0.1", resolve))
  const floorPort = (floor.address() as { port: number }).port
  const servers = {
    ours: `https://127.0.0.1:${ours.address.port}`,
    floor: `https://127.0.0.1:${floorPort}`
  } as const
  const identical = await sameAnswers(ca.cert, ours.address.port, floorPort)
  const sample = reviews(2).map((r) => Buffer.byteLength(r.body))
  console.log(`answers checked on ${CHECKED} reviews (${identical} byte-identical); bodies ${sample.join(" / ")} B`)

  const load = await loadGenerator()
  const loadBefore = os.loadavg()
  const measured = async <A extends { readonly answered: number; readonly errors: number }>(
    server: keyof typeof servers,
    command: DistributiveOmit<Command, "id" | "origin" | "ca">,
    limitMs: number
  ): Promise<Measured<A>> => {
    const cpu = process.cpuUsage()
    const result = await load.run<A>({ ...command, origin: servers[server], ca: ca.cert }, limitMs)
    const used = process.cpuUsage(cpu)
    if (result.errors > 0) {
      throw new Error(`${server}: ${result.errors} errors, the first: ${(result as any).firstError}`)
    }
    return { result, cpuMicros: (used.user + used.system) / Math.max(1, result.answered) }
  }
  const openLimit = (SECONDS + 40) * 1000
  const closedLimit = (CLOSED_SECONDS + 40) * 1000
  const open = (server: keyof typeof servers) =>
    measured<OpenResult>(server, { op: "open", rate: RATE, seconds: SECONDS, connections: CONNECTIONS }, openLimit)
  const closed = (server: keyof typeof servers, warmup = 1, seconds = CLOSED_SECONDS) =>
    measured<ClosedResult>(server, { op: "closed", connections: CONNECTIONS, warmup, seconds }, closedLimit)

  try {
    if (ONLY !== undefined) {
      // profiling one side (`node --cpu-prof`): its phases alone, nothing written
      await closed(ONLY, 1, WARMUP)
      for (let run = 0; run < RUNS; run++) {
        const o = await open(ONLY)
        const c = await closed(ONLY)
        console.log(
          `${ONLY} round ${run + 1}: open p50/p99/max ${o.result.p50}/${o.result.p99}/${o.result.max} ms, ` +
            `closed ${c.result.perSec}/s (${c.cpuMicros.toFixed(0)} µs CPU)`
        )
      }
      return
    }
    // warm-up: both servers JIT-compiled and their connections' first handshakes done
    for (const server of ["ours", "floor"] as const) {
      const w = await closed(server, 1, WARMUP)
      console.log(`warm-up ${server}: ${w.result.perSec} reviews/s`)
    }
    const rounds: Array<
      Record<"ours" | "floor", { open: Measured<OpenResult>; closed: Measured<ClosedResult> }>
    > = []
    for (let run = 0; run < RUNS; run++) {
      const order = run % 2 === 0 ? (["ours", "floor"] as const) : (["floor", "ours"] as const)
      const openRuns: Partial<Record<"ours" | "floor", Measured<OpenResult>>> = {}
      const closedRuns: Partial<Record<"ours" | "floor", Measured<ClosedResult>>> = {}
      for (const server of order) openRuns[server] = await open(server)
      for (const server of order) closedRuns[server] = await closed(server)
      rounds.push({
        ours: { open: openRuns.ours!, closed: closedRuns.ours! },
        floor: { open: openRuns.floor!, closed: closedRuns.floor! }
      })
      const o = rounds[run]!.ours
      const f = rounds[run]!.floor
      console.log(
        `round ${run + 1}: open p50/p99/max ours ${o.open.result.p50}/${o.open.result.p99}/${o.open.result.max} ms, ` +
          `floor ${f.open.result.p50}/${f.open.result.p99}/${f.open.result.max} ms; closed ours ` +
          `${o.closed.result.perSec}/s (${o.closed.cpuMicros.toFixed(0)} µs CPU), floor ${f.closed.result.perSec}/s ` +
          `(${f.closed.cpuMicros.toFixed(0)} µs CPU)`
      )
    }
    const of = (server: "ours" | "floor", f: (r: (typeof rounds)[number]["ours"]) => number) =>
      median(rounds.map((r) => f(r[server])))
    const runsOf = (server: "ours" | "floor", f: (r: (typeof rounds)[number]["ours"]) => number) =>
      rounds.map((r) => round3(f(r[server])))
    const reviewsPerSec = Math.round(of("ours", (r) => r.closed.result.perSec))
    const floorReviewsPerSec = Math.round(of("floor", (r) => r.closed.result.perSec))
    const result = {
      benchmark: "webhook",
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: loadBefore.map((n) => Number(n.toFixed(2))),
      loadAverageAfter: os.loadavg().map((n) => Number(n.toFixed(2))),
      runs: RUNS,
      rate: RATE,
      seconds: SECONDS,
      closedSeconds: CLOSED_SECONDS,
      connections: CONNECTIONS,
      reviewBytes: { create: sample[0], update: sample[1] },
      reviewsPerSec,
      floorReviewsPerSec,
      ratio: round3(median(rounds.map((r) => r.ours.closed.result.perSec / r.floor.closed.result.perSec))),
      p50Ms: round3(of("ours", (r) => r.open.result.p50)),
      p99Ms: round3(of("ours", (r) => r.open.result.p99)),
      maxMs: round3(of("ours", (r) => r.open.result.max)),
      floorP50Ms: round3(of("floor", (r) => r.open.result.p50)),
      floorP99Ms: round3(of("floor", (r) => r.open.result.p99)),
      floorMaxMs: round3(of("floor", (r) => r.open.result.max)),
      cpuMicrosPerReview: round3(of("ours", (r) => r.closed.cpuMicros)),
      floorCpuMicrosPerReview: round3(of("floor", (r) => r.closed.cpuMicros)),
      cpuRatio: round3(median(rounds.map((r) => r.ours.closed.cpuMicros / r.floor.closed.cpuMicros))),
      openLoopCpuMicrosPerReview: round3(of("ours", (r) => r.open.cpuMicros)),
      floorOpenLoopCpuMicrosPerReview: round3(of("floor", (r) => r.open.cpuMicros)),
      closedP50Ms: round3(of("ours", (r) => r.closed.result.p50)),
      closedP99Ms: round3(of("ours", (r) => r.closed.result.p99)),
      floorClosedP50Ms: round3(of("floor", (r) => r.closed.result.p50)),
      floorClosedP99Ms: round3(of("floor", (r) => r.closed.result.p99)),
      reviewsPerSecRuns: runsOf("ours", (r) => r.closed.result.perSec),
      floorReviewsPerSecRuns: runsOf("floor", (r) => r.closed.result.perSec),
      p99MsRuns: runsOf("ours", (r) => r.open.result.p99),
      floorP99MsRuns: runsOf("floor", (r) => r.open.result.p99),
      p999MsRuns: runsOf("ours", (r) => r.open.result.p999),
      floorP999MsRuns: runsOf("floor", (r) => r.open.result.p999),
      maxMsRuns: runsOf("ours", (r) => r.open.result.max),
      floorMaxMsRuns: runsOf("floor", (r) => r.open.result.max),
      clientLagP99MsRuns: rounds.flatMap((r) => [r.ours.open.result.lagP99, r.floor.open.result.lagP99]),
      clientCpuSecondsClosed: runsOf("ours", (r) => r.closed.result.clientCpuSeconds),
      answersChecked: CHECKED,
      answersByteIdentical: identical,
      notes: "Ours: WebhookServer.make serving Admission.defaulter (six defaults, a six-operation JSON patch) and " +
        "Admission.validator (create, update) of a Deployment-sized WebApp custom resource (effect Schema decode), " +
        "metrics on. Floor: node:https with the same certificate, JSON.parse of the same AdmissionReview, the same " +
        "rules on the raw object, the same answer; its patch is computed per request with the same fast-json-patch " +
        "call (compare of the object as received and a defaulted deep copy). Answers compared on " +
        `${CHECKED} reviews before measuring (patches applied to the object sent). Requests alternate a CREATE to ` +
        "the defaulter and an UPDATE (object + oldObject) to the validator. Load generator: a child process, undici " +
        `Pool (keep-alive, ${CONNECTIONS} connections max). p50/p99/max: open loop at ${RATE} requests/s for ` +
        `${SECONDS} s per server and round, from the request handed to the pool to the end of the answer. ` +
        `reviewsPerSec: closed loop, ${CONNECTIONS} connections, ${CLOSED_SECONDS} s after 1 s of warm-up. ` +
        "cpuMicrosPerReview: the server process's CPU time (process.cpuUsage) per review in the closed loop (the " +
        `load generator is another process). Medians of ${RUNS} interleaved rounds (servers' order alternating) ` +
        `after ${WARMUP} s of closed loop per server; ` +
        "ratio and cpuRatio: medians of the rounds' ratios. 127.0.0.1, one machine shared with other work: " +
        "loadAverage is os.loadavg() at the start."
    }
    const file = path.join(import.meta.dirname, "results", "webhook.json")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
    console.log(JSON.stringify(result, null, 2))
  } finally {
    load.stop()
    floor.close()
    floor.closeAllConnections()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
