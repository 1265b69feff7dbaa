import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { constTrue } from "effect/Function"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as ProfilingServer from "../ProfilingServer.js"
import { ProfilingServerError } from "../ProfilingServer.js"
import { isLoopback } from "./loopback.js"

/** The default length of a CPU profile, in seconds (as `net/http/pprof`). */
const defaultSeconds = 30

/** @internal */
export const maxSeconds = 300

const index = [
  "Profiles of this process (Chrome DevTools opens both: Performance and Memory panels, \"Load profile\"):",
  "",
  `  /debug/pprof/profile?seconds=N  a CPU profile of the next N seconds (default ${defaultSeconds}, at most ${maxSeconds}), .cpuprofile`,
  "  /debug/pprof/heap               a V8 heap snapshot, .heapsnapshot (the process pauses while it is taken)",
  ""
].join("\n")

const attachment = (filename: string) => ({ "content-disposition": `attachment; filename="${filename}"` })

/** `2026-12-05T09-30-00Z`: a timestamp that is a valid file name everywhere. */
const stamp = Effect.map(
  Clock.currentTimeMillis,
  (millis) => new Date(millis).toISOString().replace(/\.\d+Z$/, "Z").replace(/:/g, "-")
)

const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** `seconds=N`: a number in `(0, maxSeconds]`, default {@link defaultSeconds}; else the sentence saying why not. */
const parseSeconds = (value: string | ReadonlyArray<string> | undefined): number | string => {
  if (value === undefined) return defaultSeconds
  const text = typeof value === "string" ? value : value[value.length - 1]!
  const seconds = Number(text)
  return /^\d+(\.\d+)?$/.test(text) && seconds > 0 && seconds <= maxSeconds
    ? seconds
    : `seconds must be a number greater than 0 and at most ${maxSeconds}, not "${text}"`
}

/**
 * A CPU profile of the next `seconds`: V8's sampling profiler in a session of this process's inspector, stopped and
 * disconnected however the wait ends (the client closing the connection interrupts it).
 */
const cpuProfile = (seconds: number) =>
  Effect.acquireUseRelease(
    Effect.tryPromise(async () => {
      const inspector = await import("node:inspector/promises")
      const session = new inspector.Session()
      session.connect()
      try {
        await session.post("Profiler.enable")
        await session.post("Profiler.start")
      } catch (error) {
        session.disconnect()
        throw error
      }
      return session
    }),
    (session) =>
      Effect.logInfo("taking a CPU profile").pipe(
        Effect.annotateLogs({ seconds }),
        Effect.andThen(Effect.sleep(Duration.seconds(seconds))),
        Effect.andThen(Effect.tryPromise(() => session.post("Profiler.stop"))),
        Effect.map((result) => result.profile)
      ),
    (session) => Effect.sync(() => session.disconnect())
  )

/**
 * The server's one profiler slot, taken in the request's scope (released once the response is sent, or the client
 * has gone): `undefined` when taken, else what holds it (`a CPU profile`, `a heap snapshot`).
 */
const exclusive = (slot: Ref.Ref<string | undefined>, what: string) =>
  Effect.acquireRelease(
    Ref.modify(slot, (holder): [string | undefined, string] =>
      holder === undefined ? [undefined, what] : [holder, holder]),
    (holder) =>
      holder === undefined ? Ref.set(slot, undefined) : Effect.void
  )

const conflict = (holder: string) =>
  HttpServerResponse.text(`${holder} is already being taken: one at a time, try again when it is done\n`, {
    status: 409
  })

const profileHandler = (slot: Ref.Ref<string | undefined>) =>
  Effect.gen(function*() {
    const params = yield* HttpServerRequest.ParsedSearchParams
    const seconds = parseSeconds(params.seconds)
    if (typeof seconds === "string") return HttpServerResponse.text(`${seconds}\n`, { status: 400 })
    const holder = yield* exclusive(slot, "a CPU profile")
    if (holder !== undefined) return conflict(holder)
    const taken = yield* Effect.result(cpuProfile(seconds))
    if (taken._tag === "Failure") {
      const reason = messageOf(taken.failure.cause)
      yield* Effect.logWarning("cannot take a CPU profile").pipe(Effect.annotateLogs({ reason }))
      return HttpServerResponse.text(`cannot take a CPU profile: ${reason}\n`, { status: 501 })
    }
    return HttpServerResponse.text(JSON.stringify(taken.success), {
      contentType: "application/json",
      headers: attachment(`cpu-${yield* stamp}.cpuprofile`)
    })
  })

/** A heap snapshot, streamed: V8 takes it when the body is first read, then writes it out chunk by chunk. */
const heapHandler = (slot: Ref.Ref<string | undefined>) =>
  Effect.gen(function*() {
    const holder = yield* exclusive(slot, "a heap snapshot")
    if (holder !== undefined) return conflict(holder)
    const v8 = yield* Effect.promise(() => import("node:v8"))
    yield* Effect.logInfo("taking a heap snapshot")
    const body = NodeStream.fromReadable<Uint8Array>({ evaluate: () => v8.getHeapSnapshot() })
    return HttpServerResponse.stream(body, {
      contentType: "application/json",
      headers: attachment(`heap-${yield* stamp}.heapsnapshot`)
    })
  })

const forbidden = () =>
  HttpServerResponse.text(
    "profiles are served to loopback clients only (bind a non-loopback address to serve others)\n",
    { status: 403 }
  )

/** `handler`, or `403` for a request from a non-loopback address (or one whose address is unknown). */
const guarded = <E, R>(allowRemote: boolean, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  allowRemote ? handler : Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) => Option.exists(request.remoteAddress, isLoopback) ? handler : Effect.succeed(forbidden())
  )

const router = (allowRemote: boolean) =>
  Effect.gen(function*() {
    const router = yield* HttpRouter.make
    // one profile at a time, of either kind: a heap snapshot would stall a CPU profile, and each holds memory
    const slot = yield* Ref.make<string | undefined>(undefined)
    // the router ignores a trailing slash: this is also `/debug/pprof`
    yield* router.add("GET", "/debug/pprof/", guarded(allowRemote, Effect.succeed(HttpServerResponse.text(index))))
    yield* router.add("GET", "/debug/pprof/profile", guarded(allowRemote, profileHandler(slot)))
    yield* router.add("GET", "/debug/pprof/heap", guarded(allowRemote, heapHandler(slot)))
    return router.asHttpEffect()
  })

/** @internal */
export const serve = (
  options: ProfilingServer.Options = {}
): Effect.Effect<ProfilingServer.Address, ProfilingServerError, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const port = options.port ?? 0
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* new ProfilingServerError({ host, port, reason: "the port must be an integer in 0..65535" })
    }
    const allowRemote = options.allowRemote ?? (options.host !== undefined && !isLoopback(options.host))
    const server = yield* NodeHttpServer.make(() => Http.createServer(), { host, port }).pipe(
      Effect.mapError((error) => new ProfilingServerError({ host, port, reason: messageOf(error.cause), cause: error }))
    )
    yield* server.serve(yield* router(allowRemote)).pipe(
      Effect.provideService(HttpMiddleware.TracerDisabledWhen, constTrue)
    )
    const address = server.address
    return NetAddress.isInetAddress(address)
      ? { host: NetAddress.formatHost(address), port: address.port }
      : { host, port }
  })
