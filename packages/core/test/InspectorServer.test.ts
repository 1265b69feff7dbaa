// @effect/vitest 4: `it.live` runs scoped with live services (real sockets; the controllers run on the real clock,
// and a test waits for what it needs by reading the inspector until it is there, never for a fixed time).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Option, Schedule, Schema } from "effect"
import * as Http from "node:http"
import * as os from "node:os"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as Inspector from "../src/Inspector.js"
import * as InspectorServer from "../src/InspectorServer.js"
import * as Reconcile from "../src/Reconcile.js"
import type * as Request from "../src/Request.js"
import * as Source from "../src/Source.js"
import { TestManager, uniqueName } from "./harness.js"

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: string
}

const get = (host: string, port: number, path: string, init?: RequestInit) =>
  Effect.promise(async (): Promise<Reply> => {
    const response = await fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}${path}`, init)
    return { status: response.status, headers: response.headers, body: await response.text() }
  })

/** A GET with its own `Host` header (which `fetch` does not let one set). */
const getWithHost = (port: number, path: string, host: string) =>
  Effect.callback<number>((resume) => {
    const request = Http.get({ host: "127.0.0.1", port, path, headers: { host } }, (response) => {
      response.resume()
      resume(Effect.succeed(response.statusCode ?? 0))
    })
    request.on("error", (error) => resume(Effect.die(error)))
  })

/** A non-loopback IPv4 address of this machine, if it has one: requests to it come from it. */
const nonLoopback = Object.values(os.networkInterfaces()).flat()
  .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address

interface Obj {
  readonly metadata: { readonly name: string; readonly namespace: string }
}

/** A controller over a channel of objects, recording into the inspector of the context. */
const startController = (reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome>) =>
  Effect.gen(function*() {
    const channel = yield* Source.channel<Obj>("objects")
    const name = uniqueName("inspected")
    yield* Controller.make({ name, watches: [Controller.watch(channel.source, Handler.forObject)], reconcile }).pipe(
      Effect.provide(TestManager)
    )
    const send = (n: string) => channel.offer(Event.create({ metadata: { name: n, namespace: "default" } }))
    return { name, send }
  })

/** Reads the inspector until `ok` holds (the controller runs on the real clock); at most about 5 s. */
const until = <A>(read: Effect.Effect<A>, ok: (a: A) => boolean) =>
  read.pipe(
    Effect.filterOrFail(ok, () => "not yet" as const),
    Effect.retry({ schedule: Schedule.spaced("10 millis"), times: 500 }),
    Effect.orDie
  )

describe("InspectorServer", () => {
  it.live("serves the page, the API (each answer its Schema), 404s and 400s, GET only", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.Inspector
      const { name, send } = yield* startController((request) =>
        request.name === "bad" ? Effect.fail(Reconcile.terminal(new Error("bad spec"))) : Effect.void
      )
      yield* send("web")
      yield* send("bad")
      yield* until(inspector.timeline(), (t) => t.items.filter((i) => i.outcome !== undefined).length === 2)
      const { host, port } = yield* InspectorServer.serve()
      assert.strictEqual(host, "127.0.0.1")

      const page = yield* get(host, port, "/")
      assert.strictEqual(page.status, 200)
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
      // nothing from the network: the page may connect to this server only
      assert.include(page.headers.get("content-security-policy") ?? "", "connect-src 'self'")
      assert.include(page.body, "<html")
      const app = yield* get(host, port, "/assets/app.js")
      assert.strictEqual(app.status, 200)
      assert.match(app.headers.get("content-type") ?? "", /^text\/javascript/)
      for (const path of ["/assets/nope.js", "/assets/constructor", "/assets/..%2Fpackage.json"]) {
        assert.strictEqual((yield* get(host, port, path)).status, 404, path)
      }

      const controllers = yield* get(host, port, "/api/controllers")
      assert.strictEqual(controllers.status, 200)
      assert.match(controllers.headers.get("content-type") ?? "", /^application\/json/)
      const decoded = Schema.decodeUnknownSync(Inspector.Api.Controllers)(JSON.parse(controllers.body))
      assert.deepStrictEqual(decoded.controllers.map((c) => c.name), [name])

      const keys = Schema.decodeUnknownSync(Inspector.Api.Keys)(
        JSON.parse((yield* get(host, port, `/api/controllers/${name}/keys?state=terminal`)).body)
      )
      assert.deepStrictEqual(keys.items.map((k) => [k.key, k.state]), [["default/bad", "terminal"]])

      for (const path of [`/api/controllers/${name}/keys/default%2Fbad`, `/api/controllers/${name}/keys/default/bad`]) {
        const reply = yield* get(host, port, path)
        assert.strictEqual(reply.status, 200, path)
        const key = Schema.decodeUnknownSync(Inspector.Api.Key)(JSON.parse(reply.body))
        assert.strictEqual(key.key, "default/bad")
        assert.include(key.reconciles[0]?.message ?? "", "bad spec")
      }
      const timeline = Schema.decodeUnknownSync(Inspector.Api.Timeline)(
        JSON.parse((yield* get(host, port, "/api/timeline?since=0&limit=10")).body)
      )
      assert.sameMembers(timeline.items.map((i) => i.key), ["default/web", "default/bad"])

      const refusals: ReadonlyArray<readonly [string, number, string]> = [
        ["/api/controllers/nope/keys", 404, `no controller named "nope"`],
        ["/api/controllers/nope/keys/default%2Fweb", 404, `no controller named "nope"`],
        [`/api/controllers/${name}/keys/default%2Fnope`, 404, `has no key "default/nope"`],
        [`/api/controllers/${name}/keys?state=broken`, 400, "state must be one of"],
        [`/api/controllers/${name}/keys?limit=-1`, 400, "limit must be a non-negative integer"],
        ["/api/timeline?since=yesterday", 400, "since must be"],
        ["/api/nope", 404, "no such API path"]
      ]
      for (const [path, status, error] of refusals) {
        const reply = yield* get(host, port, path)
        assert.strictEqual(reply.status, status, path)
        assert.include(Schema.decodeUnknownSync(Inspector.Api.ErrorBody)(JSON.parse(reply.body)).error, error)
      }
      assert.strictEqual((yield* get(host, port, "/nope")).status, 404)
      assert.strictEqual((yield* get(host, port, "/api/controllers", { method: "POST" })).status, 405)
    }).pipe(Effect.provide(Inspector.layer())))

  it.live("/api/stream: a change event at once, another when something is recorded", () =>
    Effect.gen(function*() {
      const inspector = yield* Inspector.Inspector
      const { send } = yield* startController(() => Effect.void)
      const { host, port } = yield* InspectorServer.serve()
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.promise(() =>
        fetch(`http://${host}:${port}/api/stream`, { signal: controller.signal })
      )
      assert.strictEqual(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/)
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      /** Reads the stream until a `change` event arrives; its version. */
      const nextChange = Effect.promise(async () => {
        let text = ""
        for (;;) {
          const { done, value } = await reader.read()
          if (done) throw new Error(`the stream ended: ${text}`)
          text += decoder.decode(value, { stream: true })
          const match = /event: change\ndata: (\{[^\n]*\})\n\n/.exec(text)
          if (match !== null) return (JSON.parse(match[1]!) as { readonly version: number }).version
        }
      })
      const first = yield* nextChange
      assert.strictEqual(first, yield* inspector.version)
      yield* send("a")
      const second = yield* nextChange
      assert.isAbove(second, first)
      yield* Effect.promise(() => reader.cancel())
    }).pipe(Effect.provide(Inspector.layer())))

  it.live("a port that is not an integer in 0..65535 is refused", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(InspectorServer.serve({ port: 70_000 }))
      assert.strictEqual(error._tag, "InspectorServerError")
      assert.include(error.message, "cannot serve the inspector on 127.0.0.1:70000")
    }).pipe(Effect.provide(Inspector.layer())))

  it.live("a request naming another host than a loopback one (DNS rebinding) gets 403", () =>
    Effect.gen(function*() {
      const { port } = yield* InspectorServer.serve()
      assert.strictEqual(yield* getWithHost(port, "/api/controllers", "attacker.example"), 403)
      assert.strictEqual(yield* getWithHost(port, "/api/controllers", `localhost:${port}`), 200)
      assert.strictEqual(yield* getWithHost(port, "/api/controllers", `127.0.0.1:${port}`), 200)
    }).pipe(Effect.provide(Inspector.layer())))

  describe(
    `from a non-loopback address${
      nonLoopback === undefined ? " (skipped: this machine has no non-loopback IPv4 address to ask from)" : ""
    }`,
    () => {
      it.live.skipIf(nonLoopback === undefined)(
        "bound to 0.0.0.0 with allowRemote: false, a non-loopback client gets 403 on every path; loopback is served",
        () =>
          Effect.gen(function*() {
            const closed = yield* InspectorServer.serve({ host: "0.0.0.0", allowRemote: false })
            for (const path of ["/", "/api/controllers", "/api/timeline", "/api/stream", "/assets/x.js"]) {
              const remote = yield* get(nonLoopback!, closed.port, path)
              assert.strictEqual(remote.status, 403, path)
              assert.include(remote.body, "loopback clients only")
            }
            assert.strictEqual((yield* get("127.0.0.1", closed.port, "/api/controllers")).status, 200)
            const open = yield* InspectorServer.serve({ host: "0.0.0.0" })
            assert.strictEqual((yield* get(nonLoopback!, open.port, "/api/controllers")).status, 200)
          }).pipe(Effect.provide(Inspector.layer()))
      )
    }
  )

  it.live("no Secret data in any answer: a controller of Secrets whose reconciles fail with their values", () =>
    Effect.gen(function*() {
      const value = "hunter2-Zq9-s3cr3t-value"
      const encoded = Buffer.from(value).toString("base64")
      interface Secret extends Obj {
        readonly kind: "Secret"
        readonly data: Readonly<Record<string, string>>
      }
      const secret = (name: string): Secret => ({
        kind: "Secret",
        metadata: { name, namespace: "default" },
        data: { password: encoded, "config.yaml": encoded }
      })
      // each reconcile fails with the Secret's value somewhere in its error, as a careless reconcile would
      const failures: Record<string, () => Effect.Effect<void, Reconcile.Outcome>> = {
        "db": () => Effect.fail(Reconcile.retryable(new Error(`cannot connect: password=${value}`))),
        "api": () => Effect.fail(Reconcile.terminal(new Error(`the API refused the token: {"token": "${value}"}`))),
        "header": () => Effect.die(new Error(`GET /api failed: Authorization: Bearer ${value}`)),
        "url": () => Effect.fail(Reconcile.retryable(new Error(`cannot reach https://admin:${value}@db.internal/`))),
        "object": () => Effect.fail(Reconcile.retryable(secret("object"), "cannot use the Secret")),
        "defect": () => Effect.die(secret("defect"))
      }
      const inspector = yield* Inspector.Inspector
      const channel = yield* Source.channel<Secret>("secrets")
      const name = uniqueName("secrets")
      yield* Controller.make({
        name,
        watches: [Controller.watch(channel.source, Handler.forObject)],
        reconcile: (request) => failures[request.name]!()
      }).pipe(Effect.provide(TestManager))
      for (const n of Object.keys(failures)) yield* channel.offer(Event.create(secret(n)))
      yield* until(
        inspector.timeline(),
        (t) => new Set(t.items.filter((i) => i.outcome !== undefined).map((i) => i.key)).size === 6
      )
      const { host, port } = yield* InspectorServer.serve()
      const paths = [
        "/",
        "/api/controllers",
        `/api/controllers/${name}/keys?limit=1000`,
        "/api/timeline",
        ...Object.keys(failures).map((n) => `/api/controllers/${name}/keys/default%2F${n}`)
      ]
      const answers: Array<string> = []
      for (const path of paths) {
        const reply = yield* get(host, port, path)
        assert.strictEqual(reply.status, 200, path)
        answers.push(reply.body)
      }
      for (const [i, body] of answers.entries()) {
        assert.notInclude(body, value, paths[i])
        assert.notInclude(body, encoded, paths[i])
      }
      // the messages are there, without the value
      const messages = yield* Effect.forEach(
        Object.keys(failures),
        (n) => Effect.map(inspector.key(name, `default/${n}`), (k) => Option.getOrThrow(k).reconciles[0]?.message ?? "")
      )
      assert.include(messages[0], "cannot connect: password=[REDACTED]")
      assert.include(messages[1], "the API refused the token")
      assert.include(messages[2], "Authorization: Bearer [REDACTED]")
      assert.include(messages[3], "cannot reach https://admin:[REDACTED]@db.internal/")
      assert.include(messages[4], "cannot use the Secret")
      assert.isAbove(messages[5]!.length, 0)
      // (the test's own log lines would show the value: they are not the inspector's, and are dropped)
    }).pipe(Effect.provide(Inspector.layer()), Effect.provide(Logger.layer([]))))
})
