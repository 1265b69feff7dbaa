/**
 * The shared test environment: a TestApiServer (real HTTPS on 127.0.0.1) over a fresh TestCluster, its Faults,
 * and a log of the requests it served (to count retries).
 */
import { Faults, TestApiServer, TestCluster } from "@reconcile/testkit"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Kube from "../../src/Kube.js"

export interface RequestLog {
  readonly lines: Array<string>
}

export const makeEnv = (options?: { readonly bookmarkInterval?: string }) => {
  const log: RequestLog = { lines: [] }
  const layer = Layer.mergeAll(Faults.layer).pipe(
    Layer.provideMerge(
      TestApiServer.layerWithCluster({
        log: (line) => log.lines.push(line),
        // a bare server: these tests write Deployment and ReplicaSet statuses themselves
        controllers: false,
        ...(options?.bookmarkInterval !== undefined ? { bookmarkInterval: options.bookmarkInterval as never } : {})
      })
    )
  )
  return { log, layer }
}

/** Fast retries so 5xx tests do not wait. */
export const fastRetry: Kube.Options = { retry: { times: 3, base: "1 millis", max: "5 millis" } }

/** The Kube layer for the server's kubeconfig. */
export const kubeLayer = (options: Kube.Options = fastRetry) =>
  Layer.unwrap(
    Effect.map(TestApiServer.TestApiServer, (server) => Kube.layerFromFile(server.kubeconfigPath, options))
  )

/** Requests the server logged since `from` whose line contains every part. */
export const countRequests = (log: RequestLog, from: number, ...parts: ReadonlyArray<string>): number =>
  log.lines.slice(from).filter((l) => parts.every((p) => l.includes(p))).length

export const tempFile = (name: string, content: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-test-"))
  const file = path.join(dir, name)
  fs.writeFileSync(file, content)
  return file
}

/** Polls `check` every 10 ms until it succeeds; after `within` ms its last failure is the test's. */
export const eventually = <A, E, R>(check: Effect.Effect<A, E, R>, within = 5_000): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const deadline = Date.now() + within
    const loop: Effect.Effect<A, E, R> = Effect.catchCause(
      check,
      (cause) => Date.now() > deadline ? Effect.failCause(cause) : Effect.andThen(Effect.sleep("10 millis"), loop)
    )
    return loop
  })

/** An assertion as an Effect, to retry with `eventually`. */
export const check = (f: () => void) => Effect.sync(f)

let namespaces = 0
/** A fresh namespace (named `prefix-N`), and faults reset when the test ends. */
export const freshNamespace = (prefix: string) =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster.TestCluster
    const faults = yield* Faults.Faults
    const name = `${prefix}-${++namespaces}`
    yield* Effect.orDie(cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } }))
    yield* Effect.addFinalizer(() => faults.reset)
    return name
  })
