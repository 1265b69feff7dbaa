/**
 * Kubernetes label selectors as the test server evaluates them (the grammar of
 * apimachinery's `labels.Parse`): comma-separated requirements, each one of
 * `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`,
 * `key notin (a,b)`, `key>n`, `key<n`. The empty selector matches everything.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as internal from "./internal/labelSelector.js"

/**
 * One requirement of a selector.
 *
 * @since 0.1.0
 * @category models
 */
export interface Requirement {
  readonly key: string
  readonly operator: "=" | "!=" | "in" | "notin" | "exists" | "!" | ">" | "<"
  readonly values: ReadonlyArray<string>
}

/**
 * Parses a selector string; a `Failure` carries the message a real API server would put in its 400 Status.
 *
 * @example
 * ```ts
 * import { LabelSelector } from "@reconcile/testkit"
 *
 * LabelSelector.parse("app=web,tier in (front,back),!canary")
 * ```
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (selector: string): Result.Result<ReadonlyArray<Requirement>, string> => {
  const result = internal.parse(selector)
  return result._tag === "Ok" ? Result.succeed(result.requirements) : Result.fail(result.message)
}

/**
 * Whether a set of labels satisfies every requirement.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (
  requirements: ReadonlyArray<Requirement>,
  labels: { readonly [key: string]: string } | undefined
): boolean => internal.matches(requirements, labels)
