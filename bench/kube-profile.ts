/**
 * The informer's hot paths alone, for profiling (issue 25): the replay server (`./replay/server.ts`, a child
 * process) serves a watch of BENCH_REPLAY_EVENTS (100000) updates and a list of BENCH_SYNC_SMALL (10000) ConfigMaps,
 * and this process runs one client over them, BENCH_RUNS (5) times, printing each run. Run it under the profiler:
 *
 *   npx tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/kube-profile.ts watch ours
 *   npx tsx --heap-prof --heap-prof-dir=/tmp/prof bench/kube-profile.ts sync ours
 *   npx tsx bench/support/profileSummary.ts /tmp/prof/*.cpuprofile
 *
 * Modes: `watch` (events/s through an Informer to a subscriber; `ours`, `watcher` (the bare Watcher stream),
 * `client` (KubeClient's watch stream), `theirs` (client-node's makeInformer), `raw` (HTTPS + line split +
 * JSON.parse), `all` (each in turn, interleaved)) and `sync` (cold sync time; `ours` (500 per page), `onepage`,
 * `theirs` (makeInformer, one unpaginated list), `all`) and `pipeline` (the watch's bytes fed in process, no network:
 * `ours`, `watcher`, `client`, `all`: what our side costs per event). Each run prints this process's CPU and the
 * replay server's (share of the run's wall time). Figures in the output only: `npm run bench:kube` is the benchmark.
 */
import * as k8s from "@kubernetes/client-node"
import * as Cache from "@reconcile/kube/Cache"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as KubeError from "@reconcile/kube/KubeError"
import * as Resource from "@reconcile/kube/Resource"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import * as fs from "node:fs"
import * as Replay from "./replay/client.js"
import { configMap } from "./support/configMap.js"
import { clientWatch, makeTarget, oursWatch, rawWatch, theirsWatch, type WatchTarget } from "./support/kubeClients.js"
import { Profiling } from "./support/profiling.js"

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 100_000)
const OBJECTS = Number(process.env.BENCH_WATCH_OBJECTS ?? 1_000)
const SMALL = Number(process.env.BENCH_SYNC_SMALL ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
/** More page sizes for `sync` (`pageN`: ours at N per page), e.g. BENCH_PAGES=100,250. */
const PAGES = (process.env.BENCH_PAGES ?? "").split(",").filter((p) => p !== "").map(Number)
const [mode = "watch", who = "all"] = process.argv.slice(2)

/** A ConfigMap as kube-apiserver stores it: uid, timestamps, one managedFields entry. */
const template = {
  ...configMap("template", 0),
  metadata: {
    ...configMap("template", 0).metadata,
    uid: "00000000-0000-4000-8000-000000000000",
    resourceVersion: "1",
    creationTimestamp: "2026-12-05T00:00:00Z",
    managedFields: [{
      manager: "bench",
      operation: "Update",
      apiVersion: "v1",
      time: "2026-12-05T00:00:00Z",
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:data": { ".": {}, "f:endpoint": {}, "f:log-level": {}, "f:round": {} },
        "f:metadata": {
          "f:labels": { ".": {}, "f:app.kubernetes.io/name": {}, "f:app.kubernetes.io/part-of": {}, "f:shard": {} }
        }
      }
    }]
  }
}

const main = async () => {
  const replay = await Replay.start()
  const target = makeTarget("replay", replay.ready)
  const { coreApi, kc, ours } = target

  const watchNs = "profile-watch"
  const { resourceVersion: from } = await replay.call({
    op: "watch",
    namespace: watchNs,
    objects: OBJECTS,
    events: EVENTS,
    template
  }) as { resourceVersion: string }
  const syncNs = "profile-sync"
  await replay.call({ op: "list", namespace: syncNs, count: SMALL, template, limits: [500, SMALL, 0, ...PAGES] })

  const oursSync = (pageSize?: number) =>
    ours.runPromise(
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const t0 = performance.now()
        const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), {
          informer: pageSize === undefined ? {} : { watcher: { pageSize } }
        })
        const informer = yield* cache.informer(Resource.ConfigMap, { namespace: syncNs })
        yield* informer.synced
        if (informer.store.size() !== SMALL) throw new Error(`ours: ${informer.store.size()} objects`)
        return performance.now() - t0
      }).pipe(Effect.scoped)
    )

  const theirsSync = async () => {
    const t0 = performance.now()
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${syncNs}/configmaps`,
      () => coreApi.listNamespacedConfigMap({ namespace: syncNs })
    )
    await informer.start()
    const millis = performance.now() - t0
    if (informer.list(syncNs).length !== SMALL) throw new Error("makeInformer: wrong count")
    await informer.stop()
    return millis
  }

  /**
   * The same watch, in process: its lines cut into 16 KiB chunks (TLS records, as a socket delivers them; one line
   * per chunk with BENCH_CHUNK=line, as kube-apiserver flushes each event) and fed to
   * a `Kube` whose `stream` returns them: what the client, watcher and informer cost per event, with no network.
   */
  const lines: Array<string> = []
  for (let n = 0; n < EVENTS; n++) {
    const i = n % OBJECTS
    const object = {
      ...template,
      metadata: {
        ...template.metadata,
        name: `settings-${String(i).padStart(6, "0")}`,
        namespace: watchNs,
        uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        resourceVersion: String(Number(from) + n + 1)
      },
      data: { ...template.data, round: String(1 + Math.floor(n / OBJECTS)) }
    }
    lines.push(`{"type":"MODIFIED","object":${JSON.stringify(object)}}\n`)
  }
  const bytes = Buffer.from(lines.join(""))
  // BENCH_CHUNK=line: one event per chunk, as kube-apiserver flushes each event of a watch
  const chunks: Array<Uint8Array> = []
  if (process.env.BENCH_CHUNK === "line") { for (const line of lines) chunks.push(Buffer.from(line)) }
  else for (let at = 0; at < bytes.length; at += 16_384) chunks.push(bytes.subarray(at, at + 16_384))
  const inProcess = ManagedRuntime.make(
    KubeClient.layer.pipe(Layer.provideMerge(
      Layer.effect(
        Kube.Kube,
        Effect.map(Kube.Kube, (kube) => ({
          ...kube,
          // one chunk per turn of the event loop, as a socket delivers them (a synchronous producer would starve the
          // informer's subscriber: fibers yield after a count of operations, not of time)
          stream: () =>
            Stream.fromAsyncIterable(
              (async function*() {
                for (const chunk of chunks) {
                  await new Promise((resolve) => setImmediate(resolve))
                  yield chunk
                }
              })(),
              (cause) => new KubeError.Transport({ reason: "Response", cause })
            )
        }))
      ).pipe(Layer.provide(Kube.layerFromFile(replay.ready.kubeconfigPath)))
    ))
  )
  const w: WatchTarget = { target, namespace: watchNs, from, events: EVENTS }
  const watchers: Record<string, () => Promise<number>> = {
    theirs: () => theirsWatch(w),
    ours: () => oursWatch(w, "informer", true),
    watcher: () => oursWatch(w, "watcher", true),
    client: () => clientWatch(w),
    raw: async () => (await rawWatch(w, true)).perSec
  }
  const syncs: Record<string, () => Promise<number>> = {
    theirs: theirsSync,
    ours: () => oursSync(),
    onepage: () => oursSync(SMALL),
    ...Object.fromEntries(PAGES.map((n) => [`page${n}`, () => oursSync(n)]))
  }
  // the same clients, with our runtime's `Kube` replaced by the one above
  const p: WatchTarget = { ...w, target: { ...target, ours: inProcess } }
  const pipelines: Record<string, () => Promise<number>> = {
    ours: () => oursWatch(p, "informer", true),
    watcher: () => oursWatch(p, "watcher", true),
    client: () => clientWatch(p)
  }
  const table = mode === "watch" ? watchers : mode === "pipeline" ? pipelines : syncs
  const names = who === "all" ? Object.keys(table) : who.split(",")
  /** The replay server's CPU time (utime + stime from /proc, in clock ticks of 10 ms). */
  const serverCpuMillis = () => {
    const fields = fs.readFileSync(`/proc/${replay.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
  const results: Record<string, Array<number>> = {}
  const profiling = await Profiling.start()
  for (let r = 0; r < RUNS; r++) {
    const line: Array<string> = []
    for (const name of names) {
      const cpu0 = process.cpuUsage()
      const server0 = serverCpuMillis()
      const t0 = performance.now()
      const figure = await table[name]!()
      const cpu = process.cpuUsage(cpu0)
      const wall = performance.now() - t0
      const busy = (cpu.user + cpu.system) / 1000 / wall
      const server = (serverCpuMillis() - server0) / wall
      ;(results[name] ??= []).push(figure)
      const perEvent = mode === "sync" ? "" : `, ${((cpu.user + cpu.system) / EVENTS).toFixed(2)} µs cpu/event`
      line.push(
        `${name} ${Math.round(figure)} (cpu ${Math.round(busy * 100)} %${perEvent}, server ${
          Math.round(server * 100)
        } %)`
      )
    }
    console.log(`run ${r + 1}: ${line.join(", ")} ${mode === "sync" ? "ms" : "events/s"}`)
  }
  await profiling.stop()
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`medians: ${names.map((n) => `${n} ${Math.round(median(results[n]!))}`).join(", ")}`)
  if (results.theirs !== undefined) {
    for (const name of names.filter((n) => n !== "theirs")) {
      console.log(`  ${name} / theirs: ${(median(results[name]!) / median(results.theirs)).toFixed(3)}`)
    }
  }
  await ours.dispose()
  await inProcess.dispose()
  replay.stop()
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
