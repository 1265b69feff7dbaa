/**
 * `npm start` in a generated project: the main job starts the embedded cluster, installs the CRDs, applies the
 * samples and the controllers make them Ready; SIGTERM stops it with exit 0 (run with tsx, `@reconcile/*` resolved
 * to this repository's sources).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { background, linkToSources, tempDir, tsx } from "./support/project.js"

const tmp = tempDir("start")
afterAll(tmp.remove)

describe("a generated project", () => {
  it("npm start reconciles its samples on the embedded cluster and stops on SIGTERM", async () => {
    const project = path.join(tmp.dir, "demo")
    init({ directory: project })
    addKind({ directory: project, kind: "Widget" })
    linkToSources(project)
    const main = background(project, [tsx, "--tsconfig", "tsconfig.repo.json", "src/main.ts"])
    try {
      await main.waitFor(/✓ .*sample.* is Ready[\s\S]*✓ .*sample.* is Ready/, 40_000)
      assert.match(main.state.output, /greetings\.example\.com/)
      assert.match(main.state.output, /widgets\.example\.com/)
      main.child.kill("SIGTERM")
      const exit = await main.exited
      assert.deepStrictEqual(exit, { code: 0, signal: null }, main.state.output)
    } finally {
      main.child.kill("SIGKILL")
    }
  }, 60_000)
})
