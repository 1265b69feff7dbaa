import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@reconcile/source"] },
  test: { name: "core", include: ["test/**/*.test.ts"] }
})
