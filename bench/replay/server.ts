/**
 * The replay server (issue 15): a child process that serves pre-serialized list pages and streams pre-serialized
 * watch events over HTTPS at wire speed, so a benchmark measures the client, not the server.
 *
 * It speaks just enough of the API server's protocol for our Informer and client-node's `makeInformer`:
 * `GET /api/v1/namespaces/NS` (the namespace exists), `GET /api/v1/namespaces/NS/configmaps` with `limit` and
 * `continue` (pages with `resourceVersion`, `continue`, `remainingItemCount`), and the same path with `watch=true`
 * from a `resourceVersion` (the events after it, a BOOKMARK at the end when `allowWatchBookmarks` is set, then the
 * connection stays open until the client closes it or `timeoutSeconds` pass). Every byte it sends is built before
 * the clients start: a request costs a lookup and one `write`.
 *
 * The parent sends datasets over IPC (see `./client.ts`): `{ op: "list", namespace, count, template }` (N objects
 * cloned from a template object, their pages for the limits given), `{ op: "watch", namespace, objects, events,
 * template }` (an empty list at resourceVersion R, then `events` MODIFIED events of `objects` objects after R).
 */
import { selfSigned } from "@reconcile/kube/Certificates"
import * as fs from "node:fs"
import type { ServerResponse } from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"

type Json = any

export type Command =
  | {
    readonly op: "list"
    readonly namespace: string
    readonly count: number
    readonly template: Json
    readonly limits: ReadonlyArray<number>
  }
  | {
    readonly op: "watch"
    readonly namespace: string
    readonly objects: number
    readonly events: number
    readonly template: Json
  }
  | { readonly op: "drop"; readonly namespace: string }
  | { readonly op: "stats" }

interface Dataset {
  readonly resourceVersion: number
  /** Each item's JSON (lists). */
  readonly items: ReadonlyArray<string>
  /** Pages by `limit:offset` (limit 0: everything in one). */
  readonly pages: Map<string, Buffer>
  /** The watch events after `resourceVersion`, one line each, and where each line starts in `events`. */
  readonly events: Buffer
  readonly eventStarts: ReadonlyArray<number>
}

const datasets = new Map<string, Dataset>()
let nextRv = 1_000
let requests = 0

const objectFrom = (template: Json, namespace: string, i: number, rv: number, round = 0): Json => {
  const name = `settings-${String(i).padStart(6, "0")}`
  return {
    ...template,
    metadata: {
      ...template.metadata,
      name,
      namespace,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(rv),
      labels: { ...template.metadata.labels, shard: String(i % 16) }
    },
    data: {
      ...template.data,
      "log-level": round % 2 === 0 ? "info" : "debug",
      endpoint: `https://service-${i % 64}.bench.svc.cluster.local:8443/api`,
      round: String(round)
    }
  }
}

const pageKey = (limit: number, offset: number) => `${limit}:${offset}`

const encodeContinue = (rv: number, offset: number) => Buffer.from(JSON.stringify({ rv, offset })).toString("base64url")

const decodeContinue = (token: string): { readonly rv: number; readonly offset: number } | undefined => {
  try {
    return JSON.parse(Buffer.from(token, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
}

const buildPage = (set: Dataset, limit: number, offset: number): Buffer => {
  const end = limit === 0 ? set.items.length : Math.min(set.items.length, offset + limit)
  const metadata: Record<string, unknown> = { resourceVersion: String(set.resourceVersion) }
  if (end < set.items.length) {
    metadata.continue = encodeContinue(set.resourceVersion, end)
    metadata.remainingItemCount = set.items.length - end
  }
  return Buffer.from(
    `{"kind":"ConfigMapList","apiVersion":"v1","metadata":${JSON.stringify(metadata)},"items":[${
      set.items.slice(offset, end).join(",")
    }]}`
  )
}

const prepare = (command: Command): unknown => {
  switch (command.op) {
    case "list": {
      const rv = nextRv
      const items: Array<string> = []
      for (let i = 0; i < command.count; i++) {
        items.push(JSON.stringify(objectFrom(command.template, command.namespace, i, rv - command.count + i)))
      }
      nextRv += 1
      const set: Dataset = { resourceVersion: rv, items, pages: new Map(), events: Buffer.alloc(0), eventStarts: [] }
      for (const limit of command.limits) {
        for (let offset = 0; offset < Math.max(1, items.length); offset += limit === 0 ? items.length || 1 : limit) {
          set.pages.set(pageKey(limit, offset), buildPage(set, limit, offset))
        }
      }
      datasets.set(command.namespace, set)
      return { resourceVersion: String(rv), pages: set.pages.size }
    }
    case "watch": {
      const rv = nextRv
      const lines: Array<string> = []
      for (let n = 0; n < command.events; n++) {
        const i = n % command.objects
        const object = objectFrom(
          command.template,
          command.namespace,
          i,
          rv + n + 1,
          1 + Math.floor(n / command.objects)
        )
        lines.push(`{"type":"MODIFIED","object":${JSON.stringify(object)}}\n`)
      }
      nextRv += command.events + 1
      const eventStarts: Array<number> = []
      let at = 0
      for (const line of lines) {
        eventStarts.push(at)
        at += Buffer.byteLength(line)
      }
      const set: Dataset = {
        resourceVersion: rv,
        items: [],
        pages: new Map(),
        events: Buffer.from(lines.join("")),
        eventStarts
      }
      set.pages.set(pageKey(0, 0), buildPage(set, 0, 0))
      datasets.set(command.namespace, set)
      return { resourceVersion: String(rv), bytes: set.events.length }
    }
    case "drop":
      datasets.delete(command.namespace)
      return null
    case "stats":
      return { requests }
  }
}

const send = (res: ServerResponse, status: number, body: Buffer | string) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code })

const main = () => {
  const tls = selfSigned()
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    requests++
    const url = new URL(req.url ?? "/", "https://127.0.0.1")
    const parts = url.pathname.split("/").filter((p) => p.length > 0)
    // /api/v1/namespaces/NS[/configmaps]
    if (parts[0] !== "api" || parts[1] !== "v1" || parts[2] !== "namespaces" || parts[3] === undefined) {
      return send(res, 404, status(404, "NotFound", `the server could not find the requested resource`))
    }
    const namespace = parts[3]
    const set = datasets.get(namespace)
    if (parts.length === 4) {
      if (set === undefined) return send(res, 404, status(404, "NotFound", `namespaces "${namespace}" not found`))
      return send(
        res,
        200,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: namespace },
          status: { phase: "Active" }
        })
      )
    }
    if (parts[4] !== "configmaps" || parts.length !== 5 || set === undefined) {
      return send(res, 404, status(404, "NotFound", `the server could not find the requested resource`))
    }
    const query = url.searchParams
    if (query.get("watch") === "true" || query.get("watch") === "1") {
      const from = Number(query.get("resourceVersion") ?? set.resourceVersion)
      const timeout = Number(query.get("timeoutSeconds") ?? 1800)
      res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" })
      res.flushHeaders() // a client waits for the headers before it reads (makeInformer's start)
      // the first event after `from`
      const skip = Math.max(0, Math.min(set.eventStarts.length, from - set.resourceVersion))
      const last = set.resourceVersion + set.eventStarts.length
      if (skip < set.eventStarts.length) res.write(set.events.subarray(set.eventStarts[skip]))
      if (query.get("allowWatchBookmarks") === "true") {
        res.write(
          `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"${
            Math.max(from, last)
          }"}}}\n`
        )
      }
      const timer = setTimeout(() => res.end(), timeout * 1000)
      res.on("close", () => clearTimeout(timer))
      return
    }
    const limit = Number(query.get("limit") ?? 0)
    const token = query.get("continue")
    let offset = 0
    if (token !== null && token !== "") {
      const decoded = decodeContinue(token)
      if (decoded === undefined || decoded.rv !== set.resourceVersion) {
        return send(res, 410, status(410, "Expired", "The provided continue parameter is too old"))
      }
      offset = decoded.offset
    }
    const key = pageKey(limit, offset)
    let page = set.pages.get(key)
    if (page === undefined) {
      page = buildPage(set, limit, offset) // a limit that was not prepared (e.g. a limit=1 probe)
      set.pages.set(key, page)
    }
    return send(res, 200, page)
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, "127.0.0.1", () => {
    const address = server.address() as AddressInfo
    const url = `https://127.0.0.1:${address.port}`
    const token = "replay-token"
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "replay-"))
    const kubeconfigPath = path.join(dir, "kubeconfig")
    const ca = Buffer.from(tls.cert).toString("base64")
    fs.writeFileSync(
      kubeconfigPath,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: replay",
        "  cluster:",
        `    server: ${url}`,
        `    certificate-authority-data: ${ca}`,
        "users:",
        "- name: replay",
        "  user:",
        `    token: ${token}`,
        "contexts:",
        "- name: replay",
        "  context: { cluster: replay, user: replay }",
        "current-context: replay",
        ""
      ].join("\n")
    )
    process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }))
    process.send!({ ready: { url, token, ca: tls.cert, kubeconfigPath } })
  })
  process.on("message", (message: { readonly id: number; readonly command: Command }) => {
    try {
      process.send!({ id: message.id, result: prepare(message.command) })
    } catch (error) {
      process.send!({ id: message.id, error: String(error) })
    }
  })
  process.on("disconnect", () => process.exit(0))
}

main()
