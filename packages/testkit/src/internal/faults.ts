/** Fault injection state shared by the in-process cluster and the HTTP server. */
import type * as KubeController from "@reconcile/kube/KubeController"
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import type { Timers } from "./timers.js"

/** A request verb (the one list: `KubeController.Verb`). */
export type Verb = KubeController.Verb

export interface Match {
  readonly verbs?: ReadonlyArray<Verb> | undefined
  /** Plural resource names, optionally qualified by group (`deployments`, `deployments.apps`). */
  readonly resources?: ReadonlyArray<string> | undefined
  readonly namespaces?: ReadonlyArray<string> | undefined
  /** Apply to this many matching requests, then remove the rule. */
  readonly count?: number | undefined
  /** Apply to each matching request with this probability (seeded). */
  readonly probability?: number | undefined
}

/** Which watches a stall or a delay applies to (every given field must match). */
export interface WatchMatch {
  /** Plural resource names, optionally qualified by group (`deployments`, `deployments.apps`). */
  readonly resources?: ReadonlyArray<string> | undefined
  readonly namespaces?: ReadonlyArray<string> | undefined
}

/** What fault injection can do to one open watch; registered by the watch drivers (in-process and HTTP). */
export interface OpenWatch {
  /** Ends the watch abruptly. */
  readonly drop: () => void
  /** Writes a line that is not JSON. */
  readonly garble: () => void
  /** Holds everything (events, bookmarks, the end) for `millis` on the watch's clock; the connection stays open. */
  readonly stall: (millis: number) => void
  readonly rt: ResourceType
  readonly namespace: string | undefined
}

const matchesWatch = (m: WatchMatch, rt: ResourceType, namespace: string | undefined): boolean => {
  if (m.resources !== undefined) {
    const names = [rt.plural, rt.group === "" ? rt.plural : `${rt.plural}.${rt.group}`]
    if (!m.resources.some((r) => names.includes(r))) return false
  }
  return m.namespaces === undefined || (namespace !== undefined && m.namespaces.includes(namespace))
}

/**
 * The pacing of one open watch: items are stamped when the cluster produces
 * them with the time they may go out (now plus the delay rules matching the
 * watch, never before an earlier item: order is kept), and go out at that time
 * or when a stall ends, whichever is later. Times are milliseconds on the
 * watch's clock: Effect's `Clock` in-process (so `TestClock` drives it), the
 * wall clock over HTTP.
 */
export class WatchPace {
  /** Nothing goes out before this time. */
  stalledUntil = 0
  private last = 0

  constructor(
    private readonly faults: FaultState,
    readonly rt: ResourceType,
    readonly namespace: string | undefined
  ) {}

  /** The time an item produced at `now` may go out. */
  stamp(now: number): number {
    const delay = this.faults.watchDelay(this.rt, this.namespace)
    const at = Math.max(delay > 0 ? now + delay : now, this.last)
    this.last = at
    return at
  }

  /** The time the item stamped `at` goes out. */
  releaseAt(at: number): number {
    return Math.max(at, this.stalledUntil)
  }

  /** Holds the watch from `now` for `millis`. */
  stall(now: number, millis: number): void {
    this.stalledUntil = Math.max(this.stalledUntil, now + millis)
  }
}

/**
 * Paces a watch stream on Effect's `Clock` (in-process watches): a fiber reads
 * `self` as fast as it produces, stamping each chunk on arrival, into a queue;
 * the output takes chunk after chunk and waits for its release time. The
 * end or failure of `self` is queued after its chunks, so it is held too.
 */
export const paceStream = <A, E>(self: Stream.Stream<A, E>, pace: WatchPace): Stream.Stream<A, E> =>
  Stream.unwrap(Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const queue = yield* Effect.acquireRelease(
      Queue.unbounded<readonly [number, Arr.NonEmptyReadonlyArray<A>], E | Cause.Done>(),
      Queue.shutdown
    )
    yield* self.pipe(
      Stream.runForEachArray((chunk) => Queue.offer(queue, [pace.stamp(clock.currentTimeMillisUnsafe()), chunk])),
      Effect.matchCauseEffect({
        onFailure: (cause) => Queue.failCause(queue, cause),
        onSuccess: () => Queue.end(queue)
      }),
      Effect.forkScoped
    )
    // a stall that starts while an item waits moves its release: check again after each sleep
    const release = (at: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        const left = pace.releaseAt(at) - clock.currentTimeMillisUnsafe()
        return left <= 0 ? Effect.void : Effect.andThen(Effect.sleep(Duration.millis(left)), release(at))
      })
    return Stream.fromQueue(queue).pipe(
      Stream.mapEffect(([at, chunk]) => Effect.as(release(at), chunk)),
      Stream.flattenArray
    )
  }))

/**
 * Paces writes on the handler's clock (`Timers`: Effect's, live over HTTPS, the caller's in process):
 * `write` runs at once while nothing is held, else in order once each item's
 * release time has come; `end` runs after the items written before it.
 * `cancel` drops what is held.
 */
export const paceWrites = (pace: WatchPace, timers: Timers, write: (line: string) => void, end: () => void) => {
  const held: Array<{ readonly at: number; readonly line: string | undefined }> = []
  let timer: (() => void) | undefined
  const flush = (): void => {
    timer = undefined
    while (held.length > 0) {
      const next = held[0]!
      const wait = pace.releaseAt(next.at) - timers.now()
      if (wait > 0) {
        timer = timers.after(wait, flush)
        return
      }
      held.shift()
      if (next.line === undefined) end()
      else write(next.line)
    }
  }
  const push = (line: string | undefined): void => {
    held.push({ at: pace.stamp(timers.now()), line })
    if (timer === undefined) flush()
  }
  return {
    write: (line: string): void => push(line),
    end: (): void => push(undefined),
    /** Re-plans the held items after a stall started. */
    stall: (millis: number): void => {
      pace.stall(timers.now(), millis)
      timer?.()
      timer = undefined
      flush()
    },
    cancel: (): void => {
      timer?.()
      timer = undefined
      held.length = 0
    }
  }
}

interface Rule {
  readonly id: number
  readonly match: Match
  remaining: number | undefined
  readonly action:
    | {
      readonly _tag: "Fail"
      readonly code: number
      readonly retryAfterSeconds: number | undefined
      readonly message: string | undefined
    }
    | { readonly _tag: "Latency"; readonly millis: number }
}

const reasons: Record<number, ApiError.StatusReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Expired",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout"
}

/** The user named by injected 403s (kube-apiserver names the requester). @internal */
export const faultUser = "system:serviceaccount:default:reconcile"

/** kube-apiserver's message for a request RBAC denies. */
const rbacDenial = (verb: Verb, rt: ResourceType, namespace: string | undefined): string =>
  `${rt.group === "" ? rt.plural : `${rt.plural}.${rt.group}`} is forbidden: User "${faultUser}" cannot ${verb} ` +
  `resource "${rt.plural}" in API group "${rt.group}" ${
    namespace === undefined ? "at the cluster scope" : `in the namespace "${namespace}"`
  }`

/** mulberry32: a small seeded PRNG, so probabilistic faults replay exactly. */
const mulberry32 = (seed: number): () => number => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface Decision {
  readonly latencyMillis: number
  readonly failure: ApiError.ApiError | undefined
}

export class FaultState {
  private rules: Array<Rule> = []
  private nextId = 1
  private random: () => number
  private expire = { list: 0, watch: 0 }
  private dropNext = 0
  private watchDelays: Array<{ readonly id: number; readonly match: WatchMatch; readonly millis: number }> = []
  /** The open watches, registered by the watch drivers. */
  readonly openWatches = new Set<OpenWatch>()

  constructor(seed: number) {
    this.random = mulberry32(seed)
  }

  reseed(seed: number): void {
    this.random = mulberry32(seed)
  }

  reset(): void {
    this.rules = []
    this.watchDelays = []
    this.expire = { list: 0, watch: 0 }
    this.dropNext = 0
  }

  fail(match: Match, code: number, retryAfterSeconds: number | undefined, message: string | undefined): number {
    const id = this.nextId++
    this.rules.push({ id, match, remaining: match.count, action: { _tag: "Fail", code, retryAfterSeconds, message } })
    return id
  }

  latency(match: Match, millis: number): number {
    const id = this.nextId++
    this.rules.push({ id, match, remaining: match.count, action: { _tag: "Latency", millis } })
    return id
  }

  remove(id: number): void {
    this.rules = this.rules.filter((r) => r.id !== id)
    this.watchDelays = this.watchDelays.filter((r) => r.id !== id)
  }

  /** Delays every event of the matching watches (open or opened later) by `millis`, until the rule is removed. */
  delayWatches(match: WatchMatch, millis: number): number {
    const id = this.nextId++
    this.watchDelays.push({ id, match, millis })
    return id
  }

  /** The delay of the events a watch of `rt` in `namespace` produces now. */
  watchDelay(rt: ResourceType, namespace: string | undefined): number {
    let millis = 0
    for (const rule of this.watchDelays) if (matchesWatch(rule.match, rt, namespace)) millis += rule.millis
    return millis
  }

  /** Stalls the matching open watches for `millis`; returns how many. */
  stallWatches(match: WatchMatch, millis: number): number {
    let count = 0
    for (const w of [...this.openWatches]) {
      if (!matchesWatch(match, w.rt, w.namespace)) continue
      w.stall(millis)
      count++
    }
    return count
  }

  expireNext(verb: "list" | "watch", count: number): void {
    this.expire[verb] += count
  }

  takeExpire(verb: "list" | "watch"): boolean {
    if (this.expire[verb] <= 0) return false
    this.expire[verb]--
    return true
  }

  dropNextWatches(count: number): void {
    this.dropNext += count
  }

  takeDrop(): boolean {
    if (this.dropNext <= 0) return false
    this.dropNext--
    return true
  }

  dropAll(): number {
    const all = [...this.openWatches]
    for (const w of all) w.drop()
    return all.length
  }

  garbleAll(): number {
    const all = [...this.openWatches]
    for (const w of all) w.garble()
    return all.length
  }

  /** Decides what happens to a request: consumes counts and random draws in request order. */
  decide(verb: Verb, rt: ResourceType | undefined, namespace: string | undefined): Decision {
    let latencyMillis = 0
    let failure: ApiError.ApiError | undefined
    for (const rule of [...this.rules]) {
      const m = rule.match
      if (m.verbs !== undefined && !m.verbs.includes(verb)) continue
      if (m.resources !== undefined) {
        if (rt === undefined) continue
        const names = [rt.plural, rt.group === "" ? rt.plural : `${rt.plural}.${rt.group}`]
        if (!m.resources.some((r) => names.includes(r))) continue
      }
      if (m.namespaces !== undefined && (namespace === undefined || !m.namespaces.includes(namespace))) continue
      if (m.probability !== undefined && this.random() >= m.probability) continue
      if (rule.action._tag === "Fail" && failure !== undefined) continue
      if (rule.remaining !== undefined) {
        rule.remaining--
        if (rule.remaining <= 0) this.remove(rule.id)
      }
      if (rule.action._tag === "Latency") {
        latencyMillis += rule.action.millis
      } else {
        const { code, retryAfterSeconds, message } = rule.action
        // a 403 without a message reads as kube-apiserver's RBAC denial, with its details
        const forbidden = code === 403 && message === undefined && rt !== undefined
        failure = ApiError.make(
          code,
          reasons[code] ?? "InternalError",
          message ?? (forbidden ? rbacDenial(verb, rt, namespace) : `injected fault: ${code}`),
          retryAfterSeconds !== undefined
            ? { retryAfterSeconds }
            : forbidden
            ? { group: rt.group, kind: rt.plural }
            : undefined
        )
      }
    }
    return { latencyMillis, failure }
  }
}
