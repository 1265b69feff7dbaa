/**
 * The main job and an operator's webhooks (`Operator.make({ webhooks })`): the flags (`--webhook-port`,
 * `--webhook-cert-dir`) and their refusals, in-process; and on a local cluster (the embedded one, or with
 * `RECONCILE_TEST_CLUSTER=real` the real control plane through `--real`), the local wiring end to end —
 * the configurations and the conversion stanza installed with `https://127.0.0.1:<port>` and the run's CA, a
 * defaulter and a validator (which reads the cluster) called by the API server, v1alpha1 objects converted by the
 * webhook, the server's readiness in `/readyz`, and the port closed once the program stops.
 */
import { assert, describe, it } from "@effect/vitest"
import { Admission, Certificates, Kube, KubeClient, Resource } from "@reconcile/kube"
import { TestApiServer } from "@reconcile/testkit"
import { Console, Effect, Exit, Fiber, Layer } from "effect"
import { TestConsole } from "effect/testing"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as tls from "node:tls"
import { Main } from "../src/index.js"
import { operator as greetingOperator } from "./fixtures/greeting.js"
import { Note, NoteV1alpha1, operator } from "./fixtures/notes.js"

const onRealCluster = process.env.RECONCILE_TEST_CLUSTER === "real"

/** Runs the program in the background with a console of its own. */
const start = (o: typeof operator | typeof greetingOperator, argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const console = yield* TestConsole.make
    const fiber = yield* Main.program(o, { argv, env: { LOG_LEVEL: "error" } }).pipe(
      Effect.provideService(Console.Console, console),
      Effect.forkScoped
    )
    const out = Effect.map(console.logLines, (lines) => lines.map(String).join("\n"))
    const err = Effect.map(console.errorLines, (lines) => lines.map(String))
    return { fiber, out, err }
  })

const runToEnd = (o: typeof operator | typeof greetingOperator, argv: ReadonlyArray<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const program = yield* start(o, argv)
    const code = yield* Fiber.join(program.fiber)
    return { code, out: yield* program.out, err: yield* program.err }
  }))

/** Polls (real time) until `check` holds. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = 60) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      if (yield* check) return
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

/** Whether something listens on 127.0.0.1:port. */
const listening = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

/** A port free now on 127.0.0.1 (for a flag that needs a number). */
const freePort = Effect.callback<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The subject alternative names of the certificate served on 127.0.0.1:port ("" when nothing answers TLS). */
const servedNames = (port: number) =>
  Effect.callback<string>((resume) => {
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      const names = socket.getPeerCertificate().subjectaltname ?? ""
      socket.destroy()
      resume(Effect.succeed(names))
    })
    socket.once("error", () => resume(Effect.succeed("")))
  })

describe("Main.program: webhook flags", () => {
  it.effect("--webhook-port and --webhook-cert-dir are parsed; --help lists them", () =>
    Effect.gen(function*() {
      const a = yield* Main.parseArgs(["--in-cluster", "--webhook-port", "9444", "--webhook-cert-dir", "/certs"])
      assert.strictEqual(a.webhookPort, 9444)
      assert.strictEqual(a.webhookCertDir, "/certs")
      const b = yield* Main.parseArgs([])
      assert.strictEqual(b.webhookPort, undefined)
      assert.strictEqual(b.webhookCertDir, undefined)
      const help = Main.usage("notes-operator")
      assert.include(help, "--webhook-port")
      assert.include(help, "--webhook-cert-dir")
    }))

  it.effect("--webhook-cert-dir is refused on a local cluster; a bad --webhook-port is refused", () =>
    Effect.gen(function*() {
      for (const argv of [["--webhook-cert-dir", "/certs"], ["--real", "--webhook-cert-dir", "/certs"]]) {
        const exit = yield* Effect.exit(Main.parseArgs(argv))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.include(String(exit.cause), "--webhook-cert-dir does nothing on")
      }
      const bad = yield* Effect.exit(Main.parseArgs(["--webhook-port", "70000"]))
      assert.isTrue(Exit.isFailure(bad))
    }))

  it.live("a webhook flag for an operator without webhooks: one error line, exit code 2, nothing started", () =>
    Effect.gen(function*() {
      const result = yield* runToEnd(greetingOperator, ["--webhook-port", "9443"])
      assert.strictEqual(result.code, 2)
      assert.strictEqual(result.err.length, 1)
      assert.match(
        result.err[0]!,
        /^error: --webhook-port does nothing: the greeting-operator operator has no webhooks/
      )
      assert.strictEqual(result.out, "")
    }))
})

describe("Main.program on a cluster: the operator's webhooks", () => {
  it.live(
    "managed: the CertificateManager's Secret in the operator's namespace, a certificate naming the Service, " +
      "served and ready in /readyz; the port closes on stop",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* server.cluster.create({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "notes-operator-system" }
        })
        const [port, health] = [yield* freePort, yield* freePort]
        const program = yield* start(operator, [
          "--kubeconfig",
          server.kubeconfigPath,
          "--install-crds",
          "--webhook-port",
          String(port),
          "--health-port",
          String(health)
        ])
        yield* eventually(
          "/readyz answers 200",
          Effect.promise(() => fetch(`http://127.0.0.1:${health}/readyz`).then((r) => r.status === 200, () => false))
        )
        const names = yield* servedNames(port)
        assert.include(names, "DNS:notes-operator-webhook.notes-operator-system.svc")
        const secret = yield* KubeClient.get(Resource.Secret, "notes-operator-webhook-tls", {
          namespace: "notes-operator-system"
        }).pipe(Effect.provide(Layer.provide(KubeClient.layer, Kube.layerFromFile(server.kubeconfigPath))))
        assert.strictEqual(secret.type, "kubernetes.io/tls")
        yield* Fiber.interrupt(program.fiber)
        assert.isFalse(yield* listening(port))
      })).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 60_000 }
  )

  it.live(
    "--leader-elect while another replica holds the Lease: this replica serves the webhooks all the same",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        yield* server.cluster.create({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "notes-operator-system" }
        })
        const now = new Date().toISOString().replace("Z", "000Z")
        yield* server.cluster.create({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: "notes-operator", namespace: "notes-operator-system" },
          spec: { holderIdentity: "the-leader", leaseDurationSeconds: 3600, acquireTime: now, renewTime: now }
        })
        const port = yield* freePort
        const program = yield* start(operator, [
          "--kubeconfig",
          server.kubeconfigPath,
          "--install-crds",
          "--leader-elect",
          "--leader-election-namespace",
          "notes-operator-system",
          "--webhook-port",
          String(port)
        ])
        yield* eventually("the server answers TLS", Effect.map(servedNames(port), (n) => n !== ""))
        assert.include(yield* servedNames(port), "DNS:notes-operator-webhook.notes-operator-system.svc")
        const lease = yield* server.cluster.get({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          name: "notes-operator",
          namespace: "notes-operator-system"
        })
        assert.strictEqual((lease as any).spec.holderIdentity, "the-leader", "this replica does not lead")
        yield* Fiber.interrupt(program.fiber)
      })).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 60_000 }
  )

  it.live(
    "--webhook-cert-dir: the directory's certificate is served, and no Secret is made",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-certs-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const ca = Certificates.issue({ commonName: "test-ca", ca: true })
        const serving = Certificates.issue({ commonName: "hooks", dnsNames: ["from-dir.example"], issuer: ca })
        fs.writeFileSync(path.join(dir, "tls.crt"), serving.cert)
        fs.writeFileSync(path.join(dir, "tls.key"), serving.key, { mode: 0o600 })
        const port = yield* freePort
        const program = yield* start(operator, [
          "--kubeconfig",
          server.kubeconfigPath,
          "--install-crds",
          "--webhook-port",
          String(port),
          "--webhook-cert-dir",
          dir
        ])
        yield* eventually("the server answers TLS", Effect.map(servedNames(port), (n) => n !== ""))
        assert.include(yield* servedNames(port), "DNS:from-dir.example")
        const secrets = yield* KubeClient.list(Resource.Secret, {}).pipe(
          Effect.provide(Layer.provide(KubeClient.layer, Kube.layerFromFile(server.kubeconfigPath)))
        )
        assert.isFalse(secrets.items.some((s) => s.metadata?.name === "notes-operator-webhook-tls"))
        yield* Fiber.interrupt(program.fiber)
      })).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 60_000 }
  )
})

// The same on both clusters: the main job on its embedded cluster (`npm test`), and with `--real` on the real control
// plane (`npm run test:envtest`); each API server calls the main job's webhooks, conversion included.
describe("Main.program on a local cluster: the operator's webhooks", () => {
  it.live(
    "configurations and conversion installed for 127.0.0.1; kube-apiserver defaults, denies and converts " +
      "through the main job's server; /readyz counts it; it stops with the program",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const program = yield* start(operator, [...(onRealCluster ? ["--real"] : []), "--namespace", "notes"])
        yield* eventually("Try it printed", Effect.map(program.out, (o) => o.includes("Try it")), 90)
        const out = yield* program.out
        assert.include(out, "Installed MutatingWebhookConfiguration notes-operator-mutating")
        assert.include(out, "Installed ValidatingWebhookConfiguration notes-operator-validating")
        assert.include(out, "Installed the conversion webhook of CustomResourceDefinition notes.notes.example.com")
        const port = Number(/Webhooks served on https:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1])
        assert.isTrue(port > 0, out)
        const kubeconfig = /KUBECONFIG=(\S+) kubectl/.exec(out)?.[1]
        assert.isDefined(kubeconfig, out)
        const health = /Health: (\S+)/.exec(out)?.[1]
        assert.isDefined(health, out)

        yield* Effect.gen(function*() {
          // the configurations point at the server, with the run's CA
          const mutating = yield* KubeClient.get(Admission.MutatingWebhookConfiguration, "notes-operator-mutating")
          const entry = mutating.webhooks[0] as { readonly clientConfig: { url: string; caBundle: string } }
          assert.strictEqual(entry.clientConfig.url, `https://127.0.0.1:${port}/mutate-notes-example-com-v1-note`)
          assert.isTrue(entry.clientConfig.caBundle.length > 0)

          // defaulted by the mutating webhook
          yield* KubeClient.create(Note, {
            apiVersion: Note.apiVersion,
            kind: Note.kind,
            metadata: { name: "first", namespace: "notes" },
            spec: { message: "hi" }
          })
          const first = yield* KubeClient.get(Note, "first", { namespace: "notes" })
          assert.strictEqual(first.spec.priority, 1)

          // denied by the validator (which read the namespace through its KubeClient)
          const denied = yield* Effect.exit(
            KubeClient.create(Note, {
              apiVersion: Note.apiVersion,
              kind: Note.kind,
              metadata: { name: "no", namespace: "notes" },
              spec: { message: "forbidden" }
            })
          )
          assert.isTrue(Exit.isFailure(denied))
          assert.include(String(Exit.isFailure(denied) ? denied.cause : ""), "this message is forbidden")

          // written as v1alpha1: converted to v1 by the webhook (and defaulted, as a v1 object)
          yield* KubeClient.create(NoteV1alpha1, {
            apiVersion: NoteV1alpha1.apiVersion,
            kind: NoteV1alpha1.kind,
            metadata: { name: "old", namespace: "notes" },
            spec: { text: "from v1alpha1" }
          })
          const old = yield* KubeClient.get(Note, "old", { namespace: "notes" })
          assert.strictEqual(old.spec.message, "from v1alpha1")
          assert.strictEqual(old.spec.priority, 1)
          const back = yield* KubeClient.get(NoteV1alpha1, "first", { namespace: "notes" })
          assert.strictEqual(back.spec.text, "hi")

          // the controller runs on the stored version
          yield* eventually(
            "the Note is Ready",
            Effect.map(
              KubeClient.get(Note, "first", { namespace: "notes" }),
              (n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
            )
          )
        }).pipe(Effect.provide(Layer.provide(KubeClient.layer, Kube.layerFromFile(kubeconfig!))))

        // the Manager's /readyz: every runnable, the webhook server included, is ready
        const ready = yield* Effect.promise(() => fetch(health!).then((r) => r.status))
        assert.strictEqual(ready, 200)
        assert.isTrue(yield* listening(port))

        yield* Fiber.interrupt(program.fiber)
        assert.isFalse(yield* listening(port), "the webhook server is closed once the program stops")
      })),
    { timeout: 180_000 }
  )
})
