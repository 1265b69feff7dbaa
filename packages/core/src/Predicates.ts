/**
 * Event filters, with the meaning of controller-runtime's `predicate` package.
 *
 * A predicate is a plain function `Event<A> => boolean`, so it is applied with
 * `Stream.filter` (or {@link Source.withPredicates}). The update-based
 * predicates (`generationChanged`, `resourceVersionChanged`, `labelsChanged`,
 * `annotationsChanged`) compare the old and the new object of an `Update` and
 * let every `Create`, `Delete` and `Generic` event pass: a delete is never
 * dropped because "nothing changed".
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { Event, Predicates } from "@reconcile/core"
 *
 * const events = Stream.make(
 *   Event.update({ metadata: { generation: 1 } }, { metadata: { generation: 1 } }), // status-only: dropped
 *   Event.delete({ metadata: { generation: 1 } }) // passes
 * ).pipe(Stream.filter(Predicates.or(Predicates.generationChanged, Predicates.labelsChanged)))
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import type { Create, Delete, Event, Generic, Update } from "./Event.js"
import type { HasMetadata } from "./ObjectMeta.js"

/**
 * A filter over events: `true` lets the event through.
 *
 * @since 0.1.0
 * @category models
 */
export type Predicate<A> = (event: Event<A>) => boolean

const recordEquals = (
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined
): boolean => {
  if (a === b) return true
  const ka = a === undefined ? [] : Object.keys(a)
  const kb = b === undefined ? [] : Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || a![k] !== b![k]) return false
  }
  return true
}

/** A predicate passing every event but an `Update` for which `changed` is false, named `name` (shown by inspectors). */
const onUpdate = (
  name: string,
  changed: (old: HasMetadata, object: HasMetadata) => boolean
): <A extends HasMetadata>(event: Event<A>) => boolean => {
  const predicate = <A extends HasMetadata>(event: Event<A>): boolean =>
    event._tag === "Update" ? changed(event.old, event.object) : true
  return Object.defineProperty(predicate, "name", { value: name })
}

/**
 * Passes an `Update` only when `metadata.generation` changed, i.e. when the
 * spec changed (status-only and metadata-only updates do not bump it). Create,
 * Delete and Generic pass. (controller-runtime's `GenerationChangedPredicate`.)
 *
 * Objects whose kind has no status subresource bump the generation on every
 * change; objects without a generation never pass an update.
 *
 * @since 0.1.0
 * @category predicates
 */
export const generationChanged: <A extends HasMetadata>(event: Event<A>) => boolean = onUpdate(
  "generationChanged",
  (old, object) => old.metadata?.generation !== object.metadata?.generation
)

/**
 * Passes an `Update` only when `metadata.resourceVersion` changed, which drops
 * the periodic resync updates of an informer (old and new are the same
 * version). Create, Delete and Generic pass. (`ResourceVersionChangedPredicate`.)
 *
 * @since 0.1.0
 * @category predicates
 */
export const resourceVersionChanged: <A extends HasMetadata>(event: Event<A>) => boolean = onUpdate(
  "resourceVersionChanged",
  (old, object) => old.metadata?.resourceVersion !== object.metadata?.resourceVersion
)

/**
 * Passes an `Update` only when the labels changed (as a set of key/value
 * pairs; missing labels equal `{}`). Create, Delete and Generic pass.
 * (`LabelChangedPredicate`.)
 *
 * @since 0.1.0
 * @category predicates
 */
export const labelsChanged: <A extends HasMetadata>(event: Event<A>) => boolean = onUpdate(
  "labelsChanged",
  (old, object) => !recordEquals(old.metadata?.labels, object.metadata?.labels)
)

/**
 * Passes an `Update` only when the annotations changed (missing annotations
 * equal `{}`). Create, Delete and Generic pass. (`AnnotationChangedPredicate`.)
 *
 * @since 0.1.0
 * @category predicates
 */
export const annotationsChanged: <A extends HasMetadata>(event: Event<A>) => boolean = onUpdate(
  "annotationsChanged",
  (old, object) => !recordEquals(old.metadata?.annotations, object.metadata?.annotations)
)

/**
 * The operators of a label selector requirement.
 *
 * @since 0.1.0
 * @category models
 */
export type LabelSelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist"

/**
 * One requirement of a label selector (`metav1.LabelSelectorRequirement`).
 * `In`/`NotIn` need at least one value; `Exists`/`DoesNotExist` take none.
 * `NotIn` also matches objects without the key.
 *
 * `operator` also accepts any string so that client-node's
 * `V1LabelSelector` (whose operator is a `string`) fits; an unknown operator
 * makes the selector invalid (see {@link validateLabelSelector}).
 *
 * @since 0.1.0
 * @category models
 */
export interface LabelSelectorRequirement {
  readonly key: string
  readonly operator: LabelSelectorOperator | (string & {})
  readonly values?: ReadonlyArray<string> | undefined
}

/**
 * A label selector (`metav1.LabelSelector`): every `matchLabels` pair and every
 * requirement must hold. An empty selector matches everything.
 *
 * @since 0.1.0
 * @category models
 */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>> | undefined
  readonly matchExpressions?: ReadonlyArray<LabelSelectorRequirement> | undefined
}

/**
 * A label selector that cannot be used: an `In`/`NotIn` requirement without
 * values, an `Exists`/`DoesNotExist` requirement with values, or an unknown
 * operator.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidLabelSelector extends Data.TaggedError("InvalidLabelSelector")<{
  readonly selector: LabelSelector
  readonly reason: string
}> {
  override get message(): string {
    return `invalid label selector: ${this.reason}`
  }
}

/** A compiled selector: whether a set of labels matches it. */
type Compiled = (labels: Readonly<Record<string, string>>) => boolean

const has = (labels: Readonly<Record<string, string>>, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(labels, key)

const compileRequirement = (req: LabelSelectorRequirement): Result.Result<Compiled, string> => {
  const values = req.values ?? []
  switch (req.operator) {
    case "In":
    case "NotIn": {
      if (values.length === 0) {
        return Result.fail(`operator ${req.operator} on key "${req.key}" needs at least one value`)
      }
      const set = new Set(values)
      return Result.succeed(
        req.operator === "In"
          ? (labels) => has(labels, req.key) && set.has(labels[req.key]!)
          : (labels) => !has(labels, req.key) || !set.has(labels[req.key]!)
      )
    }
    case "Exists":
    case "DoesNotExist": {
      if (values.length > 0) {
        return Result.fail(`operator ${req.operator} on key "${req.key}" takes no values`)
      }
      return Result.succeed(
        req.operator === "Exists" ? (labels) => has(labels, req.key) : (labels) => !has(labels, req.key)
      )
    }
    default:
      return Result.fail(`unknown operator ${JSON.stringify((req as { readonly operator: unknown }).operator)}`)
  }
}

/** The selector as one check of every `matchLabels` pair and requirement, or why it cannot be used. */
const compileSelector = (selector: LabelSelector): Result.Result<Compiled, InvalidLabelSelector> => {
  const checks: Array<Compiled> = []
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    checks.push((labels) => has(labels, key) && labels[key] === value)
  }
  for (const req of selector.matchExpressions ?? []) {
    const compiled = compileRequirement(req)
    if (Result.isFailure(compiled)) {
      return Result.fail(new InvalidLabelSelector({ selector, reason: compiled.failure }))
    }
    checks.push(compiled.success)
  }
  return Result.succeed((labels) => checks.every((check) => check(labels)))
}

/**
 * Checks a label selector the way `metav1.LabelSelectorAsSelector` does
 * (operators and value counts; label syntax is not checked).
 *
 * @since 0.1.0
 * @category label selectors
 */
export const validateLabelSelector = (selector: LabelSelector): Result.Result<LabelSelector, InvalidLabelSelector> =>
  Result.map(compileSelector(selector), () => selector)

/**
 * Whether a set of labels matches a selector. An invalid selector matches
 * nothing.
 *
 * @since 0.1.0
 * @category label selectors
 */
export const matchesLabelSelector = (
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined
): boolean => {
  const compiled = compileSelector(selector)
  return Result.isSuccess(compiled) && compiled.success(labels ?? {})
}

/**
 * Passes events whose object's labels match the selector — on every kind of
 * event, and on `Update` by the new object (controller-runtime's
 * `LabelSelectorPredicate`). So an `Update` that removes a matching label is
 * dropped, while the `Delete` of a matching object passes.
 *
 * An invalid selector (see {@link validateLabelSelector}) passes nothing;
 * validate user-supplied selectors first.
 *
 * @example
 * ```ts
 * import { Predicates } from "@reconcile/core"
 *
 * const managed = Predicates.labelSelector({
 *   matchLabels: { "app.kubernetes.io/managed-by": "webapp-operator" },
 *   matchExpressions: [{ key: "tier", operator: "In", values: ["web", "api"] }]
 * })
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const labelSelector = (selector: LabelSelector): <A extends HasMetadata>(event: Event<A>) => boolean => {
  const compiled = compileSelector(selector)
  if (Result.isFailure(compiled)) {
    return () => false
  }
  const matches = compiled.success
  return (event) => matches(event.object.metadata?.labels ?? {})
}

/**
 * A predicate from one function per kind of event; a missing function passes
 * every event of its kind (controller-runtime's `predicate.Funcs`).
 *
 * @example
 * ```ts
 * import { Predicates } from "@reconcile/core"
 *
 * // ignore deletes whose final state was missed
 * const p = Predicates.funcs({ delete: (e) => !e.finalStateUnknown })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const funcs = <A>(fs: {
  readonly create?: ((event: Create<A>) => boolean) | undefined
  readonly update?: ((event: Update<A>) => boolean) | undefined
  readonly delete?: ((event: Delete<A>) => boolean) | undefined
  readonly generic?: ((event: Generic<A>) => boolean) | undefined
}): Predicate<A> =>
(event) => {
  switch (event._tag) {
    case "Create":
      return fs.create === undefined || fs.create(event)
    case "Update":
      return fs.update === undefined || fs.update(event)
    case "Delete":
      return fs.delete === undefined || fs.delete(event)
    case "Generic":
      return fs.generic === undefined || fs.generic(event)
  }
}

/**
 * Passes an event when every predicate passes it (`and()` passes everything).
 *
 * @since 0.1.0
 * @category combinators
 */
export const and = <A>(...predicates: ReadonlyArray<Predicate<A>>): Predicate<A> => all(predicates)

/**
 * Passes an event when at least one predicate passes it (`or()` passes
 * nothing).
 *
 * @example
 * ```ts
 * import { Predicates } from "@reconcile/core"
 *
 * // spec changes, or label/annotation changes (used by a selector or a trigger annotation)
 * const p = Predicates.or(Predicates.generationChanged, Predicates.labelsChanged, Predicates.annotationsChanged)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const or = <A>(...predicates: ReadonlyArray<Predicate<A>>): Predicate<A> => (event) =>
  predicates.some((p) => p(event))

/**
 * Passes exactly the events the predicate drops.
 *
 * Note that `not(generationChanged)` drops every Create, Delete and Generic
 * event (as in controller-runtime).
 *
 * @since 0.1.0
 * @category combinators
 */
export const not = <A>(predicate: Predicate<A>): Predicate<A> => (event) => !predicate(event)

/**
 * The conjunction of any number of predicates, given as an iterable: what
 * {@link and} does for arguments, and what applying each predicate with its
 * own `Stream.filter` does. An empty collection passes everything.
 *
 * @since 0.1.0
 * @category combinators
 */
export const all = <A>(predicates: Iterable<Predicate<A>>): Predicate<A> => {
  const ps = Array.from(predicates)
  return (event) => ps.every((p) => p(event))
}
