/**
 * Apply against TestApiServer over HTTPS: server-side apply, createOrUpdate / createOrPatch write counts,
 * owner-reference conflicts.
 */
import { assert, describe, it as unit, layer } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, Layer, Schedule, Schema } from "effect"
import * as Apply from "../src/Apply.js"
import * as Semantic from "../src/internal/semantic.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as OwnerReference from "../src/OwnerReference.js"
import * as Resource from "../src/Resource.js"
import {
  countRequests,
  eventually,
  kubeLayer,
  makeEnv,
  onRealCluster,
  type RequestLog,
  waitServed
} from "./support/env.js"
import { WebApp } from "./support/fixtures.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

let counter = 0
const freshNamespace = Effect.gen(function*() {
  const name = `apply-${++counter}`
  yield* KubeClient.create(Resource.Namespace, { metadata: { name } })
  return name
})

const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    // effect 4's Cause is a flat list of reasons: a single Fail reason is what effect 3 called a Fail cause
    const reason = Exit.isFailure(exit) && exit.cause.reasons.length === 1 ? exit.cause.reasons[0] : undefined
    assert(reason !== undefined && Cause.isFailReason(reason), `expected a failure, got ${String(exit)}`)
    return reason.error
  })

/** Write requests (create, replace, patch, delete) the server served since `from`. */
const writes = (log: RequestLog, from: number): number =>
  ["POST ", "PUT ", "PATCH ", "DELETE "].reduce((n, verb) => n + countRequests(log, from, verb), 0)

type Metadata = NonNullable<Resource.ConfigMap["metadata"]>

const cm = (name: string, namespace: string, data?: Record<string, string>): Resource.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  ...(data !== undefined ? { data } : {})
})

/** RFC 7386, as the API server applies a merge patch. */
const applyMergePatch = (target: unknown, patch: unknown): unknown => {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch
  const out: Record<string, unknown> = typeof target === "object" && target !== null && !Array.isArray(target)
    ? { ...target }
    : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = applyMergePatch(out[k], v)
  }
  return out
}

describe("semantic comparison and merge-patch diffs (unit)", () => {
  // effect 4.1 bundles no FastCheck: the same JSON values drawn with effect/Arbitrary (what it.prop runs); a depth
  // bound stands for fast-check's `letrec` with depthSize "small"
  const pick = <const A extends ReadonlyArray<unknown>>(values: A): Arbitrary.Arbitrary<A[number]> =>
    Arbitrary.map(
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: values.length - 1 }))),
      (i) => values[i]
    )
  const dictionary = (keys: ReadonlyArray<string>, value: Arbitrary.Arbitrary<unknown>, maxKeys: number) =>
    Arbitrary.map(
      Arbitrary.array(Arbitrary.all([pick(keys), value]), { maxLength: maxKeys }),
      (entries) => Object.fromEntries(entries)
    )
  const leaf = pick([null, undefined, 0, 1, "", "x", true])
  const value = (depth: number): Arbitrary.Arbitrary<unknown> =>
    depth === 0 ? leaf : Arbitrary.flatMap(pick([0, 1, 2]), (branch): Arbitrary.Arbitrary<unknown> =>
      branch === 0
        ? leaf
        : branch === 1
        ? Arbitrary.array(value(depth - 1), { maxLength: 2 })
        : dictionary(["a", "b", "c"], value(depth - 1), 3))
  const json = dictionary(["a", "b", "c", "d"], value(3), 4)

  unit.prop(
    "applying the diff of (from, to) to from gives to; no diff exactly when equal",
    [json, json],
    ([from, to]) => {
      const patch = Semantic.mergePatch(from, to)
      assert.strictEqual(patch === undefined, Semantic.equal(from, to))
      const patched = patch === undefined ? from : applyMergePatch(Semantic.normalize(from), patch)
      assert.isTrue(Semantic.equal(patched, to))
    }
  )

  unit("absent, null, empty maps and lists are the same; key order does not matter", () => {
    assert.isTrue(Semantic.equal({ a: 1, b: { c: [] }, d: null }, { a: 1, e: {} }))
    assert.isTrue(Semantic.equal({ a: 1, b: 2 }, { b: 2, a: 1 }))
    assert.isFalse(Semantic.equal({ a: [1, 2] }, { a: [2, 1] }))
    assert.isFalse(Semantic.equal({ a: 0 }, {}))
    assert.isFalse(Semantic.equal({ a: "" }, {}))
  })
})

layer(TestLayer)("Apply against TestApiServer", (it) => {
  it.effect("apply: creates, records the field manager, is idempotent, removes fields it stops applying", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const manager = { fieldManager: "webapp-controller" }
      const first = yield* Apply.apply(Resource.ConfigMap, cm("s", ns, { a: "1", b: "2" }), manager)
      assert.deepStrictEqual(first.data, { a: "1", b: "2" })
      const managers = (first.metadata?.managedFields ?? []).map((m) => m.manager)
      assert.include(managers, "webapp-controller")
      const again = yield* Apply.apply(Resource.ConfigMap, cm("s", ns, { a: "1", b: "2" }), manager)
      assert.strictEqual(
        again.metadata?.resourceVersion,
        first.metadata?.resourceVersion,
        "re-applying the same intent changes nothing"
      )
      const dropped = yield* Apply.apply(Resource.ConfigMap, cm("s", ns, { a: "1" }), manager)
      assert.deepStrictEqual(dropped.data, { a: "1" })
    }))

  it.effect("apply: a field another manager owns is a field-manager Conflict unless force", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* Apply.apply(Resource.ConfigMap, cm("s", ns, { mode: "fast" }), { fieldManager: "human" })
      const conflict = yield* failure(
        Apply.apply(Resource.ConfigMap, cm("s", ns, { mode: "safe" }), { fieldManager: "webapp-controller" })
      )
      assert.isTrue(KubeError.isFieldManagerConflict(conflict))
      const forced = yield* Apply.apply(Resource.ConfigMap, cm("s", ns, { mode: "safe" }), {
        fieldManager: "webapp-controller",
        force: true
      })
      assert.strictEqual(forced.data?.mode, "safe")
    }))

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "createOrUpdate: created, then a no-op mutate makes zero writes, then a change is one PUT",
    () =>
      Effect.gen(function*() {
        const ns = yield* freshNamespace
        const setMode = (mode: string) => (c: Resource.ConfigMap): Resource.ConfigMap => ({
          ...c,
          data: { ...c.data, mode }
        })
        let from = env.log.lines.length
        const created = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("s", ns), setMode("fast"))
        assert.strictEqual(created.operation, "created")
        assert.strictEqual(created.object.data?.mode, "fast")
        assert.strictEqual(writes(env.log, from), 1)

        from = env.log.lines.length
        const same = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("s", ns), setMode("fast"))
        assert.strictEqual(same.operation, "unchanged")
        assert.strictEqual(same.object.metadata?.resourceVersion, created.object.metadata?.resourceVersion)
        // semantically equal: empty maps and undefined fields are not changes
        const noise = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("s", ns), (c) => ({
          ...c,
          // an explicit undefined, as a spread of optional fields produces at runtime
          metadata: { ...c.metadata, labels: {}, annotations: undefined } as unknown as Metadata,
          binaryData: {}
        }))
        assert.strictEqual(noise.operation, "unchanged")
        assert.strictEqual(writes(env.log, from), 0)

        from = env.log.lines.length
        const changed = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("s", ns), setMode("safe"))
        assert.strictEqual(changed.operation, "updated")
        assert.strictEqual(changed.object.data?.mode, "safe")
        assert.strictEqual(countRequests(env.log, from, "PUT ", `/namespaces/${ns}/configmaps/s`), 1)
        assert.strictEqual(writes(env.log, from), 1)
      })
  )

  // embedded only: needs the in-memory request log, Faults or store (docs/testkit.md, "On a real control plane")
  it.effect.skipIf(onRealCluster)(
    "createOrPatch: merge-patches only what changed (removals as null); status through /status",
    () =>
      Effect.gen(function*() {
        yield* KubeClient.create(Resource.CustomResourceDefinition, Resource.crdManifest(WebApp)).pipe(
          KubeError.ignoreAlreadyExists
        )
        yield* waitServed(WebApp)
        const ns = yield* freshNamespace
        const base: Resource.Type<typeof WebApp> = {
          apiVersion: WebApp.apiVersion,
          kind: WebApp.kind,
          metadata: { name: "shop", namespace: ns },
          spec: { image: "shop:1", ports: [] }
        }
        let from = env.log.lines.length
        const created = yield* Apply.createOrPatch(WebApp, base, (app) => ({
          ...app,
          spec: { ...app.spec, replicas: 2, mode: "rolling" as const }
        }))
        assert.strictEqual(created.operation, "created")
        assert.strictEqual(writes(env.log, from), 1)

        from = env.log.lines.length
        const same = yield* Apply.createOrPatch(WebApp, base, (app) => app)
        assert.strictEqual(same.operation, "unchanged")
        assert.strictEqual(writes(env.log, from), 0)

        // someone else writes a field we do not touch: a merge patch of our change keeps it
        yield* KubeClient.patch(WebApp, "shop", { metadata: { labels: { team: "x" } } }, {
          type: "merge",
          namespace: ns
        })
        from = env.log.lines.length
        const updated = yield* Apply.createOrPatch(WebApp, base, (app) => {
          const { mode: _, ...spec } = app.spec
          return { ...app, spec: { ...spec, image: "shop:2" }, status: { readyReplicas: 2 } }
        })
        assert.strictEqual(updated.operation, "updated")
        assert.strictEqual(countRequests(env.log, from, "PATCH ", "/webapps/shop "), 1)
        assert.strictEqual(countRequests(env.log, from, "PATCH ", "/webapps/shop/status "), 1)
        assert.strictEqual(writes(env.log, from), 2)
        const live = yield* KubeClient.get(WebApp, "shop", { namespace: ns })
        assert.strictEqual(live.spec.image, "shop:2")
        assert.strictEqual(live.spec.mode, undefined)
        assert.strictEqual(live.spec.replicas, 2)
        assert.strictEqual(live.status?.readyReplicas, 2)
        assert.deepStrictEqual(live.metadata.labels, { team: "x" })
      })
  )

  it.effect("owner references: a controller reference to another owner fails AlreadyOwned, with no write", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const ownerA = yield* KubeClient.create(Resource.ConfigMap, cm("owner-a", ns))
      const ownerB = yield* KubeClient.create(Resource.ConfigMap, cm("owner-b", ns))
      const owned = (owner: Resource.ConfigMap) => (c: Resource.ConfigMap) =>
        OwnerReference.setControllerReference(owner, { ...c, data: { v: "1" } })

      const created = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("child", ns), owned(ownerA))
      assert.strictEqual(created.operation, "created")
      assert.isTrue(OwnerReference.isControlledBy(created.object, ownerA))

      let from = env.log.lines.length
      const again = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("child", ns), owned(ownerA))
      assert.strictEqual(again.operation, "unchanged")

      const error = yield* failure(Apply.createOrPatch(Resource.ConfigMap, cm("child", ns), owned(ownerB)))
      assert(error._tag === "AlreadyOwned")
      assert.strictEqual(error.existing.uid, ownerA.metadata?.uid)
      assert.strictEqual(error.wanted.uid, ownerB.metadata?.uid)
      assert.strictEqual(writes(env.log, from), 0)
      // the typed error can be handled by tag
      const handled = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("child", ns), owned(ownerB)).pipe(
        Effect.catchTag("AlreadyOwned", () => Effect.succeed("skipped" as const))
      )
      assert.strictEqual(handled, "skipped")

      from = env.log.lines.length
      const renamed = yield* failure(
        Apply.createOrUpdate(Resource.ConfigMap, cm("child", ns), (c) => ({
          ...c,
          metadata: { ...c.metadata, name: "other" }
        }))
      )
      assert.strictEqual(renamed._tag, "MutatedKey")
      assert.strictEqual(writes(env.log, from), 0)
    }))

  it.effect("createOrUpdate under retryOnConflict re-reads when another writer got in between", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      yield* KubeClient.create(Resource.ConfigMap, cm("s", ns, { n: "0" }))
      let calls = 0
      const result = yield* Apply.createOrUpdate(Resource.ConfigMap, cm("s", ns), (c) =>
        Effect.gen(function*() {
          calls++
          // the first time, another writer changes the object after our read: our PUT is stale
          if (calls === 1) {
            yield* KubeClient.patch(Resource.ConfigMap, "s", { data: { other: "x" } }, { type: "merge", namespace: ns })
          }
          return { ...c, data: { ...c.data, n: "1" } }
        })).pipe(KubeError.retryOnConflict({ schedule: Schedule.recurs(5) })) // no sleeps: TestClock
      assert.strictEqual(calls, 2)
      assert.strictEqual(result.operation, "updated")
      assert.deepStrictEqual(result.object.data, { n: "1", other: "x" })
    }))

  it.effect("the owner option: every write carries the owner's uid; no uid is InvalidOwner; a vanished owner's child is collected", () =>
    Effect.gen(function*() {
      const ns = yield* freshNamespace
      const owner = yield* KubeClient.create(Resource.ConfigMap, cm("owner", ns))
      const applied = yield* Apply.apply(Resource.ConfigMap, cm("by-apply", ns, { v: "1" }), {
        fieldManager: "webapp-controller",
        owner
      })
      const created = yield* Apply.createOrUpdate(
        Resource.ConfigMap,
        cm("by-update", ns),
        (c) => ({ ...c, data: {} }),
        {
          owner
        }
      )
      const patched = yield* Apply.createOrPatch(Resource.ConfigMap, cm("by-patch", ns), (c) => ({ ...c, data: {} }), {
        owner
      })
      for (const object of [applied, created.object, patched.object]) {
        assert.deepStrictEqual(object.metadata?.ownerReferences, [{
          apiVersion: "v1",
          kind: "ConfigMap",
          name: "owner",
          uid: owner.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true
        }])
      }

      const from = env.log.lines.length
      const noUid = yield* failure(
        Apply.apply(Resource.ConfigMap, cm("x", ns), {
          fieldManager: "m",
          owner: { ...owner, metadata: { name: "o" } }
        })
      )
      assert.strictEqual(noUid._tag, "InvalidOwner")
      assert.strictEqual(writes(env.log, from), 0)

      // a write for an owner deleted meanwhile (a stale cache): the server accepts it, the collector removes it —
      // at once on TestApiServer, within moments on the real one (kube-controller-manager's collector is asynchronous)
      yield* KubeClient.del(Resource.ConfigMap, "owner", { namespace: ns })
      yield* Apply.apply(Resource.ConfigMap, cm("late", ns, { v: "1" }), { fieldManager: "webapp-controller", owner })
      for (const name of ["by-apply", "by-update", "by-patch", "late"]) {
        yield* eventually(
          Effect.gen(function*() {
            const error = yield* failure(KubeClient.get(Resource.ConfigMap, name, { namespace: ns }))
            assert.strictEqual(error._tag, "NotFound", `${name} was collected`)
          }),
          30_000
        )
      }
    }))
})
