/**
 * `Manifests`: RBAC from what controllers declare, the generated objects and their validation, multi-version
 * CRDs, and the real kubectl applying the whole output (`kubectl apply --server-side -f -`) to a TestApiServer
 * and printing a custom resource's printer columns (`kubectl get`).
 */
import { assert, describe, expectTypeOf, it, layer } from "@effect/vitest"
import * as Manager from "@reconcile/core/Manager"
import { TestApiServer, TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, Exit, Layer, Result, Schema, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseAllDocuments } from "yaml"
import * as Admission from "../src/Admission.js"
import * as Cache from "../src/Cache.js"
import * as CertificateManager from "../src/CertificateManager.js"
import * as Conversion from "../src/Conversion.js"
import * as EventRecorder from "../src/EventRecorder.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Manifests from "../src/Manifests.js"
import * as MetadataOnly from "../src/MetadataOnly.js"
import * as Operator from "../src/Operator.js"
import * as Resource from "../src/Resource.js"
import * as Sharding from "../src/Sharding.js"

const common = {
  group: "example.com",
  kind: "Greeting",
  plural: "greetings",
  scope: "Namespaced",
  shortNames: ["gr"]
} as const

const GreetingV1 = Resource.custom({
  ...common,
  version: "v1",
  spec: Schema.Struct({ text: Schema.String }),
  status: Schema.Struct({ ready: Schema.optional(Schema.Boolean) })
})

const GreetingV2 = Resource.custom({
  ...common,
  version: "v2",
  storage: true,
  spec: Schema.Struct({ text: Schema.String, replicas: Schema.Int }),
  status: Schema.Struct({ ready: Schema.optional(Schema.Boolean), replicas: Schema.optional(Schema.Int) }),
  printerColumns: [
    { name: "Text", type: "string", jsonPath: ".spec.text" },
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
    { name: "Ready", type: "boolean", jsonPath: ".status.ready" }
  ],
  scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" }
})

const GreetingController = KubeController.make({
  name: "greeting",
  for: GreetingV2,
  owns: [Resource.ConfigMap, MetadataOnly.make(Resource.Deployment)],
  watches: [KubeController.watches({ resource: Resource.Secret, map: () => Effect.succeed([]) })],
  reconcile: () => Effect.void,
  rbac: [
    { resource: Resource.ConfigMap, verbs: ["delete"] },
    { resource: Resource.Pod, subresource: "log", verbs: ["get"] },
    { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get"], resourceNames: ["default"] }
  ]
})

const NamespaceController = KubeController.make({
  name: "namespaces",
  for: Resource.Namespace,
  reconcile: () => Effect.void
})

const operator = Operator.make({
  name: "greeting-operator",
  resources: [GreetingV1, GreetingV2],
  controllers: [GreetingController, NamespaceController],
  rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] }]
})

const generate = (o: Operator.Operator<any, any>, options?: Manifests.Options) =>
  Effect.runSync(Effect.exit(Manifests.generate(o, options)))

const objectsOf = (o: Operator.Operator<any, any>, options?: Manifests.Options) => {
  const exit = generate(o, options)
  assert.isTrue(Exit.isSuccess(exit), String(exit))
  return (exit as Exit.Success<ReadonlyArray<Record<string, any>>>).value
}

/** The ManifestsError of a generate that must fail (a success throws). */
const errorOf = (o: Operator.Operator<any, any>, options?: Manifests.Options): Manifests.ManifestsError =>
  Effect.runSync(Effect.flip(Manifests.generate(o, options)))

describe("KubeController declarations", () => {
  it("a controller is a value that carries what it declares", () => {
    assert.isTrue(KubeController.isKubeController(GreetingController))
    assert.strictEqual(GreetingController.name, "greeting")
    assert.strictEqual(GreetingController.for, GreetingV2)
    assert.deepStrictEqual(GreetingController.owns.map((r) => r.plural), ["configmaps", "deployments"])
    assert.deepStrictEqual(GreetingController.watches, [Resource.Secret])
    assert.strictEqual(GreetingController.rbac.length, 3)
  })

  it("the Operator gets the declarations from the values, whatever Layer runs them", () => {
    // the controllers' Layers built with ordinary Layer functions: a service provided to one, merged with another
    const layer = Layer.mergeAll(
      KubeController.layer(GreetingController).pipe(
        Layer.provide(EventRecorder.layer({ controller: "example.com/greeting" }))
      ),
      KubeController.layer(NamespaceController)
    )
    const composed = Operator.make({
      name: "greeting-operator",
      resources: [GreetingV1, GreetingV2],
      controllers: [GreetingController, NamespaceController],
      rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] }],
      layer
    })
    assert.strictEqual(composed.layer, layer, "the operator runs the Layer it is given")
    assert.deepStrictEqual(Manifests.rules(composed), Manifests.rules(operator))
    assert.deepStrictEqual(objectsOf(composed), objectsOf(operator))
  })

  it("a controller made otherwise is declared with a plain Declaration beside the Layer that runs it", () => {
    const declared = Operator.make({
      name: "cm-operator",
      controllers: [{ name: "cm", for: Resource.ConfigMap, owns: [], watches: [], namespace: undefined, rbac: [] }],
      layer: Layer.empty
    })
    assert.deepStrictEqual(Manifests.rules(declared)[0], {
      apiGroups: [""],
      resources: ["configmaps"],
      verbs: ["get", "list", "watch", "patch"]
    })
  })
})

describe("Manifests.rules", () => {
  it("least privilege from for / owns / watches / rbac / operator rules, merged and sorted", () => {
    assert.deepStrictEqual(Manifests.rules(operator), [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create", "patch", "delete"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch", "patch"] },
      { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["serviceaccounts"], resourceNames: ["default"], verbs: ["get"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch", "create", "patch"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] },
      { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: ["example.com"], resources: ["greetings"], verbs: ["get", "list", "watch", "patch"] },
      { apiGroups: ["example.com"], resources: ["greetings/finalizers"], verbs: ["update"] },
      { apiGroups: ["example.com"], resources: ["greetings/status"], verbs: ["patch"] }
    ])
  })

  it.prop(
    "the rules do not depend on the order of controllers or of their entries, and never hold a wildcard",
    [Arbitrary.array(Arbitrary.schema(Schema.Literals([0, 1, 2, 3, 4, 5])), { maxLength: 8 })],
    ([drawn]) => {
      const picked = [...new Set([0, ...drawn])]
      const all = [Resource.ConfigMap, Resource.Secret, Resource.Service, Resource.Deployment, Resource.Pod, GreetingV1]
      const chosen = picked.map((i) => all[i]!)
      const controllers = (resources: ReadonlyArray<Resource.Resource<any>>) =>
        resources.map((r, i) =>
          KubeController.make({
            name: `c${i}`,
            for: r,
            // what a controller owns depends on its resource alone, not on the order
            owns: all.slice(all.indexOf(r) + 1, all.indexOf(r) + 3),
            reconcile: () => Effect.void
          })
        )
      const forward = Manifests.rules(Operator.make({ name: "p", controllers: controllers(chosen) }))
      const backward = Manifests.rules(Operator.make({ name: "p", controllers: controllers([...chosen].reverse()) }))
      const flat = (rules: ReadonlyArray<Operator.PolicyRule>) =>
        new Set(rules.flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${r.apiGroups[0]} ${res} ${v}`))))
      assert.deepStrictEqual(flat(forward), flat(backward))
      for (const rule of forward) {
        assert.notInclude(rule.verbs, "*")
        assert.notInclude(rule.resources, "*")
        assert.notInclude(rule.apiGroups, "*")
      }
    }
  )
})

describe("Manifests.rules merging", () => {
  const resources = [Resource.ConfigMap, Resource.Secret, Resource.Deployment, Resource.Lease, GreetingV1]
  const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"] as const
  const Entry = Schema.Struct({
    resource: Schema.Literals([0, 1, 2, 3, 4]),
    subresource: Schema.Literals(["", "status", "scale"]),
    verbs: Schema.Array(Schema.Literals(verbs))
  })

  it.prop(
    "the merged rules allow exactly what the entries ask for: nothing lost, nothing added, one rule per verb set",
    [Arbitrary.array(Arbitrary.schema(Entry), { maxLength: 12 })],
    ([entries]) => {
      const permissions = entries.map((e) => ({
        resource: resources[e.resource]!,
        ...(e.subresource === "" ? {} : { subresource: e.subresource }),
        verbs: e.verbs
      }))
      const base = KubeController.make({ name: "c", for: Resource.Namespace, reconcile: () => Effect.void })
      const withRbac = KubeController.make({
        name: "c",
        for: Resource.Namespace,
        reconcile: () => Effect.void,
        rbac: permissions
      })
      const flat = (rules: ReadonlyArray<Operator.PolicyRule>) =>
        rules.flatMap((r) =>
          r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g} ${res} ${v}`)))
        )
      const expected = new Set([
        ...flat(Manifests.rules(Operator.make({ name: "p", controllers: [base] }))),
        ...permissions.flatMap((p) =>
          p.verbs.map((v) =>
            `${p.resource.group} ${p.resource.plural}${"subresource" in p ? `/${p.subresource}` : ""} ${v}`
          )
        )
      ])
      const rules = Manifests.rules(Operator.make({ name: "p", controllers: [withRbac] }))
      const got = flat(rules)
      for (const rule of rules) {
        assert.isAbove(rule.verbs.length, 0, "a rule without verbs is invalid")
        assert.isAbove(rule.resources.length, 0)
      }
      assert.strictEqual(got.length, new Set(got).size, "no (group, resource, verb) twice")
      assert.deepStrictEqual(new Set(got), expected)
      const verbSets = rules.map((r) => `${r.apiGroups[0]} ${r.verbs.join(",")}`)
      assert.strictEqual(verbSets.length, new Set(verbSets).size, "resources with equal verbs share a rule")
      assert.deepStrictEqual(rules, Manifests.rules(Operator.make({ name: "p", controllers: [withRbac] })))
    }
  )
})

describe("Manifests.generate", () => {
  it("the objects, in apply order, with the main job's flags and a hardened Deployment", () => {
    const objects = objectsOf(operator, { image: "ghcr.io/example/greeting-operator:1.2.3" })
    assert.deepStrictEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`), [
      "Namespace/greeting-operator-system",
      "CustomResourceDefinition/greetings.example.com",
      "ServiceAccount/greeting-operator",
      "ClusterRole/greeting-operator",
      "ClusterRoleBinding/greeting-operator",
      "Role/greeting-operator-leader-election",
      "RoleBinding/greeting-operator-leader-election",
      "Deployment/greeting-operator",
      "Service/greeting-operator-metrics"
    ])
    const deployment = objects.find((o) => o.kind === "Deployment")!
    const pod = deployment.spec.template.spec
    const container = pod.containers[0]
    assert.strictEqual(container.image, "ghcr.io/example/greeting-operator:1.2.3")
    assert.deepStrictEqual(container.args, [
      "--in-cluster",
      "--leader-elect",
      "--metrics-port=8080",
      "--health-port=8081",
      "--log-format=json"
    ])
    assert.strictEqual(pod.serviceAccountName, "greeting-operator")
    assert.isTrue(pod.securityContext.runAsNonRoot)
    assert.isTrue(container.securityContext.readOnlyRootFilesystem)
    assert.isFalse(container.securityContext.allowPrivilegeEscalation)
    assert.deepStrictEqual(container.livenessProbe.httpGet, { path: "/healthz", port: "health" })
    assert.deepStrictEqual(container.readinessProbe.httpGet, { path: "/readyz", port: "health" })
    assert.deepStrictEqual(container.ports.map((p: any) => [p.name, p.containerPort]), [
      ["metrics", 8080],
      ["health", 8081]
    ])
    assert.deepStrictEqual(container.env, [
      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }
    ])
    assert.isDefined(container.resources.limits.memory)
    const service = objects.find((o) => o.kind === "Service")!
    assert.deepStrictEqual(service.spec.ports[0], {
      name: "metrics",
      port: 8080,
      targetPort: "metrics",
      protocol: "TCP"
    })
    const role = objects.find((o) => o.kind === "Role")!
    assert.strictEqual(role.metadata.namespace, "greeting-operator-system")
    assert.deepStrictEqual(role.rules, [
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }
    ])
    const clusterRole = objects.find((o) => o.kind === "ClusterRole")!
    assert.deepStrictEqual(clusterRole.rules, Manifests.rules(operator))
  })

  it("options: namespace, replicas, ports, no leader election", () => {
    const objects = objectsOf(operator, {
      namespace: "ops",
      replicas: 1,
      leaderElection: false,
      metricsPort: 9090,
      healthPort: 9091
    })
    assert.isUndefined(objects.find((o) => o.kind === "Role"))
    const deployment = objects.find((o) => o.kind === "Deployment")!
    assert.strictEqual(deployment.metadata.namespace, "ops")
    assert.strictEqual(deployment.spec.template.spec.containers[0].image, "greeting-operator:latest")
    assert.deepStrictEqual(deployment.spec.template.spec.containers[0].args, [
      "--in-cluster",
      "--metrics-port=9090",
      "--health-port=9091",
      "--log-format=json"
    ])
    assert.strictEqual(objects[0]!.metadata.name, "ops")
  })

  it("invalid names, namespaces, images and options are a ManifestsError saying what is wrong", () => {
    const named = (name: string) => Operator.make({ name, controllers: [NamespaceController] })
    const cases: ReadonlyArray<[Operator.Operator<any, any>, Manifests.Options, string, RegExp]> = [
      [named("My_Operator"), {}, "InvalidName", /"My_Operator" is not a DNS-1123 label/],
      [named(""), {}, "InvalidName", /the operator name is empty/],
      [named("a".repeat(64)), {}, "InvalidName", /64 characters, at most 63/],
      [named("1operator"), {}, "InvalidName", /must start with a letter/],
      [named("ok"), { namespace: "Kube System" }, "InvalidNamespace", /"Kube System" is not a DNS-1123 label/],
      [named("ok"), { image: "Ghcr.io/Me/Op:1" }, "InvalidImage", /not a valid image reference/],
      [named("ok"), { image: "op:1 --privileged" }, "InvalidImage", /not a valid image reference/],
      [named("ok"), { image: "" }, "InvalidImage", /the image is empty/],
      [named("ok"), { replicas: -1 }, "InvalidOption", /replicas must be a non-negative integer/],
      [named("ok"), { replicas: 3, leaderElection: false }, "InvalidOption", /without leader election/],
      [named("ok"), { metricsPort: 70000 }, "InvalidOption", /metricsPort must be an integer from 1 to 65535/],
      [named("ok"), { metricsPort: 8081 }, "InvalidOption", /both 8081/]
    ]
    for (const [o, options, reason, message] of cases) {
      const error = errorOf(o, options)
      assert.strictEqual(error._tag, "ManifestsError")
      assert.strictEqual(error.reason, reason, error.message)
      assert.match(error.message, message)
    }
    // valid references
    for (
      const image of ["nginx", "localhost:5000/a/b:tag", "ghcr.io/me/op@sha256:" + "a".repeat(64), "a.b/c_d:1.0-rc"]
    ) {
      assert.isTrue(Exit.isSuccess(generate(named("ok"), { image })), image)
    }
  })
})

describe("CRDs", () => {
  it("several versions of one kind make one CRD: every version served, one stored, columns and scale", () => {
    const crds = Resource.crdManifests([GreetingV1, GreetingV2])
    assert.isTrue(Result.isSuccess(crds))
    if (!Result.isSuccess(crds)) return
    assert.strictEqual(crds.success.length, 1)
    const crd = crds.success[0]! as any
    assert.deepStrictEqual(crd.spec.versions.map((v: any) => [v.name, v.served, v.storage]), [
      ["v2", true, true],
      ["v1", true, false]
    ])
    const v2 = crd.spec.versions[0]
    assert.deepStrictEqual(v2.subresources, {
      status: {},
      scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" }
    })
    assert.deepStrictEqual(v2.additionalPrinterColumns.map((c: any) => c.name), ["Text", "Replicas", "Ready", "Age"])
    assert.isUndefined(crd.spec.versions[1].additionalPrinterColumns)
    assert.deepStrictEqual(crd.spec.names.shortNames, ["gr"])
  })

  it("descriptors that cannot share a CRD are a CrdConflict (and a ManifestsError)", () => {
    const v3 = (extra: Partial<Parameters<typeof Resource.custom>[0]>) =>
      Resource.custom({ ...common, version: "v3", spec: Schema.Struct({}), ...extra } as any)
    const conflicts: ReadonlyArray<[ReadonlyArray<Resource.AnyCustomResource>, RegExp]> = [
      [[GreetingV1, v3({ scope: "Cluster" })], /version v3 is Cluster but version v1 is Namespaced/],
      [[GreetingV1, v3({ shortNames: ["g"] })], /disagree on names/],
      [[GreetingV1, v3({})], /none is the storage version: set `storage: true` on one of them/],
      [[GreetingV2, v3({ storage: true })], /2 versions \(v2, v3\) say `storage: true`/],
      [[GreetingV1, Resource.custom({ ...common, version: "v1", spec: Schema.Struct({}) })], /two different/]
    ]
    for (const [resources, message] of conflicts) {
      const result = Resource.crdManifests(resources)
      assert.isTrue(Result.isFailure(result))
      if (!Result.isFailure(result)) continue
      assert.strictEqual(result.failure._tag, "CrdConflict")
      assert.strictEqual(result.failure.crd, "greetings.example.com")
      assert.match(result.failure.message, message)
      const error = errorOf(Operator.make({ name: "g", resources, controllers: [NamespaceController] }))
      assert.strictEqual(error.reason, "CrdConflict")
      assert.match(error.message, message)
    }
  })

  it("explicit columns get Age unless one shows the creation time; none: no columns (Kubernetes shows Age)", () => {
    assert.deepStrictEqual(GreetingV1.printerColumns, [])
    const created = Resource.custom({
      ...common,
      version: "v1",
      spec: Schema.Struct({}),
      printerColumns: [{ name: "Created", type: "date", jsonPath: ".metadata.creationTimestamp" }]
    })
    assert.deepStrictEqual(created.printerColumns.map((c) => c.name), ["Created"])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// the real kubectl against a TestApiServer

const KUBECTL = "/usr/bin/kubectl"

/** Runs kubectl with an explicit kubeconfig and a HOME of its own (never the user's ~/.kube). */
const kubectl = (server: TestApiServer.TestApiServer.Service, args: ReadonlyArray<string>, stdin?: string) =>
  Effect.promise(() => {
    const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "manifests-kubectl-"))
    return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        KUBECTL,
        ["--kubeconfig", server.kubeconfigPath, "--cache-dir", Path.join(home, "cache"), ...args],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, timeout: 20_000 },
        (error, stdout, stderr) => {
          Fs.rmSync(home, { recursive: true, force: true })
          resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
        }
      )
      child.stdin?.end(stdin ?? "")
    })
  })

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("kubectl", (it) => {
  it.effect("the whole Manifests.toYaml output applies with kubectl apply --server-side", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const objects = yield* Manifests.generate(operator)
      const yaml = Manifests.toYaml(objects)
      assert.strictEqual(parseAllDocuments(yaml).length, objects.length)
      const applied = yield* kubectl(server, ["apply", "--server-side", "--field-manager=test", "-f", "-"], yaml)
      assert.strictEqual(applied.code, 0, applied.stderr)
      for (const o of objects as ReadonlyArray<any>) {
        assert.include(applied.stdout, `${o.metadata.name} serverside-applied`)
      }
      // applying again changes nothing and still succeeds
      const again = yield* kubectl(server, ["apply", "--server-side", "--field-manager=test", "-f", "-"], yaml)
      assert.strictEqual(again.code, 0, again.stderr)
    }))

  it.effect("kubectl get shows a custom resource's printer columns (Age included); both versions are served", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const objects = yield* Manifests.generate(operator)
      const crd = Manifests.toYaml(objects.filter((o) => o.kind === "CustomResourceDefinition"))
      assert.strictEqual((yield* kubectl(server, ["apply", "--server-side", "-f", "-"], crd)).code, 0)
      const greeting = Manifests.toYaml([{
        apiVersion: "example.com/v2",
        kind: "Greeting",
        metadata: { name: "hello", namespace: "default" },
        spec: { text: "hi", replicas: 2 }
      }])
      const created = yield* kubectl(server, ["apply", "--server-side", "-f", "-"], greeting)
      assert.strictEqual(created.code, 0, created.stderr)
      const table = yield* kubectl(server, ["get", "greetings", "-n", "default"])
      assert.strictEqual(table.code, 0, table.stderr)
      const [header, row] = table.stdout.trim().split("\n").map((line) => line.trim().split(/\s{2,}/))
      assert.deepStrictEqual(header, ["NAME", "TEXT", "REPLICAS", "READY", "AGE"])
      assert.deepStrictEqual(row!.slice(0, 3), ["hello", "hi", "2"])
      const v1 = yield* kubectl(server, ["get", "greetings.v1.example.com", "hello", "-n", "default", "-o", "json"])
      assert.strictEqual(v1.code, 0, v1.stderr)
      assert.strictEqual(JSON.parse(v1.stdout).apiVersion, "example.com/v1")
      const scaled = yield* kubectl(server, ["scale", "greeting/hello", "-n", "default", "--replicas=3"])
      assert.strictEqual(scaled.code, 0, scaled.stderr)
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// an operator with webhooks

const greetingDefaults = Admission.defaulter(GreetingV2, (g) => Effect.succeed(g), { timeoutSeconds: 5 })

// reads the cluster: KubeClient is the webhook's requirement
const configMapChecks = Admission.validator(Resource.ConfigMap, {
  create: () => Effect.map(KubeClient.KubeClient, () => []),
  delete: () => Effect.void
}, { failurePolicy: "Ignore", namespaceSelector: { matchLabels: { checked: "yes" } } })

const greetingConversion = Conversion.webhook({
  hub: GreetingV2,
  spokes: [{
    resource: GreetingV1,
    toHub: (g) => ({ spec: { text: g.spec.text, replicas: 1 }, status: g.status }),
    fromHub: (g) => ({ spec: { text: g.spec.text }, status: { ready: g.status?.ready } })
  }]
})

const withWebhooks = (webhooks: Operator.Webhooks<KubeClient.KubeClient>) =>
  Operator.make({
    name: "greeting-operator",
    resources: [GreetingV1, GreetingV2],
    controllers: [GreetingController, NamespaceController],
    rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] }],
    webhooks
  })

const hooked = withWebhooks({ admission: [greetingDefaults, configMapChecks], conversion: [greetingConversion] })

describe("Manifests.generate: webhooks", () => {
  it("Operator.make: the webhooks' requirements join the operator's; its settings name what is generated", () => {
    expectTypeOf(hooked).toEqualTypeOf<
      Operator.Operator<never, KubeController.Services<typeof GreetingController> | KubeClient.KubeClient>
    >()
    const settings = Operator.webhookSettings(hooked, "ops")!
    assert.deepStrictEqual(settings.routes.map((r) => r.path), [
      "/mutate-example-com-v2-greeting",
      "/validate-core-v1-configmap",
      "/convert-example-com-greeting"
    ])
    assert.strictEqual(settings.serviceName, "greeting-operator-webhook")
    assert.strictEqual(settings.namespace, "ops")
    assert.strictEqual(settings.port, 9443)
    assert.deepStrictEqual(settings.mutatingConfigurations, ["greeting-operator-mutating"])
    assert.deepStrictEqual(settings.validatingConfigurations, ["greeting-operator-validating"])
    assert.deepStrictEqual(settings.customResourceDefinitions, ["greetings.example.com"])
    assert.strictEqual(settings.certificates._tag, "Managed")
    assert.strictEqual(hooked.webhooks?.admission?.[1], configMapChecks)
    // with a Layer: its requirements and the webhooks' (the Layer's alone do not mention KubeClient)
    const composed = Operator.make({
      name: "greeting-operator",
      controllers: [NamespaceController],
      layer: Layer.empty,
      webhooks: { admission: [configMapChecks] }
    })
    expectTypeOf(composed).toEqualTypeOf<Operator.Operator<never, KubeClient.KubeClient>>()
    assert.isUndefined(Operator.webhookSettings(operator, "ops"))
    assert.isUndefined(Operator.webhookSettings(withWebhooks({ admission: [], conversion: [] }), "ops"))
  })

  it("managed certificates: configurations, Service, container port, conversion stanza and the manager's RBAC", () => {
    const objects = objectsOf(hooked)
    assert.deepStrictEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`), [
      "Namespace/greeting-operator-system",
      "CustomResourceDefinition/greetings.example.com",
      "ServiceAccount/greeting-operator",
      "ClusterRole/greeting-operator",
      "ClusterRoleBinding/greeting-operator",
      "Role/greeting-operator-leader-election",
      "RoleBinding/greeting-operator-leader-election",
      "Role/greeting-operator-webhook-certificates",
      "RoleBinding/greeting-operator-webhook-certificates",
      "Deployment/greeting-operator",
      "Service/greeting-operator-metrics",
      "Service/greeting-operator-webhook",
      "MutatingWebhookConfiguration/greeting-operator-mutating",
      "ValidatingWebhookConfiguration/greeting-operator-validating"
    ])
    const ns = "greeting-operator-system"
    const byName = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!

    const mutating = byName("MutatingWebhookConfiguration", "greeting-operator-mutating")
    assert.deepStrictEqual(mutating.metadata.labels, { "app.kubernetes.io/name": "greeting-operator" })
    assert.deepStrictEqual(mutating.webhooks, [{
      name: "mgreeting.example.com",
      admissionReviewVersions: ["v1"],
      // no caBundle: the CertificateManager injects it
      clientConfig: {
        service: {
          name: "greeting-operator-webhook",
          namespace: ns,
          port: 443,
          path: "/mutate-example-com-v2-greeting"
        }
      },
      rules: [{
        operations: ["CREATE", "UPDATE"],
        apiGroups: ["example.com"],
        apiVersions: ["v2"],
        resources: ["greetings"],
        scope: "Namespaced"
      }],
      failurePolicy: "Fail",
      sideEffects: "None",
      timeoutSeconds: 5,
      matchPolicy: "Equivalent",
      reinvocationPolicy: "Never"
    }])
    const validating = byName("ValidatingWebhookConfiguration", "greeting-operator-validating").webhooks[0]
    assert.deepStrictEqual(validating.rules[0].operations, ["CREATE", "DELETE"])
    assert.strictEqual(validating.failurePolicy, "Ignore")
    assert.strictEqual(validating.sideEffects, "None")
    assert.deepStrictEqual(validating.namespaceSelector, { matchLabels: { checked: "yes" } })
    assert.deepStrictEqual(validating.clientConfig.service.path, "/validate-core-v1-configmap")

    const service = byName("Service", "greeting-operator-webhook")
    assert.strictEqual(service.metadata.namespace, ns)
    assert.deepStrictEqual(service.spec.selector, { "app.kubernetes.io/name": "greeting-operator" })
    assert.deepStrictEqual(service.spec.ports, [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }])

    const container = byName("Deployment", "greeting-operator").spec.template.spec.containers[0]
    assert.include(container.args, "--webhook-port=9443")
    assert.isFalse(container.args.some((a: string) => a.startsWith("--webhook-cert-dir")))
    assert.deepStrictEqual(container.ports.at(-1), { name: "webhook", containerPort: 9443, protocol: "TCP" })

    const crd = byName("CustomResourceDefinition", "greetings.example.com")
    assert.deepStrictEqual(crd.spec.conversion, {
      strategy: "Webhook",
      webhook: {
        conversionReviewVersions: ["v1"],
        clientConfig: {
          service: {
            name: "greeting-operator-webhook",
            namespace: ns,
            path: "/convert-example-com-greeting",
            port: 443
          }
        }
      }
    })

    // the CertificateManager's rules: its Secret in a Role of the namespace, the named objects in the ClusterRole
    const managerRules = CertificateManager.rbac(
      (Operator.webhookSettings(hooked, ns)!.certificates as { readonly options: CertificateManager.Options }).options
    )
    const certificates = byName("Role", "greeting-operator-webhook-certificates")
    assert.strictEqual(certificates.metadata.namespace, ns)
    assert.deepStrictEqual(certificates.rules, [
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["greeting-operator-webhook-tls"],
        verbs: ["get", "list", "watch", "update"]
      }
    ])
    assert.strictEqual(
      byName("RoleBinding", "greeting-operator-webhook-certificates").subjects[0].name,
      "greeting-operator"
    )
    const clusterRules = byName("ClusterRole", "greeting-operator").rules
    assert.deepStrictEqual(clusterRules, Manifests.rules(hooked))
    const withoutHooks = Manifests.rules(operator)
    const added = clusterRules.filter((r: Operator.PolicyRule) =>
      !withoutHooks.some((w) => JSON.stringify(w) === JSON.stringify(r))
    )
    assert.deepStrictEqual(added, [
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["mutatingwebhookconfigurations"],
        resourceNames: ["greeting-operator-mutating"],
        verbs: ["get", "list", "watch", "update", "patch"]
      },
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["validatingwebhookconfigurations"],
        resourceNames: ["greeting-operator-validating"],
        verbs: ["get", "list", "watch", "update", "patch"]
      },
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        resourceNames: ["greetings.example.com"],
        verbs: ["get", "list", "watch", "update", "patch"]
      }
    ])
    // nothing granted beyond what CertificateManager.rbac asks for
    for (const rule of [...added, ...certificates.rules]) {
      assert.isTrue(
        rule.resources.every((res: string) =>
          managerRules.some((m) => m.resources.includes(res) && rule.verbs.every((v: string) => m.verbs.includes(v)))
        ),
        JSON.stringify(rule)
      )
    }

    const files = Manifests.files(objects)
    assert.deepStrictEqual(Object.keys(files), [
      "crd.yaml",
      "namespace.yaml",
      "rbac.yaml",
      "webhook.yaml",
      "workload.yaml"
    ])
    assert.include(files["webhook.yaml"]!, "kind: MutatingWebhookConfiguration")
    assert.include(files["workload.yaml"]!, "name: greeting-operator-webhook")
  })

  it("certificates from a directory: the Secret mounted read-only, --webhook-cert-dir, no certificate RBAC", () => {
    const objects = objectsOf(
      withWebhooks({
        admission: [greetingDefaults],
        certificates: { secretName: "greeting-webhook-cert" },
        service: { name: "greeting-hooks" },
        port: 10250
      }),
      { namespace: "ops" }
    )
    assert.isFalse(objects.some((o) => o.metadata.name === "greeting-operator-webhook-certificates"))
    assert.isFalse(objects.some((o) => o.kind === "ValidatingWebhookConfiguration"))
    assert.deepStrictEqual(objects.find((o) => o.kind === "ClusterRole")!.rules, Manifests.rules(operator))
    const pod = objects.find((o) => o.kind === "Deployment")!.spec.template.spec
    const container = pod.containers[0]
    assert.include(container.args, "--webhook-port=10250")
    assert.include(container.args, "--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs")
    assert.deepStrictEqual(container.volumeMounts, [
      { name: "tmp", mountPath: "/tmp" },
      { name: "webhook-certs", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true }
    ])
    assert.deepStrictEqual(pod.volumes, [
      { name: "tmp", emptyDir: {} },
      { name: "webhook-certs", secret: { secretName: "greeting-webhook-cert" } }
    ])
    const service = objects.find((o) => o.kind === "Service" && o.metadata.name === "greeting-hooks")!
    assert.strictEqual(service.metadata.namespace, "ops")
    assert.strictEqual(
      objects.find((o) => o.kind === "MutatingWebhookConfiguration")!.webhooks[0].clientConfig.service.name,
      "greeting-hooks"
    )
    // no conversion webhook: the CRD has no conversion stanza
    assert.isUndefined(objects.find((o) => o.kind === "CustomResourceDefinition")!.spec.conversion)
  })

  it("no webhooks (or empty lists): exactly what an operator without them generates", () => {
    assert.deepStrictEqual(objectsOf(withWebhooks({})), objectsOf(operator))
    assert.deepStrictEqual(objectsOf(withWebhooks({ admission: [], conversion: [] })), objectsOf(operator))
  })

  it("invalid webhook settings are a ManifestsError saying what is wrong", () => {
    const cases: ReadonlyArray<readonly [Operator.Webhooks<any>, Manifests.ManifestsError["reason"], string]> = [
      [{ admission: [greetingDefaults], port: 8080 }, "InvalidOption", "also the metrics port"],
      [{ admission: [greetingDefaults], port: 0 }, "InvalidOption", "webhooks.port"],
      [{ admission: [greetingDefaults], service: { name: "Hooks" } }, "InvalidOption", "DNS-1035"],
      [{ admission: [greetingDefaults], certificates: { secretName: "a_b" } }, "InvalidOption", "DNS-1123"],
      [
        { admission: [greetingDefaults], certificates: { secretName: "s", directory: "certs" } },
        "InvalidOption",
        "absolute path"
      ],
      [{ admission: [greetingDefaults, greetingDefaults] }, "InvalidOption", "mgreeting.example.com"]
    ]
    for (const [webhooks, reason, text] of cases) {
      const error = errorOf(withWebhooks(webhooks))
      assert.strictEqual(error.reason, reason, error.message)
      assert.include(error.message, text)
    }
    // the Service's namespace is the operator's: the manifests' default, another one is refused
    const pinned = withWebhooks({ admission: [greetingDefaults], service: { namespace: "hooks" } })
    assert.strictEqual(objectsOf(pinned)[0]!.metadata.name, "hooks")
    assert.strictEqual(objectsOf(pinned).find((o) => o.kind === "Deployment")!.metadata.namespace, "hooks")
    const elsewhere = errorOf(pinned, { namespace: "ops" })
    assert.strictEqual(elsewhere.reason, "InvalidOption")
    assert.include(elsewhere.message, "reaches the Pods of its own namespace only")
    // a conversion webhook for a kind the operator does not serve
    const stranger = Operator.make({
      name: "other-operator",
      controllers: [NamespaceController],
      webhooks: { conversion: [greetingConversion] }
    })
    const error = errorOf(stranger)
    assert.strictEqual(error.reason, "CrdConflict")
    assert.include(error.message, "greetings.example.com")
  })
})

describe("Manifests.generate: sharding", () => {
  /** Whether the rules allow `verb` on `resource` (of `group`), for any object of it. */
  const allows = (rules: ReadonlyArray<Operator.PolicyRule>, group: string, resource: string, verb: string) =>
    rules.some((r) =>
      r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb) &&
      (r.resourceNames ?? []).length === 0
    )
  const leaseVerbs = ["get", "list", "watch", "create", "update", "delete"]

  it(
    "3 replicas running --sharding; the ring's Leases in a Role of the operator's namespace; patch, list and " +
      "watch of every for and owns kind",
    () => {
      const objects = objectsOf(operator, { sharding: true })
      assert.deepStrictEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`), [
        "Namespace/greeting-operator-system",
        "CustomResourceDefinition/greetings.example.com",
        "ServiceAccount/greeting-operator",
        "ClusterRole/greeting-operator",
        "ClusterRoleBinding/greeting-operator",
        "Role/greeting-operator-sharding",
        "RoleBinding/greeting-operator-sharding",
        "Deployment/greeting-operator",
        "Service/greeting-operator-metrics"
      ])
      const deployment = objects.find((o) => o.kind === "Deployment")!
      assert.strictEqual(deployment.spec.replicas, 3)
      assert.deepStrictEqual(deployment.spec.template.spec.containers[0].args, [
        "--in-cluster",
        "--sharding",
        "--metrics-port=8080",
        "--health-port=8081",
        "--log-format=json"
      ])
      // the Leases are where the main job looks for them: $POD_NAMESPACE, the Deployment's namespace
      const role = objects.find((o) => o.kind === "Role")!
      assert.strictEqual(role.metadata.namespace, deployment.metadata.namespace)
      assert.deepStrictEqual(deployment.spec.template.spec.containers[0].env[0], {
        name: "POD_NAMESPACE",
        valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } }
      })
      for (const verb of leaseVerbs) {
        assert.isTrue(allows(role.rules, "coordination.k8s.io", "leases", verb), `leases ${verb}`)
      }
      const binding = objects.find((o) => o.kind === "RoleBinding")!
      assert.strictEqual(binding.metadata.namespace, role.metadata.namespace)
      assert.deepStrictEqual(binding.roleRef, {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: role.metadata.name
      })
      assert.deepStrictEqual(binding.subjects, [
        { kind: "ServiceAccount", name: "greeting-operator", namespace: "greeting-operator-system" }
      ])
      // the sharder patches the labels of every for and owns kind and watches them; the shards patch their for kinds
      const clusterRole = objects.find((o) => o.kind === "ClusterRole")!
      assert.deepStrictEqual(clusterRole.rules, Manifests.rules(operator, { sharding: true }))
      for (const controller of operator.controllers) {
        for (const kind of [controller.for, ...controller.owns]) {
          for (const verb of ["list", "watch", "patch"]) {
            assert.isTrue(allows(clusterRole.rules, kind.group, kind.plural, verb), `${kind.plural} ${verb}`)
          }
        }
      }
      // nothing else changes
      const plain = objectsOf(operator)
      const others = (list: ReadonlyArray<Record<string, any>>) =>
        list.filter((o) => !["Role", "RoleBinding", "Deployment"].includes(o.kind))
      assert.deepStrictEqual(others(objects), others(plain))
    }
  )

  it("replicas as given; leader election is the alternative, not an addition", () => {
    const objects = objectsOf(operator, { sharding: true, replicas: 5, leaderElection: false })
    assert.strictEqual(objects.find((o) => o.kind === "Deployment")!.spec.replicas, 5)
    assert.isUndefined(objects.find((o) => o.metadata.name === "greeting-operator-leader-election"))
    const error = errorOf(operator, { sharding: true, leaderElection: true })
    assert.strictEqual(error.reason, "InvalidOption")
    assert.match(error.message, /leaderElection and sharding are alternatives/)
    // without sharding, as before: 1 replica with leader election
    const plain = objectsOf(operator, { sharding: false })
    assert.strictEqual(plain.find((o) => o.kind === "Deployment")!.spec.replicas, 1)
    assert.deepStrictEqual(plain, objectsOf(operator))
  })

  /** One request's authorization check: what RBAC decides on. */
  interface Access {
    readonly verb: string
    readonly group: string
    readonly resource: string
    readonly namespace: string | undefined
  }

  /** A KubeClient recording the authorization check of each request it sends. */
  const recording = (accesses: Array<Access>, inner: KubeClient.KubeClient.Service): KubeClient.KubeClient.Service => {
    const sent = <A, E>(
      verb: string,
      resource: Resource.Resource<any>,
      namespace: string | undefined,
      request: Effect.Effect<A, E>,
      subresource?: string
    ) =>
      Effect.andThen(
        Effect.sync(() =>
          accesses.push({
            verb,
            group: resource.group,
            resource: subresource === undefined ? resource.plural : `${resource.plural}/${subresource}`,
            namespace: resource.scope === "Namespaced" ? namespace : undefined
          })
        ),
        request
      )
    const namespaceOf = (o: unknown) => (o as { metadata?: { namespace?: string } }).metadata?.namespace
    return {
      get: (r, n, o) => sent("get", r, o?.namespace, inner.get(r, n, o)),
      list: (r, o) => sent("list", r, o?.namespace, inner.list(r, o)),
      listAll: (r, o) => sent("list", r, o?.namespace, inner.listAll(r, o)),
      create: (r, x, o) => sent("create", r, o?.namespace ?? namespaceOf(x), inner.create(r, x, o)),
      replace: (r, x, o) => sent("update", r, o?.namespace ?? namespaceOf(x), inner.replace(r, x, o)),
      patch: (r, n, p, o) => sent("patch", r, o.namespace, inner.patch(r, n, p, o)),
      delete: (r, n, o) => sent("delete", r, o?.namespace, inner.delete(r, n, o)),
      replaceStatus: (r, x, o) =>
        sent("update", r, o?.namespace ?? namespaceOf(x), inner.replaceStatus(r, x, o), "status"),
      patchStatus: (r, n, p, o) => sent("patch", r, o.namespace, inner.patchStatus(r, n, p, o), "status"),
      watch: (r, o) => Stream.unwrap(sent("watch", r, o?.namespace, Effect.succeed(inner.watch(r, o))))
    }
  }

  it.effect(
    "every request of a running ring (joins, moves with their drain, a leave, the sharder's clean-up of its Lease) is " +
      "allowed by the generated ClusterRole and Role",
    () =>
      Effect.gen(function*() {
        const Settings = KubeController.make({
          name: "settings",
          for: Resource.ConfigMap,
          owns: [Resource.Secret],
          reconcile: () => Effect.void
        })
        const ring = Operator.make({ name: "settings-operator", controllers: [Settings] })
        const objects = objectsOf(ring, { sharding: true })
        const namespace = "settings-operator-system"
        const clusterRules = objects.find((o) => o.kind === "ClusterRole")!.rules as ReadonlyArray<Operator.PolicyRule>
        const roleRules = objects.find((o) => o.kind === "Role" && o.metadata.namespace === namespace)!
          .rules as ReadonlyArray<Operator.PolicyRule>

        const client = yield* KubeClient.KubeClient
        yield* client.create(Resource.Namespace, { metadata: { name: namespace } })
        const accesses: Array<Access> = []
        const parent = yield* Effect.scope
        const start = (identity: string) =>
          Effect.gen(function*() {
            const scope = yield* Scope.fork(parent, "sequential")
            const layer = KubeController.layer(Settings).pipe(
              Layer.provideMerge(Manager.layer()),
              Layer.provide(Cache.layer()),
              Layer.provide(Sharding.layer({ ring: ring.name, namespace, identity, controllers: ring.controllers })),
              Layer.provide(Layer.succeed(KubeClient.KubeClient, recording(accesses, client)))
            )
            yield* Layer.build(layer).pipe(Scope.provide(scope), Effect.orDie)
            return scope
          })
        /** A graceful stop: its reconciles drain (on the TestClock) and its Lease is released. */
        const stop = (scope: Scope.Closeable) =>
          Effect.gen(function*() {
            const fiber = yield* Effect.forkChild(Scope.close(scope, Exit.void))
            while (fiber.pollUnsafe() === undefined) yield* TestClock.adjust(50)
          })
        const labelled = Effect.map(
          client.list(Resource.ConfigMap, { namespace: "default" }),
          (list) =>
            list.items.filter((cm) => cm.metadata?.name?.startsWith("app-")).map((cm) =>
              [
                cm.metadata?.labels?.[Sharding.shardLabel(ring.name)],
                cm.metadata?.labels?.[Sharding.drainLabel(ring.name)]
              ] as const
            )
        )
        const until = (done: Effect.Effect<boolean, unknown>, max: number) =>
          Effect.gen(function*() {
            for (let waited = 0; waited <= max; waited += 500) {
              yield* TestKube.settle
              if (yield* Effect.orDie(done)) return
              yield* TestClock.adjust(500)
            }
            assert.fail(`not within ${max} ms`)
          })
        const spread = (shards: number) =>
          Effect.map(labelled, (labels) =>
            labels.every(([shard, drain]) => shard !== undefined && drain === undefined) &&
            new Set(labels.map(([shard]) => shard)).size === shards)

        const a = yield* start("a")
        const b = yield* start("b")
        // 30 objects: every one of 3 shards holds some (12 left one empty in about one run of ten)
        for (let i = 0; i < 30; i++) {
          const cm = yield* client.create(Resource.ConfigMap, { metadata: { name: `app-${i}`, namespace: "default" } })
          yield* client.create(Resource.Secret, {
            metadata: {
              name: `app-${i}`,
              namespace: "default",
              ownerReferences: [{
                apiVersion: "v1",
                kind: "ConfigMap",
                name: `app-${i}`,
                uid: cm.metadata!.uid!,
                controller: true
              }]
            }
          })
        }
        yield* until(spread(2), 30_000)
        // a third replica takes its share: objects drained from their shards, then assigned again
        const c = yield* start("c")
        yield* until(spread(3), 60_000)
        // it leaves: its objects go back; its released Lease is deleted by the sharder after a minute
        yield* stop(c)
        yield* until(spread(2), 60_000)
        yield* until(
          Effect.map(
            client.list(Resource.Lease, { namespace }),
            (leases) => !leases.items.some((l) => l.metadata?.name === `${ring.name}-c`)
          ),
          120_000
        )
        yield* stop(b)
        yield* stop(a)

        const key = (x: Access) =>
          `${x.verb} ${x.group}/${x.resource}${x.namespace === undefined ? "" : ` in ${x.namespace}`}`
        const denied = accesses.filter((x) =>
          !allows(clusterRules, x.group, x.resource, x.verb) &&
          !(x.namespace === namespace && allows(roleRules, x.group, x.resource, x.verb)) &&
          // the sharder's Lease informer asks whether its namespace exists before its first list; a 403 skips the
          // check (Cache.listWatch), so no rule is needed for it
          !(key(x) === "get /namespaces")
        )
        assert.deepStrictEqual([...new Set(denied.map(key))], [], "requests the generated RBAC refuses")
        // the run needed every permission the sharding rules add
        const sent = new Set(accesses.map(key))
        for (const verb of leaseVerbs) {
          assert.isTrue(sent.has(`${verb} coordination.k8s.io/leases in ${namespace}`), verb)
        }
        for (const resource of ["configmaps", "secrets"]) {
          for (const verb of ["list", "watch", "patch"]) {
            assert.isTrue(
              sent.has(`${verb} /${resource} in default`) || sent.has(`${verb} /${resource}`),
              `${verb} ${resource}: ${[...sent].join(", ")}`
            )
          }
        }
      }).pipe(Effect.provide(TestKube.layerWithCluster({ retry: { times: 0 } }))),
    { timeout: 60_000 }
  )
})
