/**
 * One replica of the sharding benchmark's operator, in its own process: a `KubeController` for the WebApp custom
 * resource of the operator benchmark (`bench/operator/shared.ts`) on a `Cache`, with a `Manager` whose election is
 * `Sharding.layer` — this replica's shard of the ring, and the sharder when it holds the ring's Lease — as the
 * shared context of issue 24 puts it together.
 *
 * Each reconcile burns a fixed amount of CPU (`BENCH_SHARDING_BURN_ITERATIONS` rounds of an integer hash, calibrated
 * by the driver) and writes nothing; it records the object's name and the wall clock, sent to the driver in batches
 * every 50 ms (`reconciled`). Besides the operator protocol's `mark`/`report` (`serveDriver`: CPU seconds), the
 * driver asks for `count` (the objects in this replica's WebApp informer, which the Cache restricts to this shard's
 * label, and whether it has synced) and `heap` (V8's used heap after forced full GCs).
 *
 * Environment: BENCH_KUBECONFIG, BENCH_SHARDING_RING, BENCH_SHARDING_IDENTITY, BENCH_SHARDING_BURN_ITERATIONS (0),
 * BENCH_SHARDING_LEASE (`leaseDuration,renewDeadline,retryPeriod` in seconds; unset or empty: Sharding's defaults),
 * BENCH_SHARDING_MODE (Sharding's `mode`; unset: `auto`), BENCH_SHARDING_SNAPSHOT (a directory: a heap
 * snapshot with each `heap` measurement).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Manager from "@reconcile/core/Manager"
import * as Cache from "@reconcile/kube/Cache"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as KubeController from "@reconcile/kube/KubeController"
// from the index: a process whose first import is "@reconcile/kube/Sharding" fails on an import cycle in the
// package (LeaseLeaderElection and its internal module), as of 285e022
import { Sharding } from "@reconcile/kube"
import * as Undecodable from "@reconcile/kube/Undecodable"
import { Effect, Layer } from "effect"
import * as path from "node:path"
import * as v8 from "node:v8"
import { NAMESPACE, serveDriver, WebApp } from "../operator/shared.js"
import { heapUsed } from "../support/heap.js"
import { burn } from "./burn.js"

/** Driver → replica (besides `serveDriver`'s `mark` and `report`). */
export type ToReplica = { readonly op: "count" } | { readonly op: "heap" }

/** Replica → driver (besides `serveDriver`'s `started` and `report`). */
export type FromReplica =
  | { readonly op: "reconciled"; readonly names: ReadonlyArray<string>; readonly at: ReadonlyArray<number> }
  | { readonly op: "count"; readonly objects: number; readonly synced: boolean }
  | { readonly op: "heap"; readonly heapBytes: number; readonly rssBytes: number; readonly objects: number }

const ring = process.env.BENCH_SHARDING_RING!
const identity = process.env.BENCH_SHARDING_IDENTITY!
const iterations = Number(process.env.BENCH_SHARDING_BURN_ITERATIONS ?? 0)
const lease = process.env.BENCH_SHARDING_LEASE
const [leaseDuration, renewDeadline, retryPeriod] = lease === undefined || lease === ""
  ? []
  : lease.split(",").map((s) => `${Number(s)} seconds` as const)

const names: Array<string> = []
const at: Array<number> = []
setInterval(() => {
  if (names.length === 0) return
  process.send!({ op: "reconciled", names: names.splice(0), at: at.splice(0) } satisfies FromReplica)
}, 50).unref()

const Controller = KubeController.make({
  name: "bench-sharding",
  for: WebApp,
  reconcile: (app) =>
    Effect.sync(() => {
      burn(app.metadata.name!, iterations)
      names.push(app.metadata.name!)
      at.push(Date.now())
    }),
  onUndecodable: Undecodable.terminal,
  options: { maxConcurrentReconciles: 8 }
})

/** Answers the driver's `count` and `heap` from this replica's Cache. */
const Reporter = Layer.effectDiscard(Effect.gen(function*() {
  const cache = yield* Cache.Cache
  const informer = yield* cache.informer(WebApp)
  const run = Effect.runSyncWith(yield* Effect.context<never>())
  process.on("message", (message: ToReplica) => {
    switch (message.op) {
      case "count":
        process.send!(
          {
            op: "count",
            objects: informer.store.size(),
            synced: run(informer.hasSynced)
          } satisfies FromReplica
        )
        break
      case "heap": {
        const heapBytes = heapUsed()
        // BENCH_SHARDING_SNAPSHOT=DIR: a heap snapshot with each measurement, to see what the heap holds
        const dir = process.env.BENCH_SHARDING_SNAPSHOT
        if (dir !== undefined && dir !== "") {
          v8.writeHeapSnapshot(path.join(dir, `${identity}-${Date.now()}-${informer.store.size()}.heapsnapshot`))
        }
        process.send!(
          {
            op: "heap",
            heapBytes,
            rssBytes: process.memoryUsage().rss,
            objects: informer.store.size()
          } satisfies FromReplica
        )
        break
      }
    }
  })
}))

/** `BENCH_SHARDING_MODE`: Sharding's `mode` (unset: its default, `auto`). */
const mode = (process.env.BENCH_SHARDING_MODE || undefined) as Sharding.Options["mode"]

const Main = KubeController.layer(Controller).pipe(
  Layer.provideMerge(Reporter),
  Layer.provideMerge(Manager.layer({ metricsPort: 0, healthPort: 0 })),
  Layer.provide(Cache.layer()),
  Layer.provide(Sharding.layer({
    ring,
    identity,
    namespace: NAMESPACE,
    objectNamespace: NAMESPACE,
    controllers: [Controller],
    leaseDuration,
    renewDeadline,
    retryPeriod,
    mode
  })),
  Layer.provideMerge(KubeClient.layer),
  Layer.provide(Kube.layerFromFile(process.env.BENCH_KUBECONFIG!))
)

// a SIGTERM ends the Manager gracefully (the shard Lease is released); the driver's SIGKILL is a crash
serveDriver()
Manager.launch(Main).pipe(NodeRuntime.runMain({ teardown: Manager.teardown }))
