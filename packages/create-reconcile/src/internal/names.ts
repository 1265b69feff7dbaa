/**
 * The names a scaffold is made of, checked before anything is written: the
 * project (an npm package name and the operator's DNS-1123 name), the kind
 * (a PascalCase identifier), the API group (a DNS subdomain) and the version.
 */

/** A name that cannot be used, with what is wrong and what would do. */
export class ScaffoldError extends Error {
  readonly _tag = "ScaffoldError"
  constructor(message: string) {
    super(message)
    this.name = "ScaffoldError"
  }
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/**
 * The project name (the directory's base name): the npm package name and the operator's name, which names its
 * ServiceAccount, ClusterRole, Lease and Deployment and the namespace `<name>-system` (at most 63 characters).
 */
export const checkProjectName = (name: string): string => {
  if (name === "") throw new ScaffoldError("the project name is empty: create-reconcile my-operator")
  const problems: Array<string> = []
  if (!dnsLabel.test(name)) {
    problems.push("use lowercase letters, digits and '-', starting and ending with a letter or digit")
  }
  if (name.length > 56) problems.push(`it has ${name.length} characters; at most 56 (the namespace is <name>-system)`)
  if (problems.length > 0) {
    throw new ScaffoldError(`invalid project name "${name}": ${problems.join("; ")} (e.g. my-operator)`)
  }
  return name
}

/** Identifiers the generated files import or use: a kind of that name would shadow them. */
const reserved = new Set([
  "Apply",
  "Arbitrary",
  "Cache",
  "Conditions",
  "Effect",
  "EventRecorder",
  "Finalizer",
  "KubeClient",
  "KubeController",
  "KubeOutcome",
  "Layer",
  "Main",
  "Object",
  "Operator",
  "Option",
  "Reconcile",
  "Resource",
  "Schema",
  "Status",
  "TestClock",
  "TestKube",
  "Undecodable",
  "ConfigMap",
  "Controller",
  "Step"
])

/**
 * A kind: PascalCase, letters and digits, at most 55 characters (its finalizer `<kind>-cleanup` is a name of at most
 * 63); not a name the generated code uses itself.
 */
export const checkKind = (kind: string): string => {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) {
    throw new ScaffoldError(
      `invalid kind "${kind}": a kind is PascalCase, letters and digits starting with an uppercase letter (e.g. Greeting)`
    )
  }
  if (kind.length > 55) throw new ScaffoldError(`invalid kind "${kind}": at most 55 characters`)
  if (reserved.has(kind)) {
    throw new ScaffoldError(`invalid kind "${kind}": the generated code uses that name itself; choose another`)
  }
  return kind
}

/** An API group: a DNS subdomain with at least one dot, not one Kubernetes reserves. */
export const checkGroup = (group: string): string => {
  const labels = group.split(".")
  if (labels.length < 2 || !labels.every((label) => dnsLabel.test(label) && label.length <= 63)) {
    throw new ScaffoldError(
      `invalid group "${group}": a group is a DNS name with at least one dot, lowercase letters, digits and '-' ` +
        "(e.g. example.com, apps.my-company.io)"
    )
  }
  if (group.length > 253) throw new ScaffoldError(`invalid group "${group}": at most 253 characters`)
  if (/(^|\.)(k8s\.io|kubernetes\.io)$/.test(group)) {
    throw new ScaffoldError(
      `invalid group "${group}": groups under k8s.io and kubernetes.io are reserved for Kubernetes; use your own domain`
    )
  }
  return group
}

/** A Kubernetes API version: `v1`, `v2beta1`, `v1alpha2`. */
export const checkVersion = (version: string): string => {
  if (!/^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/.test(version)) {
    throw new ScaffoldError(`invalid version "${version}": use v1, v2, v1beta1, v1alpha1, …`)
  }
  return version
}

/** The plural resource name of a kind, in lowercase (`Greeting` → `greetings`, `Policy` → `policies`). */
export const plural = (kind: string): string => {
  const lower = kind.toLowerCase()
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`
  return `${lower}s`
}

/** The tokens the templates are written with, for one kind. */
export interface KindNames {
  /** `Greeting` */
  readonly Kind: string
  /** `greeting`: the lowercase kind (the CRD's singular, names derived from it). */
  readonly lower: string
  /** `greetings` */
  readonly plural: string
  /** `example.com` */
  readonly group: string
  /** `v1` */
  readonly version: string
  /** The module of the kind's controller, without extension: `controller`, `widgetController`. */
  readonly controller: string
}

/** Checks a kind, its group and version, and derives the names of its files and objects. */
export const kindNames = (
  options: { readonly kind: string; readonly group: string; readonly version: string },
  controller: "controller" | "perKind"
): KindNames => {
  const Kind = checkKind(options.kind)
  const group = checkGroup(options.group)
  const version = checkVersion(options.version)
  const names = {
    Kind,
    lower: Kind.toLowerCase(),
    plural: plural(Kind),
    group,
    version,
    controller: controller === "controller" ? "controller" : `${Kind[0]!.toLowerCase()}${Kind.slice(1)}Controller`
  }
  if (`${names.plural}.${group}`.length > 253) {
    throw new ScaffoldError(`the CRD name ${names.plural}.${group} is longer than 253 characters`)
  }
  return names
}
