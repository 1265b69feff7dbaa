/**
 * What `npm run manifests` writes for a generated project (`Manifests.generate` of its `src/operator.ts`, with a
 * kind added by `create-reconcile api` and webhooks by `create-reconcile webhook`): RBAC for both kinds and what
 * their controllers touch, nothing broader; the webhooks' configurations, Service and the CRD's conversion stanza;
 * and YAML that `kubectl apply --server-side` accepts on a TestApiServer.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Manifests, type Operator } from "@reconcile/kube"
import { TestApiServer } from "@reconcile/testkit"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { addKind, init } from "../src/internal/scaffold.js"
import { addWebhooks } from "../src/internal/webhook.js"
import { tempDir } from "./support/project.js"

const tmp = tempDir("manifests")
afterAll(tmp.remove)

const project = path.join(tmp.dir, "demo")
init({ directory: project })
addKind({ directory: project, kind: "Widget", group: "widgets.example.com" })
addWebhooks({ directory: project, kind: "Greeting", defaulting: true, validation: true, conversion: true })
addWebhooks({ directory: project, kind: "Widget", defaulting: true })

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

  it.effect("hold the webhooks create-reconcile webhook added: configurations, Service, conversion stanza", () =>
    Effect.gen(function*() {
      const objects = (yield* Manifests.generate(yield* operator, { image: "demo:0.1.0" })) as ReadonlyArray<any>
      const named = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)
      const webhookNames = (kind: string, name: string) => named(kind, name)?.webhooks.map((w: any) => w.name)
      assert.deepStrictEqual(webhookNames("MutatingWebhookConfiguration", "demo-mutating"), [
        "mgreeting.example.com",
        "mwidget.widgets.example.com"
      ])
      assert.deepStrictEqual(webhookNames("ValidatingWebhookConfiguration", "demo-validating"), [
        "vgreeting.example.com"
      ])
      assert.strictEqual(named("Service", "demo-webhook")?.spec.ports[0].port, 443)
      const greetings = named("CustomResourceDefinition", "greetings.example.com")
      assert.deepStrictEqual(greetings.spec.versions.map((v: any) => [v.name, v.storage]), [["v1", true], [
        "v1alpha1",
        false
      ]])
      assert.strictEqual(greetings.spec.conversion.strategy, "Webhook")
      assert.strictEqual(greetings.spec.conversion.webhook.clientConfig.service.path, "/convert-example-com-greeting")
      assert.isUndefined(named("CustomResourceDefinition", "widgets.widgets.example.com").spec.conversion)
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
      assert.include(applied.output, "mutatingwebhookconfiguration.admissionregistration.k8s.io/demo-mutating")
      assert.include(applied.output, "validatingwebhookconfiguration.admissionregistration.k8s.io/demo-validating")
      const widgets = yield* kubectl(server.kubeconfigPath, ["get", "widgets", "-A"])
      assert.strictEqual(widgets.code, 0, widgets.output)
    }).pipe(Effect.provide(TestApiServer.layerWithCluster())), 60_000)
})
