/**
 * A minimal in-memory list/watch server for watcher and informer tests:
 * objects with resourceVersions, an event history with compaction (→ 410),
 * faults (drop the open watches, fail the next request), and a reset (the
 * server restarts over an empty store: resourceVersions start again at 1, a
 * newer one is answered 504 "Too large resource version" by the check, and a
 * watch from one stays silent, as on kube-apiserver).
 */
import { Effect, PubSub, Stream } from "effect"
import * as KubeError from "../src/KubeError.js"
import * as KubeStatus from "../src/KubeStatus.js"
import type * as Watcher from "../src/Watcher.js"

export interface Obj {
  readonly metadata: {
    readonly name: string
    readonly namespace: string
    readonly resourceVersion: string
    readonly uid?: string
    readonly ownerReferences?: ReadonlyArray<{
      readonly apiVersion: string
      readonly kind: string
      readonly name: string
      readonly uid: string
      readonly controller?: boolean
    }>
  }
  readonly data: number
}

type Change = { readonly type: "Added" | "Modified" | "Deleted"; readonly object: Obj; readonly rv: number }

const typed = (stream: Stream.Stream<Watcher.RawEvent<Obj>, KubeError.KubeError>) => stream

export const makeFakeServer = Effect.gen(function*() {
  const objects = new Map<string, Obj>()
  const history: Array<Change> = []
  let rv = 0
  let compactedBefore = 0
  let failNext = false
  let epoch = 0
  const live = yield* PubSub.unbounded<Change | "drop" | "break">()
  let watchesOpened = 0

  const gone = () => new KubeError.Gone({ status: { code: 410, reason: "Expired", message: "too old" } })
  const serverError = () => new KubeError.ServerError({ status: { code: 500, message: "injected" } })
  const broken = () => new KubeError.Transport({ reason: "Response", cause: new Error("socket hang up") })
  const tooLarge = (from: number) =>
    KubeStatus.toError({
      code: 504,
      reason: "Timeout",
      message: `Too large resource version: ${from}, current: ${rv}`,
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] }
    }, { code: 504 })

  const record = (type: Change["type"], object: Obj) =>
    PubSub.publish(live, { type, object, rv }).pipe(
      Effect.andThen(Effect.sync(() => void history.push({ type, object, rv })))
    )

  const server = {
    objects,
    get watchesOpened() {
      return watchesOpened
    },
    put: (name: string, data: number, extra: Partial<Obj["metadata"]> = {}) =>
      Effect.suspend(() => {
        const existed = objects.has(name)
        const object: Obj = {
          metadata: {
            name,
            namespace: "ns",
            uid: epoch === 0 ? `uid-${name}` : `uid-${name}-${epoch}`,
            ...extra,
            resourceVersion: String(++rv)
          },
          data
        }
        objects.set(name, object)
        return record(existed ? "Modified" : "Added", object)
      }),
    remove: (name: string) =>
      Effect.suspend(() => {
        const old = objects.get(name)
        if (old === undefined) return Effect.void
        objects.delete(name)
        const object: Obj = { ...old, metadata: { ...old.metadata, resourceVersion: String(++rv) } }
        return record("Deleted", object)
      }),
    compact: Effect.sync(() => {
      compactedBefore = rv
    }),
    dropWatches: PubSub.publish(live, "drop"),
    /** Restarts over an empty store: open watches break, resourceVersions start again, new objects get new uids. */
    reset: Effect.andThen(
      Effect.sync(() => {
        objects.clear()
        history.length = 0
        rv = 0
        compactedBefore = 0
        epoch++
      }),
      PubSub.publish(live, "break")
    ),
    failNextRequest: Effect.sync(() => {
      failNext = true
    }),
    listWatch: {
      name: "fake",
      resourceVersion: (o: Obj) => o.metadata.resourceVersion,
      list: (options) =>
        Effect.suspend(() => {
          if (failNext) {
            failNext = false
            return Effect.fail(serverError())
          }
          const all = [...objects.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
          const start = options.continue === undefined ? 0 : Number(options.continue)
          const items = all.slice(start, start + options.limit)
          const next = start + options.limit < all.length ? String(start + options.limit) : undefined
          return Effect.succeed({ items, resourceVersion: String(rv), continue: next })
        }),
      watch: (options) =>
        Stream.unwrap(Effect.gen(function*() {
          if (failNext) {
            failNext = false
            return typed(Stream.fail(serverError()))
          }
          const from = Number(options.resourceVersion)
          if (from < compactedBefore) return typed(Stream.fail(gone()))
          watchesOpened++
          const subscription = yield* PubSub.subscribe(live)
          const past = history.filter((c) => c.rv > from)
          const toEvent = (c: Change): Watcher.RawEvent<Obj> => ({ _tag: c.type, object: c.object })
          const lastPast = past.length === 0 ? from : past[past.length - 1]!.rv
          const future = Stream.fromSubscription(subscription).pipe(
            Stream.takeWhile((c) => c !== "drop"),
            Stream.mapEffect((c) => c === "break" ? Effect.fail(broken()) : Effect.succeed(c)),
            Stream.filter((c) => c.rv > lastPast),
            Stream.map(toEvent)
          )
          return typed(Stream.concat(Stream.fromIterable(past.map(toEvent)), future))
        })),
      checkResourceVersion: (resourceVersion) =>
        Effect.suspend(() => {
          const from = Number(resourceVersion)
          // "not older than": an old resourceVersion is fine (served at the current one), a newer one is not
          return from > rv ? Effect.fail(tooLarge(from)) : Effect.void
        })
    } satisfies Watcher.ListWatch<Obj>
  }
  return server
})
