import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { createPrivateKey, X509Certificate } from "node:crypto"
import * as Cache from "../Cache.js"
import { type CertificateManager, CertificateManagerError, type Options } from "../CertificateManager.js"
import * as Certificates from "../Certificates.js"
import * as KubeClient from "../KubeClient.js"
import type * as KubeError from "../KubeError.js"
import * as Resource from "../Resource.js"
import * as Watcher from "../Watcher.js"
import type { PolicyRule } from "./policyRule.js"

const DAY = 24 * 60 * 60 * 1000

/** A webhook configuration as far as the manager reads it: its webhooks' `clientConfig`. */
interface WebhookConfiguration {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
  readonly metadata?: Resource.Secret["metadata"]
  readonly webhooks?: ReadonlyArray<{ readonly clientConfig?: { readonly caBundle?: string } & object } & object>
}

const webhookConfiguration = (kind: string, plural: string) =>
  Resource.make<WebhookConfiguration>({
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind,
    plural,
    scope: "Cluster"
  })

const MutatingWebhookConfiguration = webhookConfiguration(
  "MutatingWebhookConfiguration",
  "mutatingwebhookconfigurations"
)
const ValidatingWebhookConfiguration = webhookConfiguration(
  "ValidatingWebhookConfiguration",
  "validatingwebhookconfigurations"
)

/** @internal */
export const serviceDnsNames = (serviceName: string, namespace: string): ReadonlyArray<string> => [
  serviceName,
  `${serviceName}.${namespace}`,
  `${serviceName}.${namespace}.svc`,
  `${serviceName}.${namespace}.svc.cluster.local`
]

const secretNameOf = (options: Options): string => options.secretName ?? `${options.serviceName}-tls`

/** @internal */
export const rbac = (options: Options): ReadonlyArray<PolicyRule> => {
  const named = (apiGroup: string, resource: string, names: ReadonlyArray<string> | undefined) =>
    names !== undefined && names.length > 0
      ? [{
        apiGroups: [apiGroup],
        resources: [resource],
        verbs: ["get", "list", "watch", "update", "patch"],
        resourceNames: [...names]
      }]
      : []
  return [
    // a create names no object in its URL, so RBAC cannot restrict it to one name
    { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "list", "watch", "update"],
      resourceNames: [secretNameOf(options)]
    },
    ...named("admissionregistration.k8s.io", "mutatingwebhookconfigurations", options.mutatingWebhookConfigurations),
    ...named(
      "admissionregistration.k8s.io",
      "validatingwebhookconfigurations",
      options.validatingWebhookConfigurations
    ),
    ...named("apiextensions.k8s.io", "customresourcedefinitions", options.customResourceDefinitions)
  ]
}

interface Settings {
  readonly namespace: string
  readonly secretName: string
  readonly serviceName: string
  readonly dnsNames: ReadonlyArray<string>
  readonly ips: ReadonlyArray<string>
  readonly servingValidity: number
  readonly caValidity: number
  readonly resync: number
  readonly retryDelay: number
}

const settingsOf = (options: Options): Effect.Effect<Settings, CertificateManagerError> =>
  Effect.gen(function*() {
    const servingValidity = Duration.toMillis(Duration.fromInputUnsafe(options.servingValidity ?? "90 days"))
    const caValidity = Duration.toMillis(Duration.fromInputUnsafe(options.caValidity ?? `${3 * 365} days`))
    if (options.serviceName === "" || options.namespace === "") {
      return yield* new CertificateManagerError({ reason: "serviceName and namespace must not be empty" })
    }
    if (!(servingValidity > 0) || caValidity < 3 * servingValidity) {
      return yield* new CertificateManagerError({
        reason: "caValidity must be at least 3 × servingValidity (a serving certificate must not outlive its CA)"
      })
    }
    return {
      namespace: options.namespace,
      secretName: secretNameOf(options),
      serviceName: options.serviceName,
      dnsNames: [...serviceDnsNames(options.serviceName, options.namespace), ...(options.dnsNames ?? [])],
      ips: options.ips ?? [],
      servingValidity,
      caValidity,
      resync: Duration.toMillis(Duration.fromInputUnsafe(options.resync ?? "10 minutes")),
      retryDelay: Duration.toMillis(Duration.fromInputUnsafe(options.retryDelay ?? "5 seconds"))
    }
  })

/** What the Secret holds, as PEM. */
interface Material {
  readonly servingCert: string
  readonly servingKey: string
  /** The signing CA first, then older CAs still valid. */
  readonly caCerts: ReadonlyArray<string>
  readonly caKey: string
}

const bundleOf = (material: Material): string => material.caCerts.join("")

/**
 * `Certificates.issue` dates a certificate from the wall clock (valid from an hour ago for `validDays`); the manager
 * judges renewal on Effect's Clock. So that both agree, the validity is stretched by the Clock's offset from the wall
 * clock (none in production): the certificate ends `validity` after the Clock's `now`, and a `TestClock` moved ahead
 * does not see a fresh certificate as already due.
 */
const validDaysUntil = (now: number, validity: number): number => (now + validity - Date.now()) / DAY

/**
 * Each CA is named apart, by the second it was made (as client-go's self-signed CAs, `<host>-ca@<unix seconds>`):
 * after a CA renewal the bundle holds two CAs, and a serving certificate names its CA only by subject (no key
 * identifiers). Under one name, OpenSSL (Node, curl, Python) takes the first CA of that name in the bundle and fails
 * the signature of a certificate the other one signed — a replica still serving the old CA's certificate, or a
 * client not yet given the new bundle, would be refused.
 */
const issueCa = (settings: Settings, now: number): Certificates.Certificate =>
  Certificates.issue({
    commonName: `${settings.serviceName}.${settings.namespace}-ca@${Math.floor(now / 1000)}`,
    ca: true,
    validDays: validDaysUntil(now, settings.caValidity)
  })

const issueServing = (settings: Settings, now: number, ca: Certificates.Certificate): Certificates.Certificate =>
  Certificates.issue({
    commonName: `${settings.serviceName}.${settings.namespace}.svc`,
    usages: ["server"],
    dnsNames: settings.dnsNames,
    ips: settings.ips,
    issuer: ca,
    validDays: validDaysUntil(now, settings.servingValidity)
  })

const fresh = (settings: Settings, now: number): Material => {
  const ca = issueCa(settings, now)
  const serving = issueServing(settings, now, ca)
  return { servingCert: serving.cert, servingKey: serving.key, caCerts: [ca.cert], caKey: ca.key }
}

const pemCertificates = (text: string): ReadonlyArray<string> =>
  (text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => `${pem}\n`)

const decodeField = (data: Readonly<Record<string, string>> | undefined, key: string): string | undefined => {
  const value = data?.[key]
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8")
}

const encodeMaterial = (material: Material): Record<string, string> => ({
  "tls.crt": Buffer.from(material.servingCert).toString("base64"),
  "tls.key": Buffer.from(material.servingKey).toString("base64"),
  "ca.crt": Buffer.from(bundleOf(material)).toString("base64"),
  "ca.key": Buffer.from(material.caKey).toString("base64")
})

/** The parsed Secret, or why it cannot be used (a reason naming fields, never their content). */
type Parsed =
  | {
    readonly _tag: "Usable"
    readonly material: Material
    readonly serving: X509Certificate
    readonly cas: ReadonlyArray<X509Certificate>
  }
  | { readonly _tag: "Unusable"; readonly reason: string }

const tryOr = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

const parse = (secret: Resource.Secret): Parsed => {
  const unusable = (reason: string): Parsed => ({ _tag: "Unusable", reason })
  const servingCert = decodeField(secret.data, "tls.crt")
  const servingKey = decodeField(secret.data, "tls.key")
  const bundle = decodeField(secret.data, "ca.crt")
  const caKey = decodeField(secret.data, "ca.key")
  if (servingCert === undefined || servingKey === undefined || bundle === undefined || caKey === undefined) {
    return unusable("a key of tls.crt, tls.key, ca.crt, ca.key is missing")
  }
  const serving = tryOr(() => new X509Certificate(servingCert))
  if (serving === undefined) return unusable("tls.crt is not a PEM certificate")
  const caCerts = pemCertificates(bundle)
  const cas = tryOr(() => caCerts.map((pem) => new X509Certificate(pem)))
  if (cas === undefined || cas.length === 0) return unusable("ca.crt is not a PEM certificate bundle")
  const key = tryOr(() => createPrivateKey(servingKey))
  if (key === undefined) return unusable("tls.key is not a PEM private key")
  const signingKey = tryOr(() => createPrivateKey(caKey))
  if (signingKey === undefined) return unusable("ca.key is not a PEM private key")
  if (tryOr(() => serving.checkPrivateKey(key)) !== true) return unusable("tls.key does not match tls.crt")
  if (tryOr(() => cas[0]!.checkPrivateKey(signingKey)) !== true) {
    return unusable("ca.key does not match the first certificate of ca.crt")
  }
  if (tryOr(() => cas[0]!.ca && serving.verify(cas[0]!.publicKey)) !== true) {
    return unusable("tls.crt is not signed by the CA of ca.crt")
  }
  return { _tag: "Usable", material: { servingCert, servingKey, caCerts, caKey }, serving, cas }
}

const notAfter = (cert: X509Certificate): number => new Date(cert.validTo).getTime()

/** The names a serving certificate must carry, in `subjectAltName`'s text form. */
const namesMissing = (serving: X509Certificate, settings: Settings): boolean => {
  const names = new Set((serving.subjectAltName ?? "").split(", "))
  return settings.dnsNames.some((name) => !names.has(`DNS:${name}`)) ||
    settings.ips.some((ip) => !names.has(`IP Address:${ip}`))
}

/** What the Secret should hold now: the same material (nothing to write), or a renewal with why. */
interface Judgement {
  readonly material: Material
  /** Why the Secret must be written; undefined when it is fine as it is. */
  readonly change: string | undefined
  /** Whether the Secret was unusable (the change replaces it entirely). */
  readonly replaced: boolean
  /** When to look again at the latest (the next renewal, or an old CA's expiry). */
  readonly nextDue: number
}

const judge = (secret: Resource.Secret, settings: Settings, now: number): Judgement => {
  const parsed = parse(secret)
  if (parsed._tag === "Unusable") {
    const material = fresh(settings, now)
    return { material, change: parsed.reason, replaced: true, nextDue: dueOf(material, settings) }
  }
  const { cas, serving } = parsed
  let material = parsed.material
  const caEnd = notAfter(cas[0]!)
  const changes: Array<string> = []
  if (caEnd <= now) {
    const renewed = fresh(settings, now)
    return { material: renewed, change: "the CA expired", replaced: true, nextDue: dueOf(renewed, settings) }
  }
  if (now >= caEnd - settings.caValidity / 3) {
    const ca = issueCa(settings, now)
    const leaf = issueServing(settings, now, ca)
    material = {
      servingCert: leaf.cert,
      servingKey: leaf.key,
      caCerts: [ca.cert, ...material.caCerts],
      caKey: ca.key
    }
    changes.push("the CA is due for renewal")
  } else if (now >= notAfter(serving) - settings.servingValidity / 3 || namesMissing(serving, settings)) {
    const leaf = issueServing(settings, now, { cert: material.caCerts[0]!, key: material.caKey })
    material = { ...material, servingCert: leaf.cert, servingKey: leaf.key }
    changes.push(
      namesMissing(serving, settings)
        ? "the serving certificate lacks a name"
        : "the serving certificate is due for renewal"
    )
  }
  // older CAs stay in the bundle until they expire
  const kept = material.caCerts.filter((pem, i) => i === 0 || notAfter(new X509Certificate(pem)) > now)
  if (kept.length !== material.caCerts.length) {
    material = { ...material, caCerts: kept }
    changes.push("an old CA expired")
  }
  return {
    material,
    change: changes.length > 0 ? changes.join("; ") : undefined,
    replaced: false,
    nextDue: dueOf(material, settings)
  }
}

const dueOf = (material: Material, settings: Settings): number => {
  const cas = material.caCerts.map((pem) => notAfter(new X509Certificate(pem)))
  return Math.min(
    cas[0]! - settings.caValidity / 3,
    notAfter(new X509Certificate(material.servingCert)) - settings.servingValidity / 3,
    ...cas.slice(1)
  )
}

/** @internal */
export const make = (
  options: Options
): Effect.Effect<
  CertificateManager.Service,
  CertificateManagerError | KubeError.KubeError,
  KubeClient.KubeClient | Scope.Scope
> =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const client = yield* KubeClient.KubeClient
    const secretRef = { namespace: settings.namespace }
    const where = `${settings.namespace}/${settings.secretName}`

    /** Reads, creates or renews the Secret until this replica holds what is in it; returns it and its next due time. */
    const syncSecret = Effect.gen(function*() {
      for (let attempt = 1;; attempt++) {
        const now = yield* Clock.currentTimeMillis
        const existing = yield* client.get(Resource.Secret, settings.secretName, secretRef).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(undefined))
        )
        if (existing === undefined) {
          const material = fresh(settings, now)
          const created = yield* client.create(Resource.Secret, {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: settings.secretName, namespace: settings.namespace },
            type: "kubernetes.io/tls",
            data: encodeMaterial(material)
          }, secretRef).pipe(
            Effect.as(true),
            // another replica created it first: read what it wrote
            Effect.catchTag("AlreadyExists", () => Effect.succeed(false))
          )
          if (created) {
            yield* Effect.logInfo("created the webhook certificate Secret").pipe(Effect.annotateLogs({ secret: where }))
            return { material, nextDue: dueOf(material, settings) }
          }
          continue
        }
        const judgement = judge(existing, settings, now)
        if (judgement.change === undefined) return judgement
        const written = yield* client.replace(Resource.Secret, {
          ...existing,
          data: encodeMaterial(judgement.material)
        }, secretRef).pipe(
          Effect.as(true),
          // another replica wrote first (resourceVersion precondition): read what it wrote and judge that; replicas
          // that keep losing for 10 rounds in a row give up this round (the next one comes after `retryDelay`)
          Effect.catchTag("Conflict", (conflict) => attempt < 10 ? Effect.succeed(false) : Effect.fail(conflict))
        )
        if (written) {
          const log = judgement.replaced ? Effect.logWarning : Effect.logInfo
          yield* log(
            judgement.replaced
              ? "the webhook certificate Secret was unusable: replaced it with a fresh CA and serving certificate"
              : "renewed the webhook certificates"
          ).pipe(Effect.annotateLogs({ secret: where, reason: judgement.change }))
          return judgement
        }
      }
    })

    const first = yield* syncSecret.pipe(Effect.annotateLogs({ service: "CertificateManager" }))
    const certificate = yield* SubscriptionRef.make<Certificates.Certificate>({
      cert: first.material.servingCert,
      key: first.material.servingKey
    })
    const bundle = yield* SubscriptionRef.make(bundleOf(first.material))

    const publish = (material: Material) =>
      Effect.gen(function*() {
        const current = yield* SubscriptionRef.get(certificate)
        if (current.cert !== material.servingCert) {
          yield* SubscriptionRef.set(certificate, { cert: material.servingCert, key: material.servingKey })
        }
        const pem = bundleOf(material)
        if ((yield* SubscriptionRef.get(bundle)) !== pem) yield* SubscriptionRef.set(bundle, pem)
      })

    /** Writes the bundle into every webhook of one configuration, unless it is there or the object is absent. */
    const injectWebhooks = (resource: Resource.Resource<WebhookConfiguration>, name: string, caBundle: string) =>
      Effect.gen(function*() {
        const object = yield* client.get(resource, name).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(undefined))
        )
        if (object === undefined) return
        const webhooks = object.webhooks ?? []
        if (webhooks.every((webhook) => webhook.clientConfig?.caBundle === caBundle)) return
        yield* client.replace(resource, {
          ...object,
          webhooks: webhooks.map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } }))
        })
        yield* Effect.logInfo("injected the CA bundle").pipe(Effect.annotateLogs({ kind: resource.kind, name }))
      })

    const injectCrd = (name: string, caBundle: string) =>
      Effect.gen(function*() {
        const crd = yield* client.get(Resource.CustomResourceDefinition, name).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(undefined))
        )
        const conversion = crd?.spec.conversion
        if (crd === undefined || conversion?.strategy !== "Webhook") return
        if (conversion.webhook?.clientConfig?.caBundle === caBundle) return
        yield* client.replace(Resource.CustomResourceDefinition, {
          ...crd,
          spec: {
            ...crd.spec,
            conversion: {
              ...conversion,
              webhook: {
                ...conversion.webhook!,
                clientConfig: { ...conversion.webhook?.clientConfig, caBundle }
              }
            }
          }
        })
        yield* Effect.logInfo("injected the CA bundle").pipe(
          Effect.annotateLogs({ kind: "CustomResourceDefinition", name })
        )
      })

    const targets: ReadonlyArray<readonly [Resource.Resource<any>, string]> = [
      ...(options.mutatingWebhookConfigurations ?? []).map((name) => [MutatingWebhookConfiguration, name] as const),
      ...(options.validatingWebhookConfigurations ?? []).map((name) => [ValidatingWebhookConfiguration, name] as const),
      ...(options.customResourceDefinitions ?? []).map((name) => [Resource.CustomResourceDefinition, name] as const)
    ]

    const inject = (material: Material) => {
      const caBundle = Buffer.from(bundleOf(material)).toString("base64")
      return Effect.forEach(targets, ([resource, name]) =>
        (resource === Resource.CustomResourceDefinition
          ? injectCrd(name, caBundle)
          : injectWebhooks(resource, name, caBundle)).pipe(
            Effect.as(true),
            Effect.catchTag("Conflict", () => Effect.succeed(false)),
            Effect.catch((error) =>
              Effect.as(
                Effect.logWarning("could not inject the CA bundle").pipe(
                  Effect.annotateLogs({ kind: resource.kind, name, error: error.message })
                ),
                false
              )
            )
          ))
    }

    /** One round: the Secret, what this replica serves, the bundles. The next round's latest time. */
    const round = Effect.gen(function*() {
      const synced = yield* syncSecret
      yield* publish(synced.material)
      const injected = yield* inject(synced.material)
      const now = yield* Clock.currentTimeMillis
      const next = Math.min(synced.nextDue - now, settings.resync)
      return injected.every((ok) => ok) ? next : Math.min(next, settings.retryDelay)
    })

    // every watch event (an object appeared, changed, vanished; a relist) asks for a round at once
    const wake = yield* Queue.sliding<void>(1)
    const watched: ReadonlyArray<readonly [Resource.Resource<any>, string, string | undefined]> = [
      [Resource.Secret, settings.secretName, settings.namespace],
      ...targets.map(([resource, name]) => [resource, name, undefined] as const)
    ]
    yield* Effect.forEach(watched, ([resource, name, namespace]) =>
      Watcher.watch(
        Cache.listWatch(client, resource, { namespace, fieldSelector: `metadata.name=${name}` })
      ).pipe(
        Stream.runForEach((event) =>
          event._tag === "Init" || event._tag === "InitApply" ? Effect.void : Queue.offer(wake, undefined)
        ),
        Effect.forkScoped
      ), { discard: true })

    const loop = Effect.gen(function*() {
      for (;;) {
        const wait = yield* round.pipe(
          Effect.catch((error) =>
            Effect.as(
              Effect.logWarning("could not read or write the webhook certificate Secret").pipe(
                Effect.annotateLogs({ secret: where, error: error.message })
              ),
              settings.retryDelay
            )
          )
        )
        yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(Duration.millis(Math.max(0, wait))))
      }
    })
    yield* Effect.forkScoped(loop.pipe(Effect.annotateLogs({ service: "CertificateManager" })))

    return {
      current: SubscriptionRef.get(certificate),
      changes: Stream.drop(SubscriptionRef.changes(certificate), 1),
      caBundle: SubscriptionRef.get(bundle)
    }
  })
