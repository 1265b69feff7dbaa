/**
 * A raw HTTPS request to a TestApiServer (bearer token, its CA), for tests that look at bytes and headers no client
 * library shows: status, content type and the body as bytes. `untilBytes` ends a streaming answer (a watch) once
 * the bytes so far satisfy it.
 */
import { Effect } from "effect"
import * as Https from "node:https"
import type { TestApiServer } from "../../src/index.js"

/** The media type of Kubernetes' protobuf encoding. */
export const PROTO = "application/vnd.kubernetes.protobuf"

/** What came back. */
export interface Reply {
  readonly status: number
  readonly contentType: string
  readonly body: Buffer
}

/** Sends one request and collects the answer (see the module comment). */
export const request = (
  server: TestApiServer.TestApiServer.Service,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Uint8Array | string,
  untilBytes?: (bytes: Buffer) => boolean
) =>
  Effect.promise(() =>
    new Promise<Reply>((resolve, reject) => {
      const req = Https.request(
        `${server.url}${path}`,
        {
          method,
          ca: server.certificateAuthority,
          headers: {
            authorization: `Bearer ${server.token}`,
            ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
            ...headers
          }
        },
        (res) => {
          const chunks: Array<Buffer> = []
          const done = () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers["content-type"]),
              body: Buffer.concat(chunks)
            })
          res.on("data", (c: Buffer) => {
            chunks.push(c)
            if (untilBytes?.(Buffer.concat(chunks))) {
              done()
              req.destroy()
            }
          })
          res.on("end", done)
        }
      )
      req.on("error", (e) => untilBytes === undefined ? reject(e) : undefined)
      if (body !== undefined) req.write(body)
      req.end()
    })
  )
