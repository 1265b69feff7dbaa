/**
 * The operator replicas of a chaos run: each is a process (`chaos/operator.ts`, or the example's main job) with
 * its own kubeconfig pointing at one of the proxy's listeners, started again 1 s after it exits (as the kubelet
 * would) until the run stops. Collects the cleanups the operators report, their exits and their `/metrics`, and
 * knows which replica holds the Lease. Under sharding each replica joins the ring with its identity (new at each
 * start), and replicas can be added during the run; every process's end is recorded (for the log checks).
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
  /**
   * Writes the kubeconfig of a replica's listener (with the server's current CA and token) and returns its path.
   * Under sharding each replica has listeners of its own (so that one can be partitioned alone).
   */
  readonly kubeconfigFor: (listener: Listener, replica: number) => Promise<string>
  /** A free port on 127.0.0.1. */
  readonly freePort: () => Promise<number>
  readonly direct: Direct
  /** The Lease whose holder is "the leader" (the sharder's Lease under sharding). */
  readonly lease: { readonly namespace: string; readonly name: string }
  /** The ring the replicas join (`chaos/operator.ts --sharding`); undefined: leader election. */
  readonly sharding?: string | undefined
  readonly log: (line: string) => void
}

/** One operator process, once started. */
export interface Started {
  readonly process: string
  readonly identity: string
  readonly replica: number
  /** When it ended (epoch ms): the moment a SIGKILL was sent, else when its exit was seen. */
  endedAt: number | undefined
}

/** The replicas. */
export class Operators {
  readonly replicas: Array<Replica>
  /** Every process started, in order. */
  readonly processes: Array<Started> = []
  readonly cleanups: Array<Cleanup> = []
  readonly scrapes = new Metrics.Scrapes()
  readonly exits: Array<string> = []
  starts = 0
  /** Once set, exited replicas stay down. */
  private stopping = false
  /** The last holder of the Lease read (used when the server cannot answer right now). */
  private lastHolder: string | undefined

  constructor(private readonly options: Options) {
    this.replicas = Array.from({ length: options.count }, (_, index) => this.slot(index))
  }

  private slot(index: number): Replica {
    return {
      index,
      starts: 0,
      identity: "",
      child: undefined,
      metricsPort: 0,
      listener: "passthrough",
      notReadySeconds: 0
    }
  }

  /** Adds a replica and starts it (a new identity joins the ring); undefined when there are 5 already. */
  async add(): Promise<Replica | undefined> {
    if (this.replicas.length >= 5 || this.stopping) return undefined
    const replica = this.slot(this.replicas.length)
    this.replicas.push(replica)
    await this.start(replica)
    return replica
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
    const config = await this.options.kubeconfigFor(replica.listener, replica.index)
    // a DNS-1123 label, new at each start (as a new Pod's name would be)
    replica.identity = `replica-${replica.index}-${replica.starts}`
    replica.metricsPort = await this.options.freePort()
    const args = ["--kubeconfig", config, "--metrics-port", String(replica.metricsPort)]
    const sharding = this.options.sharding === undefined ? [] : ["--sharding", this.options.sharding]
    const child = mode === "harness"
      ? children.spawn(
        name,
        "chaos/operator.ts",
        [...args, "--identity", replica.identity, ...sharding],
        (line) => this.onLine(name, line)
      )
      : children.spawn(name, "examples/webapp/src/main.ts", args)
    replica.child = child
    const started: Started = { process: name, identity: replica.identity, replica: replica.index, endedAt: undefined }
    this.processes.push(started)
    void child.exited.then(() => {
      started.endedAt ??= Date.now()
    })
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

  /**
   * How the ring shards, as the replicas said at start: `labels` (assignment labels on the objects) or `server`
   * (the API server's shardSelector: no labels written); undefined until a replica said it.
   */
  shardMode: "labels" | "server" | undefined

  /** A cleanup line of `chaos/operator.ts`, or its sharding mode. */
  private onLine(process: string, line: string): void {
    if (line.includes("msg=\"sharding by ")) {
      this.shardMode = line.includes("shardSelector: no labels written") ? "server" : "labels"
      return
    }
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

  /** The running replicas. */
  runningReplicas(): ReadonlyArray<Replica & { child: Child }> {
    return this.replicas.filter((r) => this.running(r))
  }

  /** The identities of the running replicas. */
  liveIdentities(): ReadonlySet<string> {
    return new Set(this.runningReplicas().map((r) => r.identity))
  }

  /** A running replica other than `leader`. */
  follower(leader: Replica | undefined): Replica | undefined {
    return this.replicas.find((r) => r !== leader && this.running(r))
  }

  /** Sends `signal` to a replica's process. */
  kill(replica: Replica, signal: NodeJS.Signals): void {
    if (replica.child === undefined) return
    // a SIGKILLed process does nothing more from now on: its open reconciles end here
    if (signal === "SIGKILL" && !replica.child.done) {
      const started = this.processes.find((p) => p.process === replica.child!.name)
      if (started !== undefined) started.endedAt ??= Date.now()
    }
    this.options.children.signal(replica.child, signal)
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
