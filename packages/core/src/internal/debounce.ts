import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Request from "../Request.js"

/**
 * The `debounce` option: a window, or a window with the longest a burst may be
 * held (`maxWait`, at least `window`; default `window`).
 *
 * @since 0.1.0
 * @category models
 */
export type Debounce = Duration.Input | {
  readonly window: Duration.Input
  readonly maxWait?: Duration.Input | undefined
}

/** A resolved debounce: both in ms, `maxWait >= window > 0`. @internal */
export interface Resolved {
  readonly window: number
  readonly maxWait: number
}

const millis = (input: Duration.Input): number => {
  const ms = Duration.toMillis(Duration.fromInputUnsafe(input))
  return Number.isNaN(ms) || ms < 0 ? 0 : ms
}

/** The `debounce` option in ms; `undefined` when off (absent or a window of zero). @internal */
export const resolve = (option: Debounce | undefined): Resolved | undefined => {
  if (option === undefined) return undefined
  const { maxWait, window } = typeof option === "object" && option !== null && "window" in option
    ? option
    : { window: option as Duration.Input, maxWait: undefined }
  const w = millis(window)
  if (w === 0) return undefined
  return { window: w, maxWait: Math.max(w, maxWait === undefined ? w : millis(maxWait)) }
}

interface Pending<A> {
  /** When the first event of this burst arrived (ms). */
  readonly first: number
  /** When the burst is emitted (ms): `min(last event + window, first + maxWait)`. */
  due: number
  /** The items of the burst, merged. */
  value: A
}

/**
 * Trailing-edge debounce per key, bounded: the first item of a key opens a
 * burst; each later item of the key pushes its emission to `window` after it,
 * but never beyond `maxWait` after the first. At the due time the burst's item
 * (`merge` of its items, by default the latest) is emitted once and the key's next item opens a new burst. One sleeping
 * fiber per open burst, forked in the current scope (closing it drops the open
 * bursts). Time comes from `Clock`.
 *
 * @internal
 */
export const make = <A>(
  options: Resolved,
  keyOf: (item: A) => string,
  emit: (item: A) => Effect.Effect<void>,
  merge: (previous: A, next: A) => A = (_, next) => next
): Effect.Effect<(items: ReadonlyArray<A>) => Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const pending = new Map<string, Pending<A>>()

    const fire = (key: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (true) {
          const entry = pending.get(key)!
          const wait = entry.due - (yield* Clock.currentTimeMillis)
          if (wait <= 0) {
            pending.delete(key)
            return yield* emit(entry.value)
          }
          yield* Effect.sleep(Duration.millis(wait))
        }
      })

    return (items) =>
      Effect.clockWith((clock) =>
        Effect.forEach(items, (item) => {
          const key = keyOf(item)
          const now = clock.currentTimeMillisUnsafe()
          const entry = pending.get(key)
          if (entry !== undefined) {
            entry.value = merge(entry.value, item)
            entry.due = Math.min(now + options.window, entry.first + options.maxWait)
            return Effect.void
          }
          pending.set(key, { first: now, due: now + options.window, value: item })
          return Effect.asVoid(Effect.forkIn(fire(key), scope, { startImmediately: true }))
        }, { discard: true })
      )
  })

/** A controller's `enqueue` of source events: requests, at a priority (absent: 0). @internal */
export type Enqueue = (requests: ReadonlyArray<Request.Request>, priority?: number | undefined) => Effect.Effect<void>

interface Item {
  readonly request: Request.Request
  readonly priority: number | undefined
}

/**
 * Wraps a controller's `enqueue` of source events with the `debounce` option
 * (unchanged when off); the bursts live in `scope`. A burst is added once, with
 * its latest request at the highest priority of its events (as the priority
 * queue merges adds).
 *
 * @internal
 */
export const wrap = (
  option: Debounce | undefined,
  enqueue: Enqueue,
  scope: Scope.Scope
): Effect.Effect<Enqueue> => {
  const resolved = resolve(option)
  if (resolved === undefined) return Effect.succeed(enqueue)
  return Effect.map(
    Scope.provide(
      make<Item>(
        resolved,
        (item) => Request.key(item.request),
        (item) => enqueue([item.request], item.priority),
        (previous, next) => ({ request: next.request, priority: maxPriority(previous.priority, next.priority) })
      ),
      scope
    ),
    (offer) => (requests, priority) => offer(requests.map((request) => ({ request, priority })))
  )
}

/** The higher of two priorities, an absent one being 0. */
const maxPriority = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined && b === undefined ? undefined : Math.max(a ?? 0, b ?? 0)
