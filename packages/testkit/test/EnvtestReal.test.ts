/**
 * The real control plane itself (`npm run test:envtest`; skipped by npm test): it starts on the built binaries,
 * reports its version, writes a 0600 kubeconfig kubectl can use, and leaves nothing behind — neither when its
 * scope closes nor when the process that started it is killed with SIGKILL.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Envtest from "../src/Envtest.js"

const real = process.env.RECONCILE_TEST_CLUSTER === "real"
const root = Path.join(import.meta.dirname, "..", "..", "..")

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pids of control-plane processes whose command line mentions `marker`. */
const processesWith = (marker: string): ReadonlyArray<number> =>
  Fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const cmd = Fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0")
      return cmd.some((a) => a.includes(marker)) && /(etcd|kube-apiserver|kube-controller-manager)$/.test(cmd[0] ?? "")
        ? [Number(d)]
        : []
    } catch {
      return []
    }
  })

const waitUntil = async (check: () => boolean, millis: number) => {
  const deadline = Date.now() + millis
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  return check()
}

describe.skipIf(!real)("Envtest on the real binaries", () => {
  it.live(
    "starts, serves kubectl with a 0600 kubeconfig, and stops every process with its scope",
    () =>
      Effect.gen(function*() {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "envtest-real-"))
        const kubeconfigPath = Path.join(dir, "kubeconfig")
        const started = Date.now()
        const { directory, pids } = yield* Effect.scoped(Effect.gen(function*() {
          const plane = yield* Envtest.make({ kubeconfigPath })
          const seconds = (Date.now() - started) / 1000
          console.log(`control plane ready in ${seconds.toFixed(1)} s (${plane.version})`)
          assert.match(plane.version, /^v1\.36\.\d+$/)
          assert.isTrue(plane.controllerManager)
          assert.strictEqual(Fs.statSync(kubeconfigPath).mode & 0o777, 0o600)
          const out = execFileSync("kubectl", ["--kubeconfig", kubeconfigPath, "get", "namespaces", "-o", "name"], {
            encoding: "utf8"
          })
          assert.include(out, "namespace/kube-system")
          assert.strictEqual(Fs.statSync(plane.directory).mode & 0o777, 0o700)
          return { directory: plane.directory, pids: processesWith(plane.directory) }
        }))
        assert.strictEqual(pids.length, 3, "etcd, kube-apiserver, kube-controller-manager")
        for (const pid of pids) assert.isFalse(alive(pid), `process ${pid} outlived the scope`)
        assert.isFalse(Fs.existsSync(kubeconfigPath), "the kubeconfig (a credential) is removed on stop")
        assert.isFalse(Fs.existsSync(directory), "its directory (keys, etcd data) is removed on stop")
      }),
    120_000
  )

  it.live(
    "pause freezes kube-apiserver (state T) until resume; a SIGKILL restart comes back on the same port and data",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const plane = yield* Envtest.make({ controllers: false })
        const state = (pid: number) => Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[0]
        const apiserver = () =>
          processesWith(plane.directory).find((pid) =>
            Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]!.endsWith("kube-apiserver")
          )!
        yield* plane.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept", namespace: "default" } })
        const before = apiserver()
        yield* plane.pause("kube-apiserver")
        assert.isTrue(yield* Effect.promise(() => waitUntil(() => state(before) === "T", 5_000)), "stopped")
        yield* plane.resume("kube-apiserver")
        assert.isTrue(yield* Effect.promise(() => waitUntil(() => state(before) !== "T", 5_000)), "continued")
        assert.strictEqual((yield* plane.request("GET", "/readyz")).status, 200)

        yield* plane.restartApiServer({ signal: "SIGKILL", down: "200 millis" })
        const after = apiserver()
        assert.notStrictEqual(after, before)
        assert.isFalse(alive(before))
        assert.strictEqual((yield* plane.request("GET", "/readyz")).status, 200)
        const kept = yield* plane.get({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "kept", namespace: "default" }
        })
        assert.strictEqual(kept?.metadata.name, "kept")
      })),
    120_000
  )

  it.live(
    "SIGKILL of the process that started it takes etcd, kube-apiserver and kube-controller-manager with it",
    () =>
      Effect.promise(async () => {
        const kubeconfig = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "envtest-kill-")), "kubeconfig")
        const child = spawn(process.execPath, [
          "--import",
          "tsx",
          "packages/testkit/src/bin/envtest.ts",
          "start",
          "--kubeconfig",
          kubeconfig
        ], { cwd: root, stdio: "ignore" })
        // whatever fails below, the control plane it started goes (SIGTERM: it stops its processes)
        try {
          assert.isTrue(await waitUntil(() => Fs.existsSync(kubeconfig), 60_000), "the control plane did not start")
          // its three processes (setpriv execs them: the node process is their parent); other control planes may run
          const parentOf = (pid: number) =>
            Number(Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1])
          const pids = processesWith(Path.join(Os.tmpdir(), "reconcile-envtest-")).filter((pid) =>
            parentOf(pid) === child.pid
          )
          assert.strictEqual(pids.length, 3)
          child.kill("SIGKILL")
          assert.isTrue(
            await waitUntil(() => pids.every((pid) => !alive(pid)), 10_000),
            `left running: ${pids.filter(alive).join(", ")}`
          )
        } finally {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
        }
      }),
    120_000
  )
})
