/**
 * EventRecorder against TestApiServer over HTTPS: series aggregation, keys, the window, and write failures.
 */
import { assert, layer } from "@effect/vitest"
import { Faults } from "@reconcile/testkit"
import { Effect, Exit, Layer, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import * as EventRecorder from "../src/EventRecorder.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import { countRequests, kubeLayer, makeEnv, onRealCluster } from "./support/env.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

let counter = 0
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(new Date("2024-05-01T10:00:00Z").getTime())
  const ns = `events-${++counter}`
  yield* KubeClient.create(Resource.Namespace, { metadata: { name: ns } })
  const pod = yield* KubeClient.create(Resource.ConfigMap, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "subject", namespace: ns },
    data: { a: "1" }
  })
  const recorder = yield* EventRecorder.make({ controller: "example.com/webapp", instance: "webapp-0" })
  return { ns, subject: pod, recorder }
})

const events = (ns: string) => Effect.map(KubeClient.list(Resource.EventsV1Event, { namespace: ns }), (l) => l.items)

const scaled: EventRecorder.Event = { type: "Normal", reason: "Scaled", action: "Scale", note: "to 3" }

layer(TestLayer)("EventRecorder against TestApiServer", (it) => {
  it.effect("an event names the object, the controller and the instance", () =>
    Effect.gen(function*() {
      const { ns, recorder, subject } = yield* setup
      yield* recorder.record(subject, scaled)
      const [event, ...rest] = yield* events(ns)
      assert.strictEqual(rest.length, 0)
      assert.strictEqual(event!.reportingController, "example.com/webapp")
      assert.strictEqual(event!.reportingInstance, "webapp-0")
      assert.deepStrictEqual(
        [event!.type, event!.reason, event!.action, event!.note],
        ["Normal", "Scaled", "Scale", "to 3"]
      )
      assert.deepStrictEqual(event!.regarding, {
        apiVersion: "v1",
        kind: "ConfigMap",
        name: "subject",
        namespace: ns,
        uid: subject.metadata!.uid!,
        resourceVersion: subject.metadata!.resourceVersion!
      })
      assert.strictEqual(event!.eventTime, "2024-05-01T10:00:00.000000Z")
      assert.isUndefined(event!.series)
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "repeats within the window update the series (count, lastObservedTime); the note is not in the key",
    () =>
      Effect.gen(function*() {
        const { ns, recorder, subject } = yield* setup
        const from = env.log.lines.length
        yield* recorder.record(subject, scaled)
        yield* TestClock.adjust("4 minutes")
        yield* recorder.record(subject, { ...scaled, note: "to 4" })
        yield* TestClock.adjust("9 minutes") // 13 minutes after the first, 9 after the last: still a series
        // the object changed meanwhile (a new resourceVersion): still the same object, the same series
        const changed = yield* KubeClient.patch(Resource.ConfigMap, "subject", { data: { a: "2" } }, {
          type: "merge",
          namespace: ns
        })
        assert.notStrictEqual(changed.metadata?.resourceVersion, subject.metadata?.resourceVersion)
        yield* recorder.record(changed, { ...scaled, note: "to 5" })
        const all = yield* events(ns)
        assert.strictEqual(all.length, 1)
        assert.deepStrictEqual(all[0]!.series, { count: 3, lastObservedTime: "2024-05-01T10:13:00.000000Z" })
        assert.strictEqual(all[0]!.eventTime, "2024-05-01T10:00:00.000000Z")
        assert.strictEqual(all[0]!.note, "to 3")
        assert.strictEqual(countRequests(env.log, from, "POST ", "/apis/events.k8s.io/v1/"), 1)
        assert.strictEqual(countRequests(env.log, from, "PATCH ", "/apis/events.k8s.io/v1/"), 2)
        // regarding is the object as of the first occurrence
        assert.strictEqual(all[0]!.regarding?.resourceVersion, subject.metadata?.resourceVersion)
      })
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "a burst of identical events becomes one event with a count",
    () =>
      Effect.gen(function*() {
        const { ns, recorder, subject } = yield* setup
        const from = env.log.lines.length
        yield* Effect.all(Array.from({ length: 25 }, () => recorder.record(subject, scaled)), {
          concurrency: "unbounded"
        })
        const all = yield* events(ns)
        assert.strictEqual(all.length, 1)
        assert.strictEqual(all[0]!.series?.count, 25)
        assert.strictEqual(countRequests(env.log, from, "POST ", "/apis/events.k8s.io/v1/"), 1)
        // concurrent repeats are coalesced: never more writes than occurrences
        assert.isAtMost(countRequests(env.log, from, "PATCH ", "/apis/events.k8s.io/v1/"), 24)
      })
  )

  it.effect("different reasons, types, actions or objects are different events", () =>
    Effect.gen(function*() {
      const { ns, recorder, subject } = yield* setup
      const other = yield* KubeClient.create(Resource.ConfigMap, {
        metadata: { name: "other", namespace: ns }
      })
      yield* recorder.record(subject, scaled)
      yield* recorder.record(subject, { ...scaled, reason: "ScaledDown" })
      yield* recorder.record(subject, { ...scaled, type: "Warning" })
      yield* recorder.record(subject, { ...scaled, action: "Resize" })
      yield* recorder.record(other, scaled)
      yield* recorder.record(subject, scaled)
      const all = yield* events(ns)
      assert.strictEqual(all.length, 5)
      const repeated = all.filter((e) =>
        e.reason === "Scaled" && e.type === "Normal" && e.action === "Scale" && e.regarding?.name === "subject"
      )
      assert.strictEqual(repeated.length, 1)
      assert.strictEqual(repeated[0]!.series?.count, 2)
      assert.strictEqual(all.filter((e) => e.series !== undefined).length, 1)
    }))

  it.effect("another controller's recorder does not join our series", () =>
    Effect.gen(function*() {
      const { ns, recorder, subject } = yield* setup
      const theirs = yield* EventRecorder.make({ controller: "example.com/other", instance: "other-0" })
      yield* recorder.record(subject, scaled)
      yield* theirs.record(subject, scaled)
      const all = yield* events(ns)
      assert.sameMembers(all.map((e) => e.reportingController), ["example.com/webapp", "example.com/other"])
      assert.isTrue(all.every((e) => e.series === undefined))
    }))

  it.effect("a repeat after the window (since the last occurrence) starts a new event", () =>
    Effect.gen(function*() {
      const { ns, recorder, subject } = yield* setup
      yield* recorder.record(subject, scaled)
      yield* TestClock.adjust("10 minutes")
      yield* recorder.record(subject, scaled) // exactly at the window's end: still a repeat
      yield* TestClock.adjust("10 minutes")
      yield* TestClock.adjust("1 second")
      yield* recorder.record(subject, scaled)
      const all = yield* events(ns)
      assert.strictEqual(all.length, 2)
      const counts = all.map((e) => e.series?.count ?? 1).sort()
      assert.deepStrictEqual(counts, [1, 2])
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "a failed event write is logged without the note and never fails record",
    () =>
      Effect.gen(function*() {
        const { ns, recorder, subject } = yield* setup
        const faults = yield* Faults.Faults
        yield* faults.failRequests({ verbs: ["create"], resources: ["events.events.k8s.io"], code: 500, count: 1 })
        const logs: Array<string> = []
        // effect 4: a logger reads the log annotations from the fiber; `Logger.add` is `Logger.layer` merged
        const capture = Logger.make(({ fiber, message }) => {
          logs.push(JSON.stringify({ message, annotations: fiber.getRef(References.CurrentLogAnnotations) }))
        })
        const exit = yield* Effect.exit(
          recorder.record(subject, { ...scaled, note: "password=hunter2" }).pipe(
            Effect.provide(Logger.layer([capture], { mergeWithExisting: true }))
          )
        )
        assert.isTrue(Exit.isSuccess(exit))
        assert.strictEqual((yield* events(ns)).length, 0)
        assert.strictEqual(logs.length, 1)
        assert.include(logs[0]!, "failed to record an event")
        assert.include(logs[0]!, "Scaled")
        assert.include(logs[0]!, "ServerError")
        assert.notInclude(logs[0]!, "hunter2")

        // the next occurrence creates the event, counting both
        yield* recorder.record(subject, scaled)
        const all = yield* events(ns)
        assert.strictEqual(all.length, 1)
        assert.strictEqual(all[0]!.series?.count, 2)
      })
  )

  it.effect("a series whose event expired (deleted) continues in a new event", () =>
    Effect.gen(function*() {
      const { ns, recorder, subject } = yield* setup
      yield* recorder.record(subject, scaled)
      const [first] = yield* events(ns)
      yield* KubeClient.del(Resource.EventsV1Event, first!.metadata!.name!, { namespace: ns })
      yield* recorder.record(subject, scaled)
      const all = yield* events(ns)
      assert.strictEqual(all.length, 1)
      assert.notStrictEqual(all[0]!.metadata?.name, first!.metadata?.name)
      assert.strictEqual(all[0]!.series?.count, 2)
    }))

  it.effect("layer and record accessor; cluster-scoped objects get their events in default", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2024-05-01T10:00:00Z").getTime())
      const nsName = `events-${++counter}`
      const namespace = yield* KubeClient.create(Resource.Namespace, { metadata: { name: nsName } })
      yield* EventRecorder.record(namespace, { type: "Warning", reason: "Stuck", action: "Finalize" }).pipe(
        Effect.provide(EventRecorder.layer({ controller: "example.com/ns", instance: "ns-0" }))
      )
      const all = (yield* events("default")).filter((e) => e.regarding?.name === nsName)
      assert.strictEqual(all.length, 1)
      assert.strictEqual(all[0]!.regarding?.kind, "Namespace")
      assert.isUndefined(all[0]!.regarding?.namespace)
    }))
})
