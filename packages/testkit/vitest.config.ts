import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@reconcile/source"] },
  test: { name: "testkit", include: ["test/**/*.test.ts"] }
})
