/**
 * The informer and cache through the real KubeClient against TestApiServer (HTTPS), under each fault of the testkit.
 *
 * These run in real time: watcher backoffs are 10–50 ms and every wait polls with a deadline. Objects are written
 * in-process to the TestCluster behind the server (fast, and untouched by the list/watch fault rules); everything
 * the informer reads goes over HTTP. Each test works in a namespace of its own and resets the faults when done.
 */
import { assert, layer } from "@effect/vitest"
import type * as Event from "@reconcile/core/Event"
import { Faults, TestCluster } from "@reconcile/testkit"
import type { KubeObject } from "@reconcile/testkit/KubeObject"
import { Arbitrary, Duration, Effect, Layer, Metric, References, Schema, Stream } from "effect"
import * as Cache from "../src/Cache.js"
import type * as Informer from "../src/Informer.js"
import { decodeFailuresTotal } from "../src/internal/informer.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import type * as Watcher from "../src/Watcher.js"
import {
  check,
  countRequests,
  eventually,
  freshNamespace as freshNamespaceIn,
  kubeLayer,
  makeEnv
} from "./support/env.js"
import { looseCrdManifest, WebApp } from "./support/fixtures.js"
import { TestManager } from "./support/manager.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(
  Layer.provideMerge(kubeLayer()),
  Layer.provideMerge(env.layer),
  Layer.merge(Layer.succeed(References.MinimumLogLevel, "Error")) // the watcher's retry warnings are expected here
)

// ---------------------------------------------------------------------------------------------------------------
// helpers

const freshNamespace = freshNamespaceIn("watch")

/** Creates or updates ConfigMap `name` (server-side apply, in-process); returns the stored object. */
const put = (namespace: string, name: string, value: string) =>
  Effect.flatMap(TestCluster.TestCluster, (cluster) =>
    Effect.orDie(cluster.apply(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { value } },
      { fieldManager: "test", force: true }
    )))

const remove = (namespace: string, name: string) =>
  Effect.flatMap(
    TestCluster.TestCluster,
    (cluster) => cluster.delete({ apiVersion: "v1", kind: "ConfigMap", name, namespace })
  )

const rvOf = (o: KubeObject): number => Number(o.metadata.resourceVersion)

type Call =
  | { readonly op: "list"; readonly continue: string | undefined; readonly at: number }
  | { readonly op: "watch"; readonly resourceVersion: string; readonly at: number }

/** What the watcher asked for (each call still goes over HTTP), and a hook run before the next continue request. */
interface Recorder {
  readonly calls: Array<Call>
  onContinue: Effect.Effect<void> | undefined
}

const recorder = (): Recorder => ({ calls: [], onContinue: undefined })

const recording = <A>(inner: Watcher.ListWatch<A>, rec: Recorder): Watcher.ListWatch<A> => ({
  ...inner,
  list: (options) =>
    Effect.suspend(() => {
      rec.calls.push({ op: "list", continue: options.continue, at: Date.now() })
      const hook = options.continue !== undefined ? rec.onContinue : undefined
      if (hook === undefined) return inner.list(options)
      rec.onContinue = undefined
      return Effect.andThen(hook, inner.list(options))
    }),
  watch: (options) =>
    Stream.suspend(() => {
      rec.calls.push({ op: "watch", resourceVersion: options.resourceVersion, at: Date.now() })
      return inner.watch(options)
    })
})

const lists = (rec: Recorder) => rec.calls.filter((c) => c.op === "list")
const watches = (rec: Recorder) => rec.calls.filter((c): c is Extract<Call, { op: "watch" }> => c.op === "watch")

const fast = { initialBackoff: "10 millis", maxBackoff: "50 millis" } as const

/** A cache over the real client (calls recorded), its ConfigMap informer for `namespace`, and a subscriber's log. */
const startInformer = (
  namespace: string,
  options: { readonly watcher?: Watcher.Options; readonly rec?: Recorder } = {}
) =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    const rec = options.rec ?? recorder()
    const cache = yield* Cache.make(
      (resource, selection) => recording(Cache.listWatch(client, resource, selection), rec),
      { informer: { watcher: { ...fast, ...options.watcher } } }
    )
    const informer = yield* cache.informer(Resource.ConfigMap, { namespace })
    const seen: Array<Event.Event<Resource.ConfigMap>> = []
    yield* informer.events.pipe(
      Stream.runForEach((e) => Effect.sync(() => void seen.push(e))),
      Effect.forkScoped
    )
    yield* informer.synced.pipe(Effect.timeout("5 seconds"), Effect.orDie)
    return { informer, seen, rec, cache }
  })

const nameOf = (o: Resource.ConfigMap) => o.metadata?.name ?? ""
const valueOf = (o: Resource.ConfigMap) => o.data?.value ?? ""

const summary = (e: Event.Event<Resource.ConfigMap>): string => {
  switch (e._tag) {
    case "Create":
      return `Create:${nameOf(e.object)}=${valueOf(e.object)}`
    case "Update":
      return `Update:${nameOf(e.object)}=${valueOf(e.old)}->${valueOf(e.object)}`
    case "Delete":
      return `Delete:${nameOf(e.object)}${e.finalStateUnknown ? " unknown" : ""}`
    case "Generic":
      return `Generic:${nameOf(e.object)}`
  }
}

/** The events since `mark`, summarised and sorted (their order across objects is not the point). */
const since = (seen: ReadonlyArray<Event.Event<Resource.ConfigMap>>, mark: number) =>
  seen.slice(mark).map(summary).sort()

/**
 * Replays a subscriber's events as a diff stream: a Create must be of an object the subscriber does not know (no
 * duplicate Create after a resume or relist), an Update or Delete of one it knows. Returns the subscriber's view.
 */
const replay = (seen: ReadonlyArray<Event.Event<Resource.ConfigMap>>): Map<string, string> => {
  const view = new Map<string, string>()
  for (const [i, e] of seen.entries()) {
    const name = nameOf(e.object)
    if (e._tag === "Create") assert.isFalse(view.has(name), `event ${i}: Create of ${name}, already known`)
    else assert.isTrue(view.has(name), `event ${i}: ${e._tag} of ${name}, not known`)
    if (e._tag === "Delete") view.delete(name)
    else view.set(name, `${e.object.metadata?.resourceVersion}=${valueOf(e.object)}`)
  }
  return view
}

const serverState = (namespace: string) =>
  Effect.flatMap(TestCluster.TestCluster, (cluster) =>
    Effect.map(
      Effect.orDie(cluster.list({ apiVersion: "v1", kind: "ConfigMap", namespace })),
      (list) =>
        list.items.map((o) =>
          `${o.metadata.name}@${o.metadata.resourceVersion}=${(o.data as { value?: string }).value}`
        ).sort()
    ))

const storeState = (informer: Informer.Informer<Resource.ConfigMap>) =>
  informer.store.list().map((o) => `${nameOf(o)}@${o.metadata?.resourceVersion}=${valueOf(o)}`).sort()

/**
 * Waits until the store equals the server's list and the subscriber's replayed view equals it too (the last state
 * of every object reached subscribers); the replay also fails on any duplicate Create.
 */
const converged = (
  informer: Informer.Informer<Resource.ConfigMap>,
  seen: ReadonlyArray<Event.Event<Resource.ConfigMap>>,
  namespace: string
) =>
  eventually(Effect.gen(function*() {
    const server = yield* serverState(namespace)
    assert.deepStrictEqual(storeState(informer), server, "store equals the server's list")
    const view = replay(seen)
    assert.deepStrictEqual(
      [...view].map(([name, state]) => `${name}@${state}`).sort(),
      server,
      "subscribers saw the last state of every object"
    )
  }))

/** Writes `name=value` and waits until the informer stored it: the watch is open and delivering. */
const live = (informer: Informer.Informer<Resource.ConfigMap>, namespace: string, name: string, value: string) =>
  Effect.gen(function*() {
    const written = yield* put(namespace, name, value)
    yield* eventually(check(() =>
      assert.strictEqual(
        informer.store.get(name, namespace)?.metadata?.resourceVersion,
        written.metadata.resourceVersion
      )
    ))
  })

const listLines = (from: number, namespace: string, status: string) =>
  env.log.lines.slice(from).filter((l) =>
    l.includes(`/api/v1/namespaces/${namespace}/configmaps?`) && !l.includes("watch=true") && l.includes(` ${status} `)
  ).length

const watchLines = (from: number, namespace: string, status: string) =>
  countRequests(env.log, from, `/api/v1/namespaces/${namespace}/configmaps?`, "watch=true", ` ${status} `)

const undecodableCounter = (watch: string) =>
  Metric.withAttributes(
    Metric.counter("watcher_undecodable_total", {
      description: "Objects a watcher skipped because they did not decode"
    }),
    { watch }
  )

// ---------------------------------------------------------------------------------------------------------------

layer(TestLayer, { excludeTestServices: true })("Informer over HTTP under faults", (it) => {
  it.effect(
    "a silently dead watch (no answer, no close) is abandoned after timeoutSeconds + 5 s and resumed",
    () =>
      Effect.gen(function*() {
        // The testkit cannot stall a watch that has already answered (its faults either close the connection or write
        // to it), so the silence is a watch request the server holds without answering. The idle timeout covers the
        // wait for the first line just as the wait between lines (`Watcher.test.ts` proves the latter on TestClock).
        const faults = yield* Faults.Faults
        const ns = yield* freshNamespace
        yield* put(ns, "a", "1")
        const { informer, rec, seen } = yield* startInformer(ns, { watcher: { timeoutSeconds: 1 } })
        yield* live(informer, ns, "a", "2")
        yield* faults.addLatency({ verbs: ["watch"], namespaces: [ns], latency: "9 seconds", count: 1 })
        yield* faults.dropWatches
        const from = watches(rec).length - 1
        yield* put(ns, "a", "3")
        yield* Effect.sleep("300 millis")
        assert.strictEqual(valueOf(informer.store.get("a", ns)!), "2", "nothing arrives while the watch is silent")
        yield* eventually(check(() => assert.strictEqual(valueOf(informer.store.get("a", ns)!), "3")), 9_000)
        // the stalled request is the watch call followed by the longest gap
        const calls = watches(rec).slice(from)
        const gaps = calls.slice(1).map((c, i) => ({ waited: c.at - calls[i]!.at, stalled: calls[i]!, next: c }))
        const longest = gaps.reduce((a, b) => (b.waited > a.waited ? b : a))
        assert.isAtLeast(longest.waited, 5_900, "abandoned no earlier than timeoutSeconds + 5 s")
        assert.isBelow(longest.waited, 8_000, "abandoned before the server answered (9 s)")
        assert.strictEqual(
          longest.next.resourceVersion,
          longest.stalled.resourceVersion,
          "resumed from the same resourceVersion"
        )
        assert.strictEqual(lists(rec).length, 1, "no relist")
        yield* converged(informer, seen, ns)
      }),
    { timeout: 20_000 }
  )

  it.effect("dropped watches: resume from the last resourceVersion; changes made meanwhile arrive once", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      for (const name of ["a", "b", "c"]) yield* put(ns, name, "1")
      const { informer, rec, seen } = yield* startInformer(ns)
      yield* live(informer, ns, "c", "2")
      const mark = seen.length
      assert.isAtLeast(yield* faults.dropWatches, 1)
      const a = yield* put(ns, "a", "2")
      yield* remove(ns, "b")
      yield* put(ns, "d", "1")
      yield* converged(informer, seen, ns)
      assert.deepStrictEqual(since(seen, mark), ["Create:d=1", "Delete:b", "Update:a=1->2"])
      assert.strictEqual(lists(rec).length, 1, "no relist")
      const resumed = watches(rec)[1]!
      assert.isBelow(Number(resumed.resourceVersion), rvOf(a), "resumed from before the changes: replayed from history")
    }))

  it.effect("the next watches dropped right after opening: retried with backoff, no relist, nothing lost", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      for (const name of ["a", "b"]) yield* put(ns, name, "1")
      const { informer, rec, seen } = yield* startInformer(ns)
      yield* live(informer, ns, "a", "2")
      const mark = seen.length
      const before = watches(rec).length
      yield* faults.dropNextWatches(3)
      yield* faults.dropWatches
      yield* put(ns, "b", "2")
      yield* put(ns, "e", "1")
      yield* converged(informer, seen, ns)
      assert.deepStrictEqual(since(seen, mark), ["Create:e=1", "Update:b=1->2"])
      assert.isAtLeast(watches(rec).length - before, 4, "three dropped watches, then one that stays")
      assert.strictEqual(lists(rec).length, 1, "no relist")
    }))

  it.effect("410 as a watch ERROR event relists; an unchanged world emits nothing", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      for (const name of ["a", "b"]) yield* put(ns, name, "1")
      const { informer, rec, seen } = yield* startInformer(ns)
      yield* live(informer, ns, "a", "2")
      const mark = seen.length
      yield* faults.expireNext("watch")
      yield* faults.dropWatches
      yield* eventually(check(() => assert.strictEqual(lists(rec).length, 2, "relisted")))
      yield* live(informer, ns, "b", "2")
      yield* converged(informer, seen, ns)
      assert.deepStrictEqual(since(seen, mark), ["Update:b=1->2"], "the relist itself emitted nothing")
    }))

  it.effect("410 after compaction: the relist Deletes vanished objects, Updates changed ones, Creates new ones", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      for (const name of ["keep", "change", "vanish"]) yield* put(ns, name, "1")
      const { informer, rec, seen } = yield* startInformer(ns)
      yield* live(informer, ns, "keep", "2")
      const mark = seen.length
      const from = env.log.lines.length
      // hold the watcher off while the world changes and the history is forgotten
      const block = yield* faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 503 })
      yield* faults.dropWatches
      yield* put(ns, "change", "2")
      yield* remove(ns, "vanish")
      yield* put(ns, "new", "1")
      yield* eventually(check(() => assert.isAtLeast(watchLines(from, ns, "503"), 1)))
      yield* faults.compactNow
      yield* faults.removeRule(block)
      yield* converged(informer, seen, ns)
      assert.deepStrictEqual(since(seen, mark), ["Create:new=1", "Delete:vanish unknown", "Update:change=1->2"])
      assert.strictEqual(lists(rec).length, 2, "one relist")
      assert.isAtLeast(watches(rec).length, 3)
    }))

  it.effect("410 on a list continue token restarts the list from page one; a partial list is never published", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const cluster = yield* TestCluster.TestCluster
      const ns = yield* freshNamespace
      /** Adds `name`, then forgets the history: the continue token of the ongoing list has expired. */
      const expireToken = (name: string) =>
        Effect.andThen(put(ns, name, "1"), faults.compactNow).pipe(
          Effect.provideService(TestCluster.TestCluster, cluster)
        )
      const names = ["o1", "o2", "o3", "o4", "o5", "o6", "o7"]
      for (const name of names) yield* put(ns, name, "1")
      const from = env.log.lines.length
      const rec = recorder()
      // the first continue request comes after an object was added and the history compacted: its token expired
      rec.onContinue = expireToken("late")
      const { informer, seen } = yield* startInformer(ns, { rec, watcher: { pageSize: 2 } })
      yield* eventually(check(() => assert.strictEqual(seen.length, 8)))
      assert.deepStrictEqual(seen.map(summary).sort(), [...names, "late"].map((n) => `Create:${n}=1`).sort())
      assert.isTrue(seen.every((e) => e._tag === "Create" && e.initial), "all initial, each once")
      const listed = lists(rec).map((c) => c.op === "list" && c.continue !== undefined ? "next" : "first")
      assert.deepStrictEqual(listed.slice(0, 3), ["first", "next", "first"], "restarted from the first page")
      assert.strictEqual(listed.length, 2 + Math.ceil(8 / 2))
      assert.strictEqual(countRequests(env.log, from, `/namespaces/${ns}/configmaps?`, "continue=", " 410 "), 1)

      // the same during a relist: the store is swapped only once the whole list is in, with Deletes for vanished ones
      yield* live(informer, ns, "o1", "2")
      const mark = seen.length
      const block = yield* faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 500 })
      yield* faults.dropWatches
      yield* remove(ns, "o2")
      yield* remove(ns, "o6")
      yield* eventually(check(() => assert.isAtLeast(watchLines(from, ns, "500"), 1)))
      rec.onContinue = expireToken("later")
      yield* faults.compactNow
      yield* faults.removeRule(block)
      yield* converged(informer, seen, ns)
      assert.deepStrictEqual(since(seen, mark), ["Create:later=1", "Delete:o2 unknown", "Delete:o6 unknown"])
      assert.strictEqual(countRequests(env.log, from, `/namespaces/${ns}/configmaps?`, "continue=", " 410 "), 2)
    }))

  it.effect("500 and 503 answers to lists and watches: retried (client, then watcher backoff) until synced", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      for (const name of ["a", "b"]) yield* put(ns, name, "1")
      const from = env.log.lines.length
      yield* faults.failRequests({ verbs: ["list"], namespaces: [ns], code: 500, count: 5 })
      yield* faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 503, count: 3 })
      const { informer, rec, seen } = yield* startInformer(ns)
      assert.strictEqual(listLines(from, ns, "500"), 5)
      assert.strictEqual(listLines(from, ns, "200"), 1)
      assert.strictEqual(lists(rec).length, 2, "the client retried 3 times, then the watcher backed off once")
      yield* live(informer, ns, "a", "2")
      assert.strictEqual(watchLines(from, ns, "503"), 3)
      assert.isAtLeast(watches(rec).length, 4)

      // and while running: failing reconnects, changes in between
      const mark = seen.length
      yield* faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 500, count: 2 })
      yield* faults.dropWatches
      yield* put(ns, "b", "2")
      yield* put(ns, "c", "1")
      yield* converged(informer, seen, ns)
      assert.deepStrictEqual(since(seen, mark), ["Create:c=1", "Update:b=1->2"])
      assert.strictEqual(watchLines(from, ns, "500"), 2)
      assert.strictEqual(lists(rec).length, 2, "no relist")
    }))

  it.effect("429 with Retry-After: a list is retried after it by the client; a watch is reopened no earlier", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      yield* put(ns, "a", "1")
      const from = env.log.lines.length
      yield* faults.failRequests({ verbs: ["list"], namespaces: [ns], code: 429, retryAfterSeconds: 1, count: 1 })
      const started = Date.now()
      const { informer, rec, seen } = yield* startInformer(ns)
      assert.isAtLeast(Date.now() - started, 950, "the list waited for Retry-After")
      assert.strictEqual(listLines(from, ns, "429"), 1)
      assert.strictEqual(lists(rec).length, 1, "retried inside the client: the watcher saw no error")
      yield* live(informer, ns, "a", "2")

      const before = watches(rec).length
      yield* faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 429, retryAfterSeconds: 1, count: 1 })
      yield* faults.dropWatches
      yield* put(ns, "a", "3")
      yield* converged(informer, seen, ns)
      assert.strictEqual(watchLines(from, ns, "429"), 1)
      const after = watches(rec).slice(before)
      const gaps = after.slice(1).map((c, i) => c.at - after[i]!.at)
      assert.isAtLeast(Math.max(...gaps), 950, `a reconnect waited for Retry-After (gaps ${gaps.join(", ")} ms)`)
    }))

  it.effect("a garbled watch line is skipped and counted; the same connection goes on", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const ns = yield* freshNamespace
      yield* put(ns, "a", "1")
      const { informer, rec, seen } = yield* startInformer(ns)
      yield* live(informer, ns, "a", "2")
      const counter = undecodableCounter(informer.name)
      const before = (yield* Metric.value(counter)).count
      const calls = rec.calls.length
      assert.isAtLeast(yield* faults.garbleWatches, 1)
      yield* live(informer, ns, "a", "3")
      yield* put(ns, "b", "1")
      yield* converged(informer, seen, ns)
      assert.strictEqual((yield* Metric.value(counter)).count - before, 1)
      assert.strictEqual(rec.calls.length, calls, "no reconnect, no relist")
    }))

  it.effect("a custom resource failing its Schema is kept as Undecodable and counted while the others sync and reconcile", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const client = yield* KubeClient.KubeClient
      yield* cluster.create(looseCrdManifest(WebApp) as unknown as KubeObject).pipe(Effect.ignore)
      const ns = yield* freshNamespace
      const app = (name: string, spec: Record<string, unknown>) =>
        Effect.orDie(
          cluster.create({ apiVersion: "example.com/v1", kind: "WebApp", metadata: { name, namespace: ns }, spec })
        )
      yield* app("one", { image: "one:1" })
      yield* app("two", { image: "two:1", replicas: -1 }) // replicas must be >= 0
      yield* app("three", { image: "three:1" })
      const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), { informer: { watcher: fast } })
      const informer = yield* cache.informer(WebApp, { namespace: ns })
      const counter = Metric.withAttributes(decodeFailuresTotal, { informer: informer.name, kind: "WebApp" })
      const before = (yield* Metric.value(counter)).count
      const reconciled: Array<string> = []
      const undecodable: Array<string> = []
      yield* KubeController.make({
        name: `webapps-${ns}`,
        for: WebApp,
        selection: { namespace: ns },
        reconcile: (object) => Effect.sync(() => void reconciled.push(`${object.metadata.name}:${object.spec.image}`)),
        onUndecodable: (object) => Effect.sync(() => void undecodable.push(object.metadata.name!))
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* informer.synced.pipe(Effect.timeout("5 seconds"), Effect.orDie)
      assert.deepStrictEqual(informer.store.list().map((o) => o.metadata.name).sort(), ["one", "three"])
      assert.strictEqual(informer.store.undecodable("two", ns)?.metadata.name, "two", "kept with its metadata")
      yield* eventually(
        Effect.flatMap(Metric.value(counter), (value) => check(() => assert.strictEqual(value.count - before, 1)))
      )
      yield* app("four", { image: "" }) // minLength 1
      yield* app("five", { image: "five:1" })
      yield* eventually(check(() => assert.isDefined(informer.store.get("five", ns))))
      assert.isUndefined(informer.store.get("four", ns))
      assert.include(informer.store.undecodable("four", ns)?.error.issue ?? "", "spec")
      assert.strictEqual((yield* Metric.value(counter)).count - before, 2)
      yield* eventually(check(() => assert.sameMembers(reconciled, ["one:one:1", "three:three:1", "five:five:1"])))
      yield* eventually(check(() => assert.sameMembers(undecodable, ["two", "four"])))
    }))
})

// ---------------------------------------------------------------------------------------------------------------

type Step =
  | { readonly op: "put"; readonly name: string; readonly value: number }
  | { readonly op: "remove"; readonly name: string }
  | { readonly op: "pause"; readonly millis: number }
  | { readonly op: "fault"; readonly fault: Fault }

type Fault =
  | "drop"
  | "dropNext"
  | "expireWatch"
  | "expireList"
  | "compact"
  | "garble"
  | "list500"
  | "watch500"
  | "watch503"
  | "watch429"

// effect 4.1 bundles no FastCheck: the same generators drawn with effect/Arbitrary (what it.prop runs); a weighted
// choice draws a number below the total weight and takes the choice it falls on
const between = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))
const pick = <const A extends ReadonlyArray<unknown>>(values: A): Arbitrary.Arbitrary<A[number]> =>
  Arbitrary.map(between(0, values.length - 1), (i) => values[i])
const weighted = <A>(...choices: ReadonlyArray<readonly [number, Arbitrary.Arbitrary<A>]>): Arbitrary.Arbitrary<A> =>
  Arbitrary.flatMap(between(0, choices.reduce((n, [weight]) => n + weight, 0) - 1), (drawn) => {
    let n = drawn
    for (const [weight, arbitrary] of choices) {
      if (n < weight) return arbitrary
      n -= weight
    }
    return choices[choices.length - 1]![1]
  })
const names = pick(["a", "b", "c", "d"])
const faultKinds: ReadonlyArray<Fault> = [
  "drop",
  "dropNext",
  "expireWatch",
  "expireList",
  "compact",
  "garble",
  "list500",
  "watch500",
  "watch503",
  "watch429"
]
const step: Arbitrary.Arbitrary<Step> = weighted<Step>(
  [4, Arbitrary.all({ op: Arbitrary.Constant("put"), name: names, value: between(0, 3) })],
  [2, Arbitrary.all({ op: Arbitrary.Constant("remove"), name: names })],
  [2, Arbitrary.all({ op: Arbitrary.Constant("pause"), millis: between(0, 25) })],
  [3, Arbitrary.all({ op: Arbitrary.Constant("fault"), fault: pick(faultKinds) })]
)

const inject = (ns: string, fault: Fault) =>
  Effect.flatMap(Faults.Faults, (faults): Effect.Effect<unknown> => {
    switch (fault) {
      case "drop":
        return faults.dropWatches
      case "dropNext":
        return Effect.andThen(faults.dropNextWatches(1), faults.dropWatches)
      case "expireWatch":
        return Effect.andThen(faults.expireNext("watch"), faults.dropWatches)
      case "expireList":
        return Effect.andThen(
          faults.expireNext("list"),
          Effect.andThen(faults.expireNext("watch"), faults.dropWatches)
        )
      case "compact":
        return Effect.andThen(faults.compactNow, faults.dropWatches)
      case "garble":
        return faults.garbleWatches
      case "list500":
        return faults.failRequests({ verbs: ["list"], namespaces: [ns], code: 500, count: 1 })
      case "watch500":
        return Effect.andThen(
          faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 500, count: 1 }),
          faults.dropWatches
        )
      case "watch503":
        return Effect.andThen(
          faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 503, count: 2 }),
          faults.dropWatches
        )
      case "watch429":
        return Effect.andThen(
          faults.failRequests({ verbs: ["watch"], namespaces: [ns], code: 429, retryAfterSeconds: 0, count: 1 }),
          faults.dropWatches
        )
    }
  })

layer(TestLayer, { excludeTestServices: true })("Informer over HTTP, property", (it) => {
  it.effect.prop(
    "random changes and faults: the cache ends equal to the server, subscribers saw every object's last state " +
      "and never a duplicate Create",
    [Arbitrary.array(step, { maxLength: 6 }), Arbitrary.array(step, { minLength: 1, maxLength: 20 })],
    ([before, during]) =>
      Effect.scoped(Effect.gen(function*() {
        const faults = yield* Faults.Faults
        const ns = yield* freshNamespace
        const run = (s: Step) =>
          s.op === "put"
            ? put(ns, s.name, String(s.value))
            : s.op === "remove"
            ? Effect.ignore(remove(ns, s.name))
            : s.op === "pause"
            ? Effect.sleep(Duration.millis(s.millis))
            : inject(ns, s.fault)
        for (const s of before) if (s.op === "put" || s.op === "remove") yield* run(s)
        const { informer, seen } = yield* startInformer(ns, { watcher: { pageSize: 2 } })
        for (const s of during) yield* run(s)
        yield* faults.reset // pending one-shot faults the watcher never reached
        yield* converged(informer, seen, ns)
      })),
    // size 20: effect's Arbitrary caps array lengths at `size` (default 10); fast-check drew up to maxLength
    { timeout: 60_000, arbitrary: { runs: 20, size: 20 } }
  )
})
