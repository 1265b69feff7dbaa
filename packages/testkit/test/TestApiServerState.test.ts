/**
 * TestApiServer with a state directory: the certificate (the kubeconfig's CA), its key, the token and the port
 * survive a restart, so a client that keeps its kubeconfig (our KubeClient here) goes on working against the
 * restarted server; a partial or damaged state is refused, naming the file.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { selfSigned } from "@reconcile/kube/Certificates"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Resource from "@reconcile/kube/Resource"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { TestApiServer, TestCluster } from "../src/index.js"
import { CERT_FILE, KEY_FILE, loadOrCreate, PORT_FILE, TOKEN_FILE } from "../src/internal/serverState.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "testkit-state-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

const serverIn = (dir: string, options: TestApiServer.Options = {}) =>
  TestApiServer.layer({ stateDir: Path.join(dir, "state"), kubeconfigPath: Path.join(dir, "kubeconfig"), ...options })
    .pipe(Layer.provide(TestCluster.layerWithData({ dataDir: Path.join(dir, "data") })))

const start = (dir: string, options: TestApiServer.Options = {}) =>
  Effect.map(Layer.build(serverIn(dir, options)), Context.get(TestApiServer.TestApiServer))

const startError = (dir: string, options: TestApiServer.Options = {}) => Effect.flip(Effect.scoped(start(dir, options)))

const mode = (file: string) => Fs.statSync(file).mode & 0o777

const fast = { times: 5, base: "10 millis", max: "50 millis" } as const

describe("TestApiServer state directory", () => {
  it.live("a restarted server has the same CA, key, token, port and kubeconfig; a client keeping it carries on", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const firstScope = yield* Scope.make()
      const first = yield* Scope.provide(start(dir), firstScope)
      const client = yield* Effect.map(
        Layer.build(KubeClient.layer.pipe(Layer.provide(Kube.layerFromFile(first.kubeconfigPath, { retry: fast })))),
        Context.get(KubeClient.KubeClient)
      )
      const created = yield* client.create(Resource.ConfigMap, {
        metadata: { name: "kept", namespace: "default" },
        data: { a: "1" }
      })
      yield* Scope.close(firstScope, Exit.void)

      const second = yield* start(dir)
      assert.strictEqual(second.port, first.port)
      assert.strictEqual(second.token, first.token)
      assert.strictEqual(second.certificateAuthority, first.certificateAuthority)
      assert.strictEqual(second.kubeconfig, first.kubeconfig)
      assert.strictEqual(Fs.readFileSync(second.kubeconfigPath, "utf8"), first.kubeconfig)
      // The same client (its kubeconfig loaded once, before the restart) reads and writes the restarted server.
      const read = yield* client.get(Resource.ConfigMap, "kept", { namespace: "default" })
      assert.strictEqual(read.metadata?.uid, created.metadata?.uid)
      assert.strictEqual(read.metadata?.resourceVersion, created.metadata?.resourceVersion)
      yield* client.create(Resource.ConfigMap, { metadata: { name: "after", namespace: "default" } })

      const state = Path.join(dir, "state")
      assert.strictEqual(mode(state), 0o700)
      for (const file of [CERT_FILE, KEY_FILE, TOKEN_FILE, PORT_FILE]) {
        assert.strictEqual(mode(Path.join(state, file)), 0o600)
      }
      assert.strictEqual(Fs.readFileSync(Path.join(state, TOKEN_FILE), "utf8").trim(), first.token)
    }).pipe(Effect.scoped))

  it.live("the recorded port in use: a free port is taken and recorded", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const port = yield* Effect.scoped(Effect.map(start(dir), (s) => s.port))
      const blocker = Net.createServer()
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
      )
      const lines: Array<string> = []
      const moved = yield* start(dir, { log: (line) => lines.push(line) })
      assert.notStrictEqual(moved.port, port)
      assert.include(lines[0], `port ${port} is taken: listening on ${moved.port}`)
      assert.strictEqual(Fs.readFileSync(Path.join(dir, "state", PORT_FILE), "utf8").trim(), String(moved.port))
    }).pipe(Effect.scoped))

  it.live("a partial or damaged state is refused, naming the file; one whose creation never finished starts over", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const state = Path.join(dir, "state")
      yield* Effect.scoped(start(dir))
      const saved = Object.fromEntries(
        [CERT_FILE, KEY_FILE, TOKEN_FILE, PORT_FILE].map((f) => [f, Fs.readFileSync(Path.join(state, f), "utf8")])
      )
      const restore = () => {
        for (const [f, text] of Object.entries(saved)) Fs.writeFileSync(Path.join(state, f), text)
      }
      const refused = (damage: () => void, file: string, pattern: RegExp) =>
        Effect.gen(function*() {
          restore()
          damage()
          const error = yield* startError(dir)
          assert.strictEqual(error._tag, "TestApiServerError")
          if (error._tag !== "TestApiServerError") return
          assert.strictEqual(error.reason, "StateFailed")
          assert.include(error.message, Path.join(state, file))
          assert.match(error.message, pattern)
        })
      yield* refused(() => Fs.rmSync(Path.join(state, KEY_FILE)), KEY_FILE, /missing/)
      yield* refused(() => Fs.writeFileSync(Path.join(state, CERT_FILE), "garbage"), CERT_FILE, /not a PEM certificate/)
      yield* refused(() => Fs.writeFileSync(Path.join(state, KEY_FILE), selfSigned().key), KEY_FILE, /is not the key/)
      yield* refused(
        () => Fs.writeFileSync(Path.join(state, TOKEN_FILE), "two words"),
        TOKEN_FILE,
        /not a bearer token/
      )
      yield* refused(() => Fs.writeFileSync(Path.join(state, PORT_FILE), "http"), PORT_FILE, /not a port/)

      restore()
      Fs.chmodSync(Path.join(state, KEY_FILE), 0o644)
      yield* Effect.scoped(start(dir))
      assert.strictEqual(mode(Path.join(state, KEY_FILE)), 0o600)

      // The token is written last: without it, nothing was handed out yet and a new state is made.
      Fs.rmSync(Path.join(state, TOKEN_FILE))
      const fresh = yield* Effect.scoped(start(dir))
      assert.notStrictEqual(fresh.token, saved[TOKEN_FILE]!.trim())
      assert.notStrictEqual(fresh.certificateAuthority, saved[CERT_FILE])
    }))

  it.effect("an expired certificate is replaced, keeping the token", () =>
    Effect.promise(async () => {
      const dir = tempDir()
      const created = await loadOrCreate(dir)
      assert.strictEqual(created.changed, "created")
      const again = await loadOrCreate(dir)
      assert.strictEqual(again.changed, undefined)
      assert.strictEqual(again.tls.cert, created.tls.cert)
      const later = await loadOrCreate(dir, Date.now() + 2 * 365 * 24 * 60 * 60 * 1000)
      assert.strictEqual(later.changed, "renewed")
      assert.strictEqual(later.token, created.token)
      assert.notStrictEqual(later.tls.cert, created.tls.cert)
      assert.strictEqual(Fs.readFileSync(Path.join(dir, CERT_FILE), "utf8"), later.tls.cert)
    }))

  it.live("a given certificate and token are used; unusable ones fail with InvalidOptions", () =>
    Effect.gen(function*() {
      const tls = selfSigned()
      const server = yield* TestApiServer.make({ tls, token: "given-token" }).pipe(
        Effect.provide(TestCluster.layer)
      )
      assert.strictEqual(server.token, "given-token")
      assert.strictEqual(server.certificateAuthority, tls.cert)
      const badToken = yield* Effect.flip(TestApiServer.make({ token: "a b" }).pipe(Effect.provide(TestCluster.layer)))
      assert.strictEqual(badToken.reason, "InvalidOptions")
      const badKey = yield* Effect.flip(
        TestApiServer.make({ tls: { cert: tls.cert, key: selfSigned().key } }).pipe(Effect.provide(TestCluster.layer))
      )
      assert.strictEqual(badKey.reason, "InvalidOptions")
      assert.include(badKey.message, "tls.key")
    }).pipe(Effect.scoped))
})
