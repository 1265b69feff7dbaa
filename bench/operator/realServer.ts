/**
 * The real API server of the end-to-end benchmark, driven from its own process like `server.ts` (the same IPC
 * messages): a fresh etcd + kube-apiserver v1.36 from the testkit's `Envtest` with no kube-controller-manager (so
 * Deployments create no ReplicaSets or Pods, and there is no garbage collector), the WebApp CRD and the `bench`
 * namespace installed; the operators get its admin kubeconfig (a client certificate of `system:masters`, which API
 * Priority and Fairness exempts; the file is 0600, in the control plane's temporary directory).
 *
 * `create` writes the WebApps through the API, `REAL_WRITERS` (32) at once over one keep-alive pool (copies put
 * straight into etcd, as bench/kube.ts does for ConfigMaps, were tried: at 1,000 WebApps some never converged, not
 * looked into). Convergence — `status.observedGeneration`
 * equals the generation, the Deployment and the Service exist with the WebApp as their controller — is followed by
 * three watches of the namespace (WebApps, Deployments, Services; opened before any object exists), never by
 * polling objects. `requests` reports the server's request count (the sum of its `apiserver_request_total`, read
 * from `/metrics`), the CPU seconds of the kube-apiserver and etcd processes (`/proc/<pid>/stat`) and the converged
 * count. Faults are not supported here (the real server has no fault rules): `faults` with a probability > 0 fails.
 */
import * as Resource from "@reconcile/kube/Resource"
import * as Envtest from "@reconcile/testkit/Envtest"
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as https from "node:https"
import { performance } from "node:perf_hooks"
import { requestText } from "../support/http.js"
import { makeTracker } from "./convergence.js"
import type { FromServer, ToServer } from "./server.js"
import { GROUP, NAMESPACE, PLURAL, VERSION, WebApp, webApp } from "./shared.js"

const REAL_WRITERS = 32

const send = (message: FromServer) => process.send!(message)

/** CPU seconds (user + system) of a process from /proc/<pid>/stat, or NaN. */
const cpuOf = (pid: number | undefined): number => {
  if (pid === undefined) return NaN
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state): utime is field 14, stime field 15
    return (Number(fields[11]) + Number(fields[12])) / 100 // USER_HZ is 100 on Linux
  } catch {
    return NaN
  }
}

/** The pid of the process whose command line has `binary` and `needle` (the control plane's own processes). */
const findPid = (binary: string, needle: string): number | undefined => {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      if (argv[0]?.endsWith(binary) && argv.some((a) => a.includes(needle))) return Number(entry)
    } catch {
      // gone meanwhile
    }
  }
  return undefined
}

const credentials = (kubeconfig: string) => {
  const field = (name: string): string => {
    const match = new RegExp(`${name}:\\s*(\\S+)`).exec(kubeconfig)
    if (match === null) throw new Error(`kubeconfig has no ${name}`)
    return Buffer.from(match[1]!, "base64").toString("utf8")
  }
  return { cert: field("client-certificate-data"), key: field("client-key-data") }
}

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const stop = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    process.exit(0)
  }
  process.on("disconnect", () => void stop())
  process.on("SIGTERM", () => void stop())
  const plane = await Effect.runPromise(
    Scope.provide(scope)(Envtest.make({
      controllers: false,
      // Envtest's /24 holds 253 Service IPs: every WebApp has a Service
      apiServerFlags: ["--service-cluster-ip-range=10.96.0.0/12"]
    }))
  ).catch(
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : String(e))
      process.exit(2)
    }
  )
  const apiserverPid = findPid("kube-apiserver", `--secure-port=${plane.port}`)
  const etcdPid = findPid("etcd", new URL(plane.etcdUrl).host)
  const { cert, key } = credentials(plane.kubeconfig)
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: REAL_WRITERS,
    ca: plane.certificateAuthority,
    cert,
    key
  })
  const watchAgent = new https.Agent({ keepAlive: false, ca: plane.certificateAuthority, cert, key })
  const call = (method: string, p: string, body?: unknown, contentType = "application/json") => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    return requestText(https, `${plane.url}${p}`, {
      method,
      agent,
      headers: { accept: "application/json", ...(data !== undefined ? { "content-type": contentType } : {}) }
    }, data)
  }
  const ok = async (method: string, p: string, body?: unknown) => {
    let answer = await call(method, p, body)
    // a new CRD's storage answers 429 for a moment ("storage is (re)initializing")
    for (let tries = 0; answer.status === 429 && tries < 60; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      answer = await call(method, p, body)
    }
    if (answer.status >= 300) throw new Error(`${method} ${p}: ${answer.status} ${answer.body.slice(0, 300)}`)
    return answer.body
  }

  await Effect.runPromise(plane.installCrds([Resource.crdManifest(WebApp)]))
  await ok("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } })

  // convergence, from three watches of the namespace
  const tracker = makeTracker(send)
  /** List then watch `p` from the list's resourceVersion, again from the last one seen whenever a watch ends. */
  const follow = async (p: string, onObject: (object: any, deleted: boolean) => void) => {
    const list = JSON.parse(await ok("GET", p)) as {
      readonly metadata: { readonly resourceVersion: string }
      readonly items: ReadonlyArray<any>
    }
    for (const item of list.items) onObject(item, false)
    let rv = list.metadata.resourceVersion
    const watch = () => {
      const req = https.get(`${plane.url}${p}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`, {
        agent: watchAgent,
        headers: { accept: "application/json" }
      }, (res) => {
        let buffer = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          buffer += chunk
          let newline: number
          while ((newline = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, newline)
            buffer = buffer.slice(newline + 1)
            if (line.length === 0) continue
            const event = JSON.parse(line) as { readonly type: string; readonly object: any }
            if (event.type === "ERROR") continue // 410 Gone: not expected within one run
            rv = event.object.metadata.resourceVersion
            if (event.type !== "BOOKMARK") onObject(event.object, event.type === "DELETED")
          }
        })
        res.on("end", () => setTimeout(watch, 10))
        res.on("error", () => setTimeout(watch, 100))
      })
      req.on("error", () => setTimeout(watch, 100))
    }
    watch()
  }
  const ns = `namespaces/${NAMESPACE}`
  await follow(`/apis/${GROUP}/${VERSION}/${ns}/${PLURAL}`, tracker.webApp)
  await follow(`/apis/apps/v1/${ns}/deployments`, tracker.deployment)
  await follow(`/api/v1/${ns}/services`, tracker.service)

  /** The sum of the server's apiserver_request_total (every request it answered; this scrape counts too). */
  const requestTotal = async () => {
    const text = await ok("GET", "/metrics")
    let sum = 0
    for (const line of text.split("\n")) {
      if (line.startsWith("apiserver_request_total{")) sum += Number(line.slice(line.lastIndexOf(" ") + 1))
    }
    return sum
  }
  const sendRequests = async () => {
    const requests = await requestTotal()
    send({
      op: "requests",
      requests,
      failed: 0,
      cpuSeconds: cpuOf(apiserverPid),
      etcdCpuSeconds: cpuOf(etcdPid),
      converged: tracker.converged("app")
    })
  }

  /** `count` calls of `f`, `inFlight` at once. */
  const all = async (count: number, inFlight: number, f: (i: number) => Promise<unknown>) => {
    let next = 0
    const worker = async () => {
      while (next < count) await f(next++)
    }
    await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker))
  }
  const path = `/apis/${GROUP}/${VERSION}/${ns}/${PLURAL}`
  const name = (prefix: string, i: number) => `${prefix}-${String(i).padStart(5, "0")}`
  const create = (prefix: string, count: number) =>
    all(count, REAL_WRITERS, (i) => ok("POST", path, webApp(name(prefix, i))))

  process.on("message", (message: ToServer) => {
    const fail = (e: unknown) => {
      console.error(e instanceof Error ? e.message : String(e))
      process.exit(3)
    }
    switch (message.op) {
      case "create": {
        const started = performance.now()
        tracker.expect(message.prefix, message.count, started)
        create(message.prefix, message.count).then(
          () => send({ op: "created", prefix: message.prefix, millis: performance.now() - started }),
          fail
        )
        break
      }
      case "faults":
        if (message.probability > 0) fail(new Error("the real API server runs without faults"))
        else sendRequests().catch(fail)
        break
      case "requests":
        sendRequests().catch(fail)
        break
    }
  })
  send({ op: "ready", kubeconfigPath: plane.kubeconfigPath, url: plane.url, version: plane.version })
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : String(e))
  process.exit(1)
})
