#!/usr/bin/env node
/**
 * Runs the test API server standalone:
 * `npm run apiserver -- [--port N] [--kubeconfig PATH]`.
 * Writes the kubeconfig once ready, logs one line per request, stops on SIGINT/SIGTERM.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestApiServer from "../TestApiServer.js"
import * as TestCluster from "../TestCluster.js"

const usage = "usage: npm run apiserver -- [--port N] [--kubeconfig PATH]"

const parseArgs = (argv: ReadonlyArray<string>): { port: number; kubeconfig: string | undefined } | string => {
  let port = 0
  let kubeconfig: string | undefined
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
    } else if (flag === "--kubeconfig") {
      if (value === undefined || value === "") return `invalid --kubeconfig\n${usage}`
      kubeconfig = value
      if (inline === undefined) i++
    } else if (flag === "--help" || flag === "-h") {
      return usage
    } else {
      return `unknown argument ${arg}\n${usage}`
    }
  }
  return { port, kubeconfig }
}

const args = parseArgs(process.argv.slice(2))

const main = Effect.gen(function*() {
  const server = yield* TestApiServer.TestApiServer
  yield* Console.log(`test API server listening on ${server.url}`)
  yield* Console.log(`kubeconfig: ${server.kubeconfigPath}`)
  yield* Console.log(`try: kubectl --kubeconfig ${server.kubeconfigPath} get namespaces`)
  return yield* Effect.never
})

if (typeof args === "string") {
  console.error(args)
  process.exitCode = 2
} else {
  const ServerLive = TestApiServer.layer({
    port: args.port,
    kubeconfigPath: args.kubeconfig,
    log: (line) => console.log(line)
  }).pipe(Layer.provide(TestCluster.layer))
  NodeRuntime.runMain(Effect.provide(main, ServerLive))
}
