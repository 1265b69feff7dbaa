/**
 * Finalizer under a lagging cache, in-process on the TestClock: the primary watch is stalled or delayed (testkit
 * faults) while the owned objects' watch is not, so reconciles run on stale cached copies — of an object being
 * deleted, of one already gone. `apply` must never run after our finalizer was released, and `cleanup` must run once
 * per deletion.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Reconcile from "@reconcile/core/Reconcile"
import { Faults, TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Apply from "../src/Apply.js"
import * as Cache from "../src/Cache.js"
import * as Finalizer from "../src/Finalizer.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import type * as Undecodable from "../src/Undecodable.js"
import { WebApp } from "./support/fixtures.js"
import { TestManager } from "./support/manager.js"

const OURS = "example.com/cleanup"
const namespace = "default"
const settle = TestKube.settle
/** Lets fibers run, moves virtual time, lets them run again. */
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))

/** Only the primary kind's watches lag; the owned ConfigMaps' watch stays prompt. */
const primary = { resources: ["webapps.example.com"] }

type Entry =
  | { readonly op: "apply"; readonly uid: string; readonly name: string; readonly released: boolean }
  | { readonly op: "cleanup"; readonly uid: string; readonly name: string }

/** A finalizer reconcile's signature, so the property can run against another implementation. */
type MakeReconcile = (
  options: Finalizer.Options<WebApp, KubeClient.KubeClient, never>
) => (object: WebApp | Undecodable.Undecodable) => Effect.Effect<void, Reconcile.Outcome, KubeClient.KubeClient>

type WebApp = Resource.Type<typeof WebApp>

/**
 * The controller under test: `apply` writes a child ConfigMap owned by the app (with its uid) and notes, at the moment
 * it runs, whether our finalizer is already released on the server (the object gone, replaced, or without it);
 * `cleanup` notes each run.
 */
const controller = (log: Array<Entry>, make: MakeReconcile = Finalizer.reconcile) =>
  KubeController.make({
    name: "stale-cache",
    for: WebApp,
    owns: [Resource.ConfigMap],
    reconcile: make({
      resource: WebApp,
      name: OURS,
      apply: (app) =>
        Effect.gen(function*() {
          const name = app.metadata.name!
          const live = yield* KubeClient.get(WebApp, name, { namespace }).pipe(Effect.option)
          const released = Option.isNone(live) || live.value.metadata.uid !== app.metadata.uid ||
            !Finalizer.has(live.value, OURS)
          log.push({ op: "apply", uid: app.metadata.uid!, name, released })
          yield* Apply.createOrUpdate(
            Resource.ConfigMap,
            { metadata: { name: `${name}-child`, namespace } },
            (cm) => ({ ...cm, data: { image: app.spec.image } }),
            { owner: app }
          )
        }).pipe(Reconcile.asRetryable),
      cleanup: (app) =>
        Effect.sync(() => void log.push({ op: "cleanup", uid: app.metadata.uid!, name: app.metadata.name! }))
    })
  }).pipe(KubeController.start, Effect.provide(TestManager))

const Env = Layer.mergeAll(Cache.layer(), Faults.layer).pipe(Layer.provideMerge(TestKube.layerWithCluster()))

const installCrd = KubeClient.create(Resource.CustomResourceDefinition, Resource.crdManifest(WebApp)).pipe(
  Effect.asVoid
)

const createApp = (name: string, image = "nginx:1") =>
  KubeClient.create(WebApp, {
    apiVersion: WebApp.apiVersion,
    kind: WebApp.kind,
    metadata: { name },
    spec: { image, ports: [] }
  }, {
    namespace
  })

const getApp = (name: string) => KubeClient.get(WebApp, name, { namespace }).pipe(Effect.option)

/** Touches the app's child: an owned-object event, which enqueues the app while its own watch lags. */
const touchChild = (name: string) =>
  KubeClient.patch(Resource.ConfigMap, `${name}-child`, { metadata: { labels: { touched: "yes" } } }, {
    type: "merge",
    namespace
  }).pipe(Effect.ignore)

const count = (log: ReadonlyArray<Entry>, op: Entry["op"], uid?: string) =>
  log.filter((e) => e.op === op && (uid === undefined || e.uid === uid)).length

describe("Finalizer under a lagging cache (TestClock, stalled and delayed watches)", () => {
  it.effect("a stale live copy of an object being deleted: no apply; cleanup runs from the server's state", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      yield* installCrd
      const log: Array<Entry> = []
      yield* controller(log)
      const app = yield* createApp("web")
      yield* settle
      const applied = count(log, "apply") // the create, our finalizer and the child each enqueue the app
      assert.isAtLeast(applied, 1)
      assert.isTrue(Option.isSome(
        yield* KubeClient.get(Resource.ConfigMap, "web-child", { namespace }).pipe(
          Effect.option
        )
      ))

      assert.strictEqual(yield* faults.stallWatches({ ...primary, duration: "60 seconds" }), 1)
      yield* KubeClient.del(WebApp, "web", { namespace }) // the cache still shows it live, with our finalizer
      yield* touchChild("web") // a reconcile of the app on that stale copy
      yield* settle
      assert.strictEqual(count(log, "apply"), applied, "apply does not run on the stale live copy")
      assert.strictEqual(count(log, "cleanup", app.metadata.uid), 1, "the live read saw the deletion: cleanup")
      assert.isTrue(Option.isNone(yield* getApp("web")), "our finalizer released, the object is gone")

      yield* advance(60_000) // the stall ends: the held events arrive, each enqueues the app again
      yield* touchChild("web")
      yield* advance(1_000)
      assert.strictEqual(count(log, "apply"), applied)
      assert.strictEqual(count(log, "cleanup"), 1, "cleanup ran once for the deletion")
      assert.isFalse(log.some((e) => e.op === "apply" && e.released))
    }).pipe(Effect.provide(Env)))

  it.effect("delayed events: the copy still shows our finalizer after its release; cleanup does not run again", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      yield* installCrd
      const log: Array<Entry> = []
      yield* controller(log)
      yield* createApp("web")
      yield* settle
      const applied = count(log, "apply")
      yield* faults.delayWatches({ ...primary, delay: "10 seconds" })
      yield* KubeClient.del(WebApp, "web", { namespace })
      yield* advance(10_000) // the deletion arrives: cleanup, release; the removal's events are 10 s behind
      assert.strictEqual(count(log, "cleanup"), 1)
      assert.isTrue(Option.isNone(yield* getApp("web")))
      // the garbage collector deleted the child at once: its event enqueues the app, whose copy says "deleting, ours"
      yield* touchChild("web")
      yield* advance(1_000)
      assert.strictEqual(count(log, "cleanup"), 1, "the live read says it is gone: no second cleanup")
      yield* advance(20_000)
      assert.strictEqual(count(log, "cleanup"), 1)
      assert.strictEqual(count(log, "apply"), applied)
    }).pipe(Effect.provide(Env)))

  it.effect("a child written for a vanished owner carries its uid and is collected, never orphaned", () =>
    Effect.gen(function*() {
      yield* installCrd
      const app = yield* createApp("gone")
      yield* KubeClient.del(WebApp, "gone", { namespace })
      // what a controller on a stale cache would write: accepted by the API server, then collected
      const child = yield* Apply.apply(Resource.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "gone-child", namespace },
        data: { image: "nginx:1" }
      }, { fieldManager: "test", owner: app })
      assert.strictEqual(child.metadata?.ownerReferences?.[0]?.uid, app.metadata.uid)
      assert.isTrue(child.metadata?.ownerReferences?.[0]?.blockOwnerDeletion)
      assert.isTrue(
        Option.isNone(yield* KubeClient.get(Resource.ConfigMap, "gone-child", { namespace }).pipe(Effect.option))
      )
    }).pipe(Effect.provide(Env)))
})

// ---------------------------------------------------------------------------------------------------------------

const Name = Schema.Literals(["a", "b"])
const Millis = (maximum: number) => Schema.Int.check(Schema.isBetween({ minimum: 0, maximum }))
/**
 * From this step on the primary watch delivers events `lag` ms late; then one action (`stall`: hold the primary watch
 * for `millis`), then `wait` ms of virtual time.
 */
const Step = Schema.Struct({
  lag: Millis(5_000),
  op: Schema.Literals(["create", "delete", "touch", "stall"]),
  name: Name,
  millis: Millis(8_000),
  wait: Millis(10_000)
})
type Step = typeof Step.Type

/**
 * Runs `steps` against a fresh cluster and controller; returns the violations of: no `apply` after our finalizer was
 * released; `cleanup` exactly once per deletion of an object that carried our finalizer (none otherwise); every
 * deleted object gone in the end.
 */
export const runSteps = (steps: ReadonlyArray<Step>, make?: MakeReconcile) =>
  Effect.gen(function*() {
    const faults = yield* Faults.Faults
    yield* installCrd
    const log: Array<Entry> = []
    yield* controller(log, make)
    yield* settle
    let delayRule: Faults.RuleId | undefined
    const deleted = new Map<string, { readonly name: string; readonly withFinalizer: boolean }>()
    for (const step of steps) {
      if (delayRule !== undefined) yield* faults.removeRule(delayRule)
      delayRule = step.lag === 0 ? undefined : yield* faults.delayWatches({ ...primary, delay: step.lag })
      switch (step.op) {
        case "create":
          yield* createApp(step.name).pipe(Effect.ignore)
          break
        case "delete": {
          const live = yield* getApp(step.name)
          if (Option.isNone(live) || live.value.metadata.deletionTimestamp !== undefined) break
          yield* KubeClient.del(WebApp, step.name, { namespace })
          deleted.set(live.value.metadata.uid!, { name: step.name, withFinalizer: Finalizer.has(live.value, OURS) })
          break
        }
        case "touch":
          yield* touchChild(step.name)
          break
        case "stall":
          yield* faults.stallWatches({ ...primary, duration: 1 + 2 * step.millis })
          break
      }
      yield* advance(step.wait)
    }
    for (let i = 0; i < 3; i++) yield* advance(10_000) // still lagging: every stall is over
    if (delayRule !== undefined) yield* faults.removeRule(delayRule)
    for (let i = 0; i < 5; i++) yield* advance(10_000) // converge
    const violations: Array<string> = []
    for (const e of log) {
      if (e.op === "apply" && e.released) violations.push(`apply of ${e.name} (${e.uid}) after its finalizer went`)
    }
    for (const [uid, { name, withFinalizer }] of deleted) {
      const cleanups = count(log, "cleanup", uid)
      const expected = withFinalizer ? 1 : 0
      if (cleanups !== expected) violations.push(`${cleanups} cleanups of ${name} (${uid}), expected ${expected}`)
      const live = yield* getApp(name)
      if (Option.isSome(live) && live.value.metadata.uid === uid) violations.push(`${name} (${uid}) still there`)
    }
    for (const e of log) {
      if (e.op === "cleanup" && !deleted.has(e.uid)) violations.push(`cleanup of ${e.name} (${e.uid}), never deleted`)
    }
    return violations
  }).pipe(Effect.provide(Env))

describe("Finalizer under a lagging cache (scripted and property)", () => {
  it.effect("apply after the release, from a stale copy (the old helper re-created children and external entries)", () =>
    Effect.gen(function*() {
      // Events lag 5 s. The app is created; 5 s later the controller adds our finalizer (its MODIFIED event lags).
      // The app is deleted, and a child event reconciles it on the copy without our finalizer: the guarded add fails,
      // the fresh read says "deleting" — cleanup, release, gone. Then the late "finalizer added" event shows a live app
      // with our finalizer: without a live read, apply ran again for an object that no longer exists.
      const step = (op: Step["op"], wait: number): Step => ({ lag: 5_000, op, name: "a", millis: 0, wait })
      const violations = yield* runSteps([step("create", 5_000), step("delete", 0), step("touch", 0)])
      assert.deepStrictEqual(violations, [])
    }))

  it.effect.prop(
    "random deletions with random watch stalls and delays: no apply after the finalizer went; one cleanup per deletion",
    [Arbitrary.array(Arbitrary.schema(Step), { minLength: 8, maxLength: 20 })],
    ([steps]) => Effect.map(runSteps(steps), (violations) => assert.deepStrictEqual(violations, [])),
    { timeout: 120_000, arbitrary: { runs: 200 } }
  )
})
