/**
 * X.509 certificates for TLS between Kubernetes components and an operator:
 * a CA, the serving certificates it signs (a webhook server's, a test API
 * server's) and client certificates (an admin user of a test control plane).
 * Keys are fresh ECDSA P-256 keys; certificates and keys are PEM.
 *
 * They are built with `node:crypto` and a few lines of DER: no npm package was
 * worth its dependencies for a few certificates (the maintained X.509 builders
 * need a global reflect-metadata polyfill or a pure-JS RSA key generator).
 *
 * @example
 * ```ts
 * import { Certificates } from "@reconcile/kube"
 *
 * const ca = Certificates.issue({ commonName: "webhook-ca", ca: true })
 * const serving = Certificates.issue({
 *   commonName: "webhook",
 *   usages: ["server"],
 *   dnsNames: ["webhook.operators.svc"],
 *   ips: ["127.0.0.1"],
 *   issuer: ca
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as internal from "./internal/certificates.js"

/**
 * A certificate and its private key, both PEM.
 *
 * @since 0.1.0
 * @category models
 */
export interface Certificate {
  readonly cert: string
  readonly key: string
}

/**
 * What a certificate names and may do.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spec {
  /** The subject's common name (a client certificate's user name). */
  readonly commonName: string
  /** The subject's organizations (a client certificate's groups, e.g. `system:masters`). */
  readonly organizations?: ReadonlyArray<string> | undefined
  /** A certificate authority (may sign certificates) rather than a leaf. */
  readonly ca?: boolean | undefined
  /** Extended key usages of a leaf: `server` (TLS serving), `client` (TLS client authentication). */
  readonly usages?: ReadonlyArray<"server" | "client"> | undefined
  /** Subject alternative names of a serving certificate: IPv4 addresses and DNS names. */
  readonly ips?: ReadonlyArray<string> | undefined
  readonly dnsNames?: ReadonlyArray<string> | undefined
  /** The signer (a CA's certificate and key); the certificate is self-signed without one. */
  readonly issuer?: Certificate | undefined
  /** Validity from one hour ago; default a year. */
  readonly validDays?: number | undefined
}

/**
 * A fresh ECDSA P-256 key and a certificate for it: a CA, or a serving or
 * client certificate signed by `issuer` (self-signed without one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const issue: (spec: Spec) => Certificate = internal.issue

/**
 * A fresh key and a self-signed certificate for `127.0.0.1` and `localhost`,
 * valid for a year (a local test server's).
 *
 * @since 0.1.0
 * @category constructors
 */
export const selfSigned: () => Certificate = internal.selfSigned
