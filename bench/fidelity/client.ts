/**
 * One raw HTTPS client for both servers, so that nothing but the server differs: the same headers, the same
 * User-Agent (it names the default field manager), bodies read whole (a watch until its `timeoutSeconds` ends it).
 */
import * as Https from "node:https"

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

export interface Target {
  readonly name: "embedded" | "real"
  readonly url: string
  readonly request: (
    method: string,
    path: string,
    body: string | undefined,
    headers: Readonly<Record<string, string | number>>
  ) => Promise<Answer>
  /** Forgets the server's history (etcd compaction, `TestCluster.compact`). */
  readonly compact: () => Promise<void>
}

export interface Credentials {
  readonly url: string
  readonly ca: string
  readonly token?: string | undefined
  readonly cert?: string | undefined
  readonly key?: string | undefined
}

const USER_AGENT = "fidelity/1.0 (linux/amd64)"

/** A request function for a server; never fails on a status code, fails after 30 s without an answer. */
export const client = (credentials: Credentials): Target["request"] => {
  const agent = new Https.Agent({
    keepAlive: true,
    maxSockets: 32,
    ca: credentials.ca,
    ...(credentials.cert === undefined ? {} : { cert: credentials.cert, key: credentials.key })
  })
  const once: Target["request"] = (method, path, body, headers) =>
    new Promise((resolve, reject) => {
      const req = Https.request(`${credentials.url}${path}`, {
        method,
        agent,
        headers: {
          "user-agent": USER_AGENT,
          accept: "application/json",
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }),
          ...(credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` }),
          ...headers
        },
        timeout: 30_000
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const flat: Record<string, string> = {}
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(", ") : v
          }
          resolve({ status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) })
        })
        res.on("error", reject)
      })
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within 30 s`)))
      req.on("error", reject)
      req.end(body)
    })
  // a kept-alive socket the server closed as the request went out (ECONNRESET before any answer): send it again
  return (method, path, body, headers) =>
    once(method, path, body, headers).catch((e: NodeJS.ErrnoException) =>
      e.code === "ECONNRESET" || e.code === "EPIPE" ? once(method, path, body, headers) : Promise.reject(e)
    )
}

/** The client certificate and key of a kubeconfig written by Envtest (base64 `*-data` fields). */
export const kubeconfigCredentials = (kubeconfig: string): { readonly cert: string; readonly key: string } => {
  const field = (name: string): string => {
    const match = new RegExp(`${name}:\\s*(\\S+)`).exec(kubeconfig)
    if (match === null) throw new Error(`kubeconfig has no ${name}`)
    return Buffer.from(match[1]!, "base64").toString("utf8")
  }
  return { cert: field("client-certificate-data"), key: field("client-key-data") }
}
