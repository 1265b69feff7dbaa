/**
 * The bin runs on the Node `npm create` runs on (the package says `engines.node >= 18`): compiled as `npm run build`
 * compiles it, with only `node:` and relative imports (no dependencies), it writes a project under the machine's
 * own Node (this machine's /usr/bin/node is older than the Node 24 the repository runs on).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { cleanEnv, root, tempDir } from "./support/project.js"

const tmp = tempDir("bin")
afterAll(tmp.remove)

const pkg = path.join(root, "packages/create-reconcile")
const sources = ["bin.ts", ...fs.readdirSync(path.join(pkg, "src/internal")).map((f) => `internal/${f}`)]

/** The package as npm would install it: dist/ (transpiled from src/), templates/ and package.json. */
const install = () => {
  const dir = path.join(tmp.dir, "create-reconcile")
  for (const file of sources) {
    const source = fs.readFileSync(path.join(pkg, "src", file), "utf8")
    const output = ts.transpileModule(source, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext }
    }).outputText
    fs.mkdirSync(path.dirname(path.join(dir, "dist", file)), { recursive: true })
    fs.writeFileSync(path.join(dir, "dist", file.replace(/\.ts$/, ".js")), output)
  }
  fs.cpSync(path.join(pkg, "templates"), path.join(dir, "templates"), { recursive: true })
  fs.copyFileSync(path.join(pkg, "package.json"), path.join(dir, "package.json"))
  return dir
}

describe("the bin", () => {
  it("imports only node: built-ins and its own modules", () => {
    for (const file of sources) {
      const text = fs.readFileSync(path.join(pkg, "src", file), "utf8")
      for (const [, specifier] of text.matchAll(/^import\b[^"]*"([^"]+)"/gm)) {
        assert.match(specifier!, /^(node:|\.\.?\/)/, `${file} imports ${specifier}`)
      }
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8"))
    assert.isUndefined(manifest.dependencies)
    assert.strictEqual(manifest.engines.node, ">=18")
  })

  const system = ["/usr/bin/node", "/usr/local/bin/node"].find((file) => fs.existsSync(file))
  it.skipIf(system === undefined)(`writes a project, and webhooks in it, on the machine's own Node (${system})`, () => {
    const dir = install()
    const version = spawnSync(system!, ["--version"], { encoding: "utf8" }).stdout.trim()
    const result = spawnSync(system!, [path.join(dir, "dist/bin.js"), path.join(tmp.dir, "old-node")], {
      encoding: "utf8",
      env: cleanEnv()
    })
    assert.strictEqual(result.status, 0, `node ${version}: ${result.stdout}${result.stderr}`)
    assert.isTrue(fs.existsSync(path.join(tmp.dir, "old-node/src/operator.ts")))
    assert.strictEqual(
      JSON.parse(fs.readFileSync(path.join(tmp.dir, "old-node/package.json"), "utf8")).name,
      "old-node"
    )
    const webhook = spawnSync(
      system!,
      [path.join(dir, "dist/bin.js"), "webhook", "--kind", "Greeting", "--defaulting", "--validation", "--conversion"],
      { encoding: "utf8", env: cleanEnv(), cwd: path.join(tmp.dir, "old-node") }
    )
    assert.strictEqual(webhook.status, 0, `node ${version}: ${webhook.stdout}${webhook.stderr}`)
    assert.isTrue(fs.existsSync(path.join(tmp.dir, "old-node/src/greetingWebhooks.ts")))
  })
})
