/**
 * A TCP fault proxy on 127.0.0.1 between the operators and the API server, with two listeners:
 *
 * - **pass-through**: the TLS bytes are forwarded as they are (the operator verifies the server's own
 *   certificate); faults cut, delay and split ciphertext.
 * - **terminating**: the proxy ends the operator's TLS with its own certificate (a CA the operator's kubeconfig
 *   trusts) and opens its own TLS connection to the server (verifying the server's CA), so faults act on the
 *   plaintext HTTP: 1–7 byte fragments become separate TLS records and reach the client's HTTP and JSON parsers
 *   split anywhere — inside a multibyte UTF-8 character too.
 *
 * Faults, set by the harness at run time:
 * - `reset`: at the next bytes the server sends on the connection, forward part of them, then close the
 *   operator's TCP connection with a RST (and drop the upstream one) — a reset mid-response.
 * - `stall`: hold the connection open and forward nothing, either way, until a deadline; what arrived meanwhile
 *   is delivered afterwards (bounded buffer; reading pauses beyond it).
 * - `blackhole`: forward nothing, ever; bytes are read and dropped so the operator's writes succeed; only the
 *   operator closing its side ends it. The silent-connection case.
 * - windows of `fragment` (1–7 byte pieces, each written on its own) and `latency` (each chunk delivered
 *   `ms` after it arrived) on every matching connection, existing and new.
 *
 * - `partition`: every connection of one tagged listener (a replica's own, {@link FaultProxy.listen}) — open ones
 *   and those opened before the deadline — stalled until a deadline: that replica is cut off from the server
 *   while the others are not.
 *
 * Every wait is bounded by a deadline or by the connection closing; `close()` destroys everything.
 */
import * as net from "node:net"
import * as tls from "node:tls"
import type { Listener } from "./Plan.js"
import { Rng } from "./Plan.js"

/** Where and how to reach the API server; read at each new connection (a restarted server may have a new CA). */
export interface Upstream {
  readonly port: () => number
  readonly ca: () => string
}

/** Options of {@link FaultProxy}. */
export interface Options {
  readonly upstream: Upstream
  /** The terminating listener's certificate and key (PEM); its certificate is the operator's CA. */
  readonly certificate: { readonly cert: string; readonly key: string }
  /** Seeds the proxy's own choices (prefix lengths, fragment sizes). */
  readonly seed: number
  /** Most bytes buffered per direction of a stalled connection before reading pauses (default 4 MiB). */
  readonly maxBuffered?: number | undefined
  /**
   * A pass-through connection counts as a watch once the server sent bytes this long after the operator last
   * sent any (default 1500 ms).
   */
  readonly streamingAfterMs?: number | undefined
}

/** Counters of what the proxy did. */
export interface Stats {
  connections: { passthrough: number; terminating: number }
  bytes: { up: number; down: number }
  resets: number
  stalledConnections: number
  blackholedConnections: number
  fragments: number
  /** Fragment boundaries that fell inside a multibyte UTF-8 character (terminating listener only). */
  midCharacterSplits: number
  delayedChunks: number
  upstreamFailures: number
}

/** A blackholed connection: closed by the operator after `seconds` of silence, or still open (silent so far). */
export interface Silence {
  readonly id: number
  /** Whether it carried a watch when it went silent. */
  readonly watch: boolean
  readonly seconds: number
  readonly closed: boolean
}

type Kind = "passthrough" | "terminating"

interface Window {
  readonly kind: "fragment" | "latency"
  readonly listener: Listener
  readonly until: number
  readonly ms: number
}

interface Queued {
  readonly chunk: Buffer
  readonly arrived: number
}

/** The start of an HTTP/1.1 request; its target (path and query) is group 1. */
const requestLine = /^(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+) HTTP\/1\.[01]\r\n/

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

/** One proxied connection. */
export class Connection {
  /** When a stall ends (0: not stalled). */
  stalledUntil = 0
  blackholed = false
  blackholedAt = 0
  blackholedWatch = false
  resetArmedUntil = 0
  closed = false
  /** When bytes last went up (operator → server) and down. */
  lastUp = 0
  lastDown = 0
  /** Terminating listener: whether the last request seen in plaintext was a watch. */
  watchRequest = false
  upstream: net.Socket | undefined
  /** Called when a stall ends or the connection closes. */
  private wakers: Array<() => void> = []

  constructor(
    readonly id: number,
    readonly kind: Kind,
    readonly opened: number,
    /** The operator's TCP socket (raw, even on the terminating listener: so it can be reset). */
    readonly raw: net.Socket,
    /** The tag of its listener ({@link FaultProxy.listen}); undefined on the two shared listeners. */
    readonly tag: string | undefined,
    /** Where plaintext (terminating) or ciphertext (pass-through) from and to the operator goes. */
    readonly client: net.Socket,
    private readonly streamingAfterMs: number
  ) {}

  /**
   * Whether the connection carries a watch: on the terminating listener, its last request's line says
   * `watch=true`; on the pass-through one (ciphertext), the server went on sending more than 1.5 s after the
   * operator last sent anything — a streaming response, not a request answered at once or an idle connection.
   */
  get watching(): boolean {
    return this.kind === "terminating" ? this.watchRequest : this.lastDown - this.lastUp > this.streamingAfterMs
  }

  /** Resolves once the connection may forward (not stalled) or is closed. */
  async gate(): Promise<void> {
    while (!this.closed && Date.now() < this.stalledUntil) {
      const wait = this.stalledUntil - Date.now()
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait)
        this.wakers.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  wake(): void {
    const wakers = this.wakers
    this.wakers = []
    for (const w of wakers) w()
  }

  /** Ends both sides at once, the operator's with a TCP RST. */
  reset(): void {
    if (this.closed) return
    this.closed = true
    try {
      this.raw.resetAndDestroy()
    } catch {
      this.raw.destroy()
    }
    this.client.destroy()
    this.upstream?.destroy()
    this.wake()
  }

  /** Ends both sides. */
  destroy(): void {
    if (this.closed) return
    this.closed = true
    this.client.destroy()
    this.raw.destroy()
    this.upstream?.destroy()
    this.wake()
  }
}

/** The proxy. */
export class FaultProxy {
  readonly stats: Stats = {
    connections: { passthrough: 0, terminating: 0 },
    bytes: { up: 0, down: 0 },
    resets: 0,
    stalledConnections: 0,
    blackholedConnections: 0,
    fragments: 0,
    midCharacterSplits: 0,
    delayedChunks: 0,
    upstreamFailures: 0
  }
  private readonly open = new Set<Connection>()
  private readonly ended: Array<Silence> = []
  private windows: Array<Window> = []
  private nextId = 1
  private readonly rng: Rng
  private readonly maxBuffered: number
  private servers: Array<net.Server> = []
  private ports: Record<Kind, number> = { passthrough: 0, terminating: 0 }
  /** Tagged listeners' partitions: tag → until (epoch ms). */
  private readonly partitions = new Map<string, number>()

  constructor(private readonly options: Options) {
    this.rng = new Rng(options.seed ^ 0x5eed)
    this.maxBuffered = options.maxBuffered ?? 4 * 1024 * 1024
  }

  /** The port of a listener (after {@link start}). */
  port(kind: Kind): number {
    return this.ports[kind]
  }

  /** Listens on two free ports of 127.0.0.1. */
  async start(): Promise<void> {
    for (const kind of ["passthrough", "terminating"] as const) this.ports[kind] = await this.listen(kind)
  }

  /**
   * Opens one more listener of `kind` on a free port of 127.0.0.1 and returns the port. Its connections count as
   * `kind`'s for every fault; a `tag` (one replica's) also lets {@link partition} cut them alone.
   */
  async listen(kind: Kind, tag?: string): Promise<number> {
    const server = net.createServer({ noDelay: true }, (socket) => this.accept(kind, socket, tag))
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => resolve())
    })
    this.servers.push(server)
    return (server.address() as net.AddressInfo).port
  }

  /** Stops listening and destroys every connection. */
  async close(): Promise<void> {
    for (const c of this.open) c.destroy()
    this.open.clear()
    await Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
    this.servers = []
  }

  /** Open connections of a listener, oldest first. */
  connections(listener: Listener): ReadonlyArray<Connection> {
    return [...this.open].filter((c) => !c.closed && (listener === "any" || c.kind === listener))
  }

  /** Open connections of a listener that carry a watch (see {@link Connection.watching}). */
  watches(listener: Listener): ReadonlyArray<Connection> {
    return this.connections(listener).filter((c) => !c.blackholed && c.watching)
  }

  /**
   * The targets of a connection fault: every open connection of the listener (not blackholed), or one of them —
   * `pick` in [0, 1) chooses among the watches if there are any, else among those open for more than 2 s.
   */
  targets(listener: Listener, all: boolean, pick: number): ReadonlyArray<Connection> {
    const open = this.connections(listener).filter((c) => !c.blackholed)
    if (all || open.length === 0) return open
    const watches = open.filter((c) => c.watching)
    const old = open.filter((c) => Date.now() - c.opened > 2000)
    const from = watches.length > 0 ? watches : old.length > 0 ? old : open
    return [from[Math.floor(pick * from.length)]!]
  }

  /** Resets each connection at the next bytes the server sends on it (within `withinMs`). */
  resetMidResponse(connections: ReadonlyArray<Connection>, withinMs = 15_000): void {
    for (const c of connections) c.resetArmedUntil = Date.now() + withinMs
  }

  /** Stalls each connection until `until` (epoch ms). */
  stall(connections: ReadonlyArray<Connection>, until: number): void {
    for (const c of connections) {
      c.stalledUntil = Math.max(c.stalledUntil, until)
      this.stats.stalledConnections++
    }
  }

  /** Silences each connection for good. */
  blackhole(connections: ReadonlyArray<Connection>): void {
    for (const c of connections) {
      if (c.blackholed) continue
      c.blackholed = true
      c.blackholedAt = Date.now()
      c.blackholedWatch = c.watching
      c.wake()
      this.stats.blackholedConnections++
    }
  }

  /**
   * The blackholed connections: how long each has been (or was, until the operator closed it) silent, and
   * whether it carried a watch when it went silent.
   */
  silences(): ReadonlyArray<Silence> {
    const open = [...this.open].filter((c) => c.blackholed && !c.closed).map((c) => ({
      id: c.id,
      watch: c.blackholedWatch,
      seconds: (Date.now() - c.blackholedAt) / 1000,
      closed: false
    }))
    return [...this.ended, ...open]
  }

  /**
   * Cuts the listener tagged `tag` off until `until` (epoch ms): its open connections and every one it accepts
   * meanwhile forward nothing either way (held open, as a network partition holds TCP connections) until then.
   */
  partition(tag: string, until: number): void {
    this.partitions.set(tag, Math.max(this.partitions.get(tag) ?? 0, until))
    this.stall([...this.open].filter((c) => c.tag === tag && !c.closed), until)
  }

  /** Open connections of the listener tagged `tag`. */
  tagged(tag: string): ReadonlyArray<Connection> {
    return [...this.open].filter((c) => !c.closed && c.tag === tag)
  }

  /** Opens a fragment or latency window on a listener until `until` (epoch ms). */
  window(kind: "fragment" | "latency", listener: Listener, until: number, ms = 0): void {
    this.windows.push({ kind, listener, until, ms })
  }

  /** Ends every window, stall and pending reset (blackholes stay: they are silent until closed). */
  calm(): void {
    this.windows = []
    this.partitions.clear()
    for (const c of this.open) {
      c.stalledUntil = 0
      c.resetArmedUntil = 0
      c.wake()
    }
  }

  private active(kind: Window["kind"], c: Connection): Window | undefined {
    const now = Date.now()
    this.windows = this.windows.filter((w) => w.until > now)
    let found: Window | undefined
    for (const w of this.windows) {
      if (w.kind !== kind || (w.listener !== "any" && w.listener !== c.kind)) continue
      if (found === undefined || w.ms > found.ms) found = w
    }
    return found
  }

  private accept(kind: Kind, raw: net.Socket, tag: string | undefined): void {
    this.stats.connections[kind]++
    raw.setNoDelay(true)
    const client = kind === "terminating"
      ? new tls.TLSSocket(raw, {
        isServer: true,
        cert: this.options.certificate.cert,
        key: this.options.certificate.key,
        ALPNProtocols: ["http/1.1"]
      })
      : raw
    const c = new Connection(this.nextId++, kind, Date.now(), raw, tag, client, this.options.streamingAfterMs ?? 1500)
    this.open.add(c)
    const partitioned = tag === undefined ? 0 : this.partitions.get(tag) ?? 0
    if (partitioned > Date.now()) this.stall([c], partitioned)
    const finish = () => {
      if (c.blackholed && !c.closed) {
        this.ended.push({
          id: c.id,
          watch: c.blackholedWatch,
          seconds: (Date.now() - c.blackholedAt) / 1000,
          closed: true
        })
      }
      c.destroy()
      this.open.delete(c)
    }
    raw.on("close", finish)
    raw.on("error", finish)
    client.on("error", finish)
    const port = this.options.upstream.port()
    const upstream = kind === "terminating"
      ? tls.connect({ host: "127.0.0.1", port, ca: this.options.upstream.ca(), ALPNProtocols: ["http/1.1"] })
      : net.connect({ host: "127.0.0.1", port })
    upstream.setNoDelay(true)
    c.upstream = upstream
    upstream.on("error", () => {
      this.stats.upstreamFailures++
      finish()
    })
    upstream.on("close", () => {
      // a blackholed connection stays silent towards the operator even when the server goes away
      if (!c.blackholed) finish()
    })
    void this.pump(c, client, upstream, "up")
    void this.pump(c, upstream, client, "down")
  }

  /** Forwards one direction, applying the faults; ends when the source ends or the connection closes. */
  private async pump(c: Connection, src: net.Socket, dst: net.Socket, dir: "up" | "down"): Promise<void> {
    const queue: Array<Queued> = []
    let buffered = 0
    let ended = false
    let wake: (() => void) | undefined
    const notify = () => {
      const w = wake
      wake = undefined
      w?.()
    }
    src.on("data", (chunk: Buffer) => {
      if (dir === "up") {
        c.lastUp = Date.now()
        if (c.kind === "terminating") {
          const line = requestLine.exec(chunk.subarray(0, 2048).toString("latin1"))
          if (line !== null) c.watchRequest = /[?&]watch=(true|1)(&|$)/.test(line[1]!)
        }
      } else {
        c.lastDown = Date.now()
      }
      if (c.blackholed) return
      queue.push({ chunk, arrived: Date.now() })
      buffered += chunk.length
      if (buffered > this.maxBuffered) src.pause()
      notify()
    })
    src.on("end", () => {
      ended = true
      notify()
    })
    src.on("close", () => {
      ended = true
      notify()
    })
    const closedWaker = () => notify()
    for (;;) {
      if (c.closed) return
      if (queue.length === 0) {
        if (ended) break
        await new Promise<void>((resolve) => {
          wake = resolve
          // re-check periodically: a blackhole or close may have happened meanwhile
          setTimeout(closedWaker, 1000)
        })
        continue
      }
      if (c.blackholed) {
        queue.length = 0
        buffered = 0
        src.resume()
        continue
      }
      await c.gate()
      if (c.closed || c.blackholed) continue
      const { arrived, chunk } = queue.shift()!
      const latency = this.active("latency", c)
      if (latency !== undefined) {
        const wait = arrived + latency.ms - Date.now()
        if (wait > 0) {
          this.stats.delayedChunks++
          await sleep(wait)
        }
        if (c.closed) return
      }
      if (dir === "down" && c.resetArmedUntil > Date.now()) {
        c.resetArmedUntil = 0
        const prefix = chunk.length > 1 ? 1 + Math.floor(this.rng.next() * (chunk.length - 1)) : 0
        if (prefix > 0) dst.write(chunk.subarray(0, prefix))
        this.stats.bytes.down += prefix
        this.stats.resets++
        // let the prefix leave before the RST
        await tick()
        c.reset()
        return
      }
      if (this.active("fragment", c) !== undefined) {
        await this.fragment(c, dst, chunk)
      } else if (!dst.write(chunk)) {
        // whichever comes first; the other listener is removed (a long connection drains many times)
        await new Promise<void>((resolve) => {
          const done = () => {
            dst.off("drain", done)
            dst.off("close", done)
            resolve()
          }
          dst.once("drain", done)
          dst.once("close", done)
        })
      }
      this.stats.bytes[dir] += chunk.length
      buffered -= chunk.length
      if (buffered <= this.maxBuffered / 4 && src.isPaused()) src.resume()
    }
    if (!c.closed && !(dir === "down" && c.blackholed)) dst.end()
  }

  /** Writes `chunk` in pieces of 1–7 bytes, each on its own turn of the event loop. */
  private async fragment(c: Connection, dst: net.Socket, chunk: Buffer): Promise<void> {
    let offset = 0
    while (offset < chunk.length) {
      if (c.closed) return
      const size = Math.min(chunk.length - offset, 1 + Math.floor(this.rng.next() * 7))
      const end = offset + size
      // a boundary inside a UTF-8 sequence: the next byte is a continuation byte (10xxxxxx)
      if (c.kind === "terminating" && end < chunk.length && (chunk[end]! & 0xc0) === 0x80) {
        this.stats.midCharacterSplits++
      }
      dst.write(chunk.subarray(offset, end))
      this.stats.fragments++
      offset = end
      await tick()
    }
  }
}
