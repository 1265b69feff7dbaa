/**
 * A minimal in-memory list/watch server for watcher and informer tests:
 * objects with resourceVersions, an event history with compaction (→ 410),
 * and faults (drop the open watches, fail the next request).
 */
import { Effect, PubSub, Stream } from "effect"
import * as KubeError from "../src/KubeError.js"
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
  const live = yield* PubSub.unbounded<Change | "drop">()
  let watchesOpened = 0

  const gone = () => new KubeError.Gone({ status: { code: 410, reason: "Expired", message: "too old" } } as never)
  const serverError = () => new KubeError.ServerError({ status: { code: 500, message: "injected" } } as never)

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
          metadata: { name, namespace: "ns", uid: `uid-${name}`, ...extra, resourceVersion: String(++rv) },
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
            Stream.filter((c) => c.rv > lastPast),
            Stream.map(toEvent)
          )
          return typed(Stream.concat(Stream.fromIterable(past.map(toEvent)), future))
        }))
    } satisfies Watcher.ListWatch<Obj>
  }
  return server
})
