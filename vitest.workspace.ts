/**
 * The vitest projects of the repository: one per package or example with tests.
 * `vitest.config.ts` passes this list as `test.projects`.
 */
export default [
  "packages/workqueue",
  "packages/core",
  "packages/kube",
  "packages/testkit",
  "packages/cli",
  "packages/create-reconcile",
  "examples/config-rollout",
  "examples/external-trigger",
  "examples/webapp",
  "chaos",
  "docs"
]
