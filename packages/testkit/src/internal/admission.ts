/**
 * The narrow interface between the synchronous core (`store.ts`) and admission that needs I/O (the admission
 * webhooks, `admissionWebhooks.ts`): the core calls it at kube-apiserver's two admission points of a write — the
 * mutating chain before the strategy validates, the validating chain after. Its per-request values (uid, time,
 * generated name) are drawn from the operation's session (`ConversionSession.once`, installed by `settle` around
 * every run), so a write suspended for a webhook call and run again sees, and stores, the values its webhooks were
 * shown.
 */
import type { ResourceType } from "../ResourceType.js"
import { clone, deepEqual, isObject, type Obj } from "./json.js"

/** The operations of admission (CONNECT is not served by the embedded cluster). */
export type Operation = "CREATE" | "UPDATE" | "DELETE"

/** What admission is told of a request (kube-apiserver's `admission.Attributes`). */
export interface Attributes {
  readonly rt: ResourceType
  readonly subresource: string | undefined
  readonly operation: Operation
  readonly namespace: string | undefined
  readonly name: string
  /** The object written (absent for DELETE). */
  readonly object: Obj | undefined
  /** The stored object (UPDATE and DELETE). */
  readonly oldObject: Obj | undefined
  readonly dryRun: boolean
}

/** Admission as the core sees it; each method may throw (an `ApiError` denies, anything else suspends the write). */
export interface Admission {
  /** The mutating chain: the object as it leaves the mutating webhooks (`attributes.object` when none matched). */
  readonly mutate: (attributes: Attributes) => Obj | undefined
  /** The validating chain: returns when every validating webhook admitted the request. */
  readonly validate: (attributes: Attributes) => void
}

/**
 * `base` with the changes from `from` to `to` (object fields compared by key, everything else replaced whole).
 * Carries the mutating webhooks' changes of the defaulted object they were shown onto the request's object; and,
 * from the mutated object back to the requested one, gives the object managedFields are computed on (kube-apiserver
 * tracks the request's fields before admission, so the fields a webhook sets are owned by no manager).
 */
export const withChanges = (base: Obj, from: Obj, to: Obj): Obj => {
  const out = clone(base)
  const apply = (into: Obj, before: Obj, after: Obj): void => {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (deepEqual(before[key], after[key])) continue
      if (isObject(before[key]) && isObject(after[key]) && isObject(into[key])) {
        apply(into[key], before[key], after[key])
      } else if (after[key] === undefined) delete into[key]
      else into[key] = clone(after[key])
    }
  }
  apply(out, from, to)
  return out
}
