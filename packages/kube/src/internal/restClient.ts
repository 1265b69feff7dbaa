import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type * as RestClient from "../RestClient.js"

/** @internal */
export const defaultQps = 20

/** @internal */
export const defaultBurst = 30

/** @internal */
export const names = {
  requestsTotal: "rest_client_requests_total",
  requestDuration: "rest_client_request_duration_seconds"
} as const

/** component-base's (and controller-runtime's) rest_client latency buckets, in seconds, then +Inf. @internal */
export const durationBoundaries: ReadonlyArray<number> = Metric.boundariesFromIterable([
  0.005,
  0.025,
  0.1,
  0.25,
  0.5,
  1,
  2,
  4,
  8,
  15,
  30,
  60
])

interface Reservation {
  /** When the reserved token may be used (ms on Effect's Clock). */
  readonly at: number
}

/**
 * A token bucket with golang.org/x/time/rate's reservation semantics (what client-go's `NewTokenBucketRateLimiter`
 * wraps): full at start; each taker reserves a token at once (the count may go negative) and sleeps until its
 * token has accrued. Reservations are made in call order, so waiters are served first come, first served. A taker
 * interrupted while it waits gives back the part of its token that no later reservation has claimed.
 *
 * @internal
 */
export const makeTokenBucket = (options: RestClient.RateLimit): RestClient.TokenBucket => {
  const qps = options.qps ?? defaultQps
  const burst = Math.max(1, Math.floor(options.burst ?? defaultBurst))
  if (!(qps > 0) || !Number.isFinite(qps)) throw new RangeError(`rate limit qps must be a positive number, got ${qps}`)
  const perMillis = qps / 1000
  let tokens = burst
  let last = -Infinity
  /** The time the newest reservation may act. */
  let lastEvent = -Infinity

  const advance = (now: number) => {
    if (last === -Infinity) {
      last = now
      return
    }
    if (now > last) {
      tokens = Math.min(burst, tokens + (now - last) * perMillis)
      last = now
    }
  }

  const reserve = (now: number): Reservation => {
    advance(now)
    tokens -= 1
    const at = tokens >= 0 ? now : now + -tokens / perMillis
    lastEvent = Math.max(lastEvent, at)
    return { at }
  }

  const cancel = (reservation: Reservation, now: number) => {
    if (reservation.at <= now) return
    // later reservations were computed with this token spent: only what they have not claimed comes back
    const restore = 1 - (lastEvent - reservation.at) * perMillis
    if (restore <= 0) return
    advance(now)
    tokens = Math.min(burst, tokens + restore)
    if (reservation.at === lastEvent) {
      const previous = reservation.at - 1 / perMillis
      if (previous >= now) lastEvent = previous
    }
  }

  const take: Effect.Effect<void> = Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const reservation = reserve(now)
      const wait = reservation.at - now
      if (wait <= 0) return Effect.void
      return restore(Effect.sleep(Duration.millis(wait))).pipe(
        Effect.onInterrupt(() =>
          Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sync(() => cancel(reservation, at)))
        )
      )
    })
  )

  return {
    qps,
    burst,
    take,
    available: Effect.map(Clock.currentTimeMillis, (now) => {
      advance(now)
      return tokens
    })
  }
}

/**
 * The bucket of `Kube.Options.rateLimit`: none when unset, `false`, or with a `qps` ≤ 0 (client-go's `QPS: -1`).
 *
 * @internal
 */
export const bucketFor = (rateLimit: RestClient.RateLimit | false | undefined): RestClient.TokenBucket | undefined =>
  rateLimit === undefined || rateLimit === false || (rateLimit.qps !== undefined && rateLimit.qps <= 0)
    ? undefined
    : makeTokenBucket(rateLimit)

/** The `rest_client_*` metrics of one API server `host`, series made on first use. @internal */
export interface Metrics {
  /** Counts one attempt by its answer: the HTTP status code, or `<error>` when no answer came. */
  readonly countAttempt: (method: string) => <A extends { readonly status: number }, E, R>(
    attempt: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  /** Observes the whole call (rate-limit waits and retries included), as client-go's `request()` does. */
  readonly timeRequest: (verb: string) => <A, E, R>(request: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** @internal */
export const makeMetrics = (host: string): Metrics => {
  const counters = new Map<string, Metric.Counter<number>>()
  const histograms = new Map<string, Metric.Histogram<number>>()
  const counter = (code: string, method: string) => {
    const key = `${code} ${method}`
    let metric = counters.get(key)
    if (metric === undefined) {
      // client-go's label order: code, method, host
      metric = Metric.counter(names.requestsTotal, {
        description: "Number of HTTP requests, partitioned by status code, method, and host.",
        attributes: { code, method, host },
        incremental: true
      })
      counters.set(key, metric)
    }
    return metric
  }
  const histogram = (verb: string) => {
    let metric = histograms.get(verb)
    if (metric === undefined) {
      metric = Metric.histogram(names.requestDuration, {
        description: "Request latency in seconds. Broken down by verb and host.",
        boundaries: durationBoundaries,
        attributes: { verb, host }
      })
      histograms.set(verb, metric)
    }
    return metric
  }
  return {
    countAttempt: (method) => (attempt) =>
      Effect.onExit(
        attempt,
        (exit) => Metric.update(counter(Exit.isSuccess(exit) ? String(exit.value.status) : "<error>", method), 1)
      ),
    timeRequest: (verb) => (request) =>
      Effect.flatMap(Clock.currentTimeMillis, (start) =>
        Effect.onExit(request, () =>
          Effect.flatMap(
            Clock.currentTimeMillis,
            (end) => Metric.update(histogram(verb), Math.max(0, end - start) / 1000)
          )))
  }
}

/** The `host` label: the server URL's `host:port`, as client-go's `base.Host`. @internal */
export const hostOf = (server: string): string => {
  try {
    return new URL(server).host
  } catch {
    return "none"
  }
}
