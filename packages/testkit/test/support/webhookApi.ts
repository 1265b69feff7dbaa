/**
 * The API server under test for the webhook suites (`AdmissionWebhooks.test.ts`, `ConversionWebhooks.test.ts`),
 * over HTTPS: the embedded `TestApiServer`, or with `RECONCILE_TEST_CLUSTER=real` the real kube-apiserver (started
 * with `--enable-aggregator-routing`, so a webhook Service resolves to its Endpoints as on the embedded cluster),
 * beside the suite's own webhook server.
 */
import { Context, Effect, Layer } from "effect"
import type * as Https from "node:https"
import * as NodeHttps from "node:https"
import type { AddressInfo } from "node:net"
import { Envtest, TestApiServer } from "../../src/index.js"

type Obj = Record<string, any>

/** Whether the suites run on the real control plane. */
export const onRealCluster = process.env.RECONCILE_TEST_CLUSTER === "real"

/** An answer of the server: its code, its body (parsed, or `{ text }`), its `Warning` headers. */
export interface Reply {
  readonly status: number
  readonly body: Obj
  readonly warnings: ReadonlyArray<string>
}

/** The server under test, and the port of the suite's webhook server. */
export class Api extends Context.Service<Api, {
  readonly send: (method: string, path: string, body?: unknown, contentType?: string) => Effect.Effect<Reply>
  readonly webhookPort: number
  readonly kubeconfigPath: string
}>()("test/WebhookApi") {}

const warningsOf = (header: string | Array<string> | undefined): Array<string> => {
  const text = header === undefined ? "" : Array.isArray(header) ? header.join(", ") : header
  return [...text.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string)
}

const parse = (text: string): Obj => {
  try {
    return JSON.parse(text)
  } catch {
    return { text }
  }
}

/** The embedded cluster's HTTPS server, with the webhook server `webhooks` starts. */
const embedded = <E, R>(webhooks: Effect.Effect<Https.Server, E, R>) =>
  Layer.effect(
    Api,
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const webhook = yield* webhooks
      return {
        webhookPort: (webhook.address() as AddressInfo).port,
        kubeconfigPath: server.kubeconfigPath,
        send: (method, path, body, contentType = "application/json") =>
          Effect.promise(() =>
            new Promise<Reply>((resolve, reject) => {
              const text = body === undefined ? undefined : JSON.stringify(body)
              const req = NodeHttps.request({
                host: "127.0.0.1",
                port: server.port,
                method,
                path,
                ca: server.certificateAuthority,
                headers: {
                  authorization: `Bearer ${server.token}`,
                  accept: "application/json",
                  ...(text !== undefined ? { "content-type": contentType } : {})
                }
              }, (res) => {
                const chunks: Array<Buffer> = []
                res.on("data", (c: Buffer) => chunks.push(c))
                res.on("end", () =>
                  resolve({
                    status: res.statusCode ?? 0,
                    body: parse(Buffer.concat(chunks).toString("utf8")),
                    warnings: warningsOf(res.headers.warning)
                  }))
              })
              req.on("error", reject)
              req.end(text)
            })
          )
      }
    })
  ).pipe(Layer.provide(TestApiServer.layerWithCluster()))

/** The real control plane, with the webhook server `webhooks` starts. */
const real = <E, R>(webhooks: Effect.Effect<Https.Server, E, R>) =>
  Layer.effect(
    Api,
    Effect.gen(function*() {
      const plane = yield* Envtest.Envtest
      const webhook = yield* webhooks
      return {
        webhookPort: (webhook.address() as AddressInfo).port,
        kubeconfigPath: plane.kubeconfigPath,
        send: (method, path, body, contentType = "application/json") =>
          Effect.map(
            Effect.orDie(plane.request(method, path, body, { "content-type": contentType })),
            (a) => ({ status: a.status, body: parse(a.body), warnings: warningsOf(a.headers.warning) })
          )
      }
    })
  ).pipe(Layer.provide(Envtest.layer({ apiServerFlags: ["--enable-aggregator-routing=true"] })), Layer.orDie)

/** The server the suite runs on (`RECONCILE_TEST_CLUSTER`), beside the webhook server `webhooks` starts. */
export const layer = <E, R>(webhooks: Effect.Effect<Https.Server, E, R>) =>
  onRealCluster ? real(webhooks) : embedded(webhooks)

/** What a test's webhook answers: a JSON body, or a raw text with a code, optionally after a delay. */
export interface Answer {
  readonly code?: number
  readonly text?: string
  readonly json?: unknown
  readonly delay?: number
}

/**
 * A webhook server of a test: HTTPS on 127.0.0.1 with the serving certificate `tls`, answering each JSON review
 * POSTed to it with `answer(path, review)`; closed (its connections too) with the scope.
 */
export const reviewServer = (
  tls: { readonly cert: string; readonly key: string },
  answer: (path: string, review: Obj) => Answer
) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<Https.Server>((resolve) => {
        const server = NodeHttps.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const path = new URL(req.url ?? "/", "https://127.0.0.1").pathname
            const a = answer(path, JSON.parse(Buffer.concat(chunks).toString("utf8")))
            const send = () => {
              if (res.destroyed) return
              if (a.text !== undefined) {
                res.writeHead(a.code ?? 200, { "Content-Type": "text/plain" })
                return void res.end(a.text)
              }
              res.writeHead(a.code ?? 200, { "Content-Type": "application/json" })
              res.end(JSON.stringify(a.json))
            }
            if (a.delay !== undefined) setTimeout(send, a.delay)
            else send()
          })
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
    ),
    (server) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

/** A port nothing listens on (bound, then closed). */
export const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const s = NodeHttps.createServer()
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port
      s.close(() => resolve(port))
    })
  })
)
