/**
 * The main job end to end: `npm start`'s embedded mode as a child process,
 * driven over the real HTTPS API with the kubeconfig it prints. With
 * `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`) the same scenario runs
 * `npm start -- --real`: the operator on a real control plane of its own.
 *
 * A WebApp created as `v1alpha1` goes through the conversion webhook the main job serves: it is stored as `v1`,
 * reconciled, and reads back as written in both versions (with the client and with the README's kubectl lines).
 * It needs a cluster that calls conversion webhooks: the real one, and the embedded one through the testkit's
 * conversion support (without it, the object is stored unconverted and the test fails there).
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource } from "@reconcile/kube"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "yaml"
import { registryName } from "../src/reconcile.js"
import { samples } from "../src/samples.js"
import { WebApp, WebAppV1alpha1 } from "../src/WebApp.js"
import { assertTryIt, runAll } from "./support/tryIt.js"

const root = path.join(import.meta.dirname, "..", "..", "..")
const real = process.env.RECONCILE_TEST_CLUSTER === "real"

/** Starts the main job; resolves with the process and the kubeconfig path once the sample is Ready. */
const startMainJob = Effect.acquireRelease(
  Effect.callback<{ readonly child: ChildProcess; readonly kubeconfig: string; output: () => string }, Error>(
    (resume) => {
      const child = spawn(process.execPath, [
        "--import",
        "tsx",
        "examples/webapp/src/main.ts",
        ...(real ? ["--real"] : [])
      ], {
        cwd: root,
        // as in a shell where KUBECONFIG points at a real cluster: the main job must not use it
        env: { ...process.env, KUBECONFIG: "/nonexistent/production-kubeconfig" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      const limit = real ? 60 : 20
      const timer = setTimeout(
        () => resume(Effect.fail(new Error(`main job not ready in ${limit} s:\n${out}`))),
        limit * 1000
      )
      const onData = (chunk: Buffer) => {
        out += chunk.toString()
        const match = /KUBECONFIG=(\S+) kubectl/.exec(out)
        if (match && out.includes("is Ready")) {
          clearTimeout(timer)
          resume(Effect.succeed({ child, kubeconfig: match[1]!, output: () => out }))
        }
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()))
      child.on("exit", (code) => resume(Effect.fail(new Error(`main job exited with ${code}:\n${out}`))))
    }
  ),
  ({ child }) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
)

/** Polls `check` (real time) until it yields true, for at most `seconds`. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = real ? 45 : 15) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (Date.now() < deadline) {
      if (yield* check) return
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.die(new Error(`timed out: ${what}`))
  })

describe(real ? "npm start -- --real (a real control plane)" : "npm start (embedded mode)", () => {
  it.live(
    "with KUBECONFIG set: the sample becomes Ready on its own cluster, follows an edit, is cleaned up on " +
      "delete; the printed kubectl lines show the webhooks; SIGTERM exits cleanly and removes the kubeconfig",
    () =>
      Effect.gen(function*() {
        const job = yield* startMainJob
        const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(job.kubeconfig))
        yield* Effect.gen(function*() {
          const app = yield* KubeClient.get(WebApp, "sample", { namespace: "default" })
          assert.isTrue(app.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
          assert.include(app.metadata.finalizers ?? [], "apps.reconcile.dev/registry")
          const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
          assert.strictEqual(registry.data?.sample, "nginx:1.27")

          // Edit: replicas 2 → 3; the Deployment follows and the app is Ready again at the new generation.
          yield* KubeClient.patch(WebApp, "sample", { spec: { replicas: 3 } }, { type: "merge", namespace: "default" })
          yield* eventually(
            "the Deployment follows the edit",
            Effect.map(
              KubeClient.get(Resource.Deployment, "sample", { namespace: "default" }),
              (d) => d.spec?.replicas === 3 && d.status?.readyReplicas === 3
            )
          )
          yield* eventually(
            "the app reports Ready for the new generation",
            Effect.map(KubeClient.get(WebApp, "sample", { namespace: "default" }), (a) =>
              a.status?.observedGeneration === a.metadata.generation &&
              a.status?.conditions?.some((c) =>
                  c.type === "Ready" && c.status === "True"
                ) === true)
          )

          // Delete: cleanup removes the registry entry, then the finalizer; owned objects are collected.
          yield* KubeClient.del(WebApp, "sample", { namespace: "default" })
          yield* eventually(
            "the app is gone",
            KubeClient.get(WebApp, "sample", { namespace: "default" }).pipe(
              Effect.as(false),
              Effect.catchTag("NotFound", () => Effect.succeed(true))
            )
          )
          const after = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
          assert.isUndefined(after.data?.sample, "cleanup removed the registry entry")
          yield* eventually(
            "the Deployment is garbage-collected",
            KubeClient.get(Resource.Deployment, "sample", { namespace: "default" }).pipe(
              Effect.as(false),
              Effect.catchTag("NotFound", () => Effect.succeed(true))
            )
          )

          // The "Try it" lines it printed, run as printed (bash, the real kubectl) on the sample again: the webhooks
          // it serves and installed default `replicas`, warn about an unpinned image and protect from deletion.
          yield* KubeClient.create(WebApp, samples("default")[0]!)
          const lines = [...job.output().matchAll(/^ {2}(KUBECONFIG=\S+ kubectl .*)$/gm)].map((m) => m[1]!)
          assertTryIt(yield* runAll(lines, "/nonexistent/kubeconfig"))
        }).pipe(Effect.provide(client))

        assert.include(job.output(), "Installed MutatingWebhookConfiguration webapp-operator-mutating")
        assert.include(job.output(), "Installed ValidatingWebhookConfiguration webapp-operator-validating")
        assert.include(job.output(), "KUBECONFIG is set but ignored")

        // SIGTERM: a graceful, clean exit, and the kubeconfig (it holds the server's token) is removed.
        assert.isTrue(fs.existsSync(job.kubeconfig))
        const code = yield* Effect.callback<number | null>((resume) => {
          job.child.on("exit", (c) => resume(Effect.succeed(c)))
          job.child.kill("SIGTERM")
        }).pipe(Effect.timeout("15 seconds"))
        assert.strictEqual(code, 0, job.output())
        assert.isFalse(fs.existsSync(job.kubeconfig), "the kubeconfig is removed on exit")
      }),
    { timeout: real ? 120_000 : 60_000 }
  )

  it.live(
    "a WebApp created as v1alpha1 is stored as v1, reconciled, and reads back as written in both versions; " +
      "the README's kubectl lines show it",
    () =>
      Effect.gen(function*() {
        const job = yield* startMainJob
        const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(job.kubeconfig))
        const inDefault = { namespace: "default" }
        yield* Effect.gen(function*() {
          // a registry with a port, a tag and instances: the Deployment runs registry:5000/app:1.2, twice
          const written = {
            apiVersion: WebAppV1alpha1.apiVersion,
            kind: WebAppV1alpha1.kind,
            metadata: { name: "from-alpha", namespace: "default", labels: { tier: "web" } },
            spec: { image: { repository: "registry:5000/app", tag: "1.2" }, instances: 2, port: 8080 }
          }
          const created = yield* KubeClient.create(WebAppV1alpha1, written)
          assert.strictEqual(created.apiVersion, WebAppV1alpha1.apiVersion)
          assert.deepStrictEqual(created.spec, written.spec)
          yield* eventually(
            "the Deployment of the v1alpha1 app: 2 replicas of registry:5000/app:1.2",
            deployed("from-alpha", 2, "registry:5000/app:1.2")
          )
          yield* eventually(
            "the v1alpha1 app is Ready",
            Effect.map(KubeClient.get(WebAppV1alpha1, "from-alpha", inDefault), (a) =>
              a.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true)
          )
          // stored as v1 (what the operator reads), without the conversion's annotation: v1alpha1 loses nothing
          const asV1 = yield* KubeClient.get(WebApp, "from-alpha", inDefault)
          assert.strictEqual(asV1.apiVersion, WebApp.apiVersion)
          assert.deepStrictEqual(asV1.spec, { image: "registry:5000/app:1.2", replicas: 2, port: 8080 })
          assert.deepStrictEqual(asV1.metadata.labels, written.metadata.labels)
          assert.isUndefined(asV1.metadata.annotations)
          // as v1alpha1: what was written, and the status the operator wrote (as v1)
          const asAlpha = yield* KubeClient.get(WebAppV1alpha1, "from-alpha", inDefault)
          assert.strictEqual(asAlpha.apiVersion, WebAppV1alpha1.apiVersion)
          assert.deepStrictEqual(asAlpha.spec, written.spec)
          assert.deepStrictEqual(
            { name: asAlpha.metadata.name, namespace: asAlpha.metadata.namespace, labels: asAlpha.metadata.labels },
            written.metadata
          )
          assert.isUndefined(asAlpha.metadata.annotations)
          assert.strictEqual(asAlpha.metadata.uid, asV1.metadata.uid)
          assert.strictEqual(asAlpha.metadata.resourceVersion, asV1.metadata.resourceVersion)
          assert.deepStrictEqual(asAlpha.status, asV1.status)

          // a digest and no instances: the defaulting webhook (on v1) gives replicas 1, read back as instances 1
          const digest = "nginx@sha256:" + "0123456789abcdef".repeat(4)
          yield* KubeClient.create(WebAppV1alpha1, {
            apiVersion: WebAppV1alpha1.apiVersion,
            kind: WebAppV1alpha1.kind,
            metadata: { name: "pinned", namespace: "default" },
            spec: { image: { repository: digest }, port: 80 }
          })
          yield* eventually(
            "the Deployment of the digest app: 1 replica of the digest",
            deployed("pinned", 1, digest)
          )
          assert.deepStrictEqual((yield* KubeClient.get(WebApp, "pinned", inDefault)).spec, {
            image: digest,
            replicas: 1,
            port: 80
          })
          assert.deepStrictEqual((yield* KubeClient.get(WebAppV1alpha1, "pinned", inDefault)).spec, {
            image: { repository: digest },
            instances: 1,
            port: 80
          })
          // the list as v1alpha1: every app converted, the sample (written as v1) too
          const list = yield* KubeClient.list(WebAppV1alpha1, inDefault)
          assert.deepStrictEqual(
            list.items.map((a) => [a.metadata.name, a.spec.image, a.spec.instances]).sort(),
            [
              ["from-alpha", { repository: "registry:5000/app", tag: "1.2" }, 2],
              ["pinned", { repository: digest }, 1],
              ["sample", { repository: "nginx", tag: "1.27" }, 2]
            ]
          )
        }).pipe(Effect.provide(client))

        // the README's lines (examples/webapp/README.md, "The webhooks"), with the real kubectl
        const [create, get, alpha, v1] = yield* runAll(readmeConversionLines, job.kubeconfig)
        const all = [create, get, alpha, v1].map((r) =>
          `$ ${r!.line}\n${r!.stdout}${r!.stderr}`
        ).join("\n")
        assert.strictEqual(create!.code, 0, all)
        assert.include(create!.stdout, "webapp.apps.reconcile.dev/hello-alpha created", all)
        const [header] = get!.stdout.trim().split("\n").map((line) => line.trim().split(/\s{2,}/))
        assert.deepStrictEqual(header, ["NAME", "READY", "INSTANCES", "AGE"], all)
        const asAlpha = parse(alpha!.stdout)
        assert.strictEqual(asAlpha.apiVersion, "apps.reconcile.dev/v1alpha1", all)
        assert.deepStrictEqual(
          asAlpha.spec,
          { image: { repository: "nginx", tag: "1.27" }, instances: 1, port: 80 },
          all
        )
        assert.isUndefined(asAlpha.metadata.annotations, all)
        const asV1 = parse(v1!.stdout)
        assert.strictEqual(asV1.apiVersion, "apps.reconcile.dev/v1", all)
        assert.deepStrictEqual(asV1.spec, { image: "nginx:1.27", replicas: 1, port: 80 }, all)
        assert.strictEqual(asV1.metadata.uid, asAlpha.metadata.uid, all)
      }),
    { timeout: real ? 120_000 : 60_000 }
  )
})

/** Whether the Deployment `name` (in `default`) exists and runs `replicas` of `image`. */
const deployed = (name: string, replicas: number, image: string) =>
  KubeClient.get(Resource.Deployment, name, { namespace: "default" }).pipe(
    Effect.map((d) => d.spec?.replicas === replicas && d.spec.template?.spec?.containers[0]?.image === image),
    Effect.catchTag("NotFound", () => Effect.succeed(false))
  )

/** The README's conversion lines: create as v1alpha1, list as v1alpha1 (INSTANCES), read back in both versions. */
const readmeConversionLines = [
  `kubectl create -n default -f - <<< '${
    JSON.stringify({
      apiVersion: "apps.reconcile.dev/v1alpha1",
      kind: "WebApp",
      metadata: { name: "hello-alpha" },
      spec: { image: { repository: "nginx", tag: "1.27" }, port: 80 }
    })
  }'`,
  "kubectl get webapps.v1alpha1.apps.reconcile.dev -n default",
  "kubectl get webapps.v1alpha1.apps.reconcile.dev hello-alpha -n default -o yaml",
  "kubectl get webapps.v1.apps.reconcile.dev hello-alpha -n default -o yaml"
]
