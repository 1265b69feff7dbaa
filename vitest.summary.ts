import type { Reporter, TestModule } from "vitest/node"

/**
 * Prints one plain closing line, `N passed, N failed` (with `, N skipped`
 * when any), after vitest's own summary, so that any tool can read the
 * outcome of `npm test` without knowing vitest's format.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
      if (module.state() === "failed" && module.children.size === 0) failed++ // a file that failed to load
    }
    const line = `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`
    // vitest prints its own summary after the reporters' hooks: print ours last, on exit.
    process.once("exit", () => process.stdout.write(`\n${line}\n`))
  }
}
