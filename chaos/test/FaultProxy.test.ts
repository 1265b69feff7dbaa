/**
 * The fault proxy over real sockets on 127.0.0.1: bytes arrive intact unless a fault says otherwise; fragments
 * reach a TLS client's plaintext in pieces of at most 7 bytes, split inside UTF-8 characters; a reset cuts a
 * response after part of it; a stall holds then delivers; a blackhole never delivers; latency delays; a partition
 * holds every connection of one tagged listener, new ones too, and no other.
 */
import { selfSigned } from "@reconcile/kube/Certificates"
import * as net from "node:net"
import * as tls from "node:tls"
import { afterEach, describe, expect, it } from "vitest"
import { FaultProxy } from "../FaultProxy.js"

const serverCert = selfSigned()
const proxyCert = selfSigned()

/** Multibyte text: 2, 3 and 4 byte UTF-8 sequences. */
const text = "déjà 日本語 🚀🔥 Ελληνικά ".repeat(40)

interface Upstream {
  readonly port: number
  /** What the upstream received. */
  readonly received: () => string
  readonly close: () => Promise<void>
}

/** An upstream that answers every received byte run with `reply` (plain TCP or TLS). */
const upstream = async (secure: boolean, reply: string, later?: string): Promise<Upstream> => {
  let received = ""
  const sockets = new Set<net.Socket>()
  const onSocket = (socket: net.Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("utf8")
      if (!received.endsWith("\n")) return
      socket.write(reply)
      // a streaming answer: more bytes with nothing asked
      if (later !== undefined) setTimeout(() => socket.writable && socket.write(later), 200)
    })
  }
  const server = secure
    ? tls.createServer({ cert: serverCert.cert, key: serverCert.key }, onSocket)
    : net.createServer(onSocket)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    port: (server.address() as net.AddressInfo).port,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}

/** A client of a proxy listener; collects the pieces it receives. */
const client = (proxy: FaultProxy, kind: "passthrough" | "terminating", port = proxy.port(kind)) => {
  const pieces: Array<Buffer> = []
  const socket = kind === "terminating"
    ? tls.connect({ host: "127.0.0.1", port, ca: proxyCert.cert })
    : tls.connect({ host: "127.0.0.1", port, ca: serverCert.cert })
  socket.on("data", (chunk: Buffer) => pieces.push(chunk))
  const closed = new Promise<{ error: string | undefined }>((resolve) => {
    let error: string | undefined
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message
    })
    socket.on("close", () => resolve({ error }))
  })
  const connected = new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()))
  const text = () => Buffer.concat(pieces).toString("utf8")
  const receivedAtLeast = async (bytes: number, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs
    while (Buffer.concat(pieces).length < bytes && Date.now() < deadline) await sleep(10)
  }
  return { socket, pieces, closed, connected, text, receivedAtLeast }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanup.reverse()) await c()
  cleanup = []
})

/** An upstream TLS server (as the API server is) and a proxy in front of it. */
const setup = async (reply: string) => {
  const up = await upstream(true, reply)
  const proxy = new FaultProxy({
    upstream: { port: () => up.port, ca: () => serverCert.cert },
    certificate: proxyCert,
    seed: 1
  })
  await proxy.start()
  cleanup.push(() => up.close(), () => proxy.close())
  return { up, proxy }
}

describe("FaultProxy", () => {
  for (const kind of ["passthrough", "terminating"] as const) {
    it(`forwards both ways unchanged (${kind})`, async () => {
      const { proxy, up } = await setup(text)
      const c = client(proxy, kind)
      await c.connected
      c.socket.write("hello ünïcode\n")
      await c.receivedAtLeast(Buffer.byteLength(text))
      expect(c.text()).toBe(text)
      expect(up.received()).toBe("hello ünïcode\n")
      expect(proxy.stats.connections[kind]).toBe(1)
      c.socket.destroy()
    })
  }

  it("fragments plaintext into pieces of 1–7 bytes, split inside UTF-8 characters (terminating)", async () => {
    const { proxy } = await setup(text)
    proxy.window("fragment", "terminating", Date.now() + 10_000)
    const c = client(proxy, "terminating")
    await c.connected
    c.socket.write("go\n")
    const bytes = Buffer.byteLength(text)
    await c.receivedAtLeast(bytes, 10_000)
    expect(c.text()).toBe(text)
    expect(proxy.stats.fragments).toBeGreaterThanOrEqual(Math.ceil(bytes / 7))
    expect(proxy.stats.midCharacterSplits).toBeGreaterThan(10)
    // each fragment is its own TLS record: the client's reads are small
    expect(c.pieces.length).toBeGreaterThan(bytes / 7 / 4)
    // some pieces, decoded alone, end or start inside a character
    expect(c.pieces.filter((p) => p.toString("utf8").includes("\uFFFD")).length).toBeGreaterThan(10)
    expect(Math.max(...c.pieces.map((p) => p.length))).toBeLessThanOrEqual(7 * 8)
    c.socket.destroy()
  })

  it("fragments ciphertext on the pass-through listener; the client still gets the plaintext whole", async () => {
    const { proxy } = await setup(text)
    proxy.window("fragment", "passthrough", Date.now() + 10_000)
    const c = client(proxy, "passthrough")
    await c.connected
    c.socket.write("go\n")
    await c.receivedAtLeast(Buffer.byteLength(text), 10_000)
    expect(c.text()).toBe(text)
    expect(proxy.stats.fragments).toBeGreaterThan(100)
    expect(proxy.stats.midCharacterSplits).toBe(0)
    c.socket.destroy()
  })

  for (const kind of ["passthrough", "terminating"] as const) {
    it(`resets a connection mid-response (${kind})`, async () => {
      const big = "x".repeat(200_000)
      const { proxy } = await setup(big)
      const c = client(proxy, kind)
      await c.connected
      proxy.resetMidResponse(proxy.connections(kind))
      c.socket.write("go\n")
      const { error } = await c.closed
      expect(error).toBe("ECONNRESET")
      expect(Buffer.concat(c.pieces).length).toBeLessThan(big.length)
      expect(proxy.stats.resets).toBe(1)
    })
  }

  it("stalls a connection (held open, nothing forwarded), then delivers what arrived", async () => {
    const { proxy } = await setup("answer\n")
    const c = client(proxy, "terminating")
    await c.connected
    proxy.stall(proxy.connections("terminating"), Date.now() + 400)
    const started = Date.now()
    c.socket.write("go\n")
    await sleep(250)
    expect(c.pieces.length).toBe(0)
    await c.receivedAtLeast(7)
    expect(c.text()).toBe("answer\n")
    expect(Date.now() - started).toBeGreaterThanOrEqual(350)
    expect(c.socket.destroyed).toBe(false)
    c.socket.destroy()
  })

  it("partitions one tagged listener: its open and new connections are held until the deadline, others are not", async () => {
    const { proxy } = await setup("answer\n")
    const port = await proxy.listen("terminating", "replica-0")
    const cut = client(proxy, "terminating", port)
    const other = client(proxy, "terminating")
    await Promise.all([cut.connected, other.connected])
    expect(proxy.tagged("replica-0")).toHaveLength(1)
    const started = Date.now()
    proxy.partition("replica-0", started + 500)
    const opened = client(proxy, "terminating", port)
    await opened.connected
    for (const c of [cut, other, opened]) c.socket.write("go\n")
    await other.receivedAtLeast(7)
    expect(other.text()).toBe("answer\n")
    await sleep(200)
    expect(cut.pieces.length + opened.pieces.length).toBe(0)
    await Promise.all([cut.receivedAtLeast(7), opened.receivedAtLeast(7)])
    expect([cut.text(), opened.text()]).toEqual(["answer\n", "answer\n"])
    expect(Date.now() - started).toBeGreaterThanOrEqual(450)
    // the tagged listener's connections count as the terminating listener's for every other fault
    expect(proxy.connections("terminating")).toHaveLength(3)
    for (const c of [cut, other, opened]) c.socket.destroy()
  })

  it("blackholes a connection: never delivers, until the client closes it", async () => {
    const { proxy, up } = await setup("answer\n")
    const c = client(proxy, "passthrough")
    await c.connected
    proxy.blackhole(proxy.connections("passthrough"))
    c.socket.write("go\n")
    await sleep(300)
    expect(c.pieces.length).toBe(0)
    expect(up.received()).toBe("")
    proxy.calm()
    await sleep(100)
    expect(c.pieces.length).toBe(0)
    expect(proxy.silences()).toMatchObject([{ closed: false, watch: false }])
    c.socket.destroy()
    await c.closed
    await sleep(50)
    expect(proxy.connections("passthrough").length).toBe(0)
    // how long the client took to give up on the silence
    const [silence] = proxy.silences()
    expect(silence?.closed).toBe(true)
    expect(silence?.seconds).toBeGreaterThanOrEqual(0.35)
  })

  it("delays each chunk by the latency window's milliseconds", async () => {
    const { proxy } = await setup("answer\n")
    const c = client(proxy, "terminating")
    await c.connected
    proxy.window("latency", "any", Date.now() + 5000, 200)
    const started = Date.now()
    c.socket.write("go\n")
    await c.receivedAtLeast(7)
    // one delay upstream, one downstream
    expect(Date.now() - started).toBeGreaterThanOrEqual(380)
    expect(proxy.stats.delayedChunks).toBeGreaterThanOrEqual(2)
    c.socket.destroy()
  })

  it("closes the operator's connection when the server is unreachable", async () => {
    const proxy = new FaultProxy({
      upstream: { port: () => 1, ca: () => serverCert.cert },
      certificate: proxyCert,
      seed: 1
    })
    await proxy.start()
    cleanup.push(() => proxy.close())
    const socket = net.connect({ host: "127.0.0.1", port: proxy.port("passthrough") })
    socket.on("error", () => undefined)
    await new Promise((resolve) => socket.on("close", resolve))
    expect(proxy.stats.upstreamFailures).toBe(1)
  })

  it("tells watches from requests: by the request line (terminating), by a streaming answer (pass-through)", async () => {
    const up = await upstream(true, "answer\n", "event\n")
    const proxy = new FaultProxy({
      upstream: { port: () => up.port, ca: () => serverCert.cert },
      certificate: proxyCert,
      seed: 1,
      streamingAfterMs: 100
    })
    await proxy.start()
    cleanup.push(() => up.close(), () => proxy.close())
    const watch = client(proxy, "terminating")
    const request = client(proxy, "terminating")
    await Promise.all([watch.connected, request.connected])
    watch.socket.write("GET /api/v1/pods?watch=true&resourceVersion=1 HTTP/1.1\r\nhost: x\r\n\r\n")
    request.socket.write("GET /api/v1/pods?limit=500 HTTP/1.1\r\nhost: x\r\n\r\n")
    await Promise.all([watch.receivedAtLeast(7), request.receivedAtLeast(7)])
    expect(proxy.watches("terminating").length).toBe(1)

    const streaming = client(proxy, "passthrough")
    await streaming.connected
    streaming.socket.write("go\n")
    await streaming.receivedAtLeast(7)
    expect(proxy.watches("passthrough").length).toBe(0)
    // 200 ms later the server sends more, unasked: a watch
    await streaming.receivedAtLeast(13)
    expect(proxy.watches("passthrough").length).toBe(1)
    for (const c of [watch, request, streaming]) c.socket.destroy()
  })

  it("targets one long-lived connection, or every one", async () => {
    const { proxy } = await setup("answer\n")
    const a = client(proxy, "terminating")
    const b = client(proxy, "passthrough")
    await Promise.all([a.connected, b.connected])
    expect(proxy.targets("any", true, 0).length).toBe(2)
    expect(proxy.targets("terminating", true, 0).length).toBe(1)
    expect(proxy.targets("any", false, 0.99).length).toBe(1)
    proxy.blackhole(proxy.targets("terminating", false, 0))
    expect(proxy.targets("any", true, 0).length).toBe(1)
    a.socket.destroy()
    b.socket.destroy()
  })
})
