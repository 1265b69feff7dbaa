/**
 * A generated project's own tests (TestKube + TestClock, the property test, the test of a kind added by
 * `create-reconcile api`, and the `WebhookChecks` tests of the webhooks added by `create-reconcile webhook`) pass,
 * run by vitest with `@reconcile/*` resolved to this repository's sources; with
 * `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`) its real-control-plane tests (one file per kind, on
 * `Envtest`) pass too — what its `npm run test:envtest` runs.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { addWebhooks } from "../src/internal/webhook.js"
import { cleanEnv, linkToSources, node, tempDir, vitest } from "./support/project.js"

const tmp = tempDir("tests")
afterAll(tmp.remove)

const onReal = process.env.RECONCILE_TEST_CLUSTER === "real"

describe("a generated project", () => {
  it.skipIf(onReal)("passes its own tests", () => {
    const project = path.join(tmp.dir, "demo")
    init({ directory: project, kind: "Policy", group: "policy.example.com" })
    addKind({ directory: project, kind: "Widget" })
    addWebhooks({ directory: project, kind: "Policy", defaulting: true, validation: true, conversion: true })
    addWebhooks({ directory: project, kind: "Widget", validation: true })
    linkToSources(project)
    const result = node(project, [vitest, "run", "--root", ".", "--config", "vitest.repo.config.ts"])
    assert.strictEqual(result.status, 0, result.output)
    // the five files ran: the first kind's tests, its property test, the added kind's tests, the webhooks' tests
    assert.match(result.output, /test\/controller\.test\.ts/)
    assert.match(result.output, /test\/property\.test\.ts/)
    assert.match(result.output, /test\/widgetController\.test\.ts/)
    assert.match(result.output, /test\/policyWebhooks\.test\.ts/)
    assert.match(result.output, /test\/widgetWebhooks\.test\.ts/)
    assert.match(result.output, /Test Files\s+\S*5 passed/)
    assert.match(result.output, /2 skipped/, "the real-control-plane files are skipped without RECONCILE_TEST_CLUSTER")
  }, 90_000)

  it.skipIf(!onReal)("passes its tests on a real control plane (RECONCILE_TEST_CLUSTER=real)", () => {
    const project = path.join(tmp.dir, "real")
    init({ directory: project, kind: "Policy", group: "policy.example.com" })
    addKind({ directory: project, kind: "Widget" })
    linkToSources(project)
    const result = spawnSync(
      process.execPath,
      [
        vitest,
        "run",
        "--root",
        ".",
        "--config",
        "vitest.repo.config.ts",
        "test/controller.real.test.ts",
        "test/widgetController.real.test.ts"
      ],
      { cwd: project, encoding: "utf8", timeout: 300_000, env: { ...cleanEnv(), RECONCILE_TEST_CLUSTER: "real" } }
    )
    const output = `${result.stdout ?? ""}${result.stderr ?? ""}`
    assert.strictEqual(result.status, 0, output)
    assert.match(output, /Test Files\s+\S*2 passed/)
    assert.match(output, /Tests\s+\S*4 passed/)
  }, 300_000)
})
