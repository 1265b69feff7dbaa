/**
 * `npm start` in a generated project with webhooks (`create-reconcile webhook`: a defaulter, a validator and a
 * conversion from v1alpha1 for the first kind): the main job starts the embedded cluster, serves the webhooks and
 * registers them, installs the CRDs, applies the samples (through the webhooks) and the controllers make them
 * Ready; SIGTERM stops it with exit 0 (run with tsx, `@reconcile/*` resolved to this repository's sources).
 * With `RECONCILE_TEST_CLUSTER=real`, `npm start -- --real` too: the real kube-apiserver calls those webhooks for
 * what kubectl writes and reads.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { addWebhooks } from "../src/internal/webhook.js"
import { background, linkToSources, tempDir, tsx } from "./support/project.js"

const tmp = tempDir("start")
afterAll(tmp.remove)

describe("a generated project", () => {
  it("npm start reconciles its samples on the embedded cluster and stops on SIGTERM", async () => {
    const project = path.join(tmp.dir, "demo")
    init({ directory: project })
    addKind({ directory: project, kind: "Widget" })
    addWebhooks({ directory: project, kind: "Greeting", defaulting: true, validation: true, conversion: true })
    linkToSources(project)
    const main = background(project, [tsx, "--tsconfig", "tsconfig.repo.json", "src/main.ts"])
    try {
      await main.waitFor(/✓ .*sample.* is Ready[\s\S]*✓ .*sample.* is Ready/, 40_000)
      assert.match(main.state.output, /greetings\.example\.com/)
      assert.match(main.state.output, /widgets\.example\.com/)
      assert.match(main.state.output, /Installed MutatingWebhookConfiguration demo-mutating/)
      assert.match(main.state.output, /Installed ValidatingWebhookConfiguration demo-validating/)
      assert.match(
        main.state.output,
        /Installed the conversion webhook of CustomResourceDefinition greetings\.example\.com/
      )
      main.child.kill("SIGTERM")
      const exit = await main.exited
      assert.deepStrictEqual(exit, { code: 0, signal: null }, main.state.output)
    } finally {
      main.child.kill("SIGKILL")
    }
  }, 60_000)

  it.skipIf(process.env.RECONCILE_TEST_CLUSTER !== "real")(
    "npm start -- --real: kube-apiserver calls the generated defaulter, validator and conversion webhooks",
    async () => {
      const project = path.join(tmp.dir, "real")
      init({ directory: project })
      addWebhooks({ directory: project, kind: "Greeting", defaulting: true, validation: true, conversion: true })
      linkToSources(project)
      const main = background(project, [tsx, "--tsconfig", "tsconfig.repo.json", "src/main.ts", "--real"])
      try {
        await main.waitFor(/✓ .*sample.* is Ready/, 90_000)
        const kubeconfig = /KUBECONFIG=(\S+)/.exec(main.state.output)![1]!
        const home = fs.mkdtempSync(path.join(tmp.dir, "kubectl-"))
        const kubectl = (...args: Array<string>) => {
          const result = spawnSync("kubectl", ["--kubeconfig", kubeconfig, "--cache-dir", `${home}/cache`, ...args], {
            encoding: "utf8",
            env: { PATH: `${process.env.PATH}:/usr/bin`, HOME: home },
            timeout: 20_000
          })
          return { status: result.status, output: `${result.stdout}${result.stderr}`, stdout: result.stdout }
        }
        const file = path.join(project, "loud.json")
        fs.writeFileSync(
          file,
          JSON.stringify({
            apiVersion: "example.com/v1alpha1",
            kind: "Greeting",
            metadata: { name: "loud", namespace: "default" },
            spec: { text: "  HELLO  " }
          })
        )
        // written as v1alpha1: converted to v1, defaulted (trimmed), validated (a warning), stored as v1
        const created = kubectl("create", "-f", file)
        assert.strictEqual(created.status, 0, created.output)
        assert.include(created.output, "Warning: spec.message is all capitals: no need to shout")
        const v1 = kubectl("get", "greetings.v1.example.com", "loud", "-n", "default", "-o", "jsonpath={.spec}")
        assert.deepStrictEqual(JSON.parse(v1.stdout), { message: "HELLO" }, v1.output)
        const v1alpha1 = kubectl("get", "greetings.v1alpha1.example.com", "loud", "-n", "default", "-o", "json")
        assert.strictEqual(v1alpha1.status, 0, v1alpha1.output)
        const object = JSON.parse(v1alpha1.stdout)
        assert.strictEqual(object.apiVersion, "example.com/v1alpha1")
        assert.deepStrictEqual(object.spec, { text: "HELLO" })
        main.child.kill("SIGTERM")
        const exit = await main.exited
        assert.deepStrictEqual(exit, { code: 0, signal: null }, main.state.output)
      } finally {
        main.child.kill("SIGKILL")
      }
    },
    150_000
  )
})
