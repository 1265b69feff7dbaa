/**
 * The real control plane's bad inputs and faults, without Go or the real binaries (they run in npm test):
 * missing binaries and a missing Go name both ways to get them; the consumer modules are derived from the
 * downloaded go.mod; a binary that crashes at start, one that takes a port already in use and one that never
 * becomes ready are each a typed error carrying the component's own log, and leave no process behind. The
 * control plane itself is tested on the real binaries by EnvtestReal.test.ts (npm run test:envtest).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Envtest from "../src/Envtest.js"
import * as Assets from "../src/internal/envtest/assets.js"

const tmp = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

const failure = <A>(effect: Effect.Effect<A, Envtest.EnvtestError>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    assert(Exit.isFailure(exit), "expected a failure")
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    assert(error !== undefined && error._tag === "Fail", String(exit))
    return error.error as Envtest.EnvtestError
  })

/** A folder of fake binaries: each a Node script (`#!/usr/bin/env node`) with the given body. */
const fakeAssets = (scripts: Record<string, string>) => {
  const dir = tmp("envtest-fake-")
  for (const [name, body] of Object.entries(scripts)) {
    Fs.writeFileSync(Path.join(dir, name), `#!/usr/bin/env node\n${body}\n`, { mode: 0o755 })
  }
  return dir
}

/** An etcd that answers /health on its --listen-client-urls port, as the real one does. */
const healthyEtcd = `
const url = new URL(process.argv.find((a) => a.startsWith("--listen-client-urls=")).split("=")[1])
require("node:http").createServer((req, res) => res.end(JSON.stringify({ health: "true" })))
  .listen(Number(url.port), "127.0.0.1")
`

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("Envtest: finding and building the binaries", () => {
  it("the consumer module replaces every staging module the downloaded go.mod names, with its v0 tag", () => {
    const goMod = [
      "module k8s.io/kubernetes",
      "require (",
      "\tk8s.io/api v0.0.0",
      ")",
      "replace (",
      "\tk8s.io/api => ./staging/src/k8s.io/api",
      "\tk8s.io/client-go => ./staging/src/k8s.io/client-go",
      "\tgithub.com/other/thing => github.com/other/thing v1.2.3",
      ")",
      "replace k8s.io/kms => ./staging/src/k8s.io/kms"
    ].join("\n")
    const staging = Assets.stagingModules(goMod)
    assert.deepStrictEqual(staging, ["k8s.io/api", "k8s.io/client-go", "k8s.io/kms"])
    const consumer = Assets.kubernetesConsumer("1.36.3", staging)
    assert.include(consumer, "require k8s.io/kubernetes v1.36.3")
    assert.include(consumer, "replace k8s.io/client-go => k8s.io/client-go v0.36.3")
    assert.include(consumer, "replace k8s.io/kms => k8s.io/kms v0.36.3")
    assert.include(
      consumer,
      "\tk8s.io/kubernetes/cmd/kube-apiserver\n\tk8s.io/kubernetes/cmd/kube-controller-manager\n"
    )
    assert.notInclude(consumer, "github.com/other/thing")
    assert.include(
      Assets.etcdConsumer("3.6.8"),
      "require go.etcd.io/etcd/server/v3 v3.6.8\n\ntool go.etcd.io/etcd/server/v3"
    )
  })

  it("no binaries: the error names npm run envtest:setup and KUBEBUILDER_ASSETS", () => {
    const cache = tmp("envtest-cache-")
    try {
      Assets.find({ env: { RECONCILE_ENVTEST_CACHE: cache } })
      assert.fail("expected NotFound")
    } catch (e) {
      assert.instanceOf(e, Assets.AssetsError)
      assert.strictEqual(e.reason, "NotFound")
      assert.include(e.message, "npm run envtest:setup")
      assert.include(e.message, "KUBEBUILDER_ASSETS")
      assert.include(e.message, cache)
    }
  })

  it("KUBEBUILDER_ASSETS is taken first; a folder without kube-apiserver and etcd is refused, naming it", () => {
    const dir = fakeAssets({ "kube-apiserver": "", etcd: "" })
    const found = Assets.find({ env: { KUBEBUILDER_ASSETS: dir, RECONCILE_ENVTEST_CACHE: tmp("envtest-cache-") } })
    assert.strictEqual(found.source, "KUBEBUILDER_ASSETS")
    assert.strictEqual(found.kubeApiserver, Path.join(dir, "kube-apiserver"))
    // setup-envtest ships no kube-controller-manager: the control plane then runs without it
    assert.isUndefined(found.kubeControllerManager)
    const empty = tmp("envtest-empty-")
    try {
      Assets.find({ env: { KUBEBUILDER_ASSETS: empty } })
      assert.fail("expected NotFound")
    } catch (e) {
      assert.instanceOf(e, Assets.AssetsError)
      assert.include(e.message, `KUBEBUILDER_ASSETS ${empty} has no executable kube-apiserver and etcd`)
    }
  })

  it.effect("setup without Go: NoGo, naming both ways", () =>
    Effect.gen(function*() {
      const error = yield* Effect.tryPromise({
        try: () =>
          Assets.setup({ env: { GO: "/nonexistent/go", RECONCILE_ENVTEST_CACHE: tmp("envtest-cache-"), PATH: "" } }),
        catch: (e) => e
      }).pipe(Effect.flip)
      assert.instanceOf(error, Assets.AssetsError)
      assert.strictEqual((error as Assets.AssetsError).reason, "NoGo")
      assert.include((error as Assets.AssetsError).message, "install Go 1.26")
      assert.include((error as Assets.AssetsError).message, "KUBEBUILDER_ASSETS")
    }))
})

describe.skipIf(Assets.findGo() === undefined)("Envtest: setup with Go", () => {
  it.effect("a module that cannot be downloaded: DownloadFailed, naming the module and version, nothing cached", () =>
    Effect.gen(function*() {
      const cache = tmp("envtest-cache-")
      const error = yield* Effect.tryPromise({
        try: () =>
          Assets.setup({
            versions: { kubernetes: "1.36.999", etcd: "3.6.8" },
            // no network for Go here: the module proxy is off, so the download fails at once
            env: { ...process.env, RECONCILE_ENVTEST_CACHE: cache, GOPROXY: "off", GOFLAGS: "" }
          }),
        catch: (e) => e
      }).pipe(Effect.flip)
      assert.instanceOf(error, Assets.AssetsError)
      assert.strictEqual((error as Assets.AssetsError).reason, "DownloadFailed")
      assert.include((error as Assets.AssetsError).message, "k8s.io/kubernetes v1.36.999")
      const dir = Assets.cacheDir({ kubernetes: "1.36.999", etcd: "3.6.8" }, { RECONCILE_ENVTEST_CACHE: cache })
      assert.isFalse(Fs.existsSync(Path.join(dir, "versions.json")), "no complete build is recorded")
      assert.isFalse(Fs.existsSync(Path.join(dir, ".lock")), "the lock is released")
    }))
})

describe("Envtest: start failures", () => {
  it.live("a binary that crashes at start: StartFailed with its own log", () =>
    Effect.gen(function*() {
      const assets = fakeAssets({
        etcd: `console.error("etcdmain: invalid flag --bogus"); process.exit(3)`,
        "kube-apiserver": "setInterval(() => {}, 1000)"
      })
      const error = yield* failure(Effect.scoped(Envtest.make({ assets, startTimeout: "10 seconds" })))
      assert.strictEqual(error.reason, "StartFailed")
      assert.strictEqual(error.component, "etcd")
      assert.include(error.detail, "etcd exited during start (3)")
      assert.include(error.message, "etcdmain: invalid flag --bogus")
    }))

  it.live("a port already in use: PortTaken", () =>
    Effect.gen(function*() {
      const assets = fakeAssets({
        etcd: healthyEtcd,
        "kube-apiserver":
          `console.error("failed to listen on 127.0.0.1:6443: listen tcp: bind: address already in use"); process.exit(1)`
      })
      const error = yield* failure(Effect.scoped(Envtest.make({ assets, startTimeout: "10 seconds" })))
      assert.strictEqual(error.reason, "PortTaken")
      assert.strictEqual(error.component, "kube-apiserver")
      assert.include(error.message, "address already in use")
    }))

  it.live("a control plane that never becomes ready: NotReady within the bound, and nothing left running", () =>
    Effect.gen(function*() {
      const pids = Path.join(tmp("envtest-pids-"), "pids")
      const assets = fakeAssets({
        etcd: `require("node:fs").appendFileSync(${JSON.stringify(pids)}, process.pid + "\\n")\n${healthyEtcd}`,
        "kube-apiserver": `require("node:fs").appendFileSync(${
          JSON.stringify(pids)
        }, process.pid + "\\n"); console.log("serving nothing"); setInterval(() => {}, 1000)`
      })
      const started = Date.now()
      const error = yield* failure(Effect.scoped(Envtest.make({ assets, startTimeout: "2 seconds" })))
      assert.strictEqual(error.reason, "NotReady")
      assert.strictEqual(error.component, "kube-apiserver")
      assert.include(error.detail, "was not ready (/readyz) within 2 s")
      assert.include(error.message, "serving nothing")
      assert.isBelow(Date.now() - started, 15_000)
      const started2 = Fs.readFileSync(pids, "utf8").trim().split("\n").map(Number)
      assert.strictEqual(started2.length, 2)
      for (const pid of started2) assert.isFalse(alive(pid), `process ${pid} is still running`)
    }))
})
