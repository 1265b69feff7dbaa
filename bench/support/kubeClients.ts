/**
 * The clients the kube benchmarks measure, over any server (`bench/kube.ts` on the TestApiServer, the replay server
 * and the real kube-apiserver; `bench/kube-profile.ts` on the replay server and in process): our watch stream, our
 * Watcher and Informer, client-node's `makeInformer`, and a raw HTTPS reader of the same stream.
 */
import * as k8s from "@kubernetes/client-node"
import * as Cache from "@reconcile/kube/Cache"
import * as Informer from "@reconcile/kube/Informer"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Resource from "@reconcile/kube/Resource"
import * as Watcher from "@reconcile/kube/Watcher"
import { Deferred, Effect, Layer, ManagedRuntime, Stream } from "effect"
import * as https from "node:https"
import { performance } from "node:perf_hooks"

/** A server the clients talk to: the TestApiServer (worker) or the replay server (child process). */
export interface Target {
  readonly name: string
  readonly ready: {
    readonly url: string
    readonly ca: string
    readonly kubeconfigPath: string
    /** A bearer token (the TestApiServer, the replay server) or a client certificate and key (kube-apiserver). */
    readonly token?: string | undefined
    readonly cert?: string | undefined
    readonly key?: string | undefined
  }
  readonly kc: k8s.KubeConfig
  readonly coreApi: k8s.CoreV1Api
  readonly ours: ManagedRuntime.ManagedRuntime<KubeClient.KubeClient | Kube.Kube, unknown>
}

export const makeTarget = (name: string, ready: Target["ready"]): Target => {
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

/** The TLS options and credentials of a raw HTTPS request to a target. */
export const httpsOptions = ({ ready }: Target): https.RequestOptions => ({
  ca: ready.ca,
  ...(ready.cert !== undefined ? { cert: ready.cert, key: ready.key } : {}),
  headers: ready.token !== undefined ? { Authorization: `Bearer ${ready.token}` } : {}
})

export interface WatchTarget {
  readonly target: Target
  readonly namespace: string
  /** The list's resourceVersion: the events come after it. */
  readonly from: string
  readonly events: number
}

/** The raw watch stream of our KubeClient (HTTP, line splitting, JSON.parse, decode), no watcher. */
export const clientWatch = ({ events, from, namespace, target }: WatchTarget) =>
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
export const oursWatch = (
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

export const theirsWatch = async ({ events, from, namespace, target }: WatchTarget) => {
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
export const rawWatch = ({ events, from, namespace, target }: WatchTarget, parse: boolean) =>
  new Promise<{ readonly perSec: number; readonly lines: ReadonlyArray<string> }>((resolve, reject) => {
    const t0 = performance.now()
    const lines: Array<string> = []
    const req = https.get(
      `${target.ready.url}/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${from}`,
      httpsOptions(target),
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
        res.on("end", () => {
          if (lines.length < events) {
            reject(
              new Error(`watch ended after ${lines.length} of ${events} lines: ${(lines.at(-1) ?? rest).slice(0, 300)}`)
            )
          }
        })
      }
    )
    req.on("error", (e) => lines.length < events && reject(e))
  })
