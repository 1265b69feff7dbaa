/**
 * CertificateManager over the in-process cluster (TestKube), on the TestClock: the Secret it creates, the bundle it
 * injects into webhook configurations and a CRD's conversion stanza, replicas that agree through the Secret, renewal
 * before expiry (serving certificate and CA), a reset bundle restored, a corrupt Secret replaced.
 *
 * The TestClock starts at the wall clock's time (`Certificates.issue` dates certificates from it) and validities are
 * short (90 minutes serving, 6 hours CA) so that a renewal is an hour of TestClock, not 60 days of watch restarts.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as k8s from "@kubernetes/client-node"
import { TestKube } from "@reconcile/testkit"
import { Arbitrary, Effect, Fiber, Logger, References, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { createPrivateKey, X509Certificate } from "node:crypto"
import * as CertificateManager from "../src/CertificateManager.js"
import * as Certificates from "../src/Certificates.js"
import * as KubeClient from "../src/KubeClient.js"
import * as Resource from "../src/Resource.js"
import { WebApp } from "./support/fixtures.js"

const settle = TestKube.settle
const MINUTE = 60_000

type WebhookConfiguration = Resource.Wire<k8s.V1ValidatingWebhookConfiguration>

const configuration = (kind: string, plural: string) =>
  Resource.make<WebhookConfiguration>({
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind,
    plural,
    scope: "Cluster"
  })
const Validating = configuration("ValidatingWebhookConfiguration", "validatingwebhookconfigurations")
const Mutating = configuration("MutatingWebhookConfiguration", "mutatingwebhookconfigurations")

const webhook = (name: string) => ({
  name,
  clientConfig: { url: `https://127.0.0.1:9443/${name}` },
  admissionReviewVersions: ["v1"],
  sideEffects: "None",
  failurePolicy: "Ignore",
  rules: [{ apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["webapps"] }]
})

const crdName = "webapps.example.com"
const crdWithConversion = (): Resource.CustomResourceDefinition => {
  const crd = Resource.crdManifest(WebApp)
  return {
    ...crd,
    spec: {
      ...crd.spec,
      conversion: {
        strategy: "Webhook",
        webhook: { conversionReviewVersions: ["v1"], clientConfig: { url: "https://127.0.0.1:9443/convert" } }
      }
    }
  }
}

const options: CertificateManager.Options = {
  serviceName: "hooks",
  namespace: "default",
  secretName: "hooks-tls",
  ips: ["127.0.0.1"],
  dnsNames: ["hooks.example.test"],
  validatingWebhookConfigurations: ["v-hooks"],
  mutatingWebhookConfigurations: ["m-hooks"],
  customResourceDefinitions: [crdName],
  servingValidity: "90 minutes",
  caValidity: "6 hours",
  resync: "10 minutes"
}

const Env = TestKube.layerWithCluster({ retry: { times: 0 } })

/** The objects whose bundles the manager writes. */
const createObjects = Effect.gen(function*() {
  yield* KubeClient.create(Validating, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "v-hooks" },
    webhooks: [webhook("a.example.com"), webhook("b.example.com")]
  })
  yield* KubeClient.create(Mutating, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "m-hooks" },
    webhooks: [webhook("m.example.com")]
  })
  yield* KubeClient.create(Resource.CustomResourceDefinition, crdWithConversion())
})

/** The TestClock at the wall clock's time, and the objects. */
const setup = Effect.andThen(TestClock.setTime(Date.now()), createObjects)

const text = (secret: Resource.Secret, key: string) => Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8")

const readSecret = KubeClient.get(Resource.Secret, "hooks-tls", { namespace: "default" })

/** Every caBundle the manager should have written (base64, as on the wire). */
const bundles = Effect.gen(function*() {
  const v = yield* KubeClient.get(Validating, "v-hooks")
  const m = yield* KubeClient.get(Mutating, "m-hooks")
  const crd = yield* KubeClient.get(Resource.CustomResourceDefinition, crdName)
  return [
    ...(v.webhooks ?? []).map((w) => w.clientConfig?.caBundle),
    ...(m.webhooks ?? []).map((w) => w.clientConfig?.caBundle),
    crd.spec.conversion?.webhook?.clientConfig?.caBundle
  ]
})

const pemCerts = (pem: string) =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((p) => new X509Certificate(p))

/** The Secret is one consistent pair, and every bundle and the manager agree with it. */
const assertConsistent = (manager: CertificateManager.CertificateManager.Service) =>
  Effect.gen(function*() {
    const secret = yield* readSecret
    assert.strictEqual(secret.type, "kubernetes.io/tls")
    const serving = new X509Certificate(text(secret, "tls.crt"))
    const [ca] = pemCerts(text(secret, "ca.crt"))
    assert(ca !== undefined && ca.ca, "ca.crt starts with a CA")
    assert.isTrue(serving.verify(ca.publicKey), "the CA signed the serving certificate")
    assert.isTrue(new X509Certificate(ca.toString()).checkPrivateKey(createPrivateKey(text(secret, "ca.key"))))
    assert.isTrue(serving.checkPrivateKey(createPrivateKey(text(secret, "tls.key"))))
    const current = yield* manager.current
    assert.strictEqual(current.cert, text(secret, "tls.crt"), "the manager serves what the Secret holds")
    assert.strictEqual(current.key, text(secret, "tls.key"))
    assert.strictEqual(yield* manager.caBundle, text(secret, "ca.crt"))
    assert.deepStrictEqual(yield* bundles, Array(4).fill(secret.data?.["ca.crt"]), "every caBundle is ca.crt")
    return secret
  })

describe("CertificateManager (TestKube, TestClock)", () => {
  it.effect("a first start creates the Secret and injects the bundle into both configurations and the CRD", () =>
    Effect.gen(function*() {
      yield* setup
      const manager = yield* CertificateManager.make(options)
      yield* settle
      const secret = yield* assertConsistent(manager)
      assert.deepStrictEqual(Object.keys(secret.data ?? {}).sort(), ["ca.crt", "ca.key", "tls.crt", "tls.key"])
      const serving = new X509Certificate(text(secret, "tls.crt"))
      assert.deepStrictEqual(
        serving.subjectAltName?.split(", ").sort(),
        [
          "DNS:hooks",
          "DNS:hooks.default",
          "DNS:hooks.default.svc",
          "DNS:hooks.default.svc.cluster.local",
          "DNS:hooks.example.test",
          "IP Address:127.0.0.1"
        ].sort()
      )
      assert.isTrue(serving.checkHost("hooks.default.svc") !== undefined)
      assert.strictEqual(serving.checkIP("127.0.0.1"), "127.0.0.1")
    }).pipe(Effect.scoped, Effect.provide(Env)))

  it.effect("an object that appears later and a bundle someone resets get the bundle again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const manager = yield* CertificateManager.make(options)
      yield* settle
      // none of the objects existed at start: created now, the watches see them
      yield* createObjects
      yield* settle
      yield* assertConsistent(manager)
      const v = yield* KubeClient.get(Validating, "v-hooks")
      yield* KubeClient.replace(Validating, {
        ...v,
        webhooks: (v.webhooks ?? []).map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: "" } }))
      })
      const crd = yield* KubeClient.get(Resource.CustomResourceDefinition, crdName)
      const conversion = crd.spec.conversion!
      yield* KubeClient.replace(Resource.CustomResourceDefinition, {
        ...crd,
        spec: {
          ...crd.spec,
          conversion: {
            ...conversion,
            webhook: { ...conversion.webhook!, clientConfig: { url: "https://127.0.0.1:9443/convert" } }
          }
        }
      })
      yield* settle
      yield* assertConsistent(manager)
    }).pipe(Effect.scoped, Effect.provide(Env)))

  it.effect("a deleted Secret is created again: a fresh CA, served at once and injected everywhere", () =>
    Effect.gen(function*() {
      yield* setup
      const manager = yield* CertificateManager.make(options)
      yield* settle
      const before = yield* assertConsistent(manager)
      yield* KubeClient.del(Resource.Secret, "hooks-tls", { namespace: "default" })
      yield* settle
      const after = yield* assertConsistent(manager)
      assert.notStrictEqual(after.metadata?.uid, before.metadata?.uid)
      assert.notStrictEqual(after.data?.["ca.crt"], before.data?.["ca.crt"])
    }).pipe(Effect.scoped, Effect.provide(Env)))

  it.effect("a name added to the options: a new serving certificate from the same CA, at start", () =>
    Effect.gen(function*() {
      yield* setup
      const before = yield* Effect.scoped(Effect.andThen(CertificateManager.make(options), readSecret))
      const manager = yield* CertificateManager.make({
        ...options,
        dnsNames: ["hooks.example.test", "more.example.test"]
      })
      yield* settle
      const after = yield* assertConsistent(manager)
      assert.notStrictEqual(after.data?.["tls.crt"], before.data?.["tls.crt"])
      assert.strictEqual(after.data?.["ca.crt"], before.data?.["ca.crt"], "the same CA")
      assert.include(new X509Certificate(text(after, "tls.crt")).subjectAltName, "DNS:more.example.test")
    }).pipe(Effect.scoped, Effect.provide(Env)))

  it.effect("renewal: not before two thirds of the serving validity; then a new certificate on changes, Secret and bundles", () =>
    Effect.gen(function*() {
      yield* setup
      const manager = yield* CertificateManager.make(options)
      yield* settle
      const before = yield* assertConsistent(manager)
      const first = yield* manager.current
      const next = yield* Effect.forkChild(Stream.runHead(manager.changes))
      yield* settle
      yield* TestClock.adjust(59 * MINUTE)
      yield* settle
      assert.strictEqual((yield* manager.current).cert, first.cert, "59 of 90 minutes: not yet")
      yield* TestClock.adjust(2 * MINUTE)
      yield* settle
      const renewed = yield* Fiber.join(next)
      assert(renewed._tag === "Some")
      assert.notStrictEqual(renewed.value.cert, first.cert)
      const after = yield* assertConsistent(manager)
      assert.strictEqual(text(after, "tls.crt"), renewed.value.cert)
      assert.strictEqual(after.data?.["ca.crt"], before.data?.["ca.crt"], "the CA is not renewed with it")
      assert.strictEqual(after.metadata?.uid, before.metadata?.uid, "the same Secret, updated")
    }).pipe(Effect.scoped, Effect.provide(Env)))

  it.effect(
    "CA renewal: a new CA signs, the old one stays in the bundle until it expires",
    () =>
      Effect.gen(function*() {
        yield* setup
        const manager = yield* CertificateManager.make(options)
        yield* settle
        const oldCa = pemCerts(yield* manager.caBundle)[0]!
        // the CA (6 hours) is due with 2 hours left; the serving certificate renews every hour meanwhile
        for (let i = 0; i < 4 * 6 + 1; i++) yield* TestClock.adjust(10 * MINUTE)
        yield* settle
        const cas = pemCerts(yield* manager.caBundle)
        assert.strictEqual(cas.length, 2, "new CA, then the old one")
        assert.notStrictEqual(cas[0]!.fingerprint256, oldCa.fingerprint256)
        assert.strictEqual(cas[1]!.fingerprint256, oldCa.fingerprint256)
        const serving = new X509Certificate((yield* manager.current).cert)
        assert.isTrue(serving.verify(cas[0]!.publicKey), "the new CA signs the serving certificate")
        yield* assertConsistent(manager)
        // past the old CA's end: dropped from the bundle
        for (let i = 0; i < 6 * 2 + 1; i++) yield* TestClock.adjust(10 * MINUTE)
        yield* settle
        const later = pemCerts(yield* manager.caBundle)
        assert.strictEqual(later.length, 1)
        assert.strictEqual(later[0]!.fingerprint256, cas[0]!.fingerprint256)
        yield* assertConsistent(manager)
      }).pipe(Effect.scoped, Effect.provide(Env)),
    { timeout: 60_000 }
  )

  it.effect("a replica picks up the renewal another made, from its watch of the Secret", () =>
    Effect.gen(function*() {
      yield* setup
      const a = yield* CertificateManager.make(options)
      yield* TestClock.adjust(30 * MINUTE)
      // b judges with a shorter serving validity (a third of 30 minutes: due 10 minutes before the end, 80 minutes
      // in), and checks again only then (resync 1 hour): at 61 minutes only a's renewal, seen on b's watch of the
      // Secret, can give b a new certificate
      const b = yield* CertificateManager.make({ ...options, servingValidity: "30 minutes", resync: "1 hour" })
      yield* settle
      assert.strictEqual((yield* b.current).cert, (yield* a.current).cert, "b serves a's certificate")
      const bNext = yield* Effect.forkChild(Stream.runHead(b.changes))
      yield* settle
      yield* TestClock.adjust(31 * MINUTE)
      yield* settle
      const seen = yield* Fiber.join(bNext)
      assert(seen._tag === "Some")
      const secret = yield* assertConsistent(a)
      assert.strictEqual(seen.value.cert, text(secret, "tls.crt"))
      assert.strictEqual((yield* b.current).cert, (yield* a.current).cert)
    }).pipe(Effect.scoped, Effect.provide(Env)))

  const corruptions: ReadonlyArray<readonly [string, (good: Certificates.Certificate) => Record<string, string>]> = [
    [
      "bad PEM",
      (good) => ({ "tls.crt": "not a certificate", "tls.key": good.key, "ca.crt": good.cert, "ca.key": good.key })
    ],
    ["a key that does not match", (good) => {
      const other = Certificates.issue({ commonName: "other", usages: ["server"], issuer: good })
      const mine = Certificates.issue({ commonName: "mine", usages: ["server"], issuer: good })
      return { "tls.crt": mine.cert, "tls.key": other.key, "ca.crt": good.cert, "ca.key": good.key }
    }]
  ]
  for (const [what, corrupt] of corruptions) {
    it.effect(`a corrupt Secret (${what}) is replaced with a fresh pair, logged without its data`, () =>
      Effect.gen(function*() {
        yield* setup
        const good = Certificates.issue({ commonName: "old-ca", ca: true })
        const data = corrupt(good)
        const created = yield* KubeClient.create(Resource.Secret, {
          metadata: { name: "hooks-tls", namespace: "default" },
          type: "kubernetes.io/tls",
          data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]))
        })
        const logs: Array<string> = []
        const capture = Logger.make(({ fiber, message }) => {
          logs.push(JSON.stringify({ message, annotations: fiber.getRef(References.CurrentLogAnnotations) }))
        })
        const manager = yield* CertificateManager.make(options).pipe(
          Effect.provide(Logger.layer([capture], { mergeWithExisting: true }))
        )
        yield* settle
        const secret = yield* assertConsistent(manager)
        assert.strictEqual(secret.metadata?.uid, created.metadata?.uid)
        assert.notStrictEqual(text(secret, "ca.crt"), good.cert, "a fresh CA")
        const replaced = logs.filter((l) => l.includes("unusable"))
        assert.strictEqual(replaced.length, 1, logs.join("\n"))
        assert.include(replaced[0]!, "hooks-tls")
        for (const line of logs) {
          for (const secretText of [...Object.values(data), ...Object.values(secret.data ?? {})]) {
            for (const chunk of secretText.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"))) {
              assert.notInclude(line, chunk, "no Secret data in the logs")
            }
          }
          assert.notInclude(line, "PRIVATE KEY")
        }
      }).pipe(Effect.scoped, Effect.provide(Env)))
  }

  // effect 4.1 bundles no FastCheck: the interleavings drawn with effect/Arbitrary (what it.prop runs)
  const between = (minimum: number, maximum: number) =>
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

  it.effect.prop(
    "replicas started together agree on one Secret, whatever the interleaving of their requests",
    [
      Arbitrary.array(Arbitrary.array(between(0, 4), { minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 4 }),
      Arbitrary.schema(Schema.Boolean)
    ],
    ([yields, corrupt]) =>
      Effect.gen(function*() {
        yield* setup
        // no Secret (every replica tries to create it), or an unusable one (every replica tries to replace it)
        const before = corrupt
          ? yield* KubeClient.create(Resource.Secret, {
            metadata: { name: "hooks-tls", namespace: "default" },
            type: "kubernetes.io/tls",
            data: { "tls.crt": "", "tls.key": "" }
          })
          : undefined
        const client = yield* KubeClient.KubeClient
        // each replica's requests yield a drawn number of times first: the replicas' reads and writes interleave
        const replica = (pauses: ReadonlyArray<number>) => {
          let n = 0
          const pause = Effect.suspend(() => Effect.repeat(Effect.yieldNow, { times: pauses[n++ % pauses.length]! }))
          const wrapped: KubeClient.KubeClient.Service = {
            ...client,
            get: (resource, name, o) => Effect.andThen(pause, client.get(resource, name, o)),
            create: (resource, object, o) => Effect.andThen(pause, client.create(resource, object, o)),
            replace: (resource, object, o) => Effect.andThen(pause, client.replace(resource, object, o))
          }
          return CertificateManager.make(options).pipe(
            Effect.provideService(KubeClient.KubeClient, wrapped),
            // what make answers, before its background rounds could repair a wrong view
            Effect.tap((manager) => Effect.map(manager.current, (c) => void started.push(c.cert)))
          )
        }
        const started: Array<string> = []
        const managers = yield* Effect.all(yields.map(replica), { concurrency: "unbounded" })
        for (let i = 0; i < 5; i++) yield* settle
        const secret = yield* assertConsistent(managers[0]!)
        for (const manager of managers) {
          assert.strictEqual(
            (yield* manager.current).cert,
            text(secret, "tls.crt"),
            "every replica serves the Secret's"
          )
          assert.strictEqual(yield* manager.caBundle, text(secret, "ca.crt"))
        }
        assert.strictEqual(pemCerts(text(secret, "ca.crt")).length, 1, "one CA: no replica replaced another's")
        assert.deepStrictEqual(started, managers.map(() => text(secret, "tls.crt")), "make returns the winner's")
        if (before !== undefined) assert.strictEqual(secret.metadata?.uid, before.metadata?.uid)
        const list = yield* KubeClient.list(Resource.Secret, { namespace: "default" })
        assert.strictEqual(list.items.length, 1)
      }).pipe(Effect.scoped, Effect.provide(Env)),
    { arbitrary: { runs: 15 }, timeout: 60_000 }
  )

  it.effect("options that cannot work are refused; rbac names the Secret and the objects", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(CertificateManager.make({ ...options, servingValidity: "1 day", caValidity: "2 days" }))
      )
      assert.strictEqual(error._tag, "CertificateManagerError")
      assert.deepStrictEqual(CertificateManager.rbac(options), [
        { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
        {
          apiGroups: [""],
          resources: ["secrets"],
          verbs: ["get", "list", "watch", "update"],
          resourceNames: ["hooks-tls"]
        },
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: ["mutatingwebhookconfigurations"],
          verbs: ["get", "list", "watch", "update", "patch"],
          resourceNames: ["m-hooks"]
        },
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: ["validatingwebhookconfigurations"],
          verbs: ["get", "list", "watch", "update", "patch"],
          resourceNames: ["v-hooks"]
        },
        {
          apiGroups: ["apiextensions.k8s.io"],
          resources: ["customresourcedefinitions"],
          verbs: ["get", "list", "watch", "update", "patch"],
          resourceNames: [crdName]
        }
      ])
    }).pipe(Effect.provide(Env)))
})
