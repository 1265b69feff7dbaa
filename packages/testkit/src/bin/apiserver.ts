#!/usr/bin/env node
/**
 * Runs the test API server standalone:
 * `npm run apiserver -- [--port N] [--kubeconfig PATH] [--state-dir DIR] [--data DIR] [--bookmark-interval 1m]
 * [--no-controllers]`, or `npm run apiserver -- --real [--kubeconfig PATH] [--no-controllers]` for a real control
 * plane (etcd, kube-apiserver, kube-controller-manager: `Envtest`, binaries from `npm run envtest:setup`).
 * Writes the kubeconfig once ready, logs one line per request, stops on SIGINT/SIGTERM.
 *
 * - The certificate (the kubeconfig's CA), its key, the token and the port are kept in the state directory
 *   (default `<kubeconfig>.state`), so a restarted server has the same kubeconfig and clients reconnect to it.
 * - With `--data DIR`, the objects are kept too (an SQLite database, each write durable before it is answered);
 *   without it, every start is an empty cluster whose resourceVersions start over.
 * - `--bookmark-interval` (`500ms`, `10s`, `1m`; a bare number is seconds; default 1m, kube-apiserver's): how often
 *   a quiet watch with `allowWatchBookmarks` gets a BOOKMARK (one also comes 2 s before its `timeoutSeconds`).
 * - A small controller manager runs by default (Deployments get ReplicaSets and Pods that become Ready, statuses
 *   follow, `kubectl rollout status|history|undo` work); `--no-controllers` serves a bare API server.
 * - Exit codes: 2 for bad arguments, 3 when the state or data directory is unusable (damaged, partial, locked by
 *   another server: the message names the file, which is left as it is), 1 for other start failures.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Os from "node:os"
import * as Path from "node:path"
import * as TestApiServer from "../TestApiServer.js"
import * as TestCluster from "../TestCluster.js"
import { startReal } from "./real.js"

const usage =
  "usage: npm run apiserver -- [--port N] [--kubeconfig PATH] [--state-dir DIR] [--data DIR] [--bookmark-interval 1m]" +
  " [--no-controllers]\n       npm run apiserver -- --real [--kubeconfig PATH] [--no-controllers]"

/** `500ms`, `10s`, `1m` or a bare number of seconds, as milliseconds (positive), else `undefined`. */
const parseInterval = (value: string): number | undefined => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim())
  if (match === null) return undefined
  const millis = Number(match[1]) * (match[2] === "ms" ? 1 : match[2] === "m" ? 60_000 : 1_000)
  return millis >= 1 && Number.isFinite(millis) ? Math.round(millis) : undefined
}

interface Args {
  readonly port: number | undefined
  readonly kubeconfig: string
  readonly stateDir: string
  readonly data: string | undefined
  readonly bookmarkIntervalMillis: number | undefined
  readonly controllers: boolean
}

const parseArgs = (argv: ReadonlyArray<string>): Args | string => {
  let port: number | undefined
  let bookmarkIntervalMillis: number | undefined
  let controllers = true
  const paths: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined]
    const value = inline ?? argv[i + 1]
    if (flag === "--port") {
      if (value === undefined || !/^\d+$/.test(value) || Number(value) > 65535) return `invalid --port\n${usage}`
      port = Number(value)
      if (inline === undefined) i++
    } else if (flag === "--kubeconfig" || flag === "--state-dir" || flag === "--data") {
      if (value === undefined || value === "") return `invalid ${flag}\n${usage}`
      paths[flag] = Path.resolve(value)
      if (inline === undefined) i++
    } else if (flag === "--bookmark-interval") {
      bookmarkIntervalMillis = value === undefined ? undefined : parseInterval(value)
      if (bookmarkIntervalMillis === undefined) return `invalid --bookmark-interval (e.g. 10s, 1m)\n${usage}`
      if (inline === undefined) i++
    } else if (arg === "--no-controllers") {
      controllers = false
    } else if (flag === "--help" || flag === "-h") {
      return usage
    } else {
      return `unknown argument ${arg}\n${usage}`
    }
  }
  // A stable default, so that a restart writes the same kubeconfig in the same place (one per user).
  const kubeconfig = paths["--kubeconfig"] ??
    Path.join(Os.tmpdir(), `reconcile-apiserver-${Os.userInfo().username}`, "kubeconfig")
  return {
    port,
    kubeconfig,
    stateDir: paths["--state-dir"] ?? `${kubeconfig}.state`,
    data: paths["--data"],
    bookmarkIntervalMillis,
    controllers
  }
}

const argv = process.argv.slice(2)
const args = argv.includes("--real") ? undefined : parseArgs(argv)

const main = (args: Args) =>
  Effect.gen(function*() {
    const server = yield* TestApiServer.TestApiServer
    const rv = yield* server.cluster.resourceVersion
    yield* Console.log(`test API server listening on ${server.url}`)
    yield* Console.log(`kubeconfig: ${server.kubeconfigPath}`)
    yield* Console.log(`state: ${args.stateDir} (CA, key, token and port kept across restarts)`)
    yield* Console.log(
      args.data === undefined
        ? "data: in memory (--data DIR keeps the objects across restarts)"
        : `data: ${args.data} (resourceVersion ${rv})`
    )
    yield* Console.log(
      args.controllers
        ? "controllers: on (Deployments get ReplicaSets and Pods; --no-controllers turns them off)"
        : "controllers: off"
    )
    yield* Console.log(`try: kubectl --kubeconfig ${server.kubeconfigPath} get namespaces`)
    return yield* Effect.never
  })

/** A start failure as one line on stderr and an exit code (the process then ends: nothing is listening). */
const refuse = (code: number, message: string) =>
  Effect.sync(() => {
    console.error(`reconcile-apiserver: cannot start: ${message}`)
    process.exitCode = code
  })

if (args === undefined) {
  const code = startReal(argv.filter((a) => a !== "--real"), "npm run apiserver -- --real")
  if (code !== undefined) process.exitCode = code
} else if (typeof args === "string") {
  console.error(args)
  process.exitCode = 2
} else {
  const ClusterLive = args.data === undefined
    ? TestCluster.layer
    : TestCluster.layerWithData({ dataDir: args.data })
  const ServerLive = TestApiServer.layer({
    port: args.port,
    kubeconfigPath: args.kubeconfig,
    stateDir: args.stateDir,
    bookmarkInterval: args.bookmarkIntervalMillis === undefined
      ? undefined
      : Duration.millis(args.bookmarkIntervalMillis),
    log: (line) => console.log(line),
    controllers: args.controllers
  }).pipe(Layer.provide(ClusterLive))
  const program = main(args).pipe(
    Effect.provide(ServerLive),
    Effect.catchTags({
      TestClusterStorageError: (e) => refuse(3, `${e.message} (the file is left as it is)`),
      TestApiServerError: (e) => refuse(e.reason === "StateFailed" || e.reason === "InvalidOptions" ? 3 : 1, e.message)
    })
  )
  NodeRuntime.runMain(program)
}
