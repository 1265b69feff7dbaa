/**
 * The HTTPS server of an operator's webhooks (admission, conversion), on
 * effect's HTTP server on Node. Every replica serves (webhooks are not
 * leader-elected): put it in every replica's Layer.
 *
 * | request | response |
 * |---|---|
 * | `POST <route path>` with a JSON body | `200`, the route's answer (JSON) |
 * | a body that is not JSON, or not `application/json` | `400` with a message |
 * | a body over `maxBodyBytes` | `413` |
 * | another method on a route's path | `405` (`Allow: POST`) |
 * | any other path | `404` |
 *
 * The server keeps serving after any of them. Each route's requests are
 * counted with controller-runtime's metrics (label `webhook`: the route's
 * name): `controller_runtime_webhook_requests_total{webhook,code}`,
 * `controller_runtime_webhook_latency_seconds{webhook}` (a histogram) and
 * `controller_runtime_webhook_requests_in_flight{webhook}`; they are in
 * `Prometheus.text` like every Effect metric.
 *
 * The certificate comes from a {@link CertificateSource}: a fixed one
 * ({@link fromPem}), files mounted from a Secret ({@link fromDirectory},
 * reloaded when they change) or a certificate manager. A new certificate is
 * served to new connections from then on (`server.setSecureContext`);
 * connections already open keep theirs.
 *
 * On scope close the server stops accepting, lets the reviews in flight
 * finish (at most `shutdownTimeout`, default 10 s) and closes.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Admission, Certificates, Resource, WebhookServer } from "@reconcile/kube"
 *
 * const checks = Admission.validator(Resource.ConfigMap, {
 *   create: (cm) => cm.data?.forbidden !== undefined ? Admission.deny("no forbidden key") : Effect.void
 * })
 *
 * const ServerLive = WebhookServer.layer({
 *   routes: [checks],
 *   certificate: WebhookServer.fromPem(Certificates.selfSigned()),
 *   port: 9443
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Certificates from "./Certificates.js"
import * as internal from "./internal/webhookServer.js"

/**
 * A webhook served at one path: every admission webhook is one, and so is a
 * conversion webhook.
 *
 * @since 0.1.0
 * @category models
 */
export interface Route<R = never> {
  /** The URL path, e.g. "/validate-apps-reconcile-dev-v1-webapp". */
  readonly path: string
  /** The `webhook` label of the metrics. */
  readonly name: string
  /** Answers one review (the parsed JSON request body) with the JSON response body. Never fails. */
  readonly handle: (review: unknown) => Effect.Effect<unknown, never, R>
}

/**
 * Where the serving certificate comes from.
 *
 * @since 0.1.0
 * @category models
 */
export interface CertificateSource {
  /** The certificate to serve now. */
  readonly current: Effect.Effect<Certificates.Certificate>
  /** Every later certificate (a renewal, rotated files): the server serves it to new connections from then on. */
  readonly changes: Stream.Stream<Certificates.Certificate>
}

/**
 * A server that cannot start (the port is taken, the certificate does not
 * load) or a certificate directory that cannot be read.
 *
 * @since 0.1.0
 * @category errors
 */
export class WebhookServerError extends Data.TaggedError("WebhookServerError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * A fixed certificate (PEM), never renewed.
 *
 * @since 0.1.0
 * @category certificates
 */
export const fromPem: (certificate: Certificates.Certificate) => CertificateSource = internal.fromPem

/**
 * Options of {@link fromDirectory}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DirectoryOptions {
  /** Default `tls.crt` (a `kubernetes.io/tls` Secret's key). */
  readonly certFile?: string | undefined
  /** Default `tls.key`. */
  readonly keyFile?: string | undefined
  /** How often the files are read again; default 10 seconds (on the Clock). */
  readonly interval?: Duration.Input | undefined
}

/**
 * The certificate and key files of a directory — a cert-manager Secret
 * mounted as a volume — read again every `interval`: a pair that changed is
 * served once its key matches its certificate (a Secret volume swaps its
 * `..data` symlink at once, but a pair read mid-write is never served; the
 * previous one stays until the next good read). Fails when the first pair is
 * missing or does not match.
 *
 * @since 0.1.0
 * @category certificates
 */
export const fromDirectory: (
  dir: string,
  options?: DirectoryOptions
) => Effect.Effect<CertificateSource, WebhookServerError> = internal.fromDirectory

/**
 * What {@link make} serves, and where.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  readonly routes: ReadonlyArray<Route<R>>
  readonly certificate: CertificateSource
  /** Default `127.0.0.1`; in a pod, `0.0.0.0` so kube-apiserver reaches it through the Service. */
  readonly host?: string | undefined
  /** Default 9443 (controller-runtime's); `0` picks a free port, see {@link WebhookServer}'s `address`. */
  readonly port?: number | undefined
  /** The largest request body; default 7 MiB (controller-runtime's limit). */
  readonly maxBodyBytes?: number | undefined
  /** How long a scope close waits for reviews in flight; default 10 seconds. */
  readonly shutdownTimeout?: Duration.Input | undefined
}

/**
 * A running webhook server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The address it listens on (the bound port also when `0` was asked for). */
  readonly address: { readonly host: string; readonly port: number }
  /** `true` while it listens with a certificate (for the Manager's `/readyz`); `false` once it shuts down. */
  readonly ready: Effect.Effect<boolean>
  /** The certificate it serves to new connections. */
  readonly certificate: Effect.Effect<Certificates.Certificate>
}

/**
 * @since 0.1.0
 * @category services
 */
export class WebhookServer extends Context.Service<WebhookServer, Service>()("@reconcile/kube/WebhookServer") {}

/**
 * Starts the server in the current scope: listening when the effect
 * succeeds, draining and closed when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <R = never>(options: Options<R>) => Effect.Effect<Service, WebhookServerError, R | Scope.Scope> =
  internal.make

/**
 * The server as a Layer; its requirements are the routes' (e.g. `KubeClient`
 * for a validator that reads other objects).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: <R = never>(options: Options<R>) => Layer.Layer<WebhookServer, WebhookServerError, R> =
  internal.layer
