/**
 * A webhook endpoint as a controller source — the non-Kubernetes case.
 *
 * `POST /hooks/:namespace/:name` (for example from a Git host or a CI system)
 * offers a `Generic` event to a channel source; the controller dedups the
 * keys in its workqueue and reconciles each one. Bursts of hooks for one key
 * collapse into one reconcile while the key waits, exactly as Kubernetes
 * events do.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Controller, Event, Handler, type Reconcile, type Request, Source } from "@reconcile/core"
import { Effect, Schema } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Http from "node:http"

/** What a hook names: the thing to reconcile. */
export interface Target {
  readonly metadata: { readonly name: string; readonly namespace: string }
}

const Params = Schema.Struct({ namespace: Schema.String, name: Schema.String })

/**
 * Routes `POST /hooks/:namespace/:name` to `offer`: a route Layer for an
 * `HttpRouter` (any other path is a 404).
 */
export const router = (offer: (target: Target) => Effect.Effect<boolean>) =>
  HttpRouter.add(
    "POST",
    "/hooks/:namespace/:name",
    Effect.gen(function*() {
      const { name, namespace } = yield* HttpRouter.schemaPathParams(Params)
      const accepted = yield* offer({ metadata: { name, namespace } })
      return accepted
        ? HttpServerResponse.text("queued\n", { status: 202 })
        : HttpServerResponse.text("shutting down\n", { status: 503 })
    }).pipe(
      Effect.catchTag("SchemaError", () => Effect.succeed(HttpServerResponse.text("bad path\n", { status: 400 })))
    )
  )

/**
 * Starts the webhook server on 127.0.0.1 and a controller fed by it, in the
 * current scope, under the `Manager`. Returns the bound port.
 */
export const start = <R>(options: {
  readonly port?: number | undefined
  readonly reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>
}) =>
  Effect.gen(function*() {
    const hooks = yield* Source.channel<Target>("webhooks")
    const controller = yield* Controller.make({
      name: "external-trigger",
      watches: [Controller.watch(hooks.source, Handler.forObject)],
      reconcile: options.reconcile
    })
    const server = yield* NodeHttpServer.make(() => Http.createServer(), { host: "127.0.0.1", port: options.port ?? 0 })
    yield* server.serve(yield* HttpRouter.toHttpEffect(router((target) => hooks.offer(Event.generic(target)))))
    const address = server.address
    return { port: address._tag === "UnixPathAddress" ? 0 : address.port, controller }
  })
