/**
 * What `npm run manifests` writes for a generated project (`Manifests.generate` of its `src/operator.ts`, with a
 * kind added by `create-reconcile api`): RBAC for both kinds and what their controllers touch, nothing broader, and
 * YAML that `kubectl apply --server-side` accepts on a TestApiServer.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Manifests, type Operator } from "@reconcile/kube"
import { TestApiServer } from "@reconcile/testkit"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { tempDir } from "./support/project.js"

const tmp = tempDir("manifests")
afterAll(tmp.remove)

const project = path.join(tmp.dir, "demo")
init({ directory: project })
addKind({ directory: project, kind: "Widget", group: "widgets.example.com" })

/** The generated `src/operator.ts`, imported as the test's own code (`@reconcile/*` from the sources). */
const operator = Effect.promise(() =>
  import(path.join(project, "src/operator.ts")) as Promise<{ operator: Operator.Operator<any, any> }>
).pipe(Effect.map((module) => module.operator))

const kubectl = (kubeconfig: string, args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ code: number; output: string }>((resolve) => {
      const home = fs.mkdtempSync(path.join(tmp.dir, "kubectl-"))
      execFile(
        "kubectl",
        ["--kubeconfig", kubeconfig, "--cache-dir", path.join(home, "cache"), ...args],
        { env: { PATH: `${process.env.PATH}:/usr/bin`, HOME: home }, timeout: 20_000 },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, output: `${stdout}${stderr}` })
      )
    })
  )

describe("a generated project's manifests", () => {
  it.effect("grant both kinds and what their controllers touch, and nothing broader", () =>
    Effect.gen(function*() {
      const rules = Manifests.rules(yield* operator)
      const granted = (group: string, resource: string) =>
        rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs)
      for (const [group, plural] of [["example.com", "greetings"], ["widgets.example.com", "widgets"]] as const) {
        for (const verb of ["get", "list", "watch", "patch"]) assert.include(granted(group, plural), verb, plural)
        assert.include(granted(group, `${plural}/status`), "patch", `${plural}/status`)
        assert.include(granted(group, `${plural}/finalizers`), "update", `${plural}/finalizers`)
      }
      for (const verb of ["get", "list", "watch", "create", "patch"]) assert.include(granted("", "configmaps"), verb)
      assert.include(granted("events.k8s.io", "events"), "create")
      for (const rule of rules) {
        assert.notInclude([...rule.apiGroups, ...rule.resources, ...rule.verbs], "*", JSON.stringify(rule))
      }
    }))

  it.live("apply with kubectl apply --server-side to a TestApiServer", () =>
    Effect.gen(function*() {
      const objects = yield* Manifests.generate(yield* operator, { image: "demo:0.1.0" })
      const file = path.join(tmp.dir, "manifests.yaml")
      fs.writeFileSync(file, Manifests.toYaml(objects))
      const server = yield* TestApiServer.TestApiServer
      const applied = yield* kubectl(server.kubeconfigPath, ["apply", "--server-side", "-f", file])
      assert.strictEqual(applied.code, 0, applied.output)
      assert.include(applied.output, "customresourcedefinition.apiextensions.k8s.io/greetings.example.com")
      assert.include(applied.output, "customresourcedefinition.apiextensions.k8s.io/widgets.widgets.example.com")
      assert.include(applied.output, "deployment.apps/demo")
      const widgets = yield* kubectl(server.kubeconfigPath, ["get", "widgets", "-A"])
      assert.strictEqual(widgets.code, 0, widgets.output)
    }).pipe(Effect.provide(TestApiServer.layerWithCluster())), 60_000)
})
