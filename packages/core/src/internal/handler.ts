import type { HasMetadata, OwnerReference } from "../ObjectMeta.js"
import * as ObjectMeta from "../ObjectMeta.js"
import * as Request from "../Request.js"

/** @internal */
export const dedupe = (groups: Iterable<Iterable<Request.Request>>): ReadonlyArray<Request.Request> => {
  const seen = new Map<string, Request.Request>()
  for (const group of groups) {
    for (const req of group) {
      const key = Request.key(req)
      if (!seen.has(key)) seen.set(key, req)
    }
  }
  return Array.from(seen.values())
}

/** @internal */
export const requestsOf = (objects: ReadonlyArray<HasMetadata>): ReadonlyArray<Request.Request> =>
  dedupe([objects.filter((obj) => (obj.metadata?.name ?? "") !== "").map(Request.fromObject)])

/** `requestsOf([obj])` without its dedupe: one object makes at most one request. @internal */
export const requestOfObject = (obj: HasMetadata): ReadonlyArray<Request.Request> =>
  (obj.metadata?.name ?? "") === "" ? [] : [Request.fromObject(obj)]

/**
 * The group of an `apiVersion` (`schema.ParseGroupVersion`): `""` for `v1`,
 * `apps` for `apps/v1`; `undefined` when malformed.
 *
 * @internal
 */
export const groupOf = (apiVersion: string): string | undefined => {
  const parts = apiVersion.split("/")
  if (parts.length === 1) return ""
  if (parts.length === 2) return parts[0]
  return undefined
}

/** @internal */
export const ownerRequests = (options: {
  readonly apiVersion: string
  readonly kind: string
  readonly onlyController?: boolean | undefined
  readonly scope?: "Namespaced" | "Cluster" | undefined
}) => {
  const group = groupOf(options.apiVersion)
  const onlyController = options.onlyController ?? true
  const matches = (ref: OwnerReference): boolean =>
    ref.kind === options.kind && group !== undefined && groupOf(ref.apiVersion) === group && ref.name !== ""
  const refsOf = (obj: HasMetadata): ReadonlyArray<OwnerReference> => {
    if (!onlyController) return ObjectMeta.ownerReferences(obj)
    const ref = ObjectMeta.controllerOf(obj)
    return ref._tag === "Some" ? [ref.value] : []
  }
  return (objects: ReadonlyArray<HasMetadata>): ReadonlyArray<Request.Request> =>
    dedupe(objects.map((obj) => {
      const namespace = options.scope === "Cluster" ? undefined : ObjectMeta.namespace(obj)
      return refsOf(obj).filter(matches).map((ref) => Request.make(ref.name, namespace))
    }))
}

/** `metadata.resourceVersion` of any object, when it has one. @internal */
export const resourceVersion = (obj: unknown): string | undefined => {
  if (typeof obj !== "object" || obj === null) return undefined
  const metadata = (obj as { readonly metadata?: unknown }).metadata
  if (typeof metadata !== "object" || metadata === null) return undefined
  const rv = (metadata as { readonly resourceVersion?: unknown }).resourceVersion
  return typeof rv === "string" && rv !== "" ? rv : undefined
}
