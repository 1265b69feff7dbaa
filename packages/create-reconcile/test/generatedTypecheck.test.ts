/**
 * A generated project (with a second kind added by `create-reconcile api`) typechecks with its own tsconfig.json
 * (strict, exactOptionalPropertyTypes, NodeNext), `@reconcile/*` resolved to this repository's sources.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { linkToSources, node, tempDir, tsc } from "./support/project.js"

const tmp = tempDir("typecheck")
afterAll(tmp.remove)

describe("a generated project", () => {
  it("typechecks, with a kind added by create-reconcile api", () => {
    const project = path.join(tmp.dir, "demo")
    init({ directory: project })
    addKind({ directory: project, kind: "Widget", group: "widgets.example.com", version: "v1alpha1" })
    linkToSources(project)
    const result = node(project, [tsc, "-p", "tsconfig.repo.json"])
    assert.strictEqual(result.status, 0, result.output)
  }, 60_000)
})
