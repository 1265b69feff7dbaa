/**
 * `npm run apiserver` as real processes: kubectl writes through the kubeconfig, the server is SIGKILLed and
 * restarted with the same --data and --state-dir, and the same kubeconfig reads everything back; a client-node
 * watch that stays up through the restart reconnects (same CA, token and port) and sees new objects. A damaged
 * data file and a second server on the same data directory are refused with exit code 3, naming the file.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Kubectl from "./support/kubectl.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "testkit-bin-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})
const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const BIN = Path.join(root, "packages/testkit/src/bin/apiserver.ts")

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly exited: Promise<Exited>
}

/** Starts the bin (Node with tsx, no npm wrapper: the child's pid is the server's) and waits for its URL. */
const startBin = (args: ReadonlyArray<string>): Promise<Running> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<Exited>((done) =>
      child.on("exit", (code, signal) => done({ code, signal, stdout, stderr }))
    )
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const url = /listening on (https:\/\/\S+)/.exec(stdout)?.[1]
      if (url !== undefined) resolve({ child, url, exited })
    })
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    void exited.then((e) => reject(new Error(`the server exited (${e.code ?? e.signal}): ${e.stderr}`)))
  })

/** Runs the bin to its exit (a start that is refused). */
const runBin = (args: ReadonlyArray<string>): Promise<Exited> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", BIN, ...args],
      { cwd: root, timeout: 15_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          signal: null,
          stdout,
          stderr
        })
    )
  })

/** kubectl against a kubeconfig file with `home` as its HOME: its stdout, rejecting unless it exits 0. */
const kubectl = (home: string, kubeconfig: string, args: ReadonlyArray<string>, stdin?: string) =>
  Effect.runPromise(Kubectl.make({ home, timeout: 15_000 }).ok(kubeconfig, args, stdin))

const manifests = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webapps.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: webapps, singular: webapp, kind: WebApp}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default, finalizers: [example.com/keep]}
data: {mode: fast}
`

const webapp = `apiVersion: example.com/v1
kind: WebApp
metadata: {name: web, namespace: default}
spec: {replicas: 2}
`

/** A watch on default's ConfigMaps that stays up: it resumes after each end, relisting after 410 Gone. */
const keepWatching = (kc: k8s.KubeConfig, api: k8s.CoreV1Api) => {
  const seen = new Set<string>()
  let errors = 0
  let resourceVersion: string | undefined
  let stopped = false
  let abort: AbortController | undefined
  const relist = async () => {
    const list = await api.listNamespacedConfigMap({ namespace: "default" })
    for (const item of list.items) seen.add(item.metadata!.name!)
    resourceVersion = list.metadata?.resourceVersion
  }
  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        if (resourceVersion === undefined) await relist()
        await new Promise<void>((resolve) => {
          void new k8s.Watch(kc).watch(
            "/api/v1/namespaces/default/configmaps",
            { resourceVersion, allowWatchBookmarks: true },
            (phase, obj) => {
              if (phase === "ERROR") resourceVersion = undefined
              else {
                resourceVersion = obj.metadata.resourceVersion
                if (phase === "ADDED") seen.add(obj.metadata.name)
              }
            },
            (err) => {
              if (err !== null && err !== undefined) errors++
              resolve()
            }
          ).then((a) => (abort = a), () => resolve())
        })
      } catch {
        errors++
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  void loop()
  return {
    seen,
    errors: () => errors,
    stop: () => {
      stopped = true
      abort?.abort()
    }
  }
}

const waitFor = async (what: string, check: () => boolean, ms = 8_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const stop = async (running: Running) => {
  running.child.kill("SIGKILL")
  await running.exited.catch(() => undefined)
}

describe("npm run apiserver (real processes)", () => {
  it.live(
    "SIGKILL and restart with --data and --state-dir: the same kubeconfig reads everything back; a watching client reconnects",
    () =>
      Effect.promise(async () => {
        const dir = tempDir()
        const kubeconfig = Path.join(dir, "kubeconfig")
        const args = [
          "--kubeconfig",
          kubeconfig,
          "--state-dir",
          Path.join(dir, "state"),
          "--data",
          Path.join(dir, "data")
        ]
        const first = await startBin(args)
        const running: Array<Running> = [first]
        let watch: ReturnType<typeof keepWatching> | undefined
        try {
          await kubectl(dir, kubeconfig, ["apply", "-f", "-"], manifests)
          await kubectl(dir, kubeconfig, ["apply", "-f", "-"], webapp)
          await kubectl(dir, kubeconfig, ["delete", "configmap", "settings", "--wait=false"])
          const before = JSON.parse(
            await kubectl(dir, kubeconfig, ["get", "configmaps,webapps,crds", "-A", "-o", "json"])
          )
          const kubeconfigBefore = Fs.readFileSync(kubeconfig, "utf8")

          // A client-node client loaded once, before the restart, and a watch that stays up through it.
          const kc = new k8s.KubeConfig()
          kc.loadFromFile(kubeconfig)
          const api = kc.makeApiClient(k8s.CoreV1Api)
          watch = keepWatching(kc, api)
          await waitFor("the watch to list", () => watch!.seen.has("settings"))

          first.child.kill("SIGKILL")
          assert.strictEqual((await first.exited).signal, "SIGKILL")
          const second = await startBin(args)
          running.push(second)
          assert.strictEqual(second.url, first.url)
          assert.strictEqual(Fs.readFileSync(kubeconfig, "utf8"), kubeconfigBefore)

          const after = JSON.parse(
            await kubectl(dir, kubeconfig, ["get", "configmaps,webapps,crds", "-A", "-o", "json"])
          )
          assert.deepStrictEqual(after.items, before.items)
          const settings = after.items.find((i: any) => i.metadata.name === "settings")
          assert.isDefined(settings.metadata.deletionTimestamp)
          assert.deepStrictEqual(settings.metadata.finalizers, ["example.com/keep"])

          // The watching client reconnects without certificate errors and sees an object created after the restart.
          await kubectl(
            dir,
            kubeconfig,
            ["apply", "-f", "-"],
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later}\n"
          )
          await waitFor("the watch to see a new object", () => watch!.seen.has("later"))
          const read = await api.readNamespacedConfigMap({ name: "settings", namespace: "default" })
          assert.strictEqual(read.metadata?.uid, settings.metadata.uid)

          // A second server on the same data directory is refused while this one runs.
          const locked = await runBin(["--kubeconfig", Path.join(dir, "other"), "--data", Path.join(dir, "data")])
          assert.strictEqual(locked.code, 3)
          assert.include(locked.stderr, Path.join(dir, "data", "cluster.sqlite"))
          assert.include(locked.stderr, "Locked")
        } finally {
          watch?.stop()
          for (const r of running) await stop(r)
        }
      }),
    30_000
  )

  it.live(
    "a damaged data file: exit code 3, the file named on stderr and left as it is",
    () =>
      Effect.promise(async () => {
        const dir = tempDir()
        const data = Path.join(dir, "data")
        Fs.mkdirSync(data)
        const file = Path.join(data, "cluster.sqlite")
        Fs.writeFileSync(file, "not a database ".repeat(100))
        const result = await runBin(["--kubeconfig", Path.join(dir, "kubeconfig"), "--data", data])
        assert.strictEqual(result.code, 3)
        assert.include(result.stderr, file)
        assert.include(result.stderr, "Corrupt")
        assert.strictEqual(Fs.readFileSync(file, "utf8"), "not a database ".repeat(100))
      }),
    30_000
  )
})
