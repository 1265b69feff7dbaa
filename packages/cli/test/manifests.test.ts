/**
 * `reconcile manifests`: the bin imports an operator's TypeScript module and writes its manifests; the output
 * applies to an API server with `kubectl apply --server-side`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Manifests } from "@reconcile/kube"
import { TestApiServer } from "@reconcile/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseAllDocuments } from "yaml"
import { Main } from "../src/index.js"
import { main } from "../src/internal/manifestsCommand.js"
import { operator } from "./fixtures/greeting.js"
import { kubectl, reconcile, root } from "./support/processes.js"

/** The command in-process (the entry is still imported with tsx): its exit code and output. */
const command = (argv: ReadonlyArray<string>, cwd = root) =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const code = yield* main(argv, {
      cwd,
      stdout: (text) => Effect.sync(() => void (stdout += text)),
      stderr: (text) => Effect.sync(() => void (stderr += text))
    })
    return { code, stdout, stderr }
  })

const kinds = (text: string) =>
  parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } })

const fixtures = "packages/cli/test/fixtures"

describe("reconcile manifests", () => {
  it.live(
    "the bin: --entry examples/webapp/src/operator.ts writes YAML on stdout that kubectl apply --server-side -f - " +
      "applies",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const result = yield* reconcile(["manifests", "--entry", "examples/webapp/src/operator.ts"])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stderr, "")
        const objects = kinds(result.stdout)
        const names = objects.map((o) => `${o.kind}/${o.metadata.name}`)
        for (
          const expected of [
            "CustomResourceDefinition/webapps.apps.reconcile.dev",
            "Namespace/webapp-operator-system",
            "ServiceAccount/webapp-operator",
            "ClusterRole/webapp-operator",
            "ClusterRoleBinding/webapp-operator",
            "Deployment/webapp-operator"
          ]
        ) assert.include(names, expected)

        const applied = yield* kubectl(server.kubeconfigPath, ["apply", "--server-side", "-f", "-"], result.stdout)
        assert.strictEqual(applied.code, 0, applied.stderr)
        const deployment = yield* server.cluster.get({
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: "webapp-operator",
          namespace: "webapp-operator-system"
        })
        const args = (deployment as any).spec.template.spec.containers[0].args as ReadonlyArray<string>
        // the flags the main job takes in the cluster
        for (const flag of ["--in-cluster", "--leader-elect", "--metrics-port=8080", "--health-port=8081"]) {
          assert.include(args, flag)
        }
        // …and the main job accepts them as they are
        const parsed = yield* Main.parseArgs(args, {})
        assert.deepStrictEqual(parsed.mode, { _tag: "InCluster" })
        assert.isTrue(parsed.leaderElect)
      }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 30_000 }
  )

  it.live(
    "--out DIR: one file per group, in the order kubectl applies them; options reach the Deployment",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-manifests-"))
        const out = path.join(dir, "config")
        const result = yield* command([
          "manifests",
          "--entry",
          `${fixtures}/greeting.ts`,
          "--out",
          out,
          "--image=ghcr.io/example/greeting:1.0.0",
          "--namespace",
          "greetings",
          "--replicas",
          "2"
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        // exactly Manifests.files of Manifests.generate with those options
        const expected = Manifests.files(
          yield* Manifests.generate(operator, {
            image: "ghcr.io/example/greeting:1.0.0",
            namespace: "greetings",
            replicas: 2
          })
        )
        const files = fs.readdirSync(out).sort()
        assert.deepStrictEqual(files, Object.keys(expected).sort())
        for (const file of files) {
          assert.strictEqual(fs.readFileSync(path.join(out, file), "utf-8"), expected[file])
          assert.include(result.stderr, `wrote ${path.join(out, file)}`)
        }
        const workload = kinds(fs.readFileSync(path.join(out, "workload.yaml"), "utf-8"))
        const deployment = workload.find((o) => o.kind === "Deployment") as any
        assert.strictEqual(deployment.metadata.namespace, "greetings")
        assert.strictEqual(deployment.spec.replicas, 2)
        assert.strictEqual(deployment.spec.template.spec.containers[0].image, "ghcr.io/example/greeting:1.0.0")

        const applied = yield* kubectl(server.kubeconfigPath, ["apply", "--server-side", "-f", out])
        assert.strictEqual(applied.code, 0, applied.stderr)
        fs.rmSync(dir, { recursive: true, force: true })
      }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 30_000 }
  )

  it.live(
    "--sharding: 3 replicas (or --replicas) running the main job with --sharding, which it accepts as it is; the " +
      "ring's Role; kubectl applies it",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const [sharded, five, valued] = yield* Effect.all([
          command(["manifests", "--entry", `${fixtures}/greeting.ts`, "--sharding"]),
          command(["manifests", "--entry", `${fixtures}/greeting.ts`, "--sharding", "--replicas", "5"]),
          command(["manifests", "--entry", `${fixtures}/greeting.ts`, "--sharding=no"])
        ])
        assert.strictEqual(sharded.code, 0, sharded.stderr)
        assert.strictEqual(sharded.stdout, Manifests.toYaml(yield* Manifests.generate(operator, { sharding: true })))
        const objects = kinds(sharded.stdout) as ReadonlyArray<any>
        const deployment = objects.find((o) => o.kind === "Deployment")
        assert.strictEqual(deployment.spec.replicas, 3)
        const args = deployment.spec.template.spec.containers[0].args as ReadonlyArray<string>
        assert.include(args, "--sharding")
        assert.notInclude(args, "--leader-elect")
        const parsed = yield* Main.parseArgs(args, {})
        assert.isTrue(parsed.sharding)
        assert.isFalse(parsed.leaderElect)
        assert.deepStrictEqual(
          objects.filter((o) => o.kind === "Role").map((o) => o.metadata.name),
          ["greeting-operator-sharding"]
        )
        assert.strictEqual(five.code, 0, five.stderr)
        assert.strictEqual(
          (kinds(five.stdout) as ReadonlyArray<any>).find((o) => o.kind === "Deployment").spec.replicas,
          5
        )
        assert.strictEqual(valued.code, 2)
        assert.include(valued.stderr, "--sharding takes no value")

        const applied = yield* kubectl(server.kubeconfigPath, ["apply", "--server-side", "-f", "-"], sharded.stdout)
        assert.strictEqual(applied.code, 0, applied.stderr)
      }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 30_000 }
  )

  it.live(
    "an operator with webhooks: webhook.yaml (its configurations), the webhook Service, the CRD's conversion; " +
      "kubectl applies the directory",
    () =>
      Effect.gen(function*() {
        const server = yield* TestApiServer.TestApiServer
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-manifests-"))
        const out = path.join(dir, "config")
        const result = yield* command(["manifests", "--entry", `${fixtures}/notes.ts`, "--out", out])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.deepStrictEqual(fs.readdirSync(out).sort(), [
          "crd.yaml",
          "namespace.yaml",
          "rbac.yaml",
          "webhook.yaml",
          "workload.yaml"
        ])
        const read = (file: string) => kinds(fs.readFileSync(path.join(out, file), "utf-8"))
        assert.deepStrictEqual(read("webhook.yaml").map((o) => `${o.kind}/${o.metadata.name}`), [
          "MutatingWebhookConfiguration/notes-operator-mutating",
          "ValidatingWebhookConfiguration/notes-operator-validating"
        ])
        assert.isTrue(
          read("workload.yaml").some((o) => o.kind === "Service" && o.metadata.name === "notes-operator-webhook")
        )
        assert.strictEqual((read("crd.yaml")[0] as any).spec.conversion.strategy, "Webhook")

        const applied = yield* kubectl(server.kubeconfigPath, ["apply", "--server-side", "-f", out])
        assert.strictEqual(applied.code, 0, applied.stderr)
        fs.rmSync(dir, { recursive: true, force: true })
      }).pipe(Effect.provide(TestApiServer.layerWithCluster({ controllers: false }))),
    { timeout: 30_000 }
  )

  it.live(
    "several Operator exports: all of them (shared objects once); --export picks one; -o FILE",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-manifests-"))
        const file = path.join(dir, "all.yaml")
        const [all, one] = yield* Effect.all([
          command(["manifests", "--entry", `${fixtures}/operators.ts`, "-o", file]),
          command(["manifests", "--entry", `${fixtures}/operators.ts`, "--export", "second"])
        ])
        assert.strictEqual(all.code, 0, all.stderr)
        const objects = kinds(fs.readFileSync(file, "utf-8"))
        assert.strictEqual(objects.filter((o) => o.kind === "CustomResourceDefinition").length, 1)
        assert.deepStrictEqual(
          objects.filter((o) => o.kind === "Deployment").map((o) => o.metadata.name).sort(),
          ["greeting-operator", "second-operator"]
        )
        assert.strictEqual(one.code, 0, one.stderr)
        assert.deepStrictEqual(
          kinds(one.stdout).filter((o) => o.kind === "Deployment").map((o) => o.metadata.name),
          ["second-operator"]
        )
        fs.rmSync(dir, { recursive: true, force: true })
      }),
    { timeout: 30_000 }
  )

  it.live(
    "errors: exit 1 for an unusable entry, 2 for invalid options; each says what to do",
    () =>
      Effect.gen(function*() {
        const [missing, none, wrongExport, badFlag, noCommand, both, help] = yield* Effect.all([
          command(["manifests"], os.tmpdir()),
          command(["manifests", "--entry", `${fixtures}/noOperator.ts`]),
          command(["manifests", "--entry", `${fixtures}/greeting.ts`, "--export", "Greeting"]),
          command(["manifests", "--replicas", "two"]),
          command([]),
          command(["manifests", "--out", "a", "-o", "b"]),
          command(["--help"])
        ])
        assert.strictEqual(missing.code, 1)
        assert.include(missing.stderr, "src/operator.ts does not exist: give the module exporting your Operator")
        assert.strictEqual(none.code, 1)
        assert.include(none.stderr, "exports no Operator")
        assert.strictEqual(wrongExport.code, 1)
        assert.include(wrongExport.stderr, `the export "Greeting"`)
        assert.include(wrongExport.stderr, "is not an Operator")
        assert.strictEqual(badFlag.code, 2)
        assert.include(badFlag.stderr, "--replicas must be a whole number")
        assert.strictEqual(noCommand.code, 2)
        assert.strictEqual(both.code, 2)
        assert.include(both.stderr, "alternatives")
        assert.strictEqual(help.code, 0)
        assert.include(help.stdout, "USAGE\n  reconcile <subcommand> [flags]")
      }),
    { timeout: 30_000 }
  )
})
