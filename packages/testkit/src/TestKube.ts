/**
 * `@reconcile/kube`'s one `KubeClient`, served in process by a
 * {@link TestCluster.TestCluster}: no sockets, no TLS, so controller tests
 * run in milliseconds and `TestClock` drives everything (fault latency, watch
 * timeouts, bookmarks, retries, request timeouts).
 *
 * It is not a second client: it is `KubeClient.make` over `Kube.fromHttpClient`
 * with an `HttpClient` that the test server's own request handler answers in
 * the calling fiber — the same routing, field validation, Status bodies,
 * `Warning` headers and watch lines as `TestApiServer` over HTTPS, parsed by
 * the same error mapping and watch decoder, with the same retries (on
 * Effect's `Clock`; `retry: { times: 0 }` turns them off) and request
 * timeouts. Faults (`Faults`) apply as over HTTPS: a dropped watch fails with
 * `Transport`, a garbled watch yields an `Undecodable` element. The
 * differences from a socket: diagnoses name no server address, and the
 * handler's clock is the calling fiber's.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { TestClock } from "effect/testing"
 * import { Cache, KubeClient, Resource } from "@reconcile/kube"
 * import { TestKube } from "@reconcile/testkit"
 *
 * const TestEnv = Cache.layer().pipe(Layer.provideMerge(TestKube.layerWithCluster()))
 *
 * const test = Effect.gen(function*() {
 *   yield* KubeClient.create(Resource.ConfigMap, { metadata: { name: "settings" }, data: { mode: "fast" } })
 *   yield* TestClock.adjust("1 second")
 * }).pipe(Effect.provide(TestEnv))
 * ```
 *
 * @since 0.1.0
 */
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import * as internal from "./internal/testKube.js"
import * as TestCluster from "./TestCluster.js"

/**
 * Options of the in-process client.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The namespace of requests that name none (the kubeconfig context's namespace over HTTP; default `default`). */
  readonly namespace?: string | undefined
  /** The field manager of writes without one (over HTTP: the User-Agent's product; default `reconcile`). */
  readonly fieldManager?: string | undefined
  /** Retries of transient failures (429, 503, …), as `Kube.Options.retry` (default 3, 200 ms doubling to 10 s). */
  readonly retry?: Kube.RetryOptions | undefined
  /** Timeout of one request attempt, on Effect's Clock (default 30 s, as over HTTP). */
  readonly timeout?: Duration.Input | undefined
  /**
   * How often watches with `allowWatchBookmarks` get a BOOKMARK (default 1 minute, as `TestApiServer`); one also
   * comes 2 s before `timeoutSeconds`, and none older than the resourceVersion the watch started from.
   */
  readonly bookmarkInterval?: Duration.Input | undefined
}

/**
 * A `KubeClient` over the {@link TestCluster.TestCluster} in context (which
 * must come from `TestCluster.make` or its layers).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<KubeClient.KubeClient.Service, never, TestCluster.TestCluster> =
  internal.make

/**
 * Provides `KubeClient` over the {@link TestCluster.TestCluster} in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<KubeClient.KubeClient, never, TestCluster.TestCluster> = Layer.effect(
  KubeClient.KubeClient,
  internal.make()
)

/**
 * {@link layer} with options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<KubeClient.KubeClient, never, TestCluster.TestCluster> =>
  Layer.effect(KubeClient.KubeClient, internal.make(options))

/**
 * The `Kube` connection under the client: `Kube.fromHttpClient` over the
 * in-process handler, for code that issues raw `Kube.request`s or builds its
 * own `KubeClient`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerKube = (options?: Options): Layer.Layer<Kube.Kube, never, TestCluster.TestCluster> =>
  Layer.effect(Kube.Kube, internal.makeKube(options))

/**
 * A fresh {@link TestCluster.TestCluster} and a `KubeClient` over it, both
 * provided (add `Faults.layer` on top for fault injection).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Faults, TestKube } from "@reconcile/testkit"
 *
 * const TestEnv = Faults.layer.pipe(Layer.provideMerge(TestKube.layerWithCluster({ retry: { times: 0 } })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithCluster = (
  options?: Options & TestCluster.Options
): Layer.Layer<KubeClient.KubeClient | TestCluster.TestCluster> =>
  layerWith(options ?? {}).pipe(Layer.provideMerge(TestCluster.layerWith(options ?? {})))

/**
 * Lets controllers, caches and watches catch up without moving virtual time: ten rounds of
 * `TestClock.adjust(0)`. Use it after a write a controller should react to, before asserting.
 *
 * Why not one `adjust(0)`: effect 4's `TestClock.adjust` gives the other fibers a single scheduler
 * round before it moves time (effect 3's waited until every fiber was suspended), and a reaction to a
 * write is a chain of hand-offs — watch → cache → queue → worker → request — each taking a round.
 * Work woken by a due sleep is different: `adjust(d)` waits until it is idle.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeClient, Resource } from "@reconcile/kube"
 * import { TestKube } from "@reconcile/testkit"
 *
 * const program = Effect.gen(function*() {
 *   yield* KubeClient.create(Resource.ConfigMap, { metadata: { name: "settings", namespace: "default" } })
 *   yield* TestKube.settle // the controllers watching ConfigMaps reconcile it
 * })
 * ```
 *
 * @since 0.1.0
 * @category testing
 */
export const settle: Effect.Effect<void> = Effect.repeat(TestClock.adjust(0), { times: 9 })
