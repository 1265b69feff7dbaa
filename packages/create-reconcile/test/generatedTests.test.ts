/**
 * A generated project's own tests (TestKube + TestClock, the property test, and the test of a kind added by
 * `create-reconcile api`) pass, run by vitest with `@reconcile/*` resolved to this repository's sources.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { linkToSources, node, tempDir, vitest } from "./support/project.js"

const tmp = tempDir("tests")
afterAll(tmp.remove)

describe("a generated project", () => {
  it("passes its own tests", () => {
    const project = path.join(tmp.dir, "demo")
    init({ directory: project, kind: "Policy", group: "policy.example.com" })
    addKind({ directory: project, kind: "Widget" })
    linkToSources(project)
    const result = node(project, [vitest, "run", "--root", ".", "--config", "vitest.repo.config.ts"])
    assert.strictEqual(result.status, 0, result.output)
    // the three files ran: the first kind's tests, its property test, the added kind's tests
    assert.match(result.output, /test\/controller\.test\.ts/)
    assert.match(result.output, /test\/property\.test\.ts/)
    assert.match(result.output, /test\/widgetController\.test\.ts/)
    assert.match(result.output, /Test Files\s+\S*3 passed/)
  }, 90_000)
})
