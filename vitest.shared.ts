import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineProject } from "vitest/config"

const packages = path.join(path.dirname(fileURLToPath(import.meta.url)), "packages")

/**
 * Workspace packages resolve to their TypeScript sources, never to a possibly
 * stale `dist/`: the same mapping as `paths` in tsconfig.base.json
 * (`@reconcile/x` → `packages/x/src/index.ts`, `@reconcile/x/M` → `packages/x/src/M.ts`).
 */
export const sourceAliases = [
  { find: /^@reconcile\/(workqueue|core|kube|testkit|cli)$/, replacement: path.join(packages, "$1/src/index.ts") },
  { find: /^@reconcile\/(workqueue|core|kube|testkit|cli)\/(.+)$/, replacement: path.join(packages, "$1/src/$2.ts") }
]

/**
 * The vitest project of one package: tests in `test/`, and workspace packages
 * resolved to their TypeScript sources (see `sourceAliases`).
 */
export const project = (name: string) =>
  defineProject({
    resolve: { alias: sourceAliases },
    test: { name, include: ["test/**/*.test.ts"] }
  })
