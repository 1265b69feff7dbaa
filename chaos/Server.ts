/**
 * The API server of a chaos run, and what the harness does to it: started, frozen, restarted — and on the real
 * control plane also etcd crashed and compacted.
 *
 * - **embedded** (`--cluster embedded`, the default): the testkit's API server binary
 *   (`packages/testkit/src/bin/apiserver.ts`) as a child process with a state directory, so a restart keeps its
 *   CA, token and objects. Frozen with SIGSTOP; restarted by SIGTERM or SIGKILL and a new process. Deployments
 *   get their status from the harness's simulator (chaos/Simulator.ts): the server's controller manager is off.
 * - **real** (`--cluster real`): etcd, kube-apiserver and kube-controller-manager (`Envtest`, in this process's
 *   scope: they die with it), with the testkit's kubelet stand-in reporting Pods Running and Ready, so the
 *   Deployments' status is kube-controller-manager's own. The operators authenticate with a ServiceAccount token
 *   (TokenRequest, bound to `cluster-admin`), as an operator in a cluster does; the harness itself uses the admin
 *   client certificate. Frozen by SIGSTOP of kube-apiserver; restarted with `Envtest`'s `restartApiServer`.
 */
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Envtest from "@reconcile/testkit/Envtest"
import * as Simulators from "@reconcile/testkit/Simulators"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { Direct } from "./Direct.js"
import type { Child, Children } from "./Processes.js"
import { root } from "./Processes.js"

/** Which server a run uses. */
export type Cluster = "embedded" | "real"

/** The server under chaos. */
export interface Server {
  readonly cluster: Cluster
  /** The harness's own connection (never through the fault proxy). */
  readonly direct: Direct
  /** What the server is doing now. */
  readonly state: () => "running" | "frozen" | "down"
  /** How many times it was started. */
  readonly starts: () => number
  /** The port the proxy forwards to. */
  readonly port: () => number
  /** The CA of its serving certificate (PEM). */
  readonly ca: () => string
  /** The bearer token the operators' kubeconfigs carry (never printed). */
  readonly token: () => string
  /** Why a restart cannot be done, or undefined when it can. */
  readonly cannotRestart: string | undefined
  /** Whether the server itself maintains Deployment status (kube-controller-manager and a kubelet stand-in). */
  readonly runsWorkloads: boolean
  /** Starts it and waits until it is ready. */
  readonly start: () => Promise<void>
  readonly freeze: () => void
  readonly thaw: () => void
  /** Stops it with `signal`, waits `downSeconds`, starts it again (rejects when it does not come back). */
  readonly restart: (signal: "SIGTERM" | "SIGKILL", downSeconds: number) => Promise<void>
  /** Whether it has gone (crashed, or killed and not started again). */
  readonly gone: () => boolean
  /** Real only: kill etcd and start it again on its data after `downSeconds`. */
  readonly restartEtcd?: (downSeconds: number) => Promise<void>
  /** Real only: compact etcd's history to its current revision; resolves with the revision. */
  readonly compact?: () => Promise<number>
  /** Flags and figures for the report. */
  readonly describe: () => Record<string, unknown>
  /** Stops everything it started. */
  readonly stop: () => Promise<void>
}

/** A free TCP port on 127.0.0.1 (bound, then released). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** The flags of the API server binary, from its `--help`. */
export const serverFeatures = async (): Promise<{ stateDir: boolean; data: boolean; help: string }> => {
  const { spawnSync } = await import("node:child_process")
  const out = spawnSync(process.execPath, ["--import", "tsx", "packages/testkit/src/bin/apiserver.ts", "--help"], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000
  })
  const help = `${out.stdout ?? ""}${out.stderr ?? ""}`
  return { stateDir: /--state-dir\b/.test(help), data: /--data\b/.test(help), help }
}

/** Polls `probe` until it answers true; rejects after `timeoutMs` or when `failed` says why. */
const until = async (
  what: string,
  timeoutMs: number,
  probe: () => Promise<boolean>,
  failed: () => string | undefined = () => undefined
) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const why = failed()
    if (why !== undefined) throw new Error(why)
    if (await probe().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The testkit's API server as a child process (see the module header). */
export const embedded = async (children: Children, dir: string): Promise<Server> => {
  const features = await serverFeatures()
  const port = await freePort()
  fs.mkdirSync(dir, { recursive: true })
  const kubeconfigPath = path.join(dir, "kubeconfig")
  const args = [
    "--port",
    String(port),
    "--kubeconfig",
    kubeconfigPath,
    ...(features.stateDir ? ["--state-dir", path.join(dir, "state")] : []),
    ...(features.data ? ["--data", path.join(dir, "data")] : []),
    // the run has its own Deployment simulator: the server's controller manager stays off
    ...(/--no-controllers\b/.test(features.help) ? ["--no-controllers"] : [])
  ]
  const direct = new Direct(kubeconfigPath)
  let child: Child | undefined
  let starts = 0
  let state: "running" | "frozen" | "down" = "down"
  const start = async () => {
    starts++
    child = children.spawn(`apiserver.${starts}`, "packages/testkit/src/bin/apiserver.ts", args)
    await until("the API server to answer /readyz", 60_000, async () => {
      if (!fs.existsSync(kubeconfigPath)) return false
      await direct.load()
      return (await direct.request("GET", "/readyz", { timeoutMs: 2000 })).status === 200
    }, () => child!.done ? `the API server exited: ${child!.tail.join("\n")}` : undefined)
    state = "running"
  }
  return {
    cluster: "embedded",
    direct,
    state: () => state,
    starts: () => starts,
    port: () => port,
    ca: () => direct.ca(),
    token: () => direct.token(),
    cannotRestart: features.stateDir && features.data
      ? undefined
      : "the API server has no --state-dir/--data: a restart would lose its CA, token and objects",
    runsWorkloads: false,
    start,
    freeze: () => {
      if (child === undefined) return
      children.signal(child, "SIGSTOP")
      state = "frozen"
    },
    thaw: () => {
      if (child === undefined) return
      children.signal(child, "SIGCONT")
      if (!child.done) state = "running"
    },
    restart: async (signal, downSeconds) => {
      const old = child!
      children.signal(old, signal)
      const killer = setTimeout(() => children.signal(old, "SIGKILL"), 10_000)
      await old.exited
      clearTimeout(killer)
      state = "down"
      await new Promise((resolve) => setTimeout(resolve, downSeconds * 1000))
      await start()
    },
    gone: () => child === undefined || child.done,
    describe: () => ({ cluster: "embedded", stateDir: features.stateDir, data: features.data, starts }),
    stop: async () => {
      if (child !== undefined) await children.stop(child, 5000)
    }
  }
}

const operatorAccount = "chaos-operator"

/** A real control plane in this process's scope (see the module header). */
export const real = async (dir: string, log: (line: string) => void): Promise<Server> => {
  fs.mkdirSync(dir, { recursive: true })
  const kubeconfigPath = path.join(dir, "kubeconfig")
  const scope = Effect.runSync(Scope.make())
  const Plane = Envtest.layerKube({ kubeconfigPath, log: (line) => log(`  envtest: ${line}`) })
  const Live = Simulators.layerKubelet().pipe(Layer.provideMerge(KubeClient.layer), Layer.provideMerge(Plane))
  const started = Date.now()
  const context = await Effect.runPromise(Layer.buildWithScope(Live, scope)).catch(async (e) => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  })
  const plane = Context.get(context, Envtest.Envtest)
  log(`real control plane ${plane.version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${plane.url})`)
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
  const direct = new Direct(kubeconfigPath)
  await direct.load()

  // the operators' credential: a ServiceAccount token bound to cluster-admin (valid across kube-apiserver
  // restarts: the signing key stays)
  await direct.ok("POST", "/api/v1/namespaces/default/serviceaccounts", {
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: operatorAccount } }
  })
  await direct.ok("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    body: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: operatorAccount },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: operatorAccount, namespace: "default" }]
    }
  })
  const review = await direct.ok("POST", `/api/v1/namespaces/default/serviceaccounts/${operatorAccount}/token`, {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 4 * 3600 } }
  })
  const token = String(review.status.token)

  let state: "running" | "frozen" | "down" = "running"
  let starts = 1
  let etcdRestarts = 0
  let compactions = 0
  return {
    cluster: "real",
    direct,
    state: () => state,
    starts: () => starts,
    port: () => plane.port,
    ca: () => plane.certificateAuthority,
    token: () => token,
    cannotRestart: undefined,
    runsWorkloads: true,
    start: async () => {
      // started once, with the run: a restart is restartApiServer
    },
    freeze: () => {
      Effect.runSync(plane.pause("kube-apiserver"))
      state = "frozen"
    },
    thaw: () => {
      Effect.runSync(plane.resume("kube-apiserver"))
      if (state === "frozen") state = "running"
    },
    restart: async (signal, downSeconds) => {
      state = "down"
      starts++
      await run(plane.restartApiServer({ signal, down: `${downSeconds} seconds` }))
      state = "running"
    },
    gone: () => false,
    restartEtcd: async (downSeconds) => {
      etcdRestarts++
      await run(plane.restartEtcd(`${downSeconds} seconds`))
    },
    compact: async () => {
      compactions++
      return run(plane.compactEtcd)
    },
    describe: () => ({
      cluster: "real",
      version: plane.version,
      starts,
      etcdRestarts,
      compactions,
      controllerManager: plane.controllerManager
    }),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
