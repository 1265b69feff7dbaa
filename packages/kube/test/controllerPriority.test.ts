/**
 * KubeController priorities, in-process on the TestClock (TestKube): `forPriority`, `KubeController.owns(resource,
 * { priority })` and a `watches` entry's `priority` order the controller's priority queue through the core's rule
 * (handler priority, else the default: initial list and resyncs at `LowPriority`). A FIFO queue ignores them.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Controller from "@reconcile/core/Controller"
import * as Handler from "@reconcile/core/Handler"
import * as Request from "@reconcile/core/Request"
import { TestKube } from "@reconcile/testkit"
import { Workqueue } from "@reconcile/workqueue"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as Cache from "../src/Cache.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import { TestManager } from "./support/manager.js"

const namespace = "default"
const settle = TestKube.settle
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))
const Env = Cache.layer().pipe(Layer.provideMerge(TestKube.layerWithCluster()))

type Entries = Pick<KubeController.Config<Resource.ConfigMap, never, never, never>, "forPriority" | "owns" | "watches">

/**
 * A ConfigMap controller with one worker whose reconcile records `name@ms` (`blocker` takes 1 s). While `blocker`
 * holds the worker, ConfigMaps `a` then `b` are created, then a Secret controlled by `b` and a Service named `b`:
 * what runs first after `blocker` is what the priorities say.
 */
const scenario = (queue: Controller.Options["queue"], entries: Entries) =>
  Effect.gen(function*() {
    const log: Array<string> = []
    yield* KubeController.make({
      name: "priority-configmaps",
      for: Resource.ConfigMap,
      selection: { namespace },
      ...entries,
      reconcileRequest: (req) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          log.push(`${Request.key(req)}@${now}`)
          return req.name === "blocker" ? Effect.sleep("1 second") : Effect.void
        }),
      options: { queue, maxConcurrentReconciles: 1, gracefulShutdownTimeout: 0 }
    }).pipe(KubeController.start, Effect.provide(TestManager))
    yield* settle
    const configMap = (name: string) => KubeClient.create(Resource.ConfigMap, { metadata: { name, namespace } })
    yield* configMap("blocker")
    yield* advance(100)
    yield* configMap("a")
    const b = yield* configMap("b")
    yield* settle
    const owner = { apiVersion: "v1", kind: "ConfigMap", name: "b", uid: b.metadata!.uid!, controller: true }
    yield* KubeClient.create(Resource.Secret, { metadata: { name: "b-secret", namespace, ownerReferences: [owner] } })
    yield* KubeClient.create(Resource.Service, { metadata: { name: "b", namespace }, spec: { ports: [{ port: 80 }] } })
    yield* advance(1_000)
    return log
  }).pipe(Effect.provide(Env))

const blockerThen = (...rest: ReadonlyArray<string>) => ["default/blocker@0", ...rest.map((k) => `default/${k}@1000`)]

/** Services map to the ConfigMap of the same name. */
const services = (priority?: number) =>
  KubeController.watches({
    resource: Resource.Service,
    map: (svc) => Effect.succeed([Request.make(svc.metadata!.name!, svc.metadata!.namespace)]),
    priority
  })

describe("KubeController priorities (queue: Workqueue.priority)", () => {
  it.effect("an owned object's change enqueues its owner at the `owns` entry's priority: b before a", () =>
    Effect.gen(function*() {
      const log = yield* scenario(Workqueue.priority, {
        owns: [KubeController.owns(Resource.Secret, { priority: 10 })]
      })
      assert.deepStrictEqual(log, blockerThen("b", "a"))
    }))

  it.effect("without a priority (a plain Resource in owns) the keys keep their order: a before b", () =>
    Effect.gen(function*() {
      const log = yield* scenario(Workqueue.priority, { owns: [Resource.Secret], watches: [services()] })
      assert.deepStrictEqual(log, blockerThen("a", "b"))
    }))

  it.effect("a FIFO queue ignores the priority", () =>
    Effect.gen(function*() {
      const log = yield* scenario(Workqueue.fifo, { owns: [KubeController.owns(Resource.Secret, { priority: 10 })] })
      assert.deepStrictEqual(log, blockerThen("a", "b"))
    }))

  it.effect("a watches entry's priority", () =>
    Effect.gen(function*() {
      const log = yield* scenario(Workqueue.priority, { watches: [services(10)] })
      assert.deepStrictEqual(log, blockerThen("b", "a"))
    }))

  it.effect("forPriority: a rule per event (undefined: the default)", () =>
    Effect.gen(function*() {
      const log = yield* scenario(Workqueue.priority, {
        forPriority: (event) => event.object.metadata?.name === "b" ? 5 : undefined
      })
      assert.deepStrictEqual(log, blockerThen("b", "a"))
    }))

  it.effect("an owns rule below the default sends its owner behind: a LowPriority owner change does not raise b", () =>
    Effect.gen(function*() {
      // b is queued at 0 by its own creation; an add at a lower priority leaves it there (the queue keeps the max)
      const log = yield* scenario(Workqueue.priority, {
        owns: [KubeController.owns(Resource.Secret, { priority: () => Handler.LowPriority })]
      })
      assert.deepStrictEqual(log, blockerThen("a", "b"))
    }))
})
