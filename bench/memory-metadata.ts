/**
 * Heap per cached object of a metadata-only cache (issue 15's `memoryRatioMetadataOnly`), quickly: the same
 * measure as bench/kube.ts (b) — used heap after full GCs, (with the cache − the lower of the heap before and after
 * it) / N, the TestApiServer in a worker thread so its objects are not on this heap — for three caches of the same
 * N ConfigMaps, interleaved in one run:
 *
 * - ours metadata-only: `cache.informer(MetadataOnly.make(Resource.ConfigMap), { namespace })`, default transform;
 * - ours full objects: `cache.informer(Resource.ConfigMap, { namespace })` (managedFields stripped by default);
 * - client-node's `makeInformer` with full objects (the baseline of the ratio).
 *
 * Both of ours list in one page (as bench/kube.ts's metadata-only figure does). Prints bytes per object per run,
 * the medians and the ratios. `MEMORY_SIZES` (10000,100000), `MEMORY_RUNS` (3); `MEMORY_SNAPSHOT=path` writes a
 * heap snapshot of this process with the metadata-only cache of the first size held (for DevTools' Summary view).
 * Run with `npx tsx --expose-gc bench/memory-metadata.ts`.
 */
import * as k8s from "@kubernetes/client-node"
import * as Cache from "@reconcile/kube/Cache"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as MetadataOnly from "@reconcile/kube/MetadataOnly"
import * as Resource from "@reconcile/kube/Resource"
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Effect, Layer, ManagedRuntime } from "effect"
import { performance } from "node:perf_hooks"
import * as v8 from "node:v8"
import { isMainThread, parentPort, Worker } from "node:worker_threads"
import { configMap } from "./support/configMap.js"
import { heapUsed, median, perObject, settle } from "./support/heap.js"

const SIZES = (process.env.MEMORY_SIZES ?? "10000,100000").split(",").map(Number)
const RUNS = Number(process.env.MEMORY_RUNS ?? 3)
const SNAPSHOT = process.env.MEMORY_SNAPSHOT

interface Ready {
  readonly kubeconfigPath: string
}

// the server (worker thread): populates a namespace on request
const serve = Effect.gen(function*() {
  const server = yield* TestApiServer.TestApiServer
  const cluster = yield* TestCluster.TestCluster
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  parentPort!.on("message", (message: { readonly id: number; readonly namespace: string; readonly count: number }) => {
    const populate = Effect.gen(function*() {
      yield* cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: message.namespace } })
      for (let i = 0; i < message.count; i++) yield* cluster.create(configMap(message.namespace, i))
    }).pipe(Effect.orDie)
    run(populate).then(() => parentPort!.postMessage({ id: message.id }))
  })
  parentPort!.postMessage({ ready: { kubeconfigPath: server.kubeconfigPath } satisfies Ready })
  return yield* Effect.never
}).pipe(Effect.provide(TestApiServer.layerWithCluster()), Effect.scoped)

const startServer = () =>
  new Promise<{ readonly ready: Ready; readonly populate: (namespace: string, count: number) => Promise<void> }>(
    (resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { execArgv: ["--import", "tsx"] })
      const pending = new Map<number, () => void>()
      let next = 0
      worker.on("error", reject)
      worker.on("message", (message: any) => {
        if (message.ready !== undefined) {
          resolve({
            ready: message.ready,
            populate: (namespace, count) =>
              new Promise((resolve) => {
                const id = next++
                pending.set(id, resolve)
                worker.postMessage({ id, namespace, count })
              })
          })
          return
        }
        pending.get(message.id)!()
        pending.delete(message.id)
      })
    }
  )

const main = async () => {
  const server = await startServer()
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(server.ready.kubeconfigPath)
  const coreApi = kc.makeApiClient(k8s.CoreV1Api)
  const ours = ManagedRuntime.make(
    KubeClient.layer.pipe(Layer.provideMerge(Kube.layerFromFile(server.ready.kubeconfigPath)))
  )

  /** Time to synced of each of our runs (ms), for a look at what the layout costs in time. */
  let millis: Array<number> = []
  const oursRun = async (namespace: string, n: number, metadataOnly: boolean, snapshot?: string) => {
    const before = await settle()
    const after = await ours.runPromise(
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const t0 = performance.now()
        const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), {
          informer: { watcher: { pageSize: n } }
        })
        const informer = metadataOnly
          ? yield* cache.informer(MetadataOnly.make(Resource.ConfigMap), { namespace })
          : yield* cache.informer(Resource.ConfigMap, { namespace })
        yield* informer.synced
        millis.push(performance.now() - t0)
        if (informer.store.size() !== n) throw new Error(`ours: ${informer.store.size()} objects, expected ${n}`)
        const after = heapUsed()
        if (snapshot !== undefined) console.log(`  heap snapshot: ${v8.writeHeapSnapshot(snapshot)}`)
        return after
      }).pipe(Effect.scoped)
    )
    return perObject(before, after, await settle(), n)
  }

  const theirsRun = async (namespace: string, n: number) => {
    const before = await settle()
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => coreApi.listNamespacedConfigMap({ namespace })
    )
    await informer.start()
    if (informer.list(namespace).length !== n) throw new Error(`makeInformer: wrong count`)
    const after = heapUsed()
    await informer.stop()
    return perObject(before, after, await settle(), n)
  }

  for (const [i, n] of SIZES.entries()) {
    const namespace = `memory-${n}`
    console.log(`populating ${n} ConfigMaps…`)
    await server.populate(namespace, n)
    if (i === 0 && SNAPSHOT !== undefined) await oursRun(namespace, n, true, SNAPSHOT)
    const runs = { metadataOnly: [] as Array<number>, ours: [] as Array<number>, makeInformer: [] as Array<number> }
    for (let r = 0; r < RUNS; r++) {
      runs.makeInformer.push(await theirsRun(namespace, n))
      millis = []
      runs.metadataOnly.push(await oursRun(namespace, n, true))
      runs.ours.push(await oursRun(namespace, n, false))
      console.log(
        `  ${n} run ${r + 1}: bytes/object metadata-only ${Math.round(runs.metadataOnly.at(-1)!)}, ours ${
          Math.round(runs.ours.at(-1)!)
        }, makeInformer ${Math.round(runs.makeInformer.at(-1)!)}; synced in ${millis.map(Math.round).join(" / ")} ms`
      )
    }
    const m = { metadataOnly: median(runs.metadataOnly), ours: median(runs.ours), theirs: median(runs.makeInformer) }
    const spread = (xs: ReadonlyArray<number>) => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`
    console.log(
      `  ${n} median: metadata-only ${Math.round(m.metadataOnly)} B (${spread(runs.metadataOnly)}), ours ${
        Math.round(m.ours)
      } B (${spread(runs.ours)}), makeInformer ${Math.round(m.theirs)} B (${spread(runs.makeInformer)}); ` +
        `memoryRatioMetadataOnly ${(m.metadataOnly / m.theirs).toFixed(3)}, memoryRatio ${
          (m.ours / m.theirs).toFixed(3)
        }`
    )
  }
  await ours.dispose()
  process.exit(0)
}

if (isMainThread) await main()
else Effect.runFork(serve)
