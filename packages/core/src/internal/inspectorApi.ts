/**
 * The inspector's JSON API: the Schema of every answer of `InspectorServer` (`Inspector.Api`). Times are epoch
 * milliseconds on the controllers' `Clock`; durations are milliseconds. Every answer but an error carries `version`,
 * the inspector's change counter (see `Inspector.Service.version`).
 */
import * as Schema from "effect/Schema"

/**
 * A key's state. `waiting`: ready to be taken; `delayed`: a delayed add is pending (a `RequeueAfter`, or a retry
 * whose reason is not known); `failing`: delayed by a rate-limited retry after failures; `inFlight`: being
 * reconciled; `terminal`: its last reconcile ended `Terminal` and it is not queued (it waits for the next event);
 * `idle`: none of these (recorded history only).
 */
export const KeyState = Schema.Literals(["waiting", "delayed", "inFlight", "failing", "terminal", "idle"])

/** Why a key is delayed: a `RequeueAfter` of its reconcile, or a backoff retry after failures. */
export const DelayReason = Schema.Literals(["requeueAfter", "backoff"])

/** A reconcile's outcome, as the span's `outcome` attribute and the log name it. */
export const Outcome = Schema.Literals([
  "success",
  "requeueAfter",
  "error",
  "terminal",
  "timeout",
  "panic",
  "interrupted"
])

/** A source's connection: `unknown` before it starts. `since`: when it last heard from its server (disconnected). */
export const SourceState = Schema.Struct({
  name: Schema.String,
  state: Schema.Literals(["connected", "disconnected", "unknown"]),
  since: Schema.optional(Schema.Number)
})

/** One controller: its workers, its queue's counts, its sources. */
export const Controller = Schema.Struct({
  name: Schema.String,
  workers: Schema.Struct({ busy: Schema.Int, idle: Schema.Int }),
  /**
   * `depth`: as `workqueue_depth` (keys waiting, and keys in flight that were added again); `waiting`: keys ready to
   * be taken; `delayed`: keys with a pending delayed add; `inFlight`: keys being reconciled.
   */
  queue: Schema.Struct({ depth: Schema.Int, waiting: Schema.Int, delayed: Schema.Int, inFlight: Schema.Int }),
  sources: Schema.Array(SourceState)
})

/** `GET /api/controllers`. */
export const Controllers = Schema.Struct({
  version: Schema.Int,
  controllers: Schema.Array(Controller)
})

/** A key in a list: its state, and what decides when it runs next. */
export const KeySummary = Schema.Struct({
  key: Schema.String,
  state: KeyState,
  /** The priority it waits at (a priority queue; 0 in a FIFO queue). */
  priority: Schema.optional(Schema.Number),
  /** When its pending delayed add fires. */
  dueAt: Schema.optional(Schema.Number),
  reason: Schema.optional(DelayReason),
  /** The rate limiter's failure count of the key. */
  failures: Schema.Int,
  /** How long its reconcile in progress has run. */
  inFlightMs: Schema.optional(Schema.Number),
  lastOutcome: Schema.optional(Outcome),
  lastReconcileAt: Schema.optional(Schema.Number)
})

/** `GET /api/controllers/:controller/keys`: one page of the keys that match, and how many match. */
export const Keys = Schema.Struct({
  version: Schema.Int,
  total: Schema.Int,
  items: Schema.Array(KeySummary)
})

/** One reconcile of a key. `durationMs` and `outcome` are absent while it runs; `message`: its error, redacted. */
export const Reconcile = Schema.Struct({
  reconcileID: Schema.String,
  startedAt: Schema.Number,
  durationMs: Schema.optional(Schema.Number),
  outcome: Schema.optional(Outcome),
  message: Schema.optional(Schema.String),
  /** The rate limiter's failures of the key when it started, plus one. */
  attempt: Schema.Int,
  /** The reconcile span's trace ID, when tracing is on. */
  traceId: Schema.optional(Schema.String)
})

/** A predicate's verdict on an event; predicates after the first that failed are not evaluated (nor listed). */
export const PredicateResult = Schema.Struct({ name: Schema.String, passed: Schema.Boolean })

/** An event of a source that maps to the key: whether its predicates let it through to the queue. */
export const KeyEvent = Schema.Struct({
  at: Schema.Number,
  source: Schema.String,
  /** `Create`, `Update`, `Delete` or `Generic`. */
  type: Schema.String,
  predicates: Schema.Array(PredicateResult),
  enqueued: Schema.Boolean
})

/** `GET /api/controllers/:controller/keys/:key`: the key's state, its last reconciles and events (oldest first). */
export const Key = Schema.Struct({
  version: Schema.Int,
  key: Schema.String,
  state: KeyState,
  priority: Schema.optional(Schema.Number),
  dueAt: Schema.optional(Schema.Number),
  reason: Schema.optional(DelayReason),
  inFlightMs: Schema.optional(Schema.Number),
  limiter: Schema.Struct({ failures: Schema.Int }),
  reconciles: Schema.Array(Reconcile),
  events: Schema.Array(KeyEvent)
})

/** A reconcile on the timeline. */
export const TimelineItem = Schema.Struct({
  controller: Schema.String,
  key: Schema.String,
  reconcileID: Schema.String,
  startedAt: Schema.Number,
  durationMs: Schema.optional(Schema.Number),
  outcome: Schema.optional(Outcome)
})

/** `GET /api/timeline`: recent reconciles across controllers and keys, in start order (newest last). */
export const Timeline = Schema.Struct({
  version: Schema.Int,
  items: Schema.Array(TimelineItem)
})

/** A refusal: `404` (unknown controller, key or path), `400` (a bad query), `403` (not a loopback client). */
export const ErrorBody = Schema.Struct({ error: Schema.String })

/** The `state` filter of a key list: a {@link KeyState}, or `all`. */
export const StateFilter = Schema.Literals(["all", "waiting", "delayed", "inFlight", "failing", "terminal", "idle"])

/** The query of a key list. */
export interface KeysQuery {
  readonly state?: typeof StateFilter.Type | undefined
  /** A substring of the key (case-insensitive). */
  readonly search?: string | undefined
  readonly offset?: number | undefined
  /** At most 1,000; default 100. */
  readonly limit?: number | undefined
}

/** The query of the timeline. */
export interface TimelineQuery {
  /** Reconciles running at or after this time (epoch ms): started then, or not finished before. */
  readonly since?: number | undefined
  /** At most 5,000; default 500: the newest that match. */
  readonly limit?: number | undefined
}
