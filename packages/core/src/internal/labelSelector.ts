import * as Result from "effect/Result"
import type { InvalidLabelSelector, LabelSelector, LabelSelectorRequirement } from "../Predicates.js"

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

/** @internal */
export const compile = (
  selector: LabelSelector,
  makeError: (reason: string) => InvalidLabelSelector
): Result.Result<Compiled, InvalidLabelSelector> => {
  const checks: Array<Compiled> = []
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    checks.push((labels) => has(labels, key) && labels[key] === value)
  }
  for (const req of selector.matchExpressions ?? []) {
    const compiled = compileRequirement(req)
    if (Result.isFailure(compiled)) {
      return Result.fail(makeError(compiled.failure))
    }
    checks.push(compiled.success)
  }
  return Result.succeed((labels) => checks.every((check) => check(labels)))
}
