/**
 * kube-apiserver's per-kind strategies, as far as the write path follows them: which kinds keep
 * `metadata.generation` and when it moves, which refuse an update that names no resourceVersion, which fields a
 * create sets after decoding (owned by no manager), and the status a new CustomResourceDefinition gets.
 */
import type { ResourceType } from "../ResourceType.js"
import { clone, deepEqual, formatTime, isObject, type Obj } from "./json.js"
import { isBuiltinGroup } from "./resourceType.js"

/** Whether `metadata.generation` is kept: the registry's kinds, and Pods (their generation is tracked since 1.33). */
export const tracksGeneration = (rt: ResourceType): boolean =>
  rt.tracksGeneration || (rt.group === "" && rt.kind === "Pod")

/** Whether an update changes more than metadata (and status, for kinds with the status subresource). */
export const specChanged = (rt: ResourceType, a: Obj, b: Obj): boolean => {
  const strip = (o: Obj): Obj => {
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = o
    if (rt.hasStatus) delete rest.status
    return rest
  }
  return !deepEqual(strip(a), strip(b))
}

/**
 * The kinds whose update must name the resourceVersion it replaces (their strategies refuse an unconditional
 * update; kube-apiserver 1.36 answered 422 for exactly these, 200 for the other built-in kinds): custom resources,
 * CRDs, APIServices, the admission configurations and policies, Leases, PodDisruptionBudgets, RuntimeClasses and
 * the CSI objects of storage.k8s.io.
 */
export const conditionalOnly = (rt: ResourceType): boolean =>
  !isBuiltinGroup(rt.group) || conditionalGroups.has(rt.group) || conditionalResources.has(`${rt.group}/${rt.plural}`)

const conditionalGroups: ReadonlySet<string> = new Set([
  "apiextensions.k8s.io",
  "apiregistration.k8s.io",
  "admissionregistration.k8s.io"
])

const conditionalResources: ReadonlySet<string> = new Set([
  "coordination.k8s.io/leases",
  "policy/poddisruptionbudgets",
  "node.k8s.io/runtimeclasses",
  "storage.k8s.io/csidrivers",
  "storage.k8s.io/csinodes",
  "storage.k8s.io/csistoragecapacities",
  "storage.k8s.io/volumeattachments"
])

/**
 * What kube-apiserver sets on create after the request was decoded and its managedFields computed — the strategy
 * (status, a Namespace's finalizer), allocation (a Service's clusterIPs) and admission (a Pod's service account,
 * priority and default tolerations): no manager owns these. Decode-time defaults are owned by the creator.
 */
const setAfterDecoding: Record<string, ReadonlyArray<readonly [string, string?]>> = {
  "/Namespace": [["spec", "finalizers"], ["status"]],
  "/Service": [["spec", "clusterIPs"], ["spec", "ipFamilies"], ["spec", "ipFamilyPolicy"], ["status"]],
  "/Pod": [
    ["status"],
    ["spec", "serviceAccountName"],
    ["spec", "serviceAccount"],
    ["spec", "priority"],
    ["spec", "preemptionPolicy"],
    ["spec", "tolerations"]
  ]
}

/** The created object as its creator owns it: fields set after decoding keep the value the request gave them. */
export const ownedOnCreate = (rt: ResourceType, decoded: Obj, created: Obj): Obj => {
  const view = clone(created)
  const fields = [...(setAfterDecoding[`${rt.group}/${rt.kind}`] ?? []), ...(rt.hasStatus ? [["status"] as const] : [])]
  for (const [top, field] of fields) {
    if (field === undefined) {
      if (decoded[top] === undefined) delete view[top]
      else view[top] = decoded[top]
    } else if (isObject(view[top])) {
      const given = isObject(decoded[top]) ? decoded[top][field] : undefined
      if (given === undefined) delete view[top][field]
      else view[top][field] = given
    }
  }
  return view
}

/** Sets the status of a new CustomResourceDefinition: its names accepted, established, its storage version. */
export const crdStatus = (crd: Obj, now: () => number): void => {
  const storage = (crd.spec?.versions ?? []).find((v: Obj) => v?.storage === true)?.name
  crd.status = {
    conditions: [
      {
        type: "NamesAccepted",
        status: "True",
        reason: "NoConflicts",
        message: "no conflicts found",
        lastTransitionTime: formatTime(now())
      },
      {
        type: "Established",
        status: "True",
        reason: "InitialNamesAccepted",
        message: "the initial names have been accepted",
        lastTransitionTime: formatTime(now())
      }
    ],
    acceptedNames: crd.spec?.names,
    storedVersions: storage === undefined ? [] : [storage]
  }
}
