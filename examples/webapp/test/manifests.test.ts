/**
 * The generated manifests: `config/` is what `Manifests.generate` makes of the operator, and the RBAC it grants is
 * exactly what the operator needs — proved by running the operator (in-process, TestClock) through its create,
 * update, invalid-spec, undecodable-spec and delete (finalizer) paths with leader election, recording every request
 * it sends, and checking each against the generated ClusterRole and Role.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Manager } from "@reconcile/core"
import { Cache, CertificateManager, KubeClient, LeaseLeaderElection, Operator, Resource } from "@reconcile/kube"
import { Simulators, TestApiServer, TestKube } from "@reconcile/testkit"
import { Effect, Layer, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parse, parseAllDocuments } from "yaml"
import { conversion } from "../src/conversion.js"
import { files, objects, rules } from "../src/manifests.js"
import { name, operator } from "../src/operator.js"
import { registryName } from "../src/reconcile.js"
import { tagPattern, WebApp, WebAppAnySpec, WebAppV1alpha1 } from "../src/WebApp.js"
import { checks, defaults } from "../src/webhooks.js"
import { laxCrdPatch } from "./support/crd.js"

describe("config/", () => {
  it("the committed manifests are what the code generates (run `npm run generate -w examples/webapp`)", () => {
    const dir = path.join(import.meta.dirname, "..", "config")
    const written = (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((f) => /\.(yaml|json)$/.test(f))
    assert.deepStrictEqual(written.sort(), Object.keys(files()).sort())
    for (const [file, text] of Object.entries(files())) {
      assert.strictEqual(fs.readFileSync(path.join(dir, file), "utf8"), text, file)
    }
  })

  it("the CRD serves v1 (stored) and v1alpha1, each with its status and scale subresources, spec fields and columns", () => {
    const { conversion: stanza, ...spec } = parse(files()["crd.yaml"]!).spec
    const manifest = { ...parse(files()["crd.yaml"]!), spec }
    const crds = Resource.crdManifests([WebApp, WebAppV1alpha1])
    assert(Result.isSuccess(crds))
    assert.deepStrictEqual(manifest, JSON.parse(JSON.stringify(crds.success[0])))
    const [version, alpha] = manifest.spec.versions
    assert.deepStrictEqual([version.name, version.storage, alpha.name, alpha.storage], ["v1", true, "v1alpha1", false])
    assert.deepStrictEqual(version.subresources, {
      status: {},
      scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.readyReplicas" }
    })
    assert.deepStrictEqual(alpha.subresources, {
      status: {},
      scale: { specReplicasPath: ".spec.instances", statusReplicasPath: ".status.readyReplicas" }
    })
    assert.deepStrictEqual(Object.keys(version.schema.openAPIV3Schema.properties.spec.properties).sort(), [
      "image",
      "port",
      "replicas"
    ])
    // replicas is optional: the defaulting webhook sets it (a CRD `default` would take the decision out of the code)
    assert.deepStrictEqual(version.schema.openAPIV3Schema.properties.spec.required, ["image", "port"])
    assert.isUndefined(version.schema.openAPIV3Schema.properties.spec.properties.replicas.default)
    assert.deepStrictEqual(version.additionalPrinterColumns.map((c: { name: string }) => c.name), [
      "Ready",
      "Replicas",
      "Age"
    ])
    // v1alpha1: the image in parts (the tag checked by the API server too), instances instead of replicas
    const alphaSpec = alpha.schema.openAPIV3Schema.properties.spec
    assert.deepStrictEqual(Object.keys(alphaSpec.properties).sort(), ["image", "instances", "port"])
    assert.deepStrictEqual(alphaSpec.required, ["image", "port"])
    assert.deepStrictEqual(alphaSpec.properties.image.required, ["repository"])
    assert.strictEqual(alphaSpec.properties.image.properties.tag.pattern, tagPattern.source)
    assert.deepStrictEqual(alpha.additionalPrinterColumns.map((c: { name: string }) => c.name), [
      "Ready",
      "Instances",
      "Age"
    ])
    // the conversion stanza: kube-apiserver calls the operator's webhook Service (the CertificateManager injects the
    // CA bundle, as into the webhook configurations)
    assert.deepStrictEqual(stanza, {
      strategy: "Webhook",
      webhook: {
        conversionReviewVersions: ["v1"],
        clientConfig: {
          service: { name: `${name}-webhook`, namespace: `${name}-system`, path: conversion.route.path, port: 443 }
        }
      }
    })
  })

  it("one operator: Namespace, CRD, ServiceAccount, RBAC, Deployment, metrics Service, the webhooks' and monitoring", () => {
    const docs = Object.entries(files()).filter(([file]) => file.endsWith(".yaml"))
      .flatMap(([, text]) => parseAllDocuments(text).map((d) => d.toJS()))
    assert.deepStrictEqual(docs.map((o) => `${o.kind} ${o.metadata.name}`).sort(), [
      `ClusterRole ${name}`,
      `ClusterRoleBinding ${name}`,
      `ConfigMap ${name}-dashboard`,
      "CustomResourceDefinition webapps.apps.reconcile.dev",
      `Deployment ${name}`,
      `MutatingWebhookConfiguration ${name}-mutating`,
      `Namespace ${name}-system`,
      `PrometheusRule ${name}-alerts`,
      `Role ${name}-leader-election`,
      `Role ${name}-webhook-certificates`,
      `RoleBinding ${name}-leader-election`,
      `RoleBinding ${name}-webhook-certificates`,
      `Service ${name}-metrics`,
      `Service ${name}-webhook`,
      `ServiceAccount ${name}`,
      `ServiceMonitor ${name}-metrics`,
      `ValidatingWebhookConfiguration ${name}-validating`
    ])
    const deployment = docs.find((o) => o.kind === "Deployment")
    assert.strictEqual(deployment.metadata.name, name)
    assert.strictEqual(deployment.metadata.namespace, `${name}-system`)
    const container = deployment.spec.template.spec.containers[0]
    assert.include(container.args, "--webhook-port=9443")
    assert.deepInclude(container.ports, { name: "webhook", containerPort: 9443, protocol: "TCP" })
  })

  it("the webhooks: the defaulter on create and update, the validator on create, update and delete, via the Service", () => {
    const docs = parseAllDocuments(files()["webhook.yaml"]!).map((d) => d.toJS())
    const service = { name: `${name}-webhook`, namespace: `${name}-system`, port: 443 }
    const [mutating, validating] = docs.map((o) => o.webhooks[0])
    assert.deepStrictEqual(
      docs.map((o) => [o.kind, o.webhooks.length]),
      [["MutatingWebhookConfiguration", 1], ["ValidatingWebhookConfiguration", 1]]
    )
    assert.strictEqual(mutating.name, defaults.name)
    assert.deepStrictEqual(mutating.clientConfig, { service: { ...service, path: defaults.path } })
    assert.deepStrictEqual(mutating.rules[0].operations, ["CREATE", "UPDATE"])
    assert.strictEqual(validating.name, checks.name)
    assert.deepStrictEqual(validating.clientConfig, { service: { ...service, path: checks.path } })
    assert.deepStrictEqual(validating.rules[0].operations, ["CREATE", "UPDATE", "DELETE"])
    for (const webhook of [mutating, validating]) {
      assert.deepStrictEqual(webhook.rules[0].resources, ["webapps"], "not the status or scale subresources")
      assert.strictEqual(webhook.failurePolicy, "Fail")
      assert.strictEqual(webhook.sideEffects, "None")
    }
    const webhookService = parseAllDocuments(files()["workload.yaml"]!).map((d) => d.toJS())
      .find((o) => o.kind === "Service" && o.metadata.name === service.name)
    assert.deepStrictEqual(webhookService.spec.ports, [{
      name: "webhook",
      port: 443,
      targetPort: "webhook",
      protocol: "TCP"
    }])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// the RBAC is exactly what the operator needs

/** One authorization check of the API server: what RBAC decides on. */
interface Access {
  readonly verb: string
  readonly group: string
  readonly resource: string
  readonly subresource: string | undefined
  readonly namespace: string | undefined
}

const key = (a: Pick<Access, "verb" | "group" | "resource" | "subresource">) =>
  `${a.verb} ${a.group === "" ? "core" : a.group}/${a.resource}${
    a.subresource === undefined ? "" : `/${a.subresource}`
  }`

/** The kinds the operator's objects refer to as owners (apiVersion/kind → resource). */
const ownerKinds = new Map([WebApp, Resource.Deployment, Resource.Service].map((r) => [`${r.apiVersion}/${r.kind}`, r]))

/**
 * A `KubeClient` recording the authorization checks each request causes, as kube-apiserver makes them: the
 * request's verb on its resource and subresource; a server-side apply that creates the object is authorized as
 * `create` too; an owner reference with `blockOwnerDeletion` needs `update` on the owner's `finalizers`
 * (OwnerReferencesPermissionEnforcement).
 */
const recording = (accesses: Array<Access>) =>
  Layer.effect(
    KubeClient.KubeClient,
    Effect.gen(function*() {
      const inner = yield* KubeClient.KubeClient
      const record = (
        verb: string,
        resource: Resource.Resource<any>,
        namespace: string | undefined,
        subresource?: string
      ) =>
        accesses.push({
          verb,
          group: resource.group,
          resource: resource.plural,
          subresource,
          namespace: resource.scope === "Namespaced" ? namespace ?? "default" : undefined
        })
      const owners = (body: unknown, namespace: string | undefined) => {
        const refs = (body as { metadata?: { ownerReferences?: Array<any> } } | undefined)?.metadata?.ownerReferences
        for (const ref of refs ?? []) {
          if (ref.blockOwnerDeletion !== true) continue
          const owner = ownerKinds.get(`${ref.apiVersion}/${ref.kind}`)
          assert.isDefined(owner, `an owner of an unknown kind: ${ref.apiVersion} ${ref.kind}`)
          record("update", owner!, namespace, "finalizers")
        }
      }
      const service: KubeClient.KubeClient.Service = {
        get: (resource, name, options) => {
          record("get", resource, options?.namespace)
          return inner.get(resource, name, options)
        },
        list: (resource, options) => {
          record("list", resource, options?.namespace)
          return inner.list(resource, options)
        },
        listAll: (resource, options) => {
          record("list", resource, options?.namespace)
          return inner.listAll(resource, options)
        },
        create: (resource, object, options) => {
          record("create", resource, options?.namespace ?? object.metadata?.namespace)
          owners(object, options?.namespace)
          return inner.create(resource, object, options)
        },
        replace: (resource, object, options) => {
          record("update", resource, options?.namespace ?? object.metadata?.namespace)
          owners(object, options?.namespace)
          return inner.replace(resource, object, options)
        },
        patch: (resource, name, patch, options) =>
          Effect.gen(function*() {
            record("patch", resource, options.namespace)
            owners(patch, options.namespace)
            if (options.type === "apply") {
              // kube-apiserver authorizes an apply that creates the object as `create` too
              const exists = yield* Effect.exit(inner.get(resource, name, { namespace: options.namespace }))
              if (exists._tag === "Failure") record("create", resource, options.namespace)
            }
            return yield* inner.patch(resource, name, patch, options)
          }),
        delete: (resource, name, options) => {
          record("delete", resource, options?.namespace)
          return inner.delete(resource, name, options)
        },
        replaceStatus: (resource, object, options) => {
          record("update", resource, options?.namespace ?? object.metadata?.namespace, "status")
          return inner.replaceStatus(resource, object, options)
        },
        patchStatus: (resource, name, patch, options) => {
          record("patch", resource, options.namespace, "status")
          return inner.patchStatus(resource, name, patch, options)
        },
        watch: (resource, options) =>
          Stream.unwrap(Effect.sync(() => {
            record("watch", resource, options?.namespace)
            return inner.watch(resource, options)
          }))
      }
      return service
    })
  )

const matches = (values: ReadonlyArray<string>, value: string) => values.includes("*") || values.includes(value)

const allows = (rule: Operator.PolicyRule, a: Access) =>
  matches(rule.apiGroups, a.group) &&
  matches(rule.resources, a.subresource === undefined ? a.resource : `${a.resource}/${a.subresource}`) &&
  matches(rule.verbs, a.verb) && (rule.resourceNames === undefined || rule.resourceNames.length === 0)

const settle = TestKube.settle
const advance = (millis: number) => Effect.andThen(settle, Effect.andThen(TestClock.adjust(millis), settle))

const app = (appName: string, spec: { image: string; replicas: number; port: number }) => ({
  apiVersion: WebApp.apiVersion,
  kind: WebApp.kind,
  metadata: { name: appName, namespace: "default" },
  spec
})

/** A Role of the manifests, by name. */
const roleNamed = (roleName: string) =>
  objects().find((o) => o.kind === "Role" && (o.metadata as { name?: string } | undefined)?.name === roleName) as {
    readonly rules: ReadonlyArray<Operator.PolicyRule>
  }

/** A rule for objects by name: the webhook certificate's (`CertificateManager.rbac`). */
const isNamed = (rule: Operator.PolicyRule) => (rule.resourceNames ?? []).length > 0

describe("RBAC", () => {
  it("grants no wildcard, and the Lease permissions only in the operator's namespace", () => {
    for (const rule of rules()) {
      for (const list of [rule.apiGroups, rule.resources, rule.verbs]) assert.notInclude(list, "*")
      assert.notInclude(rule.resources, "leases", "leases are in the namespaced Role")
    }
    const role = objects().find((o) => o.kind === "Role") as { metadata: { namespace: string } }
    assert.strictEqual(role.metadata.namespace, `${name}-system`)
  })

  it("the webhook certificate's permissions are CertificateManager.rbac's, by name: its Secret, the configurations, the CRD", () => {
    const settings = Operator.webhookSettings(operator, `${name}-system`)!
    assert.strictEqual(settings.certificates._tag, "Managed")
    const expected = settings.certificates._tag === "Managed"
      ? CertificateManager.rbac(settings.certificates.options)
      : []
    const certificateRole = roleNamed(`${name}-webhook-certificates`)
    const named = [...rules().filter(isNamed), ...certificateRole.rules]
    const text = (list: ReadonlyArray<Operator.PolicyRule>) =>
      list.map((r) => JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? [], r.verbs])).sort()
    assert.deepStrictEqual(text(named), text(expected))
    assert.deepStrictEqual(
      [...new Set(named.flatMap((r) => r.resourceNames ?? []))].sort(),
      [`${name}-mutating`, `${name}-validating`, `${name}-webhook-tls`, "webapps.apps.reconcile.dev"]
    )
  })

  it.effect("every request of the running operator is allowed by the generated rules, and every rule is used", () =>
    Effect.gen(function*() {
      const namespace = `${name}-system`
      const accesses: Array<Access> = []
      const running = operator.layer.pipe(
        Layer.provide(Manager.layer()),
        Layer.provide(LeaseLeaderElection.layer({ name, namespace, identity: "test" })),
        Layer.provide(Cache.layer()),
        Layer.provide(recording(accesses))
      )
      const setup = Layer.effectDiscard(
        Effect.gen(function*() {
          yield* KubeClient.patch(
            Resource.CustomResourceDefinition,
            "webapps.apps.reconcile.dev",
            Resource.crdManifest(WebApp),
            {
              type: "apply",
              fieldManager: "test"
            }
          )
          yield* KubeClient.create(Resource.Namespace, { metadata: { name: namespace } })
        }).pipe(Effect.orDie)
      )
      const ctx = yield* Layer.build(
        running.pipe(
          Layer.provideMerge(Simulators.layerControllerManager({ podReadyDelay: "1 second" })),
          Layer.provideMerge(setup),
          Layer.provideMerge(TestKube.layerWithCluster())
        )
      )
      yield* Effect.gen(function*() {
        // leader election, then create: finalizer, children (apply creates them), registry (created), status, event
        yield* advance(5_000)
        yield* KubeClient.create(WebApp, app("web", { image: "nginx:1", replicas: 2, port: 8080 }))
        yield* KubeClient.create(WebApp, app("shop", { image: "shop:1", replicas: 1, port: 80 }))
        yield* advance(2_000)
        // update: children and registry patched
        yield* KubeClient.patch(WebApp, "web", { spec: { replicas: 3, image: "nginx:2" } }, {
          type: "merge",
          namespace: "default"
        })
        yield* advance(2_000)
        // an invalid spec: Ready=False and a Warning event, twice (the second is the event's series: a patch)
        for (const replicas of [50, 2, 60]) {
          yield* KubeClient.patch(WebApp, "shop", { spec: { replicas } }, { type: "merge", namespace: "default" })
          yield* advance(2_000)
        }
        // a spec that no longer decodes: the app is read with any spec and its status written
        yield* KubeClient.patch(Resource.CustomResourceDefinition, "webapps.apps.reconcile.dev", laxCrdPatch, {
          type: "merge"
        })
        yield* KubeClient.patch(WebApp, "shop", { spec: { replicas: "three" } }, {
          type: "merge",
          namespace: "default"
        }).pipe(Effect.ignore)
        yield* advance(2_000)
        // delete: the finalizer's cleanup (registry entry removed, event) and its removal
        yield* KubeClient.del(WebApp, "web", { namespace: "default" })
        yield* KubeClient.del(WebAppAnySpec, "shop", { namespace: "default" }) // its spec no longer decodes
        yield* advance(5_000)
        const left = yield* KubeClient.list(WebAppAnySpec, { namespace: "default" })
        assert.deepStrictEqual(left.items.map((a) => a.metadata.name), [], "both apps are gone")
        const registry = yield* KubeClient.get(Resource.ConfigMap, registryName, { namespace: "default" })
        assert.deepStrictEqual(registry.data ?? {}, {}, "the cleanup ran")
      }).pipe(Effect.provide(ctx))

      // the controllers' rules: the webhook certificate's (by name) are its CertificateManager's, which the main job
      // runs beside the controllers (not here); the test above checks they are exactly what it asks for
      const clusterRules = rules().filter((rule) => !isNamed(rule))
      const role = roleNamed(`${name}-leader-election`)
      const denied = accesses.filter((a) =>
        !clusterRules.some((rule) => allows(rule, a)) &&
        !(a.namespace === namespace && role.rules.some((rule) => allows(rule, a)))
      )
      assert.deepStrictEqual([...new Set(denied.map((a) => `${key(a)} in ${a.namespace ?? "the cluster"}`))], [])

      // nothing granted goes unused, but for reads the general rules give every owned kind
      const used = new Set(accesses.map(key))
      const granted = [...clusterRules, ...role.rules].flatMap((rule) =>
        rule.apiGroups.flatMap((group) =>
          rule.resources.flatMap((resource) =>
            rule.verbs.map((verb) => {
              const [plural, subresource] = resource.split("/")
              return key({ verb, group, resource: plural!, subresource })
            })
          )
        )
      )
      const unused = granted.filter((g) => !used.has(g))
      assert.deepStrictEqual(unused, ["get core/services"], "granted but never used")
      assert.isTrue(used.has("update apps.reconcile.dev/webapps/finalizers"), "owner references block deletion")
      assert.isTrue(used.has("create apps/deployments"), "server-side apply created the Deployment")
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// the real kubectl

/** Runs /usr/bin/kubectl with the server's kubeconfig and a HOME of its own (never the user's ~/.kube); `stdin` fed. */
const kubectl = (server: TestApiServer.TestApiServer.Service, args: ReadonlyArray<string>, stdin = "") =>
  Effect.promise(() => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "webapp-kubectl-"))
    return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        "/usr/bin/kubectl",
        ["--kubeconfig", server.kubeconfigPath, "--cache-dir", path.join(home, "cache"), ...args],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, timeout: 20_000 },
        (error, stdout, stderr) => {
          fs.rmSync(home, { recursive: true, force: true })
          resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
        }
      ).stdin?.end(stdin)
    })
  })

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("kubectl", (it) => {
  it.effect("kubectl apply --server-side -f config/ creates everything; kubectl get webapps shows READY, REPLICAS, AGE; kubectl scale", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const dir = path.join(import.meta.dirname, "..", "config")
      const applied = yield* kubectl(server, ["apply", "--server-side", "-f", dir])
      assert.strictEqual(applied.code, 0, applied.stderr)
      assert.include(applied.stdout, "deployment.apps/webapp-operator serverside-applied")
      assert.include(
        applied.stdout,
        "mutatingwebhookconfiguration.admissionregistration.k8s.io/webapp-operator-mutating"
      )
      // the webhooks are registered at once, and nothing serves them here (no operator Pod behind their Service): with
      // `failurePolicy: Fail` the API server refuses WebApps until the operator runs. Without them, the rest goes on.
      const refused = yield* kubectl(
        server,
        ["create", "-n", "default", "-f", "-"],
        JSON.stringify(app("early", {
          image: "nginx:1",
          replicas: 1,
          port: 80
        }))
      )
      assert.notStrictEqual(refused.code, 0)
      assert.include(refused.stderr, `failed calling webhook "mwebapp.apps.reconcile.dev"`)
      assert.include(refused.stderr, `no endpoints available for service "webapp-operator-webhook"`)
      const removed = yield* kubectl(server, [
        "delete",
        "mutatingwebhookconfiguration/webapp-operator-mutating",
        "validatingwebhookconfiguration/webapp-operator-validating"
      ])
      assert.strictEqual(removed.code, 0, removed.stderr)
      // through the same cluster in-process: an app, and a Ready condition as the operator would write it
      yield* Effect.gen(function*() {
        yield* KubeClient.create(WebApp, app("web", { image: "nginx:1", replicas: 2, port: 80 }))
        const status = {
          conditions: [{
            type: "Ready",
            status: "True",
            reason: "DeploymentAvailable",
            message: "2/2 ready",
            lastTransitionTime: "2026-01-01T00:00:00Z"
          }]
        }
        yield* KubeClient.patchStatus(WebApp, "web", { status }, { type: "merge", namespace: "default" })
      }).pipe(Effect.provide(TestKube.layer))
      const table = yield* kubectl(server, ["get", "webapps", "-n", "default"])
      assert.strictEqual(table.code, 0, table.stderr)
      const [header, row] = table.stdout.trim().split("\n").map((line) => line.trim().split(/\s{2,}/))
      assert.deepStrictEqual(header, ["NAME", "READY", "REPLICAS", "AGE"])
      assert.deepStrictEqual(row!.slice(0, 3), ["web", "True", "2"])
      const scaled = yield* kubectl(server, ["scale", "webapp/web", "-n", "default", "--replicas=3"])
      assert.strictEqual(scaled.code, 0, scaled.stderr)
      const after = yield* kubectl(server, ["get", "webapp", "web", "-n", "default", "-o", "jsonpath={.spec.replicas}"])
      assert.strictEqual(after.stdout, "3")
    }))
})
