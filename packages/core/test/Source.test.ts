import { assert, describe, it } from "@effect/vitest"
import { Data, Deferred, Effect, Exit, Fiber, Option, pipe, PubSub, Queue, Ref, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import type { HasMetadata } from "../src/ObjectMeta.js"
import * as Predicates from "../src/Predicates.js"
import * as Request from "../src/Request.js"
import * as Source from "../src/Source.js"

const obj = (name: string, generation = 1): HasMetadata => ({ metadata: { name, namespace: "ns", generation } })
const names = (events: Iterable<Event.Event<HasMetadata>>) =>
  Array.from(events, (e) => `${e._tag}:${e.object.metadata?.name}`)

/** Lets forked fibers run until they block (e.g. subscribe to a PubSub). */
const settle = Effect.repeat(Effect.yieldNow, { times: 20 })

describe("Source.fromStream", () => {
  it.effect("delivers the stream's events and is synced at once by default", () =>
    Effect.gen(function*() {
      const source = Source.fromStream("fixed", Stream.make(Event.create(obj("a")), Event.delete(obj("b"))))
      assert.strictEqual(source.name, "fixed")
      yield* source.synced
      assert.deepStrictEqual(names(yield* Stream.runCollect(source.events)), ["Create:a", "Delete:b"])
    }))

  it.effect("waits on a given synced effect", () =>
    Effect.gen(function*() {
      const initialListed = yield* Deferred.make<void>()
      const source = Source.fromStream("watch", Stream.never, { synced: Deferred.await(initialListed) })
      const waiting = yield* Effect.forkChild(source.synced)
      yield* settle
      assert.isTrue(Option.isNone(Option.fromUndefinedOr(waiting.pollUnsafe()))) // effect 4: no Fiber.poll
      yield* Deferred.succeed(initialListed, void 0)
      yield* Fiber.join(waiting)
    }))

  it.effect("can be run twice: the stream is a value", () =>
    Effect.gen(function*() {
      const source = Source.fromStream("fixed", Stream.make(Event.generic(obj("a"))))
      const first = yield* Stream.runCollect(source.events)
      const second = yield* Stream.runCollect(source.events)
      assert.deepStrictEqual(names(first), names(second))
    }))
})

describe("Source.fromQueue / Source.channel", () => {
  it.effect("fromQueue delivers queued events and ends when the queue shuts down", () =>
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<Event.Event<HasMetadata>>()
      yield* Queue.offerAll(queue, [Event.generic(obj("a")), Event.generic(obj("b"))])
      const source = Source.fromQueue("hooks", queue)
      const got = yield* Stream.runCollect(Stream.take(source.events, 2))
      assert.deepStrictEqual(names(got), ["Generic:a", "Generic:b"])
      const rest = yield* Effect.forkChild(Stream.runCollect(source.events))
      yield* settle
      yield* Queue.shutdown(queue)
      assert.deepStrictEqual(names(yield* Fiber.join(rest)), [])
    }))

  it.effect("channel keeps events offered before the stream runs, and offer is false after shutdown", () =>
    Effect.gen(function*() {
      const ch = yield* Source.channel<HasMetadata>("webhooks")
      assert.strictEqual(ch.source.name, "webhooks")
      yield* ch.source.synced
      assert.isTrue(yield* ch.offer(Event.generic(obj("early"))))
      const consumer = yield* Effect.forkChild(Stream.runCollect(ch.source.events))
      yield* settle
      assert.isTrue(yield* ch.offer(Event.update(obj("x", 1), obj("x", 2))))
      yield* settle
      yield* ch.shutdown
      assert.deepStrictEqual(names(yield* Fiber.join(consumer)), ["Generic:early", "Update:x"])
      assert.isFalse(yield* ch.offer(Event.generic(obj("late"))))
    }))
})

describe("Source.fromPubSub", () => {
  it.effect("each run subscribes: every run sees what is published after it started, not before", () =>
    Effect.gen(function*() {
      const pubsub = yield* PubSub.unbounded<Event.Event<HasMetadata>>()
      const source = Source.fromPubSub("bus", pubsub)
      yield* PubSub.publish(pubsub, Event.generic(obj("before")))
      const r1 = yield* Effect.forkChild(Stream.runCollect(Stream.take(source.events, 2)))
      const r2 = yield* Effect.forkChild(Stream.runCollect(Stream.take(source.events, 2)))
      yield* settle
      yield* PubSub.publishAll(pubsub, [Event.generic(obj("a")), Event.generic(obj("b"))])
      assert.deepStrictEqual(names(yield* Fiber.join(r1)), ["Generic:a", "Generic:b"])
      assert.deepStrictEqual(names(yield* Fiber.join(r2)), ["Generic:a", "Generic:b"])
    }))

  it.effect("the stream ends when the PubSub shuts down", () =>
    Effect.gen(function*() {
      const pubsub = yield* PubSub.unbounded<Event.Event<HasMetadata>>()
      const run = yield* Effect.forkChild(Stream.runCollect(Source.fromPubSub("bus", pubsub).events))
      yield* settle
      yield* PubSub.publish(pubsub, Event.generic(obj("a")))
      yield* settle
      yield* PubSub.shutdown(pubsub)
      assert.deepStrictEqual(names(yield* Fiber.join(run)), ["Generic:a"])
    }))
})

class ListFailed extends Data.TaggedError("ListFailed")<{}> {}

describe("Source.periodic", () => {
  it.effect("emits a Generic event per listed object at start and then every interval (TestClock)", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const list = Ref.updateAndGet(calls, (n) => n + 1).pipe(Effect.map((n) => [obj(`a${n}`), obj(`b${n}`)]))
      const source = Source.periodic("resync", "10 seconds", list)
      yield* source.synced
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      yield* Effect.forkChild(Stream.runForEach(source.events, (e) => Ref.update(seen, (s) => [...s, ...names([e])])))
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(seen), ["Generic:a1", "Generic:b1"])
      yield* TestClock.adjust("9 seconds")
      assert.deepStrictEqual(yield* Ref.get(seen), ["Generic:a1", "Generic:b1"])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Ref.get(seen), ["Generic:a1", "Generic:b1", "Generic:a2", "Generic:b2"])
      yield* TestClock.adjust("20 seconds")
      assert.strictEqual(yield* Ref.get(calls), 4)
      assert.strictEqual((yield* Ref.get(seen)).length, 8)
    }))

  it.effect("immediate: false waits one interval before the first list", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const source = Source.periodic("resync", "1 minute", Effect.as(Ref.update(calls, (n) => n + 1), [obj("a")]), {
        immediate: false
      })
      const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(source.events, 2)))
      yield* settle
      assert.strictEqual(yield* Ref.get(calls), 0)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Ref.get(calls), 1)
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(names(yield* Fiber.join(fiber)), ["Generic:a", "Generic:a"])
    }))

  it.effect("a failing list fails the stream with its error", () =>
    Effect.gen(function*() {
      const source = Source.periodic("resync", "1 second", Effect.fail(new ListFailed()))
      const exit = yield* Effect.exit(Stream.runDrain(source.events))
      assert.deepStrictEqual(exit, Exit.fail(new ListFailed()))
    }))
})

describe("Source.filter / Source.withPredicates", () => {
  const events = [
    Event.create(obj("a")),
    Event.update(obj("a", 1), obj("a", 1)), // no spec change
    Event.update(obj("b", 1), obj("b", 2)),
    Event.delete(obj("c")),
    Event.generic({ metadata: { name: "d", labels: { skip: "yes" } } })
  ]
  const source = Source.fromStream("s", Stream.fromIterable(events), { synced: Effect.void })

  it.effect("filter keeps the events the predicate passes, data-first and pipeable; name and synced unchanged", () =>
    Effect.gen(function*() {
      const dataFirst = Source.filter(source, Predicates.generationChanged)
      const piped = pipe(source, Source.filter(Predicates.generationChanged))
      assert.strictEqual(dataFirst.name, "s")
      assert.strictEqual(dataFirst.synced, source.synced)
      const expected = ["Create:a", "Update:b", "Delete:c", "Generic:d"]
      assert.deepStrictEqual(names(yield* Stream.runCollect(dataFirst.events)), expected)
      assert.deepStrictEqual(names(yield* Stream.runCollect(piped.events)), expected)
    }))

  it.effect("withPredicates applies every predicate", () =>
    Effect.gen(function*() {
      const filtered = pipe(
        source,
        Source.withPredicates(
          Predicates.generationChanged,
          Predicates.not(Predicates.labelSelector({ matchLabels: { skip: "yes" } }))
        )
      )
      assert.deepStrictEqual(names(yield* Stream.runCollect(filtered.events)), ["Create:a", "Update:b", "Delete:c"])
      const none = pipe(source, Source.withPredicates())
      assert.strictEqual((yield* Stream.runCollect(none.events)).length, events.length)
    }))

  it.effect("a source works alone, outside a controller: source → predicates → handler → requests", () =>
    Effect.gen(function*() {
      const ch = yield* Source.channel<HasMetadata>("external")
      yield* ch.offer(Event.update(obj("web", 1), obj("web", 1)))
      yield* ch.offer(Event.update(obj("web", 1), obj("web", 2)))
      yield* ch.offer(Event.delete(obj("db")))
      const requests = yield* pipe(ch.source, Source.withPredicates(Predicates.generationChanged)).events.pipe(
        Stream.mapEffect(Handler.forObject),
        Stream.flattenIterable,
        Stream.map(Request.key),
        Stream.take(2),
        Stream.runCollect
      )
      assert.deepStrictEqual(requests, ["ns/web", "ns/db"])
    }))
})
