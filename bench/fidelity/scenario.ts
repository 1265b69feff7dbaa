/**
 * What a fidelity scenario is: a name, a sequence of HTTP steps sent to both servers, and what of each answer to
 * compare. Scenarios are data; the helpers below only shorten them.
 *
 * Templates in a step's path and in the strings of its body are filled per server before it is sent:
 * `{ns}` is the scenario's namespace, `{rv:N}` / `{uid:N}` / `{name:N}` the `metadata.resourceVersion`, `.uid` and
 * `.name` of step N's answer (0-based), `{N:a.b.c}` any field of it.
 */

/** What of an answer is compared: everything, status and Content-Type only, or a projection of the body. */
export type Compare = "full" | "head" | ((body: unknown) => unknown)

export interface Step {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  /** JSON (templated), or a string sent as it is (YAML apply bodies). */
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Default "full". */
  readonly compare?: Compare
  /** The answer is a watch stream: one JSON event per line. */
  readonly watch?: boolean
  /** Sent without waiting for its answer (a watch open while the next steps write); compared at the end. */
  readonly background?: boolean
  /** Milliseconds to wait before sending it (the real server's controllers act asynchronously). */
  readonly delay?: number
  /** Not an HTTP request: compact both servers' history (etcd compaction / `TestCluster.compact`). */
  readonly action?: "compact"
}

export interface Scenario {
  readonly name: string
  readonly area: string
  readonly steps: ReadonlyArray<Step>
  /** Runs alone, after the concurrent ones (it acts on the whole server: compaction). */
  readonly serial?: boolean
}

const contentTypes = {
  json: "application/json",
  merge: "application/merge-patch+json",
  jsonpatch: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
  yaml: "application/yaml"
} as const

export type PatchKind = "merge" | "jsonpatch" | "strategic" | "apply"

type Extra = Omit<Partial<Step>, "method" | "path" | "body">

export const get = (path: string, extra?: Extra): Step => ({ method: "GET", path, ...extra })

export const post = (path: string, body: unknown, extra?: Extra): Step => ({ method: "POST", path, body, ...extra })

export const put = (path: string, body: unknown, extra?: Extra): Step => ({ method: "PUT", path, body, ...extra })

export const patch = (kind: PatchKind, path: string, body: unknown, extra?: Extra): Step => ({
  method: "PATCH",
  path,
  body,
  ...extra,
  headers: { "content-type": contentTypes[kind], ...extra?.headers }
})

export const del = (path: string, body?: unknown, extra?: Extra): Step => ({
  method: "DELETE",
  path,
  ...(body === undefined ? {} : { body }),
  ...extra
})

/** A short watch: the stream ends after `timeoutSeconds` (added to the query). */
export const watch = (path: string, timeoutSeconds: number, extra?: Extra): Step => ({
  method: "GET",
  path: `${path}${path.includes("?") ? "&" : "?"}watch=true&timeoutSeconds=${timeoutSeconds}`,
  watch: true,
  ...extra
})

export const compact: Step = { method: "GET", path: "", action: "compact" }

/** Scenarios of one area. */
export const area = (name: string, scenarios: ReadonlyArray<Omit<Scenario, "area">>): ReadonlyArray<Scenario> =>
  scenarios.map((s) => ({ ...s, area: name }))

// paths and objects used everywhere

export const ns = "/api/v1/namespaces/{ns}"
export const cms = `${ns}/configmaps`
export const secrets = `${ns}/secrets`
export const services = `${ns}/services`
export const pods = `${ns}/pods`
export const deployments = "/apis/apps/v1/namespaces/{ns}/deployments"
export const widgets = "/apis/fidelity.example.com/v1/namespaces/{ns}/widgets"
export const gadgets = "/apis/fidelity.example.com/v1/gadgets"

export const configMap = (
  name: string,
  data?: Readonly<Record<string, string>>,
  metadata?: Readonly<Record<string, unknown>>
) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...metadata },
  ...(data === undefined ? {} : { data })
})

/** `obj` with the resourceVersion of step `step`'s answer (custom resources allow no unconditional update). */
export const at = <A extends { readonly metadata: object }>(obj: A, step: number): A => ({
  ...obj,
  metadata: { ...obj.metadata, resourceVersion: `{rv:${step}}` }
})

export const widget = (
  name: string,
  spec?: Readonly<Record<string, unknown>>,
  extra?: Readonly<Record<string, unknown>>
) => ({
  apiVersion: "fidelity.example.com/v1",
  kind: "Widget",
  metadata: { name },
  spec: { replicas: 1, ...spec },
  ...extra
})

export const deployment = (name: string, replicas = 1, image = "nginx:1.27") => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "web", image }] }
    }
  }
})

/**
 * A workload as its writer sees it: without `status`, the revision annotation and the managedFields entries of
 * kube-controller-manager — the deployment controller writes them asynchronously on the real server (whenever it
 * gets to it), synchronously on the embedded one, so they are timing, not semantics.
 */
export const withoutController = (b: unknown): unknown => {
  const o = b as {
    status?: unknown
    metadata?: { annotations?: Record<string, string>; managedFields?: ReadonlyArray<{ manager?: string }> }
  }
  if (o.metadata === undefined) return b
  const { "deployment.kubernetes.io/revision": _revision, ...annotations } = o.metadata.annotations ?? {}
  return {
    ...o,
    status: undefined,
    metadata: {
      ...o.metadata,
      annotations: Object.keys(annotations).length === 0 ? undefined : annotations,
      managedFields: o.metadata.managedFields?.filter((e) => e.manager !== "kube-controller-manager")
    }
  }
}

/**
 * A Status whose causes are compared as a set: kube-apiserver lists the errors of sibling properties in Go map
 * order, which changes from one process to the next (four runs of one request gave three orders). The message
 * repeats the causes in that order, so only its part before the list is compared; the causes carry each one.
 */
export const unorderedCauses = (b: unknown): unknown => {
  const status = b as { message?: string; details?: { causes?: ReadonlyArray<{ field?: string; message?: string }> } }
  const causes = status.details?.causes
  if (causes === undefined) return b
  const key = (c: { field?: string; message?: string }) => `${c.field ?? ""}\u0000${c.message ?? ""}`
  return {
    ...status,
    message: status.message?.replace(/: \[.*\]$/s, ": [<the causes>]"),
    details: { ...status.details, causes: [...causes].sort((a, b) => key(a).localeCompare(key(b))) }
  }
}

/** A Table of workloads with {@link withoutController} applied to each row's object. */
export const tableWithoutController = (b: unknown): unknown => {
  const t = b as { rows?: ReadonlyArray<{ object?: unknown }> }
  return t.rows === undefined
    ? b
    : { ...t, rows: t.rows.map((row) => ({ ...row, object: withoutController(row.object) })) }
}

export const pod = (name: string, containers?: ReadonlyArray<unknown>) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: containers ?? [{ name: "app", image: "busybox:1.36" }] }
})
