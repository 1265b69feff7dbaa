/**
 * One request and its response, as the test server's handler sees them: the
 * part of Node's `IncomingMessage` and `ServerResponse` it uses. Node's
 * objects are these (the HTTPS server); so are the in-process ones of
 * `TestKube` (`internal/inProcess.ts`), which carry no socket.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http"

/** Request headers by lower-case name, as Node's. @internal */
export type Headers = IncomingHttpHeaders

/** @internal */
export interface Request {
  readonly method?: string | undefined
  readonly url?: string | undefined
  readonly headers: Headers
  on(event: "data", listener: (chunk: Buffer) => void): unknown
  on(event: "end" | "close", listener: () => void): unknown
  on(event: "error", listener: (error: Error) => void): unknown
  /** Destroying it drops the connection (a fault). */
  readonly socket: { destroy(): unknown }
}

/** @internal */
export interface Response {
  readonly req: Request
  readonly headersSent: boolean
  readonly statusCode: number
  writeHead(code: number, headers?: OutgoingHttpHeaders): unknown
  setHeader(name: string, value: string | number | ReadonlyArray<string>): unknown
  getHeader(name: string): string | number | ReadonlyArray<string> | undefined
  write(chunk: string | Uint8Array, encoding?: BufferEncoding): unknown
  end(chunk?: string | Uint8Array, encoding?: BufferEncoding): unknown
  flushHeaders(): void
  on(event: "close" | "finish", listener: () => void): unknown
  readonly socket?: { setNoDelay(noDelay?: boolean): unknown } | null | undefined
}
