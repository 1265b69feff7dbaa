/**
 * Kube benchmark (issues 5 and 15): our Informer/Cache against client-node's `makeInformer`, side by side in one
 * run, over two servers over HTTPS (bearer token):
 *
 * - the TestApiServer, in a worker thread of this process (its own core and heap: its CPU time does not land on
 *   the client's event loop, its objects are not on the client's heap); ConfigMaps are created directly in the
 *   TestCluster behind it (no HTTP);
 * - the replay server (`./replay/server.ts`), a child process that serves list pages and watch events serialized
 *   before the clients start: every client runs flat out, bound by itself.
 *
 * (a) Cold sync of 10,000 and 100,000 ConfigMaps (~410 bytes of JSON each, ~720 with managedFields) on both
 *     servers: time until our informer is synced (default paging, 500 per page; and one page) vs `await
 *     makeInformer(...).start()` (one unpaginated list through `CoreV1Api.listNamespacedConfigMap`, as its docs
 *     do). Also a raw HTTPS fetch of the same pages with and without `JSON.parse` (the floor of any client), and the
 *     TestApiServer's own cost of those lists (in the worker, no HTTP).
 * (b) Heap bytes per cached object (TestApiServer runs): (used heap after sync − baseline) / N, after full GCs —
 *     ours with the default transform, ours with `transform: (o) => o` (managedFields kept), ours metadata-only
 *     (`MetadataOnly.make(Resource.ConfigMap)`), makeInformer (it has no transform).
 * (c) Steady watch throughput on both servers: M updates come after the list's resourceVersion, so the server
 *     writes them as fast as the client takes them. Ours (events reaching an Informer subscriber, the bare
 *     Watcher stream, our client's watch stream) vs makeInformer (`add`/`update` callbacks) vs a raw HTTPS read of
 *     the same stream (with and without `JSON.parse` per line) vs `JSON.parse` of the same lines in memory (the
 *     parse limit).
 *
 * Every figure is the median of BENCH_RUNS (3) interleaved runs. Writes bench/results/kube.json (the issue's
 * `watchRatioReplay`, `watchVsParseLimitReplay`, `syncRatio100kReplay`, `syncRatio100k`, `memoryRatio`,
 * `memoryRatioMetadataOnly`, `growth10kTo100k`, and every baseline). Run with `npm run bench:kube` (node needs
 * `--expose-gc`). Sizes: BENCH_SYNC_SMALL (10000), BENCH_SYNC_LARGE (100000), BENCH_WATCH_EVENTS (50000, on the
 * TestApiServer), BENCH_REPLAY_EVENTS (100000).
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
import { isMainThread, parentPort, Worker } from "node:worker_threads"
import * as Replay from "./replay/client.js"
import { configMap } from "./support/configMap.js"
import { heapUsed, median, perObject, settle } from "./support/heap.js"

const SMALL = Number(process.env.BENCH_SYNC_SMALL ?? 10_000)
const LARGE = Number(process.env.BENCH_SYNC_LARGE ?? 100_000)
const EVENTS = Number(process.env.BENCH_WATCH_EVENTS ?? 50_000)
const REPLAY_EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 100_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
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
              withoutManagedFields: JSON.stringify({ ...object, metadata }).length,
              object
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
const log = (line: string) => console.log(line)

interface SyncRun {
  readonly millis: number
  readonly bytesPerObject: number
}

/** A server the clients talk to: the TestApiServer (worker) or the replay server (child process). */
interface Target {
  readonly name: string
  readonly ready: { readonly url: string; readonly token: string; readonly ca: string; readonly kubeconfigPath: string }
  readonly kc: k8s.KubeConfig
  readonly coreApi: k8s.CoreV1Api
  readonly ours: ManagedRuntime.ManagedRuntime<KubeClient.KubeClient | Kube.Kube, unknown>
}

const makeTarget = (name: string, ready: Target["ready"]): Target => {
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(ready.kubeconfigPath)
  return {
    name,
    ready,
    kc,
    coreApi: kc.makeApiClient(k8s.CoreV1Api),
    ours: ManagedRuntime.make(KubeClient.layer.pipe(Layer.provideMerge(Kube.layerFromFile(ready.kubeconfigPath))))
  }
}

const oursSync = async (
  target: Target,
  namespace: string,
  n: number,
  options: Informer.Options<Resource.ConfigMap>,
  metadataOnly = false
): Promise<SyncRun> => {
  const before = await settle()
  const { after, millis } = await target.ours.runPromise(
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
  return { millis, bytesPerObject: perObject(before, after, released, n) }
}

const theirsSync = async (target: Target, namespace: string, n: number): Promise<SyncRun> => {
  const before = await settle()
  const t0 = performance.now()
  const informer = k8s.makeInformer(
    target.kc,
    `/api/v1/namespaces/${namespace}/configmaps`,
    () => target.coreApi.listNamespacedConfigMap({ namespace })
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

/** GETs a URL over HTTPS; the body as a string. */
const get = (target: Target, url: string) =>
  new Promise<string>((resolve, reject) => {
    const req = https.get(url, {
      ca: target.ready.ca,
      headers: { Authorization: `Bearer ${target.ready.token}` }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      res.on("error", reject)
    })
    req.on("error", reject)
  })

/**
 * GETs every page over HTTPS (the continue token is cut out) and reads the bodies: without parsing them (the floor
 * of any client on this server) or with `JSON.parse` (the floor of a client that stores parsed objects).
 */
const rawFetch = async (target: Target, namespace: string, limit: number | undefined, parse: boolean) => {
  const t0 = performance.now()
  let token: string | undefined
  do {
    const query = new URLSearchParams()
    if (limit !== undefined) query.set("limit", String(limit))
    if (token !== undefined) query.set("continue", token)
    const body = await get(target, `${target.ready.url}/api/v1/namespaces/${namespace}/configmaps?${query}`)
    if (parse) JSON.parse(body)
    token = /"continue":"([^"]+)"/.exec(body.slice(0, 2_000))?.[1]
  } while (token !== undefined)
  return performance.now() - t0
}

interface SyncFigures {
  readonly oursMs: number
  readonly oursMsRuns: ReadonlyArray<number>
  readonly oursOnePageMs: number
  readonly oursOnePageMsRuns: ReadonlyArray<number>
  readonly makeInformerMs: number
  readonly makeInformerMsRuns: ReadonlyArray<number>
  readonly rawHttpsFetchMs: { readonly paged500: number; readonly onePage: number }
  readonly rawHttpsParseMs: { readonly paged500: number; readonly onePage: number }
  readonly heapBytesPerObject: { readonly ours: number; readonly makeInformer: number }
}

/** Cold syncs of `namespace` (n objects) by both clients, `runs` times interleaved; medians. */
const syncBoth = async (target: Target, namespace: string, n: number, runs: number): Promise<SyncFigures> => {
  const ours: Array<SyncRun> = []
  const oursOnePage: Array<SyncRun> = []
  const theirs: Array<SyncRun> = []
  for (let r = 0; r < runs; r++) {
    theirs.push(await theirsSync(target, namespace, n))
    ours.push(await oursSync(target, namespace, n, {}))
    oursOnePage.push(await oursSync(target, namespace, n, { watcher: { pageSize: n } }))
    log(
      `  ${target.name} ${n}: run ${r + 1}: makeInformer ${round(theirs.at(-1)!.millis)} ms, ours ${
        round(ours.at(-1)!.millis)
      } ms (500/page), ${round(oursOnePage.at(-1)!.millis)} ms (one page)`
    )
  }
  const rawPaged = median([
    await rawFetch(target, namespace, 500, false),
    await rawFetch(target, namespace, 500, false)
  ])
  const rawSingle = median([
    await rawFetch(target, namespace, undefined, false),
    await rawFetch(target, namespace, undefined, false)
  ])
  const parsePaged = await rawFetch(target, namespace, 500, true)
  const parseSingle = await rawFetch(target, namespace, undefined, true)
  log(
    `  ${target.name} ${n}: raw HTTPS read ${round(rawPaged)} ms (500/page), ${round(rawSingle)} ms (one page); ` +
      `read + JSON.parse ${round(parsePaged)} / ${round(parseSingle)} ms`
  )
  const ms = (runs: ReadonlyArray<SyncRun>) => round(median(runs.map((r) => r.millis)))
  return {
    oursMs: ms(ours),
    oursMsRuns: ours.map((r) => round(r.millis)),
    oursOnePageMs: ms(oursOnePage),
    oursOnePageMsRuns: oursOnePage.map((r) => round(r.millis)),
    makeInformerMs: ms(theirs),
    makeInformerMsRuns: theirs.map((r) => round(r.millis)),
    rawHttpsFetchMs: { paged500: round(rawPaged), onePage: round(rawSingle) },
    rawHttpsParseMs: { paged500: round(parsePaged), onePage: round(parseSingle) },
    heapBytesPerObject: {
      ours: round(median(ours.concat(oursOnePage).map((r) => r.bytesPerObject))),
      makeInformer: round(median(theirs.map((r) => r.bytesPerObject)))
    }
  }
}

// -----------------------------------------------------------------------------------------------------------------
// watch

interface WatchTarget {
  readonly target: Target
  readonly namespace: string
  /** The list's resourceVersion: the events come after it. */
  readonly from: string
  readonly events: number
}

/** The raw watch stream of our KubeClient (HTTP, line splitting, JSON.parse, decode), no watcher. */
const clientWatch = ({ events, from, namespace, target }: WatchTarget) =>
  target.ours.runPromise(Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    let count = 0
    const t0 = performance.now()
    yield* client.watch(Resource.ConfigMap, { namespace, resourceVersion: from }).pipe(
      Stream.takeWhile(() => ++count < events),
      Stream.runDrain
    )
    return events / ((performance.now() - t0) / 1000)
  }))

/**
 * Events per second through our Informer to a subscriber (or the bare Watcher stream). `emptyList`: the list
 * answers no items at `from` without asking the server (the TestApiServer has the objects, the replay server's
 * list is empty already).
 */
const oursWatch = (
  { events, from, namespace, target }: WatchTarget,
  level: "informer" | "watcher",
  emptyList: boolean
) =>
  target.ours.runPromise(
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const go = yield* Deferred.make<void>()
      const done = yield* Deferred.make<number>()
      const real = Cache.listWatch(client, Resource.ConfigMap, { namespace })
      const listWatch: Watcher.ListWatch<Resource.ConfigMap> = {
        ...real,
        list: (options) =>
          Effect.andThen(
            Deferred.await(go),
            emptyList ? Effect.succeed({ items: [], resourceVersion: from }) : real.list(options)
          )
      }
      let count = 0
      const tick = Effect.suspend(() => ++count === events ? Deferred.succeed(done, performance.now()) : Effect.void)
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
      return events / ((t1 - t0) / 1000)
    }).pipe(Effect.scoped)
  )

const theirsWatch = async ({ events, from, namespace, target }: WatchTarget) => {
  const informer = k8s.makeInformer(
    target.kc,
    `/api/v1/namespaces/${namespace}/configmaps`,
    async () => ({ apiVersion: "v1", kind: "ConfigMapList", metadata: { resourceVersion: from }, items: [] })
  )
  let count = 0
  const done = new Promise<number>((resolve) => {
    const cb = () => {
      if (++count === events) resolve(performance.now())
    }
    informer.on("add", cb)
    informer.on("update", cb)
  })
  const t0 = performance.now()
  await informer.start()
  const t1 = await done
  await informer.stop()
  return events / ((t1 - t0) / 1000)
}

/**
 * Reads the same watch over raw HTTPS, splitting lines and `JSON.parse`-ing each (or not: then it measures the
 * server and the transport alone); returns the lines too.
 */
const rawWatch = ({ events, from, namespace, target }: WatchTarget, parse: boolean) =>
  new Promise<{ readonly perSec: number; readonly lines: ReadonlyArray<string> }>((resolve, reject) => {
    const t0 = performance.now()
    const lines: Array<string> = []
    const req = https.get(
      `${target.ready.url}/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${from}`,
      { ca: target.ready.ca, headers: { Authorization: `Bearer ${target.ready.token}` } },
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
            if (lines.length === events) {
              resolve({ perSec: events / ((performance.now() - t0) / 1000), lines })
              req.destroy()
              return
            }
          }
          rest = text.slice(start)
        })
      }
    )
    req.on("error", (e) => lines.length < events && reject(e))
  })

const parseLimit = (lines: ReadonlyArray<string>) => {
  const t0 = performance.now()
  let n = 0
  for (const line of lines) n += JSON.parse(line) === null ? 0 : 1
  return n / ((performance.now() - t0) / 1000)
}

const watchAll = async (w: WatchTarget, runs: number, emptyList: boolean) => {
  const out = {
    oursInformer: [] as Array<number>,
    oursWatcher: [] as Array<number>,
    oursClientStream: [] as Array<number>,
    makeInformer: [] as Array<number>,
    rawHttpsParse: [] as Array<number>,
    rawHttpsRead: [] as Array<number>,
    parse: [] as Array<number>
  }
  for (let r = 0; r < runs; r++) {
    out.makeInformer.push(await theirsWatch(w))
    out.oursInformer.push(await oursWatch(w, "informer", emptyList))
    out.oursWatcher.push(await oursWatch(w, "watcher", emptyList))
    out.oursClientStream.push(await clientWatch(w))
    out.rawHttpsRead.push((await rawWatch(w, false)).perSec)
    const raw = await rawWatch(w, true)
    out.rawHttpsParse.push(raw.perSec)
    out.parse.push(parseLimit(raw.lines))
    log(
      `  ${w.target.name} watch run ${r + 1}: ours ${round(out.oursInformer.at(-1)!)} ev/s (informer), ${
        round(out.oursWatcher.at(-1)!)
      } (watcher), ${round(out.oursClientStream.at(-1)!)} (client stream), makeInformer ${
        round(out.makeInformer.at(-1)!)
      }, raw HTTPS+parse ${round(raw.perSec)} (read only ${round(out.rawHttpsRead.at(-1)!)}), parse ${
        round(out.parse.at(-1)!)
      }`
    )
  }
  const medians = Object.fromEntries(Object.entries(out).map(([k, v]) => [k, round(median(v))])) as {
    readonly [K in keyof typeof out]: number
  }
  const runsOut = Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.map((x) => round(x))]))
  return { events: w.events, eventsPerSec: medians, runs: runsOut }
}

// -----------------------------------------------------------------------------------------------------------------

const main = async () => {
  const started = performance.now()
  const [server, replay] = await Promise.all([startServer(), Replay.start()])
  const api = makeTarget("TestApiServer", server.ready)
  const rep = makeTarget("replay", replay.ready)

  // (a) + (b) on the TestApiServer
  const testApiSync = async (n: number, runs: number) => {
    const namespace = `bench-${n}`
    log(`populating ${n} ConfigMaps…`)
    await server.call({ op: "populate", namespace, count: n })
    const sample = await server.call({ op: "sample", namespace })
    const figures = await syncBoth(api, namespace, n, runs)
    const oursKeepFields = await oursSync(api, namespace, n, { transform: (o) => o, watcher: { pageSize: n } })
    const oursMetadataOnly = await oursSync(api, namespace, n, { watcher: { pageSize: n } }, true)
    log(
      `  ${n}: heap per object: ours ${figures.heapBytesPerObject.ours} B, makeInformer ${figures.heapBytesPerObject.makeInformer} B, metadata-only ${
        round(oursMetadataOnly.bytesPerObject)
      } B (${round(oursMetadataOnly.millis)} ms)`
    )
    const serverPaged = await server.call({ op: "listCost", namespace, limit: 500 })
    const serverSingle = await server.call({ op: "listCost", namespace, limit: undefined })
    log(
      `  ${n}: server-side list cost ${round(serverPaged.millis)} ms (500/page, ${serverPaged.pages} pages), ${
        round(serverSingle.millis)
      } ms (one page)`
    )
    // (deleting a namespace is quadratic in the testkit: the namespaces stay)
    const { object, ...objectBytes } = sample
    return {
      template: object,
      figures: {
        objects: n,
        objectBytes,
        ...figures,
        serverListMs: {
          paged500: round(serverPaged.millis),
          onePage: round(serverSingle.millis),
          pages: serverPaged.pages
        },
        clientSideMs: {
          ours: round(figures.oursMs - figures.rawHttpsFetchMs.paged500),
          oursOnePage: round(figures.oursOnePageMs - figures.rawHttpsFetchMs.onePage),
          makeInformer: round(figures.makeInformerMs - figures.rawHttpsFetchMs.onePage)
        },
        heapBytesPerObject: {
          ...figures.heapBytesPerObject,
          oursKeepManagedFields: round(oursKeepFields.bytesPerObject),
          oursMetadataOnly: round(oursMetadataOnly.bytesPerObject)
        }
      }
    }
  }

  const replaySync = async (n: number, template: unknown, runs: number) => {
    const namespace = `replay-${n}`
    await replay.call({ op: "list", namespace, count: n, template, limits: [500, n, 0] })
    const figures = await syncBoth(rep, namespace, n, runs)
    await replay.call({ op: "drop", namespace })
    return { objects: n, ...figures }
  }

  const small = await testApiSync(SMALL, RUNS)
  const smallReplay = await replaySync(SMALL, small.template, RUNS)
  const large = await testApiSync(LARGE, RUNS)
  const largeReplay = await replaySync(LARGE, large.template, RUNS)

  // (c) watch throughput: TestApiServer, then the replay server
  const namespace = "bench-watch"
  log(`preparing ${EVENTS} updates of ${WATCH_OBJECTS} ConfigMaps…`)
  await server.call({ op: "populate", namespace, count: WATCH_OBJECTS })
  const { from } = await server.call({ op: "updates", namespace, objects: WATCH_OBJECTS, count: EVENTS }) as {
    from: string
  }
  const watchApi = await watchAll({ target: api, namespace, from, events: EVENTS }, RUNS, true)
  const replayNamespace = "replay-watch"
  const prepared = await replay.call({
    op: "watch",
    namespace: replayNamespace,
    objects: WATCH_OBJECTS,
    events: REPLAY_EVENTS,
    template: small.template
  }) as { resourceVersion: string }
  log(`replaying ${REPLAY_EVENTS} updates of ${WATCH_OBJECTS} ConfigMaps…`)
  const watchReplay = await watchAll(
    { target: rep, namespace: replayNamespace, from: prepared.resourceVersion, events: REPLAY_EVENTS },
    RUNS,
    false
  )

  await api.ours.dispose()
  await rep.ours.dispose()
  server.stop()
  replay.stop()

  const l = large.figures
  const s = small.figures
  const ratio = (a: number, b: number) => round(a / b, 3)
  const result = {
    benchmark: "kube",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    // the figures
    watchRatioReplay: ratio(watchReplay.eventsPerSec.oursInformer, watchReplay.eventsPerSec.makeInformer),
    watchVsParseLimitReplay: ratio(watchReplay.eventsPerSec.oursInformer, watchReplay.eventsPerSec.parse),
    syncRatio100kReplay: ratio(largeReplay.oursMs, largeReplay.makeInformerMs),
    syncRatio100k: ratio(l.oursMs, l.makeInformerMs),
    memoryRatio: ratio(l.heapBytesPerObject.ours, l.heapBytesPerObject.makeInformer),
    memoryRatioMetadataOnly: ratio(l.heapBytesPerObject.oursMetadataOnly, l.heapBytesPerObject.makeInformer),
    growth10kTo100k: {
      syncTime: ratio(l.oursMs, s.oursMs),
      syncTimeReplay: ratio(largeReplay.oursMs, smallReplay.oursMs),
      memory: ratio(l.heapBytesPerObject.ours * LARGE, s.heapBytesPerObject.ours * SMALL),
      makeInformerSyncTime: ratio(l.makeInformerMs, s.makeInformerMs),
      makeInformerSyncTimeReplay: ratio(largeReplay.makeInformerMs, smallReplay.makeInformerMs),
      makeInformerMemory: ratio(l.heapBytesPerObject.makeInformer * LARGE, s.heapBytesPerObject.makeInformer * SMALL)
    },
    // baselines and more
    watchEventsPerSecReplay: watchReplay.eventsPerSec.oursInformer,
    makeInformerEventsPerSecReplay: watchReplay.eventsPerSec.makeInformer,
    parseLimitEventsPerSecReplay: watchReplay.eventsPerSec.parse,
    rawHttpsParseEventsPerSecReplay: watchReplay.eventsPerSec.rawHttpsParse,
    rawHttpsReadEventsPerSecReplay: watchReplay.eventsPerSec.rawHttpsRead,
    watchRatio: ratio(watchApi.eventsPerSec.oursInformer, watchApi.eventsPerSec.makeInformer),
    watchVsParseLimit: ratio(watchApi.eventsPerSec.oursInformer, watchApi.eventsPerSec.parse),
    watchEventsPerSec: watchApi.eventsPerSec.oursInformer,
    makeInformerEventsPerSec: watchApi.eventsPerSec.makeInformer,
    syncRatio10k: ratio(s.oursMs, s.makeInformerMs),
    syncRatio10kReplay: ratio(smallReplay.oursMs, smallReplay.makeInformerMs),
    syncRatio100kOnePage: ratio(l.oursOnePageMs, l.makeInformerMs),
    syncRatio100kOnePageReplay: ratio(largeReplay.oursOnePageMs, largeReplay.makeInformerMs),
    memoryRatioKeepManagedFields: ratio(l.heapBytesPerObject.oursKeepManagedFields, l.heapBytesPerObject.makeInformer),
    memoryRatioMetadataOnlyVsOurs: ratio(l.heapBytesPerObject.oursMetadataOnly, l.heapBytesPerObject.ours),
    sync: { testApiServer: { small: s, large: l }, replay: { small: smallReplay, large: largeReplay } },
    watch: { objects: WATCH_OBJECTS, testApiServer: watchApi, replay: watchReplay },
    runs: RUNS,
    totalSeconds: round((performance.now() - started) / 1000, 1),
    notes: "Ratios are ours / makeInformer (sync time and memory: lower is better; watch: higher is better), medians " +
      "of the runs, both clients interleaved in one process. Two servers: the TestApiServer (a worker thread) and the " +
      "replay server (bench/replay/server.ts, a child process serving pre-serialized pages and watch events: the " +
      "client's own ceiling). Sync: ours with its defaults (500 per page) and with one page; makeInformer lists " +
      "everything in one request (listNamespacedConfigMap) and `start()` resolves once the list is stored and the " +
      "watch request is open. rawHttpsFetchMs: a client that only reads the bytes; rawHttpsParseMs: reads and " +
      "JSON.parses them. Heap (TestApiServer runs): used heap after full GCs, (with the cache − the lower of before " +
      "and after it) / N; makeInformer keeps managedFields (it has no transform), ours strips them by default. " +
      "memoryRatioMetadataOnly = ours metadata-only (MetadataOnly.make) / makeInformer full objects. Watch: events " +
      "per second through our Informer to a subscriber, the bare Watcher, our client's stream, makeInformer's " +
      "add/update callbacks, raw HTTPS read (+ JSON.parse) of the same stream, and JSON.parse of the same lines in " +
      "memory (the parse limit). growth10kTo100k: 100k ÷ 10k of sync time and of total cache heap."
  }
  const file = path.join(import.meta.dirname, "results", "kube.json")
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  const { sync: _s, watch: _w, ...summary } = result
  console.log(JSON.stringify(summary, null, 2))
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
