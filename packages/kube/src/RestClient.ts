/**
 * client-go's REST client behaviours of a {@link Kube.Kube} connection: the
 * client-side rate limit (a token bucket) and the `rest_client_*` metrics.
 *
 * **Rate limit.** `Kube.Options.rateLimit` turns on a token bucket shared by
 * every request of the connection (and so of the `KubeClient`, informers,
 * leader election and event recorder over it): `burst` tokens at start, `qps`
 * tokens a second after that. A request waits for its token (it never fails
 * for want of one); waiters are served first come, first served; the wait is
 * on Effect's `Clock` and does not count against the request timeout. Every
 * attempt takes a token, retries included; a watch takes none, as in
 * client-go (`Request.Watch` is not rate limited), so a long-lived watch never
 * holds the bucket. Off by default, as in controller-runtime since v0.21
 * (`pkg/client/config/config.go` sets `QPS = -1`: API Priority and Fairness on
 * the server does the job); `rateLimit: {}` gives {@link defaultQps} /
 * {@link defaultBurst}, the kube-controller-manager values controller-runtime
 * used before (client-go's own `rest.DefaultQPS`/`DefaultBurst` are 5/10).
 * Calls made on `Kube.httpClient` directly are neither limited nor counted.
 *
 * **Metrics**, in Effect's metric registry, so `Prometheus.snapshotText` and
 * the manager's `/metrics` serve them; names, labels and buckets as client-go
 * and component-base define them:
 *
 * | metric | labels | what |
 * |---|---|---|
 * | `rest_client_requests_total` (counter) | `code`, `method`, `host` | every attempt (a), by HTTP status |
 * | `rest_client_request_duration_seconds` (histogram) | `verb`, `host` | every request (b) |
 *
 * (a) retries and watches included; `code` is `<error>` when no answer came.
 * (b) from its first rate-limit wait to its decoded answer, retries included;
 * watches are not observed.
 *
 * `host` is the server's `host:port`; `method`/`verb` the HTTP method. The
 * histogram's buckets are {@link durationBoundaries}.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Kube, KubeClient } from "@reconcile/kube"
 *
 * // at most 50 requests a second after a burst of 100
 * const Live = KubeClient.layer.pipe(Layer.provide(Kube.layerFromDefault({ rateLimit: { qps: 50, burst: 100 } })))
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as internal from "./internal/restClient.js"

/**
 * The token bucket's settings (`Kube.Options.rateLimit`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimit {
  /** Tokens added per second (default {@link defaultQps}); must be positive. */
  readonly qps?: number | undefined
  /** Bucket size: requests that may go at once after a quiet spell (default {@link defaultBurst}). */
  readonly burst?: number | undefined
}

/**
 * A token bucket.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenBucket {
  readonly qps: number
  readonly burst: number
  /** Waits until a token is available and takes it; waiters are served in call order. */
  readonly take: Effect.Effect<void>
  /** The tokens now in the bucket (negative while takers wait). */
  readonly available: Effect.Effect<number>
}

/**
 * 20 requests a second: the QPS `rateLimit: {}` gives.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultQps: number = internal.defaultQps

/**
 * A burst of 30: the bucket size `rateLimit: {}` gives.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBurst: number = internal.defaultBurst

/**
 * The buckets of `rest_client_request_duration_seconds` (seconds): 0.005,
 * 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, then +Inf.
 *
 * @since 0.1.0
 * @category constants
 */
export const durationBoundaries: ReadonlyArray<number> = internal.durationBoundaries

/**
 * A token bucket, full at start, with the reservation semantics of Go's
 * `golang.org/x/time/rate` (which client-go's limiter wraps): a taker reserves
 * its token at once and sleeps until the token has accrued, so from a full
 * bucket of `burst` tokens at `qps`, N simultaneous takers go at
 * `0, …, 0 (burst times), 1/qps, 2/qps, …`. An interrupted waiter gives back
 * what no later reservation has claimed. Times come from Effect's `Clock`.
 * Throws a `RangeError` for a `qps` that is not a positive number.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeTokenBucket: (options: RateLimit) => TokenBucket = internal.makeTokenBucket
