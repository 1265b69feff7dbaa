import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as KubeController from "../KubeController.js"
import type * as Operator from "../Operator.js"

/** @internal */
export const TypeId = "~@reconcile/kube/Operator" as const

/** @internal */
export const make = (
  options: Operator.Options<ReadonlyArray<KubeController.Declaration>> & {
    readonly layer?: Layer.Layer<never, any, any> | undefined
  }
): Operator.Operator<any, any> => ({
  [TypeId]: TypeId,
  name: options.name,
  resources: options.resources ?? [],
  controllers: options.controllers,
  rules: options.rules ?? [],
  layer: options.layer ?? merged(options.controllers)
})

/** Every controller's Layer, merged (the default `layer`: then every controller is a `KubeController`). */
const merged = (controllers: ReadonlyArray<KubeController.Declaration>): Layer.Layer<never, any, any> => {
  const layers = controllers.filter(KubeController.isKubeController).map(KubeController.layer)
  return layers.length === 0 ? Layer.empty : Layer.mergeAll(...(layers as unknown as [Layer.Layer<never, any, any>]))
}

/** @internal */
export const isOperator = (u: unknown): u is Operator.Operator<unknown, unknown> => Predicate.hasProperty(u, TypeId)
