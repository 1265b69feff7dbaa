/**
 * The `TestCluster` served over real HTTP on 127.0.0.1, speaking enough of
 * the Kubernetes API that `kubectl` and `@kubernetes/client-node` work against
 * it: discovery (legacy and aggregated v2), CRUD, patches (merge, JSON,
 * strategic, apply), watch streams (one JSON event per line, written as each
 * event happens), Table output for `kubectl get`, bearer-token authentication
 * (a token generated per start) and a kubeconfig file written once the server
 * listens. It serves HTTPS with a self-signed certificate generated per start
 * (its PEM is the kubeconfig's CA): client-go, hence kubectl, sends bearer
 * tokens only over TLS. With `stateDir`, the certificate, its key, the token
 * and the port are kept across restarts, so clients reconnect to a restarted
 * server with the same kubeconfig.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/testApiServer.js"
import type * as Simulators from "./Simulators.js"
import * as TestCluster from "./TestCluster.js"

/**
 * A running API server.
 *
 * @since 0.1.0
 * @category tags
 */
export class TestApiServer extends Context.Service<
  TestApiServer,
  TestApiServer.Service
>()("@reconcile/testkit/TestApiServer") {}

/**
 * @since 0.1.0
 */
export declare namespace TestApiServer {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** `https://127.0.0.1:<port>` */
    readonly url: string
    readonly port: number
    /** The bearer token clients must send (generated per start unless given or kept in `stateDir`; never logged). */
    readonly token: string
    /** The PEM of the serving certificate (also in the kubeconfig as the CA); self-signed unless given. */
    readonly certificateAuthority: string
    /** Where the kubeconfig was written. */
    readonly kubeconfigPath: string
    /** The kubeconfig's YAML text (context `testkit`, namespace `default`). */
    readonly kubeconfig: string
    /** The cluster it serves. */
    readonly cluster: TestCluster.TestCluster.Service
  }
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Port to listen on; 0 (default) picks a free one. */
  readonly port?: number | undefined
  /** Where to write the kubeconfig; default a new temporary directory (removed on close). */
  readonly kubeconfigPath?: string | undefined
  /** Called with one short line per request (method, path, status, duration), and for a port or certificate change. */
  readonly log?: ((line: string) => void) | undefined
  /**
   * How often watches with `allowWatchBookmarks` get a BOOKMARK (default 1 minute, kube-apiserver's period); one
   * also comes 2 s before a watch's `timeoutSeconds`, and none older than the resourceVersion a watch started from.
   */
  readonly bookmarkInterval?: Duration.Input | undefined
  /**
   * How long a list "not older than" a resourceVersion the server has not reached (unpaginated: kube-apiserver's
   * watch cache), or a watch-list from one, waits for it before failing with 504 `Timeout`, cause
   * `ResourceVersionTooLarge`, `Retry-After: 1` (default 3 s, kube-apiserver's). A paginated list fails at once;
   * a plain watch from there starts and stays silent until the server gets there, as on kube-apiserver.
   */
  readonly resourceVersionWait?: Duration.Input | undefined
  /**
   * A directory keeping the serving certificate (`ca.crt`, the kubeconfig's CA), its key (`server.key`), the token
   * (`token`) and the port (`port`) across restarts: created on first use (mode 0700, files 0600), reused after.
   * Without `port`, the recorded port is taken again (a free one when it is in use). A partial or damaged state
   * fails with `StateFailed` naming the file; an expired certificate is replaced.
   */
  readonly stateDir?: string | undefined
  /** The serving certificate and its private key (PEM) to use instead of generated or stored ones. */
  readonly tls?: { readonly cert: string; readonly key: string } | undefined
  /** The bearer token to require instead of a generated or stored one (visible ASCII). */
  readonly token?: string | undefined
  /**
   * The controller manager (`Simulators.controllerManager`: Deployments get ReplicaSets, ReplicaSets get Pods that
   * become Ready, statuses follow): on by default; `false` for a bare server, or its options.
   */
  readonly controllers?: boolean | Simulators.ControllerManagerOptions | undefined
}

/**
 * Starting the server failed: `ListenFailed` (port in use), `KubeconfigFailed`
 * (not writable), `StateFailed` (the state directory is partial, damaged or not
 * writable: the message names the file), `InvalidOptions` (a given `tls` or
 * `token` is unusable).
 *
 * @since 0.1.0
 * @category errors
 */
export class TestApiServerError extends Data.TaggedError("TestApiServerError")<{
  readonly reason: "ListenFailed" | "KubeconfigFailed" | "StateFailed" | "InvalidOptions"
  readonly cause: unknown
}> {
  override get message(): string {
    return `test API server: ${this.reason}: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`
  }
}

/**
 * Starts serving the `TestCluster` in scope; the server stops (and open
 * watches are closed) when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<TestApiServer.Service, TestApiServerError, TestCluster.TestCluster | Scope.Scope> = internal.make

/**
 * The server as a Layer over a `TestCluster`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<TestApiServer, TestApiServerError, TestCluster.TestCluster> =>
  Layer.effect(TestApiServer, internal.make(options))

/**
 * A fresh `TestCluster` and a server for it, both provided.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithCluster = (
  options?: Options & TestCluster.Options
): Layer.Layer<TestApiServer | TestCluster.TestCluster, TestApiServerError> =>
  layer(options).pipe(Layer.provideMerge(TestCluster.layerWith(options ?? {})))
