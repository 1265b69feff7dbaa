/**
 * The inspector's recording and its queries (`Inspector`): per controller, a bounded map of key records (the last
 * reconciles and events of each key, least recently seen first), and a global timeline ring. Everything is plain
 * mutable state touched synchronously, from the controllers' workers and sources (recording) and from the API
 * (reading, with the queue's `inspect` and the limiter's counts).
 */
import type { RateLimiter, Workqueue } from "@reconcile/workqueue"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Inspector from "../Inspector.js"
import type * as Api from "./inspectorApi.js"

/** @internal */
export type Outcome = typeof Api.Outcome.Type
type KeyState = typeof Api.KeyState.Type
type SourceState = typeof Api.SourceState.Type

/** A fixed-capacity ring: the last `capacity` values, oldest first when read. */
class Ring<A> {
  private readonly items: Array<A> = []
  private next = 0
  constructor(private readonly capacity: number) {}
  push(value: A): void {
    if (this.capacity <= 0) return
    if (this.items.length < this.capacity) {
      this.items.push(value)
      return
    }
    this.items[this.next] = value
    this.next = (this.next + 1) % this.capacity
  }
  toArray(): Array<A> {
    return this.items.length < this.capacity
      ? this.items.slice()
      : [...this.items.slice(this.next), ...this.items.slice(0, this.next)]
  }
  get length(): number {
    return this.items.length
  }
}

/** One reconcile: completed by `finished`. */
interface ReconcileRecord {
  readonly reconcileID: string
  readonly startedAt: number
  readonly attempt: number
  readonly traceId: string | undefined
  durationMs: number | undefined
  outcome: Outcome | undefined
  message: string | undefined
}

/** What a watch is, shared by all its events' records. @internal */
export interface WatchInfo {
  readonly source: string
  readonly predicates: ReadonlyArray<string>
}

/**
 * One event: its watch, its type, how many predicates were evaluated (they stop at the first that fails: all but the
 * last evaluated passed, the last passed when the event was enqueued).
 */
interface EventRecord {
  readonly at: number
  readonly watch: WatchInfo
  readonly type: string
  readonly evaluated: number
  readonly enqueued: boolean
}

class KeyRecord {
  lastSeen = 0
  /** The records seen just before this one and just after: the controller's, from least to most recently seen. */
  prev: KeyRecord | undefined = undefined
  next: KeyRecord | undefined = undefined
  /** Why its pending delayed add was made, as the last reconcile's outcome says. */
  reason: "requeueAfter" | "backoff" | undefined = undefined
  last: ReconcileRecord | undefined = undefined
  /** The last message kept: a retry storm repeats one error, whose text is then kept once. */
  message: string | undefined = undefined
  readonly reconciles: Ring<ReconcileRecord>
  readonly events: Ring<EventRecord>
  constructor(readonly key: string, history: number, events: number) {
    this.reconciles = new Ring(history)
    this.events = new Ring(events)
  }
}

interface TimelineEntry {
  readonly controller: string
  readonly key: string
  readonly reconcile: ReconcileRecord
}

/** A started reconcile, for `finished`. @internal */
export interface Started {
  readonly record: KeyRecord
  readonly reconcile: ReconcileRecord
}

/** A source as the inspector shows it. @internal */
export type SourceView = SourceState

/**
 * What a controller records into, when an inspector is in its context (internal/controller.ts): a reconcile's start
 * and end, the events of its sources.
 *
 * @internal
 */
export interface Recorder {
  readonly started: (key: string, reconcileID: string, attempt: number, traceId: string | undefined) => Started
  readonly finished: (key: string, started: Started, outcome: Outcome, message: string | undefined) => void
  /** A watch's recorder of events (made once per watch run): the keys an event maps to, and its predicates' verdict. */
  readonly observe: (
    watch: WatchInfo
  ) => (key: string, type: string, evaluated: number, enqueued: boolean) => void
  /** How the controller's sources are read (set once they exist). */
  readonly setSources: (sources: Effect.Effect<ReadonlyArray<SourceView>>) => void
  /** The controller is gone: its records are dropped. */
  readonly unregister: () => void
}

/** What a controller gives the inspector to read. @internal */
export interface Registration {
  readonly name: string
  readonly workers: number
  readonly busy: () => number
  readonly queue: Workqueue.Workqueue.Service
  readonly limiter: RateLimiter.RateLimiter
  readonly clock: Clock.Clock
}

interface ControllerState extends Registration {
  readonly keys: Map<string, KeyRecord>
  /** The least recently seen record, and the most: a list through `prev` / `next` (a Map's order would need a
   * delete and a set per touch, whose tombstones make finding the oldest entry slow). */
  oldest: KeyRecord | undefined
  newest: KeyRecord | undefined
  sources: Effect.Effect<ReadonlyArray<SourceView>>
}

const unlink = (state: ControllerState, record: KeyRecord): void => {
  if (record.prev === undefined) state.oldest = record.next
  else record.prev.next = record.next
  if (record.next === undefined) state.newest = record.prev
  else record.next.prev = record.prev
  record.prev = undefined
  record.next = undefined
}

const append = (state: ControllerState, record: KeyRecord): void => {
  record.prev = state.newest
  record.next = undefined
  if (state.newest === undefined) state.oldest = record
  else state.newest.next = record
  state.newest = record
}

/** Drops the oldest record. */
const dropOldest = (state: ControllerState): void => {
  const oldest = state.oldest!
  unlink(state, oldest)
  state.keys.delete(oldest.key)
}

/** The longest error message kept per reconcile, in characters. */
const maxMessage = 2_000

const defaults = {
  historyPerKey: 20,
  eventsPerKey: 10,
  maxKeys: 10_000,
  keyTtl: Duration.minutes(15),
  timeline: 1_000
}

/** A key's state from the queue's snapshot and its record. */
interface KeyView {
  readonly key: string
  state: KeyState
  priority?: number
  dueAt?: number
  reason?: "requeueAfter" | "backoff"
  inFlightMs?: number
  record?: KeyRecord
}

/** Copies the defined fields only (the Schema's optional keys). */
const defined = <A extends object>(value: A): A => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v
  return out as A
}

/** @internal */
export const make = (options: Inspector.Options = {}): Inspector.Inspector.Service => {
  const historyPerKey = Math.max(0, Math.floor(options.historyPerKey ?? defaults.historyPerKey))
  const eventsPerKey = Math.max(0, Math.floor(options.eventsPerKey ?? defaults.eventsPerKey))
  const maxKeys = Math.max(1, Math.floor(options.maxKeys ?? defaults.maxKeys))
  const keyTtl = Duration.toMillis(
    options.keyTtl === undefined ? defaults.keyTtl : Duration.fromInputUnsafe(options.keyTtl)
  )
  const timeline = new Ring<TimelineEntry>(Math.max(0, Math.floor(options.timeline ?? defaults.timeline)))
  const controllers = new Map<string, ControllerState>()
  let version = 0

  /** The record of `key`, now the most recently seen; keys past `maxKeys` or not seen for `keyTtl` are dropped. */
  const touch = (state: ControllerState, key: string, now: number, existing?: KeyRecord): KeyRecord => {
    const keys = state.keys
    let record = keys.get(key)
    if (record !== undefined) {
      if (record !== state.newest) {
        unlink(state, record)
        append(state, record)
      }
    } else {
      record = existing ?? new KeyRecord(key, historyPerKey, eventsPerKey)
      keys.set(key, record)
      append(state, record)
    }
    record.lastSeen = now
    // the least recently seen first: dropped while there are too many, or they are too old
    while (
      state.oldest !== record && state.oldest !== undefined &&
      (keys.size > maxKeys || now - state.oldest.lastSeen > keyTtl)
    ) dropOldest(state)
    return record
  }

  /** Drops the records not seen for `keyTtl` (reads do it too: a quiet controller's keys expire). */
  const expire = (state: ControllerState, now: number) => {
    while (state.oldest !== undefined && now - state.oldest.lastSeen > keyTtl) dropOldest(state)
  }

  const register = (registration: Registration): Recorder => {
    const state: ControllerState = {
      ...registration,
      keys: new Map(),
      oldest: undefined,
      newest: undefined,
      sources: Effect.succeed([])
    }
    controllers.set(registration.name, state)
    version++
    const now = () => registration.clock.currentTimeMillisUnsafe()
    return {
      started: (key, reconcileID, attempt, traceId) => {
        const at = now()
        const record = touch(state, key, at)
        const reconcile: ReconcileRecord = {
          reconcileID,
          startedAt: at,
          attempt,
          traceId,
          durationMs: undefined,
          outcome: undefined,
          message: undefined
        }
        record.reconciles.push(reconcile)
        record.last = reconcile
        timeline.push({ controller: registration.name, key, reconcile })
        version++
        return { record, reconcile }
      },
      finished: (key, started, outcome, message) => {
        const at = now()
        const { reconcile } = started
        reconcile.durationMs = at - reconcile.startedAt
        reconcile.outcome = outcome
        const record = touch(state, key, at, started.record)
        const kept = message === undefined || message.length <= maxMessage
          ? message
          : `${message.slice(0, maxMessage)}…`
        if (kept !== undefined && kept !== record.message) record.message = kept
        reconcile.message = kept === undefined ? undefined : record.message
        switch (outcome) {
          case "success":
            record.reason = undefined
            break
          case "requeueAfter":
            record.reason = "requeueAfter"
            break
          case "error":
          case "timeout":
          case "panic":
            record.reason = "backoff"
            break
          case "terminal":
            record.reason = undefined
            break
        }
        version++
      },
      observe: (watch) => (key, type, evaluated, enqueued) => {
        const at = now()
        touch(state, key, at).events.push({ at, watch, type, evaluated, enqueued })
        version++
      },
      setSources: (sources) => {
        state.sources = sources
      },
      unregister: () => {
        if (controllers.get(registration.name) === state) {
          controllers.delete(registration.name)
          version++
        }
      }
    }
  }

  /** Every key the queue holds or the records know, with its state (queue order first, then the records). */
  const views = (state: ControllerState, snapshot: Workqueue.Workqueue.Snapshot, now: number): Array<KeyView> => {
    const byKey = new Map<string, KeyView>()
    for (const { key, startedAt } of snapshot.inFlight) {
      byKey.set(key, { key, state: "inFlight", inFlightMs: Math.max(0, now - startedAt) })
    }
    for (const { key, priority } of snapshot.waiting) {
      if (!byKey.has(key)) byKey.set(key, { key, state: "waiting", priority })
    }
    for (const { dueAt, key, priority } of snapshot.delayed) {
      const view = byKey.get(key)
      const reason = state.keys.get(key)?.reason
      if (view === undefined) {
        byKey.set(key, {
          key,
          state: reason === "backoff" ? "failing" : "delayed",
          priority,
          dueAt,
          ...(reason === undefined ? {} : { reason })
        })
      } else {
        view.dueAt = dueAt
        if (reason !== undefined) view.reason = reason
      }
    }
    // the records not in the queue: the most recently seen first
    const rest: Array<KeyView> = []
    for (let record = state.newest; record !== undefined; record = record.prev) {
      const view = byKey.get(record.key)
      if (view !== undefined) {
        view.record = record
      } else {
        rest.push({ key: record.key, state: record.last?.outcome === "terminal" ? "terminal" : "idle", record })
      }
    }
    return [...byKey.values(), ...rest]
  }

  const summary = (view: KeyView, failures: number): typeof Api.KeySummary.Type =>
    defined({
      key: view.key,
      state: view.state,
      priority: view.priority,
      dueAt: view.dueAt,
      reason: view.reason,
      failures,
      inFlightMs: view.inFlightMs,
      lastOutcome: view.record?.last?.outcome,
      lastReconcileAt: view.record?.last?.startedAt
    })

  const reconcileOf = (r: ReconcileRecord): typeof Api.Reconcile.Type =>
    defined({
      reconcileID: r.reconcileID,
      startedAt: r.startedAt,
      durationMs: r.durationMs,
      outcome: r.outcome,
      message: r.message,
      attempt: r.attempt,
      traceId: r.traceId
    })

  const eventOf = (e: EventRecord): typeof Api.KeyEvent.Type => ({
    at: e.at,
    source: e.watch.source,
    type: e.type,
    predicates: e.watch.predicates.slice(0, e.evaluated).map((name, i) => ({
      name,
      passed: i < e.evaluated - 1 || e.enqueued
    })),
    enqueued: e.enqueued
  })

  const controllerOf = (state: ControllerState) =>
    Effect.gen(function*() {
      const snapshot = yield* state.queue.inspect
      const busy = Math.min(state.busy(), state.workers)
      return {
        name: state.name,
        workers: { busy, idle: state.workers - busy },
        queue: {
          depth: snapshot.waiting.length + snapshot.dirty.length,
          waiting: snapshot.waiting.length,
          delayed: snapshot.delayed.length,
          inFlight: snapshot.inFlight.length
        },
        sources: yield* state.sources
      }
    })

  return {
    version: Effect.sync(() => version),
    controllers: Effect.suspend(() => {
      const states = [...controllers.values()].sort((a, b) => a.name.localeCompare(b.name))
      return Effect.map(
        Effect.forEach(states, controllerOf),
        (list): typeof Api.Controllers.Type => ({ version, controllers: list })
      )
    }),
    keys: (controller, query = {}) =>
      Effect.suspend((): Effect.Effect<Option.Option<typeof Api.Keys.Type>> => {
        const state = controllers.get(controller)
        if (state === undefined) return Effect.succeed(Option.none())
        return Effect.gen(function*() {
          const now = state.clock.currentTimeMillisUnsafe()
          expire(state, now)
          const snapshot = yield* state.queue.inspect
          const filter = query.state ?? "all"
          const search = query.search?.toLowerCase() ?? ""
          const matching = views(state, snapshot, now).filter((v) =>
            (filter === "all" || v.state === filter) && (search === "" || v.key.toLowerCase().includes(search))
          )
          const offset = Math.max(0, Math.floor(query.offset ?? 0))
          const limit = Math.min(1_000, Math.max(0, Math.floor(query.limit ?? 100)))
          const page = matching.slice(offset, offset + limit)
          const items = yield* Effect.forEach(page, (view) =>
            Effect.map(state.limiter.numRequeues(view.key), (failures) => summary(view, failures)))
          return Option.some<typeof Api.Keys.Type>({ version, total: matching.length, items })
        })
      }),
    key: (controller, key) =>
      Effect.suspend((): Effect.Effect<Option.Option<typeof Api.Key.Type>> => {
        const state = controllers.get(controller)
        if (state === undefined) return Effect.succeed(Option.none())
        return Effect.gen(function*() {
          const now = state.clock.currentTimeMillisUnsafe()
          expire(state, now)
          const snapshot = yield* state.queue.inspect
          const view = views(state, snapshot, now).find((v) => v.key === key)
          if (view === undefined) return Option.none()
          const failures = yield* state.limiter.numRequeues(key)
          return Option.some<typeof Api.Key.Type>(defined({
            version,
            key,
            state: view.state,
            priority: view.priority,
            dueAt: view.dueAt,
            reason: view.reason,
            inFlightMs: view.inFlightMs,
            limiter: { failures },
            reconciles: view.record?.reconciles.toArray().map(reconcileOf) ?? [],
            events: view.record?.events.toArray().map(eventOf) ?? []
          }))
        })
      }),
    timeline: (query = {}) =>
      Effect.sync((): typeof Api.Timeline.Type => {
        const since = query.since ?? 0
        const limit = Math.min(5_000, Math.max(0, Math.floor(query.limit ?? 500)))
        const matching = timeline.toArray().filter(({ reconcile: r }) =>
          r.startedAt >= since || r.durationMs === undefined || r.startedAt + r.durationMs >= since
        )
        const items = matching.slice(Math.max(0, matching.length - limit)).map(({ controller, key, reconcile: r }) =>
          defined({
            controller,
            key,
            reconcileID: r.reconcileID,
            startedAt: r.startedAt,
            durationMs: r.durationMs,
            outcome: r.outcome
          })
        )
        return { version, items }
      }),
    register
  }
}
