import { Manifests, type Operator } from "@reconcile/kube"
import * as Effect from "effect/Effect"

/**
 * The CustomResourceDefinitions of an operator's resources, as `reconcile manifests` writes them (every served
 * version of a kind in one CRD).
 *
 * @internal
 */
export const crds = <E, R>(
  operator: Operator.Operator<E, R>
): Effect.Effect<ReadonlyArray<Record<string, unknown>>, Manifests.ManifestsError> =>
  Effect.map(
    Manifests.generate(operator),
    (objects) => objects.filter((o) => o.kind === "CustomResourceDefinition")
  )
