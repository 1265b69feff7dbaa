import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as ByteSize from "effect/ByteSize"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as NetAddress from "effect/net/NetAddress"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as https from "node:https"
import * as path from "node:path"
import * as tls from "node:tls"
import type * as Certificates from "../Certificates.js"
import * as WebhookServer from "../WebhookServer.js"

// ---------------------------------------------------------------------------------------------------------------
// certificates

/** Why `certificate` cannot be served (never the key itself), or undefined when it can. */
const checkPair = (certificate: Certificates.Certificate): string | undefined => {
  try {
    const x509 = new crypto.X509Certificate(certificate.cert)
    if (!x509.checkPrivateKey(crypto.createPrivateKey(certificate.key))) {
      return "the private key does not match the certificate"
    }
    tls.createSecureContext({ cert: certificate.cert, key: certificate.key })
    return undefined
  } catch (error) {
    return `the certificate or key does not load (${error instanceof Error ? error.message : String(error)})`
  }
}

/** @internal */
export const fromPem = (certificate: Certificates.Certificate): WebhookServer.CertificateSource => ({
  current: Effect.succeed(certificate),
  changes: Stream.empty
})

const readPair = (certFile: string, keyFile: string): Certificates.Certificate | string => {
  try {
    return { cert: fs.readFileSync(certFile, "utf8"), key: fs.readFileSync(keyFile, "utf8") }
  } catch (error) {
    return `cannot read ${certFile} and ${keyFile}: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** @internal */
export const fromDirectory = (
  dir: string,
  options: WebhookServer.DirectoryOptions = {}
): Effect.Effect<WebhookServer.CertificateSource, WebhookServer.WebhookServerError> =>
  Effect.suspend(() => {
    const certFile = path.join(dir, options.certFile ?? "tls.crt")
    const keyFile = path.join(dir, options.keyFile ?? "tls.key")
    const interval = options.interval ?? Duration.seconds(10)
    const first = readPair(certFile, keyFile)
    if (typeof first === "string") return Effect.fail(new WebhookServer.WebhookServerError({ message: first }))
    const invalid = checkPair(first)
    if (invalid !== undefined) {
      return Effect.fail(new WebhookServer.WebhookServerError({ message: `${certFile}: ${invalid}` }))
    }
    let latest = first
    const changes = Stream.unwrap(Effect.sync(() => {
      let last = latest
      let reported = ""
      return Stream.tick(interval).pipe(
        Stream.mapEffect(() =>
          Effect.suspend(() => {
            const pair = readPair(certFile, keyFile)
            if (typeof pair !== "string" && pair.cert === last.cert && pair.key === last.key) {
              return Effect.succeed([])
            }
            const problem = typeof pair === "string" ? pair : checkPair(pair)
            if (problem !== undefined) {
              // a pair read mid-write: the previous one stays; said once per distinct problem
              if (problem === reported) return Effect.succeed([])
              reported = problem
              return Effect.as(
                Effect.logWarning(`the certificate in ${dir} is not served yet: ${problem}`),
                []
              )
            }
            reported = ""
            last = pair as Certificates.Certificate
            latest = last
            return Effect.as(Effect.logInfo(`serving the new certificate from ${dir}`), [last])
          })
        ),
        Stream.flattenIterable
      )
    }))
    return Effect.succeed<WebhookServer.CertificateSource>({ current: Effect.sync(() => latest), changes })
  })

// ---------------------------------------------------------------------------------------------------------------
// metrics (controller-runtime's `pkg/webhook/internal/metrics`)

const names = {
  requests: "controller_runtime_webhook_requests_total",
  latency: "controller_runtime_webhook_latency_seconds",
  inFlight: "controller_runtime_webhook_requests_in_flight"
} as const

/** Prometheus's default buckets, which controller-runtime's latency histogram uses. */
const latencyBoundaries = Metric.boundariesFromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

interface RouteMetrics {
  readonly requests: (code: number) => Metric.Counter<number>
  readonly latency: Metric.Histogram<number>
  readonly inFlight: Metric.Gauge<number>
}

const routeMetrics = new Map<string, RouteMetrics>()

const metricsOf = (webhook: string): RouteMetrics => {
  const existing = routeMetrics.get(webhook)
  if (existing !== undefined) return existing
  const byCode = new Map<number, Metric.Counter<number>>()
  const metrics: RouteMetrics = {
    requests: (code) => {
      let counter = byCode.get(code)
      if (counter === undefined) {
        counter = Metric.counter(names.requests, {
          description: "Total number of admission requests by HTTP status code.",
          attributes: { webhook, code: String(code) },
          incremental: true
        })
        byCode.set(code, counter)
      }
      return counter
    },
    latency: Metric.histogram(names.latency, {
      description: "Histogram of the latency of processing admission requests",
      boundaries: latencyBoundaries,
      attributes: { webhook }
    }),
    inFlight: Metric.gauge(names.inFlight, {
      description: "Current number of admission requests being served.",
      attributes: { webhook }
    })
  }
  routeMetrics.set(webhook, metrics)
  return metrics
}

// ---------------------------------------------------------------------------------------------------------------
// requests

const text = (body: string, status: number, headers?: Record<string, string>) =>
  HttpServerResponse.text(body, { status, ...(headers === undefined ? {} : { headers }) })

const isJsonType = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

// One generator function for every request (`Effect.fnUntraced`), not an `Effect.gen` closure made per request: V8
// (Node 24) promotes what a generator made and started per call captures to the old generation, so a closure per
// request made each scavenge copy megabytes (6–9 ms pauses at 1,000 reviews/s, the benchmark's p99).
const serveRoute: <R>(
  route: WebhookServer.Route<R>,
  request: HttpServerRequest.HttpServerRequest,
  maxBodyBytes: number,
  traced: boolean
) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> = Effect.fnUntraced(
  function*<R>(
    route: WebhookServer.Route<R>,
    request: HttpServerRequest.HttpServerRequest,
    maxBodyBytes: number,
    traced: boolean
  ) {
    if (request.method !== "POST") {
      return text(`${request.method} is not served at ${route.path}: only POST`, 405, { allow: "POST" })
    }
    const contentType = request.headers["content-type"]
    if (!isJsonType(contentType)) {
      return text(`expected Content-Type application/json, got ${contentType ?? "none"}`, 400)
    }
    const length = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(length) && length > maxBodyBytes) {
      return text(`the request body is larger than ${maxBodyBytes} bytes`, 413)
    }
    const body = yield* request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
      Effect.map((body) => ({ _tag: "Body" as const, body })),
      Effect.catch((error) =>
        Effect.succeed(
          error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
            ? {
              _tag: "Response" as const,
              response: text(`the request body is larger than ${maxBodyBytes} bytes`, 413)
            }
            : { _tag: "Response" as const, response: text("cannot read the request body", 400) }
        )
      )
    )
    if (body._tag === "Response") return body.response
    if (body.body.trim() === "") return text("the request body is empty", 400)
    let review: unknown
    try {
      review = JSON.parse(body.body)
    } catch (error) {
      return text(`the request body is not JSON: ${error instanceof Error ? error.message : String(error)}`, 400)
    }
    if (traced) yield* Effect.annotateCurrentSpan({ webhook: route.name, ...reviewAttributes(review) })
    // a route never fails; one that dies (a bug) is a 500 here, logged, and the server goes on
    return yield* route.handle(review).pipe(
      traced ? Effect.tap((answer) => Effect.annotateCurrentSpan(answerAttributes(answer))) : (effect) => effect,
      Effect.map((answer) => HttpServerResponse.jsonUnsafe(answer)),
      Effect.catchCause((cause) =>
        Effect.as(
          Effect.logError(`webhook ${route.name} failed`, cause),
          text(`internal error in webhook ${route.name}`, 500)
        )
      )
    )
  }
)

/** What a review asks, for its span: `operation` and `kind` (admission), or `kind` (the desired apiVersion). */
const reviewAttributes = (review: unknown): Record<string, string> => {
  const request = (review as { readonly request?: Record<string, unknown> } | null)?.request
  const out: Record<string, string> = {}
  if (typeof request?.operation === "string") out.operation = request.operation
  const kind = (request?.kind as { readonly kind?: unknown } | undefined)?.kind
  if (typeof kind === "string") out.kind = kind
  if (typeof request?.desiredAPIVersion === "string") out.desiredAPIVersion = request.desiredAPIVersion
  return out
}

/** What the answer says, for its span: `allowed` and `code` (an admission review's). */
const answerAttributes = (answer: unknown): Record<string, unknown> => {
  const response = (answer as { readonly response?: Record<string, unknown> } | null)?.response
  const out: Record<string, unknown> = {}
  if (typeof response?.allowed === "boolean") {
    out.allowed = response.allowed
    const code = (response.status as { readonly code?: unknown } | undefined)?.code
    out.code = typeof code === "number" ? code : response.allowed ? 200 : 403
  }
  return out
}

/** Counts a route's request: in flight while it runs, then its code and latency. */
const instrumented = <R>(
  route: WebhookServer.Route<R>,
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> => {
  const metrics = metricsOf(route.name)
  return Effect.acquireUseRelease(
    Metric.modify(metrics.inFlight, 1),
    () =>
      Effect.timed(effect).pipe(
        Effect.tap(([duration, response]) =>
          Effect.andThen(
            Metric.update(metrics.requests(response.status), 1),
            Metric.update(metrics.latency, Duration.toMillis(duration) / 1000)
          )
        ),
        Effect.map(([, response]) => response)
      ),
    () => Metric.modify(metrics.inFlight, -1)
  )
}

const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** @internal */
export const make = <R>(
  options: WebhookServer.Options<R>
): Effect.Effect<WebhookServer.Service, WebhookServer.WebhookServerError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const port = options.port ?? 9443
    const maxBodyBytes = options.maxBodyBytes ?? 7 * 1024 * 1024
    const fail = (message: string, cause?: unknown) =>
      Effect.fail(new WebhookServer.WebhookServerError({ message, ...(cause === undefined ? {} : { cause }) }))
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* fail(`the port must be an integer in 0..65535, got ${port}`)
    }
    const byPath = new Map<string, WebhookServer.Route<R>>()
    for (const route of options.routes) {
      if (!route.path.startsWith("/")) return yield* fail(`a route's path must start with "/": ${route.path}`)
      if (byPath.has(route.path)) return yield* fail(`two routes are served at ${route.path}`)
      byPath.set(route.path, route)
    }
    // the in-flight gauges exist from the start, at 0
    yield* Effect.forEach(byPath.values(), (route) => Metric.modify(metricsOf(route.name).inFlight, 0), {
      discard: true
    })

    // Subscribe to `changes` before reading `current`: a source's `changes` are the certificates after the
    // subscription (a CertificateManager's drop the one it holds then), so a renewal between a read of `current` and
    // a later subscription would be in neither, and the old certificate served until the next renewal (past its
    // end, for a manager). Started at once, the consumer has subscribed when the fork returns; what it receives
    // before the server exists is what the server starts with.
    let served: Certificates.Certificate | undefined
    let node: https.Server | undefined
    const consumer = yield* options.certificate.changes.pipe(
      Stream.runForEach((certificate) =>
        Effect.suspend(() => {
          if (served !== undefined && certificate.cert === served.cert && certificate.key === served.key) {
            return Effect.void
          }
          const invalid = checkPair(certificate)
          if (invalid !== undefined) return Effect.logWarning(`the new certificate is not served: ${invalid}`)
          node?.setSecureContext({ cert: certificate.cert, key: certificate.key })
          served = certificate
          return Effect.void
        })
      ),
      Effect.forkScoped({ startImmediately: true })
    )

    const start = Effect.gen(function*() {
      const first = yield* options.certificate.current
      // a change received meanwhile is at least as new as what `current` said
      if (served === undefined) {
        const problem = checkPair(first)
        if (problem !== undefined) return yield* fail(`cannot serve the certificate: ${problem}`)
        served = first
      }
      return yield* NodeHttpServer.make(() => {
        // A request is never awaited by an API server for longer than 30 s (the longest `timeoutSeconds`): one that
        // has not fully arrived by then (a stalled or hostile client holding a connection) is closed, not kept for
        // node's default of 300 s.
        node = https.createServer({
          cert: served!.cert,
          key: served!.key,
          headersTimeout: 10_000,
          requestTimeout: 30_000,
          connectionsCheckingInterval: 5_000
        })
        return node
      }, {
        host,
        port,
        gracefulShutdownTimeout: options.shutdownTimeout ?? Duration.seconds(10)
      }).pipe(Effect.catch((error) => fail(`cannot listen on ${host}:${port}: ${messageOf(error.cause)}`, error)))
    })
    // a server that does not start stops following its certificate source
    const server = yield* Effect.onError(start, () => Fiber.interrupt(consumer))

    const spanName = (request: HttpServerRequest.HttpServerRequest) => {
      const at = request.url.indexOf("?")
      const route = byPath.get(at === -1 ? request.url : request.url.slice(0, at))
      return route === undefined ? request.method : `webhook ${route.name}`
    }
    // a review's facts on its span only when a real tracer is installed (effect's native tracer's spans go nowhere)
    const traced = (yield* Effect.tracer) !== Tracer.nativeTracer && (yield* References.TracerEnabled)
    let ready = true
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const at = request.url.indexOf("?")
      const requestPath = at === -1 ? request.url : request.url.slice(0, at)
      const route = byPath.get(requestPath)
      if (route === undefined) return text(`no webhook is served at ${requestPath}`, 404)
      return yield* instrumented(route, serveRoute(route, request, maxBodyBytes, traced))
    })
    // effect's server makes the span of a request when a real tracer is installed (a server span joined to the
    // caller's `traceparent`, with the HTTP attributes): named here after the webhook, its review's facts added by
    // `serveRoute`
    yield* server.serve(app).pipe(Effect.provideService(HttpMiddleware.SpanNameGenerator, spanName))
    // runs first on scope close: not ready while draining
    yield* Effect.addFinalizer(() => Effect.sync(() => (ready = false)))

    const address = server.address
    return {
      address: NetAddress.isInetAddress(address)
        ? { host: NetAddress.formatHost(address), port: address.port }
        : { host, port },
      ready: Effect.sync(() => ready),
      certificate: Effect.sync(() => served!)
    }
  })

/** @internal */
export const layer = <R>(
  options: WebhookServer.Options<R>
): Layer.Layer<WebhookServer.WebhookServer, WebhookServer.WebhookServerError, R> =>
  Layer.effect(WebhookServer.WebhookServer, make(options))
