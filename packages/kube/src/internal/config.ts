import { KubeConfig } from "@kubernetes/client-node"
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { redact } from "./errors.js"

/**
 * The kubeconfig could not be loaded or does not describe a usable cluster.
 * `source` names the file (or `<string>`, `in-cluster`, `default`), `reason`
 * says what is wrong; neither ever quotes credentials.
 *
 * @since 0.1.0
 * @category errors
 */
export class KubeConfigError extends Data.TaggedError("KubeConfigError")<{
  readonly source: string
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `kubeconfig ${this.source}: ${this.reason}`
  }
}

const serviceAccountRoot = "/var/run/secrets/kubernetes.io/serviceaccount"

/** @internal */
export interface Loaded {
  readonly kubeConfig: KubeConfig
  /** Where it came from, for error messages: a path, `<string>` or `in-cluster`. */
  readonly source: string
}

const describeLoadError = (cause: unknown): string => {
  if (typeof cause === "object" && cause !== null && (cause as { name?: unknown }).name === "YAMLException") {
    // js-yaml's own message quotes the surrounding lines (which may hold a token): keep the reason and position
    const e = cause as { reason?: string; mark?: { line?: number; column?: number } }
    const at = e.mark?.line !== undefined ? ` at line ${e.mark.line + 1}, column ${(e.mark.column ?? 0) + 1}` : ""
    return `invalid YAML${at}: ${e.reason ?? "unknown reason"}`
  }
  if (cause instanceof TypeError) return "not a kubeconfig (expected a YAML mapping with clusters, contexts, users)"
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  if (code === "ENOENT") return "file not found"
  if (code === "EACCES") return "permission denied"
  if (code === "EISDIR") return "is a directory"
  return redact(cause instanceof Error ? cause.message : String(cause))
}

const loadWith = (source: string, load: (kc: KubeConfig) => void): Effect.Effect<Loaded, KubeConfigError> =>
  Effect.try({
    try: () => {
      const kc = new KubeConfig()
      load(kc)
      return { kubeConfig: kc, source }
    },
    catch: (cause) => new KubeConfigError({ source, reason: describeLoadError(cause), cause })
  })

/** @internal */
export const fromFile = (file: string): Effect.Effect<Loaded, KubeConfigError> =>
  loadWith(file, (kc) => {
    if (fs.readFileSync(file, "utf-8").trim() === "") throw new Error("file is empty")
    kc.loadFromFile(file)
  })

/** @internal */
export const fromString = (yaml: string): Effect.Effect<Loaded, KubeConfigError> =>
  loadWith("<string>", (kc) => {
    if (yaml.trim() === "") throw new Error("empty kubeconfig")
    kc.loadFromString(yaml)
  })

const exists = (file: string): boolean => {
  try {
    fs.accessSync(file)
    return true
  } catch {
    return false
  }
}

/**
 * client-node's `loadFromDefault` order — `KUBECONFIG` (files merged, the
 * first one's current-context wins), `~/.kube/config`, the in-cluster service
 * account — except that finding nothing is an error rather than a silent
 * `http://localhost:8080`. `KUBECONFIG` and `HOME` are read through Effect's
 * `Config`, so a `ConfigProvider` can set them.
 *
 * @internal
 */
export const fromDefault: Effect.Effect<Loaded, KubeConfigError> = Effect.gen(function*() {
  const env = yield* Config.all({
    kubeconfig: Config.option(Config.String("KUBECONFIG")),
    home: Config.option(Config.String("HOME")),
    host: Config.option(Config.String("KUBERNETES_SERVICE_HOST")),
    port: Config.option(Config.String("KUBERNETES_SERVICE_PORT"))
  }).pipe(
    Effect.mapError((cause) => new KubeConfigError({ source: "default", reason: String(cause), cause }))
  )
  const files = Option.getOrElse(env.kubeconfig, () => "").split(path.delimiter).filter((f) => f !== "")
  if (files.length > 0) {
    return yield* fromFiles(files as [string, ...Array<string>])
  }
  if (Option.isSome(env.home)) {
    const file = path.join(env.home.value, ".kube", "config")
    if (exists(file)) return yield* fromFile(file)
  }
  if (exists(`${serviceAccountRoot}/token`)) {
    if (Option.isNone(env.host) || Option.isNone(env.port)) {
      return yield* new KubeConfigError({
        source: "in-cluster",
        reason: "a service account token is mounted but KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set"
      })
    }
    return yield* loadWith("in-cluster", (kc) => kc.loadFromCluster())
  }
  return yield* new KubeConfigError({
    source: "default",
    reason: "no kubeconfig found: KUBECONFIG is not set, ~/.kube/config does not exist and no in-cluster service " +
      "account is mounted"
  })
})

/** @internal */
export interface Resolved {
  readonly server: URL
  readonly namespace: string
  readonly skipTLSVerify: boolean
}

const readable = (file: string | undefined): boolean => {
  if (file === undefined) return true
  try {
    fs.accessSync(file, fs.constants.R_OK)
    return true
  } catch {
    return false
  }
}

/**
 * Checks what client-node would only discover at the first request: a current
 * context that names an existing cluster (and user), a usable server URL,
 * readable certificate files.
 *
 * @internal
 */
export const resolve = (loaded: Loaded): Effect.Effect<Resolved, KubeConfigError> =>
  Effect.suspend(() => {
    const kc = loaded.kubeConfig
    const fail = (reason: string) => Effect.fail(new KubeConfigError({ source: loaded.source, reason }))
    const current = kc.getCurrentContext()
    const names = (xs: ReadonlyArray<{ readonly name: string }>) =>
      xs.length === 0 ? "none defined" : xs.map((x) => x.name).join(", ")
    if (current === undefined || current === "") {
      return fail(`no current-context is set (contexts: ${names(kc.getContexts())})`)
    }
    const context = kc.getContextObject(current)
    if (context === null) {
      return fail(`current-context "${current}" is not defined (contexts: ${names(kc.getContexts())})`)
    }
    const cluster = kc.getCluster(context.cluster)
    if (cluster === null) return fail(`context "${current}" names cluster "${context.cluster}", which is not defined`)
    if (context.user !== undefined && context.user !== "" && kc.getUser(context.user) === null) {
      return fail(`context "${current}" names user "${context.user}", which is not defined`)
    }
    let server: URL
    try {
      server = new URL(cluster.server)
    } catch {
      return fail(`cluster "${cluster.name}" has an invalid server URL "${cluster.server}"`)
    }
    if (server.protocol !== "https:" && server.protocol !== "http:") {
      return fail(`cluster "${cluster.name}": server "${cluster.server}" is neither https nor http`)
    }
    if (server.protocol === "http:" && !cluster.skipTLSVerify) {
      return fail(`cluster "${cluster.name}": a plain http server needs insecure-skip-tls-verify: true`)
    }
    if (!readable(cluster.caFile)) {
      return fail(`cluster "${cluster.name}": certificate-authority file ${cluster.caFile} cannot be read`)
    }
    const user = kc.getCurrentUser()
    if (user !== null) {
      if (!readable(user.certFile)) {
        return fail(`user "${user.name}": client-certificate file ${user.certFile} cannot be read`)
      }
      if (!readable(user.keyFile)) return fail(`user "${user.name}": client-key file ${user.keyFile} cannot be read`)
    }
    const namespace = context.namespace !== undefined && context.namespace.trim() !== ""
      ? context.namespace.trim()
      : "default"
    return Effect.succeed({ server, namespace, skipTLSVerify: cluster.skipTLSVerify })
  })

/**
 * The in-cluster service account only (the token and CA mounted in a Pod, `KUBERNETES_SERVICE_HOST/PORT`): what
 * an operator's Deployment runs with. Never reads `KUBECONFIG` or `~/.kube/config`.
 *
 * @internal
 */
export const inCluster: Effect.Effect<Loaded, KubeConfigError> = Effect.gen(function*() {
  const env = yield* Config.all({
    host: Config.option(Config.String("KUBERNETES_SERVICE_HOST")),
    port: Config.option(Config.String("KUBERNETES_SERVICE_PORT"))
  }).pipe(
    Effect.mapError((cause) => new KubeConfigError({ source: "in-cluster", reason: String(cause), cause }))
  )
  if (!exists(`${serviceAccountRoot}/token`)) {
    return yield* new KubeConfigError({
      source: "in-cluster",
      reason: `no service account token at ${serviceAccountRoot}/token: not running in a Pod (outside a cluster, ` +
        "use --kubeconfig PATH or --context NAME)"
    })
  }
  if (Option.isNone(env.host) || Option.isNone(env.port)) {
    return yield* new KubeConfigError({
      source: "in-cluster",
      reason: "a service account token is mounted but KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set"
    })
  }
  return yield* loadWith("in-cluster", (kc) => kc.loadFromCluster())
})

/**
 * The kubeconfig `file`, else the files of `KUBECONFIG` (merged) or `~/.kube/config`, with `context` as the current
 * context (an error naming the defined contexts when it is not one of them).
 *
 * @internal
 */
export const fromContext = (context: string, file?: string): Effect.Effect<Loaded, KubeConfigError> =>
  Effect.gen(function*() {
    if (file !== undefined) return yield* withContext(yield* fromFile(file), context)
    const env = yield* Config.all({
      kubeconfig: Config.option(Config.String("KUBECONFIG")),
      home: Config.option(Config.String("HOME"))
    }).pipe(
      Effect.mapError((cause) => new KubeConfigError({ source: "default", reason: String(cause), cause }))
    )
    const files = Option.getOrElse(env.kubeconfig, () => "").split(path.delimiter).filter((f) => f !== "")
    const home = Option.map(env.home, (home) => path.join(home, ".kube", "config"))
    if (files.length === 0 && Option.isSome(home) && exists(home.value)) files.push(home.value)
    if (files.length === 0) {
      return yield* new KubeConfigError({
        source: "default",
        reason: `no kubeconfig to take context "${context}" from: KUBECONFIG is not set and ~/.kube/config does not ` +
          "exist"
      })
    }
    return yield* withContext(yield* fromFiles(files as [string, ...Array<string>]), context)
  })

/** The kubeconfig files of a `KUBECONFIG` list, merged as kubectl merges them (the first file's values win). */
const fromFiles = ([first, ...rest]: readonly [string, ...Array<string>]): Effect.Effect<Loaded, KubeConfigError> =>
  Effect.gen(function*() {
    const loaded = yield* fromFile(first)
    for (const file of rest) {
      const other = yield* fromFile(file)
      yield* Effect.try({
        try: () => loaded.kubeConfig.mergeConfig(other.kubeConfig, true),
        catch: (cause) => new KubeConfigError({ source: file, reason: describeLoadError(cause), cause })
      })
    }
    return { kubeConfig: loaded.kubeConfig, source: [first, ...rest].join(path.delimiter) }
  })

const withContext = (loaded: Loaded, context: string): Effect.Effect<Loaded, KubeConfigError> => {
  const contexts = loaded.kubeConfig.getContexts()
  if (!contexts.some((c) => c.name === context)) {
    const names = contexts.length === 0 ? "none defined" : contexts.map((c) => c.name).join(", ")
    return Effect.fail(
      new KubeConfigError({ source: loaded.source, reason: `context "${context}" is not defined (contexts: ${names})` })
    )
  }
  loaded.kubeConfig.setCurrentContext(context)
  return Effect.succeed({ kubeConfig: loaded.kubeConfig, source: `${loaded.source} (context ${context})` })
}
