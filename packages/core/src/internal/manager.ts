import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HealthServer from "../HealthServer.js"
import { LeaderElection } from "../LeaderElection.js"
import { Manager, ManagerError } from "../Manager.js"

/** @internal */
export const make = (
  options: Manager.Options = {}
): Effect.Effect<Manager.Service, HealthServer.HealthServerError, LeaderElection | Scope.Scope> =>
  Effect.gen(function*() {
    const leaderElection = yield* LeaderElection
    const runnables = new Set<Manager.Runnable>()
    const failure = yield* Deferred.make<never, ManagerError>()
    const ready = Effect.suspend(() =>
      Effect.reduce(runnables, () => true, (ok: boolean, runnable) => (ok ? runnable.ready : Effect.succeed(false)))
    )
    const host = options.host ?? "127.0.0.1"
    const { healthPort, metricsPort } = options
    const processMetrics = options.processMetrics !== false
    let metricsAddress: HealthServer.Address | undefined
    let healthAddress: HealthServer.Address | undefined
    if (metricsPort !== undefined && metricsPort === healthPort) {
      metricsAddress = healthAddress = yield* HealthServer.serve({ host, port: metricsPort, ready, processMetrics })
    } else {
      if (metricsPort !== undefined) {
        metricsAddress = yield* HealthServer.serve({ host, port: metricsPort, ready, processMetrics })
      }
      if (healthPort !== undefined) {
        healthAddress = yield* HealthServer.serve({ host, port: healthPort, ready, metrics: false })
      }
    }
    const service: Manager.Service = {
      register: (runnable) =>
        Effect.gen(function*() {
          runnables.add(runnable)
          yield* Effect.addFinalizer(() => Effect.sync(() => runnables.delete(runnable)))
          yield* runnable.await.pipe(
            Effect.catch((cause) => Deferred.fail(failure, new ManagerError({ runnable: runnable.name, cause }))),
            Effect.catchDefect((defect) =>
              Deferred.fail(failure, new ManagerError({ runnable: runnable.name, cause: defect }))
            ),
            Effect.forkScoped
          )
        }),
      ready,
      metricsAddress,
      healthAddress,
      await: Deferred.await(failure),
      leaderElection
    }
    return service
  })

/** @internal */
export const layer = (
  options?: Manager.Options
): Layer.Layer<Manager, HealthServer.HealthServerError, LeaderElection> => Layer.effect(Manager, make(options))

/** @internal */
export const launch = <E, R>(app: Layer.Layer<Manager, E, R>): Effect.Effect<never, E | ManagerError, R> =>
  Effect.scoped(Effect.flatMap(Layer.build(app), (context) => Context.get(context, Manager).await))
