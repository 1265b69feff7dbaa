/**
 * The operator replicas of a chaos run: each is a process (`chaos/operator.ts`, or the example's main job) with
 * its own kubeconfig pointing at one of the proxy's listeners, started again 1 s after it exits (as the kubelet
 * would) until the run stops. Collects the cleanups the operators report, their exits and their `/metrics`, and
 * knows which replica holds the Lease.
 */
import type { Direct } from "./Direct.js"
import type { Cleanup } from "./Invariants.js"
import * as Metrics from "./Metrics.js"
import type { Child, Children } from "./Processes.js"
import { reason as exitReason } from "./Processes.js"

/** A proxy listener. */
export type Listener = "passthrough" | "terminating"

/** One replica; its process changes at each start. */
export interface Replica {
  readonly index: number
  starts: number
  /** The Lease identity of the current process (a new one per start, as a new Pod would have). */
  identity: string
  child: Child | undefined
  metricsPort: number
  listener: Listener
  /** Seconds its `/readyz` answered something other than 200 (sampled every 2 s). */
  notReadySeconds: number
}

/** What the replicas need from the run. */
export interface Options {
  readonly children: Children
  /** `harness`: chaos/operator.ts; `main`: examples/webapp/src/main.ts. */
  readonly mode: "harness" | "main"
  readonly count: number
  /** Writes the kubeconfig of a listener (with the server's current CA and token) and returns its path. */
  readonly kubeconfigFor: (listener: Listener) => string
  /** A free port on 127.0.0.1. */
  readonly freePort: () => Promise<number>
  readonly direct: Direct
  readonly lease: { readonly namespace: string; readonly name: string }
  readonly log: (line: string) => void
}

/** The replicas. */
export class Operators {
  readonly replicas: ReadonlyArray<Replica>
  readonly cleanups: Array<Cleanup> = []
  readonly scrapes = new Metrics.Scrapes()
  readonly exits: Array<string> = []
  starts = 0
  /** Once set, exited replicas stay down. */
  private stopping = false
  /** The last holder of the Lease read (used when the server cannot answer right now). */
  private lastHolder: string | undefined

  constructor(private readonly options: Options) {
    this.replicas = Array.from({ length: options.count }, (_, index) => ({
      index,
      starts: 0,
      identity: "",
      child: undefined,
      metricsPort: 0,
      listener: "passthrough",
      notReadySeconds: 0
    }))
  }

  /** Starts every replica. */
  async startAll(): Promise<void> {
    for (const replica of this.replicas) await this.start(replica)
  }

  private async start(replica: Replica): Promise<void> {
    const { children, log, mode } = this.options
    replica.starts++
    this.starts++
    const name = `operator-${replica.index}.${replica.starts}`
    // with several replicas each keeps one listener (leadership moves between them); alone, it alternates
    replica.listener = (this.options.count > 1 ? replica.index : replica.starts + 1) % 2 === 0
      ? "terminating"
      : "passthrough"
    const config = this.options.kubeconfigFor(replica.listener)
    replica.identity = `replica-${replica.index}-${replica.starts}`
    replica.metricsPort = await this.options.freePort()
    const args = ["--kubeconfig", config, "--metrics-port", String(replica.metricsPort)]
    const child = mode === "harness"
      ? children.spawn(
        name,
        "chaos/operator.ts",
        [...args, "--identity", replica.identity],
        (line) => this.onLine(name, line)
      )
      : children.spawn(name, "examples/webapp/src/main.ts", args)
    replica.child = child
    log(`  started ${name} (${replica.listener}, identity ${replica.identity})`)
    void child.exited.then(async (exit) => {
      if (this.stopping) return
      const reason = exit.signal ?? `exit ${exit.code}`
      this.exits.push(`${name}: ${reason}${exit.code !== 0 && exit.signal === null ? ` (${exitReason(child)})` : ""}`)
      log(`  ${name} ended (${reason}); restarting it in 1 s`)
      if (this.starts >= 200) return
      await new Promise((resolve) => setTimeout(resolve, 1000))
      if (!this.stopping) await this.start(replica)
    }).catch((e) => log(`  could not restart ${name}: ${e instanceof Error ? e.message : String(e)}`))
  }

  /** A cleanup line of `chaos/operator.ts`. */
  private onLine(process: string, line: string): void {
    if (!line.startsWith("{\"chaos\":\"cleanup\"")) return
    try {
      const c = JSON.parse(line)
      this.cleanups.push({ uid: c.uid, name: c.name, at: c.at, replica: process })
    } catch {
      // a torn line: the process was killed while writing it
    }
  }

  private running(replica: Replica | undefined): replica is Replica & { child: Child } {
    return replica?.child !== undefined && !replica.child.done
  }

  /** The running replica holding the Lease (the only replica of the main job). */
  async leader(): Promise<Replica | undefined> {
    if (this.options.mode === "main") return this.replicas.find((r) => this.running(r))
    const { name, namespace } = this.options.lease
    const lease = await this.options.direct.request(
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
      { timeoutMs: 2000 }
    ).catch(() => undefined)
    if (lease?.status === 200) this.lastHolder = lease.body?.spec?.holderIdentity
    return this.replicas.find((r) => r.identity === this.lastHolder && this.running(r))
  }

  /** A running replica other than `leader`. */
  follower(leader: Replica | undefined): Replica | undefined {
    return this.replicas.find((r) => r !== leader && this.running(r))
  }

  /** Sends `signal` to a replica's process. */
  kill(replica: Replica, signal: NodeJS.Signals): void {
    if (replica.child !== undefined) this.options.children.signal(replica.child, signal)
  }

  /** Reads the Lease (when `lease`), then each running replica's `/metrics` and `/readyz`. */
  async scrape(lease: boolean): Promise<void> {
    if (lease) await this.leader()
    for (const replica of this.replicas) {
      const child = replica.child
      if (child === undefined || child.done) continue
      const base = `http://127.0.0.1:${replica.metricsPort}`
      const metrics = await Metrics.get(`${base}/metrics`)
      if (metrics?.status === 200) this.scrapes.set(child.name, Metrics.parse(metrics.text))
      const ready = await Metrics.get(`${base}/readyz`)
      if (ready !== undefined && ready.status !== 200) replica.notReadySeconds += 2
    }
  }

  /** Whether the leader answers `/readyz` with 200. */
  async leaderReady(): Promise<boolean> {
    const r = await this.leader()
    return r !== undefined && (await Metrics.get(`http://127.0.0.1:${r.metricsPort}/readyz`))?.status === 200
  }

  /** Stops every replica gracefully (SIGTERM, SIGKILL after `graceMs`); none is started again. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true
    await Promise.all(
      this.replicas.map((r) => r.child === undefined ? undefined : this.options.children.stop(r.child, graceMs))
    )
  }
}
