import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { configDefaults, defineProject } from "vitest/config"

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
 * The slow end-to-end files (real processes, kubectl, the Python client, a client-go program), by project: not in
 * `npm test` (kept under 8 minutes on 2 cores) but in `npm run test:envtest`, which runs them on the embedded
 * cluster and again on the real control plane (`RECONCILE_E2E=1` includes them; CI runs both).
 */
export const endToEnd: Readonly<Record<string, ReadonlyArray<string>>> = {
  core: ["test/inspectorPage.browser.test.ts"],
  testkit: ["test/tour.test.ts", "test/apiserverBin.test.ts"],
  "example-webapp": [
    "test/cli.test.ts",
    "test/smoke.test.ts",
    "test/shutdown.test.ts",
    "test/jsonLogs.test.ts",
    "test/inspector.browser.test.ts"
  ],
  cli: ["test/manifests.test.ts", "test/process.test.ts", "test/loading.test.ts", "test/telemetry.test.ts"],
  "create-reconcile": ["test/generatedTests.test.ts", "test/generatedStart.test.ts"]
}

/**
 * The vitest project of one package: tests in `test/`, and workspace packages
 * resolved to their TypeScript sources (see `sourceAliases`); its {@link endToEnd} files only with `RECONCILE_E2E=1`.
 */
export const project = (name: string) =>
  defineProject({
    resolve: { alias: sourceAliases },
    test: {
      name,
      include: ["test/**/*.test.ts"],
      exclude: [...configDefaults.exclude, ...(process.env.RECONCILE_E2E === "1" ? [] : endToEnd[name] ?? [])]
    }
  })
