import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { stringify } from "yaml"
import type * as KubeController from "../KubeController.js"
import type * as Manifests from "../Manifests.js"
import type * as Operator from "../Operator.js"
import * as Resource from "../Resource.js"
import { crdManifests } from "./resource.js"

type Json = Record<string, unknown>

interface Fields {
  readonly reason: Manifests.ManifestsError["reason"]
  readonly message: string
}

// ---------------------------------------------------------------------------------------------------------------
// RBAC

/** Kubernetes' usual verb order; others after, alphabetically. */
const verbOrder = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]

const compareVerbs = (a: string, b: string): number => {
  const i = verbOrder.indexOf(a)
  const j = verbOrder.indexOf(b)
  if (i !== -1 || j !== -1) return (i === -1 ? verbOrder.length : i) - (j === -1 ? verbOrder.length : j)
  return a < b ? -1 : a > b ? 1 : 0
}

const compareStrings = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

/** One resource (or subresource) of one group, with its verbs: the unit rules are merged by. */
interface Grant {
  readonly group: string
  readonly resource: string
  readonly resourceNames: ReadonlyArray<string> | undefined
  readonly verbs: ReadonlyArray<string>
}

const grant = (
  resource: Resource.Resource<any>,
  verbs: ReadonlyArray<string>,
  subresource?: string,
  resourceNames?: ReadonlyArray<string>
): Grant => ({
  group: resource.group,
  resource: subresource === undefined ? resource.plural : `${resource.plural}/${subresource}`,
  resourceNames,
  verbs
})

const isPermission = (u: KubeController.Permission | Operator.PolicyRule): u is KubeController.Permission =>
  "resource" in u

const fromRule = (rule: Operator.PolicyRule): Array<Grant> =>
  rule.apiGroups.flatMap((group) =>
    rule.resources.map((resource) => ({ group, resource, resourceNames: rule.resourceNames, verbs: rule.verbs }))
  )

/** What one controller needs (see the module documentation of `Manifests`). */
const controllerGrants = (d: KubeController.Declaration): Array<Grant> => {
  const out: Array<Grant> = [grant(d.for, ["get", "list", "watch", "patch"])]
  if (Resource.isCustom(d.for) && d.for.status !== undefined) out.push(grant(d.for, ["patch"], "status"))
  if (d.owns.length > 0) out.push(grant(d.for, ["update"], "finalizers"))
  for (const owned of d.owns) out.push(grant(owned, ["get", "list", "watch", "create", "patch"]))
  for (const watched of d.watches) out.push(grant(watched, ["get", "list", "watch"]))
  out.push({ group: "events.k8s.io", resource: "events", resourceNames: undefined, verbs: ["create", "patch"] })
  for (const entry of d.rbac) {
    if (isPermission(entry)) out.push(grant(entry.resource, entry.verbs, entry.subresource, entry.resourceNames))
    else for (const g of fromRule(entry)) out.push(g)
  }
  return out
}

const namesKey = (names: ReadonlyArray<string> | undefined): string =>
  names === undefined || names.length === 0 ? "" : [...new Set(names)].sort(compareStrings).join(",")

/** Merges grants (one verb set per group, resource and names) into sorted rules, resources of equal verbs together. */
const merge = (grants: ReadonlyArray<Grant>): Array<Operator.PolicyRule> => {
  const byResource = new Map<string, { group: string; resource: string; names: string; verbs: Set<string> }>()
  for (const g of grants) {
    const names = namesKey(g.resourceNames)
    const key = JSON.stringify([g.group, g.resource, names])
    const entry = byResource.get(key) ?? { group: g.group, resource: g.resource, names, verbs: new Set<string>() }
    for (const v of g.verbs) entry.verbs.add(v)
    byResource.set(key, entry)
  }
  // a `*` verb covers the others
  const rules = new Map<string, { group: string; names: string; verbs: Array<string>; resources: Array<string> }>()
  for (const e of byResource.values()) {
    if (e.verbs.size === 0) continue // a rule without verbs is invalid, and grants nothing
    const verbs = e.verbs.has("*") ? ["*"] : [...e.verbs].sort(compareVerbs)
    const key = JSON.stringify([e.group, e.names, verbs])
    const rule = rules.get(key) ?? { group: e.group, names: e.names, verbs, resources: [] }
    rule.resources.push(e.resource)
    rules.set(key, rule)
  }
  return [...rules.values()]
    .map((r) => ({ ...r, resources: r.resources.sort(compareStrings) }))
    .sort((a, b) =>
      compareStrings(a.group, b.group) || compareStrings(a.resources[0]!, b.resources[0]!) ||
      compareStrings(a.names, b.names) || compareStrings(a.verbs.join(","), b.verbs.join(","))
    )
    .map((r): Operator.PolicyRule => ({
      apiGroups: [r.group],
      resources: r.resources,
      ...(r.names === "" ? {} : { resourceNames: r.names.split(",") }),
      verbs: r.verbs
    }))
}

/** @internal */
export const rules = (operator: Operator.Operator<any, any>): Array<Operator.PolicyRule> =>
  merge([...operator.controllers.flatMap(controllerGrants), ...operator.rules.flatMap(fromRule)])

/** The leader-election Role's rules (what `LeaseLeaderElection` sends). */
const leaseRules: ReadonlyArray<Operator.PolicyRule> = [
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }
]

// ---------------------------------------------------------------------------------------------------------------
// validation

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/

const labelProblem = (value: string, what: string): string | undefined => {
  if (value === "") return `${what} is empty`
  if (value.length > 63) return `${what} "${value}" has ${value.length} characters, at most 63 are allowed`
  if (!dns1123Label.test(value)) {
    return `${what} "${value}" is not a DNS-1123 label: use lowercase letters, digits and '-', ` +
      "starting and ending with a letter or digit (e.g. \"my-operator\")"
  }
  return undefined
}

// the distribution reference grammar (github.com/distribution/reference): [host[:port]/]path[:tag][@digest]
const component = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
const domain = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`
const imageReference = new RegExp(
  `^(?:${domain}/)?${component}(?:/${component})*(?::[\\w][\\w.-]{0,127})?` +
    "(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$"
)

const imageProblem = (image: string): string | undefined => {
  if (image.trim() === "") return "the image is empty: give one, e.g. --image ghcr.io/me/my-operator:0.1.0"
  if (image.length > 4096 || !imageReference.test(image)) {
    return `the image "${image}" is not a valid image reference: ` +
      "use [registry[:port]/]repository[:tag][@digest] with a lowercase repository, e.g. ghcr.io/me/my-operator:0.1.0"
  }
  return undefined
}

const portProblem = (port: number, what: string): string | undefined =>
  Number.isInteger(port) && port >= 1 && port <= 65535
    ? undefined
    : `${what} must be an integer from 1 to 65535, got ${port}`

interface Resolved {
  readonly name: string
  readonly namespace: string
  readonly image: string
  readonly replicas: number
  readonly leaderElection: boolean
  readonly metricsPort: number
  readonly healthPort: number
}

const resolve = (
  operator: Operator.Operator<any, any>,
  options: Manifests.Options
): Result.Result<Resolved, Fields> => {
  const fail = (reason: Fields["reason"], message: string) => Result.fail({ reason, message })
  const name = operator.name
  const nameProblem = labelProblem(name, "the operator name")
  if (nameProblem !== undefined) return fail("InvalidName", `${nameProblem} (Operator.make({ name }))`)
  if (!dns1035Label.test(name) || name.length > 63 - "-metrics".length) {
    return fail(
      "InvalidName",
      `the operator name "${name}" must start with a letter and have at most ${63 - "-metrics".length} ` +
        `characters: the metrics Service "${name}-metrics" is named after it (a DNS-1035 label)`
    )
  }
  const namespace = options.namespace ?? `${name}-system`
  const nsProblem = labelProblem(namespace, "the namespace")
  if (nsProblem !== undefined) return fail("InvalidNamespace", nsProblem)
  const image = options.image ?? `${name}:latest`
  const imgProblem = imageProblem(image)
  if (imgProblem !== undefined) return fail("InvalidImage", imgProblem)
  const replicas = options.replicas ?? 1
  if (!Number.isInteger(replicas) || replicas < 0) {
    return fail("InvalidOption", `replicas must be a non-negative integer, got ${replicas}`)
  }
  const leaderElection = options.leaderElection ?? true
  if (replicas > 1 && !leaderElection) {
    return fail(
      "InvalidOption",
      `${replicas} replicas without leader election would reconcile every object ${replicas} times at once: ` +
        "turn leader election on or run 1 replica"
    )
  }
  const metricsPort = options.metricsPort ?? 8080
  const healthPort = options.healthPort ?? 8081
  const portError = portProblem(metricsPort, "metricsPort") ?? portProblem(healthPort, "healthPort")
  if (portError !== undefined) return fail("InvalidOption", portError)
  if (metricsPort === healthPort) {
    return fail("InvalidOption", `metricsPort and healthPort are both ${metricsPort}: give them different ports`)
  }
  return Result.succeed({ name, namespace, image, replicas, leaderElection, metricsPort, healthPort })
}

// ---------------------------------------------------------------------------------------------------------------
// objects

const labels = (name: string): Json => ({ "app.kubernetes.io/name": name })

const workload = (r: Resolved): Array<Json> => {
  const meta = (name: string): Json => ({ name, namespace: r.namespace, labels: labels(r.name) })
  const args = [
    "--in-cluster",
    ...(r.leaderElection ? ["--leader-elect"] : []),
    `--metrics-port=${r.metricsPort}`,
    `--health-port=${r.healthPort}`,
    "--log-format=json"
  ]
  const probe = (path: string, initialDelaySeconds: number, periodSeconds: number): Json => ({
    httpGet: { path, port: "health" },
    initialDelaySeconds,
    periodSeconds
  })
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(r.name),
      spec: {
        replicas: r.replicas,
        selector: { matchLabels: labels(r.name) },
        template: {
          metadata: { labels: labels(r.name) },
          spec: {
            serviceAccountName: r.name,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 1000,
              runAsGroup: 1000,
              seccompProfile: { type: "RuntimeDefault" }
            },
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: "operator",
                image: r.image,
                args,
                env: [{ name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }],
                ports: [
                  { name: "metrics", containerPort: r.metricsPort, protocol: "TCP" },
                  { name: "health", containerPort: r.healthPort, protocol: "TCP" }
                ],
                livenessProbe: probe("/healthz", 15, 20),
                readinessProbe: probe("/readyz", 5, 10),
                resources: {
                  requests: { cpu: "10m", memory: "64Mi" },
                  limits: { cpu: "500m", memory: "256Mi" }
                },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ["ALL"] }
                },
                volumeMounts: [{ name: "tmp", mountPath: "/tmp" }]
              }
            ],
            volumes: [{ name: "tmp", emptyDir: {} }]
          }
        }
      }
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(`${r.name}-metrics`),
      spec: {
        selector: labels(r.name),
        ports: [{ name: "metrics", port: r.metricsPort, targetPort: "metrics", protocol: "TCP" }]
      }
    }
  ]
}

const rbac = (operator: Operator.Operator<any, any>, r: Resolved): Array<Json> => {
  const subject = { kind: "ServiceAccount", name: r.name, namespace: r.namespace }
  const rbacGroup = "rbac.authorization.k8s.io"
  const out: Array<Json> = [
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: r.name, namespace: r.namespace, labels: labels(r.name) }
    },
    {
      apiVersion: `${rbacGroup}/v1`,
      kind: "ClusterRole",
      metadata: { name: r.name, labels: labels(r.name) },
      rules: rules(operator)
    },
    {
      apiVersion: `${rbacGroup}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: r.name, labels: labels(r.name) },
      roleRef: { apiGroup: rbacGroup, kind: "ClusterRole", name: r.name },
      subjects: [subject]
    }
  ]
  if (r.leaderElection) {
    const role = `${r.name}-leader-election`
    out.push(
      {
        apiVersion: `${rbacGroup}/v1`,
        kind: "Role",
        metadata: { name: role, namespace: r.namespace, labels: labels(r.name) },
        rules: leaseRules
      },
      {
        apiVersion: `${rbacGroup}/v1`,
        kind: "RoleBinding",
        metadata: { name: role, namespace: r.namespace, labels: labels(r.name) },
        roleRef: { apiGroup: rbacGroup, kind: "Role", name: role },
        subjects: [subject]
      }
    )
  }
  return out
}

/** @internal */
export const generate = <E>(
  operator: Operator.Operator<any, any>,
  options: Manifests.Options,
  error: (fields: Fields) => E
): Effect.Effect<ReadonlyArray<Json>, E> =>
  Effect.suspend(() => {
    const resolved = resolve(operator, options)
    if (Result.isFailure(resolved)) return Effect.fail(error(resolved.failure))
    const r = resolved.success
    const crds = crdManifests(operator.resources)
    if (Result.isFailure(crds)) return Effect.fail(error({ reason: "CrdConflict", message: crds.failure.message }))
    const namespace: Json = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: r.namespace, labels: labels(r.name) }
    }
    return Effect.succeed([
      namespace,
      ...(crds.success as unknown as Array<Json>),
      ...rbac(operator, r),
      ...workload(r)
    ])
  })

// ---------------------------------------------------------------------------------------------------------------
// output

/** @internal */
export const toYaml = (objects: ReadonlyArray<object>): string =>
  objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n")

const fileOf = (o: object): string => {
  const kind = (o as Json).kind
  if (kind === "CustomResourceDefinition") return "crd.yaml"
  if (kind === "Namespace") return "namespace.yaml"
  if (
    kind === "ServiceAccount" || kind === "ClusterRole" || kind === "ClusterRoleBinding" || kind === "Role" ||
    kind === "RoleBinding"
  ) return "rbac.yaml"
  return "workload.yaml"
}

/** @internal */
export const files = (objects: ReadonlyArray<object>): Record<string, string> => {
  const groups = new Map<string, Array<object>>()
  for (const o of objects) {
    const name = fileOf(o)
    groups.set(name, [...(groups.get(name) ?? []), o])
  }
  const out: Record<string, string> = {}
  for (const name of [...groups.keys()].sort(compareStrings)) out[name] = toYaml(groups.get(name)!)
  return out
}
