/**
 * A property of the __Kind__ controller: whatever sequence of edits,
 * ConfigMap deletions, deletions and waits happens, the cluster converges —
 * the ConfigMap holds the last message and the __Kind__ is Ready for its
 * current generation, or, after a deletion, both are gone. The generators are
 * effect Schemas (`Arbitrary.schema`).
 */
import { assert, describe, it } from "@effect/vitest"
import { LeaderElection, Manager } from "@reconcile/core"
import { Cache, KubeClient, Resource } from "@reconcile/kube"
import { TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { __Kind__ } from "../src/__Kind__.js"
import * as Controller from "../src/__controller__.js"

const settle = TestKube.settle
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))

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

const Step = Schema.Union([
  Schema.Struct({ op: Schema.Literal("edit"), message: Schema.Literals(["hi", "hello", "bonjour", "hallo"]) }),
  Schema.Struct({ op: Schema.Literal("deleteConfigMap") }),
  Schema.Struct({ op: Schema.Literal("delete") }),
  Schema.Struct({
    op: Schema.Literal("wait"),
    millis: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5_000 }))
  })
])

const object = (message: string) => ({
  apiVersion: __Kind__.apiVersion,
  kind: __Kind__.kind,
  metadata: { name: "prop", namespace: "default" },
  spec: { message }
})

describe("__Kind__ controller (property)", () => {
  it.effect.prop(
    "random edits, ConfigMap deletions and deletions converge to the last spec",
    [Arbitrary.array(Arbitrary.schema(Step), { minLength: 1, maxLength: 10 })],
    ([steps]) =>
      Effect.gen(function*() {
        const ctx = yield* Layer.build(cluster())
        yield* Effect.gen(function*() {
          let last: string | undefined
          for (const step of steps) {
            if (step.op === "edit") {
              yield* KubeClient.patch(__Kind__, "prop", object(step.message), {
                type: "apply",
                namespace: "default",
                fieldManager: "user",
                force: true
              })
              last = step.message
            } else if (step.op === "deleteConfigMap") {
              yield* KubeClient.del(Resource.ConfigMap, "prop-__lower__", { namespace: "default" }).pipe(Effect.ignore)
            } else if (step.op === "delete") {
              yield* KubeClient.del(__Kind__, "prop", { namespace: "default" }).pipe(Effect.ignore)
              // the deletion completes once the cleanup ran and the finalizer is gone
              yield* advance(1_000)
              last = undefined
            } else {
              yield* advance(step.millis)
            }
            yield* settle
          }
          yield* advance(10_000)
          const current = yield* KubeClient.get(__Kind__, "prop", { namespace: "default" }).pipe(Effect.option)
          const cm = yield* KubeClient.get(Resource.ConfigMap, "prop-__lower__", { namespace: "default" }).pipe(
            Effect.option
          )
          if (last === undefined) {
            assert.isTrue(Option.isNone(current), "the __Kind__ is gone")
            assert.isTrue(Option.isNone(cm), "its ConfigMap is garbage-collected")
          } else {
            const live = Option.getOrThrow(current)
            const ready = live.status?.conditions?.find((c) => c.type === "Ready")
            assert.strictEqual(Option.getOrThrow(cm).data?.message, last)
            assert.strictEqual(ready?.status, "True")
            assert.strictEqual(ready?.observedGeneration, live.metadata.generation)
          }
        }).pipe(Effect.provide(ctx))
      }),
    { timeout: 60_000, arbitrary: { runs: 20 } }
  )
})
