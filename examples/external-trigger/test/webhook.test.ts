import { assert, describe, it } from "@effect/vitest"
import { LeaderElection, Manager } from "@reconcile/core"
import { Deferred, Effect, Layer } from "effect"
import { start } from "../src/webhook.js"

/** The Manager the controller runs under: no endpoint, always the leader. */
const TestManager = Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader))

const post = (port: number, path: string) =>
  Effect.promise(() => fetch(`http://127.0.0.1:${port}${path}`, { method: "POST" }).then((r) => r.status))

describe("external trigger", () => {
  it.live("a webhook enqueues a reconcile of the key it names", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const done = yield* Deferred.make<void>()
      const { port } = yield* start({
        reconcile: (req) =>
          Effect.suspend(() => {
            seen.push(`${req.namespace}/${req.name}`)
            return seen.length === 2 ? Deferred.succeed(done, undefined) : Effect.void
          })
      })
      assert.strictEqual(yield* post(port, "/hooks/default/site"), 202)
      assert.strictEqual(yield* post(port, "/hooks/prod/api"), 202)
      yield* Deferred.await(done).pipe(Effect.timeout("5 seconds"))
      assert.deepStrictEqual(seen.sort(), ["default/site", "prod/api"])
    }).pipe(Effect.provide(TestManager)))

  it.live("a burst of hooks for one key while it waits collapses into one reconcile", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const secondDone = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const { controller, port } = yield* start({
        reconcile: (req) =>
          Effect.suspend(() => {
            seen.push(req.name)
            return seen.length === 1 ? Deferred.await(release) : Deferred.succeed(secondDone, undefined)
          })
      })
      assert.strictEqual(yield* post(port, "/hooks/default/busy"), 202) // in flight, blocked
      for (let i = 0; i < 5; i++) assert.strictEqual(yield* post(port, "/hooks/default/busy"), 202)
      yield* Deferred.succeed(release, undefined)
      yield* Deferred.await(secondDone).pipe(Effect.timeout("5 seconds"))
      assert.deepStrictEqual(seen, ["busy", "busy"], "one run in flight plus one collapsed re-run")
      assert.strictEqual(yield* controller.queue.len, 0, "nothing else is queued")
    }).pipe(Effect.provide(TestManager)))

  it.live("unknown paths are 404", () =>
    Effect.gen(function*() {
      const { port } = yield* start({ reconcile: () => Effect.void })
      assert.strictEqual(yield* post(port, "/nope"), 404)
    }).pipe(Effect.provide(TestManager)))
})
