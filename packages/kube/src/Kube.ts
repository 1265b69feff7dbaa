/**
 * The connection to a Kubernetes API server: configuration and HTTP.
 *
 * `@kubernetes/client-node`'s `KubeConfig` loads the kubeconfig and computes
 * the credentials — bearer tokens, token files, exec plugins, OIDC, client
 * certificates — for every request, so rotated tokens and refreshed exec
 * credentials are picked up. Requests go through `effect/http`'s `HttpClient`
 * (`@effect/platform-node`'s undici implementation) with a keep-alive undici
 * `Agent` holding the cluster's CA and the client certificate. TLS
 * verification is on unless the kubeconfig says
 * `insecure-skip-tls-verify: true`.
 *
 * Failed requests fail with a {@link KubeError.KubeError}. Transient failures
 * are retried with exponential backoff, a bounded number of times: throttling
 * (429, after its `Retry-After`) and 503 for every verb; other 5xx, timeouts
 * and transport errors only for idempotent requests (GET, PUT, server-side
 * apply). Waits use Effect's `Clock`. After the retries, the failures a person
 * must fix carry a `Diagnosis` naming this server and the
 * kubeconfig context (`cannot reach the API server at https://… (kubeconfig
 * context "dev"): connection refused (ECONNREFUSED): …`, a 401's `the API
 * server at … rejected the credentials …`): see `Diagnosis`.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Kube, KubeClient } from "@reconcile/kube"
 *
 * // KUBECONFIG, ~/.kube/config, or the in-cluster service account
 * const Live = KubeClient.layer.pipe(Layer.provide(Kube.layerFromDefault()))
 * ```
 *
 * @since 0.1.0
 */
import type { KubeConfig } from "@kubernetes/client-node"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as config from "./internal/config.js"
import type { KubeConfigError } from "./internal/config.js"
import * as internal from "./internal/kube.js"
import * as retry from "./internal/retry.js"
import type * as KubeError from "./KubeError.js"
import type * as RestClient from "./RestClient.js"

/**
 * The connection to the API server of the current kubeconfig context.
 *
 * @since 0.1.0
 * @category tags
 */
export class Kube extends Context.Service<Kube, Kube.Service>()("@reconcile/kube/Kube") {}

/**
 * @since 0.1.0
 */
export declare namespace Kube {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** client-node's configuration (loading and authentication). */
    readonly kubeConfig: KubeConfig
    /** The API server's base URL, e.g. `https://10.0.0.1:443`. */
    readonly server: string
    /** The current context's namespace (`default` when unset). */
    readonly namespace: string
    /**
     * An `HttpClient` that prefixes relative URLs with the server, sends the
     * credentials client-node computes for each request, and uses the
     * cluster's TLS settings. Statuses are not checked.
     */
    readonly httpClient: HttpClient.HttpClient
    /**
     * Sends a request and returns its parsed JSON body; non-2xx answers fail
     * with the error parsed from their `metav1.Status`. Transient failures
     * are retried (see the module docs); the request timeout applies to each
     * attempt.
     */
    readonly request: (request: Request) => Effect.Effect<unknown, KubeError.KubeError>
    /**
     * Sends a request and streams its body (watches). A non-2xx answer fails
     * the stream with its error; nothing is retried; the request timeout
     * applies until the response headers arrive. Pulling applies
     * backpressure; interrupting aborts the request.
     */
    readonly stream: (request: Request) => Stream.Stream<Uint8Array, KubeError.KubeError>
  }
}

/**
 * One API request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** The path below the server, e.g. `/api/v1/namespaces/default/configmaps`. */
  readonly path: string
  /** Query parameters; `undefined` values are left out. */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>> | undefined
  /** Sent as JSON. */
  readonly body?: unknown
  /** Default `application/json`; patches set their own. */
  readonly contentType?: string | undefined
  /** The `Accept` header; default `application/json` (metadata-only reads ask for `PartialObjectMetadata`). */
  readonly accept?: string | undefined
  /** Whether sending it twice is harmless (default: GET, PUT). Decides which failures are retried. */
  readonly idempotent?: boolean | undefined
  /** Overrides the request timeout of {@link Options}. */
  readonly timeout?: Duration.Input | undefined
}

/**
 * Retries of transient failures.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 disables retries). */
  readonly times?: number | undefined
  /** First backoff (default 200 ms), doubled per retry. */
  readonly base?: Duration.Input | undefined
  /** Backoff cap (default 10 s). A server's `Retry-After` is honoured as sent. */
  readonly max?: Duration.Input | undefined
}

/**
 * Options of the layers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly retry?: RetryOptions | undefined
  /** Timeout of one request attempt (default 30 s). */
  readonly timeout?: Duration.Input | undefined
  /** The `User-Agent` header (default `reconcile/0.1.0`). */
  readonly userAgent?: string | undefined
  /**
   * Client-side rate limit of every request but watches: a token bucket (see
   * {@link RestClient}); `{}` is 20 QPS with a burst of 30. Off when unset,
   * `false` or with `qps` ≤ 0 (controller-runtime's default since v0.21).
   */
  readonly rateLimit?: RestClient.RateLimit | false | undefined
}

// The error of loading a kubeconfig (declared by `internal/config.ts`, which makes it, so that it need not import
// this module).
export { KubeConfigError } from "./internal/config.js"

/**
 * What {@link fromHttpClient} carries requests over: an `HttpClient`, the
 * server's base URL (request paths are resolved against it), the namespace of
 * requests that name none, and the `KubeConfig` the service reports.
 *
 * @since 0.1.0
 * @category models
 */
export interface Transport {
  readonly httpClient: HttpClient.HttpClient
  readonly kubeConfig: KubeConfig
  readonly server: string
  readonly namespace: string
  /**
   * What diagnoses name (`the API server at <server> (kubeconfig context "<context>") …`); by default the
   * server and no context. An in-process server with no address a person could use names neither.
   */
  readonly names?: { readonly server?: string | undefined; readonly context?: string | undefined } | undefined
}

/**
 * A connection over any `HttpClient`: the same retries, rate limit, timeouts,
 * rest-client metrics, error mapping and diagnoses as {@link make}, with
 * another carrier of the requests. The testkit's `TestKube` is this over the
 * in-process test server's request handler (no sockets); a recording or
 * replaying `HttpClient` works too.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromHttpClient = (transport: Transport, options?: Options): Effect.Effect<Kube.Service> =>
  internal.fromHttpClient(transport, options ?? {})

/**
 * The connection for a loaded `KubeConfig` (its current context). The HTTP
 * agents are closed with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  kubeConfig: KubeConfig,
  options?: Options
): Effect.Effect<Kube.Service, KubeConfigError, Scope.Scope> =>
  internal.make({ kubeConfig, source: "<KubeConfig>" }, options ?? {})

/**
 * Loads the kubeconfig as client-node's `loadFromDefault` does: the files of
 * `KUBECONFIG` (merged), else `~/.kube/config`, else the in-cluster service
 * account. Finding none is a {@link KubeConfigError} (client-node would fall
 * back to `http://localhost:8080`). `KUBECONFIG` and `HOME` are read through
 * Effect's `Config`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromDefault = (options?: Options): Layer.Layer<Kube, KubeConfigError> =>
  Layer.effect(Kube, Effect.flatMap(config.fromDefault, (loaded) => internal.make(loaded, options ?? {})))

/**
 * Loads the kubeconfig file at `path`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (path: string, options?: Options): Layer.Layer<Kube, KubeConfigError> =>
  Layer.effect(Kube, Effect.flatMap(config.fromFile(path), (loaded) => internal.make(loaded, options ?? {})))

/**
 * Loads a kubeconfig from its YAML text.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromString = (yaml: string, options?: Options): Layer.Layer<Kube, KubeConfigError> =>
  Layer.effect(Kube, Effect.flatMap(config.fromString(yaml), (loaded) => internal.make(loaded, options ?? {})))

/**
 * Loads the kubeconfig file `options.path`, else `KUBECONFIG` (merged) or `~/.kube/config`, and uses the context
 * `context` instead of the current one (`kubectl [--kubeconfig PATH] --context NAME`). A context that is not
 * defined is a {@link KubeConfigError} listing those that are.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromContext = (
  context: string,
  options?: Options & { readonly path?: string | undefined }
): Layer.Layer<Kube, KubeConfigError> =>
  Layer.effect(
    Kube,
    Effect.flatMap(config.fromContext(context, options?.path), (loaded) => internal.make(loaded, options ?? {}))
  )

/**
 * The in-cluster service account only (the token and CA mounted in a Pod): what an operator's Deployment runs
 * with. Unlike {@link layerFromDefault}, never reads `KUBECONFIG` or `~/.kube/config`; outside a Pod it is a
 * {@link KubeConfigError}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInCluster = (options?: Options): Layer.Layer<Kube, KubeConfigError> =>
  Layer.effect(Kube, Effect.flatMap(config.inCluster, (loaded) => internal.make(loaded, options ?? {})))

/**
 * Uses an already loaded client-node `KubeConfig` (e.g. with custom
 * authenticators added).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromKubeConfig = (kubeConfig: KubeConfig, options?: Options): Layer.Layer<Kube, KubeConfigError> =>
  Layer.effect(Kube, make(kubeConfig, options))

/**
 * Runs an API call with the clients' retry rules: 429 and 503 are retried for
 * every verb (the server did not act), other 5xx, timeouts and transport
 * failures only when the call is `idempotent`; waits double from `base` up to
 * `max` (a server's `Retry-After` wins), at most `times` retries, on Effect's
 * `Clock`. `KubeClient` and the testkit's in-process client both use it.
 *
 * @since 0.1.0
 * @category retries
 */
export const withRetry = <A, R>(
  effect: Effect.Effect<A, KubeError.KubeError, R>,
  options: RetryOptions | undefined,
  idempotent: boolean
): Effect.Effect<A, KubeError.KubeError, R> => retry.withRetry(effect, retry.policy(options), idempotent)
