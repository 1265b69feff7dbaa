/**
 * `Controller.addWatch`: a source added to a running controller starts at once and counts for readiness and
 * cache sync; one added before the sources start is queued and starts with the others; closing the scope of the
 * call stops it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope, Stream } from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as LeaderElection from "../src/LeaderElection.js"
import * as Source from "../src/Source.js"
import { advance, type Obj, obj, settle, start, startElected, TestManager, uniqueName } from "./harness.js"

/** A channel source whose `synced` completes when `markSynced` runs. */
const lateSource = (name: string) =>
  Effect.gen(function*() {
    const channel = yield* Source.channel<Obj>(name)
    const synced = yield* Deferred.make<void>()
    const source = Source.make({ name, events: channel.source.events, synced: Deferred.await(synced) })
    return {
      watch: Controller.watch(source, Handler.forObject),
      send: (n: string) => Effect.andThen(channel.offer(Event.create(obj(n))), settle),
      markSynced: Effect.andThen(Deferred.succeed(synced, undefined), settle)
    }
  })

const recorder = () => {
  const calls: Array<string> = []
  return { calls, reconcile: (req: { readonly name: string }) => Effect.sync(() => void calls.push(req.name)) }
}

describe("Controller.addWatch", () => {
  it.effect("a source added to a running controller starts at once and its events are reconciled", () =>
    Effect.gen(function*() {
      const { calls, reconcile } = recorder()
      const { controller, send } = yield* start(reconcile)
      yield* send("a")
      assert.isTrue(yield* controller.started)
      const late = yield* lateSource("discovered")
      yield* Controller.addWatch(controller, late.watch)
      yield* late.markSynced
      yield* late.send("b")
      yield* send("c")
      assert.deepStrictEqual(calls, ["a", "b", "c"])
    }))

  it.effect("a late source counts for readiness: the controller is not ready until it has synced", () =>
    Effect.gen(function*() {
      const { controller } = yield* start(() => Effect.void)
      yield* settle
      assert.isTrue(yield* controller.ready)
      const late = yield* lateSource("discovered")
      yield* controller.watch(late.watch)
      yield* settle
      assert.isFalse(yield* controller.ready)
      assert.isFalse(yield* controller.synced)
      assert.isTrue(yield* controller.started, "workers keep running meanwhile")
      yield* late.markSynced
      assert.isTrue(yield* controller.ready)
      assert.isTrue(yield* controller.synced)
    }))

  it.effect("a late source that does not sync within cacheSyncTimeout fails the controller, naming it", () =>
    Effect.gen(function*() {
      const { controller } = yield* start(() => Effect.void, { cacheSyncTimeout: "30 seconds" })
      yield* advance(10_000)
      const late = yield* lateSource("discovered")
      yield* Controller.addWatch(controller, late.watch)
      const failure = yield* Effect.forkChild(Effect.flip(controller.await))
      yield* advance(29_999)
      assert.isUndefined(failure.pollUnsafe(), "the timeout counts from when the source was added")
      yield* advance(1)
      const error = yield* Fiber.join(failure)
      assert.strictEqual(error._tag, "CacheSyncTimeout")
      assert.deepStrictEqual(error._tag === "CacheSyncTimeout" && error.sources, ["discovered"])
    }))

  it.effect("a late source that fails fails the controller with SourceFailed (a controller may start with none)", () =>
    Effect.gen(function*() {
      const watches: ReadonlyArray<Controller.Watch<string>> = []
      const controller = yield* Controller.make({ name: uniqueName("late"), watches, reconcile: () => Effect.void })
        .pipe(Effect.provide(TestManager))
      yield* settle
      assert.isTrue(yield* controller.started)
      yield* Controller.addWatch(
        controller,
        Controller.watch(Source.fromStream<Obj, string>("broken", Stream.fail("watch error")), Handler.forObject)
      )
      yield* settle
      const error = yield* Effect.flip(controller.await)
      assert.deepStrictEqual(error._tag === "SourceFailed" && [error.source, error.cause], ["broken", "watch error"])
    }))

  it.effect("closing the scope of the call stops the source and it no longer counts for readiness", () =>
    Effect.gen(function*() {
      const { calls, reconcile } = recorder()
      const { controller } = yield* start(reconcile, { cacheSyncTimeout: "30 seconds" })
      const late = yield* lateSource("discovered")
      const scope = yield* Scope.make()
      let interrupted = false
      const watch: Controller.Watch = {
        ...late.watch,
        run: (enqueue) =>
          Effect.onInterrupt(late.watch.run(enqueue), () => Effect.sync(() => void (interrupted = true)))
      }
      yield* controller.watch(watch).pipe(Scope.provide(scope))
      yield* late.send("b")
      assert.deepStrictEqual(calls, ["b"])
      assert.isFalse(yield* controller.ready, "not synced yet")
      yield* Scope.close(scope, Exit.void)
      yield* settle
      assert.isTrue(interrupted, "the source's fiber is interrupted")
      assert.isTrue(yield* controller.ready, "a removed source no longer counts")
      yield* late.send("c")
      assert.deepStrictEqual(calls, ["b"], "no event of a removed source is reconciled")
      yield* advance(60_000)
      const failure = yield* Effect.forkChild(controller.await)
      yield* settle
      assert.isUndefined(failure.pollUnsafe(), "no cache-sync timeout for a removed source")
    }))

  it.effect("before the sources start (a follower without warmup) a source is queued and starts with the others", () =>
    Effect.gen(function*() {
      const { elect, election } = yield* LeaderElection.manual()
      const { calls, reconcile } = recorder()
      const { controller, send } = yield* startElected(election, reconcile)
      const late = yield* lateSource("discovered")
      let runs = 0
      yield* controller.watch({
        ...late.watch,
        run: (enqueue) => Effect.suspend(() => (runs++, late.watch.run(enqueue)))
      })
      yield* send("a")
      yield* late.send("b")
      assert.strictEqual(runs, 0, "queued: not started before leadership")
      assert.isTrue(yield* controller.ready, "a follower is ready")
      yield* elect
      yield* settle
      assert.strictEqual(runs, 1, "started with the others")
      assert.isFalse(yield* controller.started, "workers wait for the queued source to sync too")
      assert.deepStrictEqual(calls, [])
      yield* late.markSynced
      yield* settle
      assert.isTrue(yield* controller.started)
      assert.deepStrictEqual([...calls].sort(), ["a", "b"])
    }))

  it.effect("a queued source whose scope closes before the sources start never starts", () =>
    Effect.gen(function*() {
      const { elect, election } = yield* LeaderElection.manual()
      const { controller } = yield* startElected(election, () => Effect.void)
      const late = yield* lateSource("discovered")
      let runs = 0
      const scope = yield* Scope.make()
      yield* controller.watch({
        ...late.watch,
        run: (enqueue) => Effect.suspend(() => (runs++, late.watch.run(enqueue)))
      })
        .pipe(Scope.provide(scope))
      yield* Scope.close(scope, Exit.void)
      yield* elect
      yield* settle
      assert.strictEqual(runs, 0)
      assert.isTrue(yield* controller.started, "workers do not wait for a removed source")
    }))
})
