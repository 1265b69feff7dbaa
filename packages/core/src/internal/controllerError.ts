/**
 * Why a controller stops: its own errors, declared here so that the controller's internals
 * (`internal/controllerSources.ts`) make them without importing the public `Controller` module, which
 * re-exports them.
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type { LeadershipLost } from "../LeaderElection.js"

/**
 * The sources did not sync within `cacheSyncTimeout`.
 *
 * @since 0.1.0
 * @category errors
 */
export class CacheSyncTimeout extends Data.TaggedError("CacheSyncTimeout")<{
  readonly controller: string
  /** The names of the sources that had not synced. */
  readonly sources: ReadonlyArray<string>
  readonly timeout: Duration.Duration
}> {
  override get message(): string {
    return `controller ${this.controller}: timed out waiting for sources to sync: ${this.sources.join(", ")}`
  }
}

/**
 * A source's stream failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class SourceFailed<E> extends Data.TaggedError("SourceFailed")<{
  readonly controller: string
  readonly source: string
  readonly cause: E
}> {
  override get message(): string {
    return `controller ${this.controller}: source ${this.source} failed`
  }
}

/**
 * Why a controller stopped.
 *
 * @since 0.1.0
 * @category errors
 */
export type ControllerError<E> = CacheSyncTimeout | SourceFailed<E> | LeadershipLost
