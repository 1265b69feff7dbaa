/**
 * Errors of the workqueue package.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * `take` failed because the queue is shut down and has no item left to hand
 * out. Workers treat it as the signal to stop.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkqueueShutdown extends Data.TaggedError("WorkqueueShutdown")<{}> {
  override get message(): string {
    return "workqueue is shut down"
  }
}

/**
 * A rate limiter was given options it cannot honour (for example a bucket
 * with `perSecond <= 0`). `option` names the offending field.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRateLimiterOptions extends Data.TaggedError("InvalidRateLimiterOptions")<{
  readonly limiter: string
  readonly option: string
  readonly reason: string
}> {
  override get message(): string {
    return `invalid ${this.limiter} rate limiter option "${this.option}": ${this.reason}`
  }
}
