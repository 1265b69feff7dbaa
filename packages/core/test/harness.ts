/**
 * A small harness for controller tests: a channel source of plain objects, a
 * recording reconcile, and helpers to drive virtual time.
 */
import { Duration, Effect, Layer, Metric } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../src/Controller.js"
import * as ControllerMetrics from "../src/ControllerMetrics.js"
import * as Event from "../src/Event.js"
import * as Handler from "../src/Handler.js"
import * as LeaderElection from "../src/LeaderElection.js"
import * as Manager from "../src/Manager.js"
import type * as Reconcile from "../src/Reconcile.js"
import type * as Request from "../src/Request.js"
import * as Source from "../src/Source.js"

export interface Obj {
  readonly metadata: { readonly name: string; readonly namespace: string }
}

export const obj = (name: string): Obj => ({ metadata: { name, namespace: "default" } })

let counter = 0
/** A fresh controller name, so that global metrics do not mix between tests. */
export const uniqueName = (prefix: string) => `${prefix}-${++counter}`

/** Lets every fiber run until all are suspended, without moving time. */
export const settle = TestClock.adjust(0)

/** Moves virtual time forward, letting every woken fiber run. */
export const advance = (millis: number) => Effect.andThen(TestClock.adjust(Duration.millis(millis)), settle)

/** The Manager controllers run under in tests: no endpoint, always the leader. */
export const TestManager = Manager.layer().pipe(Layer.provide(LeaderElection.layerAlwaysLeader), Layer.orDie)

/** A Manager without endpoints whose replica follows `election` (e.g. `LeaderElection.manual()`'s). */
export const managerWith = (election: LeaderElection.LeaderElection.Service) =>
  Manager.layer().pipe(Layer.provide(Layer.succeed(LeaderElection.LeaderElection, election)), Layer.orDie)

/** Starts a controller watching a channel of `Obj`s in the current scope, under the Manager `manager`. */
const startUnder = <R>(
  manager: Layer.Layer<Manager.Manager>,
  reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>,
  options: Controller.Options,
  name: string
) =>
  Effect.gen(function*() {
    const channel = yield* Source.channel<Obj>("objects")
    const controller = yield* Controller.make({
      name,
      watches: [Controller.watch(channel.source, Handler.forObject)],
      reconcile,
      options
    }).pipe(Effect.provide(manager))
    const send = (n: string) => Effect.andThen(channel.offer(Event.create(obj(n))), settle)
    return { controller, channel, send, name }
  })

/** Starts a controller watching a channel of `Obj`s in the current scope, under a {@link TestManager}. */
export const start = <R>(
  reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>,
  options: Controller.Options = {},
  name = uniqueName("test")
) => startUnder(TestManager, reconcile, options, name)

/** {@link start} on a replica that follows `election` ({@link managerWith}). */
export const startElected = <R>(
  election: LeaderElection.LeaderElection.Service,
  reconcile: (request: Request.Request) => Effect.Effect<void, Reconcile.Outcome, R>,
  options: Controller.Options = {},
  name = uniqueName("test")
) => startUnder(managerWith(election), reconcile, options, name)

/** Reads a counter of `controller_runtime_*` for `controller`. */
export const counterValue = (
  controller: string,
  pick: (metrics: ControllerMetrics.ControllerMetrics) => Metric.Counter<number>
) => Effect.map(Metric.value(pick(ControllerMetrics.forController(controller))), (state) => state.count)

/** Reads a gauge of `controller_runtime_*` for `controller`. */
export const gaugeValue = (
  controller: string,
  pick: (metrics: ControllerMetrics.ControllerMetrics) => Metric.Gauge<number>
) => Effect.map(Metric.value(pick(ControllerMetrics.forController(controller))), (state) => state.value)
