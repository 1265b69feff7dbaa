import * as Either from "effect/Either"
import type { InvalidLabelSelector, LabelSelector, LabelSelectorRequirement } from "../Predicates.js"

type Compiled = (labels: Readonly<Record<string, string>>) => boolean

const has = (labels: Readonly<Record<string, string>>, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(labels, key)

const compileRequirement = (req: LabelSelectorRequirement): Either.Either<Compiled, string> => {
  const values = req.values ?? []
  switch (req.operator) {
    case "In":
    case "NotIn": {
      if (values.length === 0) {
        return Either.left(`operator ${req.operator} on key "${req.key}" needs at least one value`)
      }
      const set = new Set(values)
      return Either.right(
        req.operator === "In"
          ? (labels) => has(labels, req.key) && set.has(labels[req.key]!)
          : (labels) => !has(labels, req.key) || !set.has(labels[req.key]!)
      )
    }
    case "Exists":
    case "DoesNotExist": {
      if (values.length > 0) {
        return Either.left(`operator ${req.operator} on key "${req.key}" takes no values`)
      }
      return Either.right(
        req.operator === "Exists" ? (labels) => has(labels, req.key) : (labels) => !has(labels, req.key)
      )
    }
    default:
      return Either.left(`unknown operator ${JSON.stringify((req as { readonly operator: unknown }).operator)}`)
  }
}

/** @internal */
export const compile = (
  selector: LabelSelector,
  makeError: (reason: string) => InvalidLabelSelector
): Either.Either<Compiled, InvalidLabelSelector> => {
  const checks: Array<Compiled> = []
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    checks.push((labels) => has(labels, key) && labels[key] === value)
  }
  for (const req of selector.matchExpressions ?? []) {
    const compiled = compileRequirement(req)
    if (Either.isLeft(compiled)) {
      return Either.left(makeError(compiled.left))
    }
    checks.push(compiled.right)
  }
  return Either.right((labels) => checks.every((check) => check(labels)))
}
