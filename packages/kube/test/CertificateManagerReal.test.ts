/**
 * CertificateManager through the real HTTP client, in real time, on the server under test: TestApiServer over the
 * embedded cluster in `npm test`, the real control plane with `RECONCILE_TEST_CLUSTER=real` (`npm run
 * test:envtest`). The Secret is created, the CA bundle is injected into a ValidatingWebhookConfiguration and a CRD's
 * conversion stanza, and a client trusting only the injected bundle reaches a `node:https` server serving the
 * manager's `current` (TLS verified, by IP and by the Service's DNS name). On the real control plane kube-apiserver
 * itself calls that server through the webhook configuration: it trusts the bundle it was given; and a
 * ServiceAccount granted only `CertificateManager.rbac` runs the manager (kube-apiserver's RBAC is the judge).
 */
import { assert, describe, it } from "@effect/vitest"
import type * as k8s from "@kubernetes/client-node"
import { TestApiServer } from "@reconcile/testkit"
import { Effect, Exit, Layer } from "effect"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as CertificateManager from "../src/CertificateManager.js"
import * as Certificates from "../src/Certificates.js"
import * as Kube from "../src/Kube.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import type * as WebhookServer from "../src/WebhookServer.js"
import { check, eventually, fastRetry, kubeLayer, makeEnv, onRealCluster, serverApply } from "./support/env.js"
import { WebApp } from "./support/fixtures.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const Validating = Resource.make<Resource.Wire<k8s.V1ValidatingWebhookConfiguration>>({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
  scope: "Cluster"
})

/** A webhook server on 127.0.0.1 serving the source's current certificate; it allows every review it gets. */
const serve = (source: WebhookServer.CertificateSource) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const certificate = yield* source.current
      const reviews: Array<string> = []
      const server = https.createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
        let body = ""
        req.on("data", (chunk) => body += chunk)
        req.on("end", () => {
          reviews.push(req.url ?? "")
          const uid = (() => {
            try {
              return JSON.parse(body)?.request?.uid ?? ""
            } catch {
              return ""
            }
          })()
          res.setHeader("content-type", "application/json")
          res.end(JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: { uid, allowed: true }
          }))
        })
      })
      yield* Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      return { server, port: (server.address() as AddressInfo).port, reviews }
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** A GET to the server trusting only `ca`; the status code, or the TLS/connection error's code. */
const request = (port: number, ca: string, servername?: string) =>
  Effect.callback<string>((resume) => {
    const req = https.request(
      { host: "127.0.0.1", port, path: "/healthz", method: "GET", ca, ...(servername ? { servername } : {}) },
      (res) => {
        res.resume()
        res.on("end", () => resume(Effect.succeed(String(res.statusCode))))
      }
    )
    req.on("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed(error.code ?? error.message)))
    req.end()
  })

describe("CertificateManager over HTTP (the server under test, real time)", () => {
  it.live(
    "Secret created, bundle injected into a webhook configuration and a CRD, TLS verified with only the bundle",
    () =>
      Effect.gen(function*() {
        const ns = `certs-${Date.now() % 100_000}`
        yield* KubeClient.create(Resource.Namespace, { metadata: { name: ns } })
        const options: CertificateManager.Options = {
          serviceName: "hooks",
          namespace: ns,
          secretName: "hooks-tls",
          ips: ["127.0.0.1"],
          validatingWebhookConfigurations: [`${ns}-validating`],
          customResourceDefinitions: ["webapps.example.com"]
        }
        // the webhook server must know its port before the configurations name it: a manager first, then the server
        const manager = yield* CertificateManager.make(options)
        const { port, reviews } = yield* serve(manager)
        yield* KubeClient.create(Validating, {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: `${ns}-validating` },
          webhooks: [{
            name: "configmaps.certificates.example.com",
            clientConfig: { url: `https://127.0.0.1:${port}/validate` },
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            // never blocks anything, and only this test's labelled ConfigMaps are sent
            failurePolicy: "Ignore",
            timeoutSeconds: 5,
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
            objectSelector: { matchLabels: { "certificate-manager-test": "true" } },
            rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }]
          }]
        })
        const crd = Resource.crdManifest(WebApp)
        yield* serverApply({
          ...crd,
          spec: {
            ...crd.spec,
            conversion: {
              strategy: "Webhook",
              webhook: {
                conversionReviewVersions: ["v1"],
                clientConfig: { url: `https://127.0.0.1:${port}/convert` }
              }
            }
          }
        })

        const secret = yield* eventually(KubeClient.get(Resource.Secret, "hooks-tls", { namespace: ns }), 30_000)
        assert.strictEqual(secret.type, "kubernetes.io/tls")
        const caCrt = secret.data?.["ca.crt"]
        assert.isString(caCrt)
        assert.strictEqual(Buffer.from(caCrt!, "base64").toString("utf8"), yield* manager.caBundle)
        assert.strictEqual(
          Buffer.from(secret.data?.["tls.crt"] ?? "", "base64").toString("utf8"),
          (yield* manager.current).cert
        )
        const injected = yield* eventually(
          Effect.gen(function*() {
            const validating = yield* KubeClient.get(Validating, `${ns}-validating`)
            const conversion = (yield* KubeClient.get(Resource.CustomResourceDefinition, "webapps.example.com")).spec
              .conversion
            const bundles = [
              validating.webhooks?.[0]?.clientConfig.caBundle,
              conversion?.webhook?.clientConfig?.caBundle
            ]
            yield* check(() => assert.deepStrictEqual(bundles, [caCrt, caCrt]))
            return bundles[0]!
          }),
          30_000
        )

        // a client that trusts only what was injected
        const trusted = Buffer.from(injected, "base64").toString("utf8")
        assert.strictEqual(yield* request(port, trusted), "200", "by IP: 127.0.0.1 is in the certificate")
        assert.strictEqual(yield* request(port, trusted, `hooks.${ns}.svc`), "200", "by the Service's DNS name")
        const stranger = Certificates.issue({ commonName: "another-ca", ca: true }).cert
        assert.notStrictEqual(yield* request(port, stranger), "200", "a client trusting another CA is refused")

        if (onRealCluster) {
          // kube-apiserver calls the webhook with the bundle it was given (failurePolicy Ignore: a TLS failure would
          // pass silently, so the request reaching the server is the proof)
          yield* KubeClient.create(Resource.ConfigMap, {
            metadata: { name: "reviewed", namespace: ns, labels: { "certificate-manager-test": "true" } },
            data: { a: "1" }
          })
          yield* eventually(check(() => assert(reviews.some((url) => url.startsWith("/validate")), "reviewed")), 10_000)
        }
      }).pipe(Effect.scoped, Effect.provide(TestLayer)),
    90_000
  )

  const Rbac = Resource.make<{ readonly metadata?: { readonly name?: string } }>({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    scope: "Cluster"
  })
  const RbacBinding = Resource.make<{ readonly metadata?: { readonly name?: string } }>({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    scope: "Cluster"
  })

  it.live.skipIf(!onRealCluster)(
    "a ServiceAccount with only CertificateManager.rbac runs the manager (RBAC enforced by kube-apiserver)",
    () =>
      Effect.gen(function*() {
        const ns = `certs-rbac-${Date.now() % 100_000}`
        yield* KubeClient.create(Resource.Namespace, { metadata: { name: ns } })
        const options: CertificateManager.Options = {
          serviceName: "hooks",
          namespace: ns,
          secretName: "hooks-tls",
          validatingWebhookConfigurations: [`${ns}-validating`]
        }
        yield* KubeClient.create(Validating, {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: `${ns}-validating` },
          webhooks: [{
            name: "nothing.certificates.example.com",
            clientConfig: { url: "https://127.0.0.1:9/validate" },
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            failurePolicy: "Ignore",
            rules: [{ apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["nothing"] }]
          }]
        })
        yield* KubeClient.create(
          Resource.make<{ readonly metadata?: { readonly name?: string } }>({
            group: "",
            version: "v1",
            kind: "ServiceAccount",
            plural: "serviceaccounts",
            scope: "Namespaced"
          }),
          { metadata: { name: "operator" } },
          { namespace: ns }
        )
        yield* KubeClient.create(Rbac, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: ns },
          rules: CertificateManager.rbac(options)
        } as never)
        yield* KubeClient.create(RbacBinding, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: ns },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: ns },
          subjects: [{ kind: "ServiceAccount", name: "operator", namespace: ns }]
        } as never)
        const kube = yield* Kube.Kube
        const review = (yield* kube.request({
          method: "POST",
          path: `/api/v1/namespaces/${ns}/serviceaccounts/operator/token`,
          body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } }
        })) as { readonly status: { readonly token: string } }
        const server = yield* TestApiServer.TestApiServer
        const kubeconfig = JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{
            name: "plane",
            cluster: {
              server: server.url,
              "certificate-authority-data": Buffer.from(server.certificateAuthority).toString("base64")
            }
          }],
          users: [{ name: "operator", user: { token: review.status.token } }],
          contexts: [{ name: "operator", context: { cluster: "plane", user: "operator", namespace: ns } }],
          "current-context": "operator"
        })
        const restricted = yield* Layer.build(
          // fresh: `KubeClient.layer` is memoized, and the test's layer already built the admin's
          Layer.fresh(KubeClient.layer).pipe(Layer.provide(Layer.fresh(Kube.layerFromString(kubeconfig, fastRetry))))
        )
        // the rules are in force: another Secret's name is refused
        const other = yield* Effect.exit(
          KubeClient.get(Resource.Secret, "someone-elses", { namespace: ns }).pipe(Effect.provideContext(restricted))
        )
        assert(Exit.isFailure(other) && String(other.cause).includes("Forbidden"), String(other))

        const manager = yield* CertificateManager.make(options).pipe(Effect.provideContext(restricted))
        const secret = yield* KubeClient.get(Resource.Secret, "hooks-tls", { namespace: ns })
        assert.strictEqual(
          Buffer.from(secret.data?.["tls.crt"] ?? "", "base64").toString("utf8"),
          (yield* manager.current).cert
        )
        yield* eventually(
          Effect.gen(function*() {
            const validating = yield* KubeClient.get(Validating, `${ns}-validating`)
            yield* check(() =>
              assert.strictEqual(validating.webhooks?.[0]?.clientConfig.caBundle, secret.data?.["ca.crt"])
            )
          }),
          30_000
        )
        // a reset bundle comes back: the manager's watch (list + watch by name) is allowed
        const validating = yield* KubeClient.get(Validating, `${ns}-validating`)
        yield* KubeClient.replace(Validating, {
          ...validating,
          webhooks: (validating.webhooks ?? []).map((w) => ({ ...w, clientConfig: { url: w.clientConfig.url! } }))
        })
        yield* eventually(
          Effect.gen(function*() {
            const again = yield* KubeClient.get(Validating, `${ns}-validating`)
            yield* check(() => assert.strictEqual(again.webhooks?.[0]?.clientConfig.caBundle, secret.data?.["ca.crt"]))
          }),
          30_000
        )
      }).pipe(Effect.scoped, Effect.provide(TestLayer)),
    90_000
  )
})
