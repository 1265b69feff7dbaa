/**
 * Status conditions (`metav1.Condition`) with Kubernetes' rules:
 * `lastTransitionTime` changes only when `status` changes, the order of
 * existing conditions is stable (new types are appended), and every condition
 * carries the `observedGeneration` it was computed for.
 *
 * Pure functions take the time explicitly; {@link setNow} reads Effect's
 * `Clock`, so `TestClock` controls it.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * `metav1.Condition` as a Schema, for a custom resource's status (the CRD's schema is generated from it): `type`,
 * `status` (`True`, `False`, `Unknown`), `observedGeneration`, `lastTransitionTime` (RFC 3339, of the last change
 * of `status`), a CamelCase `reason` and a `message`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Condition = Schema.Struct({
  type: Schema.String,
  status: Schema.Literals(["True", "False", "Unknown"]),
  observedGeneration: Schema.optional(Schema.Int),
  lastTransitionTime: Schema.String,
  reason: Schema.String,
  message: Schema.String
})

/**
 * `metav1.Condition`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Condition extends Schema.Schema.Type<typeof Condition> {}

/**
 * A status Schema with `observedGeneration` and `conditions` (an array of {@link Condition}), then `fields`: what
 * `Status.setConditions` writes, plus what the resource reports besides.
 *
 * @example
 * ```ts
 * import { Conditions, Resource } from "@reconcile/kube"
 * import { Schema } from "effect"
 *
 * const WebApp = Resource.custom({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "WebApp",
 *   plural: "webapps",
 *   scope: "Namespaced",
 *   spec: Schema.Struct({ image: Schema.String }),
 *   status: Conditions.status({ readyReplicas: Schema.optional(Schema.Int) })
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const status = <const Fields extends Schema.Struct.Fields = {}>(fields?: Fields) =>
  Schema.Struct({
    observedGeneration: Schema.optional(Schema.Int),
    conditions: Schema.optional(Schema.Array(Condition)),
    ...(fields ?? ({} as Fields))
  })

/**
 * A condition to set; `lastTransitionTime` is decided by {@link set}.
 *
 * @since 0.1.0
 * @category models
 */
export type ConditionInput = Omit<Condition, "lastTransitionTime" | "message"> & {
  readonly message?: string | undefined
}

/**
 * Sets one condition: a new type is appended with `lastTransitionTime = now`;
 * an existing one keeps its position and its `lastTransitionTime` unless its
 * `status` changes.
 *
 * @example
 * ```ts
 * import { Conditions, type Resource } from "@reconcile/kube"
 *
 * // an object whose status has conditions
 * declare const app: Resource.CustomObject<unknown, { readonly conditions?: ReadonlyArray<Conditions.Condition> }>
 *
 * const next = Conditions.set(app.status?.conditions ?? [], {
 *   type: "Ready", status: "True", reason: "DeploymentAvailable", observedGeneration: app.metadata.generation
 * }, new Date())
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const set = (
  conditions: ReadonlyArray<Condition>,
  input: ConditionInput,
  now: Date
): ReadonlyArray<Condition> => {
  const index = conditions.findIndex((c) => c.type === input.type)
  const previous = index < 0 ? undefined : conditions[index]!
  const next: Condition = {
    type: input.type,
    status: input.status,
    ...(input.observedGeneration === undefined ? {} : { observedGeneration: input.observedGeneration }),
    lastTransitionTime: previous !== undefined && previous.status === input.status
      ? previous.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    reason: input.reason,
    message: input.message ?? ""
  }
  if (index < 0) return [...conditions, next]
  const out = conditions.slice()
  out[index] = next
  return out
}

/**
 * {@link set} for several conditions at once, in order.
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge = (
  conditions: ReadonlyArray<Condition>,
  inputs: ReadonlyArray<ConditionInput>,
  now: Date
): ReadonlyArray<Condition> => inputs.reduce((acc, input) => set(acc, input, now), conditions)

/**
 * {@link merge} at the current time of Effect's `Clock`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const setNow = (
  conditions: ReadonlyArray<Condition>,
  ...inputs: ReadonlyArray<ConditionInput>
): Effect.Effect<ReadonlyArray<Condition>> =>
  Effect.map(Clock.currentTimeMillis, (millis) => merge(conditions, inputs, new Date(millis)))

/**
 * Removes the condition of `type`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const remove = (conditions: ReadonlyArray<Condition>, type: string): ReadonlyArray<Condition> =>
  conditions.filter((c) => c.type !== type)

/**
 * The condition of `type`, if any.
 *
 * @since 0.1.0
 * @category getters
 */
export const find = (conditions: ReadonlyArray<Condition> | undefined, type: string): Condition | undefined =>
  conditions?.find((c) => c.type === type)

/**
 * Whether the condition of `type` is `True`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isTrue = (conditions: ReadonlyArray<Condition> | undefined, type: string): boolean =>
  find(conditions, type)?.status === "True"

/**
 * Whether the condition of `type` is `False`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isFalse = (conditions: ReadonlyArray<Condition> | undefined, type: string): boolean =>
  find(conditions, type)?.status === "False"
