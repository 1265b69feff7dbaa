/**
 * Reconcile outcomes: the error channel of a reconcile says what happens next.
 *
 * A reconcile is an `Effect<void, Outcome, R>`. Success means "done, forget the
 * key's backoff"; each failure is one of three tagged errors:
 *
 * | reconcile ends with | the controller's queue |
 * |---|---|
 * | success | `forget` |
 * | `RequeueAfter(d)` | `forget`, then `addAfter(d)` |
 * | `Retryable(cause)` | `addRateLimited` (backoff grows) |
 * | `Terminal(cause)` | no requeue; logged once; waits for the next change |
 *
 * A defect (a throw, `Effect.die`) is recovered as `Retryable` by the
 * controller. A reconcile that fails with any other error does not type-check
 * as a {@link Reconciler}: the author decides, at compile time, what each
 * failure means — with {@link classify}, {@link asRetryable},
 * {@link asTerminal}, or `Effect.catchTag`.
 *
 * The three errors are `Data.TaggedError`s, so each value is also an `Effect`
 * that fails with itself: `return yield* Reconcile.requeueAfter("30 seconds")`.
 * Each carries {@link TypeId}; {@link isOutcome} and the other guards read it
 * and `_tag`.
 *
 * @example
 * ```ts
 * import { Data, Effect } from "effect"
 * import { Reconcile, type Request } from "@reconcile/core"
 *
 * class NotFound extends Data.TaggedError("NotFound")<{}> {}
 * class Conflict extends Data.TaggedError("Conflict")<{}> {}
 * class InvalidSpec extends Data.TaggedError("InvalidSpec")<{ readonly reason: string }> {}
 *
 * declare const sync: (req: Request.Request) => Effect.Effect<boolean, NotFound | Conflict | InvalidSpec>
 *
 * const reconcile: Reconcile.Reconciler<Request.Request> = (req) =>
 *   Effect.gen(function*() {
 *     const ready = yield* sync(req)
 *     if (!ready) return yield* Reconcile.requeueAfter("10 seconds")
 *   }).pipe(
 *     Effect.catchTag("NotFound", () => Effect.void), // gone: nothing to do
 *     Reconcile.classify((e) => e._tag === "Conflict" ? Reconcile.retryable(e) : Reconcile.terminal(e))
 *   )
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Predicate from "effect/Predicate"
import * as internal from "./internal/reconcile.js"

/**
 * Marks the three outcomes, for {@link isOutcome} and the other guards.
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@reconcile/core/Reconcile/Outcome")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Retry with the controller's rate limiter (exponential backoff): a transient
 * failure such as a conflict, a timeout or an unavailable dependency.
 *
 * @since 0.1.0
 * @category outcomes
 */
export class Retryable extends Data.TaggedError("Retryable")<{
  readonly cause: unknown
  readonly message?: string
  /**
   * The priority of the retry in a priority queue (controller-runtime's `Result.Priority` returned with an error);
   * absent: the priority the key was taken at. Set it with {@link withPriority}. A FIFO queue ignores it.
   */
  readonly priority?: number | undefined
}> {
  /**
   * @since 0.1.0
   */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Do not retry: the object cannot be reconciled as it is (an invalid spec, a
 * permanent rejection). The key waits for its next event; the failure is
 * logged and counted as a terminal error.
 *
 * @since 0.1.0
 * @category outcomes
 */
export class Terminal extends Data.TaggedError("Terminal")<{
  readonly cause: unknown
  readonly message?: string
}> {
  /**
   * @since 0.1.0
   */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * Not an error: reconcile the key again after `after` (polling an external
 * state, a scheduled action). The key's backoff is reset.
 *
 * @since 0.1.0
 * @category outcomes
 */
export class RequeueAfter extends Data.TaggedError("RequeueAfter")<{
  readonly after: Duration.Duration
  /**
   * The priority of the requeued key in a priority queue (controller-runtime's `Result.Priority`); absent: the
   * priority the key was taken at. A FIFO queue ignores it.
   */
  readonly priority?: number | undefined
}> {
  /**
   * @since 0.1.0
   */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * What a failed reconcile asks for.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = Retryable | Terminal | RequeueAfter

/**
 * A reconcile function: for each input (usually a `Request`), an effect that
 * succeeds or fails with an {@link Outcome}. Any other error is a type error.
 *
 * @since 0.1.0
 * @category models
 */
export type Reconciler<A, R = never> = (input: A) => Effect.Effect<void, Outcome, R>

/**
 * What the compiler expects of a reconcile whose error channel holds errors
 * that are not outcomes: `E` names those errors, the property name says what
 * to do. {@link Checked} puts it in place of the reconcile's effect, so the
 * message is reported at the reconcile itself.
 *
 * @since 0.1.0
 * @category type-level
 */
export interface NotAnOutcome<E> {
  readonly "a reconcile may fail only with Retryable, Terminal or RequeueAfter: map these errors with Reconcile.classify, Reconcile.retryable or Reconcile.terminal (KubeOutcome.classify for Kubernetes API errors), or handle them (Effect.catchTag)":
    E
}

/**
 * The type a reconcile's effect `F` must have: `F` itself when every error
 * of `F` is an {@link Outcome} and it succeeds with `void`; otherwise
 * {@link NotAnOutcome} of the errors that are not outcomes (or, for a non-void
 * success, `Effect<void, …>`). `Controller.make` / `layer` / `run` and
 * `KubeController.make` infer `F` from the reconcile and check it with this type, so that
 * `reconcile: (req) => Effect.fail(new Error("boom"))` does not compile, at
 * that line, with
 * `Property '"a reconcile may fail only with Retryable, Terminal or RequeueAfter: map these errors with
 * Reconcile.classify, Reconcile.retryable or Reconcile.terminal …"' is missing in type
 * 'Effect<never, Error, never>' but required in type 'NotAnOutcome<Error>'`.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Checked<F extends Effect.Effect<unknown, unknown, unknown>> = [Exclude<Effect.Error<F>, Outcome>] extends
  [never] ? [Effect.Success<F>] extends [void] ? F : Effect.Effect<void, Effect.Error<F>, Effect.Services<F>>
  : NotAnOutcome<Exclude<Effect.Error<F>, Outcome>>

/**
 * A `Retryable` outcome for `cause`. Its `message` is the given one, else the
 * cause's own `message` (or the cause itself when it is a string).
 *
 * The value is also an `Effect` failing with itself, so `yield*` it or
 * return it from `classify`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryable = (cause: unknown, message?: string): Retryable =>
  new Retryable(internal.withMessage(cause, message))

/**
 * A `Terminal` outcome for `cause`, with the same `message` rule as
 * {@link retryable}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const terminal = (cause: unknown, message?: string): Terminal =>
  new Terminal(internal.withMessage(cause, message))

/**
 * A `RequeueAfter` outcome: reconcile again after `after`. Negative and `NaN`
 * durations are clamped to zero (an immediate requeue); an infinite duration
 * stays infinite (the queue clamps it to its longest timer).
 *
 * With `options.priority`, a controller with a priority queue requeues the key at that priority
 * (controller-runtime's `Result{RequeueAfter, Priority}`); without it, at the priority the key was taken at.
 *
 * The value is also an `Effect` failing with itself:
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Handler, Reconcile } from "@reconcile/core"
 *
 * const poll = Effect.gen(function*() {
 *   return yield* Reconcile.requeueAfter("30 seconds")
 * }) // Effect<never, RequeueAfter>
 *
 * // a background poll: behind every change when it comes due
 * const background = Reconcile.requeueAfter("5 minutes", { priority: Handler.LowPriority })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const requeueAfter = (
  after: Duration.Input,
  options?: { readonly priority?: number | undefined }
): RequeueAfter =>
  new RequeueAfter(
    options?.priority === undefined
      ? { after: internal.clampDuration(after) }
      : { after: internal.clampDuration(after), priority: options.priority }
  )

/**
 * Whether a value is one of the three outcomes.
 *
 * @since 0.1.0
 * @category guards
 */
export const isOutcome = (u: unknown): u is Outcome => Predicate.hasProperty(u, TypeId)

/**
 * Whether a value is a `Retryable` outcome.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetryable = (u: unknown): u is Retryable => isOutcome(u) && u._tag === "Retryable"

/**
 * Whether a value is a `Terminal` outcome.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (u: unknown): u is Terminal => isOutcome(u) && u._tag === "Terminal"

/**
 * Whether a value is a `RequeueAfter` outcome.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRequeueAfter = (u: unknown): u is RequeueAfter => isOutcome(u) && u._tag === "RequeueAfter"

/**
 * The outcomes among `E` (`Extract<E, Outcome>`), written so that TypeScript infers nothing for `E` from it: in
 * `pipe(self, Reconcile.classify(f))` under an expected type (a reconcile's `Effect<void, Outcome, R>`), `E` must
 * come from `self` alone, else it is inferred as `Outcome` and `f` never sees the domain errors.
 */
type OutcomesOf<E> = [E] extends [infer X] ? Extract<X, Outcome> : never

/**
 * Turns every error of an effect into an outcome with `f`. Errors that already
 * are outcomes pass through unchanged (`f` never sees them), so a reconcile
 * can mix `Reconcile.requeueAfter` with domain errors and classify only the
 * latter. Data-first or pipeable.
 *
 * @example
 * ```ts
 * import { Data, Effect } from "effect"
 * import { Reconcile } from "@reconcile/core"
 *
 * class HttpError extends Data.TaggedError("HttpError")<{ readonly status: number }> {}
 * declare const call: Effect.Effect<void, HttpError>
 *
 * const reconcile = call.pipe(
 *   Reconcile.classify((e) => e.status >= 500 || e.status === 409 ? Reconcile.retryable(e) : Reconcile.terminal(e))
 * ) // Effect<void, Retryable | Terminal>
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const classify: {
  <E, O extends Outcome>(
    f: (error: Exclude<E, Outcome>) => O
  ): <A, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, O | OutcomesOf<E>, R>
  <A, E, R, O extends Outcome>(
    self: Effect.Effect<A, E, R>,
    f: (error: Exclude<E, Outcome>) => O
  ): Effect.Effect<A, O | Extract<E, Outcome>, R>
} = dual(
  2,
  <A, E, R, O extends Outcome>(
    self: Effect.Effect<A, E, R>,
    f: (error: Exclude<E, Outcome>) => O
  ): Effect.Effect<A, O | Extract<E, Outcome>, R> =>
    Effect.mapError(self, (e) => isOutcome(e) ? (e as Extract<E, Outcome>) : f(e as Exclude<E, Outcome>))
)

/**
 * Treats every error that is not already an outcome as `Retryable` (its
 * `cause`): retried with backoff until it succeeds, whatever it is.
 *
 * For errors of your own, or a step that must be retried until it finishes
 * (a finalizer's cleanup). **Not for Kubernetes API errors**: a 422 or a 403
 * on a write would be retried forever; `KubeOutcome.classify` of
 * `@reconcile/kube` makes those `Terminal` and the transient ones `Retryable`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const asRetryable = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Retryable | Extract<E, Outcome>, R> => classify(self, (e) => retryable(e))

/**
 * Treats every error that is not already an outcome as `Terminal` (its
 * `cause`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const asTerminal = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Terminal | Extract<E, Outcome>, R> => classify(self, (e) => terminal(e))

/**
 * Sets the priority at which a controller with a priority queue adds the key back when the effect fails with
 * `RequeueAfter` or `Retryable` (controller-runtime's `Result.Priority`, which applies to the requeue and to the
 * retry after an error alike). A priority the outcome already carries is replaced; `Terminal` and success are
 * unchanged (nothing is requeued). A FIFO queue ignores priorities. Data-first or pipeable.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Reconcile } from "@reconcile/core"
 *
 * declare const sync: Effect.Effect<void, Reconcile.Retryable | Reconcile.RequeueAfter>
 *
 * // this key's retries and requeues go before the keys at the default priority (0)
 * const urgent = sync.pipe(Reconcile.withPriority(10))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPriority: {
  (priority: number): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, priority: number): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, priority: number): Effect.Effect<A, E, R> =>
    Effect.mapError(self, (e): E => {
      if (isRequeueAfter(e)) return new RequeueAfter({ after: e.after, priority }) as E
      if (isRetryable(e)) return new Retryable({ ...internal.fieldsOf(e), priority }) as E
      return e
    })
)
