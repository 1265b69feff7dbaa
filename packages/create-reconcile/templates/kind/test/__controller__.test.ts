/**
 * The __Kind__ controller in-process: TestKube (an in-memory API server with
 * real semantics: generation, status subresource, finalizers, garbage
 * collection, server-side apply) and TestClock, so each test runs in
 * milliseconds and time is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import { LeaderElection, Manager } from "@reconcile/core"
import { Cache, KubeClient, Resource } from "@reconcile/kube"
import { TestKube } from "@reconcile/testkit"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { __Kind__ } from "../src/__Kind__.js"
import * as Controller from "../src/__controller__.js"

/** Lets the controller react to a write (watch → cache → queue → reconcile) without moving time. */
const settle = TestKube.settle
/** Moves virtual time, letting everything due run. */
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))

/** A fresh in-memory cluster with the CRD installed, and the controller running on it. */
const cluster = () =>
  Controller.layer.pipe(
    Layer.provide(Manager.layer()),
    Layer.provide(LeaderElection.layerAlwaysLeader),
    Layer.provide(Cache.layer()),
    Layer.provideMerge(Layer.effectDiscard(
      KubeClient.patch(
        Resource.CustomResourceDefinition,
        `${__Kind__.plural}.${__Kind__.group}`,
        Resource.crdManifest(__Kind__),
        { type: "apply", fieldManager: "test" }
      ).pipe(Effect.orDie)
    )),
    Layer.provideMerge(TestKube.layerWithCluster())
  )

const make = (name: string, message: string) => ({
  apiVersion: __Kind__.apiVersion,
  kind: __Kind__.kind,
  metadata: { name, namespace: "default" },
  spec: { message }
})

const get = (name: string) => KubeClient.get(__Kind__, name, { namespace: "default" })
const configMap = (name: string) =>
  KubeClient.get(Resource.ConfigMap, `${name}-__lower__`, { namespace: "default" }).pipe(Effect.option)
const ready = (object: __Kind__) => object.status?.conditions?.find((c) => c.type === "Ready")
/** The reasons of the events about the __Kind__ `name`. */
const eventReasons = (name: string) =>
  Effect.map(
    KubeClient.list(Resource.EventsV1Event, { namespace: "default" }),
    (list) =>
      list.items.filter((e) => e.regarding?.kind === __Kind__.kind && e.regarding?.name === name).map((e) => e.reason)
  )

describe("__Kind__ controller", () => {
  it.effect("applies an owned ConfigMap, then reports Ready with the generation it saw", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(cluster())
      yield* Effect.gen(function*() {
        yield* KubeClient.create(__Kind__, make("hello", "hi"))
        yield* settle
        const cm = yield* configMap("hello")
        assert.isTrue(Option.isSome(cm))
        const owned = Option.getOrThrow(cm)
        assert.strictEqual(owned.data?.message, "hi")
        assert.strictEqual(owned.metadata?.ownerReferences?.[0]?.kind, __Kind__.kind)
        assert.isTrue(owned.metadata?.ownerReferences?.[0]?.controller)
        const object = yield* get("hello")
        assert.strictEqual(ready(object)?.status, "True")
        assert.strictEqual(ready(object)?.observedGeneration, object.metadata.generation)
        assert.include(object.metadata.finalizers ?? [], Controller.finalizerName)
        assert.deepStrictEqual(yield* eventReasons("hello"), ["Ready"])
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("an edit updates the ConfigMap; a deleted ConfigMap is repaired (owns)", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(cluster())
      yield* Effect.gen(function*() {
        yield* KubeClient.create(__Kind__, make("hello", "hi"))
        yield* settle
        yield* KubeClient.patch(__Kind__, "hello", { spec: { message: "bonjour" } }, {
          type: "merge",
          namespace: "default"
        })
        yield* settle
        assert.strictEqual(Option.getOrThrow(yield* configMap("hello")).data?.message, "bonjour")
        yield* KubeClient.del(Resource.ConfigMap, "hello-__lower__", { namespace: "default" })
        yield* settle
        assert.strictEqual(Option.getOrThrow(yield* configMap("hello")).data?.message, "bonjour")
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("a blank message is Terminal: Ready=False says why, one Warning event; the fix reconciles", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(cluster())
      yield* Effect.gen(function*() {
        yield* KubeClient.create(__Kind__, make("blank", "   "))
        yield* advance(60_000) // Terminal: not retried, however long we wait
        const object = yield* get("blank")
        assert.strictEqual(ready(object)?.status, "False")
        assert.strictEqual(ready(object)?.reason, "InvalidSpec")
        assert.isTrue(Option.isNone(yield* configMap("blank")))
        assert.deepStrictEqual(yield* eventReasons("blank"), ["InvalidSpec"])
        yield* KubeClient.patch(__Kind__, "blank", { spec: { message: "fixed" } }, {
          type: "merge",
          namespace: "default"
        })
        yield* settle
        assert.strictEqual(ready(yield* get("blank"))?.status, "True")
      }).pipe(Effect.provide(ctx))
    }))

  it.effect("deleting runs the cleanup, removes the finalizer, and the ConfigMap is garbage-collected", () =>
    Effect.gen(function*() {
      const ctx = yield* Layer.build(cluster())
      yield* Effect.gen(function*() {
        yield* KubeClient.create(__Kind__, make("bye", "ciao"))
        yield* settle
        yield* KubeClient.del(__Kind__, "bye", { namespace: "default" })
        yield* settle
        assert.isTrue(Option.isNone(yield* Effect.option(get("bye"))))
        assert.isTrue(Option.isNone(yield* configMap("bye")))
        assert.include(yield* eventReasons("bye"), "CleanedUp")
      }).pipe(Effect.provide(ctx))
    }))
})
