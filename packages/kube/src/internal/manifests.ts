import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { stringify } from "yaml"
import * as Admission from "../Admission.js"
import * as CertificateManager from "../CertificateManager.js"
import * as Conversion from "../Conversion.js"
import type * as KubeController from "../KubeController.js"
import type * as Manifests from "../Manifests.js"
import type * as Operator from "../Operator.js"
import * as Resource from "../Resource.js"
import * as Monitoring from "./monitoring.js"
import { webhookSettings } from "./operator.js"
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

/**
 * What a ring needs of a controller's kinds (`Sharding`): the sharder lists and watches the `for` and `owns` kinds
 * and patches their assignment and drain labels; a shard patches its `for` objects to acknowledge a drain.
 */
const shardingGrants = (d: KubeController.Declaration): Array<Grant> =>
  [d.for, ...d.owns].map((resource) => grant(resource, ["list", "watch", "patch"]))

/** @internal */
export const rules = (
  operator: Operator.Operator<any, any>,
  options?: Pick<Manifests.Options, "sharding">
): Array<Operator.PolicyRule> =>
  merge([
    ...operator.controllers.flatMap(controllerGrants),
    ...(options?.sharding === true ? operator.controllers.flatMap(shardingGrants) : []),
    ...operator.rules.flatMap(fromRule),
    // the CertificateManager's cluster-scoped objects (named by the operator, whatever its namespace)
    ...certificateRules(webhookSettings(operator, "default")).cluster.flatMap(fromRule)
  ])

const leases = { apiGroups: ["coordination.k8s.io"], resources: ["leases"] }

/** The leader-election Role's rules (what `LeaseLeaderElection` sends). */
const leaseRules: ReadonlyArray<Operator.PolicyRule> = [{ ...leases, verbs: ["get", "create", "update"] }]

/**
 * The sharding Role's rules: each replica holds its shard Lease and may hold the sharder's (`get`, `create`,
 * `update`), the sharder watches the ring's shard Leases (`list`, `watch`) and deletes those long expired.
 */
const shardingLeaseRules: ReadonlyArray<Operator.PolicyRule> = [
  { ...leases, verbs: ["get", "list", "watch", "create", "update", "delete"] }
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
  readonly sharding: boolean
  readonly metricsPort: number
  readonly healthPort: number
  /** The webhooks' settings, when the operator has any. */
  readonly webhooks: Operator.WebhookSettings<any> | undefined
  readonly dashboard: boolean
  readonly alerts: boolean
  readonly serviceMonitor: boolean
}

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** What is wrong with the webhooks' settings, or undefined. */
const webhookProblem = (w: Operator.WebhookSettings<any>, metricsPort: number, healthPort: number) => {
  if (!dns1035Label.test(w.serviceName) || w.serviceName.length > 63) {
    return `the webhook Service name "${w.serviceName}" is not a DNS-1035 label (lowercase letters, digits and ` +
      "'-', starting with a letter, at most 63 characters): give webhooks.service.name"
  }
  const nsProblem = labelProblem(w.namespace, "the webhook Service's namespace")
  if (nsProblem !== undefined) return nsProblem
  const portError = portProblem(w.port, "webhooks.port")
  if (portError !== undefined) return portError
  if (w.port === metricsPort || w.port === healthPort) {
    return `webhooks.port ${w.port} is also the ${w.port === metricsPort ? "metrics" : "health"} port: ` +
      "give them different ports"
  }
  if (w.certificates._tag === "Directory") {
    const { directory, secretName } = w.certificates
    if (!dns1123Subdomain.test(secretName) || secretName.length > 253) {
      return `the certificate Secret name "${secretName}" is not a DNS-1123 subdomain`
    }
    if (!directory.startsWith("/")) return `the certificate directory "${directory}" is not an absolute path`
  }
  return undefined
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
  // an operator whose webhook Service names its namespace runs there (a Service selects Pods of its own namespace)
  const namespace = options.namespace ?? operator.webhooks?.service?.namespace ?? `${name}-system`
  const nsProblem = labelProblem(namespace, "the namespace")
  if (nsProblem !== undefined) return fail("InvalidNamespace", nsProblem)
  const image = options.image ?? `${name}:latest`
  const imgProblem = imageProblem(image)
  if (imgProblem !== undefined) return fail("InvalidImage", imgProblem)
  const sharding = options.sharding ?? false
  if (sharding && options.leaderElection === true) {
    return fail(
      "InvalidOption",
      "leaderElection and sharding are alternatives: leader election runs one replica at a time, sharding every " +
        "replica on its share of the objects; leave leaderElection out with sharding"
    )
  }
  const replicas = options.replicas ?? (sharding ? 3 : 1)
  if (!Number.isInteger(replicas) || replicas < 0) {
    return fail("InvalidOption", `replicas must be a non-negative integer, got ${replicas}`)
  }
  const leaderElection = !sharding && (options.leaderElection ?? true)
  if (replicas > 1 && !leaderElection && !sharding) {
    return fail(
      "InvalidOption",
      `${replicas} replicas without leader election would reconcile every object ${replicas} times at once: ` +
        "turn leader election (or sharding) on or run 1 replica"
    )
  }
  const metricsPort = options.metricsPort ?? 8080
  const healthPort = options.healthPort ?? 8081
  const portError = portProblem(metricsPort, "metricsPort") ?? portProblem(healthPort, "healthPort")
  if (portError !== undefined) return fail("InvalidOption", portError)
  if (metricsPort === healthPort) {
    return fail("InvalidOption", `metricsPort and healthPort are both ${metricsPort}: give them different ports`)
  }
  const webhooks = webhookSettings(operator, namespace)
  if (webhooks !== undefined && webhooks.namespace !== namespace) {
    return fail(
      "InvalidOption",
      `the webhook Service's namespace "${webhooks.namespace}" is not the operator's ("${namespace}"): a Service ` +
        "reaches the Pods of its own namespace only; give one namespace, or leave webhooks.service.namespace out"
    )
  }
  const hookProblem = webhooks === undefined ? undefined : webhookProblem(webhooks, metricsPort, healthPort)
  if (hookProblem !== undefined) return fail("InvalidOption", hookProblem)
  const dashboard = options.dashboard ?? false
  const alerts = options.alerts ?? false
  return Result.succeed({
    name,
    namespace,
    image,
    replicas,
    leaderElection,
    sharding,
    metricsPort,
    healthPort,
    webhooks,
    dashboard,
    alerts,
    serviceMonitor: options.serviceMonitor ?? (dashboard || alerts)
  })
}

// ---------------------------------------------------------------------------------------------------------------
// objects

const labels = (name: string): Json => ({ "app.kubernetes.io/name": name })

/** What the monitoring objects watch: the metrics Service's job (a ServiceMonitor names it after the Service). */
const monitoringTarget = (r: Resolved): Monitoring.Target => ({
  name: r.name,
  namespace: r.namespace,
  job: `${r.name}-metrics`,
  labels: labels(r.name) as Record<string, string>,
  leaderElection: r.leaderElection,
  webhooks: r.webhooks !== undefined
})

/** The ServiceMonitor, the dashboard's ConfigMap and the PrometheusRule, as the options ask. */
const monitoring = (r: Resolved): Array<Json> => {
  const target = monitoringTarget(r)
  return [
    ...(r.serviceMonitor ? [Monitoring.serviceMonitor(target)] : []),
    ...(r.dashboard ? [Monitoring.dashboardConfigMap(target)] : []),
    ...(r.alerts ? [Monitoring.prometheusRule(target)] : [])
  ]
}

const workload = (r: Resolved): Array<Json> => {
  const w = r.webhooks
  const certs = w?.certificates._tag === "Directory" ? w.certificates : undefined
  const meta = (name: string): Json => ({ name, namespace: r.namespace, labels: labels(r.name) })
  const args = [
    "--in-cluster",
    ...(r.leaderElection ? ["--leader-elect"] : []),
    ...(r.sharding ? ["--sharding"] : []),
    `--metrics-port=${r.metricsPort}`,
    `--health-port=${r.healthPort}`,
    ...(w === undefined ? [] : [`--webhook-port=${w.port}`]),
    ...(w?.certificates._tag === "Directory" ? [`--webhook-cert-dir=${w.certificates.directory}`] : []),
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
                  { name: "health", containerPort: r.healthPort, protocol: "TCP" },
                  ...(w === undefined ? [] : [{ name: "webhook", containerPort: w.port, protocol: "TCP" }])
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
                volumeMounts: [
                  { name: "tmp", mountPath: "/tmp" },
                  ...(certs === undefined
                    ? []
                    : [{ name: "webhook-certs", mountPath: certs.directory, readOnly: true }])
                ]
              }
            ],
            volumes: [
              { name: "tmp", emptyDir: {} },
              ...(certs === undefined ? [] : [{ name: "webhook-certs", secret: { secretName: certs.secretName } }])
            ]
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
    },
    ...(w === undefined ? [] : [{
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: w.serviceName, namespace: w.namespace, labels: labels(r.name) },
      spec: {
        selector: labels(r.name),
        ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }]
      }
    }])
  ]
}

/** The service kube-apiserver calls, without a CA bundle: the CertificateManager (or cert-manager) injects it. */
const serviceConfig = (w: Operator.WebhookSettings<any>) => ({
  service: { name: w.serviceName, namespace: w.namespace, port: 443 }
})

/** A `clientConfig` without its empty `caBundle` (an empty bundle is the injector's to fill). */
const withoutEmptyBundle = (configuration: Admission.Configuration): Json => ({
  ...configuration,
  webhooks: configuration.webhooks.map((entry) => {
    const { caBundle, ...clientConfig } = entry.clientConfig as Json
    return { ...entry, clientConfig: caBundle === "" ? clientConfig : { ...clientConfig, caBundle } }
  })
})

/** The Mutating/ValidatingWebhookConfigurations, or the reason they cannot be made (two webhooks of one name). */
const webhookConfigurations = (r: Resolved, w: Operator.WebhookSettings<any>): Result.Result<Array<Json>, string> => {
  try {
    return Result.succeed(
      Admission.configurations(w.admission, {
        name: r.name,
        labels: labels(r.name) as Record<string, string>,
        clientConfig: { ...serviceConfig(w), caBundle: "" }
      }).map(withoutEmptyBundle)
    )
  } catch (error) {
    return Result.fail(error instanceof Error ? error.message : String(error))
  }
}

/** The CertificateManager's rules: the Secret's in a Role of the Service's namespace, the rest in the ClusterRole. */
const certificateRules = (w: Operator.WebhookSettings<any> | undefined) => {
  const all = w?.certificates._tag === "Managed" ? CertificateManager.rbac(w.certificates.options) : []
  const isSecret = (rule: Operator.PolicyRule) => rule.resources.includes("secrets")
  return { namespaced: all.filter(isSecret), cluster: all.filter((rule) => !isSecret(rule)) }
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
      rules: rules(operator, { sharding: r.sharding })
    },
    {
      apiVersion: `${rbacGroup}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: r.name, labels: labels(r.name) },
      roleRef: { apiGroup: rbacGroup, kind: "ClusterRole", name: r.name },
      subjects: [subject]
    }
  ]
  if (r.leaderElection || r.sharding) {
    // the main job's Leases are in the Pod's namespace ($POD_NAMESPACE)
    const role = r.sharding ? `${r.name}-sharding` : `${r.name}-leader-election`
    out.push(
      {
        apiVersion: `${rbacGroup}/v1`,
        kind: "Role",
        metadata: { name: role, namespace: r.namespace, labels: labels(r.name) },
        rules: r.sharding ? shardingLeaseRules : leaseRules
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
  const certificates = certificateRules(r.webhooks).namespaced
  if (certificates.length > 0) {
    const role = `${r.name}-webhook-certificates`
    const namespace = r.webhooks!.namespace
    out.push(
      {
        apiVersion: `${rbacGroup}/v1`,
        kind: "Role",
        metadata: { name: role, namespace, labels: labels(r.name) },
        rules: merge(certificates.flatMap(fromRule))
      },
      {
        apiVersion: `${rbacGroup}/v1`,
        kind: "RoleBinding",
        metadata: { name: role, namespace, labels: labels(r.name) },
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
    const plain = crdManifests(operator.resources)
    if (Result.isFailure(plain)) return Effect.fail(error({ reason: "CrdConflict", message: plain.failure.message }))
    const w = r.webhooks
    const crds = w === undefined || w.conversion.length === 0
      ? Result.succeed(plain.success)
      : Conversion.withConversion(plain.success, w.conversion, serviceConfig(w))
    if (Result.isFailure(crds)) return Effect.fail(error({ reason: "CrdConflict", message: crds.failure.message }))
    const configurations = w === undefined ? Result.succeed([]) : webhookConfigurations(r, w)
    if (Result.isFailure(configurations)) {
      return Effect.fail(error({ reason: "InvalidOption", message: configurations.failure }))
    }
    const namespace: Json = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: r.namespace, labels: labels(r.name) }
    }
    return Effect.succeed([
      namespace,
      ...(crds.success as unknown as Array<Json>),
      ...rbac(operator, r),
      ...workload(r),
      ...configurations.success,
      ...monitoring(r)
    ])
  })

// ---------------------------------------------------------------------------------------------------------------
// output

/** @internal */
export const toYaml = (objects: ReadonlyArray<object>): string =>
  objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n")

const isDashboard = (o: object): boolean =>
  (o as Json).kind === "ConfigMap" &&
  ((o as { metadata?: { labels?: Record<string, unknown> } }).metadata?.labels?.grafana_dashboard !== undefined)

const fileOf = (o: object): string => {
  const kind = (o as Json).kind
  if (kind === "CustomResourceDefinition") return "crd.yaml"
  if (kind === "Namespace") return "namespace.yaml"
  if (
    kind === "ServiceAccount" || kind === "ClusterRole" || kind === "ClusterRoleBinding" || kind === "Role" ||
    kind === "RoleBinding"
  ) return "rbac.yaml"
  if (kind === "MutatingWebhookConfiguration" || kind === "ValidatingWebhookConfiguration") return "webhook.yaml"
  if (kind === "ServiceMonitor" || kind === "PrometheusRule") return "monitoring/prometheus.yaml"
  if (isDashboard(o)) return "monitoring/grafana-dashboard.yaml"
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
  // the dashboards' JSON, for Grafana's "Import dashboard"
  for (const o of objects) {
    if (!isDashboard(o)) continue
    for (const [file, text] of Object.entries(((o as Json).data ?? {}) as Record<string, string>)) {
      out[`grafana/${file}`] = text.endsWith("\n") ? text : `${text}\n`
    }
  }
  return out
}

/** @internal */
export const dashboard = <E>(
  operator: Operator.Operator<any, any>,
  options: Manifests.Options,
  error: (fields: Fields) => E
): Effect.Effect<Json, E> =>
  Effect.suspend(() => {
    const resolved = resolve(operator, options)
    return Result.isFailure(resolved)
      ? Effect.fail(error(resolved.failure))
      : Effect.succeed(Monitoring.dashboard(monitoringTarget(resolved.success)))
  })
