/**
 * One HTTP(S) request of the benchmarks' own drivers (writes and reads around the clients measured): its status and
 * body as text.
 */
import type * as http from "node:http"
import type * as https from "node:https"

export const requestText = (
  module: typeof http | typeof https,
  url: string,
  options: http.RequestOptions,
  data?: string | undefined
) =>
  new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
    const req = module.request(url, options, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(data)
  })
