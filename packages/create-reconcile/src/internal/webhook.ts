/**
 * `create-reconcile webhook --kind K [--defaulting] [--validation] [--conversion [--from V]]`: adds a kind's
 * admission and conversion webhooks to a project — `src/<kind>Webhooks.ts` (a defaulter, a validator, a second
 * version of the kind and its hub-and-spoke conversion), `test/<kind>Webhooks.test.ts` (`WebhookChecks`), and their
 * registration in `src/operator.ts` at the `create-reconcile webhook` markers of its `webhooks` (the conversion's
 * version also at the `create-reconcile api: resources` marker, and `storage: true` on the kind). The files are
 * generated here rather than copied from `templates/`: which handlers they hold depends on the flags.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { checkKind, checkVersion, ScaffoldError } from "./names.js"
import type { Written } from "./scaffold.js"
import { insertAt, markers } from "./scaffold.js"

/** The markers in `src/operator.ts` the webhooks are registered at. */
export const webhookMarkers = {
  admission: "// create-reconcile webhook: admission",
  conversion: "// create-reconcile webhook: conversion"
} as const

/** Which webhooks to write. */
export interface Handlers {
  readonly defaulting: boolean
  readonly validation: boolean
  /** With a conversion webhook: the other version the kind is served in (the spoke), e.g. `v1alpha1`. */
  readonly conversion: string | undefined
}

/** The names the generated webhook files use. */
export interface WebhookNames {
  /** `Greeting` */
  readonly Kind: string
  /** `greeting`: the module is `<kind>Webhooks`. */
  readonly kind: string
  /** The kind's version (the conversion's hub), `v1`. */
  readonly version: string
}

/** `v1alpha1` → `V1alpha1`. */
const capitalized = (version: string) => `${version[0]!.toUpperCase()}${version.slice(1)}`

/** The spoke's Resource: `GreetingV1alpha1`. */
export const spokeName = (names: WebhookNames, from: string): string => `${names.Kind}${capitalized(from)}`

/** The module of the kind's webhooks, without extension: `greetingWebhooks`. */
export const webhooksModule = (names: WebhookNames): string => `${names.kind}Webhooks`

const lines = (parts: ReadonlyArray<string | false>) => parts.filter((p): p is string => p !== false).join("\n")

/** The text of `src/<kind>Webhooks.ts`. */
export const webhooksSource = (names: WebhookNames, handlers: Handlers): string => {
  const { Kind, kind } = names
  const admission = handlers.defaulting || handlers.validation
  const spoke = handlers.conversion === undefined ? undefined : spokeName(names, handlers.conversion)
  const kindImports = [Kind, ...(spoke === undefined ? [] : [`${Kind}Spec`, `${Kind}Status`])]
  const kubeImports = [
    ...(admission ? ["Admission"] : []),
    ...(spoke === undefined ? [] : ["Conversion", "Resource"])
  ]
  const effectImports = [...(admission ? ["Effect"] : []), ...(spoke === undefined ? [] : ["Schema"])]
  const bullets = [
    handlers.defaulting &&
    ` * - **defaulting** (\`defaults\`, a mutating webhook, on create and update): \`spec.message\` loses its
 *   surrounding whitespace, and a blank one becomes \`"Hello"\` (kube-apiserver calls mutating webhooks first: the
 *   validation that follows sees the defaulted object);`,
    handlers.validation &&
    ` * - **validation** (\`checks\`, a validating webhook, on create and update): a blank \`spec.message\` is refused
 *   (422, naming the field) before it is stored, instead of the controller reporting it afterwards; a message in
 *   capitals is admitted with a warning (kubectl prints it as \`Warning: …\`);`,
    spoke !== undefined &&
    ` * - **conversion** (\`conversion\`): the ${Kind} is also served as \`${handlers.conversion}\` (\`${spoke}\`, whose spec
 *   says \`text\` where ${names.version} says \`message\`). Objects are stored as ${names.version}, the hub; kube-apiserver
 *   calls the webhook to read or write them as ${handlers.conversion}.`
  ]
  const header = lines([
    "/**",
    ` * The ${Kind}'s webhooks, which kube-apiserver calls before it stores a ${Kind} (Reconcile's docs/webhooks.md`,
    " * and docs/conversion.md):",
    " *",
    ...bullets,
    " *",
    admission &&
    " * Objects that do not decode are let through (`undecodable: \"allow\"`): the CRD's schema already refuses a spec of\n" +
      " * the wrong shape, so one exists only when the CRD changed under it, and the controller's own writes to it (its\n" +
      " * finalizer's removal) must not be held up.",
    admission && " *",
    " * `src/operator.ts` carries them (`Operator.make({ webhooks })`): `npm start` serves them and registers them with",
    " * the embedded cluster, `npm run manifests` writes their configurations, Service and certificate RBAC.",
    " */"
  ])

  const defaulter = handlers.defaulting && `
/** The mutating webhook: \`spec.message\` without its surrounding whitespace, \`"Hello"\` when blank. */
export const defaults = Admission.defaulter(
  ${Kind},
  (${kind}) => {
    const message = ${kind}.spec.message.trim() || "Hello"
    return Effect.succeed(
      message === ${kind}.spec.message ? ${kind} : { ...${kind}, spec: { ...${kind}.spec, message } }
    )
  },
  { undecodable: "allow" }
)
`
  const validator = handlers.validation && `
/**
 * The warnings and refusals of a ${Kind} being created, or updated from \`old\`. A blank message is refused only when
 * it is new: a ${Kind} stored with one before this webhook existed can still be updated (its finalizer removed) —
 * the ratcheting kube-apiserver applies to CRD validation.
 */
const admissible = (${kind}: ${Kind}, old?: ${Kind}): Effect.Effect<ReadonlyArray<string>, Admission.Denied> => {
  const message = ${kind}.spec.message
  if (message.trim() === "" && message !== old?.spec.message) {
    return Admission.invalid([{ field: "spec.message", message: "must not be blank" }])
  }
  const shouting = message === message.toUpperCase() && message !== message.toLowerCase()
  return Effect.succeed(shouting ? ["spec.message is all capitals: no need to shout"] : [])
}

/** The validating webhook, on create and update (a validator without \`delete\` is never called for a DELETE). */
export const checks = Admission.validator(${Kind}, {
  create: (${kind}) => admissible(${kind}),
  update: (old, ${kind}) => admissible(${kind}, old)
}, { undecodable: "allow" })
`
  const admissionList = admission && `
/** Every admission webhook of the ${Kind} (\`src/operator.ts\` lists them in \`webhooks.admission\`). */
export const admission = [${
    [...(handlers.defaulting ? ["defaults"] : []), ...(handlers.validation ? ["checks"] : [])].join(", ")
  }] as const
`
  const conversion = spoke !== undefined && `
/**
 * The ${Kind} as it was in ${handlers.conversion}: its spec said \`text\`. The same CRD serves it beside ${names.version}
 * (\`src/operator.ts\` lists it in \`resources\`); objects are stored as ${names.version}, the \`storage\` version.
 */
export const ${spoke} = Resource.custom({
  group: ${Kind}.group,
  version: "${handlers.conversion}",
  kind: ${Kind}.kind,
  plural: ${Kind}.plural,
  scope: ${Kind}.scope,
  spec: Schema.Struct({ text: ${Kind}Spec.fields.message }),
  status: ${Kind}Status
})

/** A ${spoke} object. */
export type ${spoke} = Resource.Type<typeof ${spoke}>

/**
 * The conversion webhook: ${names.version} is the hub, ${handlers.conversion} a spoke that converts to and from it (pure
 * functions of the spec and status; the metadata is kept). What a spoke cannot say is kept for it in an annotation,
 * so round trips are lossless: a field only ${names.version} has survives a ${handlers.conversion} client's read and write.
 */
export const conversion = Conversion.webhook({
  hub: ${Kind},
  spokes: [{
    resource: ${spoke},
    toHub: (old) => ({ spec: { message: old.spec.text }, status: old.status }),
    fromHub: (${kind}) => ({ spec: { text: ${kind}.spec.message }, status: ${kind}.status })
  }]
})
`
  const imports = [
    ...(kubeImports.length > 0 ? [`import { ${kubeImports.join(", ")} } from "@reconcile/kube"`] : []),
    `import { ${effectImports.join(", ")} } from "effect"`,
    `import { ${kindImports.join(", ")} } from "./${Kind}.js"`
  ].join("\n")
  const blocks = [`${header}\n${imports}`, defaulter, validator, admissionList, conversion]
  return `${blocks.flatMap((block) => typeof block === "string" ? [block.trim()] : []).join("\n\n")}\n`
}

/** The text of `test/<kind>Webhooks.test.ts`. */
export const webhooksTest = (names: WebhookNames, handlers: Handlers): string => {
  const { Kind } = names
  const module = webhooksModule(names)
  const spoke = handlers.conversion === undefined ? undefined : spokeName(names, handlers.conversion)
  const what = [
    handlers.defaulting && "defaulting is idempotent",
    handlers.defaulting && handlers.validation && "the validator admits every defaulted object",
    spoke !== undefined && `${names.version} and ${handlers.conversion} convert both ways and back`
  ].filter((w): w is string => w !== false)
  const effectImports = ["Effect", ...(spoke === undefined ? [] : ["Result"])]
  const body = [
    handlers.defaulting && `  const objects = WebhookChecks.objects(${Kind})`,
    handlers.defaulting && `
  it.effect("defaulting is idempotent: a defaulted ${Kind} is not patched again", () =>
    WebhookChecks.defaultingIsIdempotent(Webhooks.defaults, objects, { runs: 200 }))`,
    handlers.defaulting && handlers.validation && `
  it.effect("the validator admits every ${Kind} the defaulter makes of one it admits", () =>
    WebhookChecks.validatorAdmitsDefaulted(Webhooks.defaults, Webhooks.checks, objects, { runs: 200 }))`,
    handlers.defaulting && `
  it.effect("the defaulter trims spec.message, makes a blank one Hello, and leaves a trimmed one alone", () =>
    Effect.gen(function*() {
      const trimmed = yield* WebhookChecks.admit(Webhooks.defaults, { operation: "CREATE", object: make("  hi  ") })
      assert.isTrue(trimmed.allowed)
      assert.deepStrictEqual(trimmed.patch, [{ op: "replace", path: "/spec/message", value: "hi" }])
      const blank = yield* WebhookChecks.admit(Webhooks.defaults, { operation: "CREATE", object: make(" ") })
      assert.deepStrictEqual(blank.object, make("Hello"))
      const kept = yield* WebhookChecks.admit(Webhooks.defaults, { operation: "CREATE", object: make("hi") })
      assert.deepStrictEqual(kept.patch, [])
    }))`,
    handlers.validation && `
  it.effect("the validator refuses a new blank message (422 on spec.message) and warns about capitals", () =>
    Effect.gen(function*() {
      const blank = yield* WebhookChecks.admit(Webhooks.checks, { operation: "CREATE", object: make("   ") })
      assert.isFalse(blank.allowed)
      assert.strictEqual(blank.status?.code, 422)
      assert.deepStrictEqual(blank.status?.causes.map((c) => c.field), ["spec.message"])
      // stored blank before the webhook existed: its updates (a finalizer's removal) go through
      const kept = yield* WebhookChecks.admit(Webhooks.checks, {
        operation: "UPDATE",
        oldObject: make("   "),
        object: { ...make("   "), metadata: { name: "hello", namespace: "default", finalizers: [] } }
      })
      assert.isTrue(kept.allowed)
      const loud = yield* WebhookChecks.admit(Webhooks.checks, { operation: "CREATE", object: make("HELLO") })
      assert.isTrue(loud.allowed)
      assert.deepStrictEqual(loud.warnings, ["spec.message is all capitals: no need to shout"])
    }))`,
    spoke !== undefined && `
  it.effect("${names.version} and ${handlers.conversion} convert both ways and back (hub → spoke → hub, spoke → hub → spoke)", () =>
    WebhookChecks.conversionRoundTrips(Webhooks.conversion, { resources: [Webhooks.${spoke}] }))`,
    spoke !== undefined && `
  it.effect("a ${handlers.conversion} ${Kind}'s text is the ${names.version} message, and back", () =>
    Effect.gen(function*() {
      const old = { ...make("hi"), apiVersion: Webhooks.${spoke}.apiVersion, spec: { text: "hi" } }
      const hub = yield* Effect.fromResult(Webhooks.conversion.convert(old, ${Kind}.apiVersion))
      assert.deepStrictEqual(hub, make("hi"))
      const back = Webhooks.conversion.convert(hub, Webhooks.${spoke}.apiVersion)
      assert.deepStrictEqual(Result.getOrThrow(back), old)
    }))`
  ].filter((part): part is string => part !== false)
  const imports = [
    `import { assert, describe, it } from "@effect/vitest"`,
    `import { WebhookChecks } from "@reconcile/testkit"`,
    `import { ${effectImports.join(", ")} } from "effect"`,
    `import { ${Kind} } from "../src/${Kind}.js"`,
    `import * as Webhooks from "../src/${module}.js"`
  ].join("\n")
  const properties = what.length === 0
    ? "."
    : ", and properties over objects drawn\n * from the Schemas:\n *\n" + what.map((w) => ` * - ${w};`).join("\n")
  return `/**
 * The ${Kind}'s webhooks (\`src/${module}.ts\`) in process, called as kube-apiserver calls them
 * (\`WebhookChecks\` of @reconcile/testkit): one review of each handler${properties.replace(/;$/, ".")}
 */
${imports}

const make = (message: string) => ({
  apiVersion: ${Kind}.apiVersion,
  kind: ${Kind}.kind,
  metadata: { name: "hello", namespace: "default" },
  spec: { message }
})

describe("${Kind} webhooks", () => {
${body.join("\n").replace(/^\n/, "")}
})
`
}

/** Options of {@link addWebhooks}. */
export interface AddWebhooksOptions {
  /** The project's folder (default: the current directory). */
  readonly directory?: string | undefined
  readonly kind: string
  readonly defaulting?: boolean | undefined
  readonly validation?: boolean | undefined
  readonly conversion?: boolean | undefined
  /** The conversion's spoke version (default `v1alpha1`). */
  readonly from?: string | undefined
}

/** The kinds of a project: `src/<Kind>.ts` files that define a custom resource. */
const projectKinds = (src: string): Array<string> =>
  fs.readdirSync(src)
    .filter((f) =>
      /^[A-Z][A-Za-z0-9]*\.ts$/.test(f) && fs.readFileSync(path.join(src, f), "utf8").includes("Resource.custom(")
    )
    .map((f) => f.slice(0, -3))
    .sort()

/**
 * Adds a kind's webhooks to a project (kubebuilder's `create webhook`): see the module documentation. Nothing is
 * written when a check fails: no project, an unknown kind, no webhook asked for, files that exist, a marker missing.
 */
export const addWebhooks = (options: AddWebhooksOptions): Written => {
  const root = path.resolve(options.directory ?? ".")
  const src = path.join(root, "src")
  const operatorFile = path.join(src, "operator.ts")
  if (!fs.existsSync(operatorFile)) {
    throw new ScaffoldError(`${root} has no src/operator.ts: run create-reconcile webhook in a project it created`)
  }
  const Kind = checkKind(options.kind)
  const kindFile = path.join(src, `${Kind}.ts`)
  if (!fs.existsSync(kindFile)) {
    const kinds = projectKinds(src)
    throw new ScaffoldError(
      `unknown kind ${Kind}: no src/${Kind}.ts (the project's kinds: ${kinds.length > 0 ? kinds.join(", ") : "none"})`
    )
  }
  if (options.from !== undefined && options.conversion !== true) {
    throw new ScaffoldError("--from is the version a conversion webhook converts: give --conversion too")
  }
  const handlers: Handlers = {
    defaulting: options.defaulting === true,
    validation: options.validation === true,
    conversion: options.conversion === true ? checkVersion(options.from ?? "v1alpha1") : undefined
  }
  if (!handlers.defaulting && !handlers.validation && handlers.conversion === undefined) {
    throw new ScaffoldError("which webhooks? give --defaulting, --validation and/or --conversion")
  }
  let kindSource = fs.readFileSync(kindFile, "utf8")
  const versions = [...kindSource.matchAll(/^([ \t]*)version: "([^"]+)",?$/gm)]
  if (versions.length !== 1) {
    throw new ScaffoldError(`src/${Kind}.ts: cannot tell the kind's version (one \`version: "…"\` line expected)`)
  }
  const names: WebhookNames = { Kind, kind: `${Kind[0]!.toLowerCase()}${Kind.slice(1)}`, version: versions[0]![2]! }
  if (handlers.conversion === names.version) {
    throw new ScaffoldError(
      `--from ${handlers.conversion} is ${Kind}'s own version: name the other version it is served in (e.g. v1alpha1)`
    )
  }
  const module = webhooksModule(names)
  const files = new Map<string, string>([
    [`src/${module}.ts`, webhooksSource(names, handlers)],
    [`test/${module}.test.ts`, webhooksTest(names, handlers)]
  ])
  const taken = [...files.keys()].filter((file) => fs.existsSync(path.join(root, file)))
  if (taken.length > 0) throw new ScaffoldError(`${Kind}'s webhooks exist already: ${taken.join(", ")}`)

  const namespace = `${Kind}Webhooks`
  const spoke = handlers.conversion === undefined ? undefined : spokeName(names, handlers.conversion)
  const admission = handlers.defaulting || handlers.validation
  let operator: string | undefined = fs.readFileSync(operatorFile, "utf8")
  operator = insertAt(operator, markers.imports, [`import * as ${namespace} from "./${module}.js"`])
  if (admission) operator = operator && insertAt(operator, webhookMarkers.admission, [`...${namespace}.admission,`])
  if (spoke !== undefined) {
    operator = operator && insertAt(operator, markers.resources, [`${namespace}.${spoke},`])
    operator = operator && insertAt(operator, webhookMarkers.conversion, [`${namespace}.conversion,`])
  }
  if (operator === undefined) {
    const wanted = [
      markers.imports,
      ...(admission ? [webhookMarkers.admission] : []),
      ...(spoke !== undefined ? [markers.resources, webhookMarkers.conversion] : [])
    ]
    throw new ScaffoldError(
      `src/operator.ts lacks a marker comment (${wanted.join(", ")}): restore them, or give Operator.make ` +
        `webhooks: { ${
          [
            ...(admission ? [`admission: [...${namespace}.admission]`] : []),
            ...(spoke !== undefined ? [`conversion: [${namespace}.conversion]`] : [])
          ].join(", ")
        } }${spoke !== undefined ? ` and ${namespace}.${spoke} in resources` : ""} yourself`
    )
  }
  files.set("src/operator.ts", operator)

  // the CRD of two versions stores one: the hub
  if (spoke !== undefined && !/^\s*storage: true,?$/m.test(kindSource)) {
    const [line, indent] = versions[0]!
    kindSource = kindSource.replace(
      line,
      `${line.replace(/,?$/, ",")}\n${indent}storage: true, // ${spoke} is converted to it`
    )
    files.set(`src/${Kind}.ts`, kindSource)
  }

  for (const [file, content] of files) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), content)
  }
  return { root, files: [...files.keys()].sort(), notes: [] }
}
