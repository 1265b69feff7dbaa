/**
 * Errors that say what to do.
 *
 * The failures a person must fix — a kind the server does not serve (a
 * CustomResourceDefinition not installed), a missing namespace, an RBAC
 * denial (403), rejected credentials (401), an API server that cannot be
 * reached (connection refused, DNS, timeout, TLS) — carry a {@link Diagnosis}:
 * `problem`, a `summary` of what is wrong and the `fix` (for a 403 also the
 * `rule` to grant). Their `message` is then `summary: fix`, e.g. `the
 * CustomResourceDefinition greetings.example.com (example.com/v1 Greeting) is
 * not installed: apply it (…)`. The tag stays what the server said
 * (`NotFound`, `Forbidden`, `Unauthorized`, `Transport`, `Timeout`), so
 * `Effect.catchTag` and `KubeOutcome` work as for any other error.
 *
 * The client attaches diagnoses to the errors it returns, with the server's
 * URL and the kubeconfig context; informers add the kind and fail at start
 * with a diagnosed error instead of retrying until a cache-sync timeout (see
 * `Informer`). `KubeError.find` digs the error out of a `ManagerError` or a
 * `Cause` for a main program to print.
 *
 * @example
 * ```ts
 * import { Diagnosis, KubeStatus } from "@reconcile/kube"
 *
 * const e = KubeStatus.toError(
 *   { code: 404, reason: "NotFound", message: "the server could not find the requested resource" },
 *   { request: { method: "GET", path: "/apis/example.com/v1/greetings" } }
 * )
 * Diagnosis.diagnose(e, { kind: "Greeting" })?.summary
 * // "the CustomResourceDefinition greetings.example.com (example.com/v1 Greeting) is not installed"
 * ```
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import * as internal from "./internal/diagnose.js"
import type { DiagnoseContext } from "./internal/diagnose.js"
import type { Diagnosis } from "./internal/kubeError.js"
import * as KubeError from "./KubeError.js"

// What a diagnosed error carries (declared by `internal/kubeError.ts` with the errors, so that `KubeError` need not
// import this module), and what the client knows about a request (declared by `internal/diagnose.ts`, which reads it).
export type { DiagnoseContext } from "./internal/diagnose.js"
export type { Diagnosis, PolicyRule } from "./internal/kubeError.js"

/**
 * The {@link Diagnosis} of an error, if it is one of the failures a person
 * must fix, computed from its Status and its request's method and path (and
 * `context`). The client already attaches it to the errors it returns; this is
 * for errors made elsewhere.
 *
 * @since 0.1.0
 * @category diagnostics
 */
export const diagnose = (error: KubeError.KubeError, context?: DiagnoseContext): Diagnosis | undefined =>
  internal.diagnose(error, context)

/**
 * The error with its {@link Diagnosis} computed with `context` (added to what
 * it was diagnosed with before): a new instance of the same class, or the
 * error itself when there is nothing to add.
 *
 * @example
 * ```ts
 * import { Diagnosis, KubeStatus } from "@reconcile/kube"
 *
 * const e = KubeStatus.toError({ code: 401, reason: "Unauthorized", message: "Unauthorized" })
 * Diagnosis.attach(e, { server: "https://10.0.0.1:6443", context: "prod" }).message
 * // "the API server at https://10.0.0.1:6443 (kubeconfig context \"prod\") rejected the credentials (401 …"
 * ```
 *
 * @since 0.1.0
 * @category diagnostics
 */
export const attach: {
  (context: DiagnoseContext): <E extends KubeError.KubeError>(error: E) => E
  <E extends KubeError.KubeError>(error: E, context: DiagnoseContext): E
} = dual(
  2,
  <E extends KubeError.KubeError>(error: E, context: DiagnoseContext): E => internal.attach(error, context)
)

/**
 * Whether a value is a `KubeError` that carries a {@link Diagnosis}: a
 * failure retrying will not fix by itself (an informer fails with it at
 * start).
 *
 * @since 0.1.0
 * @category refinements
 */
export const isDiagnosed = (u: unknown): u is KubeError.KubeError & { readonly diagnosis: Diagnosis } =>
  KubeError.isKubeError(u) && internal.isFatalAtStart(u)
