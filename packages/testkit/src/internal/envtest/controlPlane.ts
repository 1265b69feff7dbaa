/**
 * A real control plane on 127.0.0.1: etcd, kube-apiserver and (when its binary is there) kube-controller-manager,
 * with a fresh CA, serving and client certificates and a service-account key generated per start (files 0600 in a
 * 0700 directory, removed on stop), as controller-runtime's envtest starts them. Every wait is bounded and uses
 * the wall clock (the processes are real, whatever clock the caller's Effects run on).
 */
import { type Certificate, issue } from "@reconcile/kube/Certificates"
import { generateKeyPairSync } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Assets } from "./assets.js"
import * as Processes from "./processes.js"

/** Why the control plane did not come up, with the failing component's log. */
export class StartError extends Error {
  constructor(
    readonly reason: "StartFailed" | "NotReady" | "PortTaken",
    readonly component: string,
    message: string,
    readonly log: string
  ) {
    super(message)
  }
}

/** The controllers of kube-controller-manager that run by default (no nodes, so nothing node-bound). */
export const defaultControllers: ReadonlyArray<string> = [
  "garbage-collector-controller",
  "namespace-controller",
  "deployment-controller",
  "replicaset-controller",
  "statefulset-controller",
  "job-controller",
  "cronjob-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  "endpointslice-controller",
  "resourcequota-controller",
  "disruption-controller",
  "horizontal-pod-autoscaler-controller",
  "ttl-after-finished-controller",
  "clusterrole-aggregation-controller",
  "root-ca-certificate-publisher-controller"
]

export interface StartOptions {
  readonly assets: Assets
  /** Where to write the admin kubeconfig (default: in the control plane's directory). */
  readonly kubeconfigPath?: string | undefined
  /** kube-controller-manager's controllers, `false` for none; default {@link defaultControllers}. */
  readonly controllers?: ReadonlyArray<string> | false | undefined
  /** Extra `--flag=value` arguments for kube-apiserver (they come after ours and win). */
  readonly apiServerFlags?: ReadonlyArray<string> | undefined
  /** How long each component may take to become ready (default 60 s). */
  readonly startTimeoutMillis?: number | undefined
  /** Called with one line per step. */
  readonly log?: ((line: string) => void) | undefined
}

/** An HTTP answer of {@link ControlPlane.request}. */
export interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** A running control plane. */
/** A process of the control plane. */
export type Component = "etcd" | "kube-apiserver" | "kube-controller-manager"

export interface ControlPlane {
  readonly url: string
  readonly port: number
  readonly dir: string
  readonly kubeconfigPath: string
  readonly kubeconfig: string
  readonly certificateAuthority: string
  readonly admin: Certificate
  readonly etcdUrl: string
  /** `/version`'s `gitVersion`. */
  readonly version: string
  /** Whether kube-controller-manager runs (the garbage collector and namespace controller are real). */
  readonly controllerManager: boolean
  /** A request as the admin user (system:masters). */
  readonly request: (
    method: string,
    path: string,
    body?: string | undefined,
    headers?: Http.OutgoingHttpHeaders
  ) => Promise<Answer>
  /** A request to etcd's JSON gateway (`/v3/...`). */
  readonly etcdRequest: (path: string, body: unknown) => Promise<unknown>
  /**
   * Restart kube-apiserver (same port, certificates and etcd): stopped gracefully (SIGTERM) or killed (SIGKILL),
   * started again after `downMillis`.
   */
  readonly restartApiServer: (options?: {
    readonly signal?: "SIGTERM" | "SIGKILL" | undefined
    readonly downMillis?: number | undefined
  }) => Promise<void>
  /** Kill etcd (SIGKILL) and start it again on its data directory. */
  readonly restartEtcd: (downMillis?: number) => Promise<void>
  /** Compact etcd's history up to its current revision (watches from before it get 410 from the apiserver). */
  readonly compactEtcd: () => Promise<number>
  /** Freezes (SIGSTOP) or continues (SIGCONT) a component: its connections stay open and go silent. */
  readonly signal: (component: Component, signal: "SIGSTOP" | "SIGCONT") => void
  /** The last lines of a component's log. */
  readonly logs: (component: Component, lines?: number) => string
  readonly stop: () => Promise<void>
}

/** A free TCP port on 127.0.0.1 (bound, then released). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const sleep = (millis: number) => new Promise<void>((r) => setTimeout(r, millis))

const write = (file: string, content: string) => Fs.writeFileSync(file, content, { mode: 0o600 })

/** Polls `check` until it answers true, the process ends, or `timeout` passes. */
const waitFor = async (
  proc: Processes.Proc,
  what: string,
  timeoutMillis: number,
  check: () => Promise<boolean>
): Promise<void> => {
  const deadline = Date.now() + timeoutMillis
  let last = ""
  for (;;) {
    if (!proc.isRunning()) {
      const log = Processes.tail(proc)
      const portTaken = /address already in use/i.test(log)
      throw new StartError(
        portTaken ? "PortTaken" : "StartFailed",
        proc.name,
        `${proc.name} exited during start (${await proc.exited})${portTaken ? ": a port it needs is taken" : ""}`,
        log
      )
    }
    try {
      if (await check()) return
    } catch (e) {
      last = e instanceof Error ? e.message : String(e)
    }
    if (Date.now() > deadline) {
      throw new StartError(
        "NotReady",
        proc.name,
        `${proc.name} was not ${what} within ${timeoutMillis / 1000} s${last !== "" ? ` (last: ${last})` : ""}`,
        Processes.tail(proc)
      )
    }
    await sleep(100)
  }
}

const httpJson = (url: string, body?: unknown): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = Http.request(url, {
      method: data === undefined ? "GET" : "POST",
      headers: data === undefined ? {} : { "content-type": "application/json" },
      timeout: 5_000
    }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on("timeout", () => req.destroy(new Error("timed out")))
    req.on("error", reject)
    req.end(data)
  })

const kubeconfigYaml = (url: string, ca: string, user: Certificate): string => {
  const b64 = (s: string) => Buffer.from(s).toString("base64")
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: envtest",
    "  cluster:",
    `    server: ${url}`,
    `    certificate-authority-data: ${b64(ca)}`,
    "users:",
    "- name: envtest-admin",
    "  user:",
    `    client-certificate-data: ${b64(user.cert)}`,
    `    client-key-data: ${b64(user.key)}`,
    "contexts:",
    "- name: envtest",
    "  context:",
    "    cluster: envtest",
    "    user: envtest-admin",
    "    namespace: default",
    "current-context: envtest",
    ""
  ].join("\n")
}

const prefix = "reconcile-envtest-"

/**
 * Removes the directories of control planes whose process died without cleaning up (SIGKILL): their processes
 * died with them (parent-death signal), their keys and etcd data would stay otherwise.
 */
const sweep = () => {
  for (const name of Fs.readdirSync(Os.tmpdir())) {
    if (!name.startsWith(prefix)) continue
    const dir = Path.join(Os.tmpdir(), name)
    try {
      const pid = Number(Fs.readFileSync(Path.join(dir, "owner.pid"), "utf8"))
      process.kill(pid, 0)
    } catch (e) {
      // no pid file yet (a start in progress elsewhere) is left alone; ESRCH: its owner is gone
      if ((e as NodeJS.ErrnoException).code === "ESRCH") Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Starts the control plane; on any failure everything started so far is stopped before the error. */
export const start = async (options: StartOptions): Promise<ControlPlane> => {
  const say = options.log ?? (() => {})
  const timeout = options.startTimeoutMillis ?? 60_000
  sweep()
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  Fs.chmodSync(dir, 0o700)
  write(Path.join(dir, "owner.pid"), String(process.pid))
  const procs: Record<string, Processes.Proc | undefined> = {}
  const stopAll = async () => {
    for (const name of ["kube-controller-manager", "kube-apiserver", "etcd"]) {
      const p = procs[name]
      if (p !== undefined) await Processes.stop(p)
    }
  }
  try {
    // certificates: a CA, the apiserver's serving certificate, an admin client certificate, a service-account key
    const ca = issue({ commonName: "reconcile-envtest-ca", ca: true })
    const serving = issue({
      commonName: "kube-apiserver",
      usages: ["server"],
      ips: ["127.0.0.1", "10.0.0.1"],
      dnsNames: ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
      issuer: ca
    })
    const admin = issue({
      commonName: "envtest-admin",
      organizations: ["system:masters"],
      usages: ["client"],
      issuer: ca
    })
    const sa = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
    const pki = Path.join(dir, "pki")
    Fs.mkdirSync(pki, { mode: 0o700 })
    const file = (name: string) => Path.join(pki, name)
    write(file("ca.crt"), ca.cert)
    write(file("apiserver.crt"), serving.cert)
    write(file("apiserver.key"), serving.key)
    write(file("sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }).toString())
    write(file("sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }).toString())

    const [etcdPort, peerPort, apiPort, kcmPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort()
    ]
    const etcdUrl = `http://127.0.0.1:${etcdPort}`
    const url = `https://127.0.0.1:${apiPort}`

    // etcd
    const etcdArgs = [
      "--name=envtest",
      `--data-dir=${Path.join(dir, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=envtest=http://127.0.0.1:${peerPort}`,
      "--unsafe-no-fsync=true",
      "--log-level=warn"
    ]
    const startEtcd = async () => {
      procs.etcd = Processes.spawn("etcd", options.assets.etcd, etcdArgs, Path.join(dir, "etcd.log"))
      await waitFor(procs.etcd, "healthy", timeout, async () => {
        const res = await httpJson(`${etcdUrl}/health`)
        return res.status === 200 && /"health":\s*"true"/.test(res.body)
      })
    }
    say(`starting etcd on ${etcdUrl}`)
    await startEtcd()

    // kube-apiserver
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${pki}`,
      `--secure-port=${apiPort}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      "--authorization-mode=RBAC",
      `--client-ca-file=${file("ca.crt")}`,
      `--tls-cert-file=${file("apiserver.crt")}`,
      `--tls-private-key-file=${file("apiserver.key")}`,
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${file("sa.pub")}`,
      `--service-account-signing-key-file=${file("sa.key")}`,
      // as envtest: pods need no ServiceAccount token mounted (there are no kubelets)
      "--disable-admission-plugins=ServiceAccount",
      // a Node's InternalIP (the kubelet stand-in registers 127.0.0.1), never its hostname: a kubelet request (logs,
      // exec) then stays on loopback and is refused, instead of resolving the node's name through the network's DNS
      "--kubelet-preferred-address-types=InternalIP",
      ...(options.apiServerFlags ?? [])
    ]
    const request: ControlPlane["request"] = (method, path, body, headers) =>
      new Promise((resolve, reject) => {
        const req = Https.request(`${url}${path}`, {
          method,
          ca: ca.cert,
          cert: admin.cert,
          key: admin.key,
          headers: {
            accept: "application/json",
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...headers
          },
          timeout: 30_000
        }, (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (c: string) => (text += c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
        })
        req.on("timeout", () => req.destroy(new Error("timed out")))
        req.on("error", reject)
        req.end(body)
      })
    const startApiServer = async () => {
      procs["kube-apiserver"] = Processes.spawn(
        "kube-apiserver",
        options.assets.kubeApiserver,
        apiArgs,
        Path.join(dir, "kube-apiserver.log")
      )
      await waitFor(procs["kube-apiserver"], "ready (/readyz)", timeout, async () => {
        const res = await request("GET", "/readyz")
        return res.status === 200
      })
    }
    say(`starting kube-apiserver on ${url}`)
    await startApiServer()
    const version = (JSON.parse((await request("GET", "/version")).body) as { gitVersion: string }).gitVersion

    const kubeconfig = kubeconfigYaml(url, ca.cert, admin)
    const kubeconfigPath = options.kubeconfigPath ?? Path.join(dir, "kubeconfig")
    const adminKubeconfig = Path.join(pki, "admin.kubeconfig")
    write(adminKubeconfig, kubeconfig)

    // kube-controller-manager (the real garbage collector, namespace controller and workload controllers)
    const controllers = options.controllers ?? defaultControllers
    const kcm = options.assets.kubeControllerManager
    const controllerManager = kcm !== undefined && controllers !== false && controllers.length > 0
    if (controllerManager) {
      say(`starting kube-controller-manager (${(controllers as ReadonlyArray<string>).length} controllers)`)
      procs["kube-controller-manager"] = Processes.spawn("kube-controller-manager", kcm!, [
        `--kubeconfig=${adminKubeconfig}`,
        `--authentication-kubeconfig=${adminKubeconfig}`,
        `--authorization-kubeconfig=${adminKubeconfig}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        `--secure-port=${kcmPort}`,
        `--cert-dir=${Path.join(dir, "kcm")}`,
        `--controllers=${(controllers as ReadonlyArray<string>).join(",")}`,
        `--service-account-private-key-file=${file("sa.key")}`,
        `--root-ca-file=${file("ca.crt")}`,
        "--use-service-account-credentials=false",
        "--concurrent-gc-syncs=20",
        "--concurrent-namespace-syncs=10"
      ], Path.join(dir, "kube-controller-manager.log"))
      await waitFor(
        procs["kube-controller-manager"],
        "healthy (/healthz)",
        timeout,
        () =>
          new Promise<boolean>((resolve, reject) => {
            const req = Https.request(`https://127.0.0.1:${kcmPort}/healthz`, {
              rejectUnauthorized: false,
              timeout: 5_000
            }, (res) => {
              res.resume()
              resolve(res.statusCode === 200)
            })
            req.on("error", reject)
            req.end()
          })
      )
    }

    // the user's kubeconfig last: once it exists, every component is up
    Fs.mkdirSync(Path.dirname(kubeconfigPath), { recursive: true, mode: 0o700 })
    write(kubeconfigPath, kubeconfig)
    Fs.chmodSync(kubeconfigPath, 0o600)

    return {
      url,
      port: apiPort,
      dir,
      kubeconfigPath,
      kubeconfig,
      certificateAuthority: ca.cert,
      admin,
      etcdUrl,
      version,
      controllerManager,
      request,
      etcdRequest: async (path, body) => JSON.parse((await httpJson(`${etcdUrl}${path}`, body)).body) as unknown,
      restartApiServer: async (restart) => {
        const proc = procs["kube-apiserver"]!
        await (restart?.signal === "SIGKILL" ? Processes.kill(proc) : Processes.stop(proc))
        if ((restart?.downMillis ?? 0) > 0) await sleep(restart!.downMillis!)
        await startApiServer()
      },
      restartEtcd: async (downMillis = 0) => {
        await Processes.kill(procs.etcd!)
        if (downMillis > 0) await sleep(downMillis)
        await startEtcd()
      },
      compactEtcd: async () => {
        const range = await httpJson(`${etcdUrl}/v3/kv/range`, { key: Buffer.from("/").toString("base64") })
        const revision = Number((JSON.parse(range.body) as { header: { revision: string } }).header.revision)
        await httpJson(`${etcdUrl}/v3/kv/compaction`, { revision: String(revision), physical: true })
        return revision
      },
      signal: (component, signal) => {
        const p = procs[component]
        if (p !== undefined) Processes.signal(p, signal)
      },
      logs: (component, lines) => {
        const p = procs[component]
        return p === undefined ? "(not running)" : Processes.tail(p, lines)
      },
      stop: async () => {
        await stopAll()
        Fs.rmSync(dir, { recursive: true, force: true })
        // a credential for a server that is gone
        Fs.rmSync(kubeconfigPath, { force: true })
      }
    }
  } catch (e) {
    await stopAll()
    Fs.rmSync(dir, { recursive: true, force: true })
    throw e
  }
}
