/**
 * A scaffolded project inside the repository (under `packages/create-reconcile/.tmp/`, so that it resolves the
 * repository's node_modules: effect, vitest, tsx, …) whose `@reconcile/*` imports resolve to the workspace sources,
 * as the repository's own tests do: `tsconfig.repo.json` extends the project's tsconfig.json with the `paths` of
 * tsconfig.base.json, and `vitest.repo.config.ts` uses vitest.shared.ts's `sourceAliases`.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** Where the tests generate projects (git-ignored). */
export const tmpRoot = path.join(root, "packages/create-reconcile/.tmp")

/** A fresh, empty folder for one test's projects; removed by the returned `remove`. */
export const tempDir = (prefix: string) => {
  fs.mkdirSync(tmpRoot, { recursive: true })
  const dir = fs.mkdtempSync(path.join(tmpRoot, `${prefix}-`))
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

const packages = ["workqueue", "core", "kube", "testkit", "cli"]

/** Adds `tsconfig.repo.json` and `vitest.repo.config.ts` to a generated project (see the module documentation). */
export const linkToSources = (project: string) => {
  const paths = Object.fromEntries(packages.flatMap((name) => [
    [`@reconcile/${name}`, [path.join(root, "packages", name, "src/index.ts")]],
    [`@reconcile/${name}/*`, [path.join(root, "packages", name, "src/*.ts")]]
  ]))
  fs.writeFileSync(
    path.join(project, "tsconfig.repo.json"),
    JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { paths } }, null, 2)
  )
  fs.writeFileSync(
    path.join(project, "vitest.repo.config.ts"),
    [
      `import { defineConfig } from "vitest/config"`,
      `import { sourceAliases } from ${JSON.stringify(path.join(root, "vitest.shared.ts"))}`,
      ``,
      `export default defineConfig({ resolve: { alias: sourceAliases }, test: { include: ["test/**/*.test.ts"] } })`,
      ``
    ].join("\n")
  )
}

/** The result of a command. */
export interface Run {
  readonly status: number | null
  readonly output: string
}

/** Runs a Node script (on the Node running the tests: the repository's Node 24) in `cwd`. */
export const node = (cwd: string, args: ReadonlyArray<string>, timeout = 120_000): Run => {
  const result = spawnSync(process.execPath, args, { cwd, encoding: "utf8", timeout, env: cleanEnv() })
  return { status: result.status, output: `${result.stdout ?? ""}${result.stderr ?? ""}` }
}

/** The environment of child processes: no npm or vitest variables of the parent (a nested vitest would see them). */
export const cleanEnv = (): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|TEST$|NODE_OPTIONS$|FORCE_COLOR$)/i.test(key))
  ),
  NO_COLOR: "1"
})

/** The TypeScript compiler the repository typechecks with (TS 7, native). */
export const tsc = path.join(root, "node_modules/typescript-native/bin/tsc")
/** vitest's command line. */
export const vitest = path.join(root, "node_modules/vitest/vitest.mjs")
/** tsx's command line. */
export const tsx = path.join(root, "node_modules/tsx/dist/cli.mjs")

/** A background process whose output is collected. */
export const background = (cwd: string, args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, args, { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] })
  const state = { output: "", exit: undefined as { code: number | null; signal: string | null } | undefined }
  child.stdout.on("data", (chunk: Buffer) => (state.output += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (state.output += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      state.exit = { code, signal }
      resolve(state.exit)
    })
  )
  /** Resolves once `pattern` appears in the output; rejects on exit or after `ms`. */
  const waitFor = (pattern: RegExp, ms: number) =>
    new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + ms
      const poll = () => {
        if (pattern.test(state.output)) return resolve()
        if (state.exit !== undefined) {
          return reject(new Error(`exited (${JSON.stringify(state.exit)}):\n${state.output}`))
        }
        if (Date.now() > deadline) return reject(new Error(`no ${pattern} within ${ms} ms:\n${state.output}`))
        setTimeout(poll, 100)
      }
      poll()
    })
  return { child, state, exited, waitFor }
}
