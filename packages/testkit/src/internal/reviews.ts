/**
 * The create-only kinds, never stored: authorization.k8s.io/v1 access reviews (a real server answers them from its
 * authorizer) and authentication.k8s.io/v1 reviews. The test server has no RBAC — every request it serves is
 * allowed — so every access review (`SelfSubjectAccessReview`, `SubjectAccessReview`, `LocalSubjectAccessReview`)
 * is allowed and the rules review lists `*` rules; `SelfSubjectReview` (`kubectl auth whoami`) names the one user
 * the server has (`testkit`, in `system:masters`); a `TokenReview` authenticates nothing (the server does not know
 * other clients' tokens). core/v1 `bindings` (and any other create-only kind) answer 405.
 */
import * as ApiError from "../ApiError.js"
import type { KubeObject } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import { isObject, type Obj } from "./json.js"

/** The `reason` of every access review answer. */
export const reason = "allowed: the testkit API server has no RBAC, every request is allowed"

/** A spec attribute set: an object (Go's non-nil pointer), anything else is "not set". */
const present = (value: unknown): boolean => isObject(value)

const invalid = (kind: string, field: string, value: string, detail: string): ApiError.ApiError =>
  ApiError.make(
    422,
    "Invalid",
    `${kind}.authorization.k8s.io "" is invalid: ${field}: Invalid value: ${value}: ${detail}`,
    {
      group: "authorization.k8s.io",
      kind,
      causes: [{ reason: "FieldValueInvalid", message: `Invalid value: ${value}: ${detail}`, field }]
    }
  )

/**
 * The answer to a create of an access review kind (`rt.createOnly`): the request object with its `status` filled
 * in, as kube-apiserver's review storage returns it (no uid, no resourceVersion, a null creationTimestamp).
 */
export const review = (rt: ResourceType, obj: Obj): KubeObject => {
  const spec: Obj = isObject(obj.spec) ? obj.spec : {}
  const metadata = { ...obj.metadata, creationTimestamp: null }
  if (rt.kind === "SelfSubjectAccessReview") {
    const resource = present(spec.resourceAttributes)
    const nonResource = present(spec.nonResourceAttributes)
    if (resource && nonResource) {
      throw invalid(
        rt.kind,
        "spec.nonResourceAttributes",
        `authorization.NonResourceAttributes{Path:${
          JSON.stringify(String(spec.nonResourceAttributes.path ?? ""))
        }, Verb:${JSON.stringify(String(spec.nonResourceAttributes.verb ?? ""))}}`,
        "cannot be specified in combination with resourceAttributes"
      )
    }
    if (!resource && !nonResource) {
      throw invalid(
        rt.kind,
        "spec.resourceAttributes",
        "\"null\"",
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"
      )
    }
    return { ...obj, metadata, spec, status: { allowed: true, reason } } as unknown as KubeObject
  }
  if (rt.kind === "SubjectAccessReview" || rt.kind === "LocalSubjectAccessReview") {
    return { ...obj, metadata, spec, status: { allowed: true, reason } } as unknown as KubeObject
  }
  if (rt.kind === "SelfSubjectReview") {
    return {
      ...obj,
      metadata,
      status: { userInfo: { username: "testkit", groups: ["system:masters", "system:authenticated"] } }
    } as unknown as KubeObject
  }
  if (rt.kind === "TokenReview") {
    return { ...obj, metadata, spec, status: { user: {} } } as unknown as KubeObject
  }
  if (rt.kind === "SelfSubjectRulesReview") {
    return {
      ...obj,
      metadata,
      spec,
      status: {
        resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        incomplete: false
      }
    } as unknown as KubeObject
  }
  throw ApiError.make(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})
}
