import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Finalizer from "../Finalizer.js"
import * as KubeClient from "../KubeClient.js"
import * as KubeError from "../KubeError.js"

/** @internal */
export const has = (object: HasMetadata, name: string): boolean => (object.metadata?.finalizers ?? []).includes(name)

/** @internal */
export const isDeleting = (object: HasMetadata): boolean => {
  const ts = object.metadata?.deletionTimestamp as unknown
  return ts !== undefined && ts !== null && ts !== ""
}

type Op =
  | { readonly op: "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "add"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }

/** Guards every patch with the object's identity: a recreated object of the same name is not ours to touch. */
const identity = (object: HasMetadata): ReadonlyArray<Op> =>
  object.metadata?.uid !== undefined ? [{ op: "test", path: "/metadata/uid", value: object.metadata.uid }] : []

/** Appends `name` if the finalizers are still what we read (or, with none, the object is unchanged). */
const addPatch = (object: HasMetadata, name: string): ReadonlyArray<Op> | undefined => {
  const current = object.metadata?.finalizers ?? []
  if (current.length > 0) {
    return [
      ...identity(object),
      { op: "test", path: "/metadata/finalizers", value: current },
      { op: "add", path: "/metadata/finalizers/-", value: name }
    ]
  }
  // A missing list cannot be `test`ed (RFC 6902); the resourceVersion says nobody wrote since our read.
  const rv = object.metadata?.resourceVersion
  if (rv === undefined || rv === "") return undefined
  return [
    ...identity(object),
    { op: "test", path: "/metadata/resourceVersion", value: rv },
    { op: "add", path: "/metadata/finalizers", value: [name] }
  ]
}

/** Removes our entry if the finalizers are still what we read (so the index is still ours). */
const removePatch = (object: HasMetadata, name: string): ReadonlyArray<Op> => {
  const current = object.metadata?.finalizers ?? []
  return [
    ...identity(object),
    { op: "test", path: "/metadata/finalizers", value: current },
    { op: "remove", path: `/metadata/finalizers/${current.indexOf(name)}` }
  ]
}

/**
 * A guarded patch failed because the object changed since it was read: a
 * failed `test` (422 Invalid from the API server; some servers answer 400),
 * a stale write (409), or a finalizer added to an object that started
 * terminating meanwhile (422). Our patches are well-formed, so each of these
 * means "read again and decide afresh"; the attempts bound the loop.
 */
const isStale = (e: KubeError.KubeError): boolean =>
  e._tag === "Invalid" || e._tag === "Conflict" || e._tag === "BadRequest"

const describe = (object: HasMetadata): string => {
  const ns = object.metadata?.namespace
  const name = object.metadata?.name ?? "<unnamed>"
  return ns === undefined || ns === "" ? name : `${ns}/${name}`
}

/** @internal */
export const reconcile = <A extends HasMetadata, R1 = never, R2 = never>(
  options: Finalizer.Options<A, R1, R2>
): (object: A) => Effect.Effect<void, Reconcile.Outcome, R1 | R2 | KubeClient.KubeClient> => {
  const { name, resource } = options
  const attempts = options.attempts ?? 5
  const patchOptions = (object: HasMetadata): KubeClient.PatchOptions => ({
    type: "json",
    namespace: object.metadata?.namespace,
    fieldManager: options.fieldManager
  })
  const retryable = (e: KubeError.KubeError, what: string) =>
    Reconcile.retryable(e, `finalizer ${name}: ${what}: ${e.message}`)

  /** The current state of the object (none: gone). */
  const reread = (object: A): Effect.Effect<Option.Option<A>, Reconcile.Retryable, KubeClient.KubeClient> =>
    KubeClient.get(resource, object.metadata?.name ?? "", { namespace: object.metadata?.namespace }).pipe(
      KubeError.ignoreNotFound,
      Effect.mapError((e) => retryable(e, `reading ${describe(object)}`))
    )

  const exhausted = (object: A, what: string) =>
    Reconcile.retryable(
      `${what} ${describe(object)} kept conflicting with other writers`,
      `finalizer ${name}: ${what} ${describe(object)} kept conflicting with other writers (${attempts} attempts)`
    )

  /**
   * One decision on `object`; when a guarded write finds the object changed,
   * the fresh object is decided again.
   */
  const step = (
    object: A,
    attempt: number
  ): Effect.Effect<void, Reconcile.Outcome, R1 | R2 | KubeClient.KubeClient> => {
    if (isDeleting(object)) {
      if (!has(object, name)) return Effect.void
      return Effect.andThen(
        Effect.annotateLogs(options.cleanup(object), "finalizer", name),
        release(object, attempt)
      )
    }
    if (has(object, name)) return options.apply(object)
    if (attempt >= attempts) return Effect.fail(exhausted(object, "adding the finalizer to"))
    const patch = addPatch(object, name)
    const again = Effect.flatMap(
      reread(object),
      Option.match({ onNone: () => Effect.void, onSome: (fresh) => step(fresh, attempt + 1) })
    )
    if (patch === undefined) return again
    return KubeClient.patch(resource, object.metadata?.name ?? "", patch, patchOptions(object)).pipe(
      Effect.tap(() => Effect.logDebug(`added finalizer ${name} to ${describe(object)}`)),
      Effect.matchEffect({
        onSuccess: (updated) => step(updated, attempt + 1),
        onFailure: (e) =>
          e._tag === "NotFound"
            ? Effect.void
            : isStale(e)
            ? again
            : Effect.fail(retryable(e, `adding the finalizer to ${describe(object)}`))
      })
    )
  }

  /** Removes our finalizer (only ours) after a successful cleanup; never runs cleanup again. */
  const release = (object: A, attempt: number): Effect.Effect<void, Reconcile.Retryable, KubeClient.KubeClient> => {
    if (!has(object, name)) return Effect.void
    if (attempt >= attempts) return Effect.fail(exhausted(object, "removing the finalizer from"))
    const patch = removePatch(object, name)
    return KubeClient.patch(resource, object.metadata?.name ?? "", patch, patchOptions(object)).pipe(
      Effect.tap(() => Effect.logDebug(`removed finalizer ${name} from ${describe(object)}`)),
      Effect.asVoid,
      Effect.catch((e) =>
        e._tag === "NotFound"
          ? Effect.void
          : isStale(e)
          ? Effect.flatMap(
            reread(object),
            Option.match({
              onNone: () => Effect.void,
              // another object of the same name is not the one we cleaned up
              onSome: (fresh) =>
                fresh.metadata?.uid !== object.metadata?.uid ? Effect.void : release(fresh, attempt + 1)
            })
          )
          : Effect.fail(retryable(e, `removing the finalizer from ${describe(object)}`))
      )
    )
  }

  return (object) => step(object, 0)
}
