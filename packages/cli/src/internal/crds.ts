import { Manifests, type Operator } from "@reconcile/kube"
import * as Effect from "effect/Effect"

/**
 * The CustomResourceDefinitions of an operator's resources, as `reconcile manifests` writes them (every served
 * version of a kind in one CRD). With `conversion: false` they have no conversion webhook stanza (strategy `None`):
 * on a local cluster the main job adds it once its webhook server listens.
 *
 * @internal
 */
export const crds = <E, R>(
  operator: Operator.Operator<E, R>,
  options: { readonly conversion?: boolean | undefined } = {}
): Effect.Effect<ReadonlyArray<Record<string, unknown>>, Manifests.ManifestsError> =>
  Effect.map(
    Manifests.generate(operator),
    (objects) =>
      objects.filter((o) => o.kind === "CustomResourceDefinition").map((crd) => {
        if (options.conversion !== false) return crd
        const { conversion: _, ...spec } = crd.spec as Record<string, unknown>
        return { ...crd, spec }
      })
  )
