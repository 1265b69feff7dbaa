import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as HealthServer from "../HealthServer.js"
import { HealthServerError } from "../HealthServer.js"
import * as Prometheus from "./prometheus.js"

/** `200 ok` when `check` yields `true`, else `status` with `body`. */
const probe = (check: Effect.Effect<boolean>, status: number, body: string) =>
  Effect.map(check, (ok) => ok ? HttpServerResponse.text("ok") : HttpServerResponse.text(body, { status }))

const metrics = Effect.map(
  Prometheus.snapshotText,
  (text) => HttpServerResponse.text(text, { contentType: Prometheus.contentType })
)

const router = (options: HealthServer.Options) => {
  const probes = HttpRouter.empty.pipe(
    HttpRouter.get("/healthz", probe(options.healthy ?? Effect.succeed(true), 500, "not healthy")),
    HttpRouter.get("/readyz", probe(options.ready, 503, "not ready"))
  )
  return options.metrics === false ? probes : HttpRouter.get(probes, "/metrics", metrics)
}

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
    yield* server.serve(router(options)).pipe(HttpMiddleware.withTracerDisabledWhenEffect(() => true))
    const address = server.address
    // A TCP listen always has a TcpAddress; the fallback only satisfies the type.
    return address._tag === "TcpAddress" ? { host: address.hostname, port: address.port } : { host, port }
  })
