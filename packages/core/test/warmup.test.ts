/**
 * `warmup`: with `true` a controller's sources start (list) before this replica leads; with `false` — the default,
 * as controller-runtime's `EnableWarmup` — only once leadership is acquired. Workers start after leadership either
 * way. The election here is granted 10 s after the controller starts, on the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Stream } from "effect"
import * as Controller from "../src/Controller.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as LeaderElection from "../src/LeaderElection.js"
import * as Source from "../src/Source.js"
import { advance, managerWith, type Obj, obj, settle, TestManager, uniqueName } from "./harness.js"

const electedAt = 10_000

/** A Kind-like source: when its stream starts it lists `a` and `b` (recording the time), then is synced. */
const listing = Effect.gen(function*() {
  const listed: Array<number> = []
  const synced = yield* Deferred.make<void>()
  const events = Stream.fromEffect(Clock.currentTimeMillis).pipe(
    Stream.tap((now) => Effect.sync(() => void listed.push(now))),
    Stream.flatMap(() =>
      Stream.make(Event.create(obj("a"), { initial: true }), Event.create(obj("b"), { initial: true }))
    ),
    Stream.concat(Stream.fromEffectDrain(Deferred.succeed(synced, undefined))),
    Stream.concat(Stream.never)
  )
  return { listed, source: Source.make<Obj>({ name: "objects", events, synced: Deferred.await(synced) }) }
})

const run = (options: Controller.Options) =>
  Effect.gen(function*() {
    const { elect, election } = yield* LeaderElection.manual()
    const { listed, source } = yield* listing
    const reconciled: Array<[string, number]> = []
    const controller = yield* Controller.make({
      name: uniqueName("warmup"),
      watches: [Controller.watch(source, Handler.forObject)],
      reconcile: (req) => Effect.map(Clock.currentTimeMillis, (now) => void reconciled.push([req.name, now])),
      options
    }).pipe(Effect.provide(managerWith(election)))
    yield* Effect.sleep(electedAt).pipe(Effect.andThen(elect), Effect.forkChild)
    return { controller, listed, reconciled }
  })

describe("Controller warmup", () => {
  it.effect("warmup: true lists before leadership; workers still wait for it", () =>
    Effect.gen(function*() {
      const { controller, listed, reconciled } = yield* run({ warmup: true })
      yield* advance(electedAt - 1)
      assert.deepStrictEqual(listed, [0], "the source listed at once, before leadership")
      assert.isTrue(yield* controller.synced)
      assert.isTrue(yield* controller.ready)
      assert.isFalse(yield* controller.started)
      assert.deepStrictEqual(reconciled, [])
      yield* advance(1)
      assert.isTrue(yield* controller.started)
      assert.deepStrictEqual(reconciled, [["a", electedAt], ["b", electedAt]])
    }))

  it.effect("warmup: false lists only once leadership is acquired; a follower is ready meanwhile", () =>
    Effect.gen(function*() {
      const { controller, listed, reconciled } = yield* run({ warmup: false })
      yield* advance(electedAt - 1)
      assert.deepStrictEqual(listed, [], "no list before leadership")
      assert.isFalse(yield* controller.synced)
      assert.isTrue(yield* controller.ready, "readiness does not wait for leadership")
      assert.isFalse(yield* controller.started)
      yield* advance(1)
      assert.deepStrictEqual(listed, [electedAt])
      assert.isTrue(yield* controller.synced)
      assert.isTrue(yield* controller.started)
      assert.deepStrictEqual(reconciled, [["a", electedAt], ["b", electedAt]])
    }))

  it.effect("the default is controller-runtime's: no warm-up", () =>
    Effect.gen(function*() {
      const { listed } = yield* run({})
      yield* advance(electedAt - 1)
      assert.deepStrictEqual(listed, [])
      yield* advance(1)
      assert.deepStrictEqual(listed, [electedAt])
    }))

  it.effect("without warmup the cache-sync timeout counts from leadership, not from the start", () =>
    Effect.gen(function*() {
      const { elect, election } = yield* LeaderElection.manual()
      const controller = yield* Controller.make({
        name: uniqueName("warmup"),
        watches: [
          Controller.watch(
            Source.make<Obj>({ name: "stuck", events: Stream.never, synced: Effect.never }),
            Handler.forObject
          )
        ],
        reconcile: () => Effect.void,
        options: { cacheSyncTimeout: "30 seconds" }
      }).pipe(Effect.provide(managerWith(election)))
      const failure = yield* Effect.forkChild(Effect.flip(controller.await))
      yield* advance(60_000)
      assert.isUndefined(failure.pollUnsafe(), "a follower does not time out")
      yield* elect
      yield* advance(29_999)
      assert.isUndefined(failure.pollUnsafe())
      yield* advance(1)
      yield* settle
      assert.strictEqual(failure.pollUnsafe()?._tag, "Success")
    }))

  it.effect("with an always-leader election (the default) the sources start at once either way", () =>
    Effect.gen(function*() {
      for (const warmup of [true, false]) {
        const { listed, source } = yield* listing
        yield* Controller.make({
          name: uniqueName("warmup"),
          watches: [Controller.watch(source, Handler.forObject)],
          reconcile: () => Effect.void,
          options: { warmup }
        }).pipe(Effect.provide(TestManager))
        yield* settle
        assert.deepStrictEqual(listed, [0])
      }
    }))
})
