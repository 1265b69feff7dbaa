/**
 * The control-plane binaries: found (`KUBEBUILDER_ASSETS`, then our cache) or built from their Go modules.
 *
 * `k8s.io/kubernetes` cannot be built as a dependency as published: its go.mod points every `k8s.io/*` staging
 * module at `./staging/src/...` (v0.0.0), which a module download does not contain. A throwaway consumer module
 * requires it, replaces each staging module named in *the downloaded go.mod* by its `v0.<minor>.<patch>` tag and
 * keeps the two commands with `tool` lines; etcd's server module likewise (its own go.mod has relative replaces,
 * which only apply to it as the main module). Binaries are stamped with their versions (`/version` reports them)
 * and land in a per-version cache directory outside the repository, reused when complete (`versions.json` is
 * written last). Nothing here runs at import: `npm test` needs no Go.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** The versions built by default: the Kubernetes line the project tests against and the etcd it ships with. */
export const defaultVersions = { kubernetes: "1.36.3", etcd: "3.6.8" } as const

/** Where the three binaries are. `kubeControllerManager` is absent in a setup-envtest folder (it ships none). */
export interface Assets {
  readonly dir: string
  readonly kubeApiserver: string
  readonly etcd: string
  readonly kubeControllerManager: string | undefined
  /** Where they came from: `KUBEBUILDER_ASSETS`, an explicit directory, or our cache. */
  readonly source: "KUBEBUILDER_ASSETS" | "directory" | "cache"
}

/** Why the binaries could not be had; `message` says what to do. */
export class AssetsError extends Error {
  constructor(
    readonly reason: "NotFound" | "NoGo" | "DownloadFailed" | "BuildFailed",
    message: string,
    readonly log?: string
  ) {
    super(message)
  }
}

export interface Versions {
  readonly kubernetes: string
  readonly etcd: string
}

/** The versions asked for: `RECONCILE_ENVTEST_KUBERNETES` / `RECONCILE_ENVTEST_ETCD`, else the defaults. */
export const versionsFromEnv = (env: NodeJS.ProcessEnv = process.env): Versions => ({
  kubernetes: (env.RECONCILE_ENVTEST_KUBERNETES ?? defaultVersions.kubernetes).replace(/^v/, ""),
  etcd: (env.RECONCILE_ENVTEST_ETCD ?? defaultVersions.etcd).replace(/^v/, "")
})

/** The cache root: `RECONCILE_ENVTEST_CACHE`, else `$XDG_CACHE_HOME/reconcile-envtest`, else `~/.cache/…`. */
export const cacheRoot = (env: NodeJS.ProcessEnv = process.env): string =>
  env.RECONCILE_ENVTEST_CACHE ??
    Path.join(env.XDG_CACHE_HOME ?? Path.join(Os.homedir(), ".cache"), "reconcile-envtest")

/** The folder of one version pair in the cache. */
export const cacheDir = (versions: Versions, env: NodeJS.ProcessEnv = process.env): string =>
  Path.join(cacheRoot(env), `kubernetes-v${versions.kubernetes}-etcd-v${versions.etcd}`)

const isExecutable = (file: string): boolean => {
  try {
    Fs.accessSync(file, Fs.constants.X_OK)
    return Fs.statSync(file).isFile()
  } catch {
    return false
  }
}

const inDir = (dir: string, source: Assets["source"]): Assets | undefined => {
  const kubeApiserver = Path.join(dir, "kube-apiserver")
  const etcd = Path.join(dir, "etcd")
  if (!isExecutable(kubeApiserver) || !isExecutable(etcd)) return undefined
  const kcm = Path.join(dir, "kube-controller-manager")
  return { dir, kubeApiserver, etcd, kubeControllerManager: isExecutable(kcm) ? kcm : undefined, source }
}

const setupHint = "run `npm run envtest:setup` (builds them with Go, once, into a cache outside the repository), " +
  "or set KUBEBUILDER_ASSETS to a folder with kube-apiserver and etcd (controller-runtime's setup-envtest fills one)"

/**
 * The binaries without building anything: an explicit `dir`, else `KUBEBUILDER_ASSETS`, else our cache (a
 * complete build of `versions`). A setup-envtest folder has no kube-controller-manager: ours is taken from the
 * cache when built, else the control plane runs without one.
 */
export const find = (options: {
  readonly dir?: string | undefined
  readonly versions?: Versions | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
}): Assets => {
  const env = options.env ?? process.env
  const versions = options.versions ?? versionsFromEnv(env)
  const cached = Fs.existsSync(Path.join(cacheDir(versions, env), "versions.json"))
    ? inDir(cacheDir(versions, env), "cache")
    : undefined
  const given = options.dir ?? (env.KUBEBUILDER_ASSETS !== undefined && env.KUBEBUILDER_ASSETS !== ""
    ? env.KUBEBUILDER_ASSETS
    : undefined)
  if (given !== undefined) {
    const source = options.dir !== undefined ? "directory" : "KUBEBUILDER_ASSETS"
    const found = inDir(given, source)
    if (found === undefined) {
      throw new AssetsError(
        "NotFound",
        `${source === "directory" ? "the assets directory" : "KUBEBUILDER_ASSETS"} ${given} has no executable ` +
          `kube-apiserver and etcd: ${setupHint}`
      )
    }
    return found.kubeControllerManager === undefined && cached?.kubeControllerManager !== undefined
      ? { ...found, kubeControllerManager: cached.kubeControllerManager }
      : found
  }
  if (cached !== undefined) return cached
  throw new AssetsError(
    "NotFound",
    `no control-plane binaries for Kubernetes v${versions.kubernetes} / etcd v${versions.etcd} in ` +
      `${cacheDir(versions, env)}: ${setupHint}`
  )
}

/** What a build reports as it goes (one line per step). */
export type Progress = (line: string) => void

interface Run {
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly log: string
}

const run = (go: string, args: ReadonlyArray<string>, at: Run): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(go, args, { cwd: at.cwd, env: at.env, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8")
      Fs.appendFileSync(at.log, chunk)
    })
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`go ${args.join(" ")} exited with ${code}:\n${err.split("\n").slice(-30).join("\n")}`)))
  })

const goEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...env,
  CGO_ENABLED: "0",
  GOWORK: "off",
  GOFLAGS: "-mod=mod",
  // never fetch another toolchain: the go.mod files ask for a go line the machine's Go must already have
  GOTOOLCHAIN: "local"
})

const ldflags = (pairs: ReadonlyArray<readonly [string, string]>): string =>
  ["-s", "-w", ...pairs.flatMap(([k, v]) => ["-X", `${k}=${v}`])].join(" ")

/** The staging modules a kubernetes go.mod replaces with `./staging/...` paths (read, never hard-coded). */
export const stagingModules = (goMod: string): ReadonlyArray<string> =>
  [...goMod.matchAll(/^\s*(?:replace\s+)?(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//gm)].map((m) => m[1]!)

/** The consumer module that builds kube-apiserver and kube-controller-manager at `version`. */
export const kubernetesConsumer = (version: string, staging: ReadonlyArray<string>): string => {
  const [, minor, patch] = version.split(".")
  return [
    "// Generated by reconcile-envtest setup: builds the control-plane commands of k8s.io/kubernetes as tools.",
    "module reconcile.dev/envtest/kubernetes",
    "",
    "go 1.26.0",
    "",
    `require k8s.io/kubernetes v${version}`,
    "",
    ...staging.map((m) => `replace ${m} => ${m} v0.${minor}.${patch}`),
    "",
    "tool (",
    "\tk8s.io/kubernetes/cmd/kube-apiserver",
    "\tk8s.io/kubernetes/cmd/kube-controller-manager",
    ")",
    ""
  ].join("\n")
}

/** The consumer module that builds etcd at `version`. */
export const etcdConsumer = (version: string): string =>
  [
    "// Generated by reconcile-envtest setup: builds etcd's server command as a tool.",
    "module reconcile.dev/envtest/etcd",
    "",
    "go 1.26.0",
    "",
    `require go.etcd.io/etcd/server/v3 v${version}`,
    "",
    "tool go.etcd.io/etcd/server/v3",
    ""
  ].join("\n")

/** Whether a `go` command runs here (its path), else undefined. */
export const findGo = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  // `GO` names the one to use; else PATH's, else the official installer's place
  const candidates = env.GO !== undefined ? [env.GO] : ["go", "/usr/local/go/bin/go"]
  for (const go of candidates) {
    const result = ChildProcess.spawnSync(go, ["version"], { encoding: "utf8", env })
    if (result.status === 0 && /^go version /.test(result.stdout)) return go
  }
  return undefined
}

/**
 * The binaries of `versions`, built when not in the cache: a second run finds them and takes no time. The build
 * log is `<cache>/build.log`; a failure keeps it and names it. Concurrent setups wait on a lock directory.
 */
export const setup = async (options: {
  readonly versions?: Versions | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly progress?: Progress | undefined
  /** Rebuild even when the cache has them. */
  readonly force?: boolean | undefined
}): Promise<Assets & { readonly built: boolean; readonly seconds: number; readonly bytes: number }> => {
  const env = options.env ?? process.env
  const versions = options.versions ?? versionsFromEnv(env)
  const progress = options.progress ?? (() => {})
  const started = Date.now()
  const dir = cacheDir(versions, env)
  const marker = Path.join(dir, "versions.json")
  if (options.force !== true && Fs.existsSync(marker)) {
    const found = inDir(dir, "cache")
    if (found !== undefined) {
      return { ...found, built: false, seconds: (Date.now() - started) / 1000, bytes: diskUsage(found) }
    }
  }
  const go = findGo(env)
  if (go === undefined) {
    throw new AssetsError(
      "NoGo",
      "Go is not installed (no `go` on PATH, nor /usr/local/go/bin/go): install Go 1.26 to build the control " +
        "plane, or set KUBEBUILDER_ASSETS to a folder with kube-apiserver and etcd (controller-runtime's setup-envtest)"
    )
  }
  Fs.mkdirSync(dir, { recursive: true, mode: 0o755 })
  const lock = Path.join(dir, ".lock")
  for (;;) {
    try {
      Fs.mkdirSync(lock)
      break
    } catch {
      // another setup builds the same versions: a lock older than an hour is a dead build's
      const age = Date.now() - (Fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 60 * 60 * 1000) Fs.rmSync(lock, { recursive: true, force: true })
      else await new Promise((r) => setTimeout(r, 2_000))
      if (Fs.existsSync(marker)) {
        const found = inDir(dir, "cache")
        if (found !== undefined) {
          return { ...found, built: false, seconds: (Date.now() - started) / 1000, bytes: diskUsage(found) }
        }
      }
    }
  }
  const log = Path.join(dir, "build.log")
  Fs.writeFileSync(log, "")
  try {
    const genv = goEnv(env)
    const out = Path.join(dir, ".out")
    Fs.rmSync(out, { recursive: true, force: true })
    Fs.mkdirSync(out)
    // kubernetes: read the published go.mod for its staging modules
    const kdir = Path.join(dir, "build", "kubernetes")
    Fs.mkdirSync(kdir, { recursive: true })
    progress(`downloading k8s.io/kubernetes v${versions.kubernetes} (go mod download)`)
    const download = await run(go, ["mod", "download", "-json", `k8s.io/kubernetes@v${versions.kubernetes}`], {
      cwd: kdir,
      env: genv,
      log
    }).catch((e: Error) => {
      throw new AssetsError("DownloadFailed", `k8s.io/kubernetes v${versions.kubernetes}: ${e.message}`, log)
    })
    const info = JSON.parse(download) as { readonly GoMod?: string; readonly Error?: string }
    if (info.GoMod === undefined) {
      throw new AssetsError("DownloadFailed", `k8s.io/kubernetes v${versions.kubernetes}: ${info.Error ?? "no go.mod"}`)
    }
    const staging = stagingModules(Fs.readFileSync(info.GoMod, "utf8"))
    if (staging.length === 0) {
      throw new AssetsError(
        "BuildFailed",
        `k8s.io/kubernetes v${versions.kubernetes}: its go.mod has no staging replaces`
      )
    }
    Fs.writeFileSync(Path.join(kdir, "go.mod"), kubernetesConsumer(versions.kubernetes, staging))
    Fs.rmSync(Path.join(kdir, "go.sum"), { force: true })
    progress(`resolving ${staging.length} staging modules at v0.${versions.kubernetes.split(".").slice(1).join(".")}`)
    const step = (what: string, args: ReadonlyArray<string>, cwd: string) =>
      run(go, args, { cwd, env: genv, log }).catch((e: Error) => {
        throw new AssetsError(
          /download|proxy|no matching versions|unknown revision/.test(e.message) ? "DownloadFailed" : "BuildFailed",
          `${what}: ${e.message}\n(the whole log: ${log})`,
          log
        )
      })
    await step("go mod tidy (kubernetes)", ["mod", "tidy"], kdir)
    const [major, minor] = versions.kubernetes.split(".")
    const stamp = (pkg: string) =>
      [
        [`${pkg}.gitVersion`, `v${versions.kubernetes}`],
        [`${pkg}.gitMajor`, major!],
        [`${pkg}.gitMinor`, minor!],
        [`${pkg}.gitTreeState`, "clean"],
        [`${pkg}.buildDate`, new Date().toISOString().replace(/\.\d+Z$/, "Z")]
      ] as const
    progress("building kube-apiserver and kube-controller-manager (the first build takes several minutes)")
    await step("go build (kubernetes)", [
      "build",
      "-trimpath",
      "-ldflags",
      ldflags([...stamp("k8s.io/component-base/version"), ...stamp("k8s.io/client-go/pkg/version")]),
      "-o",
      out + Path.sep,
      "k8s.io/kubernetes/cmd/kube-apiserver",
      "k8s.io/kubernetes/cmd/kube-controller-manager"
    ], kdir)
    // etcd
    const edir = Path.join(dir, "build", "etcd")
    Fs.mkdirSync(edir, { recursive: true })
    Fs.writeFileSync(Path.join(edir, "go.mod"), etcdConsumer(versions.etcd))
    Fs.rmSync(Path.join(edir, "go.sum"), { force: true })
    progress(`building etcd v${versions.etcd}`)
    await step("go mod tidy (etcd)", ["mod", "tidy"], edir)
    await step("go build (etcd)", [
      "build",
      "-trimpath",
      "-ldflags",
      ldflags([["go.etcd.io/etcd/api/v3/version.GitSHA", `v${versions.etcd}`]]),
      "-o",
      Path.join(out, "etcd"),
      "go.etcd.io/etcd/server/v3"
    ], edir)
    for (const name of ["kube-apiserver", "kube-controller-manager", "etcd"]) {
      Fs.renameSync(Path.join(out, name), Path.join(dir, name))
    }
    Fs.rmSync(out, { recursive: true, force: true })
    const seconds = (Date.now() - started) / 1000
    Fs.writeFileSync(
      marker,
      JSON.stringify({ ...versions, builtAt: new Date().toISOString(), buildSeconds: seconds }, null, 2) + "\n"
    )
    const found = inDir(dir, "cache")!
    return { ...found, built: true, seconds, bytes: diskUsage(found) }
  } finally {
    Fs.rmSync(lock, { recursive: true, force: true })
  }
}

/** The disk the cache folder of `versions` takes (binaries only), in bytes. */
export const diskUsage = (assets: Assets): number =>
  [assets.kubeApiserver, assets.etcd, assets.kubeControllerManager]
    .filter((f): f is string => f !== undefined)
    .reduce((sum, f) => sum + Fs.statSync(f).size, 0)
