import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Effect from "effect/Effect"
import * as SchemaAST from "effect/SchemaAST"
import * as Conditions from "../Conditions.js"
import * as KubeClient from "../KubeClient.js"
import type * as KubeError from "../KubeError.js"
import * as Resource from "../Resource.js"
import type * as Status from "../Status.js"
import { isRecord, mergePatch } from "./semantic.js"

type Json = Record<string, unknown>

const declared = new WeakMap<object, boolean>()

/**
 * Whether the AST is a struct with the property `name`. Effect 4 keeps refinements (`checks`) and transformations
 * (`encoding`) on the node itself; suspensions are looked through, and a class (a `Declaration`) through the struct
 * it is encoded as, as effect 3's `getPropertySignatures` did.
 */
const hasField = (ast: SchemaAST.AST, name: string, depth = 0): boolean => {
  if (SchemaAST.isObjects(ast)) return ast.propertySignatures.some((p) => p.name === name)
  if (depth >= 8) return false
  if (SchemaAST.isSuspend(ast)) return hasField(ast.thunk(), name, depth + 1)
  if (SchemaAST.isDeclaration(ast) && ast.encoding !== undefined) {
    return hasField(SchemaAST.toEncoded(ast), name, depth + 1)
  }
  return false
}

/** Whether the status Schema of a custom resource has an `observedGeneration` field. */
const declaresObservedGeneration = <A extends HasMetadata>(resource: Resource.Resource<A>): boolean => {
  if (!Resource.isCustom(resource) || resource.status === undefined) return false
  const cached = declared.get(resource)
  if (cached !== undefined) return cached
  const result = hasField(resource.status.ast, "observedGeneration")
  declared.set(resource, result)
  return result
}

const statusOf = (object: HasMetadata): Json => {
  const status = (object as { readonly status?: unknown }).status
  return isRecord(status) ? status : {}
}

/** @internal */
export const patch = <A extends HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  status: Partial<Status.StatusOf<A>>,
  options?: Status.PatchOptions
): Effect.Effect<A, KubeError.KubeError, KubeClient.KubeClient> =>
  Effect.gen(function*() {
    const current = statusOf(object)
    const next: Json = { ...current, ...(status as Json) }
    const generation = object.metadata?.generation
    const withGeneration = options?.observedGeneration ??
      (declaresObservedGeneration(resource) || Object.hasOwn(current, "observedGeneration"))
    if (withGeneration && generation !== undefined) next.observedGeneration = generation
    const inputs = options?.conditions ?? []
    if (inputs.length > 0) {
      const base = (Object.hasOwn(status as Json, "conditions") ? (status as Json).conditions : current.conditions) as
        | ReadonlyArray<Conditions.Condition>
        | undefined
      next.conditions = yield* Conditions.setNow(
        base ?? [],
        ...inputs.map((input) =>
          input.observedGeneration === undefined && generation !== undefined
            ? { ...input, observedGeneration: generation }
            : input
        )
      )
    }
    const desired = { ...object, status: next } as A
    const before = yield* resource.encode(object)
    const after = yield* resource.encode(desired)
    const diff = mergePatch(isRecord(before) ? before.status : undefined, isRecord(after) ? after.status : undefined)
    if (diff === undefined) return object
    const name = object.metadata?.name ?? ""
    return yield* KubeClient.patchStatus(resource, name, { status: diff }, {
      type: "merge",
      namespace: object.metadata?.namespace,
      fieldManager: options?.fieldManager
    })
  })

/** @internal */
export const setConditions = <A extends HasMetadata>(
  resource: Resource.Resource<A>,
  object: A,
  conditions: ReadonlyArray<Conditions.ConditionInput>,
  options?: Omit<Status.PatchOptions, "conditions">
): Effect.Effect<A, KubeError.KubeError, KubeClient.KubeClient> =>
  patch(resource, object, {}, { ...options, conditions })
