import { defaultServerConditions } from "vite"
import { defineProject } from "vitest/config"

/**
 * The vitest project of one package: tests in `test/`, and workspace packages
 * resolved to their TypeScript sources (the `@reconcile/source` export
 * condition), never to a possibly stale `dist/`.
 */
export const project = (name: string) =>
  defineProject({
    resolve: { conditions: ["@reconcile/source"] },
    ssr: { resolve: { conditions: ["@reconcile/source", ...defaultServerConditions] } },
    test: { name, include: ["test/**/*.test.ts"] }
  })
