import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@reconcile/source"] },
  test: { name: "kube", include: ["test/**/*.test.ts"] }
})
