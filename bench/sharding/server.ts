/**
 * The API server of the sharding benchmark, in its own process: the testkit's `TestApiServer` (HTTPS, bearer token,
 * no controller manager) over an in-memory `TestCluster`, as in the operator benchmark (`bench/operator/server.ts`),
 * with the same WebApp custom resource.
 *
 * Driven by IPC from `bench/sharding.ts`: it creates, changes, labels and deletes WebApps in-process (no HTTP: the
 * requests it serves are the replicas'), at once or paced, and follows every WebApp's labels from an in-process
 * watch, so it can say which shard each object is assigned to, when every object of a ring carries its shard label,
 * and how long each object of a paced batch took from its create to its first shard label (the assignment latency).
 * It also reports the holders of the ring's Leases and its own CPU seconds. `BENCH_SHARDING_MODE=server` turns on
 * the ShardedListAndWatch feature gate (list and watch honour `shardSelector`).
 */
import * as Resource from "@reconcile/kube/Resource"
// from the index: a process whose first import is "@reconcile/kube/Sharding" fails on an import cycle in the
// package (LeaseLeaderElection and its internal module), as of 285e022
import { Sharding } from "@reconcile/kube"
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { GROUP, KIND, NAMESPACE, WebApp, webApp } from "../operator/shared.js"
import { placement } from "./placement.js"

/** Driver → server. */
export type ToServer =
  /**
   * Create `count` WebApps named `<prefix>-<i>`, one every `intervalMs` (0: all at once); with `ring`, the time from
   * each create to the first label of that ring is recorded (see `latencies`).
   */
  | {
    readonly op: "create"
    readonly prefix: string
    readonly count: number
    readonly intervalMs: number
    readonly ring?: string | undefined
    /** Labels each is created with. */
    readonly labels?: Readonly<Record<string, string>> | undefined
  }
  /** Label every WebApp with the shard of `shards` the ring places it on (`placement.ts`), one after another. */
  | { readonly op: "label"; readonly ring: string; readonly shards: ReadonlyArray<string> }
  /** Delete every WebApp of `prefix`, one after another. */
  | { readonly op: "delete"; readonly prefix: string }
  /** Change every WebApp of `prefix` (its `spec.replicas`, a new generation), one after another. */
  | { readonly op: "touch"; readonly prefix: string }
  /** Where the WebApps of `prefix` (every WebApp when absent) stand in `ring`. */
  | { readonly op: "assignment"; readonly ring: string; readonly prefix?: string | undefined }
  /** The names of the WebApps assigned to `shard` in `ring`. */
  | { readonly op: "objectsOf"; readonly ring: string; readonly shard: string }
  /** Milliseconds from each create of `prefix` to the first `ring` label on it. */
  | { readonly op: "latencies"; readonly ring: string; readonly prefix: string }
  /** The holders of the ring's Leases. */
  | { readonly op: "leases"; readonly ring: string }
  | { readonly op: "cpu" }

/** Server → driver. */
export type FromServer =
  | { readonly op: "ready"; readonly kubeconfigPath: string }
  /** Every WebApp of the batch was created; `at` is the wall clock (ms) of the first create. */
  | { readonly op: "created"; readonly prefix: string; readonly at: number; readonly millis: number }
  | { readonly op: "labelled"; readonly millis: number }
  | { readonly op: "deleted"; readonly count: number }
  /** Every WebApp of the batch was changed; `at` is the wall clock (ms) of the first change. */
  | { readonly op: "touched"; readonly prefix: string; readonly at: number; readonly millis: number }
  | {
    readonly op: "assignment"
    readonly total: number
    /** Labelled with a shard and not being drained. */
    readonly assigned: number
    readonly draining: number
    readonly byShard: Readonly<Record<string, number>>
    /** Objects whose shard label is not the one the `label` op wrote (moved by the sharder since). */
    readonly moved: number
  }
  | { readonly op: "objectsOf"; readonly names: ReadonlyArray<string> }
  | {
    readonly op: "latencies"
    /** Milliseconds from create to the first shard label, of the objects labelled so far. */
    readonly millis: ReadonlyArray<number>
    /** How many are not labelled yet. */
    readonly missing: number
    /** The wall clock of each create, by name. */
    readonly createdAt: Readonly<Record<string, number>>
  }
  | {
    readonly op: "leases"
    /** The sharder Lease's holder ("" when released or absent). */
    readonly sharder: string
    /** The shards whose Lease has a holder. */
    readonly shards: ReadonlyArray<string>
  }
  | { readonly op: "cpu"; readonly cpuSeconds: number; readonly requests: number }

const send = (message: FromServer) => process.send!(message)
const prefixOf = (name: string) => name.slice(0, name.lastIndexOf("-"))

let requests = 0

/** An object whose assignment is timed: performance.now() of its create and of its first label of `ring`. */
interface Timed {
  readonly ring: string
  readonly created: number
  /** Date.now() of its create (the replicas' reconciles are timed with the wall clock). */
  readonly createdAt: number
  labelled?: number
}

const program = Effect.gen(function*() {
  const server = yield* TestApiServer.TestApiServer
  const cluster = yield* TestCluster.TestCluster
  const ok = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)
  yield* ok(cluster.create(Resource.crdManifest(WebApp) as any))
  yield* ok(cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }))

  /** Every WebApp's labels, by name. */
  const tracked = new Map<string, Readonly<Record<string, string>>>()
  const timed = new Map<string, Timed>()
  /** ring → the shard label the `label` op wrote on each object. */
  const prelabels = new Map<string, Map<string, string>>()
  yield* cluster.watch({ apiVersion: `${GROUP}/v1`, kind: KIND, namespace: NAMESPACE } as any).pipe(
    Stream.runForEach((event: any) =>
      Effect.sync(() => {
        const name: string = event.object.metadata.name
        if (event.type === "DELETED") return void tracked.delete(name)
        if (event.type !== "ADDED" && event.type !== "MODIFIED") return
        const labels = event.object.metadata.labels ?? {}
        tracked.set(name, labels)
        const t = timed.get(name)
        if (t !== undefined && t.labelled === undefined && labels[Sharding.shardLabel(t.ring)] !== undefined) {
          t.labelled = performance.now()
        }
      })
    ),
    Effect.forkScoped
  )

  const create = (message: Extract<ToServer, { op: "create" }>) =>
    Effect.gen(function*() {
      const started = performance.now()
      const at = Date.now()
      for (let i = 0; i < message.count; i++) {
        const name = `${message.prefix}-${String(i).padStart(5, "0")}`
        if (message.intervalMs > 0) {
          const due = started + i * message.intervalMs
          const wait = due - performance.now()
          if (wait > 0) yield* Effect.sleep(wait)
        }
        if (message.ring !== undefined) {
          timed.set(name, { ring: message.ring, created: performance.now(), createdAt: Date.now() })
        }
        const object = webApp(name)
        yield* ok(cluster.create(
          message.labels === undefined
            ? object
            : { ...object, metadata: { ...object.metadata, labels: message.labels } }
        ))
      }
      send({ op: "created", prefix: message.prefix, at, millis: performance.now() - started })
    })

  const matching = (prefix: string | undefined) =>
    [...tracked].filter(([name]) => prefix === undefined || prefixOf(name) === prefix)

  const label = (ring: string, shards: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const started = performance.now()
      const place = placement(shards)
      const written = new Map<string, string>()
      prelabels.set(ring, written)
      const list: any = yield* ok(cluster.list({ apiVersion: `${GROUP}/v1`, kind: KIND, namespace: NAMESPACE } as any))
      for (const object of list.items) {
        const name: string = object.metadata.name
        const shard = place(object.metadata.uid)
        written.set(name, shard)
        yield* ok(cluster.patch(
          { apiVersion: `${GROUP}/v1`, kind: KIND, name, namespace: NAMESPACE },
          {
            type: "merge",
            patch: {
              metadata: {
                labels: { [Sharding.shardLabel(ring)]: shard, [Sharding.drainLabel(ring)]: null }
              }
            }
          }
        ))
      }
      send({ op: "labelled", millis: performance.now() - started })
    })

  const remove = (prefix: string) =>
    Effect.gen(function*() {
      const names = matching(prefix).map(([name]) => name)
      for (const name of names) {
        yield* ok(cluster.delete({ apiVersion: `${GROUP}/v1`, kind: KIND, name, namespace: NAMESPACE }))
      }
      send({ op: "deleted", count: names.length })
    })

  const touch = (prefix: string) =>
    Effect.gen(function*() {
      const started = performance.now()
      const at = Date.now()
      for (const [name] of matching(prefix)) {
        yield* ok(cluster.patch(
          { apiVersion: `${GROUP}/v1`, kind: KIND, name, namespace: NAMESPACE },
          { type: "merge", patch: { spec: { replicas: 3 } } }
        ))
      }
      send({ op: "touched", prefix, at, millis: performance.now() - started })
    })

  const answer = (message: ToServer): Effect.Effect<void> => {
    switch (message.op) {
      case "create":
        return create(message)
      case "label":
        return label(message.ring, message.shards)
      case "delete":
        return remove(message.prefix)
      case "touch":
        return touch(message.prefix)
      case "assignment":
        return Effect.sync(() => {
          const shardLabel = Sharding.shardLabel(message.ring)
          const drainLabel = Sharding.drainLabel(message.ring)
          const byShard: Record<string, number> = {}
          let total = 0
          let assigned = 0
          let draining = 0
          let moved = 0
          const written = prelabels.get(message.ring)
          for (const [name, labels] of matching(message.prefix)) {
            total++
            const shard = labels[shardLabel]
            if (written?.has(name) === true && written.get(name) !== shard) moved++
            if (labels[drainLabel] !== undefined) draining++
            else if (shard !== undefined) {
              assigned++
              byShard[shard] = (byShard[shard] ?? 0) + 1
            }
          }
          send({ op: "assignment", total, assigned, draining, byShard, moved })
        })
      case "objectsOf":
        return Effect.sync(() => {
          const shardLabel = Sharding.shardLabel(message.ring)
          send({
            op: "objectsOf",
            names: [...tracked].filter(([, labels]) => labels[shardLabel] === message.shard).map(([name]) => name)
          })
        })
      case "latencies":
        return Effect.sync(() => {
          const millis: Array<number> = []
          const createdAt: Record<string, number> = {}
          let missing = 0
          for (const [name, t] of timed) {
            if (t.ring !== message.ring || prefixOf(name) !== message.prefix) continue
            createdAt[name] = t.createdAt
            if (t.labelled === undefined) missing++
            else millis.push(t.labelled - t.created)
          }
          send({ op: "latencies", millis, missing, createdAt })
        })
      case "leases":
        return Effect.map(
          ok(cluster.list({
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            namespace: NAMESPACE
          } as any)),
          (list: any) => {
            const items: ReadonlyArray<any> = list.items
            const holder = (lease: any): string => lease.spec?.holderIdentity ?? ""
            send({
              op: "leases",
              sharder: holder(items.find((l) => l.metadata.name === `${message.ring}-sharder`) ?? {}),
              shards: items
                .filter((l) => l.metadata.labels?.["lease.shard.reconcile.dev/ring"] === message.ring)
                .map(holder)
                .filter((h) => h !== "")
            })
          }
        )
      case "cpu":
        return Effect.sync(() => {
          const usage = process.cpuUsage()
          send({ op: "cpu", cpuSeconds: (usage.user + usage.system) / 1e6, requests })
        })
    }
  }

  const run = Effect.runForkWith(yield* Effect.context<never>())
  process.on("message", (message: ToServer) => run(answer(message)))
  send({ op: "ready", kubeconfigPath: server.kubeconfigPath })
  // the kubeconfig (a token) and the state directory (the CA key) go with the server
  const exit = () => {
    fs.rmSync(dir, { recursive: true, force: true })
    process.exit(0)
  }
  process.on("disconnect", exit)
  process.on("SIGTERM", exit)
  return yield* Effect.never
})

const dir = path.join(os.tmpdir(), `reconcile-bench-sharding-${process.pid}`)
const ServerLive = TestApiServer.layer({
  kubeconfigPath: path.join(dir, "kubeconfig"),
  stateDir: path.join(dir, "state"),
  log: () => {
    requests++
  },
  controllers: false
}).pipe(Layer.provideMerge(
  // BENCH_SHARDING_MODE=server: list and watch honour shardSelector, as kube-apiserver with the feature gate does
  process.env.BENCH_SHARDING_MODE === "server"
    ? TestCluster.layerWith({ featureGates: { ShardedListAndWatch: true } })
    : TestCluster.layer
))

Effect.runPromise(Effect.scoped(Effect.provide(program, ServerLive))).catch((e) => {
  console.error(e)
  process.exit(1)
})
