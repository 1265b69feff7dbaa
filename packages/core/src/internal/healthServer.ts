import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import { constTrue } from "effect/Function"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NetAddress from "effect/net/NetAddress"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as HealthServer from "../HealthServer.js"
import { HealthServerError } from "../HealthServer.js"
import * as Prometheus from "./prometheus.js"

/** `200 ok` when `check` yields `true`, else `status` with `body`. */
const probe = (check: Effect.Effect<boolean>, status: number, body: string) =>
  Effect.map(check, (ok) => ok ? HttpServerResponse.text("ok") : HttpServerResponse.text(body, { status }))

const metrics = (processMetrics: boolean) =>
  Effect.map(
    Prometheus.text({ processMetrics }),
    (text) => HttpServerResponse.text(text, { contentType: Prometheus.contentType })
  )

/** The routes; any other request is answered `404` by the router. */
const router = (options: HealthServer.Options) =>
  Effect.gen(function*() {
    const router = yield* HttpRouter.make
    yield* router.add("GET", "/healthz", probe(options.healthy ?? Effect.succeed(true), 500, "not healthy"))
    yield* router.add("GET", "/readyz", probe(options.ready, 503, "not ready"))
    if (options.metrics !== false) {
      const processMetrics = options.processMetrics !== false
      // The collectors start now, so the first scrape already has the event loop's delay and GC pauses.
      if (processMetrics) Prometheus.processMetrics()
      yield* router.add("GET", "/metrics", metrics(processMetrics))
    }
    return router.asHttpEffect()
  })

const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** @internal */
export const serve = (
  options: HealthServer.Options
): Effect.Effect<HealthServer.Address, HealthServerError, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const port = options.port ?? 0
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* new HealthServerError({ host, port, reason: "the port must be an integer in 0..65535" })
    }
    const server = yield* NodeHttpServer.make(() => Http.createServer(), { host, port }).pipe(
      Effect.mapError((error) => new HealthServerError({ host, port, reason: messageOf(error.cause), cause: error }))
    )
    // Request fibers inherit this context: probes and scrapes get no server span, whatever tracer is installed.
    yield* server.serve(yield* router(options)).pipe(
      Effect.provideService(HttpMiddleware.TracerDisabledWhen, constTrue)
    )
    const address = server.address
    // A TCP listen always has an internet address; the fallback only satisfies the type.
    return NetAddress.isInetAddress(address)
      ? { host: NetAddress.formatHost(address), port: address.port }
      : { host, port }
  })
