/** Fault injection state shared by the in-process cluster and the HTTP server. */
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection"

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
  /** Callbacks that end an open watch abruptly, registered by the watch drivers. */
  readonly openWatches = new Set<{ readonly drop: () => void; readonly garble: () => void }>()

  constructor(seed: number) {
    this.random = mulberry32(seed)
  }

  reseed(seed: number): void {
    this.random = mulberry32(seed)
  }

  reset(): void {
    this.rules = []
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
        failure = ApiError.make(
          code,
          reasons[code] ?? "InternalError",
          message ?? `injected fault: ${code}`,
          retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined
        )
      }
    }
    return { latencyMillis, failure }
  }
}
