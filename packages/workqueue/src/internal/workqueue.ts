import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as Scope from "effect/Scope"
import * as RateLimiter from "../RateLimiter.js"
import type * as Workqueue from "../Workqueue.js"
import { WorkqueueShutdown } from "../WorkqueueError.js"
import { QueueCore } from "./core.js"
import { toDelayMillis } from "./delay.js"
import * as metrics from "./metrics.js"
import { Ring } from "./ring.js"

/**
 * client-go's queue: FIFO ready ring, `dirty` (waiting or re-added while
 * processing) and `processing` sets.
 *
 * @internal
 */
export class FifoQueue extends QueueCore<string> {
  private readonly queue = new Ring<string>()
  /** Keys added since they were last handed out, with the time (ms) of that first add. */
  private readonly dirty = new Map<string, number>()

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return
    this.recordAdd()
    this.dirty.set(key, this.now())
    if (this.processing.has(key)) return
    this.queue.push(key)
    this.notify()
  }

  addAfter(key: string, delayMillis: number): void {
    if (this.shuttingDown) return
    this.metrics.retries.updateUnsafe(1, this.metricsContext)
    if (delayMillis <= 0) return this.add(key)
    this.scheduleAt(key, this.now() + delayMillis)
  }

  protected tryTake(): string | undefined {
    const key = this.queue.shift()
    if (key === undefined) return undefined
    this.recordTake(key, this.dirty.get(key)!)
    this.dirty.delete(key)
    return key
  }

  protected onDelayedReady(key: string): void {
    this.add(key)
  }

  protected afterDone(key: string): void {
    if (this.dirty.has(key)) {
      this.queue.push(key)
      this.notify()
    }
  }

  readyLength(): number {
    return this.queue.length
  }
}

/** How often the in-flight gauges are refreshed, as in client-go. @internal */
export const UNFINISHED_WORK_UPDATE_PERIOD = Duration.millis(500)

const shutdownError = Effect.fail(new WorkqueueShutdown())

/** Forks the queue's background fibers into the scope and shuts it down when the scope closes. @internal */
export const startCore = <T>(core: QueueCore<T>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    yield* Effect.addFinalizer(() => Effect.sync(() => core.shutdown()))
    yield* Effect.forkScoped(core.delayLoop)
    yield* Effect.forkScoped(core.unfinishedWorkLoop(UNFINISHED_WORK_UPDATE_PERIOD))
  })

/** Resolves the options shared by both queue flavours. @internal */
export const resolveOptions = (
  options: Workqueue.Workqueue.Options,
  defaultLimiter: Effect.Effect<RateLimiter.RateLimiter.Service>
) =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const limiter = yield* RateLimiter.resolve(options.rateLimiter, defaultLimiter)
    const queueMetrics = metrics.make(options.name, options.controller ?? options.name)
    const metricsContext = metrics.recordingContext(yield* Metric.MetricRegistry)
    metrics.register(queueMetrics, metricsContext)
    return { clock, limiter, queueMetrics, metricsContext }
  })

/**
 * The operations both queue flavours implement the same way on their core.
 *
 * @internal
 */
export const commonOperations = <T>(core: QueueCore<T>) => ({
  forget: (key: string) => core.limiter.forget(key),
  numRequeues: (key: string) => core.limiter.numRequeues(key),
  done: (key: string) => Effect.sync(() => core.done(key)),
  len: Effect.sync(() => core.readyLength()),
  shutdown: Effect.sync(() => core.shutdown()),
  shutdownWithDrain: Effect.andThen(Effect.sync(() => core.shutdown()), core.awaitDrained),
  isShuttingDown: Effect.sync(() => core.shuttingDown)
})

/** @internal */
export const make = (
  options: Workqueue.Workqueue.Options
): Effect.Effect<Workqueue.Workqueue.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { clock, limiter, metricsContext, queueMetrics } = yield* resolveOptions(
      options,
      RateLimiter.controllerDefault
    )
    const core = new FifoQueue(options.name, clock, limiter, queueMetrics, metricsContext)
    yield* startCore(core)
    const addAfter = (key: string, delay: number) => Effect.sync(() => core.addAfter(key, delay))
    const service: Workqueue.Workqueue.Service = {
      name: options.name,
      add: (key) => Effect.sync(() => core.add(key)),
      addAfter: (key, delay) => addAfter(key, toDelayMillis(delay)),
      addRateLimited: (key) => Effect.flatMap(limiter.when(key), (delay) => addAfter(key, toDelayMillis(delay))),
      take: core.takeEffect(shutdownError),
      ...commonOperations(core)
    }
    return service
  })
