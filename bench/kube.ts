/**
 * Kube benchmark (issue 5): our Informer/Cache against client-node's `makeInformer`, side by side in one run, over
 * the same TestApiServer (HTTPS, bearer token).
 *
 * The server runs in a worker thread of this process (its own core and heap), so its CPU time does not land on
 * the client's event loop and its objects are not on the client's heap. ConfigMaps are created directly in the
 * TestCluster behind it (no HTTP).
 *
 * (a) Cold sync of 10,000 and 100,000 ConfigMaps (~410 bytes of JSON each, ~740 with managedFields): time until
 *     our informer is synced (default paging, 500 per page; and one page) vs `await makeInformer(...).start()`
 *     (one unpaginated list through `CoreV1Api.listNamespacedConfigMap`, as its docs do). Also the server's own
 *     cost of those lists (in the worker, no HTTP) and a raw HTTPS fetch of the same pages (no parsing) — the
 *     floor of any client.
 * (b) Heap bytes per cached object: (used heap after sync − baseline) / N, after full GCs — ours with the
 *     default transform (managedFields stripped), ours with `transform: (o) => o` (kept), ours metadata-only
 *     (`MetadataOnly.make(Resource.ConfigMap)`: PartialObjectMetadata, no `data`), makeInformer (kept: it has no
 *     transform).
 * (c) Steady watch throughput: M updates are in the server's history; each client watches from before them, so
 *     the server writes them as fast as the client takes them. Ours (events reaching an Informer subscriber, and
 *     the bare Watcher stream) vs makeInformer (`add`/`update` callbacks) vs plain `JSON.parse` of the same lines
 *     (in memory: the limit; and over a raw HTTPS stream).
 *
 * Writes bench/results/kube.json. Run with `npm run bench:kube` (node needs `--expose-gc`). Sizes:
 * BENCH_SYNC_SMALL (10000), BENCH_SYNC_LARGE (100000), BENCH_WATCH_EVENTS (50000).
 */
import * as k8s from "@kubernetes/client-node"
import * as Cache from "@reconcile/kube/Cache"
import * as Informer from "@reconcile/kube/Informer"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as MetadataOnly from "@reconcile/kube/MetadataOnly"
import * as Resource from "@reconcile/kube/Resource"
import * as Watcher from "@reconcile/kube/Watcher"
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Deferred, Effect, Layer, ManagedRuntime, Stream } from "effect"
import * as fs from "node:fs"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { isMainThread, parentPort, Worker } from "node:worker_threads"

const SMALL = Number(process.env.BENCH_SYNC_SMALL ?? 10_000)
const LARGE = Number(process.env.BENCH_SYNC_LARGE ?? 100_000)
const EVENTS = Number(process.env.BENCH_WATCH_EVENTS ?? 50_000)
const WATCH_OBJECTS = 1_000

// -----------------------------------------------------------------------------------------------------------------
// the server (worker thread)

type Command =
  | { readonly op: "populate"; readonly namespace: string; readonly count: number }
  | { readonly op: "updates"; readonly namespace: string; readonly objects: number; readonly count: number }
  | { readonly op: "sample"; readonly namespace: string }
  | { readonly op: "listCost"; readonly namespace: string; readonly limit: number | undefined }
  | { readonly op: "deleteNamespace"; readonly namespace: string }

interface Ready {
  readonly kubeconfigPath: string
  readonly url: string
  readonly token: string
  readonly ca: string
}

const configMap = (namespace: string, i: number, round = 0) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: `settings-${String(i).padStart(6, "0")}`,
    namespace,
    labels: { "app.kubernetes.io/name": "bench", "app.kubernetes.io/part-of": "reconcile", shard: String(i % 16) }
  },
  data: {
    "log-level": round % 2 === 0 ? "info" : "debug",
    endpoint: `https://service-${i % 64}.bench.svc.cluster.local:8443/api`,
    round: String(round)
  }
})

const sampleName = configMap("", 0).metadata.name

const serve = Effect.gen(function*() {
  const server = yield* TestApiServer.TestApiServer
  const cluster = yield* TestCluster.TestCluster
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  const ok = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)
  const handle = (command: Command): Effect.Effect<unknown> => {
    switch (command.op) {
      case "populate":
        return Effect.gen(function*() {
          yield* ok(cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: command.namespace } }))
          for (let i = 0; i < command.count; i++) yield* ok(cluster.create(configMap(command.namespace, i)))
          return yield* cluster.resourceVersion
        })
      case "updates":
        return Effect.gen(function*() {
          const from = yield* cluster.resourceVersion
          for (let n = 0; n < command.count; n++) {
            const i = n % command.objects
            yield* ok(cluster.update(configMap(command.namespace, i, 1 + Math.floor(n / command.objects))))
          }
          return { from, to: yield* cluster.resourceVersion }
        })
      case "sample":
        return Effect.map(
          ok(cluster.get({ apiVersion: "v1", kind: "ConfigMap", namespace: command.namespace, name: sampleName })),
          (object) => {
            const { managedFields: _, ...metadata } = object.metadata
            return {
              withManagedFields: JSON.stringify(object).length,
              withoutManagedFields: JSON.stringify({ ...object, metadata }).length
            }
          }
        )
      case "listCost":
        return Effect.gen(function*() {
          const started = performance.now()
          let token: string | undefined
          let pages = 0
          let bytes = 0
          do {
            const page = yield* ok(cluster.list({
              apiVersion: "v1",
              kind: "ConfigMap",
              namespace: command.namespace,
              limit: command.limit,
              continue: token
            }))
            bytes += JSON.stringify(page).length
            pages++
            token = page.metadata.continue
          } while (token !== undefined)
          return { millis: performance.now() - started, pages, bytes }
        })
      case "deleteNamespace":
        return ok(cluster.delete({ apiVersion: "v1", kind: "Namespace", name: command.namespace }))
    }
  }
  parentPort!.on("message", (message: { readonly id: number; readonly command: Command }) => {
    run(handle(message.command)).then(
      (result) => parentPort!.postMessage({ id: message.id, result }),
      (error) => parentPort!.postMessage({ id: message.id, error: String(error) })
    )
  })
  const ready: Ready = {
    kubeconfigPath: server.kubeconfigPath,
    url: server.url,
    token: server.token,
    ca: server.certificateAuthority
  }
  parentPort!.postMessage({ ready })
  return yield* Effect.never
}).pipe(
  Effect.provide(TestApiServer.layerWithCluster({ historySize: 2_000_000 })),
  Effect.scoped
)

// -----------------------------------------------------------------------------------------------------------------
// the clients (main thread)

const collect: () => void = (() => {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {
    v8.setFlagsFromString("--expose-gc")
    return vm.runInNewContext("gc") as () => void
  })()
  return () => {
    gc()
    gc()
  }
})()

const heapUsed = (): number => {
  collect()
  return v8.getHeapStatistics().used_heap_size
}

/** Lets the previous run's sockets close and its objects become garbage, then collects: the heap baseline. */
const settle = async (): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 250))
  return heapUsed()
}

/**
 * Heap bytes per object: (heap with the cache − baseline) / n, where the baseline is the lower of the heap before
 * the run and after it was stopped (garbage of a previous run still reachable raises one of them, never both).
 */
const perObject = (before: number, after: number, released: number, n: number) =>
  (after - Math.min(before, released)) / n

const startServer = () =>
  new Promise<{ readonly ready: Ready; readonly call: (command: Command) => Promise<any>; readonly stop: () => void }>(
    (resolve, reject) => {
      // This file again, through tsx. (Not an `eval` worker: its global `__filename` of "[worker eval]" breaks
      // @effect/platform-node's `createRequire(__filename ?? import.meta.url)`.)
      const worker = new Worker(new URL(import.meta.url), { execArgv: ["--import", "tsx"] })
      const pending = new Map<number, { resolve: (a: unknown) => void; reject: (e: unknown) => void }>()
      let next = 0
      worker.on("error", reject)
      worker.on("message", (message: any) => {
        if (message.ready !== undefined) {
          resolve({
            ready: message.ready,
            call: (command) =>
              new Promise((resolve, reject) => {
                const id = next++
                pending.set(id, { resolve, reject })
                worker.postMessage({ id, command })
              }),
            stop: () => void worker.terminate()
          })
          return
        }
        const waiter = pending.get(message.id)!
        pending.delete(message.id)
        if (message.error !== undefined) waiter.reject(new Error(message.error))
        else waiter.resolve(message.result)
      })
    }
  )

const round = (n: number, digits = 0) => Number(n.toFixed(digits))
const best = (xs: ReadonlyArray<number>) => Math.min(...xs)
const log = (line: string) => console.log(line)

interface SyncRun {
  readonly millis: number
  readonly bytesPerObject: number
}

const main = async () => {
  const started = performance.now()
  const server = await startServer()
  const { ready } = server
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(ready.kubeconfigPath)
  const coreApi = kc.makeApiClient(k8s.CoreV1Api)
  const ours = ManagedRuntime.make(
    KubeClient.layer.pipe(Layer.provideMerge(Kube.layerFromFile(ready.kubeconfigPath)))
  )

  const oursSync = async (
    namespace: string,
    n: number,
    options: Informer.Options<Resource.ConfigMap>,
    metadataOnly = false
  ) => {
    const before = await settle()
    const { millis, after } = await ours.runPromise(
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const t0 = performance.now()
        const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), { informer: options })
        const informer = metadataOnly
          ? yield* cache.informer(MetadataOnly.make(Resource.ConfigMap), { namespace })
          : yield* cache.informer(Resource.ConfigMap, { namespace })
        yield* informer.synced
        const millis = performance.now() - t0
        if (informer.store.size() !== n) throw new Error(`ours: ${informer.store.size()} objects, expected ${n}`)
        return { millis, after: heapUsed() }
      }).pipe(Effect.scoped)
    )
    const released = await settle()
    return { millis, bytesPerObject: perObject(before, after, released, n) } satisfies SyncRun
  }

  const theirsSync = async (namespace: string, n: number): Promise<SyncRun> => {
    const before = await settle()
    const t0 = performance.now()
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => coreApi.listNamespacedConfigMap({ namespace })
    )
    await informer.start()
    const millis = performance.now() - t0
    const stored = informer.list(namespace).length
    if (stored !== n) throw new Error(`makeInformer: ${stored} objects, expected ${n}`)
    const after = heapUsed()
    await informer.stop()
    const released = await settle()
    return { millis, bytesPerObject: perObject(before, after, released, n) }
  }

  /** GETs every page over HTTPS and reads the bodies without parsing them (the continue token is cut out). */
  const rawFetch = async (namespace: string, limit: number | undefined) => {
    const t0 = performance.now()
    let token: string | undefined
    do {
      const query = new URLSearchParams()
      if (limit !== undefined) query.set("limit", String(limit))
      if (token !== undefined) query.set("continue", token)
      const body = await new Promise<string>((resolve, reject) => {
        const req = https.get(`${ready.url}/api/v1/namespaces/${namespace}/configmaps?${query}`, {
          ca: ready.ca,
          headers: { Authorization: `Bearer ${ready.token}` }
        }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8", 0, 2_000)))
          res.on("error", reject)
        })
        req.on("error", reject)
      })
      token = /"continue":"([^"]+)"/.exec(body)?.[1]
    } while (token !== undefined)
    return performance.now() - t0
  }

  const sync = async (n: number, runs: number, heavyRuns: number, cleanUp: boolean) => {
    const namespace = `bench-${n}`
    log(`populating ${n} ConfigMaps…`)
    await server.call({ op: "populate", namespace, count: n })
    const sample = await server.call({ op: "sample", namespace })
    const oursDefault: Array<SyncRun> = []
    const oursOnePage: Array<SyncRun> = []
    const theirs: Array<SyncRun> = []
    for (let r = 0; r < runs; r++) {
      theirs.push(await theirsSync(namespace, n))
      if (r < heavyRuns) oursDefault.push(await oursSync(namespace, n, {}))
      oursOnePage.push(await oursSync(namespace, n, { watcher: { pageSize: n } }))
      log(
        `  ${n}: run ${r + 1}: makeInformer ${round(theirs.at(-1)!.millis)} ms, ours ${
          r < heavyRuns ? round(oursDefault.at(-1)!.millis) : "-"
        } ms (500/page), ${round(oursOnePage.at(-1)!.millis)} ms (one page)`
      )
    }
    const oursKeepFields = await oursSync(namespace, n, { transform: (o) => o, watcher: { pageSize: n } })
    const oursMetadataOnly = await oursSync(namespace, n, { watcher: { pageSize: n } }, true)
    log(
      `  ${n}: heap per object: ours ${round(best(oursOnePage.map((r) => r.bytesPerObject)))} B, metadata-only ${
        round(oursMetadataOnly.bytesPerObject)
      } B (${round(oursMetadataOnly.millis)} ms)`
    )
    const serverPaged = await server.call({ op: "listCost", namespace, limit: 500 })
    const serverSingle = await server.call({ op: "listCost", namespace, limit: undefined })
    const rawPaged = await rawFetch(namespace, 500)
    const rawSingle = await rawFetch(namespace, undefined)
    log(
      `  ${n}: server-side list cost ${round(serverPaged.millis)} ms (500/page, ${serverPaged.pages} pages), ${
        round(serverSingle.millis)
      } ms (one page); raw HTTPS fetch ${round(rawPaged)} / ${round(rawSingle)} ms`
    )
    // (deleting a namespace is quadratic in the testkit: the large one stays)
    if (cleanUp) await server.call({ op: "deleteNamespace", namespace })
    return {
      objects: n,
      objectBytes: sample,
      oursMs: round(best(oursDefault.map((r) => r.millis))),
      oursMsRuns: oursDefault.map((r) => round(r.millis)),
      oursOnePageMs: round(best(oursOnePage.map((r) => r.millis))),
      oursOnePageMsRuns: oursOnePage.map((r) => round(r.millis)),
      makeInformerMs: round(best(theirs.map((r) => r.millis))),
      makeInformerMsRuns: theirs.map((r) => round(r.millis)),
      serverListMs: {
        paged500: round(serverPaged.millis),
        onePage: round(serverSingle.millis),
        pages: serverPaged.pages
      },
      // what is left of each sync once a client that only reads the same bytes is taken away
      clientSideMs: {
        ours: round(best(oursDefault.map((r) => r.millis)) - rawPaged),
        oursOnePage: round(best(oursOnePage.map((r) => r.millis)) - rawSingle),
        makeInformer: round(best(theirs.map((r) => r.millis)) - rawSingle)
      },
      rawHttpsFetchMs: { paged500: round(rawPaged), onePage: round(rawSingle) },
      heapBytesPerObject: {
        ours: round(best(oursDefault.concat(oursOnePage).map((r) => r.bytesPerObject))),
        oursKeepManagedFields: round(oursKeepFields.bytesPerObject),
        oursMetadataOnly: round(oursMetadataOnly.bytesPerObject),
        makeInformer: round(best(theirs.map((r) => r.bytesPerObject)))
      }
    }
  }

  // (a) + (b)
  const small = await sync(SMALL, 3, 3, true)
  const large = await sync(LARGE, 2, 1, false)

  // (c) watch throughput
  const namespace = "bench-watch"
  log(`preparing ${EVENTS} updates of ${WATCH_OBJECTS} ConfigMaps…`)
  await server.call({ op: "populate", namespace, count: WATCH_OBJECTS })
  const { from } = await server.call({ op: "updates", namespace, objects: WATCH_OBJECTS, count: EVENTS }) as {
    from: string
  }

  /** The raw watch stream of our KubeClient (HTTP, line splitting, JSON.parse, decode), no watcher. */
  const clientWatch = () =>
    ours.runPromise(Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      let count = 0
      const t0 = performance.now()
      yield* client.watch(Resource.ConfigMap, { namespace, resourceVersion: from }).pipe(
        Stream.takeWhile(() => ++count < EVENTS),
        Stream.runDrain
      )
      return EVENTS / ((performance.now() - t0) / 1000)
    }))

  const oursWatch = (level: "informer" | "watcher") =>
    ours.runPromise(
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const go = yield* Deferred.make<void>()
        const done = yield* Deferred.make<number>()
        const real = Cache.listWatch(client, Resource.ConfigMap, { namespace })
        // an empty list at `from`: the watch then replays the EVENTS updates
        const listWatch: Watcher.ListWatch<Resource.ConfigMap> = {
          ...real,
          list: () => Effect.as(Deferred.await(go), { items: [], resourceVersion: from })
        }
        let count = 0
        const tick = Effect.suspend(() => ++count === EVENTS ? Deferred.succeed(done, performance.now()) : Effect.void)
        if (level === "informer") {
          const informer = yield* Informer.make(listWatch)
          yield* informer.events.pipe(Stream.runForEach(() => tick), Effect.forkScoped)
        } else {
          yield* Watcher.watch(listWatch).pipe(
            Stream.runForEach((e) => e._tag === "Apply" ? tick : Effect.void),
            Effect.forkScoped
          )
        }
        yield* Effect.sleep("20 millis") // the subscriber is in place
        const t0 = performance.now()
        yield* Deferred.succeed(go, undefined)
        const t1 = yield* Deferred.await(done)
        return EVENTS / ((t1 - t0) / 1000)
      }).pipe(Effect.scoped)
    )

  const theirsWatch = async () => {
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      async () => ({ apiVersion: "v1", kind: "ConfigMapList", metadata: { resourceVersion: from }, items: [] })
    )
    let count = 0
    const done = new Promise<number>((resolve) => {
      const cb = () => {
        if (++count === EVENTS) resolve(performance.now())
      }
      informer.on("add", cb)
      informer.on("update", cb)
    })
    const t0 = performance.now()
    await informer.start()
    const t1 = await done
    await informer.stop()
    return EVENTS / ((t1 - t0) / 1000)
  }

  /**
   * Reads the same watch over raw HTTPS, splitting lines and `JSON.parse`-ing each (or not: then it measures the
   * server and the transport alone); returns the lines too.
   */
  const rawWatch = (parse: boolean) =>
    new Promise<{ readonly perSec: number; readonly lines: ReadonlyArray<string> }>((resolve, reject) => {
      const t0 = performance.now()
      const lines: Array<string> = []
      const req = https.get(
        `${ready.url}/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${from}`,
        { ca: ready.ca, headers: { Authorization: `Bearer ${ready.token}` } },
        (res) => {
          let rest = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => {
            const text = rest + chunk
            let start = 0
            let end: number
            while ((end = text.indexOf("\n", start)) >= 0) {
              const line = text.slice(start, end)
              start = end + 1
              if (parse) JSON.parse(line)
              lines.push(line)
              if (lines.length === EVENTS) {
                resolve({ perSec: EVENTS / ((performance.now() - t0) / 1000), lines })
                req.destroy()
                return
              }
            }
            rest = text.slice(start)
          })
        }
      )
      req.on("error", (e) => lines.length < EVENTS && reject(e))
    })

  const parseLimit = (lines: ReadonlyArray<string>) => {
    const t0 = performance.now()
    let n = 0
    for (const line of lines) n += JSON.parse(line) === null ? 0 : 1
    return n / ((performance.now() - t0) / 1000)
  }

  const watchRuns = {
    informer: [] as Array<number>,
    watcher: [] as Array<number>,
    client: [] as Array<number>,
    theirs: [] as Array<number>
  }
  const rawRuns: Array<number> = []
  const transportRuns: Array<number> = []
  const parseRuns: Array<number> = []
  for (let r = 0; r < 3; r++) {
    watchRuns.theirs.push(await theirsWatch())
    watchRuns.informer.push(await oursWatch("informer"))
    watchRuns.watcher.push(await oursWatch("watcher"))
    watchRuns.client.push(await clientWatch())
    transportRuns.push((await rawWatch(false)).perSec)
    const raw = await rawWatch(true)
    rawRuns.push(raw.perSec)
    parseRuns.push(parseLimit(raw.lines))
    log(
      `  watch run ${r + 1}: ours ${round(watchRuns.informer.at(-1)!)} ev/s (informer), ${
        round(watchRuns.watcher.at(-1)!)
      } (watcher), ${round(watchRuns.client.at(-1)!)} (client stream), makeInformer ${
        round(watchRuns.theirs.at(-1)!)
      }, raw HTTPS+parse ${round(raw.perSec)} (read only ${round(transportRuns.at(-1)!)}), parse ${
        round(parseRuns.at(-1)!)
      }`
    )
  }
  const top = (xs: ReadonlyArray<number>) => Math.max(...xs)

  await ours.dispose()
  server.stop()

  const watchEventsPerSec = top(watchRuns.informer)
  const informerEventsPerSec = top(watchRuns.theirs)
  const parseLimitEventsPerSec = top(parseRuns)
  const result = {
    benchmark: "kube",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    syncRatio100k: round(large.oursMs / large.makeInformerMs, 3),
    syncRatio10k: round(small.oursMs / small.makeInformerMs, 3),
    syncRatio100kOnePage: round(large.oursOnePageMs / large.makeInformerMs, 3),
    syncRatio100kClientSide: round(large.clientSideMs.ours / large.clientSideMs.makeInformer, 3),
    memoryRatio: round(large.heapBytesPerObject.ours / large.heapBytesPerObject.makeInformer, 3),
    memoryRatioKeepManagedFields: round(
      large.heapBytesPerObject.oursKeepManagedFields / large.heapBytesPerObject.makeInformer,
      3
    ),
    // metadata-only (MetadataOnly.make) / full, both ours with the default transform: what `owns` saves per object
    memoryRatioMetadataOnly: round(large.heapBytesPerObject.oursMetadataOnly / large.heapBytesPerObject.ours, 3),
    watchEventsPerSec: round(watchEventsPerSec),
    informerEventsPerSec: round(informerEventsPerSec),
    parseLimitEventsPerSec: round(parseLimitEventsPerSec),
    watcherEventsPerSec: round(top(watchRuns.watcher)),
    clientWatchEventsPerSec: round(top(watchRuns.client)),
    rawHttpsParseEventsPerSec: round(top(rawRuns)),
    rawHttpsReadEventsPerSec: round(top(transportRuns)),
    watchVsParseLimit: round(watchEventsPerSec / parseLimitEventsPerSec, 3),
    watchVsMakeInformer: round(watchEventsPerSec / informerEventsPerSec, 3),
    sync: { small, large },
    watch: {
      events: EVENTS,
      objects: WATCH_OBJECTS,
      runs: {
        oursInformer: watchRuns.informer.map((x) => round(x)),
        oursWatcher: watchRuns.watcher.map((x) => round(x)),
        oursClientStream: watchRuns.client.map((x) => round(x)),
        makeInformer: watchRuns.theirs.map((x) => round(x)),
        rawHttpsParse: rawRuns.map((x) => round(x)),
        rawHttpsRead: transportRuns.map((x) => round(x)),
        parse: parseRuns.map((x) => round(x))
      }
    },
    totalSeconds: round((performance.now() - started) / 1000, 1),
    notes: "Ratios are ours / makeInformer (lower is better for sync time and memory). Sync: best run; ours with " +
      "its defaults (500 per page) and with one page; makeInformer lists everything in one request " +
      "(listNamespacedConfigMap, typed deserialization) and `start()` resolves once the list is stored and the " +
      "watch request is open. serverListMs is the TestCluster's own cost of those lists (no HTTP); rawHttpsFetchMs " +
      "a client that only reads the bytes; clientSideMs = sync − rawHttpsFetchMs. Heap: used heap after full GCs, " +
      "(with the cache − the lower of before and after it) / N; makeInformer " +
      "always keeps managedFields; oursMetadataOnly caches PartialObjectMetadata (MetadataOnly.make, one page), " +
      "memoryRatioMetadataOnly = oursMetadataOnly / ours. Watch: events per second through our Informer to a subscriber " +
      "(watchEventsPerSec), the bare Watcher stream, makeInformer's add/update callbacks (informerEventsPerSec), " +
      "raw HTTPS + JSON.parse, and JSON.parse of the same lines in memory (parseLimitEventsPerSec); best of 3. " +
      "The server runs in a worker thread of the same process."
  }
  const file = path.join(import.meta.dirname, "results", "kube.json")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  console.log(JSON.stringify(result, null, 2))
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
} else {
  Effect.runFork(serve)
}
