/**
 * The main job in-process (`Main.program` with its argv and environment): the embedded cluster, the cluster modes
 * against a TestApiServer started here (standing in for "your cluster"), and how failures are reported.
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { TestApiServer } from "@reconcile/testkit"
import { Console, Effect, Exit, Fiber, Layer } from "effect"
import { TestConsole } from "effect/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Main } from "../src/index.js"
import { Greeting, operator, samples } from "./fixtures/greeting.js"

/** Runs the program in the background with a console of its own. */
const start = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const console = yield* TestConsole.make
    const fiber = yield* Main.program(operator, { argv, env: { LOG_LEVEL: "error", ...env }, samples }).pipe(
      Effect.provideService(Console.Console, console),
      Effect.forkScoped
    )
    const out = Effect.map(console.logLines, (lines) => lines.map(String).join("\n"))
    const err = Effect.map(console.errorLines, (lines) => lines.map(String))
    return { fiber, out, err }
  })

/** Runs the program to its end: the exit code and what it printed. */
const runToEnd = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const program = yield* start(argv, env)
    const code = yield* Fiber.join(program.fiber)
    return { code, out: yield* program.out, err: yield* program.err }
  }))

/** Polls (real time) until `check` holds. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = 20) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      if (yield* check) return
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

const clientOf = (kubeconfig: string) => Layer.provide(KubeClient.layer, Kube.layerFromFile(kubeconfig))

const isReady = (g: Greeting) => g.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true

const greeting = (name: string, namespace: string) => ({
  apiVersion: Greeting.apiVersion,
  kind: Greeting.kind,
  metadata: { name, namespace },
  spec: { message: "hi" }
})

describe("Main.program: embedded", () => {
  it.live(
    "--namespace creates the namespace, the sample goes there and becomes Ready; KUBECONFIG is ignored with one " +
      "line; the private kubeconfig is gone once the program stops",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const program = yield* start(["--namespace", "demo"], { KUBECONFIG: "/home/someone/.kube/production" })
        yield* eventually(
          "the sample is Ready and Try it printed",
          Effect.map(program.out, (o) => o.includes("Try it"))
        )
        const out = yield* program.out
        assert.include(out, "Installed CustomResourceDefinition greetings.example.com")
        assert.include(out, "Created namespace demo")
        assert.include(out, "Applied Greeting demo/hello")
        assert.include(out, "✓ demo/hello is Ready")
        const kubeconfig = /KUBECONFIG=(\S+) kubectl get greetings -n demo/.exec(out)?.[1]
        assert.isDefined(kubeconfig, out)

        const err = yield* program.err
        assert.strictEqual(err.length, 1, err.join("\n"))
        assert.include(err[0], "KUBECONFIG is set but ignored")
        assert.include(err[0], `npm start -- --kubeconfig "$KUBECONFIG"`)

        // private: a directory only its owner can enter
        const dir = path.dirname(kubeconfig!)
        assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
        const client = clientOf(kubeconfig!)
        yield* Effect.gen(function*() {
          const ns = yield* KubeClient.get(Resource.Namespace, "demo")
          assert.strictEqual(ns.metadata?.name, "demo")
          assert.isTrue(isReady(yield* KubeClient.get(Greeting, "hello", { namespace: "demo" })))
        }).pipe(Effect.provide(client))

        yield* Fiber.interrupt(program.fiber)
        assert.isFalse(fs.existsSync(dir), "the kubeconfig's directory is removed")
      })),
    { timeout: 40_000 }
  )
})

describe("Main.program: errors", () => {
  it.live("an invalid option: one error line, exit code 2, nothing started", () =>
    Effect.gen(function*() {
      const result = yield* runToEnd(["--install-crds"])
      assert.strictEqual(result.code, 2)
      assert.deepStrictEqual(result.err.length, 1)
      assert.match(result.err[0]!, /^error: --install-crds does nothing on the embedded cluster/)
      assert.strictEqual(result.out, "")
    }))

  it("Main.teardown: the program's code, 0 after an interrupt (SIGINT/SIGTERM), 1 for anything else", () => {
    const codes: Array<number> = []
    Main.teardown(Exit.succeed(2), (code) => codes.push(code))
    Main.teardown(Exit.succeed(0), (code) => codes.push(code))
    Main.teardown(Exit.interrupt(1), (code) => codes.push(code))
    Main.teardown(Exit.die(new Error("boom")), (code) => codes.push(code))
    assert.deepStrictEqual(codes, [2, 0, 0, 1])
  })

  it.live("--help: the usage, exit code 0", () =>
    Effect.gen(function*() {
      const result = yield* runToEnd(["--help"])
      assert.strictEqual(result.code, 0)
      assert.include(result.out, "USAGE\n  npm start -- [flags]")
      assert.include(result.out, "greeting-operator")
    }))

  it.live("a start failure is printed once as `error: …`, exit code 1", () =>
    Effect.gen(function*() {
      const result = yield* runToEnd(["--kubeconfig", "/nonexistent/kubeconfig"])
      assert.strictEqual(result.code, 1)
      assert.deepStrictEqual(result.err, ["error: kubeconfig /nonexistent/kubeconfig: file not found"])
    }))

  it.live("--in-cluster outside a Pod: says so, and what to use instead", () =>
    Effect.gen(function*() {
      const result = yield* runToEnd(["--in-cluster"])
      assert.strictEqual(result.code, 1)
      assert.strictEqual(result.err.length, 1)
      assert.include(result.err[0], "kubeconfig in-cluster: no service account token")
      assert.include(result.err[0], "--kubeconfig PATH or --context NAME")
    }))

  it.live("--context NAME that the kubeconfig does not define: the error lists those it does", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const result = yield* runToEnd(["--context", "production"], { KUBECONFIG: server.kubeconfigPath })
      assert.strictEqual(result.code, 1)
      assert.strictEqual(result.err.length, 1)
      assert.include(result.err[0], `context "production" is not defined (contexts: testkit)`)
    }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))))
})

describe("Main.program: a cluster", () => {
  it.live(
    "without the CRD (and no --install-crds): the fix, printed once; exit code 1 at once",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const started = Date.now()
        const result = yield* runToEnd(["--kubeconfig", server.kubeconfigPath])
        assert.strictEqual(result.code, 1)
        assert.strictEqual(result.err.length, 1, result.err.join("\n"))
        assert.match(result.err[0]!, /^error: the CustomResourceDefinition greetings\.example\.com .*is not installed/)
        assert.include(result.err[0], "--install-crds")
        assert.isBelow(Date.now() - started, 15_000, "not after a cache-sync timeout")
      }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 30_000 }
  )

  it.live(
    "--namespace NS that does not exist on the cluster: the fix, printed once; exit code 1",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const result = yield* runToEnd(["--kubeconfig", server.kubeconfigPath, "--install-crds", "--namespace", "nope"])
        assert.strictEqual(result.code, 1)
        assert.strictEqual(result.err.length, 1, result.err.join("\n"))
        assert.include(result.err[0], `namespace "nope" does not exist`)
        assert.include(result.err[0], "kubectl create namespace nope")
      }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 30_000 }
  )

  it.live(
    "--kubeconfig with --install-crds and --namespace: installs the CRD and reconciles that namespace only",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          yield* server.cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } })
          const program = yield* start([
            "--kubeconfig",
            server.kubeconfigPath,
            "--install-crds",
            "--namespace",
            "team-a"
          ])
          const client = clientOf(server.kubeconfigPath)
          yield* eventually(
            "the CRD is installed",
            Effect.map(
              Effect.option(server.cluster.get({
                apiVersion: "apiextensions.k8s.io/v1",
                kind: "CustomResourceDefinition",
                name: "greetings.example.com"
              })),
              (crd) => crd._tag === "Some"
            )
          )
          yield* Effect.gen(function*() {
            yield* eventually(
              "the CRD is served",
              Effect.as(KubeClient.list(Greeting, { namespace: "default" }), true).pipe(
                Effect.catch(() => Effect.succeed(false))
              )
            )
            yield* KubeClient.create(Greeting, greeting("mine", "team-a"), { namespace: "team-a" })
            yield* KubeClient.create(Greeting, greeting("other", "default"), { namespace: "default" })
            yield* eventually(
              "the greeting in team-a is Ready",
              Effect.map(KubeClient.get(Greeting, "mine", { namespace: "team-a" }), isReady)
            )
            // one more reconcile round trip in team-a: by then the other namespace's object would have been reconciled
            yield* KubeClient.create(Greeting, greeting("later", "team-a"), { namespace: "team-a" })
            yield* eventually(
              "the later greeting is Ready",
              Effect.map(KubeClient.get(Greeting, "later", { namespace: "team-a" }), isReady)
            )
            assert.isFalse(isReady(yield* KubeClient.get(Greeting, "other", { namespace: "default" })))
          }).pipe(Effect.provide(client))
          assert.deepStrictEqual(yield* program.err, [])
          yield* Fiber.interrupt(program.fiber)
        }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false })))
      ),
    { timeout: 40_000 }
  )

  it.live(
    "--context NAME picks that context of $KUBECONFIG; --leader-elect holds the Lease in its namespace",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* TestApiServer.TestApiServer
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-context-"))
          const file = path.join(dir, "kubeconfig")
          // a current context that does not exist: only --context works
          fs.writeFileSync(file, server.kubeconfig.replace(/current-context: .*/, "current-context: broken"))
          const program = yield* start(
            ["--context", "testkit", "--install-crds", "--leader-elect", "--leader-election-namespace", "kube-system"],
            { KUBECONFIG: file }
          )
          yield* eventually(
            "the Lease is held",
            Effect.map(
              Effect.option(server.cluster.get({
                apiVersion: "coordination.k8s.io/v1",
                kind: "Lease",
                name: "greeting-operator",
                namespace: "kube-system"
              })),
              (lease) => lease._tag === "Some"
            )
          )
          yield* Effect.gen(function*() {
            yield* KubeClient.create(Greeting, greeting("hi", "default"), { namespace: "default" })
            yield* eventually(
              "reconciled",
              Effect.map(KubeClient.get(Greeting, "hi", { namespace: "default" }), isReady)
            )
          }).pipe(Effect.provide(clientOf(server.kubeconfigPath)))
          yield* Fiber.interrupt(program.fiber)
          fs.rmSync(dir, { recursive: true, force: true })
        }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false })))
      ),
    { timeout: 40_000 }
  )
})
