// @effect/vitest 4: `it.live` runs scoped with live services (real sockets, and the profiles' real seconds).
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Logger } from "effect"
import * as os from "node:os"
import * as ProfilingServer from "../src/ProfilingServer.js"

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: string
}

const get = (host: string, port: number, path: string) =>
  Effect.promise(async (): Promise<Reply> => {
    const response = await fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}${path}`)
    return { status: response.status, headers: response.headers, body: await response.text() }
  })

/** Whether a connection to `host:port` is refused (nothing listens there for that address). */
const refused = (host: string, port: number) =>
  Effect.promise(() =>
    fetch(`http://${host}:${port}/debug/pprof/`).then(
      () => false,
      (error: { readonly cause?: { readonly code?: unknown } }) => error.cause?.code === "ECONNREFUSED"
    )
  )

/** A non-loopback IPv4 address of this machine, if it has one: requests to it come from it. */
const nonLoopback = Object.values(os.networkInterfaces()).flat()
  .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address

/** A logger that completes `deferred` on the first record whose message is `message`. */
const onLog = (message: string, deferred: Deferred.Deferred<void>) =>
  Logger.layer([Logger.make((options) => {
    const parts = Array.isArray(options.message) ? options.message : [options.message]
    if (parts.includes(message)) Deferred.doneUnsafe(deferred, Exit.void)
  })])

describe("ProfilingServer", () => {
  it.live("binds 127.0.0.1 on a free port by default; GET /debug/pprof/ names both profiles", () =>
    Effect.gen(function*() {
      const address = yield* ProfilingServer.serve()
      assert.strictEqual(address.host, "127.0.0.1")
      assert.isAbove(address.port, 0)
      for (const path of ["/debug/pprof/", "/debug/pprof"]) {
        const reply = yield* get(address.host, address.port, path)
        assert.strictEqual(reply.status, 200)
        assert.include(reply.body, "/debug/pprof/profile?seconds=N")
        assert.include(reply.body, "/debug/pprof/heap")
      }
      assert.strictEqual((yield* get(address.host, address.port, "/debug/pprof/goroutine")).status, 404)
    }))

  it.live(
    "GET /debug/pprof/profile?seconds=1: a .cpuprofile of that second (nodes, samples, start and end)",
    () =>
      Effect.gen(function*() {
        const { host, port } = yield* ProfilingServer.serve()
        const reply = yield* get(host, port, "/debug/pprof/profile?seconds=1")
        assert.strictEqual(reply.status, 200, reply.body)
        assert.strictEqual(reply.headers.get("content-type"), "application/json")
        assert.match(
          reply.headers.get("content-disposition") ?? "",
          /^attachment; filename="cpu-[\dT-]+Z\.cpuprofile"$/
        )
        const profile = JSON.parse(reply.body) as {
          readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: { readonly functionName: string } }>
          readonly samples: ReadonlyArray<number>
          readonly timeDeltas: ReadonlyArray<number>
          readonly startTime: number
          readonly endTime: number
        }
        assert.isAbove(profile.nodes.length, 0)
        assert.include(profile.nodes.map((n) => n.callFrame.functionName), "(root)")
        assert.isArray(profile.samples)
        assert.strictEqual(profile.samples.length, profile.timeDeltas.length)
        // microseconds: the profile spans the second asked for
        const span = profile.endTime - profile.startTime
        assert.isAtLeast(span, 900_000)
        assert.isBelow(span, 5_000_000)
      }),
    { timeout: 15_000 }
  )

  it.live("seconds must be a number in (0, 300]: else 400 saying so", () =>
    Effect.gen(function*() {
      const { host, port } = yield* ProfilingServer.serve()
      for (const seconds of ["0", "301", "ten", "-1", ""]) {
        const reply = yield* get(host, port, `/debug/pprof/profile?seconds=${seconds}`)
        assert.strictEqual(reply.status, 400, seconds)
        assert.include(reply.body, "seconds must be a number greater than 0 and at most 300")
      }
    }))

  it.live(
    "one profile at a time: a CPU profile or heap snapshot asked for meanwhile gets 409; then served",
    () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const { host, port } = yield* ProfilingServer.serve().pipe(
          Effect.provide(onLog("taking a CPU profile", started))
        )
        const first = yield* Effect.forkScoped(get(host, port, "/debug/pprof/profile?seconds=1"))
        // the profiler has started (its log record), so the second request finds it busy
        yield* Deferred.await(started)
        const second = yield* get(host, port, "/debug/pprof/profile?seconds=1")
        assert.strictEqual(second.status, 409)
        assert.include(second.body, "a CPU profile is already being taken")
        const heap = yield* get(host, port, "/debug/pprof/heap")
        assert.strictEqual(heap.status, 409)
        assert.include(heap.body, "a CPU profile is already being taken")
        assert.strictEqual((yield* Fiber.join(first)).status, 200)
        const third = yield* get(host, port, "/debug/pprof/profile?seconds=0.1")
        assert.strictEqual(third.status, 200, third.body)
      }),
    { timeout: 15_000 }
  )

  it.live(
    "a client that goes away stops its profile: the next one is served without waiting the 300 s",
    () =>
      Effect.gen(function*() {
        const started = yield* Deferred.make<void>()
        const { host, port } = yield* ProfilingServer.serve().pipe(
          Effect.provide(onLog("taking a CPU profile", started))
        )
        const abort = new AbortController()
        const first = fetch(`http://${host}:${port}/debug/pprof/profile?seconds=300`, { signal: abort.signal })
          .catch(() => "aborted")
        yield* Deferred.await(started)
        abort.abort()
        assert.strictEqual(yield* Effect.promise(() => first), "aborted")
        // the server sees the connection close soon after: poll until the slot is free
        const deadline = Date.now() + 10_000
        let status = 409
        while (status === 409 && Date.now() < deadline) {
          status = (yield* get(host, port, "/debug/pprof/profile?seconds=0.1")).status
          if (status === 409) yield* Effect.sleep("50 millis")
        }
        assert.strictEqual(status, 200)
      }),
    { timeout: 15_000 }
  )

  it.live(
    "GET /debug/pprof/heap: a .heapsnapshot, streamed (chunked, no length), parsable with its meta",
    () =>
      Effect.gen(function*() {
        const { host, port } = yield* ProfilingServer.serve()
        const reply = yield* get(host, port, "/debug/pprof/heap")
        assert.strictEqual(reply.status, 200)
        assert.match(
          reply.headers.get("content-disposition") ?? "",
          /^attachment; filename="heap-[\dT-]+Z\.heapsnapshot"$/
        )
        assert.strictEqual(reply.headers.get("transfer-encoding"), "chunked")
        assert.isNull(reply.headers.get("content-length"))
        const snapshot = JSON.parse(reply.body) as {
          readonly snapshot: {
            readonly meta: { readonly node_fields: ReadonlyArray<string> }
            readonly node_count: number
          }
          readonly nodes: ReadonlyArray<number>
        }
        assert.include(snapshot.snapshot.meta.node_fields, "self_size")
        assert.isAbove(snapshot.snapshot.node_count, 0)
        assert.strictEqual(
          snapshot.nodes.length,
          snapshot.snapshot.node_count * snapshot.snapshot.meta.node_fields.length
        )
        // the slot went with the body: the next profile is served
        assert.strictEqual((yield* get(host, port, "/debug/pprof/profile?seconds=0.1")).status, 200)
      }),
    { timeout: 60_000 }
  )

  it.live("a port outside 0..65535 is a ProfilingServerError naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ProfilingServer.serve({ port: 70_000 }))
      assert.strictEqual(error._tag, "ProfilingServerError")
      assert.include(error.message, "cannot serve profiles on 127.0.0.1:70000")
    }))

  describe(
    `from a non-loopback address${
      nonLoopback === undefined ? " (skipped: this machine has no non-loopback IPv4 address to ask from)" : ""
    }`,
    () => {
      it.live.skipIf(nonLoopback === undefined)(
        "by default nothing answers there; bound to 0.0.0.0 it is served; allowRemote: false answers 403",
        () =>
          Effect.gen(function*() {
            const local = yield* ProfilingServer.serve()
            assert.isTrue(yield* refused(nonLoopback!, local.port), "the default server is not reachable there")

            const open = yield* ProfilingServer.serve({ host: "0.0.0.0" })
            assert.strictEqual((yield* get(nonLoopback!, open.port, "/debug/pprof/")).status, 200)

            const closed = yield* ProfilingServer.serve({ host: "0.0.0.0", allowRemote: false })
            const remote = yield* get(nonLoopback!, closed.port, "/debug/pprof/profile?seconds=1")
            assert.strictEqual(remote.status, 403)
            assert.include(remote.body, "loopback clients only")
            assert.strictEqual((yield* get(nonLoopback!, closed.port, "/debug/pprof/heap")).status, 403)
            assert.strictEqual((yield* get("127.0.0.1", closed.port, "/debug/pprof/")).status, 200)
          })
      )
    }
  )
})
