import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Reconcile from "@reconcile/core/Reconcile"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Finalizer from "../Finalizer.js"
import * as KubeClient from "../KubeClient.js"
import type * as KubeError from "../KubeError.js"
import * as Undecodable from "../Undecodable.js"

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

/** The undecodable object a failed decode names (the server has it, it does not decode), if any. */
const undecodableOf = (e: KubeError.KubeError): Undecodable.Undecodable | undefined =>
  e._tag === "Decode" ? Option.getOrUndefined(Undecodable.fromDecode(e)) : undefined

/** @internal */
export const reconcile = <A extends HasMetadata, R1 = never, R2 = never, R3 = never>(
  options: Finalizer.Options<A, R1, R2, R3>
): (
  object: A | Undecodable.Undecodable
) => Effect.Effect<void, Reconcile.Outcome, R1 | R2 | R3 | KubeClient.KubeClient> => {
  type Input = A | Undecodable.Undecodable
  type R = R1 | R2 | R3 | KubeClient.KubeClient
  const { name, resource } = options
  const attempts = options.attempts ?? 5
  const onUndecodable = options.onUndecodable ?? Undecodable.terminal
  const patchOptions = (object: HasMetadata): KubeClient.PatchOptions => ({
    type: "json",
    namespace: object.metadata?.namespace,
    fieldManager: options.fieldManager
  })
  const retryable = (e: KubeError.KubeError, what: string) =>
    Reconcile.retryable(e, `finalizer ${name}: ${what}: ${e.message}`)

  /** The current state of the object on the server (none: gone; an `Undecodable` when it does not decode). */
  const reread = (object: Input): Effect.Effect<Option.Option<Input>, Reconcile.Retryable, KubeClient.KubeClient> =>
    KubeClient.get(resource, object.metadata?.name ?? "", { namespace: object.metadata?.namespace }).pipe(
      Effect.map((fresh): Option.Option<Input> => Option.some(fresh)),
      Effect.catch((e) => {
        if (e._tag === "NotFound") return Effect.succeedNone
        const undecodable = undecodableOf(e)
        return undecodable !== undefined
          ? Effect.succeedSome<Input>(undecodable)
          : Effect.fail(retryable(e, `reading ${describe(object)}`))
      })
    )

  const exhausted = (object: Input, what: string) =>
    Reconcile.retryable(
      `${what} ${describe(object)} kept conflicting with other writers`,
      `finalizer ${name}: ${what} ${describe(object)} kept conflicting with other writers (${attempts} attempts)`
    )

  /**
   * A live read before the side effects that must not happen for an object
   * deleted on the server (`apply`) or that must happen once (`cleanup`): the
   * cache may lag by any amount. Then decides on the server's object — none,
   * or another object of the same name (a new uid): nothing to do, the object
   * we were asked about is gone.
   */
  const confirm = (object: Input, attempt: number): Effect.Effect<void, Reconcile.Outcome, R> =>
    Effect.flatMap(
      reread(object),
      Option.match({
        onNone: () => Effect.logDebug(`${describe(object)} is gone; nothing to do for finalizer ${name}`),
        onSome: (fresh) => {
          const uid = object.metadata?.uid
          if (uid !== undefined && fresh.metadata?.uid !== uid) {
            return Effect.logDebug(`${describe(object)} was replaced (new uid); nothing to do for finalizer ${name}`)
          }
          return step(fresh, attempt, true)
        }
      })
    )

  /**
   * One decision on `object`; `confirmed` when the object comes from the
   * server in this reconcile (a read or a write's answer), not from the cache.
   * When a guarded write finds the object changed, the fresh object is decided
   * again.
   */
  const step = (object: Input, attempt: number, confirmed: boolean): Effect.Effect<void, Reconcile.Outcome, R> => {
    if (isDeleting(object)) {
      if (!has(object, name)) return Effect.void
      if (!confirmed) return confirm(object, attempt)
      return Effect.andThen(
        Effect.annotateLogs(options.cleanup(object), "finalizer", name),
        release(object, attempt)
      )
    }
    // a live object that does not decode: nothing to apply (and no finalizer needed until apply runs); its handler
    // gets the server's state too, so a deletion the cache has not seen yet is processed now
    if (Undecodable.isUndecodable(object)) return confirmed ? onUndecodable(object) : confirm(object, attempt)
    if (has(object, name)) return confirmed ? options.apply(object) : confirm(object, attempt)
    if (attempt >= attempts) return Effect.fail(exhausted(object, "adding the finalizer to"))
    const patch = addPatch(object, name)
    const again = Effect.flatMap(
      reread(object),
      Option.match({ onNone: () => Effect.void, onSome: (fresh) => step(fresh, attempt + 1, true) })
    )
    if (patch === undefined) return again
    // The `test`s make this write the confirmation: it succeeds only on the very object we read, live.
    return KubeClient.patch(resource, object.metadata?.name ?? "", patch, patchOptions(object)).pipe(
      Effect.tap(() => Effect.logDebug(`added finalizer ${name} to ${describe(object)}`)),
      Effect.matchEffect({
        onSuccess: (updated) => step(updated, attempt + 1, true),
        onFailure: (e) => {
          if (e._tag === "NotFound") return Effect.void
          if (isStale(e)) return again
          // written, but the answer does not decode: decide on what the server has
          const undecodable = undecodableOf(e)
          if (undecodable !== undefined) return step(undecodable, attempt + 1, true)
          return Effect.fail(retryable(e, `adding the finalizer to ${describe(object)}`))
        }
      })
    )
  }

  /** Removes our finalizer (only ours) after a successful cleanup; never runs cleanup again. */
  const release = (object: Input, attempt: number): Effect.Effect<void, Reconcile.Retryable, KubeClient.KubeClient> => {
    if (!has(object, name)) return Effect.void
    if (attempt >= attempts) return Effect.fail(exhausted(object, "removing the finalizer from"))
    const patch = removePatch(object, name)
    return KubeClient.patch(resource, object.metadata?.name ?? "", patch, patchOptions(object)).pipe(
      Effect.asVoid,
      // the patch of an object that does not decode is applied all the same; only its answer fails to decode
      Effect.catchIf((e) => undecodableOf(e) !== undefined, () => Effect.void),
      Effect.tap(() => Effect.logDebug(`removed finalizer ${name} from ${describe(object)}`)),
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

  return (object) => step(object, 0, false)
}
