/**
 * The harness's own connection to the API server, never through the fault proxy: client-node's `KubeConfig`
 * loads the server's kubeconfig (CA and bearer token) and `node:https` sends each request on a fresh
 * connection with a hard timeout. Used for the load, the Deployment simulator, the observer and the final
 * checks — it must keep working while the operators' connections are being broken.
 */
import { KubeConfig } from "@kubernetes/client-node"
import * as fs from "node:fs"
import * as https from "node:https"

/** One JSON answer: the status and the parsed body (`undefined` when empty or not JSON). */
export interface Answer {
  readonly status: number
  readonly body: any
}

/** The request did not get an answer (connection refused or reset, timeout): it may or may not have been applied. */
export class NoAnswer extends Error {
  constructor(readonly method: string, readonly path: string, readonly reason: string) {
    super(`${method} ${path}: no answer (${reason})`)
  }
}

/** Options of {@link Direct.request}. */
export interface RequestOptions {
  readonly body?: unknown
  readonly contentType?: string | undefined
  /** Milliseconds until the request is abandoned (default 5000). */
  readonly timeoutMs?: number | undefined
}

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The server's address, CA and token, read again from the kubeconfig whenever it changes. */
export class Direct {
  private config: { readonly text: string; readonly server: URL; readonly options: https.RequestOptions } | undefined

  constructor(readonly kubeconfigPath: string) {}

  /** The kubeconfig's text as last loaded. */
  get kubeconfig(): string {
    return this.config?.text ?? ""
  }

  /** (Re)loads the kubeconfig when its text changed since the last load. */
  async load(): Promise<void> {
    const text = fs.readFileSync(this.kubeconfigPath, "utf8")
    if (this.config?.text === text) return
    const kc = new KubeConfig()
    kc.loadFromString(text)
    const cluster = kc.getCurrentCluster()
    if (cluster === null) throw new Error(`${this.kubeconfigPath}: no current cluster`)
    const options: https.RequestOptions = {}
    await kc.applyToHTTPSOptions(options)
    this.config = { text, server: new URL(cluster.server), options }
  }

  /** The bearer token of the kubeconfig (for the operators' kubeconfigs; never printed). */
  token(): string {
    const auth = (this.config?.options.headers as Record<string, string> | undefined)?.Authorization ?? ""
    return auth.replace(/^Bearer /, "")
  }

  /** The server's CA (PEM). */
  ca(): string {
    const ca = this.config?.options.ca
    return ca === undefined ? "" : Buffer.isBuffer(ca) ? ca.toString("utf8") : String(ca)
  }

  /** The server's port. */
  port(): number {
    return Number(this.config?.server.port)
  }

  /** Sends one request; resolves with any HTTP answer, rejects with {@link NoAnswer} without one. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const config = this.config
    if (config === undefined) return Promise.reject(new NoAnswer(method, path, "kubeconfig not loaded"))
    const timeoutMs = options.timeoutMs ?? 5000
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), "utf8")
    return new Promise((resolve, reject) => {
      const req = https.request({
        ...config.options,
        host: config.server.hostname,
        port: config.server.port,
        method,
        path,
        agent: false,
        headers: {
          ...(config.options.headers as Record<string, string>),
          accept: "application/json",
          ...(payload === undefined ? {} : {
            "content-type": options.contentType ?? "application/json",
            "content-length": String(payload.length)
          })
        }
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          clearTimeout(timer)
          const text = Buffer.concat(chunks).toString("utf8")
          resolve({ status: res.statusCode ?? 0, body: parseJson(text) })
        })
        res.on("error", (e) => fail(e.message))
      })
      const fail = (reason: string) => {
        clearTimeout(timer)
        req.destroy()
        reject(new NoAnswer(method, path, reason))
      }
      const timer = setTimeout(() => fail(`timeout after ${timeoutMs} ms`), timeoutMs)
      req.on("error", (e) => fail(e.message))
      req.end(payload)
    })
  }

  /** Like {@link request}, but a status outside 2xx rejects too (with the server's message). */
  async ok(method: string, path: string, options: RequestOptions = {}): Promise<any> {
    const answer = await this.request(method, path, options)
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(`${method} ${path}: ${answer.status} ${answer.body?.message ?? ""}`)
    }
    return answer.body
  }

  /**
   * A watch: calls `onLine` with each parsed event until the stream ends, `idleMs` pass without a byte, or
   * `signal` aborts. Resolves when it ends for any reason (the caller relists).
   */
  watch(path: string, onEvent: (event: any) => void, idleMs: number, signal: AbortSignal): Promise<void> {
    const config = this.config
    if (config === undefined) return Promise.resolve()
    return new Promise((resolve) => {
      let buffered = ""
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener("abort", done)
        req.destroy()
        resolve()
      }
      const arm = () => {
        clearTimeout(timer)
        timer = setTimeout(done, idleMs)
      }
      const req = https.request({
        ...config.options,
        host: config.server.hostname,
        port: config.server.port,
        method: "GET",
        path,
        agent: false,
        headers: { ...(config.options.headers as Record<string, string>), accept: "application/json" }
      }, (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          return done()
        }
        arm()
        res.setEncoding("utf8")
        res.on("data", (text: string) => {
          arm()
          buffered += text
          for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
            const line = buffered.slice(0, nl).trim()
            buffered = buffered.slice(nl + 1)
            if (line === "") continue
            try {
              onEvent(JSON.parse(line))
            } catch {
              return done()
            }
          }
        })
        res.on("end", done)
        res.on("error", done)
      })
      req.on("error", done)
      signal.addEventListener("abort", done)
      arm()
      req.end()
    })
  }
}
