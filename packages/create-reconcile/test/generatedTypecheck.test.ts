/**
 * A generated project (with a second kind added by `create-reconcile api`, and webhooks added by
 * `create-reconcile webhook`: all three for the first kind, a validator for the second) typechecks with its own
 * tsconfig.json (strict, exactOptionalPropertyTypes, NodeNext), `@reconcile/*` resolved to this repository's sources.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { addWebhooks } from "../src/internal/webhook.js"
import { linkToSources, node, tempDir, tsc } from "./support/project.js"

const tmp = tempDir("typecheck")
afterAll(tmp.remove)

describe("a generated project", () => {
  it("typechecks, with a kind added by create-reconcile api and webhooks by create-reconcile webhook", () => {
    const project = path.join(tmp.dir, "demo")
    init({ directory: project })
    addKind({ directory: project, kind: "Widget", group: "widgets.example.com", version: "v1alpha1" })
    addWebhooks({ directory: project, kind: "Greeting", defaulting: true, validation: true, conversion: true })
    addWebhooks({ directory: project, kind: "Widget", validation: true })
    linkToSources(project)
    const result = node(project, [tsc, "-p", "tsconfig.repo.json"])
    assert.strictEqual(result.status, 0, result.output)
  }, 60_000)
})
