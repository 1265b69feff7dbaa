/**
 * Builds the controller-runtime peer of the end-to-end operator benchmark (bench/operator/controller-runtime, a Go
 * program of ours: main.go, go.mod, go.sum) with Go and the Go module proxy, as the testkit builds the control
 * plane: into a cache outside the repository (`$RECONCILE_BENCH_CACHE`, else `$XDG_CACHE_HOME/reconcile-bench`, else
 * `~/.cache/reconcile-bench`), named after the hash of its sources, so a second run reuses the binary and an edit
 * builds a new one. The binary is never in the repository.
 *
 * `build()` answers the binary's path, or why there is none (no Go: the bench skips the controller-runtime rows and
 * says so). Run alone: `npx tsx bench/operator/buildControllerRuntime.ts` prints the path.
 */
import * as ChildProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const source = path.join(path.dirname(fileURLToPath(import.meta.url)), "controller-runtime")
const sources = ["go.mod", "go.sum", "main.go"]

const cacheRoot = (env: NodeJS.ProcessEnv = process.env): string =>
  env.RECONCILE_BENCH_CACHE ??
    path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "reconcile-bench")

/** A `go` that runs: `GO`, else PATH's, else the official installer's place. */
const findGo = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  for (const go of env.GO !== undefined ? [env.GO] : ["go", "/usr/local/go/bin/go"]) {
    const result = ChildProcess.spawnSync(go, ["version"], { encoding: "utf8", env })
    if (result.status === 0 && /^go version /.test(result.stdout)) return go
  }
  return undefined
}

export type Built =
  | { readonly binary: string; readonly built: boolean; readonly seconds: number }
  | { readonly skipped: string }

export const build = async (): Promise<Built> => {
  const started = performance.now()
  const hash = crypto.createHash("sha256")
  for (const file of sources) hash.update(file).update("\0").update(fs.readFileSync(path.join(source, file)))
  const dir = path.join(cacheRoot(), `operator-controller-runtime-${hash.digest("hex").slice(0, 16)}`)
  const binary = path.join(dir, "operator")
  const seconds = () => Math.round((performance.now() - started) / 10) / 100
  if (fs.existsSync(binary)) return { binary, built: false, seconds: seconds() }
  const go = findGo()
  if (go === undefined) {
    return { skipped: "no Go (no `go` on PATH, nor /usr/local/go/bin/go): the controller-runtime peer is not built" }
  }
  fs.mkdirSync(dir, { recursive: true })
  const partial = `${binary}.${process.pid}.partial`
  const result = await new Promise<{ readonly code: number | null; readonly log: string }>((resolve) => {
    const child = ChildProcess.spawn(go, ["build", "-trimpath", "-ldflags", "-s -w", "-o", partial, "."], {
      cwd: source,
      // the go.sum is committed: -mod=readonly fails on a go.mod that needs tidying instead of rewriting it
      env: { ...process.env, CGO_ENABLED: "0", GOWORK: "off", GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let log = ""
    child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()))
    child.on("error", (e) => resolve({ code: -1, log: e.message }))
    child.on("close", (code) => resolve({ code, log }))
  })
  if (result.code !== 0) {
    fs.rmSync(partial, { force: true })
    return {
      skipped: `go build of bench/operator/controller-runtime failed:\n${result.log.split("\n").slice(-20).join("\n")}`
    }
  }
  fs.renameSync(partial, binary)
  // the builds of older sources are of no more use
  for (const other of fs.readdirSync(path.dirname(dir))) {
    const stale = path.join(path.dirname(dir), other)
    if (other.startsWith("operator-controller-runtime-") && stale !== dir) {
      fs.rmSync(stale, { recursive: true, force: true })
    }
  }
  return { binary, built: true, seconds: seconds() }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = await build()
  if ("skipped" in built) {
    console.error(built.skipped)
    process.exitCode = 1
  } else {
    console.log(built.binary)
  }
}
