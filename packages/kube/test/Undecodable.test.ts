/**
 * Objects that stop decoding are visible, not frozen: decode errors carry the object's metadata, the watcher and the
 * informer keep it as an `Undecodable`, controllers receive it, and `Finalizer.reconcile` processes its deletion.
 * In-process on the TestClock, then end to end over HTTPS against TestApiServer.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type * as Event from "@reconcile/core/Event"
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Request from "@reconcile/core/Request"
import { Faults, TestCluster, TestKube } from "@reconcile/testkit"
import { Effect, Exit, Layer, Metric, Option, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Cache from "../src/Cache.js"
import * as Finalizer from "../src/Finalizer.js"
import type * as Informer from "../src/Informer.js"
import { decodeFailuresTotal, undecodableObjects } from "../src/internal/informer.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import * as Undecodable from "../src/Undecodable.js"
import * as Watcher from "../src/Watcher.js"
import { check, eventually, kubeLayer, makeEnv, onRealCluster } from "./support/env.js"
import { looseCrdManifest, WebApp } from "./support/fixtures.js"
import { TestManager } from "./support/manager.js"

type WebApp = Resource.Type<typeof WebApp>

const OURS = "example.com/cleanup"
const namespace = "default"
const settle = TestKube.settle

const app = (name: string, spec: Record<string, unknown> = { image: "nginx:1" }) => ({
  apiVersion: "example.com/v1",
  kind: "WebApp",
  metadata: { name, namespace },
  spec
})

const ref = (name: string) => ({ apiVersion: "example.com/v1", kind: "WebApp", name, namespace })

/** Edits the app's spec on the server (raw JSON: the Schema is not consulted). */
const setSpec = (name: string, spec: Record<string, unknown>) =>
  Effect.flatMap(
    TestCluster.TestCluster,
    (cluster) => Effect.orDie(cluster.patch(ref(name), { type: "merge", patch: { spec } }))
  )

const installCrd = Effect.flatMap(
  TestCluster.TestCluster,
  (cluster) => Effect.orDie(cluster.create(looseCrdManifest(WebApp) as never))
)

const InProcess = Layer.mergeAll(Cache.layer(), Faults.layer).pipe(Layer.provideMerge(TestKube.layerWithCluster()))

describe("Decode errors name their object", () => {
  it.effect("a custom resource failing its Schema: the error carries its metadata and apiVersion", () =>
    Effect.gen(function*() {
      const raw = {
        apiVersion: "example.com/v1",
        kind: "WebApp",
        metadata: {
          name: "web",
          namespace: "shop",
          uid: "u-1",
          resourceVersion: "42",
          generation: 3,
          finalizers: [OURS],
          deletionTimestamp: "2030-01-01T00:00:00Z",
          labels: { app: "web" },
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "u-0" }],
          managedFields: [{ manager: "kubectl" }]
        },
        spec: { image: "nginx", replicas: "three" }
      }
      const error = yield* Effect.flip(WebApp.decode(raw))
      assert.strictEqual(error.apiVersion, "example.com/v1")
      assert.deepStrictEqual(error.metadata, {
        name: "web",
        namespace: "shop",
        uid: "u-1",
        generation: 3,
        resourceVersion: "42",
        labels: { app: "web" },
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "u-0" }],
        deletionTimestamp: "2030-01-01T00:00:00Z",
        finalizers: [OURS]
      })
      const undecodable = Option.getOrThrow(Undecodable.fromDecode(error))
      assert.isTrue(Undecodable.isUndecodable(undecodable))
      assert.isFalse(Undecodable.isUndecodable(raw))
      assert.strictEqual(undecodable.kind, "WebApp")
      assert.include(Undecodable.describe(undecodable), "WebApp shop/web does not decode: shop/web: spec: replicas")
      const outcome = yield* Effect.flip(Undecodable.terminal(undecodable))
      assert.strictEqual(outcome._tag, "Terminal")
    }))

  it.effect("a Secret's last-applied annotation (its data) is dropped; a body that is no object names nothing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Resource.Secret.decode({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "token",
          annotations: {
            "kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"key\":\"c2VjcmV0\"}}",
            a: "b"
          }
        }
      }))
      assert.deepStrictEqual(error.metadata, { name: "token", annotations: { a: "b" } })
      assert.notInclude(JSON.stringify(error), "c2VjcmV0")
      const bare = yield* Effect.flip(WebApp.decode([1, 2]))
      assert.isUndefined(bare.metadata)
      assert.isTrue(Option.isNone(Undecodable.fromDecode(bare)))
    }))

  it.effect("the watcher turns a named undecodable object into an event and moves its resourceVersion on", () =>
    Effect.gen(function*() {
      const broken = yield* Effect.flip(
        WebApp.decode({ ...app("b", { image: "" }), metadata: { name: "b", resourceVersion: "7" } })
      )
      const resumedFrom: Array<string> = []
      let watches = 0
      const listWatch: Watcher.ListWatch<WebApp> = {
        name: "scripted",
        resourceVersion: (o) => o.metadata.resourceVersion,
        list: () => Effect.succeed({ items: [], resourceVersion: "5", undecodable: [broken] }),
        watch: (options) => {
          resumedFrom.push(options.resourceVersion)
          return watches++ === 0
            ? Stream.make(
              { _tag: "Undecodable", error: broken, type: "Modified" } as const,
              { _tag: "Undecodable", error: broken, type: "Deleted" } as const
            )
            : Stream.never
        }
      }
      const seen: Array<Watcher.WatcherEvent<WebApp>> = []
      yield* Watcher.watch(listWatch).pipe(
        Stream.runForEach((e) => Effect.sync(() => void seen.push(e))),
        Effect.forkScoped
      )
      yield* Effect.andThen(settle, TestClock.adjust("10 seconds"))
      assert.deepStrictEqual(
        seen.map((e) => e._tag === "Undecodable" ? `Undecodable(${e.event}):${e.error.metadata?.name}` : e._tag),
        ["Init", "Undecodable(InitApply):b", "InitDone", "Undecodable(Apply):b", "Undecodable(Delete):b"]
      )
      assert.deepStrictEqual(resumedFrom, ["5", "7"], "the next watch resumes after the undecodable object's version")
    }))
})

/** Subscribes to an informer's decoded and undecodable events. */
const subscribe = (informer: Informer.Informer<WebApp>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const show = <A extends { readonly metadata?: { readonly name?: string | undefined } | undefined }>(
      prefix: string,
      e: Event.Event<A>
    ) => `${prefix}${e._tag}:${e.object.metadata?.name}${e._tag === "Delete" && e.finalStateUnknown ? " unknown" : ""}`
    yield* informer.events.pipe(
      Stream.runForEach((e) => Effect.sync(() => void seen.push(show("", e)))),
      Effect.forkScoped
    )
    yield* informer.undecodable.events.pipe(
      Stream.runForEach((e) => Effect.sync(() => void seen.push(show("U:", e)))),
      Effect.forkScoped
    )
    yield* settle
    return seen
  })

describe("The cache keeps undecodable objects visible (in-process, TestClock)", () => {
  it.effect("decoded → undecodable → undecodable → decoded → undecodable → deleted, in the store and as events", () =>
    Effect.gen(function*() {
      yield* installCrd
      const cluster = yield* TestCluster.TestCluster
      const cache = yield* Cache.Cache
      yield* Effect.orDie(cluster.create(app("a") as never))
      const informer = yield* cache.informer(WebApp, { namespace })
      const failures = Metric.withAttributes(decodeFailuresTotal, { informer: informer.name, kind: "WebApp" })
      const gauge = Metric.withAttributes(undecodableObjects, { informer: informer.name })
      const before = (yield* Metric.value(failures)).count
      const seen = yield* subscribe(informer)
      assert.deepStrictEqual(seen, ["Create:a"])

      yield* setSpec("a", { image: "" }) // minLength 1
      yield* settle
      assert.isUndefined(informer.store.get("a", namespace), "the last good copy no longer says what is there")
      const stuck = informer.store.undecodable("a", namespace)!
      assert.strictEqual(
        stuck.metadata.resourceVersion,
        (yield* Effect.orDie(cluster.get(ref("a")))).metadata.resourceVersion
      )
      assert.deepStrictEqual(informer.store.listUndecodable().map((u) => u.metadata.name), ["a"])
      assert.strictEqual((yield* Metric.value(gauge)).value, 1)
      const read = yield* Effect.flip(cache.get(WebApp, "a", { namespace }))
      assert(read._tag === "Decode", "a cached read fails with the Decode error, not NotFound")
      assert.strictEqual(read.metadata?.name, "a")
      assert.deepStrictEqual(yield* cache.list(WebApp, { namespace }), [])

      yield* setSpec("a", { replicas: -1 })
      yield* settle
      yield* setSpec("a", { image: "nginx:2", replicas: 1 })
      yield* settle
      assert.strictEqual(informer.store.get("a", namespace)?.spec.image, "nginx:2")
      assert.isUndefined(informer.store.undecodable("a", namespace))
      yield* setSpec("a", { image: "" })
      yield* settle
      yield* Effect.orDie(cluster.delete(ref("a")))
      yield* settle
      // each stream in order (the two are separate subscriptions)
      assert.deepStrictEqual(seen.filter((e) => !e.startsWith("U:")), [
        "Create:a",
        "Delete:a unknown",
        "Create:a",
        "Delete:a unknown"
      ])
      assert.deepStrictEqual(seen.filter((e) => e.startsWith("U:")), [
        "U:Create:a",
        "U:Update:a",
        "U:Delete:a",
        "U:Create:a",
        "U:Delete:a"
      ])
      assert.strictEqual(informer.store.size() + informer.store.listUndecodable().length, 0)
      assert.strictEqual((yield* Metric.value(failures)).count - before, 4, "every version that did not decode")
      assert.strictEqual((yield* Metric.value(gauge)).value, 0)
    }).pipe(Effect.provide(InProcess)))

  it.effect("late subscribers and relists: undecodable objects are listed, kept, and deleted when they vanish", () =>
    Effect.gen(function*() {
      yield* installCrd
      const cluster = yield* TestCluster.TestCluster
      const cache = yield* Cache.Cache
      yield* Effect.orDie(cluster.create(app("good") as never))
      yield* Effect.orDie(cluster.create(app("bad", { image: "" }) as never))
      yield* Effect.orDie(cluster.create(app("worse", { image: "" }) as never))
      const informer = yield* cache.informer(WebApp, { namespace })
      yield* informer.synced
      const seen = yield* subscribe(informer)
      assert.sameMembers(seen, ["Create:good", "U:Create:bad", "U:Create:worse"], "a late subscriber gets them all")
      // "worse" vanishes while the watch is down and its history compacted: the relist finds it gone
      const faults = yield* Faults.Faults
      yield* faults.dropWatches
      yield* Effect.orDie(cluster.delete(ref("worse")))
      yield* faults.compactNow
      yield* Effect.andThen(settle, TestClock.adjust("10 seconds"))
      yield* settle
      assert.deepStrictEqual(seen.slice(3), ["U:Delete:worse unknown"], "the unchanged ones cause no event")
      assert.deepStrictEqual(informer.store.listUndecodable().map((u) => u.metadata.name), ["bad"])
    }).pipe(Effect.provide(InProcess)))
})

describe("Controllers receive undecodable objects (in-process, TestClock)", () => {
  it.effect("by object: `reconcile` takes `A | Undecodable`, or `onUndecodable` takes them; by key: Cache.get fails Decode", () =>
    Effect.gen(function*() {
      yield* installCrd
      const cluster = yield* TestCluster.TestCluster
      const union: Array<string> = []
      const split: Array<string> = []
      const byKey: Array<string> = []
      yield* KubeController.make({
        name: "union",
        for: WebApp,
        reconcile: (object) =>
          Effect.sync(() =>
            void union.push(
              Undecodable.isUndecodable(object)
                ? `undecodable ${object.metadata.name}`
                : `${object.metadata.name}=${object.spec.image}`
            )
          )
      }).pipe(KubeController.start, Effect.provide(TestManager))
      yield* KubeController.make({
        name: "split",
        for: WebApp,
        reconcile: (object) => Effect.sync(() => void split.push(`${object.metadata.name}=${object.spec.image}`)),
        onUndecodable: (object) => Effect.sync(() => void split.push(`undecodable ${object.metadata.name}`))
      }).pipe(KubeController.start, Effect.provide(TestManager))
      const cache = yield* Cache.Cache
      yield* KubeController.make({
        name: "by-key",
        for: WebApp,
        reconcileRequest: (request) =>
          cache.get(WebApp, request.name, { namespace: request.namespace }).pipe(
            Effect.match({
              onFailure: (e) => void byKey.push(`${request.name}: ${e._tag}`),
              onSuccess: (o) => void byKey.push(`${o.metadata.name}=${o.spec.image}`)
            })
          )
      }).pipe(KubeController.start, Effect.provide(TestManager))
      yield* Effect.orDie(cluster.create(app("a") as never))
      yield* settle
      yield* setSpec("a", { image: "" })
      yield* settle
      // the object's own event and its becoming undecodable may each enqueue it: compare without repeats
      const distinct = (xs: ReadonlyArray<string>) => xs.filter((x, i) => xs.indexOf(x) === i)
      assert.deepStrictEqual(distinct(union), ["a=nginx:1", "undecodable a"])
      assert.deepStrictEqual(distinct(split), ["a=nginx:1", "undecodable a"])
      assert.deepStrictEqual(distinct(byKey), ["a=nginx:1", "a: Decode"])
    }).pipe(Effect.provide(InProcess)))

  it.effect("owns: an owned object that stops decoding enqueues its controller owner", () =>
    Effect.gen(function*() {
      yield* installCrd
      const cluster = yield* TestCluster.TestCluster
      const owner = yield* Effect.orDie(
        cluster.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "owner", namespace } } as never)
      )
      const seen: Array<string> = []
      yield* KubeController.make({
        name: "owns-undecodable",
        for: Resource.ConfigMap,
        owns: [WebApp],
        reconcileRequest: (request) => Effect.sync(() => void seen.push(Request.key(request)))
      }).pipe(KubeController.start, Effect.provide(TestManager))
      yield* Effect.orDie(cluster.create({
        ...app("child"),
        metadata: {
          name: "child",
          namespace,
          ownerReferences: [{
            apiVersion: "v1",
            kind: "ConfigMap",
            name: "owner",
            uid: owner.metadata.uid!,
            controller: true
          }]
        }
      } as never))
      yield* settle
      const before = seen.length
      yield* setSpec("child", { image: "" })
      yield* settle
      assert.isAbove(seen.length, before)
      assert.isTrue(seen.slice(before).every((key) => key === "default/owner"))
    }).pipe(Effect.provide(InProcess)))

  it.effect("the compiler asks for `onUndecodable` when `reconcile` takes the decoded object only", () =>
    Effect.sync(() => {
      const reconcile = (object: WebApp) => Effect.log(object.spec.image)
      // @ts-expect-error -- `reconcile` reads the spec: an undecodable object needs `onUndecodable`
      const missing = () => KubeController.make({ name: "x", for: WebApp, reconcile })
      const handled = () =>
        KubeController.make({ name: "x", for: WebApp, reconcile, onUndecodable: Undecodable.terminal })
      const finalizer = () =>
        KubeController.make({
          name: "x",
          for: WebApp,
          reconcile: Finalizer.reconcile({ resource: WebApp, name: OURS, apply: reconcile, cleanup: () => Effect.void })
        })
      assert.isFunction(missing)
      assert.isFunction(handled)
      assert.isFunction(finalizer)
    }))
})

// ---------------------------------------------------------------------------------------------------------------

interface Calls {
  /** The resourceVersion of each object `apply` ran on. */
  readonly apply: Array<number>
  readonly undecodable: Array<string>
  readonly cleanup: Array<{ readonly name: string; readonly uid: string; readonly undecodable: boolean }>
}

/**
 * The WebApp controller of the scenario: a finalizer; a live app that does not decode gets an `InvalidSpec`
 * condition (a status patch: the server applies it, its answer does not decode) and a Terminal outcome.
 */
const finalizerController = (calls: Calls) =>
  KubeController.make({
    name: "webapps-undecodable",
    for: WebApp,
    reconcile: Finalizer.reconcile({
      resource: WebApp,
      name: OURS,
      apply: (object) => Effect.sync(() => void calls.apply.push(Number(object.metadata.resourceVersion))),
      cleanup: (object) =>
        Effect.sync(() =>
          void calls.cleanup.push({
            name: object.metadata.name!,
            uid: object.metadata.uid!,
            undecodable: Undecodable.isUndecodable(object)
          })
        ),
      onUndecodable: (object) =>
        Effect.gen(function*() {
          calls.undecodable.push(object.metadata.name!)
          yield* KubeClient.patchStatus(WebApp, object.metadata.name!, {
            status: { conditions: [{ type: "InvalidSpec", status: "True" }] }
          }, { type: "merge", namespace: object.metadata.namespace }).pipe(
            Effect.catchTag("Decode", () => Effect.void),
            Reconcile.asRetryable
          )
          return yield* Undecodable.terminal(object)
        })
    })
  }).pipe(KubeController.start, Effect.provide(TestManager))

/** The scenario, on whatever cluster and cache are provided; `wait` lets the controller catch up. */
const scenario = (wait: (check: Effect.Effect<void, unknown, any>) => Effect.Effect<void, unknown, any>) =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster.TestCluster
    const calls: Calls = { apply: [], undecodable: [], cleanup: [] }
    const name = `web-${Math.random().toString(36).slice(2, 8)}`
    yield* finalizerController(calls)
    const created = yield* Effect.orDie(cluster.create(app(name) as never))
    yield* wait(check(() => assert.isAtLeast(calls.apply.length, 1)))
    yield* wait(
      Effect.flatMap(
        Effect.orDie(cluster.get(ref(name))),
        (o) => check(() => assert.deepStrictEqual(o.metadata.finalizers, [OURS]))
      )
    )
    // From this version on the object does not decode: apply may still run on earlier versions (the reconcile of
    // the finalizer's own update can come late), never on this one or later
    const invalid = Number((yield* setSpec(name, { image: "nginx", replicas: "three" })).metadata.resourceVersion)
    const appliedToInvalid = () => calls.apply.filter((rv) => rv >= invalid)
    yield* wait(check(() => assert.deepStrictEqual(calls.undecodable.slice(0, 1), [name])))
    yield* wait(
      Effect.flatMap(
        Effect.orDie(cluster.get(ref(name))),
        (o: any) => check(() => assert.deepStrictEqual(o.status?.conditions, [{ type: "InvalidSpec", status: "True" }]))
      )
    )
    assert.deepStrictEqual(appliedToInvalid(), [], "apply never runs on an object that does not decode")

    yield* Effect.orDie(cluster.delete(ref(name)))
    yield* wait(
      check(() => assert.deepStrictEqual(calls.cleanup, [{ name, uid: created.metadata.uid!, undecodable: true }]))
    )
    yield* wait(
      Effect.flatMap(
        Effect.exit(cluster.get(ref(name))),
        (exit) => check(() => assert.isTrue(Exit.isFailure(exit), "the finalizer was released and the object went"))
      )
    )
    assert.deepStrictEqual(appliedToInvalid(), [])
    assert.strictEqual(calls.cleanup.length, 1)
  })

describe("Finalizer and an object that stops decoding (in-process, TestClock)", () => {
  it.effect("the controller sees the failure, sets a condition; on deletion cleanup runs, the finalizer goes, so does the object", () =>
    Effect.gen(function*() {
      yield* installCrd
      const cache = yield* Cache.Cache
      yield* scenario((c) => Effect.andThen(settle, c))
      const informer = yield* cache.informer(WebApp)
      const failures = Metric.withAttributes(decodeFailuresTotal, { informer: informer.name, kind: "WebApp" })
      assert.isAtLeast((yield* Metric.value(failures)).count, 2, "counted per kind")
    }).pipe(Effect.provide(InProcess)))
})

const env = makeEnv()
const HttpLayer = Cache.layer().pipe(
  Layer.provideMerge(KubeClient.layer),
  Layer.provideMerge(kubeLayer()),
  Layer.provideMerge(env.layer)
)

layer(HttpLayer, { excludeTestServices: true })("Finalizer and an object that stops decoding (HTTPS)", (it) => {
  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "the same scenario through the real client and TestApiServer",
    () =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.TestCluster
        yield* cluster.create(looseCrdManifest(WebApp) as never).pipe(Effect.ignore)
        yield* scenario((c) => eventually(c))
      })
  )
})
