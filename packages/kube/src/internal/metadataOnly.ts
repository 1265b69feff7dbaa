import type { ObjectMeta } from "@reconcile/core"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as KubeError from "../KubeError.js"
import type * as MetadataOnly from "../MetadataOnly.js"
import type * as Resource from "../Resource.js"
import { rawText, TypeId as ResourceTypeId } from "./resource.js"
import { metadataOf } from "./undecodable.js"

/** @internal */
export const TypeId: MetadataOnly.TypeId = Symbol.for("@reconcile/kube/MetadataOnly") as MetadataOnly.TypeId

/** @internal */
export const acceptObject = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

/** @internal */
export const acceptList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export const isMetadataOnly = (u: unknown): u is MetadataOnly.MetadataOnly<any> => Predicate.hasProperty(u, TypeId)

/**
 * The `Accept` header of a request whose answer decodes with `resource`: `undefined` (plain JSON) unless the
 * resource is metadata-only.
 *
 * @internal
 */
export const acceptFor = (resource: Resource.Resource<any>, list: boolean): string | undefined =>
  isMetadataOnly(resource) ? (list ? acceptList : acceptObject) : undefined

/** @internal */
export const make = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>
): MetadataOnly.MetadataOnly<A> => {
  if (isMetadataOnly(resource)) return resource as unknown as MetadataOnly.MetadataOnly<A>
  const fail = (u: unknown, issue: string) => {
    const metadata = metadataOf(u, resource.sensitive)
    return Effect.fail(
      new KubeError.Decode({
        kind: resource.kind,
        ...(metadata === undefined ? {} : { apiVersion: resource.apiVersion, metadata }),
        raw: rawText(u, resource.sensitive, resource.kind),
        issue
      })
    )
  }
  // The server answers `meta.k8s.io/v1` PartialObjectMetadata; a server that ignores `as=` sends the whole object.
  // Either way only `metadata` is kept, under the kind's own apiVersion and kind (as controller-runtime's cache
  // reader sets the GVK of the objects it returns).
  const decode = (u: unknown): Effect.Effect<MetadataOnly.PartialObjectMetadata, KubeError.Decode> => {
    if (!isRecord(u)) return fail(u, `expected a JSON object, got ${Array.isArray(u) ? "an array" : typeof u}`)
    const partial = u.kind === "PartialObjectMetadata" && u.apiVersion === "meta.k8s.io/v1"
    if (!partial && u.kind !== undefined && u.kind !== resource.kind) {
      return fail(u, `expected kind PartialObjectMetadata or ${resource.kind}, got ${String(u.kind)}`)
    }
    if (!partial && u.apiVersion !== undefined && u.apiVersion !== resource.apiVersion) {
      return fail(u, `expected apiVersion meta.k8s.io/v1 or ${resource.apiVersion}, got ${String(u.apiVersion)}`)
    }
    if (!isRecord(u.metadata)) return fail(u, "metadata is not an object")
    return Effect.succeed({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      metadata: u.metadata as ObjectMeta.ObjectMeta
    })
  }
  return {
    [TypeId]: TypeId,
    of: resource,
    [ResourceTypeId]: ResourceTypeId,
    group: resource.group,
    version: resource.version,
    kind: resource.kind,
    plural: resource.plural,
    namespaced: resource.namespaced,
    apiVersion: resource.apiVersion,
    sensitive: resource.sensitive,
    path: resource.path,
    decode,
    encode: () =>
      Effect.fail(
        new KubeError.Encode({
          kind: resource.kind,
          issue: "a metadata-only resource has no spec to write: create or replace with the full resource " +
            "(patch and delete work)"
        })
      )
  }
}
