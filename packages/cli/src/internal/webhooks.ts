/**
 * The main job's webhook server (`Operator.make({ webhooks })`): it runs on every replica, beside leader election
 * (never behind it: a replica that does not lead must still answer admission), its readiness is part of the
 * Manager's `/readyz`, and it drains when the program stops.
 *
 * - On a local cluster (the embedded one, `--real`) the certificate is made for 127.0.0.1 by a CA of this run, and
 *   the main job installs the webhook configurations and the CRDs' conversion stanzas with
 *   `clientConfig.url: https://127.0.0.1:<port>/…` and that CA's bundle.
 * - On a named cluster (`--kubeconfig`, `--context`, `--in-cluster`) the certificate is the `CertificateManager`'s
 *   (which keeps it in a Secret and injects the CA bundle), or the files of `--webhook-cert-dir` or of the
 *   operator's `certificates.directory`; the configurations are the manifests' (`reconcile manifests`). Out of the
 *   cluster (`--kubeconfig`, `--context`) where the operator was never deployed (its namespace, or its certificate
 *   directory, does not exist) nothing can call the process: it serves with a certificate of its run and says so,
 *   rather than refusing to start (as a developer runs an operator against a cluster before deploying it).
 */
import { Manager } from "@reconcile/core"
import {
  Admission,
  CertificateManager,
  Certificates,
  Conversion,
  KubeClient,
  Operator,
  Resource,
  WebhookServer
} from "@reconcile/kube"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import type { Args } from "./args.js"
import { crds } from "./crds.js"
import { narrate } from "./narration.js"

/** Whether the main job runs on a cluster of its own (the embedded one, `--real`). */
export const isLocal = (args: Args): boolean => args.mode._tag === "Embedded" || args.mode._tag === "Real"

/**
 * The configurations and conversion stanzas of a local run: kube-apiserver calls `url` and trusts `caBundle`.
 *
 * @internal
 */
export const install = <E, R>(
  operator: Operator.Operator<E, R>,
  settings: Operator.WebhookSettings<R>,
  url: string,
  caBundle: string
) =>
  Effect.gen(function*() {
    const apply = { type: "apply", fieldManager: operator.name, force: true } as const
    for (
      const configuration of Admission.configurations(settings.admission, {
        name: operator.name,
        clientConfig: { url, caBundle }
      })
    ) {
      const resource = configuration.kind === "MutatingWebhookConfiguration"
        ? Admission.MutatingWebhookConfiguration
        : Admission.ValidatingWebhookConfiguration
      yield* KubeClient.patch(resource, configuration.metadata.name, configuration, apply)
      yield* narrate(`Installed ${configuration.kind} ${configuration.metadata.name}`, {
        message: "installed",
        fields: { kind: configuration.kind, name: configuration.metadata.name }
      })
    }
    if (settings.conversion.length === 0) return
    const definitions = (yield* crds(operator)) as unknown as ReadonlyArray<Resource.CustomResourceDefinition>
    const converted = Conversion.withConversion(
      definitions.filter((crd) => settings.customResourceDefinitions.includes(crd.metadata?.name ?? "")),
      settings.conversion,
      { url, caBundle }
    )
    if (Result.isFailure(converted)) return yield* Effect.fail(converted.failure)
    for (const crd of converted.success) {
      const name = crd.metadata!.name!
      yield* KubeClient.patch(Resource.CustomResourceDefinition, name, crd, apply)
      yield* narrate(`Installed the conversion webhook of CustomResourceDefinition ${name}`, {
        message: "installed the conversion webhook",
        fields: { kind: "CustomResourceDefinition", name }
      })
    }
  })

/** The certificate of this run on a local cluster: a CA of its own, and a serving certificate for 127.0.0.1. */
const localCertificate = (name: string) => {
  const ca = Certificates.issue({ commonName: `${name}-webhook-ca`, ca: true })
  const serving = Certificates.issue({
    commonName: "127.0.0.1",
    usages: ["server"],
    ips: ["127.0.0.1"],
    dnsNames: ["localhost"],
    issuer: ca
  })
  return { ca, serving }
}

/**
 * The webhook server of `operator` (nothing when it has no webhooks), registered with the Manager; on a local
 * cluster it also installs what calls it. `namespace` is where the operator runs (its Service's namespace).
 *
 * @internal
 */
export const layer = <E, R>(
  operator: Operator.Operator<E, R>,
  args: Args,
  namespace: string
): Layer.Layer<never, unknown, R | Manager.Manager | KubeClient.KubeClient> => {
  const settings = Operator.webhookSettings(operator, namespace)
  if (settings === undefined) return Layer.empty
  return Layer.effectDiscard(Effect.gen(function*() {
    const local = isLocal(args)
    // registered first, not ready until the server listens: /readyz must not answer 200 while the certificate is
    // still being made (the managed one takes a few requests)
    const manager = yield* Manager.Manager
    let ready: Effect.Effect<boolean> = Effect.succeed(false)
    yield* manager.register({ name: "webhook-server", ready: Effect.suspend(() => ready), await: Effect.never })
    const host = args.mode._tag === "InCluster" ? "0.0.0.0" : "127.0.0.1"
    const port = args.webhookPort ?? (args.mode._tag === "InCluster" ? settings.port : 0)
    // Out of the cluster (`--kubeconfig`, `--context`) where the operator was never deployed (no namespace for the
    // managed certificate's Secret, no mounted certificate directory), nothing in the cluster can call this process:
    // it serves with a certificate of this run rather than refusing to start.
    const undeployed = args.mode._tag !== "InCluster" && !local && args.webhookCertDir === undefined &&
      (settings.certificates._tag === "Directory"
        ? !fs.existsSync(settings.certificates.directory)
        : yield* Effect.map(
          Effect.exit(KubeClient.get(Resource.Namespace, settings.certificates.options.namespace)),
          (exit) => Exit.isFailure(exit)
        ))
    if (undeployed) {
      yield* Effect.logWarning(
        "the operator is not deployed in this cluster (no namespace or certificate directory for its webhooks): " +
          "they are served with a certificate of this run, and nothing in the cluster calls them"
      )
    }
    const generated = local || undeployed ? localCertificate(operator.name) : undefined
    const certificate: WebhookServer.CertificateSource = generated !== undefined
      ? WebhookServer.fromPem(generated.serving)
      : args.webhookCertDir !== undefined
      ? yield* WebhookServer.fromDirectory(args.webhookCertDir)
      : settings.certificates._tag === "Directory"
      ? yield* WebhookServer.fromDirectory(settings.certificates.directory)
      : yield* CertificateManager.make(settings.certificates.options)
    const server = yield* WebhookServer.make({ routes: settings.routes, certificate, host, port })
    ready = server.ready
    const address = `https://${host}:${server.address.port}`
    yield* Effect.logInfo("serving webhooks").pipe(
      Effect.annotateLogs({ address, paths: settings.routes.map((r) => r.path).join(",") })
    )
    if (generated !== undefined && local) {
      // as records, "serving webhooks" above says it
      yield* narrate(`Webhooks served on ${address} (${settings.routes.map((r) => r.path).join(", ")})`, undefined)
      yield* install(operator, settings, `https://127.0.0.1:${server.address.port}`, generated.ca.cert)
    }
  })) as Layer.Layer<never, unknown, R | Manager.Manager | KubeClient.KubeClient>
}
