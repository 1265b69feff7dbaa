/**
 * The shared test environment: a TestApiServer (real HTTPS on 127.0.0.1) over a fresh TestCluster, its Faults,
 * and a log of the requests it served (to count retries).
 *
 * With `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`) the same suites run on a real control plane
 * (`Envtest`: etcd, kube-apiserver, kube-controller-manager, one per test file): `kubeLayer` then talks to it.
 * The in-memory cluster and its Faults are still provided so the files typecheck alike, but they are not the
 * server under test there: a test that needs them (fault injection, the request log, reading the in-memory
 * store) is marked `it.effect.skipIf(onRealCluster)` with the reason, and skipped on the real cluster.
 */
import { Envtest, Faults, type KubeObject, TestApiServer, TestCluster } from "@reconcile/testkit"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Kube from "../../src/Kube.js"
import type * as Resource from "../../src/Resource.js"

export interface RequestLog {
  readonly lines: Array<string>
}

/** Whether the suites run on the real control plane (`RECONCILE_TEST_CLUSTER=real`). */
export const onRealCluster = process.env.RECONCILE_TEST_CLUSTER === "real"

/**
 * Arranging state on the server under test (the in-memory cluster, or the real control plane): a namespace, an
 * object applied server-side (forced, manager `test`), a CRD applied and waited for until its kind is served (a
 * real server takes a moment; the in-memory one serves it at once).
 */
export class ServerUnderTest extends Context.Service<ServerUnderTest, {
  readonly createNamespace: (name: string) => Effect.Effect<void>
  readonly apply: (object: unknown) => Effect.Effect<KubeObject.KubeObject>
}>()("test/ServerUnderTest") {}

/** Applies `object` (or installs a CRD and waits until it is served) on the server under test. */
export const serverApply = (object: unknown) => Effect.flatMap(ServerUnderTest, (server) => server.apply(object))

/**
 * The real control plane seen as the `TestApiServer` the suites ask for: its URL, CA and admin kubeconfig, over
 * an in-memory cluster that is not the one served (see the module header).
 */
const realServer = (options?: Envtest.Options) =>
  Layer.effect(
    TestApiServer.TestApiServer,
    Effect.gen(function*() {
      const plane = yield* Envtest.Envtest
      const cluster = yield* TestCluster.TestCluster
      return {
        url: plane.url,
        port: plane.port,
        token: "",
        certificateAuthority: plane.certificateAuthority,
        kubeconfigPath: plane.kubeconfigPath,
        kubeconfig: plane.kubeconfig,
        cluster
      }
    })
  ).pipe(
    Layer.provideMerge(Layer.effect(
      ServerUnderTest,
      Effect.map(Envtest.Envtest, (plane) => ({
        createNamespace: (name: string) =>
          Effect.orDie(
            plane.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, { fieldManager: "test" })
          ),
        apply: (object: unknown) => Effect.orDie(plane.apply(object as never, { fieldManager: "test" }))
      }))
    )),
    Layer.provideMerge(Envtest.layer(options)),
    Layer.orDie
  )

const embeddedServer = Layer.effect(
  ServerUnderTest,
  Effect.map(TestCluster.TestCluster, (cluster) => ({
    createNamespace: (name: string) =>
      Effect.asVoid(Effect.orDie(cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } }))),
    apply: (object: unknown) => Effect.orDie(cluster.apply(object as never, { fieldManager: "test", force: true }))
  }))
)

/** The server under test: the in-memory TestApiServer, or the real control plane with `RECONCILE_TEST_CLUSTER=real`. */
export const serverLayer = (
  options?: TestApiServer.Options & TestCluster.Options,
  realOptions?: Envtest.Options
): Layer.Layer<TestApiServer.TestApiServer | TestCluster.TestCluster | ServerUnderTest> =>
  onRealCluster
    ? realServer(realOptions).pipe(Layer.provideMerge(TestCluster.layer))
    : embeddedServer.pipe(Layer.provideMerge(Layer.orDie(TestApiServer.layerWithCluster(options))))

export const makeEnv = (options?: {
  readonly bookmarkInterval?: string
  /** `shardSelector` on list and watch (on the real control plane: `--feature-gates=ShardedListAndWatch=true`). */
  readonly shardedListAndWatch?: boolean
}) => {
  const log: RequestLog = { lines: [] }
  const layer = Layer.mergeAll(Faults.layer).pipe(
    Layer.provideMerge(
      serverLayer({
        log: (line) => log.lines.push(line),
        // a bare server: these tests write Deployment and ReplicaSet statuses themselves (on the real control plane:
        // only the garbage collector and the namespace controller, which the in-memory cluster has built in)
        controllers: false,
        ...(options?.bookmarkInterval !== undefined ? { bookmarkInterval: options.bookmarkInterval as never } : {}),
        ...(options?.shardedListAndWatch === true ? { featureGates: { ShardedListAndWatch: true } } : {})
      }, {
        controllers: ["garbage-collector-controller", "namespace-controller"],
        ...(options?.shardedListAndWatch === true
          ? { apiServerFlags: ["--feature-gates=ShardedListAndWatch=true"] }
          : {})
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

/**
 * Polls `check` every 10 ms (wall clock, also under `TestClock`: the server it waits for is real) until it succeeds;
 * after `within` ms its last failure is the test's.
 */
export const eventually = <A, E, R>(check: Effect.Effect<A, E, R>, within = 5_000): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const deadline = Date.now() + within
    const pause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 10)))
    const loop: Effect.Effect<A, E, R> = Effect.catchCause(
      check,
      (cause) => Date.now() > deadline ? Effect.failCause(cause) : Effect.andThen(pause, loop)
    )
    return loop
  })

/** An assertion as an Effect, to retry with `eventually`. */
export const check = (f: () => void) => Effect.sync(f)

let namespaces = 0
/** A fresh namespace (named `prefix-N`), and faults reset when the test ends. */
export const freshNamespace = (prefix: string) =>
  Effect.gen(function*() {
    const faults = yield* Faults.Faults
    const name = `${prefix}-${++namespaces}`
    yield* (yield* ServerUnderTest).createNamespace(name)
    yield* Effect.addFinalizer(() => faults.reset)
    return name
  })

/**
 * Waits (wall clock, up to 30 s) until the server serves a custom resource's kind: a real kube-apiserver serves
 * a CRD's kind only once the CRD is established, a moment after it was created (the in-memory one at once).
 */
export const waitServed = (resource: Resource.Resource<any>) =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const deadline = Date.now() + 30_000
    for (;;) {
      const exit = yield* Effect.exit(kube.request({ method: "GET", path: `${resource.path()}?limit=1` }))
      if (exit._tag === "Success" || Date.now() > deadline) return
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 50)))
    }
  })
