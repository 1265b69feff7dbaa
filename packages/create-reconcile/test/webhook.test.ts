/**
 * `create-reconcile webhook`: the files it writes for each set of flags, its registration in `src/operator.ts`, and
 * its refusals (exit 2, one line, nothing written). No install, no compiler: `generatedTypecheck.test.ts`,
 * `generatedManifests.test.ts` and `generatedTests.test.ts` typecheck, generate and run what it writes.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { main } from "../src/internal/cli.js"
import { addKind, init, markers } from "../src/internal/scaffold.js"
import { addWebhooks, webhookMarkers } from "../src/internal/webhook.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})
const project = (options: { readonly kind?: string; readonly version?: string } = {}) => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "create-reconcile-webhook-"))
  dirs.push(parent)
  const dir = path.join(parent, "demo")
  init({ directory: dir, ...options })
  return dir
}
const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), "utf8")
/** Every file under `dir` with its content. */
const snapshot = (dir: string): Record<string, string> =>
  Object.fromEntries(
    (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<fs.Dirent>)
      .filter((e) => e.isFile())
      .map((e) => {
        const file = path.join(e.parentPath, e.name)
        return [path.relative(dir, file), fs.readFileSync(file, "utf8")]
      })
  )
const cli = (argv: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const code = main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

describe("a new project", () => {
  it("has empty webhook lists in src/operator.ts, with their markers", () => {
    const operator = read(project(), "src/operator.ts")
    assert.include(operator, `  webhooks: {\n    admission: [\n      ${webhookMarkers.admission}\n    ],`)
    assert.include(operator, `    conversion: [\n      ${webhookMarkers.conversion}\n    ]\n  }\n})`)
  })
})

describe("create-reconcile webhook", () => {
  it("--defaulting --validation --conversion: the handlers, a second version, their test, registered", () => {
    const dir = project()
    const before = read(dir, "src/Greeting.ts")
    const result = cli(["webhook", "--kind", "Greeting", "--defaulting", "--validation", "--conversion", "--dir", dir])
    assert.strictEqual(result.code, 0, result.err)
    for (
      const file of ["src/Greeting.ts", "src/greetingWebhooks.ts", "src/operator.ts", "test/greetingWebhooks.test.ts"]
    ) {
      assert.include(result.out, `  ${file}`)
    }
    const source = read(dir, "src/greetingWebhooks.ts")
    assert.include(source, "export const defaults = Admission.defaulter(\n  Greeting,")
    assert.include(source, "export const checks = Admission.validator(Greeting, {")
    assert.include(source, "export const admission = [defaults, checks] as const")
    assert.include(source, `export const GreetingV1alpha1 = Resource.custom({`)
    assert.include(source, `  version: "v1alpha1",`)
    assert.include(source, "export const conversion = Conversion.webhook({\n  hub: Greeting,")
    assert.include(source, `import { Greeting, GreetingSpec, GreetingStatus } from "./Greeting.js"`)

    const test = read(dir, "test/greetingWebhooks.test.ts")
    assert.include(test, "WebhookChecks.defaultingIsIdempotent(Webhooks.defaults, objects")
    assert.include(test, "WebhookChecks.validatorAdmitsDefaulted(Webhooks.defaults, Webhooks.checks, objects")
    assert.include(
      test,
      "WebhookChecks.conversionRoundTrips(Webhooks.conversion, { resources: [Webhooks.GreetingV1alpha1] })"
    )
    assert.include(test, "WebhookChecks.admit(Webhooks.defaults, {")
    assert.include(test, "WebhookChecks.admit(Webhooks.checks, {")
    assert.include(test, `import * as Webhooks from "../src/greetingWebhooks.js"`)

    const operator = read(dir, "src/operator.ts")
    assert.include(operator, `import * as GreetingWebhooks from "./greetingWebhooks.js"\n${markers.imports}`)
    assert.include(operator, `    Greeting,\n    GreetingWebhooks.GreetingV1alpha1,\n    ${markers.resources}`)
    assert.include(operator, `      ...GreetingWebhooks.admission,\n      ${webhookMarkers.admission}`)
    assert.include(operator, `      GreetingWebhooks.conversion,\n      ${webhookMarkers.conversion}`)
    // the hub is the CRD's storage version; nothing else in the kind changes
    assert.strictEqual(
      read(dir, "src/Greeting.ts"),
      before.replace(
        `  version: "v1",\n`,
        `  version: "v1",\n  storage: true, // GreetingV1alpha1 is converted to it\n`
      )
    )
    for (const file of ["src/greetingWebhooks.ts", "test/greetingWebhooks.test.ts"]) {
      for (const line of read(dir, file).split("\n")) assert.isAtMost(line.length, 120, `${file}: ${line}`)
    }
  })

  it("--validation alone: a validator and its admit cases; no defaulter, no conversion, the kind untouched", () => {
    const dir = project()
    const kind = read(dir, "src/Greeting.ts")
    const written = addWebhooks({ directory: dir, kind: "Greeting", validation: true })
    assert.deepStrictEqual(written.files, [
      "src/greetingWebhooks.ts",
      "src/operator.ts",
      "test/greetingWebhooks.test.ts"
    ])
    const source = read(dir, "src/greetingWebhooks.ts")
    assert.include(source, "export const admission = [checks] as const")
    assert.notInclude(source, "defaulter")
    assert.notInclude(source, "Conversion")
    assert.include(source, `import { Admission } from "@reconcile/kube"\nimport { Effect } from "effect"`)
    const test = read(dir, "test/greetingWebhooks.test.ts")
    assert.include(test, "WebhookChecks.admit(Webhooks.checks")
    assert.notInclude(test, "defaultingIsIdempotent")
    assert.notInclude(test, "conversionRoundTrips")
    assert.strictEqual(read(dir, "src/Greeting.ts"), kind)
    const operator = read(dir, "src/operator.ts")
    assert.include(operator, `      ...GreetingWebhooks.admission,\n      ${webhookMarkers.admission}`)
    assert.include(operator, `    conversion: [\n      ${webhookMarkers.conversion}`)
  })

  it("--conversion --from v1beta1 of a kind added by create-reconcile api: no admission webhooks", () => {
    const dir = project({ version: "v2" })
    addKind({ directory: dir, kind: "Widget" })
    const result = cli(["webhook", "--kind", "Widget", "--conversion", "--from", "v1beta1", "--dir", dir])
    assert.strictEqual(result.code, 0, result.err)
    const source = read(dir, "src/widgetWebhooks.ts")
    assert.include(source, `export const WidgetV1beta1 = Resource.custom({`)
    assert.notInclude(source, "Admission")
    assert.notInclude(source, "export const admission")
    assert.include(read(dir, "src/Widget.ts"), `  version: "v1",\n  storage: true,`)
    const operator = read(dir, "src/operator.ts")
    assert.include(operator, `    WidgetWebhooks.WidgetV1beta1,\n    ${markers.resources}`)
    assert.include(operator, `      WidgetWebhooks.conversion,\n      ${webhookMarkers.conversion}`)
    assert.include(operator, `    admission: [\n      ${webhookMarkers.admission}`)
    // a second kind's webhooks go after the first's
    assert.strictEqual(cli(["webhook", "--kind", "Greeting", "--defaulting", "--dir", dir]).code, 0)
    assert.include(
      read(dir, "src/operator.ts"),
      `      ...GreetingWebhooks.admission,\n      ${webhookMarkers.admission}`
    )
  })

  it("refuses, in one line with exit 2 and writing nothing: no project, unknown kind, no handler, files that exist", () => {
    const dir = project()
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "create-reconcile-webhook-"))
    dirs.push(empty)
    assert.strictEqual(cli(["webhook", "--kind", "Greeting", "--validation", "--dir", dir]).code, 0)
    const before = snapshot(dir)
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["--kind", "Greeting", "--validation", "--dir", empty], "has no src/operator.ts: run create-reconcile webhook"],
      [
        ["--kind", "Gadget", "--defaulting", "--dir", dir],
        "unknown kind Gadget: no src/Gadget.ts (the project's kinds: Greeting)"
      ],
      [["--kind", "gadget", "--defaulting", "--dir", dir], "invalid kind \"gadget\""],
      [["--kind", "Greeting", "--dir", dir], "which webhooks? give --defaulting, --validation and/or --conversion"],
      [
        ["--kind", "Greeting", "--defaulting", "--dir", dir],
        "Greeting's webhooks exist already: src/greetingWebhooks.ts"
      ],
      [["--kind", "Greeting", "--conversion", "--from", "v1", "--dir", dir], "--from v1 is Greeting's own version"],
      [["--kind", "Greeting", "--defaulting", "--from", "v1beta1", "--dir", dir], "give --conversion too"],
      [["--kind", "Greeting", "--conversion", "--from", "beta", "--dir", dir], "invalid version \"beta\""]
    ]
    for (const [argv, message] of cases) {
      const result = cli(["webhook", ...argv])
      assert.strictEqual(result.code, 2, argv.join(" "))
      assert.strictEqual(result.err, `error: ${result.err.slice(7)}`)
      assert.notInclude(result.err, "\n", "one line")
      assert.include(result.err, message)
    }
    assert.deepStrictEqual(snapshot(dir), before)
    assert.deepStrictEqual(fs.readdirSync(empty), [])
  })

  it("refuses a src/operator.ts without its markers, saying what to register by hand", () => {
    const dir = project()
    const operator = read(dir, "src/operator.ts").replace(webhookMarkers.admission, "// mine")
    fs.writeFileSync(path.join(dir, "src/operator.ts"), operator)
    const result = cli(["webhook", "--kind", "Greeting", "--defaulting", "--dir", dir])
    assert.strictEqual(result.code, 2)
    assert.include(result.err, `lacks a marker comment (${markers.imports}, ${webhookMarkers.admission})`)
    assert.include(result.err, "webhooks: { admission: [...GreetingWebhooks.admission] }")
    assert.strictEqual(read(dir, "src/operator.ts"), operator)
    assert.isFalse(fs.existsSync(path.join(dir, "src/greetingWebhooks.ts")))
  })

  it("usage: --help documents it; its options belong to it; --kind is required", () => {
    const help = cli(["--help"]).out
    assert.include(help, "create-reconcile webhook --kind K [--defaulting] [--validation] [--conversion [--from V]]")
    assert.include(help, "--defaulting")
    assert.include(cli(["webhook", "--defaulting"]).err, "create-reconcile webhook needs --kind")
    assert.include(
      cli(["api", "--kind", "Widget", "--validation"]).err,
      "--validation is an option of create-reconcile webhook"
    )
    assert.include(cli(["x", "--conversion"]).err, "--conversion is an option of create-reconcile webhook")
    assert.include(
      cli(["webhook", "--kind", "A", "--group", "a.b"]).err,
      "--group is an option of create-reconcile api"
    )
    assert.include(cli(["webhook", "--kind", "A", "--defaulting=yes"]).err, "--defaulting takes no value")
    assert.include(cli(["webhook", "--kind", "A", "--defaulting", "--defaulting"]).err, "--defaulting is given twice")
  })
})
