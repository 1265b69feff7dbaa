/**
 * Runs the webhook-triggered controller: `npm start -w examples/external-trigger`,
 * then `curl -X POST http://127.0.0.1:8090/hooks/default/site`.
 */
import { NodeRuntime } from "@effect/platform-node"
import { LeaderElection, Manager } from "@reconcile/core"
import { Console, Effect, Layer } from "effect"
import { start } from "./webhook.js"

const program = Effect.gen(function*() {
  const { port } = yield* start({
    port: Number(process.env.PORT ?? 8090),
    reconcile: (req) => Effect.log(`rebuilding ${req.namespace}/${req.name}`)
  })
  yield* Console.log(`POST http://127.0.0.1:${port}/hooks/<namespace>/<name> to trigger a reconcile (Ctrl-C stops)`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  // one replica, no HTTP endpoints of its own beyond the webhook
  Effect.provide(Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader)))
)

NodeRuntime.runMain(program)
