import * as Layer from "effect/Layer"
import type * as Operator from "../Operator.js"

/** @internal */
export const TypeId = "~@reconcile/kube/Operator" as const

/** @internal */
export const make = (options: Operator.Options<ReadonlyArray<Layer.Layer<never, any, any>>>) => ({
  [TypeId]: TypeId,
  name: options.name,
  resources: options.resources ?? [],
  controllers: options.controllers,
  rules: options.rules ?? [],
  layer: Layer.mergeAll(...(options.controllers as unknown as [Layer.Layer<never, any, any>]))
})

/** @internal */
export const isOperator = (u: unknown): u is Operator.Operator<unknown, unknown> =>
  typeof u === "object" && u !== null && TypeId in u
