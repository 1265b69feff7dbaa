/**
 * A fake of the inspector's HTTP API (the contract of `InspectorServer`: the same routes and answers, each checked
 * against `Inspector.Api`'s Schema), over data the test sets: the page's browser test drives the page with thousands
 * of keys and changes on demand without a controller. The page and its files are the real ones.
 */
import { Effect, Schema } from "effect"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Assets from "../../src/internal/inspector/assets/index.js"
import * as Api from "../../src/internal/inspectorApi.js"

export type Controller = typeof Api.Controller.Type
export type Key = Omit<typeof Api.Key.Type, "version">
export type TimelineItem = typeof Api.TimelineItem.Type

export interface Data {
  readonly controllers: Array<Controller>
  /** By controller, then by key. */
  readonly keys: Map<string, Map<string, Key>>
  readonly timeline: Array<TimelineItem>
}

export interface Fake {
  readonly url: string
  readonly data: Data
  /** Bumps the version and sends a `change` event to every open stream. */
  readonly changed: () => void
  /** How many requests each path (without its query) received. */
  readonly requests: Map<string, number>
}

const outcomes = ["success", "requeueAfter", "error", "terminal"] as const

/** `n` keys of `webapps` (`ns-<i % 7>/app-<i>`), in every state, and two of `secrets`; times around `now`. */
export const sampleData = (n: number, now: number): Data => {
  const webapps = new Map<string, Key>()
  const timeline: Array<TimelineItem> = []
  for (let i = 0; i < n; i++) {
    const key = `ns-${i % 7}/app-${String(i).padStart(5, "0")}`
    const state = (["idle", "idle", "waiting", "delayed", "failing", "inFlight", "terminal"] as const)[i % 7]
    const outcome = state === "failing" ? "error" : state === "terminal" ? "terminal" : outcomes[i % 2]
    const failures = state === "failing" ? 3 : 0
    const startedAt = now - 50_000 + (i % 500) * 90
    webapps.set(key, {
      key,
      state,
      ...(state === "waiting" ? { priority: 0 } : {}),
      ...(state === "delayed" ? { dueAt: now + 30_000, reason: "requeueAfter" as const } : {}),
      ...(state === "failing" ? { dueAt: now + 7_000, reason: "backoff" as const } : {}),
      ...(state === "inFlight" ? { inFlightMs: 120 } : {}),
      limiter: { failures },
      reconciles: [{
        reconcileID: `r-${i}`,
        startedAt,
        durationMs: 40,
        outcome,
        attempt: failures + 1,
        ...(outcome === "error" || outcome === "terminal" ? { message: `the API server said no to ${key}` } : {})
      }],
      events: [{
        at: startedAt - 5,
        source: "WebApp",
        type: "Update",
        predicates: [{ name: "generationChanged", passed: true }],
        enqueued: true
      }, {
        at: startedAt - 2_000,
        source: "WebApp",
        type: "Update",
        predicates: [{ name: "generationChanged", passed: false }],
        enqueued: false
      }]
    })
    if (i < 300) {
      timeline.push({ controller: "webapps", key, reconcileID: `r-${i}`, startedAt, durationMs: 40, outcome })
    }
  }
  const secrets = new Map<string, Key>([["default/token", {
    key: "default/token",
    state: "idle",
    limiter: { failures: 0 },
    reconciles: [{ reconcileID: "s-1", startedAt: now - 1_000, durationMs: 5, outcome: "success", attempt: 1 }],
    events: []
  }]])
  timeline.sort((a, b) => a.startedAt - b.startedAt)
  return {
    controllers: [
      {
        name: "webapps",
        workers: { busy: 1, idle: 3 },
        queue: { depth: Math.ceil(n / 7), waiting: Math.ceil(n / 7), delayed: Math.ceil((2 * n) / 7), inFlight: 1 },
        sources: [{ name: "WebApp", state: "connected" }, { name: "Deployment", state: "unknown" }]
      },
      {
        name: "secrets",
        workers: { busy: 0, idle: 1 },
        queue: { depth: 0, waiting: 0, delayed: 0, inFlight: 0 },
        sources: [{ name: "Secret", state: "disconnected", since: now - 4_000 }]
      }
    ],
    keys: new Map([["webapps", webapps], ["secrets", secrets]]),
    timeline
  }
}

const summary = (key: Key): typeof Api.KeySummary.Type => {
  const last = key.reconciles.at(-1)
  return {
    key: key.key,
    state: key.state,
    ...(key.priority === undefined ? {} : { priority: key.priority }),
    ...(key.dueAt === undefined ? {} : { dueAt: key.dueAt }),
    ...(key.reason === undefined ? {} : { reason: key.reason }),
    failures: key.limiter.failures,
    ...(key.inFlightMs === undefined ? {} : { inFlightMs: key.inFlightMs }),
    ...(last?.outcome === undefined ? {} : { lastOutcome: last.outcome }),
    ...(last === undefined ? {} : { lastReconcileAt: last.startedAt })
  }
}

/**
 * Serves `data` on 127.0.0.1 (a free port) until the scope closes. `stream: false` answers `404` to `/api/stream`
 * (the page then polls); `prefix` (`/proxy/`) serves everything under that path only, as behind a proxy (`url`
 * includes it).
 */
export const serve = (data: Data, options: { readonly stream?: boolean; readonly prefix?: string } = {}) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly fake: Fake; readonly server: Http.Server }>((resume) => {
      let version = 1
      const streams = new Set<Http.ServerResponse>()
      const requests = new Map<string, number>()
      const json = (res: Http.ServerResponse, schema: Schema.Codec<any, any>, body: unknown, status = 200) => {
        // the fake answers only what the contract's Schema accepts
        const encoded = Schema.encodeUnknownSync(schema)(body)
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(encoded))
      }
      const notFound = (res: Http.ServerResponse, error: string) => json(res, Api.ErrorBody, { error }, 404)
      const server = Http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://fake")
        const prefix = options.prefix ?? "/"
        if (!url.pathname.startsWith(prefix)) return notFound(res, `not under ${prefix}`)
        url.pathname = url.pathname.slice(prefix.length - 1)
        requests.set(url.pathname, (requests.get(url.pathname) ?? 0) + 1)
        const parts = url.pathname.split("/").slice(1).map(decodeURIComponent)
        if (url.pathname === "/") {
          res.writeHead(200, { "content-type": Assets.pageContentType, ...Assets.headers }).end(Assets.page.html)
        } else if (parts[0] === "assets" && parts.length === 2) {
          const file = Assets.files.get(parts[1]!)
          if (file === undefined) return notFound(res, `no file ${parts[1]}`)
          res.writeHead(200, { "content-type": file.contentType, ...Assets.headers }).end(file.body)
        } else if (url.pathname === "/api/stream") {
          if (options.stream === false) return notFound(res, "no stream")
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
          res.write(": hello\n\n")
          streams.add(res)
          req.on("close", () => streams.delete(res))
        } else if (url.pathname === "/api/controllers") {
          json(res, Api.Controllers, { version, controllers: data.controllers })
        } else if (url.pathname === "/api/timeline") {
          const since = Number(url.searchParams.get("since") ?? 0)
          const limit = Number(url.searchParams.get("limit") ?? 500)
          const items = data.timeline.filter((i) => i.startedAt + (i.durationMs ?? Infinity) >= since).slice(-limit)
          json(res, Api.Timeline, { version, items })
        } else if (parts[0] === "api" && parts[1] === "controllers" && parts[3] === "keys") {
          const keys = data.keys.get(parts[2]!)
          if (keys === undefined) return notFound(res, `no controller ${parts[2]}`)
          if (parts.length === 5) {
            const key = keys.get(parts[4]!)
            return key === undefined ? notFound(res, `no key ${parts[4]}`) : json(res, Api.Key, { version, ...key })
          }
          const state = url.searchParams.get("state") ?? "all"
          const search = (url.searchParams.get("search") ?? "").toLowerCase()
          const offset = Number(url.searchParams.get("offset") ?? 0)
          const limit = Number(url.searchParams.get("limit") ?? 100)
          const matching = Array.from(keys.values()).filter((k) =>
            (state === "all" || k.state === state) && k.key.toLowerCase().includes(search)
          )
          json(res, Api.Keys, {
            version,
            total: matching.length,
            items: matching.slice(offset, offset + limit).map(summary)
          })
        } else {
          notFound(res, `no route ${url.pathname}`)
        }
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as Net.AddressInfo
        const changed = () => {
          version++
          for (const stream of streams) stream.write(`event: change\ndata: ${JSON.stringify({ version })}\n\n`)
        }
        resume(
          Effect.succeed({
            fake: { url: `http://127.0.0.1:${port}${options.prefix ?? "/"}`, data, changed, requests },
            server
          })
        )
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ fake }) => fake))
