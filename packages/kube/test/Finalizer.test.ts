/**
 * Finalizer against TestApiServer over HTTPS: the apply/cleanup guarantee and race safety with other writers.
 */
import { assert, layer } from "@effect/vitest"
import { Reconcile } from "@reconcile/core"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import * as Finalizer from "../src/Finalizer.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import * as Undecodable from "../src/Undecodable.js"
import { countRequests, kubeLayer, makeEnv, onRealCluster, waitServed } from "./support/env.js"
import { looseCrdManifest, WebApp } from "./support/fixtures.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const OURS = "example.com/cleanup"
const OTHER = "other.io/keep"

/** The error of an exit that failed with exactly one typed error (effect 4's Cause is a flat list of reasons). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined => {
  if (Exit.isSuccess(exit) || exit.cause.reasons.length !== 1) return undefined
  const reason = exit.cause.reasons[0]!
  return Cause.isFailReason(reason) ? reason.error : undefined
}

let counter = 0
const freshNamespace = Effect.gen(function*() {
  const name = `fin-${++counter}`
  yield* KubeClient.create(Resource.Namespace, { metadata: { name } })
  return name
})

const cm = (name: string, finalizers?: ReadonlyArray<string>): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(finalizers !== undefined ? { finalizers: [...finalizers] } : {}) },
  data: { a: "1" }
})

/** A finalizer reconcile that counts its phases; `cleanupResults` are the outcomes of the next cleanups. */
const tracked = (name = OURS, cleanupResults: Array<Reconcile.Outcome> = []) => {
  const calls = {
    apply: [] as Array<Resource.ConfigMap>,
    cleanup: [] as Array<Resource.ConfigMap | Undecodable.Undecodable>
  }
  const reconcile = Finalizer.reconcile({
    resource: Resource.ConfigMap,
    name,
    apply: (obj) => Effect.sync(() => void calls.apply.push(obj)),
    cleanup: (obj) =>
      Effect.suspend(() => {
        calls.cleanup.push(obj)
        const next = cleanupResults.shift()
        return next === undefined ? Effect.void : Effect.fail(next)
      })
  })
  return { calls, reconcile }
}

const read = (ns: string, name: string) =>
  KubeClient.get(Resource.ConfigMap, name, { namespace: ns }).pipe(KubeError.ignoreNotFound)

/** A second writer: another manager editing only its own finalizer with its own guarded patch. */
const otherAdds = (ns: string, name: string) =>
  Effect.gen(function*() {
    const live = yield* KubeClient.get(Resource.ConfigMap, name, { namespace: ns })
    const current = live.metadata?.finalizers ?? []
    yield* KubeClient.patch(Resource.ConfigMap, name, { metadata: { finalizers: [...current, OTHER] } }, {
      type: "merge",
      namespace: ns
    })
  })

const otherRemoves = (ns: string, name: string) =>
  Effect.gen(function*() {
    const live = yield* KubeClient.get(Resource.ConfigMap, name, { namespace: ns })
    const current = live.metadata?.finalizers ?? []
    yield* KubeClient.patch(
      Resource.ConfigMap,
      name,
      [
        { op: "test", path: "/metadata/finalizers", value: current },
        { op: "remove", path: `/metadata/finalizers/${current.indexOf(OTHER)}` }
      ],
      { type: "json", namespace: ns }
    )
  })

layer(TestLayer)("Finalizer against TestApiServer", (it) => {
  it.effect("adds the finalizer before the first apply; apply sees it on the object", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const created = yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns })
      const { calls, reconcile } = tracked()
      yield* reconcile(created)
      assert.strictEqual(calls.apply.length, 1)
      assert.deepStrictEqual(calls.apply[0]!.metadata?.finalizers, [OURS])
      const live = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(live.metadata?.finalizers, [OURS])
      // steady state: no more finalizer writes
      const from = env.log.lines.length
      yield* reconcile(live)
      assert.strictEqual(calls.apply.length, 2)
      assert.strictEqual(countRequests(env.log, from, "PATCH"), 0)
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "add race: a finalizer another manager added after our read survives ours",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        const stale = yield* KubeClient.create(Resource.ConfigMap, cm("app", ["first.io/f"]), { namespace: ns })
        yield* otherAdds(ns, "app") // after our (stale) read
        const from = env.log.lines.length
        const { calls, reconcile } = tracked()
        yield* reconcile(stale)
        const live = Option.getOrThrow(yield* read(ns, "app"))
        assert.deepStrictEqual(live.metadata?.finalizers, ["first.io/f", OTHER, OURS])
        // the first guarded patch failed its test, the object was read again, the second patch succeeded
        assert.strictEqual(countRequests(env.log, from, "PATCH", "/configmaps/app", " 422 "), 1)
        assert.strictEqual(countRequests(env.log, from, "PATCH", "/configmaps/app", " 200 "), 1)
        assert.strictEqual(calls.apply.length, 1)
        assert.deepStrictEqual(calls.apply[0]!.metadata?.finalizers, ["first.io/f", OTHER, OURS])
      })
  )

  it.effect("add race without a list: concurrent finalizer helpers on one stale read all keep their finalizer", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const stale = yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns })
      const names = ["a.io/f", "b.io/f", "c.io/f", "d.io/f"]
      const helpers = names.map((name) => tracked(name))
      yield* Effect.all(helpers.map((h) => h.reconcile(stale)), { concurrency: "unbounded" })
      const live = Option.getOrThrow(yield* read(ns, "app"))
      assert.sameMembers([...(live.metadata?.finalizers ?? [])], names)
      for (const h of helpers) assert.strictEqual(h.calls.apply.length, 1)
    }))

  it.effect("cleanup runs exactly once per deletion on success; then only our finalizer goes", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const created = yield* KubeClient.create(Resource.ConfigMap, cm("app", [OTHER]), { namespace: ns })
      const { calls, reconcile } = tracked()
      yield* reconcile(created)
      const pending = yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      assert(pending._tag === "Pending")
      // reconcile the object as the controller would, on every change, several times
      for (let i = 0; i < 3; i++) {
        const live = yield* read(ns, "app")
        if (Option.isSome(live)) yield* reconcile(live.value)
      }
      assert.strictEqual(calls.cleanup.length, 1)
      assert.strictEqual(calls.apply.length, 1, "apply never runs once deletion started")
      const held = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(held.metadata?.finalizers, [OTHER], "the other manager's finalizer is untouched")
      assert.isDefined(held.metadata?.deletionTimestamp)
      yield* otherRemoves(ns, "app")
      assert.isTrue(Option.isNone(yield* read(ns, "app")))
      assert.strictEqual(calls.cleanup.length, 1)
    }))

  it.effect("the object stays while cleanup fails (Retryable, then Terminal); it goes once cleanup succeeds", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const created = yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns })
      const { calls, reconcile } = tracked(OURS, [
        Reconcile.retryable("database busy"),
        Reconcile.terminal("needs a human")
      ])
      yield* reconcile(created)
      yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })

      const first = yield* Effect.exit(reconcile(Option.getOrThrow(yield* read(ns, "app"))))
      assert(failureOf(first)?._tag === "Retryable")
      const stillThere = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(stillThere.metadata?.finalizers, [OURS])

      const second = yield* Effect.exit(reconcile(stillThere))
      assert(failureOf(second)?._tag === "Terminal")
      const stillThere2 = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(stillThere2.metadata?.finalizers, [OURS])

      yield* reconcile(stillThere2)
      assert.isTrue(Option.isNone(yield* read(ns, "app")))
      assert.strictEqual(calls.cleanup.length, 3)
      assert.strictEqual(calls.apply.length, 1)
    }))

  it.effect("remove race: another manager removing its finalizer meanwhile does not make us remove the wrong one", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      // OTHER first: after its removal our stale index (1) points past the end of the list
      const created = yield* KubeClient.create(Resource.ConfigMap, cm("app", [OTHER, OURS, "third.io/f"]), {
        namespace: ns
      })
      const { calls, reconcile } = tracked()
      yield* reconcile(created)
      const pending = yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      assert(pending._tag === "Pending")
      const stale = pending.object
      yield* otherRemoves(ns, "app")
      yield* reconcile(stale)
      assert.strictEqual(calls.cleanup.length, 1)
      const live = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(live.metadata?.finalizers, ["third.io/f"])
    }))

  it.effect("remove race: two finalizer helpers releasing concurrently from one stale read both succeed", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const created = yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns })
      const ours = tracked(OURS)
      const theirs = tracked(OTHER)
      yield* ours.reconcile(created)
      yield* theirs.reconcile(Option.getOrThrow(yield* read(ns, "app")))
      const pending = yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      assert(pending._tag === "Pending")
      assert.deepStrictEqual(pending.object.metadata?.finalizers, [OURS, OTHER])
      yield* Effect.all([ours.reconcile(pending.object), theirs.reconcile(pending.object)], {
        concurrency: "unbounded"
      })
      assert.strictEqual(ours.calls.cleanup.length, 1)
      assert.strictEqual(theirs.calls.cleanup.length, 1)
      assert.isTrue(Option.isNone(yield* read(ns, "app")))
    }))

  it.effect("an object being deleted without our finalizer: neither apply nor cleanup, no writes", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.ConfigMap, cm("app", [OTHER]), { namespace: ns })
      const pending = yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      assert(pending._tag === "Pending")
      const from = env.log.lines.length
      const { calls, reconcile } = tracked()
      yield* reconcile(pending.object)
      assert.strictEqual(calls.apply.length + calls.cleanup.length, 0)
      assert.strictEqual(countRequests(env.log, from, "PATCH"), 0)
    }))

  it.effect("deletion starting between our read and our add: apply never runs, no finalizer added", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const stale = yield* KubeClient.create(Resource.ConfigMap, cm("app", [OTHER]), { namespace: ns })
      yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      const { calls, reconcile } = tracked()
      yield* reconcile(stale) // the stale object looks live
      assert.strictEqual(calls.apply.length, 0)
      assert.strictEqual(calls.cleanup.length, 0)
      const live = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(live.metadata?.finalizers, [OTHER])
    }))

  it.effect("a recreated object of the same name keeps our finalizer after a stale cleanup of the old one", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const { calls, reconcile } = tracked()
      yield* reconcile(yield* KubeClient.create(Resource.ConfigMap, cm("app", [OTHER]), { namespace: ns }))
      const pending = yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      assert(pending._tag === "Pending")
      const oldObject = pending.object
      // the old object goes (someone force-removes the finalizers) and a new one with our finalizer takes the name
      yield* KubeClient.patch(Resource.ConfigMap, "app", { metadata: { finalizers: null } }, {
        type: "merge",
        namespace: ns
      })
      const recreated = yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns })
      yield* reconcile(recreated)
      yield* reconcile(oldObject) // a late event about the old object
      const live = Option.getOrThrow(yield* read(ns, "app"))
      assert.strictEqual(live.metadata?.uid, recreated.metadata?.uid)
      assert.deepStrictEqual(live.metadata?.finalizers, [OURS])
      assert.strictEqual(calls.apply.length, 2)
    }))

  it.effect("a failed test with no attempts left: Retryable, nothing written over the other writer", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const stale = yield* KubeClient.create(Resource.ConfigMap, cm("app", ["a.io/f"]), { namespace: ns })
      yield* otherAdds(ns, "app")
      const applied: Array<unknown> = []
      const reconcile = Finalizer.reconcile({
        resource: Resource.ConfigMap,
        name: OURS,
        attempts: 1,
        apply: (obj) => Effect.sync(() => void applied.push(obj)),
        cleanup: () => Effect.void
      })
      const exit = yield* Effect.exit(reconcile(stale))
      assert(failureOf(exit)?._tag === "Retryable")
      assert.strictEqual(applied.length, 0)
      const live = Option.getOrThrow(yield* read(ns, "app"))
      assert.deepStrictEqual(live.metadata?.finalizers, ["a.io/f", OTHER])
      // the next reconcile (from the fresh object) succeeds
      yield* reconcile(live)
      assert.strictEqual(applied.length, 1)
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "cost: steady state is one GET per apply; adding is one PATCH; a deletion is one GET and one PATCH",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        const created = yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns })
        const { calls, reconcile } = tracked()
        let from = env.log.lines.length
        yield* reconcile(created) // the answer of the guarded add is the confirmation: no read
        assert.deepStrictEqual([countRequests(env.log, from, "PATCH"), countRequests(env.log, from, "GET")], [1, 0])
        const live = Option.getOrThrow(yield* read(ns, "app"))
        from = env.log.lines.length
        for (let i = 0; i < 5; i++) yield* reconcile(live) // the cached copy, five times
        assert.deepStrictEqual([countRequests(env.log, from, "PATCH"), countRequests(env.log, from, "GET")], [0, 5])
        assert.strictEqual(calls.apply.length, 6)
        yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
        const deleting = Option.getOrThrow(yield* read(ns, "app"))
        from = env.log.lines.length
        yield* reconcile(deleting)
        assert.deepStrictEqual([countRequests(env.log, from, "GET"), countRequests(env.log, from, "PATCH")], [1, 1])
        assert.strictEqual(calls.cleanup.length, 1)
      })
  )

  it.effect("stale copies: no apply for an object deleted on the server, no second cleanup after the release", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const { calls, reconcile } = tracked()
      yield* reconcile(yield* KubeClient.create(Resource.ConfigMap, cm("app"), { namespace: ns }))
      const liveCopy = Option.getOrThrow(yield* read(ns, "app")) // what a cache would hold
      yield* KubeClient.del(Resource.ConfigMap, "app", { namespace: ns })
      const deletingCopy = Option.getOrThrow(yield* read(ns, "app"))
      yield* reconcile(liveCopy) // the cache has not seen the deletion: the live read has
      assert.strictEqual(calls.apply.length, 1, "apply never runs on the stale live copy")
      assert.strictEqual(calls.cleanup.length, 1, "the server said \"deleting\": cleanup, then release")
      assert.isTrue(Option.isNone(yield* read(ns, "app")))
      yield* reconcile(deletingCopy) // the cache has not seen the release
      yield* reconcile(liveCopy)
      assert.deepStrictEqual([calls.apply.length, calls.cleanup.length], [1, 1])
    }))

  it.effect("an object that no longer decodes: deleted → cleanup with its metadata, finalizer released; live → onUndecodable", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.CustomResourceDefinition, looseCrdManifest(WebApp)).pipe(Effect.ignore)
      yield* waitServed(WebApp)
      const cleaned: Array<string> = []
      const reported: Array<string> = []
      const reconcile = Finalizer.reconcile({
        resource: WebApp,
        name: OURS,
        apply: () => Effect.void,
        cleanup: (app) =>
          Effect.sync(() => void cleaned.push(`${app.metadata.name} ${Undecodable.isUndecodable(app)}`)),
        onUndecodable: (app) => Effect.sync(() => void reported.push(app.metadata.name!))
      })
      const app = yield* KubeClient.create(WebApp, {
        apiVersion: WebApp.apiVersion,
        kind: WebApp.kind,
        metadata: { name: "app" },
        spec: { image: "nginx", ports: [] }
      }, { namespace: ns })
      yield* reconcile(app)
      // edited to a shape the Schema rejects (the write succeeds, its answer does not decode)
      yield* KubeClient.patch(WebApp, "app", { spec: { replicas: "three" } }, { type: "merge", namespace: ns }).pipe(
        Effect.ignore
      )
      const broken = yield* Effect.flip(KubeClient.get(WebApp, "app", { namespace: ns }))
      assert(broken._tag === "Decode")
      const undecodable = Option.getOrThrow(Undecodable.fromDecode(broken))
      yield* reconcile(undecodable)
      assert.deepStrictEqual(reported, ["app"])
      yield* KubeClient.del(WebApp, "app", { namespace: ns }).pipe(Effect.ignore)
      yield* reconcile(undecodable) // a stale undecodable copy: the live read sees the deletion
      assert.deepStrictEqual(cleaned, ["app true"])
      const gone = yield* Effect.flip(KubeClient.get(WebApp, "app", { namespace: ns }))
      assert.strictEqual(gone._tag, "NotFound", "the finalizer was released")
    }))
})
