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
 * (d) The real kube-apiserver (`Envtest.make({ controllers: false })`: etcd + kube-apiserver v1.36, client
 *     certificate): cold sync of BENCH_REAL_SYNC (10000) ConfigMaps and watch throughput over BENCH_REAL_EVENTS
 *     (20000) updates replayed from the server's watch cache, ours vs makeInformer vs raw HTTPS, BENCH_REAL_RUNS
 *     (7) rounds, plus a live burst of BENCH_REAL_LIVE (1000) updates through the API with both informers
 *     watching. `syncRatioReal`, `watchRatioReal` and their baselines; `real` in the JSON. BENCH_REAL=0 skips it;
 *     without control-plane binaries (`AssetsNotFound`) it is skipped with a note. BENCH_KUBE_ONLY=real runs it
 *     alone and merges it into the last kube.json.
 *
 * Every figure is the median of BENCH_RUNS (3) interleaved runs. Writes bench/results/kube.json (the issue's
 * `watchRatioReplay`, `watchVsParseLimitReplay`, `watchVsRawCeilingReplay`, `syncRatio10kReplay`,
 * `syncRatio100kReplay`, `syncRatio100k`, `memoryRatio`,
 * `memoryRatioMetadataOnly`, `growth10kTo100k`, and every baseline). Run with `npm run bench:kube` (node needs
 * `--expose-gc`). Sizes: BENCH_SYNC_SMALL (10000), BENCH_SYNC_LARGE (100000), BENCH_WATCH_EVENTS (50000, on the
 * TestApiServer), BENCH_REPLAY_EVENTS (100000).
 */
import * as k8s from "@kubernetes/client-node"
import * as Cache from "@reconcile/kube/Cache"
import * as Informer from "@reconcile/kube/Informer"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as MetadataOnly from "@reconcile/kube/MetadataOnly"
import * as Resource from "@reconcile/kube/Resource"
import * as Envtest from "@reconcile/testkit/Envtest"
import * as TestApiServer from "@reconcile/testkit/TestApiServer"
import * as TestCluster from "@reconcile/testkit/TestCluster"
import { Deferred, Effect, Exit, Result, Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { isMainThread, parentPort, Worker } from "node:worker_threads"
import * as Replay from "./replay/client.js"
import { configMap } from "./support/configMap.js"
import { heapUsed, median, perObject, settle } from "./support/heap.js"
import { requestText } from "./support/http.js"
import {
  clientWatch,
  httpsOptions,
  makeTarget,
  oursWatch,
  rawWatch,
  type Target,
  theirsWatch,
  type WatchTarget
} from "./support/kubeClients.js"

const SMALL = Number(process.env.BENCH_SYNC_SMALL ?? 10_000)
const LARGE = Number(process.env.BENCH_SYNC_LARGE ?? 100_000)
const EVENTS = Number(process.env.BENCH_WATCH_EVENTS ?? 50_000)
const REPLAY_EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 100_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const REAL_SYNC = Number(process.env.BENCH_REAL_SYNC ?? 10_000)
const REAL_EVENTS = Number(process.env.BENCH_REAL_EVENTS ?? 20_000)
const REAL_RUNS = Number(process.env.BENCH_REAL_RUNS ?? 7)
const REAL_WRITERS = Number(process.env.BENCH_REAL_WRITERS ?? 32)
const REAL_LIVE = Number(process.env.BENCH_REAL_LIVE ?? 1_000)
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

/**
 * A list function for makeInformer that reads `pageSize` items per request, following the continue tokens (its
 * informer calls the list function once and takes what it returns).
 */
const pagedList = (target: Target, namespace: string, pageSize: number) => async (): Promise<k8s.V1ConfigMapList> => {
  const first = await target.coreApi.listNamespacedConfigMap({ namespace, limit: pageSize })
  const items = [...first.items]
  let token = first.metadata?._continue
  while (token !== undefined && token !== "") {
    const page = await target.coreApi.listNamespacedConfigMap({ namespace, limit: pageSize, _continue: token })
    for (const item of page.items) items.push(item)
    token = page.metadata?._continue
  }
  const { _continue: _, ...metadata } = first.metadata ?? {}
  return { ...first, metadata, items }
}

/** makeInformer's cold sync: one unpaginated list (as its docs do), or `pageSize` per page (`pagedList`). */
const theirsSync = async (target: Target, namespace: string, n: number, pageSize?: number): Promise<SyncRun> => {
  const before = await settle()
  const t0 = performance.now()
  const informer = k8s.makeInformer(
    target.kc,
    `/api/v1/namespaces/${namespace}/configmaps`,
    pageSize === undefined
      ? () => target.coreApi.listNamespacedConfigMap({ namespace })
      : pagedList(target, namespace, pageSize)
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
    const req = https.get(url, httpsOptions(target), (res) => {
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
  /** makeInformer with a list function that reads 500 per page (`pagedList`), when asked for. */
  readonly makeInformerPaged500Ms?: number
  readonly makeInformerPaged500MsRuns?: ReadonlyArray<number>
}

/**
 * Cold syncs of `namespace` (n objects) by both clients, `runs` times interleaved; medians. `alternate`: the
 * makeInformer runs come first in even rounds and last in odd ones, and include one with 500 per page.
 */
const syncBoth = async (
  target: Target,
  namespace: string,
  n: number,
  runs: number,
  alternate = false
): Promise<SyncFigures> => {
  const ours: Array<SyncRun> = []
  const oursOnePage: Array<SyncRun> = []
  const theirs: Array<SyncRun> = []
  const theirsPaged: Array<SyncRun> = []
  const theirsRuns = async () => {
    theirs.push(await theirsSync(target, namespace, n))
    if (alternate) theirsPaged.push(await theirsSync(target, namespace, n, 500))
  }
  for (let r = 0; r < runs; r++) {
    const theirsLast = alternate && r % 2 === 1
    if (!theirsLast) await theirsRuns()
    ours.push(await oursSync(target, namespace, n, {}))
    oursOnePage.push(await oursSync(target, namespace, n, { watcher: { pageSize: n } }))
    if (theirsLast) await theirsRuns()
    log(
      `  ${target.name} ${n}: run ${r + 1}: makeInformer ${round(theirs.at(-1)!.millis)} ms${
        alternate ? ` (${round(theirsPaged.at(-1)!.millis)} ms at 500/page)` : ""
      }, ours ${round(ours.at(-1)!.millis)} ms (500/page), ${round(oursOnePage.at(-1)!.millis)} ms (one page)`
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
    },
    ...(alternate
      ? { makeInformerPaged500Ms: ms(theirsPaged), makeInformerPaged500MsRuns: theirsPaged.map((r) => round(r.millis)) }
      : {})
  }
}

// -----------------------------------------------------------------------------------------------------------------
// watch

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
// (d) the real kube-apiserver (Envtest: etcd + kube-apiserver, no controller manager)

const ETCD_TXN = 100

/** A stored ConfigMap as read back from the server (a list item: no apiVersion and kind). */
interface Stored {
  readonly metadata: { readonly name: string; readonly resourceVersion?: string; readonly [k: string]: unknown }
  readonly [k: string]: unknown
}

/**
 * The admin user's requests (one keep-alive pool, `sockets` connections at most) and etcd's JSON gateway, for
 * writing the objects the clients then read.
 */
const makeAdmin = (
  plane: Envtest.Envtest.Service,
  credentials: { readonly cert: string; readonly key: string },
  sockets: number
) => {
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: sockets,
    ca: plane.certificateAuthority,
    cert: credentials.cert,
    key: credentials.key
  })
  const etcdAgent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const send = async (method: string, p: string, body?: unknown) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const answer = await requestText(https, `${plane.url}${p}`, {
      method,
      agent,
      headers: { accept: "application/json", ...(data !== undefined ? { "content-type": "application/json" } : {}) }
    }, data)
    if (answer.status >= 300) throw new Error(`${method} ${p}: ${answer.status} ${answer.body.slice(0, 300)}`)
    return answer.body
  }
  /** `count` calls of `f`, `inFlight` of them at once; the milliseconds they took. */
  const all = async (count: number, inFlight: number, f: (i: number) => Promise<unknown>) => {
    const t0 = performance.now()
    let next = 0
    const worker = async () => {
      while (next < count) await f(next++)
    }
    await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker))
    return performance.now() - t0
  }
  /** Puts objects into etcd under kube-apiserver's keys, `ETCD_TXN` per transaction (one revision each). */
  const etcdPut = (objects: ReadonlyArray<{ readonly key: string; readonly value: unknown }>) => {
    const b64 = (s: string) => Buffer.from(s).toString("base64")
    return all(Math.ceil(objects.length / ETCD_TXN), 4, async (t) => {
      const success = objects.slice(t * ETCD_TXN, (t + 1) * ETCD_TXN).map(({ key, value }) => ({
        request_put: { key: b64(key), value: b64(JSON.stringify(value)) }
      }))
      const data = JSON.stringify({ success })
      const answer = await requestText(http, `${plane.etcdUrl}/v3/kv/txn`, {
        method: "POST",
        agent: etcdAgent,
        headers: { "content-type": "application/json" }
      }, data)
      if (answer.status !== 200 || !answer.body.includes("\"succeeded\":true")) {
        throw new Error(`etcd txn: ${answer.status} ${answer.body.slice(0, 300)}`)
      }
    })
  }
  const key = (namespace: string, name: string) => `/registry/configmaps/${namespace}/${name}`
  const stored = (item: Stored, data: unknown) => {
    const { resourceVersion: _, ...metadata } = item.metadata
    return { apiVersion: "v1", kind: "ConfigMap", ...item, metadata, data }
  }
  const namespace = (name: string) =>
    send("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  return {
    /** A namespace and `count` ConfigMaps in it through the API, `writers` at once; the milliseconds they took. */
    create: async (ns: string, count: number, writers: number) => {
      await namespace(ns)
      return all(count, writers, (i) => send("POST", `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, i)))
    },
    /**
     * A namespace and `count` ConfigMaps in it: the first through the API, the others as etcd puts of copies of
     * it (its managedFields and creationTimestamp, their own name, uid, labels and data). The milliseconds the puts
     * took.
     */
    populate: async (ns: string, count: number) => {
      await namespace(ns)
      const first = JSON.parse(await send("POST", `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, 0))) as Stored
      const objects = Array.from({ length: count - 1 }, (_, k) => {
        const c = configMap(ns, k + 1)
        return {
          key: key(ns, c.metadata.name),
          value: {
            ...stored(first, c.data),
            metadata: { ...stored(first, c.data).metadata, ...c.metadata, uid: crypto.randomUUID() }
          }
        }
      })
      return etcdPut(objects)
    },
    /** `count` updates of the namespace's ConfigMaps through the API (`writers` at once), round `round` onwards. */
    update: (ns: string, objects: number, count: number, writers: number, round: number) =>
      all(count, writers, (n) => {
        const c = configMap(ns, n % objects, round + Math.floor(n / objects))
        return send("PUT", `/api/v1/namespaces/${ns}/configmaps/${c.metadata.name}`, c)
      }),
    /** The same as etcd puts (`ETCD_TXN` objects per revision): what the server's watch then replays. */
    etcdUpdate: async (ns: string, objects: number, count: number, round: number) => {
      const list = JSON.parse(await send("GET", `/api/v1/namespaces/${ns}/configmaps`)) as {
        readonly items: ReadonlyArray<Stored>
      }
      const byName = new Map(list.items.map((item) => [item.metadata.name, item]))
      return etcdPut(Array.from({ length: count }, (_, n) => {
        const c = configMap(ns, n % objects, round + Math.floor(n / objects))
        return { key: key(ns, c.metadata.name), value: stored(byName.get(c.metadata.name)!, c.data) }
      }))
    },
    /** The current resourceVersion (of a one-item list of the namespace's ConfigMaps). */
    resourceVersion: async (ns: string) =>
      (JSON.parse(await send("GET", `/api/v1/namespaces/${ns}/configmaps?limit=1`)) as {
        readonly metadata: { readonly resourceVersion: string }
      }).metadata.resourceVersion,
    close: () => {
      agent.destroy()
      etcdAgent.destroy()
    }
  }
}

type Admin = ReturnType<typeof makeAdmin>

/**
 * A live burst: both informers synced on the namespace's `objects` ConfigMaps, then the admin writes `events`
 * updates through the API (`REAL_WRITERS` in flight) as fast as the server takes them; when each informer saw the
 * last of them.
 */
const liveWatch = async (target: Target, admin: Admin, namespace: string, objects: number, events: number) => {
  const theirs = k8s.makeInformer(
    target.kc,
    `/api/v1/namespaces/${namespace}/configmaps`,
    () => target.coreApi.listNamespacedConfigMap({ namespace })
  )
  let theirCount = 0
  const theirsDone = new Promise<number>((resolve) => {
    theirs.on("update", () => {
      if (++theirCount === events) resolve(performance.now())
    })
  })
  await theirs.start()
  const figures = await target.ours.runPromise(
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const informer = yield* Informer.make(Cache.listWatch(client, Resource.ConfigMap, { namespace }))
      const done = yield* Deferred.make<number>()
      let count = 0
      yield* informer.events.pipe(
        Stream.runForEach((e) =>
          e._tag === "Update" && ++count === events ? Deferred.succeed(done, performance.now()) : Effect.void
        ),
        Effect.forkScoped
      )
      yield* informer.synced
      const t0 = performance.now()
      const writeMs = yield* Effect.promise(() => admin.update(namespace, objects, events, REAL_WRITERS, 1))
      const oursAt = yield* Deferred.await(done)
      const theirsAt = yield* Effect.promise(() => theirsDone)
      return { t0, writeMs, oursAt, theirsAt }
    }).pipe(Effect.scoped)
  )
  await theirs.stop()
  const written = figures.t0 + figures.writeMs
  return {
    updates: events,
    writeMs: round(figures.writeMs),
    writesPerSec: round(events / (figures.writeMs / 1000)),
    /** From the first write until the informer saw the last update. */
    oursEventsPerSec: round(events / ((figures.oursAt - figures.t0) / 1000)),
    makeInformerEventsPerSec: round(events / ((figures.theirsAt - figures.t0) / 1000)),
    /** From the last write's answer until the informer saw the last update (negative: before the answer came). */
    oursLagMs: round(figures.oursAt - written, 1),
    makeInformerLagMs: round(figures.theirsAt - written, 1)
  }
}

/**
 * Watch rounds on the real server: makeInformer and our Informer (in turn first, round by round) and a raw HTTPS
 * read of the same stream (no client, no parse: the server's own ceiling); medians.
 */
const watchReal = async (w: WatchTarget, runs: number) => {
  const out = {
    oursInformer: [] as Array<number>,
    makeInformer: [] as Array<number>,
    rawHttpsRead: [] as Array<number>
  }
  for (let r = 0; r < runs; r++) {
    if (r % 2 === 0) {
      out.makeInformer.push(await theirsWatch(w))
      out.oursInformer.push(await oursWatch(w, "informer", true))
    } else {
      out.oursInformer.push(await oursWatch(w, "informer", true))
      out.makeInformer.push(await theirsWatch(w))
    }
    out.rawHttpsRead.push((await rawWatch(w, false)).perSec)
    log(
      `  ${w.target.name} watch run ${r + 1}: ours ${round(out.oursInformer.at(-1)!)} ev/s, makeInformer ${
        round(out.makeInformer.at(-1)!)
      }, raw HTTPS read ${round(out.rawHttpsRead.at(-1)!)}`
    )
  }
  const medians = {
    oursInformer: round(median(out.oursInformer)),
    makeInformer: round(median(out.makeInformer)),
    rawHttpsRead: round(median(out.rawHttpsRead))
  }
  const runsOut = {
    oursInformer: out.oursInformer.map((x) => round(x)),
    makeInformer: out.makeInformer.map((x) => round(x)),
    rawHttpsRead: out.rawHttpsRead.map((x) => round(x))
  }
  return { events: w.events, eventsPerSec: medians, runs: runsOut }
}

const withTimeout = <A>(promise: Promise<A>, millis: number, what: string) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not done within ${millis / 1000} s`)), millis)
    promise.then((a) => {
      clearTimeout(timer)
      resolve(a)
    }, (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })

/** The client certificate and key of an Envtest kubeconfig (base64 `*-data` fields). */
const kubeconfigCredentials = (kubeconfig: string) => {
  const field = (name: string): string => {
    const match = new RegExp(`${name}:\\s*(\\S+)`).exec(kubeconfig)
    if (match === null) throw new Error(`kubeconfig has no ${name}`)
    return Buffer.from(match[1]!, "base64").toString("utf8")
  }
  return { cert: field("client-certificate-data"), key: field("client-key-data") }
}

/**
 * The real section: a fresh control plane; N ConfigMaps put into its etcd (timed) and both informers' cold syncs
 * (`syncBoth`, as on the other servers); 1,000 ConfigMaps created through the API (the server's create rate), a
 * live burst of updates through the API with both informers watching, then M updates put into etcd and read
 * again from the resourceVersion before them (`watchAll`: the server replays them from its watch cache as fast
 * as each client reads).
 */
const realSection = async (): Promise<{ readonly skipped: string } | { readonly figures: RealFigures }> => {
  if (process.env.BENCH_REAL === "0") {
    log("real kube-apiserver: skipped (BENCH_REAL=0)")
    return { skipped: "BENCH_REAL=0" }
  }
  const started = performance.now()
  const scope = Effect.runSync(Scope.make())
  try {
    log("real kube-apiserver: starting etcd + kube-apiserver (Envtest, no controller manager)…")
    const plane = await Effect.runPromise(Effect.result(Scope.provide(scope)(Envtest.make({ controllers: false }))))
    if (Result.isFailure(plane)) {
      if (plane.failure.reason !== "AssetsNotFound") throw plane.failure
      log(`real kube-apiserver: skipped, no control-plane binaries (${plane.failure.detail.split("\n")[0]})`)
      return { skipped: "AssetsNotFound" }
    }
    const real = plane.success
    const startSeconds = round((performance.now() - started) / 1000, 1)
    const etcdVersion = await fetch(`${real.etcdUrl}/version`).then(
      (r) => r.json() as Promise<{ readonly etcdserver?: string }>,
      () => ({ etcdserver: undefined })
    )
    log(`  kube-apiserver ${real.version}, etcd ${etcdVersion.etcdserver ?? "?"}, up in ${startSeconds} s`)
    const credentials = kubeconfigCredentials(real.kubeconfig)
    const target = makeTarget("kube-apiserver", {
      url: real.url,
      ca: real.certificateAuthority,
      kubeconfigPath: real.kubeconfigPath,
      ...credentials
    })
    const admin = makeAdmin(real, credentials, REAL_WRITERS)
    try {
      // (c) watch, first: kube-apiserver's watch cache sizes itself and shrinks when most of what it holds is
      // older than its freshness window (75 s), which the sync's 10,000 creates would be by then, and the M updates
      // the rounds replay must all be in it (else 410 Gone). Creates and a live burst through the API, then M
      // updates put into etcd and replayed from the cache.
      const watchNamespace = "real-watch"
      const createMs = await admin.create(watchNamespace, WATCH_OBJECTS, REAL_WRITERS)
      log(
        `  created ${WATCH_OBJECTS} ConfigMaps through the API in ${round(createMs)} ms (${
          round(WATCH_OBJECTS / (createMs / 1000))
        }/s, ${REAL_WRITERS} in flight)`
      )
      const live = await withTimeout(
        liveWatch(target, admin, watchNamespace, WATCH_OBJECTS, REAL_LIVE),
        120_000,
        "live watch"
      )
      log(
        `  live: ${REAL_LIVE} updates through the API at ${live.writesPerSec}/s; after the last answer ours saw the ` +
          `last update in ${live.oursLagMs} ms, makeInformer in ${live.makeInformerLagMs} ms`
      )
      const from = await admin.resourceVersion(watchNamespace)
      const etcdMs = await admin.etcdUpdate(
        watchNamespace,
        WATCH_OBJECTS,
        REAL_EVENTS,
        2 + Math.floor(REAL_LIVE / WATCH_OBJECTS)
      )
      // A consistent list waits until the watch cache has every one of them: a watch from `from` then replays them
      // all from the cache (events that arrive while it replays and share the resourceVersion of the one before are
      // skipped, and a transaction's puts share one).
      const t0 = performance.now()
      const to = await admin.resourceVersion(watchNamespace)
      const cacheWaitMs = performance.now() - t0
      log(
        `  put ${REAL_EVENTS} updates into etcd in ${round(etcdMs)} ms (the watch cache had them ${
          round(cacheWaitMs)
        } ms later); replaying resourceVersions ${from}–${to}…`
      )
      const w: WatchTarget = { target, namespace: watchNamespace, from, events: REAL_EVENTS }
      // the server has them all (after a 410 Gone the rounds would wait forever)
      const probe = await withTimeout(rawWatch(w, false), 60_000, `watch from resourceVersion ${from}`)
      const first = JSON.parse(probe.lines[0]!) as { readonly type: string }
      if (first.type !== "MODIFIED") throw new Error(`watch from ${from}: ${probe.lines[0]!.slice(0, 300)}`)
      const watch = await withTimeout(watchReal(w, REAL_RUNS), 150_000, "watch rounds")

      // (a) cold sync
      const namespace = `real-${REAL_SYNC}`
      const populateMs = await admin.populate(namespace, REAL_SYNC)
      log(`  put ${REAL_SYNC} ConfigMaps into etcd in ${round(populateMs)} ms (${ETCD_TXN} per transaction)`)
      const sync = await syncBoth(target, namespace, REAL_SYNC, REAL_RUNS, true)
      const seconds = round((performance.now() - started) / 1000, 1)
      log(`  real kube-apiserver section: ${seconds} s`)
      return {
        figures: {
          kubeApiserver: real.version,
          etcd: etcdVersion.etcdserver ?? null,
          assets: real.assets.source,
          objects: REAL_SYNC,
          events: REAL_EVENTS,
          rounds: REAL_RUNS,
          startSeconds,
          writes: {
            etcdPutMs: round(populateMs),
            etcdPutsPerSec: round((REAL_SYNC - 1) / (populateMs / 1000)),
            etcdUpdateMs: round(etcdMs),
            etcdUpdatesPerSec: round(REAL_EVENTS / (etcdMs / 1000)),
            watchCacheWaitMs: round(cacheWaitMs),
            objectsPerTransaction: ETCD_TXN,
            apiCreates: WATCH_OBJECTS,
            apiCreateMs: round(createMs),
            apiCreatesPerSec: round(WATCH_OBJECTS / (createMs / 1000)),
            apiWritersInFlight: REAL_WRITERS
          },
          sync,
          watch: { ...watch, objects: WATCH_OBJECTS, from, to, live },
          seconds
        }
      }
    } finally {
      admin.close()
      await target.ours.dispose()
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

interface RealFigures {
  readonly kubeApiserver: string
  readonly etcd: string | null
  readonly assets: string
  readonly objects: number
  readonly events: number
  readonly rounds: number
  readonly startSeconds: number
  readonly writes: Record<string, number>
  readonly sync: SyncFigures
  readonly watch: Awaited<ReturnType<typeof watchReal>> & {
    readonly objects: number
    readonly from: string
    readonly to: string
    readonly live: Awaited<ReturnType<typeof liveWatch>>
  }
  readonly seconds: number
}

// -----------------------------------------------------------------------------------------------------------------

/** Sections (a)–(c): the TestApiServer and the replay server. */
const inMemory = async () => {
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
  return {
    benchmark: "kube",
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    // the issue's figures
    watchRatioReplay: ratio(watchReplay.eventsPerSec.oursInformer, watchReplay.eventsPerSec.makeInformer),
    watchVsParseLimitReplay: ratio(watchReplay.eventsPerSec.oursInformer, watchReplay.eventsPerSec.parse),
    // issue 25: ours against the practical ceiling of any client of that stream, a raw HTTPS read that splits the
    // lines and JSON.parses each
    watchVsRawCeilingReplay: ratio(watchReplay.eventsPerSec.oursInformer, watchReplay.eventsPerSec.rawHttpsParse),
    syncRatio10kReplay: ratio(smallReplay.oursMs, smallReplay.makeInformerMs),
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
    syncRatio100kOnePage: ratio(l.oursOnePageMs, l.makeInformerMs),
    syncRatio100kOnePageReplay: ratio(largeReplay.oursOnePageMs, largeReplay.makeInformerMs),
    memoryRatioKeepManagedFields: ratio(l.heapBytesPerObject.oursKeepManagedFields, l.heapBytesPerObject.makeInformer),
    memoryRatioMetadataOnlyVsOurs: ratio(l.heapBytesPerObject.oursMetadataOnly, l.heapBytesPerObject.ours),
    sync: { testApiServer: { small: s, large: l }, replay: { small: smallReplay, large: largeReplay } },
    watch: { objects: WATCH_OBJECTS, testApiServer: watchApi, replay: watchReplay },
    runs: RUNS,
    notes: inMemoryNotes
  }
}

const inMemoryNotes =
  "Ratios are ours / makeInformer (sync time and memory: lower is better; watch: higher is better), medians " +
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

const realNotes =
  "Real (`real`, syncRatioReal, watchRatioReal): a fresh etcd + kube-apiserver from Envtest (no controller " +
  "manager, admin client certificate, etcd without fsync). Writes (real.writes): 1,000 ConfigMaps created and " +
  "1,000 updated through the API (`apiWritersInFlight` at once: the server's own write rate), the sync's N " +
  "ConfigMaps and the watch's M updates put straight into etcd under kube-apiserver's keys (100 per transaction, " +
  "copies of an object the API created: managedFields included), since the API takes minutes for them on two " +
  "cores. Sync: the same rounds as above (ours 500 per page = syncRatioReal, ours one page, makeInformer one " +
  "unpaginated list) plus makeInformer with a list function that follows continue tokens at 500 per page " +
  "(syncRatioRealPaged500); makeInformer first and last in turn; medians. Watch: a live burst through the API with both " +
  "informers watching (real.watch.live: both keep up with the write rate; lag from the writer's last answer), then " +
  "M updates read again from the resourceVersion before them, which the server replays from its watch cache as " +
  "fast as each client reads (watchRatioReal = ours / makeInformer events per second of those rounds; " +
  "rawHttpsRead: the same stream read with no client and no parse, the server's own ceiling). *PerRound: the " +
  "median of the ratios within each round."

type InMemory = Awaited<ReturnType<typeof inMemory>>

/** The figures of the real section that stand at the top of kube.json. */
const realHead = (real: Awaited<ReturnType<typeof realSection>>) => {
  if (!("figures" in real)) {
    return {
      syncRatioReal: null,
      watchRatioReal: null,
      syncRatioRealPerRound: null,
      syncRatioRealPaged500: null,
      syncRatioRealOnePage: null,
      watchRatioRealPerRound: null,
      syncMsReal: null,
      makeInformerSyncMsReal: null,
      rawHttpsSyncMsReal: null,
      watchEventsPerSecReal: null,
      makeInformerEventsPerSecReal: null,
      rawHttpsReadEventsPerSecReal: null
    }
  }
  const { sync, watch } = real.figures
  const perRound = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => round(median(a.map((x, i) => x / b[i]!)), 3)
  return {
    syncRatioReal: round(sync.oursMs / sync.makeInformerMs, 3),
    watchRatioReal: round(watch.eventsPerSec.oursInformer / watch.eventsPerSec.makeInformer, 3),
    /** The medians of the ratios within each round (the two clients ran back to back). */
    syncRatioRealPerRound: perRound(sync.oursMsRuns, sync.makeInformerMsRuns),
    watchRatioRealPerRound: perRound(watch.runs.oursInformer, watch.runs.makeInformer),
    /** Both at 500 per page (makeInformer through `pagedList`), and both with one page. */
    syncRatioRealPaged500: round(sync.oursMs / sync.makeInformerPaged500Ms!, 3),
    syncRatioRealOnePage: round(sync.oursOnePageMs / sync.makeInformerMs, 3),
    syncMsReal: sync.oursMs,
    makeInformerSyncMsReal: sync.makeInformerMs,
    rawHttpsSyncMsReal: sync.rawHttpsFetchMs.paged500,
    watchEventsPerSecReal: watch.eventsPerSec.oursInformer,
    makeInformerEventsPerSecReal: watch.eventsPerSec.makeInformer,
    rawHttpsReadEventsPerSecReal: watch.eventsPerSec.rawHttpsRead
  }
}

const main = async () => {
  const started = performance.now()
  const file = path.join(import.meta.dirname, "results", "kube.json")
  // BENCH_KUBE_ONLY=real: the real section alone, merged into the last kube.json (its other figures kept)
  const onlyReal = process.env.BENCH_KUBE_ONLY === "real"
  const base: InMemory & { readonly totalSeconds?: number } = onlyReal
    ? JSON.parse(fs.readFileSync(file, "utf8"))
    : await inMemory()
  const real = await realSection()
  const { notes: _, runs, sync, totalSeconds, watch, ...head } = base
  const result = {
    ...head,
    ...(onlyReal ? {} : { date: new Date().toISOString() }),
    ...realHead(real),
    sync,
    watch,
    real: "figures" in real ? { date: new Date().toISOString(), ...real.figures } : { skipped: real.skipped },
    runs,
    totalSeconds: onlyReal ? totalSeconds : round((performance.now() - started) / 1000, 1),
    notes: `${inMemoryNotes} ${realNotes}`
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  const { real: _r, sync: _s, watch: _w, ...summary } = result
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
