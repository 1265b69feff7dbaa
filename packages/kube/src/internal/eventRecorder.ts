import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Semaphore from "effect/Semaphore"
import * as os from "node:os"
import type * as EventRecorder from "../EventRecorder.js"
import * as KubeClient from "../KubeClient.js"
import type * as KubeError from "../KubeError.js"
import * as Resource from "../Resource.js"

type Json = Record<string, unknown>

/** What the server has of one aggregated event (a series once `count` > 1). */
interface Entry {
  readonly lock: Semaphore.Semaphore
  /** Occurrences recorded. */
  count: number
  /** Occurrences the server has (or that a failed write gave up on). */
  written: number
  /** Millis of the last occurrence. */
  lastObserved: number
  /** The event's name once created. */
  name: string | undefined
}

const maxNoteBytes = 1024

/** Cuts `note` to the API's limit of 1024 bytes (UTF-8), on a character boundary. */
const truncateNote = (note: string): string => {
  if (Buffer.byteLength(note, "utf8") <= maxNoteBytes) return note
  let out = ""
  let bytes = 0
  for (const ch of note) {
    const size = Buffer.byteLength(ch, "utf8")
    if (bytes + size > maxNoteBytes - 3) break
    out += ch
    bytes += size
  }
  return out + "..."
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
const microTime = (millis: number): string => new Date(millis).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

const regardingOf = (object: EventRecorder.Regarding): Json => {
  const ref: Json = {}
  const meta = object.metadata
  if (object.apiVersion !== undefined) ref.apiVersion = object.apiVersion
  if (object.kind !== undefined) ref.kind = object.kind
  if (meta?.namespace !== undefined && meta.namespace !== "") ref.namespace = meta.namespace
  if (meta?.name !== undefined) ref.name = meta.name
  if (meta?.uid !== undefined) ref.uid = meta.uid
  if (meta?.resourceVersion !== undefined) ref.resourceVersion = meta.resourceVersion
  return ref
}

const describe = (object: EventRecorder.Regarding): string => {
  const ns = object.metadata?.namespace
  const name = object.metadata?.name ?? "<unnamed>"
  return `${object.kind ?? "object"} ${ns === undefined || ns === "" ? name : `${ns}/${name}`}`
}

/** @internal */
export const make = (
  options: EventRecorder.Options
): Effect.Effect<EventRecorder.EventRecorder.Service, never, KubeClient.KubeClient> =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    // names must not collide between recorders (controllers, replicas) reporting at the same instant
    const tag = (yield* Random.nextIntBetween(0, 0x10000, { halfOpen: true })).toString(16).padStart(4, "0")
    const controller = options.controller
    const instance = options.instance ?? os.hostname()
    const window = Duration.toMillis(Duration.fromInputUnsafe(options.window ?? "10 minutes"))
    const entries = new Map<string, Entry>()
    let sequence = 0

    const prune = (now: number) => {
      for (const [key, entry] of entries) {
        if (now - entry.lastObserved > window) entries.delete(key)
      }
    }

    /**
     * The object's identity, not its version: a reconcile that keeps failing
     * while the object changes is one series.
     */
    const keyOf = (object: EventRecorder.Regarding, event: EventRecorder.Event): string => {
      const { resourceVersion: _, ...regarding } = regardingOf(object)
      return JSON.stringify([event.type, event.reason, event.action, regarding, controller])
    }

    const failed = (object: EventRecorder.Regarding, event: EventRecorder.Event, error: KubeError.KubeError) =>
      Effect.logWarning("failed to record an event").pipe(
        Effect.annotateLogs({
          controller,
          eventType: event.type,
          reason: event.reason,
          action: event.action,
          regarding: describe(object),
          error: `${error._tag}: ${error.message}`
        })
      )

    const create = (
      object: EventRecorder.Regarding,
      event: EventRecorder.Event,
      entry: Entry,
      count: number,
      lastObserved: number
    ) => {
      const namespace = object.metadata?.namespace !== undefined && object.metadata.namespace !== ""
        ? object.metadata.namespace
        : "default"
      const suffix = `${lastObserved.toString(16)}${tag}${(sequence++).toString(16)}`
      const base = (object.metadata?.name ?? "event").slice(0, 253 - suffix.length - 1)
      const name = `${base}.${suffix}`
      const body: Json = {
        apiVersion: Resource.EventsV1Event.apiVersion,
        kind: Resource.EventsV1Event.kind,
        metadata: { name, namespace },
        eventTime: microTime(lastObserved),
        reportingController: controller,
        reportingInstance: instance,
        type: event.type,
        reason: event.reason,
        action: event.action,
        regarding: regardingOf(object)
      }
      if (event.note !== undefined) body.note = truncateNote(event.note)
      if (count > 1) body.series = { count, lastObservedTime: microTime(lastObserved) }
      return client.create(Resource.EventsV1Event, body as Resource.EventsV1Event, { namespace }).pipe(
        Effect.matchEffect({
          onFailure: (error) => {
            entry.written = Math.max(entry.written, count)
            return failed(object, event, error)
          },
          onSuccess: () => {
            entry.name = name
            entry.written = Math.max(entry.written, count)
            return Effect.void
          }
        })
      )
    }

    /** Writes the entry's latest count, unless a later write already carried occurrence `mine`. */
    const flush = (
      object: EventRecorder.Regarding,
      event: EventRecorder.Event,
      entry: Entry,
      mine: number
    ): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (entry.written >= mine) return Effect.void
        const count = entry.count
        const lastObserved = entry.lastObserved
        if (entry.name === undefined) return create(object, event, entry, count, lastObserved)
        const namespace = object.metadata?.namespace !== undefined && object.metadata.namespace !== ""
          ? object.metadata.namespace
          : "default"
        return client.patch(
          Resource.EventsV1Event,
          entry.name,
          { series: { count, lastObservedTime: microTime(lastObserved) } },
          { type: "merge", namespace }
        ).pipe(
          Effect.matchEffect({
            onFailure: (error) => {
              if (error._tag === "NotFound") {
                // expired (events have a TTL): start a new event carrying the series so far
                entry.name = undefined
                return create(object, event, entry, count, lastObserved)
              }
              entry.written = Math.max(entry.written, count)
              return failed(object, event, error)
            },
            onSuccess: () => {
              entry.written = Math.max(entry.written, count)
              return Effect.void
            }
          })
        )
      })

    const record = (object: EventRecorder.Regarding, event: EventRecorder.Event): Effect.Effect<void> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        prune(now)
        const key = keyOf(object, event)
        let entry = entries.get(key)
        if (entry === undefined) {
          entry = { lock: Semaphore.makeUnsafe(1), count: 0, written: 0, lastObserved: now, name: undefined }
          entries.set(key, entry)
        }
        entry.count += 1
        entry.lastObserved = Math.max(entry.lastObserved, now)
        yield* entry.lock.withPermits(1)(flush(object, event, entry, entry.count))
      }).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            // The cause itself: the logger renders it on one line (`error=`, a defect's stack escaped).
            : Effect.logWarning("failed to record an event", cause).pipe(
              Effect.annotateLogs({ controller, reason: event.reason, regarding: describe(object) })
            )
        )
      )

    return { controller, instance, record } satisfies EventRecorder.EventRecorder.Service
  })
