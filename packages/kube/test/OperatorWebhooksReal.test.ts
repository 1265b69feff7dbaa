/**
 * The manifests of an operator with webhooks, on the server under test (the embedded cluster in `npm test`, the
 * real control plane with `RECONCILE_TEST_CLUSTER=real`, where kube-apiserver's validation is the judge): every
 * generated object — the Mutating/ValidatingWebhookConfigurations pointing at the webhook Service, the CRD with its
 * conversion stanza, the webhook Service, the Deployment with its webhook port (and the certificate volume), the
 * CertificateManager's Role — is accepted as generated. Then the CertificateManager, run with the operator's own
 * settings (what the main job runs in cluster mode), injects its CA bundle into exactly those configurations and
 * that CRD: the names the manifests use and the ones the manager is given agree.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Admission from "../src/Admission.js"
import * as CertificateManager from "../src/CertificateManager.js"
import * as Conversion from "../src/Conversion.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as Manifests from "../src/Manifests.js"
import * as Operator from "../src/Operator.js"
import * as Resource from "../src/Resource.js"
import { check, eventually, kubeLayer, makeEnv, serverApply } from "./support/env.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const common = { group: "hooks.example.com", kind: "Memo", plural: "memos", scope: "Namespaced" } as const
const MemoV1beta1 = Resource.custom({ ...common, version: "v1beta1", spec: Schema.Struct({ body: Schema.String }) })
const Memo = Resource.custom({
  ...common,
  version: "v1",
  storage: true,
  spec: Schema.Struct({ text: Schema.String, pinned: Schema.optional(Schema.Boolean) })
})

const memoController = KubeController.make({ name: "memo", for: Memo, reconcile: () => Effect.void })

const webhooks = {
  admission: [
    Admission.defaulter(Memo, (m) => Effect.succeed(m)),
    Admission.validator(Memo, { create: () => Effect.void, update: () => Effect.void }, {
      objectSelector: { matchLabels: { checked: "yes" } }
    }),
    Admission.validator(Resource.ConfigMap, { delete: () => Effect.void }, {
      failurePolicy: "Ignore",
      namespaceSelector: { matchExpressions: [{ key: "memo", operator: "Exists" }] },
      timeoutSeconds: 3
    })
  ],
  conversion: [Conversion.webhook({
    hub: Memo,
    spokes: [{
      resource: MemoV1beta1,
      toHub: (m) => ({ spec: { text: m.spec.body } }),
      fromHub: (m) => ({ spec: { body: m.spec.text } })
    }]
  })]
}

const managed = Operator.make({
  name: "memo-operator",
  resources: [MemoV1beta1, Memo],
  controllers: [memoController],
  webhooks
})

const fromDirectory = Operator.make({
  name: "memo-dir-operator",
  controllers: [KubeController.make({ name: "cm", for: Resource.ConfigMap, reconcile: () => Effect.void })],
  webhooks: {
    admission: [Admission.validator(Resource.ConfigMap, { create: () => Effect.void }, {
      name: "vconfigmap.memo.example.com",
      objectSelector: { matchLabels: { memo: "yes" } }
    })],
    certificates: { secretName: "memo-dir-webhook-cert" },
    port: 10443
  }
})

/** Applies every object and reads each back (the server accepted it as generated). */
const applyAll = (objects: ReadonlyArray<Record<string, any>>) =>
  Effect.forEach(objects, (object) =>
    Effect.gen(function*() {
      const applied = yield* serverApply(object)
      assert.strictEqual(applied.kind, object.kind)
      assert.strictEqual(applied.metadata.name, object.metadata.name)
    }), { discard: true })

describe("Manifests of an operator with webhooks, on the server under test", () => {
  it.live(
    "managed certificates: every object is accepted; the CertificateManager run with the operator's settings " +
      "injects its bundle into the generated configurations and the CRD",
    () =>
      Effect.gen(function*() {
        const objects = yield* Manifests.generate(managed)
        yield* applyAll(objects)

        const mutating = yield* KubeClient.get(Admission.MutatingWebhookConfiguration, "memo-operator-mutating")
        const validating = yield* KubeClient.get(Admission.ValidatingWebhookConfiguration, "memo-operator-validating")
        assert.strictEqual(mutating.webhooks.length, 1)
        assert.strictEqual(validating.webhooks.length, 2)
        const service = (validating.webhooks[1] as any).clientConfig.service
        assert.deepInclude(service, { name: "memo-operator-webhook", namespace: "memo-operator-system", port: 443 })
        assert.strictEqual((validating.webhooks[1] as any).timeoutSeconds, 3)
        const crd = yield* KubeClient.get(Resource.CustomResourceDefinition, "memos.hooks.example.com")
        assert.strictEqual(crd.spec.conversion?.strategy, "Webhook")
        assert.strictEqual(crd.spec.conversion?.webhook?.clientConfig?.service?.path, "/convert-hooks-example-com-memo")

        // what the main job runs in cluster mode
        const settings = Operator.webhookSettings(managed, "memo-operator-system")!
        assert.strictEqual(settings.certificates._tag, "Managed")
        if (settings.certificates._tag !== "Managed") return
        const options = settings.certificates.options
        yield* Effect.scoped(Effect.gen(function*() {
          const manager = yield* CertificateManager.make(options)
          const bundle = Buffer.from(yield* manager.caBundle).toString("base64")
          yield* eventually(
            Effect.gen(function*() {
              const m = yield* KubeClient.get(Admission.MutatingWebhookConfiguration, "memo-operator-mutating")
              const v = yield* KubeClient.get(Admission.ValidatingWebhookConfiguration, "memo-operator-validating")
              const c = yield* KubeClient.get(Resource.CustomResourceDefinition, "memos.hooks.example.com")
              yield* check(() => {
                for (const entry of [...m.webhooks, ...v.webhooks]) {
                  assert.strictEqual((entry as any).clientConfig.caBundle, bundle)
                }
                assert.strictEqual(c.spec.conversion?.webhook?.clientConfig?.caBundle, bundle)
              })
            }),
            20_000
          )
          const secret = yield* KubeClient.get(Resource.Secret, "memo-operator-webhook-tls", {
            namespace: "memo-operator-system"
          })
          assert.strictEqual(secret.type, "kubernetes.io/tls")
        }))
      }).pipe(Effect.provide(TestLayer)),
    { timeout: 90_000 }
  )

  it.live(
    "certificates from a directory: the Deployment with its Secret volume and webhook port is accepted",
    () =>
      Effect.gen(function*() {
        const objects = yield* Manifests.generate(fromDirectory)
        yield* applyAll(objects)
        const deployment = yield* KubeClient.get(Resource.Deployment, "memo-dir-operator", {
          namespace: "memo-dir-operator-system"
        })
        const pod = deployment.spec!.template.spec!
        const volume = pod.volumes!.find((v) => v.name === "webhook-certs")
        assert.strictEqual(volume?.secret?.secretName, "memo-dir-webhook-cert")
        assert.deepInclude(pod.containers[0]!.volumeMounts!, {
          name: "webhook-certs",
          mountPath: "/tmp/k8s-webhook-server/serving-certs",
          readOnly: true
        })
        assert.include(pod.containers[0]!.args!, "--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs")
        assert.deepInclude(pod.containers[0]!.ports!, { name: "webhook", containerPort: 10443, protocol: "TCP" })
        const validating = yield* KubeClient.get(
          Admission.ValidatingWebhookConfiguration,
          "memo-dir-operator-validating"
        )
        assert.strictEqual((validating.webhooks[0] as any).clientConfig.service.name, "memo-dir-operator-webhook")
      }).pipe(Effect.provide(TestLayer)),
    { timeout: 90_000 }
  )
})
