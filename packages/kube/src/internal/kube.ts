import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type * as Https from "node:https"
import type * as Kube from "../Kube.js"
import * as KubeError from "../KubeError.js"
import * as KubeStatus from "../KubeStatus.js"
import * as config from "./config.js"
import type { KubeConfigError } from "./config.js"
import * as diagnose from "./diagnose.js"
import { truncate } from "./errors.js"
import * as requestSpan from "./requestSpan.js"
import * as restClient from "./restClient.js"
import * as retry from "./retry.js"

/** Marks a failure of client-node computing credentials, carried through `TransportError.cause`. */
class CredentialsFailure {
  constructor(readonly cause: unknown) {}
}

interface Tls {
  readonly ca: Buffer | undefined
  readonly cert: Buffer | undefined
  readonly key: Buffer | undefined
  readonly pfx: Buffer | undefined
  readonly passphrase: string | undefined
  readonly servername: string | undefined
  readonly rejectUnauthorized: boolean
}

const asBuffer = (u: unknown): Buffer | undefined =>
  Buffer.isBuffer(u) ? u : typeof u === "string" ? Buffer.from(u) : undefined

const tlsOf = (opts: Https.RequestOptions): Tls => ({
  ca: asBuffer(opts.ca),
  cert: asBuffer(opts.cert),
  key: asBuffer(opts.key),
  pfx: asBuffer(opts.pfx),
  passphrase: opts.passphrase,
  servername: opts.servername,
  // verification stays on unless the kubeconfig says insecure-skip-tls-verify (client-node then sets false)
  rejectUnauthorized: opts.rejectUnauthorized !== false
})

const sameBuffer = (a: Buffer | undefined, b: Buffer | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.equals(b))

const sameTls = (a: Tls, b: Tls): boolean =>
  sameBuffer(a.ca, b.ca) && sameBuffer(a.cert, b.cert) && sameBuffer(a.key, b.key) && sameBuffer(a.pfx, b.pfx) &&
  a.passphrase === b.passphrase && a.servername === b.servername && a.rejectUnauthorized === b.rejectUnauthorized

const defined = <A extends object>(a: A): A =>
  Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as A

const defaultPolicy = (options: Kube.Options): retry.Policy => retry.policy(options.retry)

const parseRetryAfter = (header: string | undefined): Duration.Duration | undefined => {
  if (header === undefined) return undefined
  const seconds = Number(header.trim())
  return Number.isFinite(seconds) && seconds >= 0 ? Duration.seconds(seconds) : undefined
}

const reasonPhrase = (code: number): string | undefined => Http.STATUS_CODES[code]

/**
 * The error of a non-2xx answer: its body's `metav1.Status` when it has one,
 * else a Status made from the code and (truncated) text.
 *
 * @internal
 */
export const statusError = (
  code: number,
  text: string,
  headers: Readonly<Record<string, string | undefined>>,
  request: KubeError.RequestInfo
): KubeError.StatusError => {
  let status: KubeStatus.Status | undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && (parsed as { kind?: unknown }).kind === "Status") {
      status = parsed as KubeStatus.Status
    }
  } catch {
    // not JSON: a proxy's or load balancer's answer
  }
  status ??= {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    code,
    message: text.trim() === "" ? reasonPhrase(code) ?? `HTTP ${code}` : truncate(text.trim())
  }
  return KubeStatus.toError(status, { code, retryAfter: parseRetryAfter(headers["retry-after"]), request })
}

const toTransport =
  (request: KubeError.RequestInfo) => (error: HttpClientError.HttpClientError): KubeError.Transport => {
    // the cause, never the request (whose headers hold the credentials)
    const reason = error.reason
    switch (reason._tag) {
      case "TransportError":
      case "EncodeError":
      case "InvalidUrlError":
        if (reason.cause instanceof CredentialsFailure) {
          return new KubeError.Transport({ reason: "Credentials", request, cause: reason.cause.cause })
        }
        return new KubeError.Transport({ reason: "Request", request, cause: reason.cause ?? reason.description })
      default:
        return new KubeError.Transport({ reason: "Response", request, cause: reason.cause ?? reason.description })
    }
  }

/** @internal */
export const make = (
  loaded: config.Loaded,
  options: Kube.Options
): Effect.Effect<Kube.Kube.Service, KubeConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const resolved = yield* config.resolve(loaded)
    const kc = loaded.kubeConfig
    const proxied = kc.getCurrentCluster()?.proxyUrl !== undefined
    const base = resolved.server.toString().replace(/\/$/, "")
    // what a diagnosis names: the server and, when the client was loaded from a kubeconfig, its context
    const currentContext = loaded.source === "in-cluster" ? undefined : kc.getCurrentContext()

    // One undici dispatcher (and connection pool) per distinct TLS material; a change (a rotated client
    // certificate from an exec plugin) starts a new pool. Every dispatcher is destroyed with the scope.
    // Behind a proxy (`proxy-url`), client-node's own agent (http or SOCKS proxy) carries the requests over node:http.
    const dispatchers: Array<Undici.Dispatcher> = []
    const agents: Array<Http.Agent> = []
    yield* Effect.addFinalizer(() =>
      Effect.andThen(
        Effect.sync(() => agents.forEach((agent) => agent.destroy())),
        Effect.promise(() => Promise.all(dispatchers.map((d) => d.destroy().catch(() => undefined))))
      )
    )
    let current: { readonly tls: Tls; readonly client: HttpClient.HttpClient } | undefined

    const clientFor = (opts: Https.RequestOptions): Effect.Effect<HttpClient.HttpClient> =>
      Effect.suspend(() => {
        const tls = tlsOf(opts)
        if (current !== undefined && sameTls(current.tls, tls)) return Effect.succeed(current.client)
        let make: Effect.Effect<HttpClient.HttpClient>
        if (proxied && opts.agent instanceof Http.Agent) {
          const agent = opts.agent
          agents.push(agent)
          make = Effect.provideService(NodeHttpClient.makeNodeHttp, NodeHttpClient.HttpAgent, {
            http: agent,
            https: agent as Https.Agent
          })
        } else {
          const dispatcher = new Undici.Agent({
            // TCP keep-alive probes after 30 s, as client-node's own dispatcher (cloud load balancers drop idle
            // connections after 60 s)
            connect: defined({ ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 })
          })
          dispatchers.push(dispatcher)
          make = Effect.provideService(NodeHttpClient.makeUndici, NodeHttpClient.Dispatcher, dispatcher)
        }
        return Effect.map(make, (client) => {
          current = { tls, client }
          return client
        })
      })

    const credentials = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.tryPromise({
        try: async () => {
          const opts: Https.RequestOptions = {}
          await kc.applyToHTTPSOptions(opts)
          return opts
        },
        catch: (cause) =>
          new HttpClientError.HttpClientError({
            reason: new HttpClientError.TransportError({ request, cause: new CredentialsFailure(cause) })
          })
      })

    const authenticate = (request: HttpClientRequest.HttpClientRequest, opts: Https.RequestOptions) => {
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(opts.headers ?? {})) {
        if (value === undefined) continue
        headers[name] = Array.isArray(value) ? value.join(", ") : String(value)
      }
      if (typeof opts.auth === "string") headers["Authorization"] = `Basic ${Buffer.from(opts.auth).toString("base64")}`
      return HttpClientRequest.setHeaders(request, headers)
    }

    const httpClient: HttpClient.HttpClient = HttpClient.makeWith<
      HttpClientError.HttpClientError,
      never,
      HttpClientError.HttpClientError,
      never
    >(
      (effect) =>
        Effect.flatMap(effect, (request) =>
          Effect.flatMap(credentials(request), (opts) =>
            Effect.flatMap(clientFor(opts), (client) =>
              client.execute(authenticate(request, opts))))),
      (request) =>
        Effect.succeed(
          request.url.startsWith("/") ? HttpClientRequest.setUrl(request, `${base}${request.url}`) : request
        )
    )

    return yield* fromHttpClient({
      httpClient,
      kubeConfig: kc,
      server: base,
      namespace: resolved.namespace,
      names: {
        server: base,
        context: currentContext === undefined || currentContext === "" ? undefined : currentContext
      }
    }, options)
  })

/**
 * The one request path of every `Kube`: retries, the rate limit, timeouts on
 * Effect's Clock, the rest-client metrics, the mapping of answers to
 * `KubeError`s and their diagnoses, over whichever `HttpClient` carries the
 * requests (undici to a real server, or the in-process test server's handler).
 *
 * @internal
 */
export const fromHttpClient = (transport: Kube.Transport, options: Kube.Options): Effect.Effect<Kube.Kube.Service> =>
  Effect.sync(() => {
    const { httpClient, server: base } = transport
    const userAgent = options.userAgent ?? "reconcile/0.1.0"
    const timeout = Duration.fromInputUnsafe(options.timeout ?? "30 seconds")
    const policy = defaultPolicy(options)
    // client-go's rest client: a token bucket for every attempt but watches, and the rest_client_* metrics
    const bucket = restClient.bucketFor(options.rateLimit)
    const throttle = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      bucket === undefined ? effect : Effect.andThen(bucket.take, effect)
    const metrics = restClient.makeMetrics(restClient.hostOf(base))
    const where: diagnose.DiagnoseContext = transport.names ?? { server: base }
    const diagnosed = (watch: boolean) => (error: KubeError.KubeError) =>
      diagnose.attach(error, watch ? { ...where, watch } : where)

    const build = (req: Kube.Request): HttpClientRequest.HttpClientRequest => {
      const query: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.query ?? {})) {
        if (v !== undefined) {
          query[k] = String(v)
        }
      }
      let request = HttpClientRequest.make(req.method)(req.path, {
        urlParams: query,
        headers: { "user-agent": userAgent },
        accept: req.accept ?? "application/json"
      })
      if (req.body !== undefined) {
        request = HttpClientRequest.bodyText(request, JSON.stringify(req.body), req.contentType ?? "application/json")
      }
      return request
    }

    const timeoutOf = (req: Kube.Request, info: KubeError.RequestInfo) => {
      const duration = req.timeout !== undefined ? Duration.fromInputUnsafe(req.timeout) : timeout
      return Effect.timeoutOrElse({
        duration,
        orElse: () => Effect.fail(KubeError.clientTimeout(duration, info))
      })
    }

    const failOnStatus = (
      response: HttpClientResponse.HttpClientResponse,
      info: KubeError.RequestInfo
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, KubeError.KubeError> =>
      response.status >= 200 && response.status < 300
        ? Effect.succeed(response)
        : response.text.pipe(
          Effect.orElseSucceed(() => ""),
          Effect.flatMap((text) => Effect.fail(statusError(response.status, text, response.headers, info)))
        )

    const request = (req: Kube.Request): Effect.Effect<unknown, KubeError.KubeError> => {
      const info: KubeError.RequestInfo = { method: req.method, path: req.path }
      const http = build(req)
      const attempt = requestSpan.traced(req, httpClient.execute(http)).pipe(
        metrics.countAttempt(req.method),
        Effect.mapError(toTransport(info)),
        Effect.flatMap((response) => failOnStatus(response, info)),
        Effect.flatMap((response) => Effect.mapError(response.text, toTransport(info))),
        timeoutOf(req, info),
        Effect.flatMap((text) =>
          text === "" ? Effect.succeed(undefined) : Effect.try({
            try: () => JSON.parse(text) as unknown,
            catch: (cause) =>
              new KubeError.Decode({
                raw: text,
                issue: `response is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
                request: info
              })
          })
        )
      )
      const idempotent = req.idempotent ?? (req.method === "GET" || req.method === "PUT")
      // the token is taken before the timeout starts, as client-go throttles before it sets its deadline
      return metrics.timeRequest(req.method)(retry.withRetry(throttle(attempt), policy, idempotent)).pipe(
        Effect.mapError(diagnosed(false))
      )
    }

    const stream = (req: Kube.Request): Stream.Stream<Uint8Array, KubeError.KubeError> => {
      const info: KubeError.RequestInfo = { method: req.method, path: req.path }
      const execute = httpClient.execute(build(req))
      const send = (req.query?.watch === true ? requestSpan.untraced(execute) : requestSpan.traced(req, execute)).pipe(
        metrics.countAttempt(req.method),
        Effect.mapError(toTransport(info)),
        Effect.flatMap((response) => failOnStatus(response, info)),
        timeoutOf(req, info)
      )
      // client-go does not rate limit watches (`Request.Watch`); other streamed requests take a token
      const open = req.query?.watch === true ? send : throttle(send)
      const watch = req.query?.watch === true
      return Stream.unwrap(
        Effect.map(
          Effect.mapError(open, diagnosed(watch)),
          (response) => Stream.mapError(response.stream, (e) => diagnosed(watch)(toTransport(info)(e)))
        )
      )
    }

    return {
      kubeConfig: transport.kubeConfig,
      server: base,
      namespace: transport.namespace,
      httpClient,
      request,
      stream
    } satisfies Kube.Kube.Service
  })
