import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Apply from "../Apply.js"
import * as KubeClient from "../KubeClient.js"
import * as KubeError from "../KubeError.js"
import * as OwnerReference from "../OwnerReference.js"
import type * as Resource from "../Resource.js"
import { equal, isRecord, mergePatch } from "./semantic.js"

type Json = Record<string, unknown>

const missingName = (resource: Resource.Resource<any>, what: string): KubeError.BadRequest =>
  new KubeError.BadRequest({
    status: {
      kind: "Status",
      status: "Failure",
      reason: "BadRequest",
      code: 0,
      message: `${what} of a ${resource.kind} needs metadata.name`
    }
  })

/** @internal */
export const apply = <A extends HasMetadata, O extends Apply.ApplyOptions>(
  resource: Resource.Resource<A>,
  object: A,
  options: O
): Effect.Effect<A, KubeError.KubeError | Apply.OwnerError<O>, KubeClient.KubeClient> =>
  Effect.gen(function*() {
    const name = object.metadata?.name
    if (name === undefined || name === "") return yield* missingName(resource, "server-side apply")
    const owned = yield* withOwner<A, O>(object, options.owner)
    const encoded = yield* resource.encode(owned)
    const body: Json = isRecord(encoded) ? { ...encoded } : {}
    const metadata: Json = isRecord(body.metadata) ? { ...body.metadata } : {}
    delete metadata.managedFields
    body.apiVersion = resource.apiVersion
    body.kind = resource.kind
    body.metadata = metadata
    return yield* KubeClient.patch(resource, name, body, {
      type: "apply",
      namespace: object.metadata?.namespace ?? options.namespace,
      fieldManager: options.fieldManager,
      force: options.force,
      dryRun: options.dryRun
    })
  })

/** The object with a controller reference to `owner` (its uid), when there is one. */
const withOwner = <A extends HasMetadata, O>(
  object: A,
  owner: OwnerReference.Owner | undefined
): Effect.Effect<A, Apply.OwnerError<O>> =>
  owner === undefined
    ? Effect.succeed(object)
    : Effect.fromResult(OwnerReference.setControllerReference(owner, object)) as Effect.Effect<
      A,
      Apply.OwnerError<O>
    >

type Run<A, M> = Effect.Effect<A, Apply.MutateError<M>, Apply.MutateContext<M>>

const runMutate = <A, M extends Apply.Mutated<A>>(mutate: (current: A) => M, current: A): Run<A, M> =>
  Effect.suspend(() => {
    const out: unknown = mutate(current)
    // a Result is no Effect in effect 4 (only Yieldable): lift it explicitly
    const effect = Effect.isEffect(out) ? out : Result.isResult(out) ? Effect.fromResult(out) : Effect.succeed(out)
    return effect as Run<A, M>
  })

const keyOf = (object: HasMetadata, namespace: string | undefined): string => {
  const ns = object.metadata?.namespace ?? namespace
  const name = object.metadata?.name ?? "<unnamed>"
  return ns === undefined || ns === "" ? name : `${ns}/${name}`
}

/** The mutated object, checked to be still the same object. */
const mutated = <A extends HasMetadata, M extends Apply.Mutated<A>>(
  mutate: (current: A) => M,
  current: A,
  namespace: string | undefined
): Effect.Effect<A, Apply.MutateError<M> | Apply.MutatedKey, Apply.MutateContext<M>> =>
  Effect.flatMap(runMutate(mutate, current), (desired) => {
    const expected = keyOf(current, namespace)
    const actual = keyOf(desired, namespace)
    return expected === actual ? Effect.succeed(desired) : Effect.fail(new Apply.MutatedKey({ expected, actual }))
  })

const splitStatus = (u: unknown): { readonly rest: Json; readonly status: unknown } => {
  if (!isRecord(u)) return { rest: {}, status: undefined }
  const { status, ...rest } = u
  return { rest, status }
}

type Write = "update" | "patch"

const createOr = (write: Write) =>
<A extends HasMetadata, M extends Apply.Mutated<A>, O extends Apply.Options = {}>(
  resource: Resource.Resource<A>,
  object: A,
  mutate: (current: A) => M,
  options?: O
): Effect.Effect<
  Apply.Result<A>,
  KubeError.KubeError | Apply.MutatedKey | Apply.MutateError<M> | Apply.OwnerError<O>,
  KubeClient.KubeClient | Apply.MutateContext<M>
> =>
  Effect.gen(function*() {
    const name = object.metadata?.name
    if (name === undefined || name === "") {
      return yield* missingName(resource, write === "update" ? "createOrUpdate" : "createOrPatch")
    }
    const namespace = object.metadata?.namespace ?? options?.namespace
    const existing = yield* KubeClient.get(resource, name, { namespace }).pipe(KubeError.ignoreNotFound)
    if (Option.isNone(existing)) {
      const desired = yield* Effect.flatMap(
        mutated(mutate, object, namespace),
        (d) => withOwner<A, O>(d, options?.owner)
      )
      const created = yield* KubeClient.create(resource, desired, { namespace, fieldManager: options?.fieldManager })
      return { operation: "created", object: created } as const
    }
    const current = existing.value
    const desired = yield* Effect.flatMap(
      mutated(mutate, current, namespace),
      (d) => withOwner<A, O>(d, options?.owner)
    )
    const before = splitStatus(yield* resource.encode(current))
    const after = splitStatus(yield* resource.encode(desired))
    if (write === "update") {
      if (equal(before.rest, after.rest)) return { operation: "unchanged", object: current } as const
      const updated = yield* KubeClient.replace(resource, desired, { namespace, fieldManager: options?.fieldManager })
      return { operation: "updated", object: updated } as const
    }
    const patch = mergePatch(before.rest, after.rest)
    const statusPatch = mergePatch(before.status, after.status)
    if (patch === undefined && statusPatch === undefined) return { operation: "unchanged", object: current } as const
    const patchOptions: KubeClient.PatchOptions = { type: "merge", namespace, fieldManager: options?.fieldManager }
    let result = current
    if (patch !== undefined) result = yield* KubeClient.patch(resource, name, patch, patchOptions)
    if (statusPatch !== undefined) {
      result = yield* KubeClient.patchStatus(resource, name, { status: statusPatch }, patchOptions)
    }
    return { operation: "updated", object: result } as const
  })

/** @internal */
export const createOrUpdate = createOr("update")

/** @internal */
export const createOrPatch = createOr("patch")
