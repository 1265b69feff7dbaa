/**
 * An `HttpClient` answered by the test server's request handler in process:
 * no sockets, no TLS, the same routing, Status bodies and watch lines as over
 * HTTPS. The handler runs in the calling fiber and its writes go to a `Queue`
 * the response body streams from, so nothing waits on a promise: a
 * `TestClock` sees every step (a watcher woken by `TestClock.adjust` lists,
 * watches and hands its events on before `adjust` returns). `TestKube` is
 * `Kube.fromHttpClient` over this client: one client, whether the server is
 * in this process or not.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { constTrue } from "effect/Function"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as UrlParams from "effect/http/UrlParams"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { OutgoingHttpHeaders } from "node:http"
import type * as Exchange from "./http/exchange.js"
import type { Handler } from "./http/server.js"

type Listener = (...args: ReadonlyArray<never>) => void

/** Node-style listeners; `close` and `finish` fire once. */
class Events {
  private readonly listeners = new Map<string, Array<Listener>>()
  private readonly fired = new Set<string>()
  on(event: string, listener: Listener): this {
    const list = this.listeners.get(event)
    if (list === undefined) this.listeners.set(event, [listener])
    else list.push(listener)
    return this
  }
  emit(event: string): void {
    if (this.fired.has(event)) return
    this.fired.add(event)
    for (const listener of this.listeners.get(event) ?? []) (listener as () => void)()
  }
}

/** The request: its body goes to `data` and `end` listeners as they are added (in that order, synchronously). */
class MemoryRequest extends Events implements Exchange.Request {
  readonly socket: { destroy(): void }
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Exchange.Headers,
    private readonly body: Uint8Array,
    destroy: () => void
  ) {
    super()
    this.socket = { destroy }
  }
  override on(event: string, listener: Listener): this {
    if (event === "data") {
      if (this.body.length > 0) (listener as (chunk: Buffer) => void)(Buffer.from(this.body))
      return this
    }
    if (event === "end") {
      ;(listener as () => void)()
      return this
    }
    return super.on(event, listener)
  }
}

interface Head {
  readonly status: number
  readonly headers: Headers.Headers
}

type Body = Queue.Queue<Uint8Array, HttpClientError.HttpClientError | Cause.Done>

/**
 * The response: what the handler writes before it returns is kept in `chunks` (most answers end there: no queue,
 * no stream machinery); a response still open when the handler returns (a watch, a followed log) gets a `queue`
 * that the held chunks and every later write, end or reset go to.
 */
class MemoryResponse extends Events implements Exchange.Response {
  statusCode = 200
  headersSent = false
  ended = false
  head: Head | undefined
  readonly chunks: Array<Uint8Array> = []
  failure: HttpClientError.HttpClientError | undefined
  queue: Body | undefined
  private readonly pending = new Map<string, string | number | ReadonlyArray<string>>()
  readonly socket = { setNoDelay: () => undefined }
  constructor(readonly req: MemoryRequest) {
    super()
  }
  /** From now on the body streams through `queue`. */
  open(queue: Body): void {
    this.queue = queue
    Queue.offerAllUnsafe(queue, this.chunks)
    this.chunks.length = 0
    if (this.failure !== undefined) Queue.failCauseUnsafe(queue, Cause.fail(this.failure))
    else if (this.ended) Queue.endUnsafe(queue)
  }
  setHeader(name: string, value: string | number | ReadonlyArray<string>): this {
    this.pending.set(name.toLowerCase(), value)
    return this
  }
  getHeader(name: string): string | number | ReadonlyArray<string> | undefined {
    return this.pending.get(name.toLowerCase())
  }
  writeHead(code: number, headers: OutgoingHttpHeaders = {}): this {
    if (this.headersSent) return this
    this.statusCode = code
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value)
    this.flushHeaders()
    return this
  }
  flushHeaders(): void {
    if (this.headersSent) return
    this.headersSent = true
    const headers: Record<string, string> = {}
    for (const [name, value] of this.pending) {
      headers[name] = Array.isArray(value) ? (value as ReadonlyArray<string>).join(", ") : String(value)
    }
    this.head = { status: this.statusCode, headers: Headers.fromInput(headers) }
  }
  write(chunk: string | Uint8Array, encoding?: BufferEncoding): boolean {
    if (this.ended) return false
    this.flushHeaders()
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, encoding ?? "utf8") : chunk
    if (bytes.length === 0) return true
    if (this.queue !== undefined) Queue.offerUnsafe(this.queue, bytes)
    else this.chunks.push(bytes)
    return true
  }
  end(chunk?: string | Uint8Array, encoding?: BufferEncoding): this {
    if (this.ended) return this
    if (chunk !== undefined) this.write(chunk, encoding)
    this.flushHeaders()
    this.ended = true
    if (this.queue !== undefined) Queue.endUnsafe(this.queue)
    this.emit("finish")
    this.emit("close")
    this.req.emit("close")
    return this
  }
  /** The connection is gone (the client hung up, or the server dropped it): both sides see `close`. */
  hangUp(error?: HttpClientError.HttpClientError): void {
    if (this.ended) return
    this.ended = true
    this.failure = error
    if (this.queue !== undefined) {
      if (error !== undefined) Queue.failCauseUnsafe(this.queue, Cause.fail(error))
      else Queue.endUnsafe(this.queue)
    }
    this.emit("close")
    this.req.emit("close")
  }
}

const transportError = (request: HttpClientRequest.HttpClientRequest, description: string) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description }) })

/** An answer of the handler as an `HttpClientResponse`, its body read from the queue the handler writes. */
class InProcessResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpIncomingMessage.TypeId] = HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId] = HttpClientResponse.TypeId
  readonly cookies = Cookies.empty
  readonly remoteAddress = Option.none<string>()
  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly url: string,
    private readonly head: Head,
    /** The whole body when the handler had ended it, else the queue it streams through. */
    private readonly body: ReadonlyArray<Uint8Array> | Body
  ) {
    super()
  }
  get status(): number {
    return this.head.status
  }
  get headers(): Headers.Headers {
    return this.head.headers
  }
  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    return Array.isArray(this.body) ? Stream.fromIterable(this.body) : Stream.fromQueue(this.body as Body)
  }
  private get bytes(): Effect.Effect<Buffer, HttpClientError.HttpClientError> {
    return Array.isArray(this.body)
      ? Effect.succeed(Buffer.concat(this.body))
      : Effect.map(Stream.runCollect(this.stream), (chunks) => Buffer.concat(chunks))
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return Effect.map(
      this.bytes,
      (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    )
  }
  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return Effect.map(this.bytes, (bytes) => bytes.toString("utf8"))
  }
  get json(): Effect.Effect<never, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => JSON.parse(text) as never,
        catch: (cause) =>
          new HttpClientError.HttpClientError({
            reason: new HttpClientError.DecodeError({ request: this.request, response: this, cause })
          })
      }))
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }
  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.DecodeError({ request: this.request, response: this, description: "no form data" })
      })
    )
  }
  get upgrade(): Effect.Effect<never, HttpClientError.HttpClientError> {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.StatusCodeError({
          request: this.request,
          response: this,
          description: "the in-process server upgrades no connection"
        })
      })
    )
  }
  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, { _id: "HttpClientResponse", status: this.status })
  }
  pipe() {
    return pipeArguments(this, arguments)
  }
}

const bodyOf = (
  request: HttpClientRequest.HttpClientRequest
): { readonly bytes: Uint8Array; readonly type?: string } => {
  const body = request.body
  switch (body._tag) {
    case "Uint8Array":
      return { bytes: body.body, type: body.contentType }
    case "Raw":
      return {
        bytes: typeof body.body === "string" ? Buffer.from(body.body) : body.body as Uint8Array,
        ...(body.contentType === undefined ? {} : { type: body.contentType })
      }
    default:
      return { bytes: new Uint8Array(0) }
  }
}

/**
 * The client: each request is one run of `handler.handle` in the calling
 * fiber; the response is returned once the handler has written its head, and
 * its body streams as the handler writes it (a watch stays open until either
 * side ends it: interrupting the stream hangs up; a dropped connection fails
 * the stream as a reset socket does).
 *
 * @internal
 */
export const httpClient = (handler: Handler): HttpClient.HttpClient =>
  HttpClient.transform(
    inProcess(handler),
    // no client span per request: there is no network to trace, and a span costs as much as the request
    (effect) => Effect.provideService(effect, HttpClient.TracerDisabledWhen, constTrue)
  )

const inProcess = (handler: Handler): HttpClient.HttpClient =>
  HttpClient.make((request, url, signal) =>
    Effect.gen(function*() {
      const { bytes, type } = bodyOf(request)
      const headers: Record<string, string> = { ...request.headers }
      if (type !== undefined && headers["content-type"] === undefined) headers["content-type"] = type
      const req = new MemoryRequest(request.method, url.pathname + url.search, headers, bytes, () => {
        // the server dropped the connection: the client sees a reset, before any answer or mid-body
        res.hangUp(transportError(request, "socket hang up (the server dropped the connection)"))
      })
      const res = new MemoryResponse(req)
      const abort = (): void => res.hangUp()
      signal.addEventListener("abort", abort, { once: true })
      yield* handler.handle(req, res)
      if (res.head === undefined) {
        res.hangUp()
        return yield* transportError(request, "socket hang up (the server answered nothing)")
      }
      if (res.ended && res.failure === undefined) return new InProcessResponse(request, url.href, res.head, res.chunks)
      const body: Body = yield* Queue.unbounded<Uint8Array, HttpClientError.HttpClientError | Cause.Done>()
      res.open(body)
      return new InProcessResponse(request, url.href, res.head, body)
    })
  )
