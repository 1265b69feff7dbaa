import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@reconcile/source"] },
  test: { name: "workqueue", include: ["test/**/*.test.ts"] }
})
