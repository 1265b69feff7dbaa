/**
 * One chaos run: the API server (`packages/testkit/src/bin/apiserver.ts`), the fault proxy, the operator
 * replicas, the Deployment simulator, the observer and the load; the seeded faults for `duration` seconds; then
 * the wait for convergence and the invariants (see `docs/chaos.md`).
 */
import { Sharding } from "@reconcile/kube"
import { selfSigned } from "@reconcile/kube/Certificates"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parse as parseYaml } from "yaml"
import { FaultProxy } from "./FaultProxy.js"
import type { Snapshot, Violation } from "./Invariants.js"
import * as Invariants from "./Invariants.js"
import { Load, webappsPath } from "./Load.js"
import { Observer } from "./Observer.js"
import { Operators } from "./Operators.js"
import * as Overlap from "./Overlap.js"
import type { Fault, FaultKind, Plan } from "./Plan.js"
import { describeFault, faultKinds } from "./Plan.js"
import { Children, root } from "./Processes.js"
import type { Cluster, Server } from "./Server.js"
import * as Servers from "./Server.js"
import { freePort } from "./Server.js"
import { Simulator } from "./Simulator.js"

/** Options of {@link run}. */
export interface Options {
  readonly plan: Plan
  /** `embedded`: the testkit's API server binary; `real`: etcd, kube-apiserver and kube-controller-manager. */
  readonly cluster: Cluster
  /** `harness`: chaos/operator.ts (leader election, cleanup lines); `main`: the example's main job. */
  readonly operator: "harness" | "main"
  readonly replicas: number
  /**
   * The ring the replicas form (`Sharding.layer`) instead of electing a leader: the sharding faults, the shard
   * labels and the overlap of reconciles in the logs are checked. Harness operator only.
   */
  readonly sharding?: string | undefined
  /** Seconds to wait for convergence after the faults stop. */
  readonly convergeTimeout: number
  /** Seconds the converged state must hold before the final check. */
  readonly stability: number
  /** Keep the temporary folder (logs, kubeconfigs). */
  readonly keep: boolean
  readonly log: (line: string) => void
}

/** What a run measured and found. */
export interface Result {
  readonly seed: number
  readonly duration: number
  readonly violations: ReadonlyArray<Violation>
  /** Seconds from the end of the faults to convergence; undefined if it did not converge. */
  readonly convergenceSeconds: number | undefined
  readonly faults: { readonly injected: Record<string, number>; readonly skipped: Record<string, number> }
  readonly figures: Record<string, unknown>
  readonly tempDir: string | undefined
}

/** The run was interrupted (Ctrl-C). */
export class Interrupted extends Error {
  constructor() {
    super("interrupted")
  }
}

/** Setting up failed before any fault (server did not start, baseline did not converge, ...). */
export class SetupFailed extends Error {}

const namespace = "default"
const finalizer = "apps.reconcile.dev/registry"
const leaseName = "webapp-operator"
/** The shards' renew deadline (Sharding.layer's default), and the slack allowed for stopping after it. */
const renewDeadline = 10
const stopSlack = 2

/** A kubeconfig (as JSON, which YAML parsers read) for a server, CA and token. */
const kubeconfig = (server: string, ca: string, token: string): string =>
  JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{
        name: "chaos",
        cluster: { server, "certificate-authority-data": Buffer.from(ca).toString("base64") }
      }],
      users: [{ name: "chaos", user: { token } }],
      contexts: [{ name: "chaos", context: { cluster: "chaos", user: "chaos", namespace } }],
      "current-context": "chaos"
    },
    null,
    2
  )

/** A log file's text ("" when it cannot be read). */
const readLog = (file: string): string => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return ""
  }
}

/** Runs the whole thing; resolves with the result, rejects with {@link Interrupted} or {@link SetupFailed}. */
export const run = async (options: Options, signal: AbortSignal): Promise<Result> => {
  const { plan } = options
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "reconcile-chaos-"))
  const logDir = path.join(tempDir, "logs")
  fs.mkdirSync(logDir)
  /** Wall-clock lines of what the harness did, to read next to the operators' logs. */
  const trace = (line: string) =>
    fs.appendFileSync(path.join(logDir, "harness.log"), `${new Date().toISOString()} ${line}\n`)
  const log = (line: string) => {
    options.log(line)
    trace(line)
  }
  const children = new Children(logDir)
  const stopAll = new AbortController()
  const stop = stopAll.signal
  const onExit = () => {
    children.killAll()
    if (!options.keep) fs.rmSync(tempDir, { recursive: true, force: true })
  }
  process.on("exit", onExit)
  const abort = () => stopAll.abort()
  signal.addEventListener("abort", abort)
  let proxy: FaultProxy | undefined
  let server: Server | undefined
  let stopOperators: () => Promise<unknown> = () => Promise.resolve()
  const background: Array<Promise<unknown>> = []

  /** Sleeps, or rejects with Interrupted when the run is interrupted. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(new Interrupted())
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort)
        resolve()
      }, Math.max(0, ms))
      const onAbort = () => {
        clearTimeout(timer)
        reject(new Interrupted())
      }
      signal.addEventListener("abort", onAbort, { once: true })
    })

  /** Polls `probe` every `everyMs` until it returns true, for at most `timeoutMs`. */
  const until = async (what: string, timeoutMs: number, probe: () => Promise<boolean>, everyMs = 200) => {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const ok = await probe().catch((e) => {
        if (e instanceof SetupFailed || e instanceof Interrupted) throw e
        return false
      })
      if (ok) return
      await sleep(everyMs)
    }
    throw new SetupFailed(`${what}: not within ${timeoutMs / 1000} s`)
  }

  try {
    // --- the API server ----------------------------------------------------------------------------------
    const serverDir = path.join(tempDir, "server")
    server = options.cluster === "real"
      ? await Servers.real(serverDir, log).catch((e) => {
        throw new SetupFailed(`the real control plane did not start: ${e instanceof Error ? e.message : String(e)}`)
      })
      : await Servers.embedded(children, serverDir)
    await server.start().catch((e) => {
      throw new SetupFailed(e instanceof Error ? e.message : String(e))
    })
    const direct = server.direct
    log(`API server (${options.cluster}) 127.0.0.1:${server.port()} ${JSON.stringify(server.describe())}`)

    // --- the CRD -------------------------------------------------------------------------------------------
    const crd = parseYaml(fs.readFileSync(path.join(root, "examples/webapp/config/crd.yaml"), "utf8"))
    await direct.ok(
      "PATCH",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=chaos&force=true`,
      {
        body: crd,
        contentType: "application/apply-patch+yaml"
      }
    )
    await until(
      "the WebApp API to be served",
      10_000,
      async () => (await direct.request("GET", webappsPath(namespace))).status === 200
    )

    // --- the proxy and the operators' kubeconfigs -----------------------------------------------------------
    const certificate = selfSigned()
    proxy = new FaultProxy({
      upstream: { port: () => server!.port(), ca: () => server!.ca() },
      certificate,
      seed: plan.seed
    })
    await proxy.start()
    // under sharding each replica has its own listener (so one replica can be partitioned from the server alone)
    const ownPorts = new Map<string, number>()
    const kubeconfigFor = async (listener: "passthrough" | "terminating", replica: number) => {
      let port = proxy!.port(listener)
      let file = path.join(tempDir, `kubeconfig.${listener}`)
      if (options.sharding !== undefined) {
        const tag = `replica-${replica}`
        port = ownPorts.get(tag) ?? await proxy!.listen(listener, tag)
        ownPorts.set(tag, port)
        file = path.join(tempDir, `kubeconfig.${tag}`)
      }
      fs.writeFileSync(
        file,
        kubeconfig(
          `https://127.0.0.1:${port}`,
          listener === "terminating" ? certificate.cert : server!.ca(),
          server!.token()
        ),
        { mode: 0o600 }
      )
      return file
    }
    log(
      `fault proxy: pass-through 127.0.0.1:${proxy.port("passthrough")}, TLS-terminating 127.0.0.1:${
        proxy.port("terminating")
      }`
    )

    // --- simulator, observer, load --------------------------------------------------------------------------
    // on the real control plane, kube-controller-manager and the kubelet stand-in write Deployment status
    // each check and each simulator pass lists every WebApp, Deployment and Service: with many apps, less often (3 ms
    // and 1 ms per app), so that the harness does not take the server's time from the operators
    const apps = plan.initialApps
    const simulator = new Simulator(direct, namespace, 1000, Math.max(300, apps))
    const observer = new Observer(direct, namespace, finalizer, trace)
    background.push(observer.run(stop))
    if (!server.runsWorkloads) background.push(simulator.run(stop))
    const load = new Load(direct, namespace, trace, { cap: Math.max(40, plan.initialApps + 28), floor: 8 })

    // --- the operators -------------------------------------------------------------------------------------
    const operators = new Operators({
      children,
      mode: options.operator,
      count: options.replicas,
      kubeconfigFor,
      freePort,
      direct,
      lease: { namespace, name: options.sharding === undefined ? leaseName : `${options.sharding}-sharder` },
      sharding: options.sharding,
      log
    })
    stopOperators = () => operators.stop()
    background.push((async () => {
      while (!stop.aborted) {
        await operators.scrape(server!.state() === "running")
        await new Promise((resolve) => setTimeout(resolve, 2000))
      }
    })())
    log(
      `operators: ${options.replicas} × ${
        options.operator === "harness" ? "chaos/operator.ts" : "examples/webapp/src/main.ts"
      }`
    )
    await operators.startAll()
    await until("an operator to lead and be ready", 90_000, () => operators.leaderReady(), 500)

    // --- snapshot and checks ---------------------------------------------------------------------------------
    const snapshot = async (): Promise<Snapshot> => {
      const [webapps, deployments, services, registry] = await Promise.all([
        direct.ok("GET", webappsPath(namespace)),
        direct.ok("GET", `/apis/apps/v1/namespaces/${namespace}/deployments`),
        direct.ok("GET", `/api/v1/namespaces/${namespace}/services`),
        direct.request("GET", `/api/v1/namespaces/${namespace}/configmaps/webapp-registry`)
      ])
      return {
        webapps: webapps.items ?? [],
        deployments: deployments.items ?? [],
        services: services.items ?? [],
        registry: registry.status === 200 ? registry.body?.data ?? {} : undefined
      }
    }
    const evaluate = async (wanted: boolean): Promise<ReadonlyArray<Violation>> => {
      let snap: Snapshot
      try {
        snap = await snapshot()
      } catch (e) {
        return [{ rule: "unreachable", subject: "API server", detail: e instanceof Error ? e.message : String(e) }]
      }
      return Invariants.check({
        snapshot: snap,
        wanted: wanted ? load.wanted() : undefined,
        unresolved: load.unresolved(),
        seen: observer.seen,
        cleanups: options.operator === "harness" ? operators.cleanups : undefined,
        finalizer,
        // by the API server's shardSelector no object carries a label: only the logs tell who reconciled what
        shards: options.sharding === undefined || operators.shardMode === "server" ? undefined : {
          label: Sharding.shardLabel(options.sharding),
          drainLabel: Sharding.drainLabel(options.sharding),
          live: operators.liveIdentities()
        }
      })
    }

    // --- baseline ---------------------------------------------------------------------------------------------
    await load.populate(plan.initialApps, plan.initialApps > 40 ? 8 : 1)
    let baseline: ReadonlyArray<Violation> = []
    // a minute, and 0.3 s per app (a thousand apps: their Deployments, Services, statuses and shard labels take
    // about 3–4 minutes on two cores)
    const baselineDeadline = Date.now() + 60_000 + apps * 300
    for (;;) {
      baseline = await evaluate(true)
      if (baseline.length === 0 || Date.now() > baselineDeadline) break
      await sleep(Math.max(500, apps * 3))
    }
    if (baseline.length > 0) {
      throw new SetupFailed(
        `the ${plan.initialApps} initial WebApps did not converge before any fault:\n${
          baseline.slice(0, 20).map((v) => `  ${v.rule}: ${v.subject}: ${v.detail}`).join("\n")
        }`
      )
    }
    log(`baseline: ${plan.initialApps} WebApps Ready; faults for ${plan.duration} s`)

    // --- the fault phase --------------------------------------------------------------------------------------
    const injected = Object.fromEntries(faultKinds.map((k) => [k, 0])) as Record<FaultKind, number>
    const skipped: Record<string, number> = {}
    const skip = (fault: Fault, why: string) => {
      skipped[`${fault.kind} (${why})`] = (skipped[`${fault.kind} (${why})`] ?? 0) + 1
      log(`  t=${fault.at}s ${fault.kind} skipped: ${why}`)
    }
    /** Partitions: which process was cut off when, for the figures (how long it took to stop). */
    const partitions: Array<{ process: string; at: number; seconds: number }> = []
    const phaseStart = Date.now()
    const phaseEnd = phaseStart + plan.duration * 1000
    let serverBusy = false
    const faultTasks: Array<Promise<void>> = []

    /** A restart after which the server did not come back: the run cannot be checked. */
    let fatal: Violation | undefined
    const startAgain = async () => {
      try {
        await server!.start()
      } catch (e) {
        if (e instanceof Interrupted) throw e
        fatal = {
          rule: "apiserver-restart",
          subject: "API server",
          detail: `did not come back after a restart: ${e instanceof Error ? e.message : String(e)}`
        }
        log(`  ${fatal.detail}`)
      }
    }
    /** Runs a fault on the server; a server that does not come back makes the run uncheckable. */
    const onServer = async (what: string, act: () => Promise<unknown>) => {
      try {
        await act()
      } catch (e) {
        if (e instanceof Interrupted) throw e
        fatal = {
          rule: "apiserver-restart",
          subject: "API server",
          detail: `${what}: ${e instanceof Error ? e.message : String(e)}`
        }
        log(`  ${fatal.detail}`)
      }
    }

    /** A server fault: skipped while another one holds the server, counted, the server held until it ends. */
    const exclusive = async (fault: Fault, act: () => Promise<unknown>): Promise<void> => {
      if (serverBusy) return skip(fault, "server busy")
      serverBusy = true
      injected[fault.kind]++
      try {
        await act()
      } finally {
        serverBusy = false
      }
    }

    const inject = async (fault: Fault) => {
      const until = Math.min(phaseEnd, Date.now() + ("duration" in fault ? fault.duration * 1000 : 0))
      switch (fault.kind) {
        case "reset": {
          const targets = proxy!.targets(fault.listener, fault.all, fault.pick)
          if (targets.length === 0) return skip(fault, "no open connection")
          proxy!.resetMidResponse(targets, Math.max(1000, phaseEnd - Date.now()))
          break
        }
        case "stall": {
          const targets = proxy!.targets(fault.listener, fault.all, fault.pick)
          if (targets.length === 0) return skip(fault, "no open connection")
          proxy!.stall(targets, until)
          break
        }
        case "blackhole": {
          const targets = proxy!.targets(fault.listener, false, fault.pick)
          if (targets.length === 0) return skip(fault, "no open connection")
          proxy!.blackhole(targets)
          break
        }
        case "fragment":
        case "latency":
          proxy!.window(fault.kind, fault.listener, until, fault.kind === "latency" ? fault.ms : 0)
          break
        case "freeze":
          return exclusive(fault, async () => {
            server!.freeze()
            try {
              await sleep(until - Date.now())
            } finally {
              server!.thaw()
            }
          })
        case "restart":
          if (server!.cannotRestart !== undefined) return skip(fault, server!.cannotRestart)
          return exclusive(
            fault,
            () => onServer("did not come back after a restart", () => server!.restart(fault.signal, fault.down))
          )
        case "etcd-restart":
          if (server!.restartEtcd === undefined) return skip(fault, "no etcd of its own")
          return exclusive(
            fault,
            () => onServer("etcd did not come back after a crash", () => server!.restartEtcd!(fault.down))
          )
        case "compact": {
          if (server!.compact === undefined) return skip(fault, "no etcd of its own")
          if (serverBusy) return skip(fault, "server busy (etcd may be down)")
          const revision = await server!.compact().catch((e) => e instanceof Error ? e.message : String(e))
          if (typeof revision === "string") return skip(fault, `compaction failed: ${revision}`)
          trace(`  compacted etcd to revision ${revision}`)
          break
        }
        case "leader-kill": {
          const r = await operators.leader()
          if (r === undefined) return skip(fault, "no replica holds the Lease")
          operators.kill(r, fault.signal)
          break
        }
        case "partition": {
          const running = operators.runningReplicas()
          if (running.length === 0) return skip(fault, "no replica running")
          const r = running[Math.floor(fault.pick * running.length)]!
          proxy!.partition(`replica-${r.index}`, until)
          partitions.push({ process: r.child.name, at: Date.now(), seconds: (until - Date.now()) / 1000 })
          trace(`  partitioned ${r.child.name} (${r.identity}) until ${new Date(until).toISOString()}`)
          break
        }
        case "replica-kill": {
          const running = operators.runningReplicas()
          if (running.length === 0) return skip(fault, "no replica running")
          const r = running[Math.floor(fault.pick * running.length)]!
          trace(`  killing ${r.child.name} (${r.identity}) with ${fault.signal}`)
          operators.kill(r, fault.signal)
          break
        }
        case "replica-add": {
          const r = await operators.add()
          if (r === undefined) return skip(fault, "5 replicas already")
          break
        }
        case "stale-takeover": {
          // the issue-11 case: the follower's caches lag (its watches are held) while the leader cleans up and
          // releases finalizers; then the follower takes over and reconciles from what it cached
          const current = await operators.leader()
          const follower = operators.follower(current)
          if (current === undefined || follower === undefined) return skip(fault, "needs a leader and a follower")
          // its watches only: its requests (the Lease above all) must go through, or it could not take over
          const targets = proxy!.watches(follower.listener)
          if (targets.length === 0) return skip(fault, "the follower has no open watch")
          injected[fault.kind]++
          proxy!.stall(targets, until)
          await sleep(fault.killAfter * 1000)
          if (Date.now() < phaseEnd) operators.kill(current, fault.signal)
          return
        }
      }
      injected[fault.kind]++
    }

    /** A task awaited later: handled now, so an interrupt while the main flow waits elsewhere is no crash. */
    const handled = <A>(task: Promise<A>): Promise<A> => {
      task.catch(() => undefined)
      return task
    }
    for (const fault of plan.faults) {
      faultTasks.push(handled((async () => {
        await sleep(phaseStart + fault.at * 1000 - Date.now())
        if (Date.now() >= phaseEnd) return
        log(`  ${describeFault(fault)}`)
        await inject(fault)
      })()))
    }
    const loadTask = handled((async () => {
      for (const op of plan.load) {
        await sleep(phaseStart + op.at * 1000 - Date.now())
        if (Date.now() >= phaseEnd) return
        await load.run(op)
      }
    })())
    await sleep(phaseEnd - Date.now())
    // --- the faults stop -------------------------------------------------------------------------------------
    proxy.calm()
    server.thaw()
    await Promise.all([...faultTasks, loadTask])
    if (fatal === undefined && server.gone()) await startAgain()
    const calmAt = Date.now()
    log(`faults stopped; waiting up to ${options.convergeTimeout} s for convergence`)
    if (fatal === undefined) await sleep(2000)
    let settleProblems: ReadonlyArray<string> = []
    for (let attempt = 0; attempt < 30 && fatal === undefined; attempt++) {
      try {
        const snap = await snapshot()
        settleProblems = await load.settle(new Map(snap.webapps.map((w) => [w.metadata.name, w])))
        break
      } catch {
        await sleep(1000)
      }
    }

    // --- convergence ------------------------------------------------------------------------------------------
    let violations: ReadonlyArray<Violation> = []
    let convergedAt: number | undefined
    const deadline = calmAt + options.convergeTimeout * 1000
    for (;;) {
      if (fatal !== undefined) break
      violations = await evaluate(true)
      // what happened cannot un-happen: a cleanup after the release stays a violation, but the state converged
      if (violations.every((v) => Invariants.historical.has(v.rule))) {
        convergedAt = Date.now()
        break
      }
      if (Date.now() > deadline) break
      await sleep(Math.max(1000, apps * 2))
    }
    if (convergedAt !== undefined) {
      log(
        `converged ${
          ((convergedAt - calmAt) / 1000).toFixed(1)
        } s after the faults stopped; holding ${options.stability} s`
      )
      await sleep(options.stability * 1000)
      violations = (await evaluate(true)).map((v) =>
        Invariants.historical.has(v.rule) ? v : { ...v, detail: `${v.detail} (after having converged)` }
      )
    }
    // a silent watch must be noticed (its connection closed by the operator) within 60 s: wait until each
    // blackholed watch is closed or past the limit, then name those that were not noticed in time
    const silentLimit = 65
    const silentDeadline = Date.now() + silentLimit * 1000
    while (
      fatal === undefined && Date.now() < silentDeadline &&
      proxy.silences().some((x) => x.watch && !x.closed && x.seconds < silentLimit)
    ) {
      await sleep(1000)
    }
    const silences = proxy.silences()
    const unnoticed: Array<Violation> = silences.filter((x) => x.watch && x.seconds >= silentLimit).map((x) => ({
      rule: "silent-watch",
      subject: `proxied connection #${x.id}`,
      detail: x.closed
        ? `a silent watch was closed only after ${x.seconds.toFixed(1)} s`
        : `a watch silent for ${x.seconds.toFixed(1)} s is still open: its operator did not notice`
    }))
    const final: Array<Violation> = [
      ...(fatal === undefined ? [] : [fatal]),
      ...unnoticed,
      ...settleProblems.map((detail) => ({ rule: "intent", subject: "load", detail })),
      ...violations
    ]
    await operators.scrape(true)

    // --- sharding: the replicas' logs ------------------------------------------------------------------------------
    // every process stopped (each open reconcile ends with its process), then every reconcile paired by reconcileID
    let sharding: Record<string, unknown> | undefined
    if (options.sharding !== undefined) {
      await operators.stop()
      const logs = operators.processes.map((p) => ({
        process: p.process,
        identity: p.identity,
        text: readLog(path.join(logDir, `${p.process}.log`)),
        endedAt: p.endedAt
      }))
      const found = Overlap.check(logs)
      for (const o of found.overlaps) {
        final.push({ rule: "overlap", subject: `WebApp ${o.object}`, detail: Overlap.describe(o) })
      }
      // a replica cut off stops reconciling within its renew deadline (10 s) of its last renewal, which was before
      // the partition: any reconcile of it running 12 s into the partition (2 s for a loaded machine's timers) is late
      for (const x of partitions) {
        if (x.seconds < renewDeadline + stopSlack) continue
        const limit = x.at + (renewDeadline + stopSlack) * 1000
        for (const i of Overlap.runningAfter(found.intervals, x.process, limit)) {
          final.push({
            rule: "partition-stop",
            subject: `WebApp ${i.object}`,
            detail: `${x.process} was cut off at ${new Date(x.at).toISOString()} but reconciled after ${
              renewDeadline + stopSlack
            } s: ${Overlap.describeOne(i)}`
          })
        }
      }
      const kinds = { work: 0, release: 0, gated: 0 }
      for (const i of found.intervals) kinds[i.kind]++
      const ended = new Map(operators.processes.map((p) => [p.process, p.endedAt]))
      sharding = {
        ring: options.sharding,
        mode: operators.shardMode,
        replicas: operators.replicas.length,
        identities: operators.processes.length,
        reconciles: kinds,
        unclosed: found.intervals.filter((i) => i.last === undefined).length,
        overlaps: found.overlaps.length,
        partitions: partitions.map((x) => {
          const end = ended.get(x.process)
          return {
            ...x,
            stoppedAfter: end === undefined || end < x.at ? undefined : (end - x.at) / 1000
          }
        }),
        moves: operators.scrapes.total("shard_moves_total"),
        releases: operators.scrapes.total("shard_releases_total")
      }
    }

    // --- figures -----------------------------------------------------------------------------------------------
    const figures: Record<string, unknown> = {
      apiserver: server.describe(),
      proxy: proxy.stats,
      silentWatches: silences.filter((x) => x.watch).map((x) => ({ seconds: x.seconds, closed: x.closed })),
      load: { ...load.stats, webapps: load.intents.size, live: load.wanted().size },
      operators: {
        mode: options.operator,
        replicas: options.replicas,
        starts: operators.starts,
        exits: operators.exits,
        notReadySeconds: operators.replicas.map((r) => r.notReadySeconds)
      },
      reconciles: {
        success: operators.scrapes.total("controller_runtime_reconcile_total", { result: "success" }),
        error: operators.scrapes.total("controller_runtime_reconcile_total", { result: "error" }),
        requeue: operators.scrapes.total("controller_runtime_reconcile_total", { result: "requeue" }),
        requeueAfter: operators.scrapes.total("controller_runtime_reconcile_total", { result: "requeue_after" }),
        errors: operators.scrapes.total("controller_runtime_reconcile_errors_total"),
        terminalErrors: operators.scrapes.total("controller_runtime_terminal_reconcile_errors_total"),
        panics: operators.scrapes.total("controller_runtime_reconcile_panics_total")
      },
      watch: Object.fromEntries(operators.scrapes.matching(/reconnect|relist|decode|disconnect|restart/)),
      cleanups: options.operator === "harness"
        ? Invariants.cleanupFigures(observer.seen, operators.cleanups)
        : "not observable with --operator main",
      simulator: { statusUpdates: simulator.updates },
      observer: { relists: observer.relists },
      ...(sharding === undefined ? {} : { sharding })
    }
    return {
      seed: plan.seed,
      duration: plan.duration,
      violations: final,
      convergenceSeconds: convergedAt === undefined ? undefined : (convergedAt - calmAt) / 1000,
      faults: { injected, skipped },
      figures,
      tempDir: options.keep ? tempDir : undefined
    }
  } finally {
    stopAll.abort()
    signal.removeEventListener("abort", abort)
    // the operators first (they drain and release the Lease through the proxy), then the proxy, then the server
    await Promise.race([stopOperators(), new Promise((resolve) => setTimeout(resolve, 15_000))])
    await proxy?.close().catch(() => undefined)
    await Promise.race([server?.stop(), new Promise((resolve) => setTimeout(resolve, 15_000))]).catch(() => undefined)
    await Promise.race([children.stopAll(5000), new Promise((resolve) => setTimeout(resolve, 15_000))])
    children.killAll()
    await Promise.race([Promise.allSettled(background), new Promise((resolve) => setTimeout(resolve, 6000))])
    process.off("exit", onExit)
    if (!options.keep) fs.rmSync(tempDir, { recursive: true, force: true })
  }
}
