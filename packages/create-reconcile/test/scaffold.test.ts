/**
 * The scaffold's files, names and checks, and `create-reconcile api`'s registration (no install, no compiler:
 * `generated*.test.ts` typecheck and run what it writes).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { main } from "../src/internal/cli.js"
import { checkGroup, checkKind, checkProjectName, checkVersion, kindNames, plural } from "../src/internal/names.js"
import { addKind, init, markers, ownVersion, templatesDir } from "../src/internal/scaffold.js"
import * as versions from "../src/internal/versions.js"
import { root } from "./support/project.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})
const fresh = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "create-reconcile-test-"))
  dirs.push(dir)
  return dir
}
const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), "utf8")
/** Every file under `dir`, relative, sorted. */
const tree = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? tree(path.join(dir, entry.name)).map((f) => `${entry.name}/${f}`)
      : [entry.name]
  ).sort()
/** `main` with its output captured. */
const cli = (argv: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const code = main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

const projectFiles = [
  ".dockerignore",
  ".gitignore",
  "Dockerfile",
  "README.md",
  "package.json",
  "src/Greeting.ts",
  "src/controller.ts",
  "src/main.ts",
  "src/operator.ts",
  "test/controller.real.test.ts",
  "test/controller.test.ts",
  "test/property.test.ts",
  "tsconfig.build.json",
  "tsconfig.json",
  "vitest.config.ts"
]

describe("create-reconcile <directory>", () => {
  it("writes the project's files, with every token replaced", () => {
    const dir = path.join(fresh(), "my-operator")
    const written = init({ directory: dir })
    assert.deepStrictEqual(written.files, projectFiles)
    assert.deepStrictEqual(tree(dir), projectFiles)
    for (const file of projectFiles) {
      assert.notMatch(read(dir, file), /__(name|Kind|kind|lower|plural|group|version|controller)__/, file)
    }
    assert.include(read(dir, "src/operator.ts"), `name: "my-operator"`)
    assert.include(read(dir, "src/Greeting.ts"), `group: "example.com"`)
    assert.include(read(dir, "src/Greeting.ts"), `plural: "greetings"`)
    assert.include(read(dir, "src/main.ts"), "Main.run(operator")
    for (const marker of Object.values(markers)) {
      const where = marker === markers.samples ? "src/main.ts" : "src/operator.ts"
      assert.include(read(dir, where), marker, where)
    }
  })

  it("names the kind, group and version it is given", () => {
    const dir = path.join(fresh(), "shop")
    init({ directory: dir, kind: "Policy", group: "policy.acme.io", version: "v1beta1" })
    assert.isTrue(fs.existsSync(path.join(dir, "src/Policy.ts")))
    const kind = read(dir, "src/Policy.ts")
    assert.include(kind, `kind: "Policy"`)
    assert.include(kind, `plural: "policies"`)
    assert.include(kind, `version: "v1beta1"`)
    assert.include(read(dir, "src/controller.ts"), `"policy.acme.io/policy-cleanup"`)
    assert.include(read(dir, "README.md"), "`Policy` (`policy.acme.io/v1beta1`)")
  })

  it("package.json: our packages at ^ this version, effect as peers want it, Node 24 for the scripts", () => {
    const dir = path.join(fresh(), "demo")
    init({ directory: dir })
    const pkg = JSON.parse(read(dir, "package.json"))
    const range = `^${ownVersion()}`
    assert.deepStrictEqual(pkg.dependencies, {
      "@effect/platform-node": "^4.1.0",
      "@reconcile/cli": range,
      "@reconcile/core": range,
      "@reconcile/kube": range,
      "@reconcile/workqueue": range,
      effect: "^4.1.0"
    })
    assert.strictEqual(pkg.devDependencies["@reconcile/testkit"], range)
    assert.strictEqual(pkg.devDependencies["create-reconcile"], range)
    assert.strictEqual(pkg.devDependencies.node, "24.21.0")
    for (const name of ["vitest", "@effect/vitest", "typescript", "tsx", "@types/node"]) {
      assert.isDefined(pkg.devDependencies[name], name)
    }
    assert.deepStrictEqual(pkg.scripts, {
      start: "tsx src/main.ts",
      test: "tsc -p tsconfig.json && vitest run",
      "test:envtest": "reconcile-envtest setup && RECONCILE_TEST_CLUSTER=real vitest run",
      manifests: "reconcile manifests --entry src/operator.ts --out config",
      build: "tsc -p tsconfig.build.json"
    })
    assert.strictEqual(pkg.name, "demo")
    assert.strictEqual(pkg.type, "module")
    assert.isTrue(pkg.private)
  })

  it("--local-packages: file: references to the tarballs in the folder; a missing tarball is an error", () => {
    const tarballs = fresh()
    const names = ["reconcile-workqueue", "reconcile-core", "reconcile-kube", "reconcile-cli", "reconcile-testkit"]
    for (const name of [...names, "create-reconcile"]) fs.writeFileSync(path.join(tarballs, `${name}-0.1.0.tgz`), "")
    const dir = path.join(fresh(), "demo")
    init({ directory: dir, localPackages: tarballs })
    const pkg = JSON.parse(read(dir, "package.json"))
    assert.strictEqual(pkg.dependencies["@reconcile/core"], `file:${path.join(tarballs, "reconcile-core-0.1.0.tgz")}`)
    assert.strictEqual(
      pkg.devDependencies["@reconcile/testkit"],
      `file:${path.join(tarballs, "reconcile-testkit-0.1.0.tgz")}`
    )
    assert.strictEqual(pkg.dependencies.effect, "^4.1.0")
    fs.rmSync(path.join(tarballs, "reconcile-cli-0.1.0.tgz"))
    const failed = cli([path.join(fresh(), "other"), "--local-packages", tarballs])
    assert.strictEqual(failed.code, 2)
    assert.include(failed.err, "no tarball of @reconcile/cli")
  })

  it("refuses a non-empty directory and writes nothing into it; a folder with only .git is fine", () => {
    const dir = path.join(fresh(), "taken")
    fs.mkdirSync(dir)
    fs.writeFileSync(path.join(dir, "notes.txt"), "mine")
    const result = cli([dir])
    assert.strictEqual(result.code, 2)
    assert.include(result.err, "is not empty (notes.txt)")
    assert.deepStrictEqual(tree(dir), ["notes.txt"])
    const repo = path.join(fresh(), "with-git")
    fs.mkdirSync(path.join(repo, ".git"), { recursive: true })
    assert.strictEqual(cli([repo]).code, 0)
  })

  it("invalid names fail with exit 2, say what is wrong and write nothing", () => {
    const parent = fresh()
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [[path.join(parent, "My_Operator")], "invalid project name \"My_Operator\": use lowercase letters"],
      [[path.join(parent, "-op")], "invalid project name"],
      [[path.join(parent, "x".repeat(57))], "at most 56"],
      [[path.join(parent, "ok"), "--kind", "greeting"], "invalid kind \"greeting\": a kind is PascalCase"],
      [[path.join(parent, "ok"), "--kind", "Effect"], "the generated code uses that name itself"],
      [[path.join(parent, "ok"), "--group", "example"], "invalid group \"example\": a group is a DNS name"],
      [[path.join(parent, "ok"), "--group", "apps.k8s.io"], "reserved for Kubernetes"],
      [[path.join(parent, "ok"), "--version", "1"], "invalid version \"1\""]
    ]
    for (const [argv, message] of cases) {
      const result = cli(argv)
      assert.strictEqual(result.code, 2, argv.join(" "))
      assert.include(result.err, message)
    }
    assert.deepStrictEqual(fs.readdirSync(parent), [])
  })

  it("usage errors exit 2; --help exits 0", () => {
    assert.strictEqual(cli(["--help"]).code, 0)
    assert.include(cli(["--help"]).out, "create-reconcile api --kind K")
    assert.include(cli([]).err, "which directory?")
    assert.strictEqual(cli([]).code, 2)
    assert.include(cli(["x", "--replicas", "3"]).err, "unknown option --replicas")
    assert.include(cli(["x", "--kind"]).err, "--kind needs a value")
    assert.include(cli(["x", "y"]).err, "one directory only")
    assert.include(cli(["api"]).err, "needs --kind")
  })
})

describe("create-reconcile api", () => {
  const project = () => {
    const dir = path.join(fresh(), "demo")
    init({ directory: dir, group: "acme.io" })
    return dir
  }

  it("writes the kind, its controller and test, and registers them at the markers", () => {
    const dir = project()
    const result = cli(["api", "--kind", "Widget", "--dir", dir])
    assert.strictEqual(result.code, 0, result.err)
    assert.deepStrictEqual(
      tree(dir),
      [
        ...projectFiles.slice(0, 5),
        "src/Greeting.ts",
        "src/Widget.ts",
        "src/controller.ts",
        "src/main.ts",
        "src/operator.ts",
        "src/widgetController.ts",
        "test/controller.real.test.ts",
        "test/controller.test.ts",
        "test/property.test.ts",
        "test/widgetController.real.test.ts",
        "test/widgetController.test.ts",
        ...projectFiles.slice(12)
      ].sort()
    )
    const operator = read(dir, "src/operator.ts")
    assert.include(
      operator,
      `import { Widget } from "./Widget.js"\nimport * as WidgetController from "./widgetController.js"\n${markers.imports}`
    )
    assert.include(operator, `    Greeting,\n    Widget,\n    ${markers.resources}`)
    assert.include(
      operator,
      `    GreetingController.controller,\n    WidgetController.controller,\n    ${markers.controllers}`
    )
    assert.include(operator, `    GreetingController.layer,\n    WidgetController.layer,\n    ${markers.layers}`)
    const mainFile = read(dir, "src/main.ts")
    assert.include(mainFile, `import { widgetSample } from "./Widget.js"\n${markers.imports}`)
    assert.include(mainFile, `    widgetSample(namespace),\n    ${markers.samples}`)
    const widget = read(dir, "src/Widget.ts")
    assert.include(widget, `group: "acme.io"`, "the project's group by default")
    assert.include(widget, `kind: "Widget"`)
    assert.include(read(dir, "src/widgetController.ts"), `import { Widget } from "./Widget.js"`)
    assert.include(read(dir, "test/widgetController.test.ts"), `from "../src/widgetController.js"`)
    // a second kind goes after the first
    assert.strictEqual(cli(["api", "--kind", "Gadget", "--group", "gadgets.acme.io", "--dir", dir]).code, 0)
    assert.include(read(dir, "src/operator.ts"), `    Widget,\n    Gadget,\n    ${markers.resources}`)
    assert.include(read(dir, "src/Gadget.ts"), `group: "gadgets.acme.io"`)
    // two groups now: which one a third kind goes to must be said
    const ambiguous = cli(["api", "--kind", "Gizmo", "--dir", dir])
    assert.strictEqual(ambiguous.code, 2)
    assert.include(ambiguous.err, "do not share one group: say which with --group")
  })

  it("refuses a kind that exists, and a project without markers, writing nothing", () => {
    const dir = project()
    assert.strictEqual(cli(["api", "--kind", "Widget", "--dir", dir]).code, 0)
    const before = read(dir, "src/operator.ts")
    const again = cli(["api", "--kind", "Widget", "--dir", dir])
    assert.strictEqual(again.code, 2)
    assert.include(again.err, "Widget exists already: src/Widget.ts")
    assert.strictEqual(read(dir, "src/operator.ts"), before)

    fs.writeFileSync(path.join(dir, "src/operator.ts"), before.replace(markers.controllers, "// mine"))
    const unmarked = cli(["api", "--kind", "Gadget", "--dir", dir])
    assert.strictEqual(unmarked.code, 2)
    assert.include(unmarked.err, "lacks a marker comment")
    assert.isFalse(fs.existsSync(path.join(dir, "src/Gadget.ts")))

    const empty = fresh()
    assert.include(cli(["api", "--kind", "Gadget", "--dir", empty]).err, "has no src/operator.ts")
  })

  it("a main.ts without markers is left alone, with a note", () => {
    const dir = project()
    fs.writeFileSync(path.join(dir, "src/main.ts"), "// my own main\n")
    const written = addKind({ directory: dir, kind: "Widget" })
    assert.deepStrictEqual(written.notes, [
      "src/main.ts has no create-reconcile api markers: add widgetSample to its samples"
    ])
    assert.strictEqual(read(dir, "src/main.ts"), "// my own main\n")
  })
})

describe("names", () => {
  it("plural", () => {
    assert.deepStrictEqual(
      ["Greeting", "Policy", "Gateway", "Box", "Class", "Patch", "Mesh", "Quiz", "WebApp"].map(plural),
      ["greetings", "policies", "gateways", "boxes", "classes", "patches", "meshes", "quizes", "webapps"]
    )
  })

  it("the checks accept what Kubernetes accepts", () => {
    assert.strictEqual(checkProjectName("a"), "a")
    assert.strictEqual(checkProjectName("my-operator-2"), "my-operator-2")
    assert.strictEqual(checkKind("WebApp2"), "WebApp2")
    assert.strictEqual(checkGroup("apps.my-company.io"), "apps.my-company.io")
    for (const v of ["v1", "v2", "v1beta1", "v3alpha12"]) assert.strictEqual(checkVersion(v), v)
    for (const v of ["v0", "v1beta", "V1", "v1gamma1"]) assert.throws(() => checkVersion(v))
  })

  // Every name a valid kind and group derive must be valid where Kubernetes uses it.
  const Kind = Schema.String.check(Schema.isPattern(/^[A-Z][A-Za-z0-9]{0,54}$/))
  const Label = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9]{0,14}$/))
  it.prop(
    "a valid kind gives a DNS-label plural, a CRD name, a finalizer name and a controller module that are valid",
    [Kind, Label, Label],
    ([kind, a, b]) => {
      const names = (() => {
        try {
          return kindNames({ kind, group: `${a}.${b}`, version: "v1" }, "perKind")
        } catch {
          return undefined // a reserved name
        }
      })()
      if (names === undefined) return
      assert.match(names.plural, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
      assert.isAtMost(names.plural.length, 63)
      assert.isAtMost(`${names.lower}-cleanup`.length, 63)
      assert.match(names.controller, /^[a-z][A-Za-z0-9]*Controller$/)
      assert.notStrictEqual(names.controller, "controller")
    }
  )
})

describe("the package", () => {
  it("the scaffold's development versions follow the repository's", () => {
    const rootDev = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).devDependencies
    for (const [name, range] of Object.entries(versions.devDependencies)) {
      assert.strictEqual(range.replace(/^\^/, ""), rootDev[name], name)
    }
    for (const [name, range] of Object.entries(versions.dependencies)) {
      assert.strictEqual(range, `^${rootDev[name]!.replace(/\.\d+$/, ".0")}`, name)
    }
  })

  it("packs its templates (never a dotfile npm would drop) and a bin with a shebang", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(templatesDir, "..", "package.json"), "utf8"))
    assert.include(pkg.files, "templates/**")
    assert.deepStrictEqual(pkg.bin, { "create-reconcile": "dist/bin.js" })
    const all = (dir: string): Array<string> =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? all(path.join(dir, e.name)) : [e.name]
      )
    assert.deepStrictEqual(all(templatesDir).filter((f) => f.startsWith(".")), [])
    assert.match(fs.readFileSync(path.join(templatesDir, "..", "src/bin.ts"), "utf8"), /^#!\/usr\/bin\/env node\n/)
  })
})
