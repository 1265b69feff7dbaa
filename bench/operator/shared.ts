/**
 * What the three operators of the end-to-end benchmark share: the WebApp-like custom resource, the objects its
 * reconcile applies, the convergence rule, and the child side of the driver's protocol (IPC messages, CPU and
 * memory figures).
 *
 * Every implementation runs the same logic for a WebApp `ns/name`: read the owner (from its cache), server-side
 * apply one Deployment and one Service (the WebApp as their controller owner), then — when
 * `status.observedGeneration` is not the object's generation yet — merge-patch its status. It watches WebApps,
 * Deployments and Services (a change of an owned object enqueues its owner), deduplicates keys in a queue,
 * runs `CONCURRENCY` workers and retries a failed reconcile with exponential backoff.
 */
import * as Resource from "@reconcile/kube/Resource"
import { Schema } from "effect"
import { performance } from "node:perf_hooks"
import * as v8 from "node:v8"

/** Workers per operator (the same for every implementation). */
export const CONCURRENCY = 8
/** The field manager of every apply. */
export const FIELD_MANAGER = "bench-operator"
export const GROUP = "bench.reconcile.dev"
export const VERSION = "v1"
export const KIND = "WebApp"
export const PLURAL = "webapps"
export const NAMESPACE = "bench"

export const WebApp = Resource.custom({
  group: GROUP,
  version: VERSION,
  kind: KIND,
  plural: PLURAL,
  scope: "Namespaced",
  spec: Schema.Struct({ image: Schema.String, replicas: Schema.Int, port: Schema.Int }),
  status: Schema.Struct({ observedGeneration: Schema.optional(Schema.Int), ready: Schema.optional(Schema.Boolean) })
})
export type WebApp = Resource.Type<typeof WebApp>

/** The shape every implementation reads (plain JSON of a WebApp). */
export interface WebAppJson {
  readonly metadata: {
    readonly name?: string | undefined
    readonly namespace?: string | undefined
    readonly uid?: string | undefined
    readonly generation?: number | undefined
  }
  readonly spec: { readonly image: string; readonly replicas: number; readonly port: number }
  readonly status?: { readonly observedGeneration?: number | undefined } | undefined
}

export interface OwnerRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller: boolean
  readonly blockOwnerDeletion: boolean
}

export const ownerRef = (app: WebAppJson): OwnerRef => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: KIND,
  name: app.metadata.name!,
  uid: app.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true
})

const labels = (app: WebAppJson) => ({
  "app.kubernetes.io/name": app.metadata.name!,
  "app.kubernetes.io/part-of": "bench"
})

/** The Deployment of a WebApp (without owner references: each implementation adds them its own way). */
export const deployment = (app: WebAppJson) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: app.metadata.name!, namespace: app.metadata.namespace!, labels: labels(app) },
  spec: {
    replicas: app.spec.replicas,
    selector: { matchLabels: labels(app) },
    template: {
      metadata: { labels: labels(app) },
      spec: {
        containers: [{ name: "app", image: app.spec.image, ports: [{ name: "http", containerPort: app.spec.port }] }]
      }
    }
  }
})

/** The Service of a WebApp. */
export const service = (app: WebAppJson) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: app.metadata.name!, namespace: app.metadata.namespace!, labels: labels(app) },
  spec: { selector: labels(app), ports: [{ name: "http", port: app.spec.port, targetPort: app.spec.port }] }
})

/** The status patch, or `undefined` when the status already says the generation converged. */
export const statusPatch = (app: WebAppJson) =>
  app.status?.observedGeneration === app.metadata.generation
    ? undefined
    : { status: { observedGeneration: app.metadata.generation, ready: true } }

/** A WebApp the server creates. */
export const webApp = (name: string) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: KIND,
  metadata: { name, namespace: NAMESPACE },
  spec: { image: `registry.example/app-${name}:1.0`, replicas: 2, port: 8080 }
})

// -----------------------------------------------------------------------------------------------------------------
// the child side of the driver protocol

/** Driver → operator. */
export type ToOperator = { readonly op: "mark" } | { readonly op: "report" }

/** Operator → driver. */
export type FromOperator =
  | { readonly op: "started"; readonly startupMillis: number }
  | {
    readonly op: "report"
    readonly cpuSeconds: number
    readonly cpuSecondsTotal: number
    readonly peakRssBytes: number
    readonly peakHeapBytes: number
  }

/**
 * Runs the protocol in an operator process: peak heap sampled every 100 ms, `process.cpuUsage()` from the driver's
 * `mark` (just before the objects are created) to its `report`. (Requests are counted by the server, the same way
 * for every implementation.)
 */
export const serveDriver = (options: { readonly exitOnSigterm?: boolean } = {}): void => {
  // without a handler, SIGTERM ends the process at once (no CPU profile is written with --cpu-prof)
  if (options.exitOnSigterm === true) process.on("SIGTERM", () => process.exit(0))
  let peakHeap = 0
  const sample = () => {
    const heap = v8.getHeapStatistics().used_heap_size
    if (heap > peakHeap) peakHeap = heap
  }
  setInterval(sample, 100).unref()
  let mark = process.cpuUsage()
  process.on("message", (message: ToOperator) => {
    if (message.op === "mark") {
      mark = process.cpuUsage()
      peakHeap = 0
      sample()
    } else if (message.op === "report") {
      sample()
      const window = process.cpuUsage(mark)
      const total = process.cpuUsage()
      const reply: FromOperator = {
        op: "report",
        cpuSeconds: (window.user + window.system) / 1e6,
        cpuSecondsTotal: (total.user + total.system) / 1e6,
        peakRssBytes: process.resourceUsage().maxRSS * 1024,
        peakHeapBytes: peakHeap
      }
      process.send!(reply)
    }
  })
  process.send!({ op: "started", startupMillis: performance.now() } satisfies FromOperator)
  // the driver ends this process with SIGTERM; a lost driver (IPC closed) ends it too
  process.on("disconnect", () => process.exit(0))
}

/**
 * A plain deduplicating work queue with workers and per-key exponential backoff (client-go's semantics: a key is
 * never processed by two workers at once; a key added while it is processed runs again after). What a TypeScript
 * author writes without a controller runtime; used by the client-node and kubernetes-fluent-client operators.
 */
export const makeQueue = (
  concurrency: number,
  reconcile: (key: string) => Promise<void>,
  onError: (key: string, error: unknown) => void = () => {}
) => {
  const queue: Array<string> = []
  let head = 0
  const queued = new Set<string>()
  const processing = new Set<string>()
  const dirty = new Set<string>()
  const failures = new Map<string, number>()
  const waiting: Array<() => void> = []

  const add = (key: string): void => {
    if (processing.has(key)) {
      dirty.add(key)
      return
    }
    if (queued.has(key)) return
    queued.add(key)
    queue.push(key)
    const wake = waiting.pop()
    if (wake !== undefined) wake()
  }
  const take = async (): Promise<string> => {
    while (head === queue.length) await new Promise<void>((resolve) => waiting.push(resolve))
    const key = queue[head++]!
    if (head > 4096 && head * 2 > queue.length) {
      queue.splice(0, head)
      head = 0
    }
    queued.delete(key)
    processing.add(key)
    return key
  }
  const done = (key: string): void => {
    processing.delete(key)
    if (dirty.delete(key)) add(key)
  }
  const worker = async (): Promise<never> => {
    for (;;) {
      const key = await take()
      try {
        await reconcile(key)
        failures.delete(key)
      } catch (error) {
        onError(key, error)
        const n = failures.get(key) ?? 0
        failures.set(key, n + 1)
        // 5 ms · 2^n, at most 10 s
        setTimeout(() => add(key), Math.min(5 * 2 ** n, 10_000))
      } finally {
        done(key)
      }
    }
  }
  for (let i = 0; i < concurrency; i++) void worker()
  return {
    add,
    get length() {
      return queue.length - head
    }
  }
}

export const keyOf = (metadata: { readonly namespace?: string | undefined; readonly name?: string | undefined }) =>
  `${metadata.namespace}/${metadata.name}`

/** The key of the WebApp controlling an owned object, if any. */
export const ownerKey = (object: {
  readonly metadata?: {
    readonly namespace?: string | undefined
    readonly ownerReferences?:
      | ReadonlyArray<{ readonly kind: string; readonly name: string; readonly controller?: boolean | undefined }>
      | undefined
  } | undefined
}): string | undefined => {
  const ref = object.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === KIND)
  return ref === undefined ? undefined : `${object.metadata!.namespace}/${ref.name}`
}
