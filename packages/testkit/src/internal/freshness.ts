/**
 * What kube-apiserver does about time and resourceVersions on a watch or a list, shared by the three watch drivers
 * (the in-process `TestCluster`, `TestKube`'s client and the HTTP server):
 *
 * - **Bookmarks** (watch cache, `cacher.go`): a watch with `allowWatchBookmarks` gets one every `interval`
 *   (kube-apiserver: a fixed minute) and one 2 s before its `timeoutSeconds` deadline, whichever comes first; none
 *   once that point has passed. A bookmark older than the resourceVersion the watch started from is not sent (a
 *   reset server's bookmarks would carry lower resourceVersions: the watch stays silent, as it does on
 *   kube-apiserver).
 * - **Too large resourceVersion**: a list "not older than" a resourceVersion the server has not reached, or a
 *   watch-list (`sendInitialEvents`) from one, waits up to 3 s (the watch cache's `blockTimeout`) for it, then
 *   fails with 504 `Timeout`, cause `ResourceVersionTooLarge`, `Retry-After: 1`. A paginated list (`limit`) is
 *   served by etcd on kube-apiserver and fails at once, without `Retry-After` (the store answers that itself). A
 *   plain watch from such a resourceVersion is started and waits in silence, as on kube-apiserver.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ApiError from "../ApiError.js"
import type { WatchEvent } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import type { Core } from "./store.js"

/** kube-apiserver's bookmark lead before a watch's deadline. */
const beforeDeadlineMillis = 2_000

/** How long kube-apiserver's watch cache waits for a resourceVersion it has not reached (`blockTimeout`). */
export const defaultWaitMillis = 3_000

/** When the next bookmark of a watch is due (ms), or `undefined` when it gets no more. */
export const nextBookmarkAt = (
  now: number,
  intervalMillis: number,
  deadline: number | undefined
): number | undefined => {
  const at = deadline === undefined
    ? now + intervalMillis
    : Math.min(now + intervalMillis, deadline - beforeDeadlineMillis)
  return at <= now ? undefined : at
}

/** The resourceVersion a watch or list asks for, as a number; `undefined` for none (`""`, `"0"`, absent). */
export const requested = (resourceVersion: string | undefined): number | undefined => {
  if (resourceVersion === undefined || resourceVersion === "" || resourceVersion === "0") return undefined
  return /^\d+$/.test(resourceVersion) ? Number(resourceVersion) : undefined
}

/** Whether the server has not reached `from` yet. */
export const behind = (core: Core, from: number | undefined): boolean =>
  from !== undefined && Number(core.resourceVersion()) < from

/** The bookmark a watch started from `from` gets now, if any (none while the server is behind `from`). */
export const bookmarkFor = (core: Core, rt: ResourceType, from: number | undefined): WatchEvent | undefined =>
  behind(core, from) ? undefined : core.bookmark(rt)

/** kube-apiserver's answer to a resourceVersion it did not reach within the wait. */
export const tooLarge = (from: number, core: Core): ApiError.ApiError =>
  ApiError.make(504, "Timeout", `Timeout: Too large resource version: ${from}, current: ${core.resourceVersion()}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1
  })

/** Whether a list with these parameters is served "not older than" a resourceVersion from the watch cache. */
export const cachedNotOlderThan = (options: {
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: string | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
}): number | undefined =>
  (options.resourceVersionMatch === undefined || options.resourceVersionMatch === "" ||
      options.resourceVersionMatch === "NotOlderThan") &&
    (options.limit === undefined || options.limit === 0) &&
    (options.continue === undefined || options.continue === "")
    ? requested(options.resourceVersion)
    : undefined

/**
 * Waits on Effect's `Clock` (so `TestClock` drives it) until `core` reaches `from` or `millis` pass; `true` when it
 * did.
 */
export const awaitResourceVersion = (core: Core, from: number, millis: number): Effect.Effect<boolean> =>
  Effect.clockWith((clock) => {
    const deadline = clock.currentTimeMillisUnsafe() + millis
    const poll: Effect.Effect<boolean> = Effect.suspend(() => {
      if (!behind(core, from)) return Effect.succeed(true)
      const left = deadline - clock.currentTimeMillisUnsafe()
      return left <= 0 ? Effect.succeed(false) : Effect.andThen(Effect.sleep(Duration.millis(Math.min(20, left))), poll)
    })
    return poll
  })
