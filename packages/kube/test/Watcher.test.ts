import { assert, describe, it } from "@effect/vitest"
import type * as Source from "@reconcile/core/Source"
import { TestKube } from "@reconcile/testkit"
import { Clock, Duration, Effect, Fiber, Metric, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as KubeError from "../src/KubeError.js"
import * as KubeStatus from "../src/KubeStatus.js"
import * as Watcher from "../src/Watcher.js"

interface Obj {
  readonly metadata: { readonly name: string; readonly resourceVersion: string }
}
const obj = (name: string, rv: number): Obj => ({ metadata: { name, resourceVersion: String(rv) } })

type Call =
  | { readonly op: "list"; readonly continue: string | undefined }
  | { readonly op: "watch"; readonly resourceVersion: string }
  | { readonly op: "check"; readonly resourceVersion: string }

/**
 * A scripted API: each list or watch call takes the next scripted answer. With `checks`, the API can check a
 * resourceVersion (`checkResourceVersion`): each check takes the next answer (success when none is left).
 */
const scripted = (
  lists: Array<Effect.Effect<Watcher.ListPage<Obj>, KubeError.KubeError>>,
  watches: Array<Stream.Stream<Watcher.RawEvent<Obj>, KubeError.KubeError>>,
  checks?: Array<Effect.Effect<void, KubeError.KubeError>>
) => {
  const calls: Array<Call> = []
  const checkResourceVersion = checks === undefined ? undefined : (resourceVersion: string) => {
    calls.push({ op: "check", resourceVersion })
    return checks.shift() ?? Effect.void
  }
  const listWatch: Watcher.ListWatch<Obj> = {
    checkResourceVersion,
    name: "test-objects",
    list: (options) => {
      calls.push({ op: "list", continue: options.continue })
      return lists.shift() ?? Effect.never
    },
    watch: (options) => {
      calls.push({ op: "watch", resourceVersion: options.resourceVersion })
      return watches.shift() ?? Stream.never
    },
    resourceVersion: (o) => o.metadata.resourceVersion
  }
  return { calls, listWatch }
}

const events = (...es: Array<Watcher.RawEvent<Obj>>) => Stream.fromIterable(es)

const page = (items: ReadonlyArray<Obj>, resourceVersion: string, cont?: string) =>
  Effect.succeed<Watcher.ListPage<Obj>>({ items, resourceVersion, continue: cont })

const summary = (e: Watcher.WatcherEvent<Obj>) =>
  e._tag === "Init"
    ? "Init"
    : e._tag === "InitDone"
    ? `InitDone@${e.resourceVersion}`
    : e._tag === "Undecodable"
    ? `Undecodable(${e.event}):${e.error.metadata?.name}@${e.error.metadata?.resourceVersion}`
    : `${e._tag}:${e.object.metadata.name}@${e.object.metadata.resourceVersion}`

const serverError = new KubeError.ServerError({ status: { code: 500, message: "boom" } })
const gone = new KubeError.Gone({ status: { code: 410, reason: "Expired", message: "too old" } })
/** kube-apiserver's answer to a resourceVersion newer than its own (a reset or restored server). */
const tooLarge = KubeStatus.toError({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code: 504,
  reason: "Timeout",
  message: "Too large resource version: 9, current: 2",
  details: {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1
  }
}, { code: 504 })

// the watcher's counters, by name (as a scrape sees them)
const reconnectsTotal = Metric.counter("watcher_reconnects_total", {
  description: "Re-established lists and watches of a watcher after a failure, an idle connection, 410 Gone or a reset"
})
const relistsTotal = Metric.counter("watcher_relists_total", {
  description: "Relists of a watcher after 410 Gone or a reset API server (too large resourceVersion)"
})
const reconnects = (reason: string) =>
  Effect.map(
    Metric.value(Metric.withAttributes(reconnectsTotal, { watch: "test-objects", reason })),
    (state) => state.count
  )
const relists = Effect.map(
  Metric.value(Metric.withAttributes(relistsTotal, { watch: "test-objects" })),
  (state) => state.count
)

/** Records the health reports with their time. */
const healthLog = () => {
  const log: Array<string> = []
  const onHealth = (health: Source.Health) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      log.push(
        health._tag === "Connected" ? `Connected@${now}` : `Disconnected(${health.reason} since ${health.since})@${now}`
      )
    })
  return { log, onHealth }
}

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up

/** Runs the watcher in the background, collecting summaries. */
const collect = (listWatch: Watcher.ListWatch<Obj>, options: Watcher.Options = { jitter: 0 }) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const fiber = yield* Watcher.watch(listWatch, options).pipe(
      Stream.runForEach((e) => Effect.sync(() => void seen.push(summary(e)))),
      Effect.forkChild
    )
    yield* settle
    return { seen, fiber }
  })

describe("Watcher", () => {
  it.effect("lists every page, then watches from the list's resourceVersion", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted(
        [page([obj("a", 1), obj("b", 2)], "", "c1"), page([obj("c", 3)], "10")],
        [events({ _tag: "Added", object: obj("d", 11) }, { _tag: "Deleted", object: obj("a", 12) })]
      )
      const { seen } = yield* collect(listWatch, { pageSize: 2, jitter: 0 })
      assert.deepStrictEqual(seen, [
        "Init",
        "InitApply:a@1",
        "InitApply:b@2",
        "InitApply:c@3",
        "InitDone@10",
        "Apply:d@11",
        "Delete:a@12"
      ])
      assert.deepStrictEqual(calls.slice(0, 4), [
        { op: "list", continue: undefined },
        { op: "list", continue: "c1" },
        { op: "watch", resourceVersion: "10" },
        { op: "watch", resourceVersion: "12" }
      ], "a watch that ends normally resumes from the last resourceVersion at once")
    }))

  it.effect("bookmarks advance the resourceVersion without emitting", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted(
        [page([], "5")],
        [events({ _tag: "Bookmark", resourceVersion: "40" })]
      )
      const { seen } = yield* collect(listWatch)
      assert.deepStrictEqual(seen, ["Init", "InitDone@5"])
      assert.deepStrictEqual(calls.map((c) => c.op === "watch" ? c.resourceVersion : "list"), ["list", "5", "40"])
    }))

  it.effect("410 Gone as a watch ERROR event relists", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted(
        [page([obj("a", 1)], "5"), page([obj("b", 9)], "9")],
        [events({ _tag: "Error", error: gone })]
      )
      const { seen } = yield* collect(listWatch)
      assert.deepStrictEqual(seen, ["Init", "InitApply:a@1", "InitDone@5", "Init", "InitApply:b@9", "InitDone@9"])
      assert.strictEqual(calls.filter((c) => c.op === "list").length, 2)
    }))

  it.effect("410 Gone as a failed watch request relists", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted([page([], "5"), page([], "9")], [Stream.fail(gone)])
      yield* collect(listWatch)
      assert.deepStrictEqual(calls.map((c) => c.op), ["list", "watch", "list", "watch"])
    }))

  it.effect("410 Gone on a continue token restarts the list from the first page", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted(
        [page([obj("a", 1)], "", "c1"), Effect.fail(gone), page([obj("a", 1), obj("b", 2)], "7")],
        []
      )
      const { seen } = yield* collect(listWatch, { pageSize: 1, jitter: 0 })
      assert.deepStrictEqual(seen, ["Init", "InitApply:a@1", "Init", "InitApply:a@1", "InitApply:b@2", "InitDone@7"])
      assert.deepStrictEqual(calls.slice(0, 3), [
        { op: "list", continue: undefined },
        { op: "list", continue: "c1" },
        { op: "list", continue: undefined }
      ])
    }))

  it.effect("errors back off 800 ms → 30 s, doubling; the backoff resets after progress", () =>
    Effect.gen(function*() {
      const failures = Array.from({ length: 7 }, (): Stream.Stream<Watcher.RawEvent<Obj>, KubeError.KubeError> =>
        Stream.fail(serverError))
      const { calls, listWatch } = scripted(
        [page([], "1")],
        [...failures, events({ _tag: "Added", object: obj("x", 2) }), Stream.fail(serverError)]
      )
      yield* collect(listWatch)
      const watchTimes: Array<number> = []
      let lastCount = calls.length
      for (let t = 0; t < 90_000; t += 200) {
        yield* TestClock.adjust(Duration.millis(200))
        if (calls.length !== lastCount) {
          watchTimes.push(t + 200)
          lastCount = calls.length
        }
      }
      // Delays: 800, 1600, 3200, 6400, 12800, 25600, 30000 (capped), then progress resets: 0 (normal end), 800.
      const gaps = watchTimes.map((t, i) =>
        t - (i === 0 ? 0 : watchTimes[i - 1]!)
      )
      assert.deepStrictEqual(gaps.slice(0, 7), [800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000])
      assert.strictEqual(gaps[7], 800, "after an event the backoff starts again at 800 ms")
    }))

  it.effect("jittered delays stay within [0.5, 1.5] × the nominal delay, capped at the maximum", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted([page([], "1")], [Stream.fail(serverError), Stream.fail(serverError)])
      yield* collect(listWatch, {})
      yield* TestClock.adjust(Duration.millis(399))
      assert.strictEqual(calls.length, 2, "no retry before 0.5 × 800 ms")
      yield* TestClock.adjust(Duration.millis(801))
      assert.strictEqual(calls.length, 3, "a retry by 1.5 × 800 ms")
    }))

  it.effect("a silent watch is abandoned after timeoutSeconds + 5 s and resumed", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted([page([], "3")], [Stream.never])
      yield* collect(listWatch, { timeoutSeconds: 10, jitter: 0 })
      yield* TestClock.adjust(Duration.millis(14_999))
      assert.strictEqual(calls.length, 2)
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(calls[2], { op: "watch", resourceVersion: "3" })
    }))

  it.effect("a watch that keeps delivering is not idle; the watchdog counts from the last chunk", () =>
    Effect.gen(function*() {
      // pins the idle watchdog of the effect 4 port: every chunk restarts it (one bookmark per chunk, every 10 s)
      const ticking = Stream.range(1, 6, 1).pipe(
        Stream.mapEffect((i) =>
          Effect.as(Effect.sleep("10 seconds"), { _tag: "Bookmark", resourceVersion: String(10 + i) } as const)
        ),
        Stream.concat(Stream.never)
      )
      const { calls, listWatch } = scripted([page([], "10")], [ticking])
      yield* collect(listWatch, { timeoutSeconds: 10, jitter: 0 })
      yield* TestClock.adjust(Duration.seconds(60))
      assert.strictEqual(calls.length, 2, "bookmarks every 10 s keep a 15 s idle timeout from firing")
      yield* TestClock.adjust(Duration.millis(14_999))
      assert.strictEqual(calls.length, 2)
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(calls[2], { op: "watch", resourceVersion: "16" }, "resumed from the last bookmark")
    }))

  it.effect("by default a silent watch is dropped after 55 s (the watch's timeoutSeconds 50 + 5 s), not 5 minutes", () =>
    Effect.gen(function*() {
      const timeouts: Array<number> = []
      const { calls, listWatch } = scripted([page([], "3")], [Stream.never])
      const recorded: Watcher.ListWatch<Obj> = {
        ...listWatch,
        watch: (options) => {
          timeouts.push(options.timeoutSeconds)
          return listWatch.watch(options)
        }
      }
      yield* collect(recorded)
      assert.deepStrictEqual(timeouts, [50], "kube-apiserver ends it (with a bookmark 2 s before) after 50 s")
      yield* TestClock.adjust(Duration.millis(54_999))
      assert.strictEqual(calls.length, 2)
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(calls[2], { op: "watch", resourceVersion: "3" })
    }))

  it.effect("the idle limit is 2 × bookmarkInterval when that is shorter, and idleTimeout when given", () =>
    Effect.gen(function*() {
      const bookmarks = scripted([page([], "3")], [Stream.never])
      yield* collect(bookmarks.listWatch, { jitter: 0, bookmarkInterval: "10 seconds" })
      yield* TestClock.adjust(Duration.millis(19_999))
      assert.strictEqual(bookmarks.calls.length, 2)
      yield* TestClock.adjust(Duration.millis(1))
      assert.strictEqual(bookmarks.calls.length, 3, "20 s: twice the bookmark interval")

      const explicit = scripted([page([], "3")], [Stream.never])
      yield* collect(explicit.listWatch, { jitter: 0, idleTimeout: "7 seconds", timeoutSeconds: 290 })
      yield* TestClock.adjust(Duration.millis(6_999))
      assert.strictEqual(explicit.calls.length, 2)
      yield* TestClock.adjust(Duration.millis(1))
      assert.strictEqual(explicit.calls.length, 3, "idleTimeout wins")

      const long = scripted([page([], "3")], [Stream.never])
      yield* collect(long.listWatch, { jitter: 0, timeoutSeconds: 290 })
      yield* TestClock.adjust(Duration.millis(119_999))
      assert.strictEqual(long.calls.length, 2)
      yield* TestClock.adjust(Duration.millis(1))
      assert.strictEqual(long.calls.length, 3, "with a 290 s watch: twice kube-apiserver's 1-minute bookmarks")
    }))

  it.effect(
    "a silent connection: Disconnected since the server was last heard from, a reconnect counted, Connected " +
      "again once the check answers",
    () =>
      Effect.gen(function*() {
        const bookmarkAt10 = Stream.fromEffect(
          Effect.as(Effect.sleep("10 seconds"), { _tag: "Bookmark", resourceVersion: "11" } as const)
        ).pipe(Stream.concat(Stream.never))
        const { calls, listWatch } = scripted([page([], "3")], [bookmarkAt10], [])
        const { log, onHealth } = healthLog()
        const before = yield* reconnects("idle")
        yield* collect(listWatch, { jitter: 0, onHealth })
        yield* TestClock.adjust("64 seconds")
        assert.deepStrictEqual(log, [], "nothing is reported while the watch is within its idle limit")
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(log, ["Disconnected(idle since 10000)@65000", "Connected@65000"])
        assert.deepStrictEqual(calls, [
          { op: "list", continue: undefined },
          { op: "watch", resourceVersion: "3" },
          { op: "check", resourceVersion: "11" },
          { op: "watch", resourceVersion: "11" }
        ], "the resourceVersion is checked before the watch resumes")
        assert.strictEqual((yield* reconnects("idle")) - before, 1)
      })
  )

  it.effect("a failing list reports Disconnected since the watcher started; the first page reconnects", () =>
    Effect.gen(function*() {
      const { listWatch } = scripted([Effect.fail(serverError), page([], "1")], [])
      const { log, onHealth } = healthLog()
      yield* TestClock.adjust("5 seconds")
      const before = yield* reconnects("error")
      yield* collect(listWatch, { jitter: 0, onHealth })
      yield* TestClock.adjust(Duration.millis(800))
      assert.deepStrictEqual(log, ["Disconnected(ServerError since 5000)@5000", "Connected@5800"])
      assert.strictEqual((yield* reconnects("error")) - before, 1)
    }))

  it.effect(
    "a reset server: after a failure the resourceVersion is checked; 504 Too large resource version relists " +
      "from scratch",
    () =>
      Effect.gen(function*() {
        const { calls, listWatch } = scripted(
          [page([obj("a", 4)], "5"), page([obj("b", 2)], "2")],
          [Stream.fail(serverError)],
          [Effect.fail(tooLarge)]
        )
        const [relistsBefore, resetsBefore] = [yield* relists, yield* reconnects("reset")]
        const { seen } = yield* collect(listWatch)
        yield* TestClock.adjust(Duration.millis(800))
        assert.deepStrictEqual(seen, ["Init", "InitApply:a@4", "InitDone@5", "Init", "InitApply:b@2", "InitDone@2"])
        assert.deepStrictEqual(calls, [
          { op: "list", continue: undefined },
          { op: "watch", resourceVersion: "5" },
          { op: "check", resourceVersion: "5" },
          { op: "list", continue: undefined },
          { op: "watch", resourceVersion: "2" }
        ])
        assert.strictEqual((yield* relists) - relistsBefore, 1)
        assert.strictEqual((yield* reconnects("reset")) - resetsBefore, 1)
      })
  )

  it.effect("a watch that ended with nothing (a reset server's silent watch) is followed by a check", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted(
        [page([obj("a", 4)], "5"), page([], "3")],
        [Stream.empty, Stream.fromIterable<Watcher.RawEvent<Obj>>([{ _tag: "Bookmark", resourceVersion: "4" }])],
        [Effect.fail(tooLarge)]
      )
      const { seen } = yield* collect(listWatch)
      assert.deepStrictEqual(seen, ["Init", "InitApply:a@4", "InitDone@5", "Init", "InitDone@3"])
      assert.deepStrictEqual(calls.slice(0, 6), [
        { op: "list", continue: undefined },
        { op: "watch", resourceVersion: "5" },
        { op: "check", resourceVersion: "5" },
        { op: "list", continue: undefined },
        { op: "watch", resourceVersion: "3" },
        { op: "watch", resourceVersion: "4" }
      ], "a watch that delivered a bookmark resumes without a check")
    }))

  it.effect("Too large resource version as a watch ERROR event or as the watch's answer relists", () =>
    Effect.gen(function*() {
      const asEvent = scripted([page([], "5"), page([], "2")], [events({ _tag: "Error", error: tooLarge })])
      yield* collect(asEvent.listWatch)
      assert.deepStrictEqual(asEvent.calls.map((c) => c.op), ["list", "watch", "list", "watch"])
      const asAnswer = scripted([page([], "5"), page([], "2")], [Stream.fail(tooLarge)])
      yield* collect(asAnswer.listWatch)
      assert.deepStrictEqual(asAnswer.calls.map((c) => c.op), ["list", "watch", "list", "watch"])
      // an older server says it only in the message
      const legacy = new KubeError.Timeout({
        status: { code: 504, reason: "Timeout", message: "Timeout: Too large resource version: 9, current: 2" }
      })
      const fromLegacy = scripted([page([], "5"), page([], "2")], [Stream.fail(legacy)])
      yield* collect(fromLegacy.listWatch)
      assert.deepStrictEqual(fromLegacy.calls.map((c) => c.op), ["list", "watch", "list", "watch"])
      // any other 504 is an error: backed off, then resumed
      const timeout = new KubeError.Timeout({ status: { code: 504, reason: "Timeout", message: "request timed out" } })
      const other = scripted([page([], "5")], [Stream.fail(timeout)])
      yield* collect(other.listWatch)
      assert.deepStrictEqual(other.calls.map((c) => c.op), ["list", "watch"])
      yield* TestClock.adjust(Duration.millis(800))
      assert.deepStrictEqual(other.calls.map((c) => c.op), ["list", "watch", "watch"])
    }))

  it.effect("watches that end at once with nothing, twice in a row, are backed off (a very short watch)", () =>
    Effect.gen(function*() {
      const { calls, listWatch } = scripted([page([], "5")], [Stream.empty, Stream.empty, Stream.empty], [])
      yield* collect(listWatch)
      assert.deepStrictEqual(calls.map((c) => c.op), ["list", "watch", "check", "watch"])
      yield* TestClock.adjust(Duration.millis(799))
      assert.strictEqual(calls.length, 4)
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(calls.slice(4).map((c) => c.op), ["check", "watch"])
    }))

  it.effect("undecodable objects are counted and skipped; the watch goes on", () =>
    Effect.gen(function*() {
      const decode = new KubeError.Decode({ raw: "{not json", issue: "Unexpected token" })
      const { listWatch } = scripted([page([], "1")], [
        events(
          { _tag: "Added", object: obj("a", 2) },
          { _tag: "Undecodable", error: decode },
          { _tag: "Modified", object: obj("a", 3) }
        )
      ])
      const counter = Metric.withAttributes(
        Metric.counter("watcher_undecodable_total", {
          description: "Objects a watcher skipped because they did not decode"
        }),
        { watch: "test-objects" }
      )
      const before = (yield* Metric.value(counter)).count
      const { seen } = yield* collect(listWatch)
      assert.deepStrictEqual(seen, ["Init", "InitDone@1", "Apply:a@2", "Apply:a@3"])
      assert.strictEqual((yield* Metric.value(counter)).count - before, 1)
    }))

  it.effect("the stream never fails and stops when interrupted", () =>
    Effect.gen(function*() {
      const { listWatch } = scripted([Effect.fail(serverError), page([], "1")], [])
      const { fiber, seen } = yield* collect(listWatch)
      yield* TestClock.adjust(Duration.seconds(1))
      assert.deepStrictEqual(seen, ["Init", "Init", "InitDone@1"])
      yield* Fiber.interrupt(fiber)
    }))
})
