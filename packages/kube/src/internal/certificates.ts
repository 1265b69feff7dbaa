/**
 * X.509 certificates built with `node:crypto` and a few lines of DER (see `Certificates.ts` for what uses them and
 * why no npm package): ECDSA P-256 keys, a CA, and the serving and client certificates it signs.
 *
 * @internal
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto"
import type * as Certificates from "../Certificates.js"

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n])
  const bytes: Array<number> = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

const tlv = (tag: number, ...content: ReadonlyArray<Buffer>): Buffer => {
  const body = Buffer.concat(content)
  return Buffer.concat([Buffer.from([tag]), length(body.length), body])
}

const seq = (...content: ReadonlyArray<Buffer>) => tlv(0x30, ...content)
const set = (...content: ReadonlyArray<Buffer>) => tlv(0x31, ...content)
const octets = (content: Buffer) => tlv(0x04, content)
const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0x00]))

const integer = (bytes: Buffer): Buffer =>
  tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes)

const oid = (dotted: string): Buffer => {
  const parts = dotted.split(".").map(Number)
  const out: Array<number> = [parts[0]! * 40 + parts[1]!]
  for (const p of parts.slice(2)) {
    const chunk: Array<number> = [p & 0x7f]
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80)
    for (const byte of chunk) out.push(byte)
  }
  return tlv(0x06, Buffer.from(out))
}

const utcTime = (date: Date): Buffer => {
  const pad = (n: number) => String(n).padStart(2, "0")
  const text = `${pad(date.getUTCFullYear() % 100)}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${
    pad(date.getUTCHours())
  }${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`
  return tlv(0x17, Buffer.from(text, "ascii"))
}

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value))

const pem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`

type Certificate = Certificates.Certificate

const ecdsaSha256 = seq(oid("1.2.840.10045.4.3.2"))

const distinguishedName = (commonName: string, organizations: ReadonlyArray<string>): Buffer =>
  seq(
    ...organizations.map((o) => set(seq(oid("2.5.4.10"), tlv(0x0c, Buffer.from(o, "utf8"))))),
    set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(commonName, "utf8"))))
  )

/** The DER of the subject name of a PEM certificate (to name it as the issuer of the ones it signs). */
const subjectOf = (cert: string): Buffer => {
  // The raw subject is the 6th element of the TBSCertificate; rebuilding it from `subject` text would reorder RDNs.
  const der = new X509Certificate(cert).raw
  const read = (buf: Buffer, at: number): { readonly start: number; readonly end: number; readonly body: number } => {
    let len = buf[at + 1]!
    let body = at + 2
    if (len & 0x80) {
      const n = len & 0x7f
      len = 0
      for (let i = 0; i < n; i++) len = len * 256 + buf[at + 2 + i]!
      body = at + 2 + n
    }
    return { start: at, end: body + len, body }
  }
  const tbs = read(der, read(der, 0).body)
  let at = tbs.body
  // version [0], serial, signature algorithm, issuer, validity, subject
  const fields: Array<{ readonly start: number; readonly end: number }> = []
  while (fields.length < 6) {
    const field = read(der, at)
    fields.push(field)
    at = field.end
  }
  const subject = der[fields[0]!.start] === 0xa0 ? fields[5]! : fields[4]!
  return der.subarray(subject.start, subject.end)
}

/**
 * A fresh ECDSA P-256 key and a certificate for it: a CA, or a serving or client certificate signed by `issuer`
 * (self-signed without one). Built with `node:crypto` and a few lines of DER, as {@link selfSigned}.
 */
export const issue = (spec: Certificates.Spec): Certificate => {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const subject = distinguishedName(spec.commonName, spec.organizations ?? [])
  const issuerName = spec.issuer === undefined ? subject : subjectOf(spec.issuer.cert)
  const signingKey = spec.issuer === undefined ? privateKey : createPrivateKey(spec.issuer.key)
  const now = Date.now()
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x40
  const usages = spec.usages ?? []
  const sans = [
    ...(spec.ips ?? []).map((ip) => tlv(0x87, Buffer.from(ip.split(".").map(Number)))),
    ...(spec.dnsNames ?? []).map((name) => tlv(0x82, Buffer.from(name, "ascii")))
  ]
  const extensions = [
    extension("2.5.29.19", true, spec.ca === true ? seq(bool(true)) : seq()),
    // keyUsage: digitalSignature, plus keyCertSign and cRLSign for a CA
    extension("2.5.29.15", true, tlv(0x03, spec.ca === true ? Buffer.from([0x01, 0x86]) : Buffer.from([0x07, 0x80]))),
    ...(usages.length > 0
      ? [extension(
        "2.5.29.37",
        false,
        seq(...usages.map((u) => oid(u === "server" ? "1.3.6.1.5.5.7.3.1" : "1.3.6.1.5.5.7.3.2")))
      )]
      : []),
    ...(sans.length > 0 ? [extension("2.5.29.17", false, seq(...sans))] : [])
  ]
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaSha256,
    issuerName,
    seq(
      utcTime(new Date(now - 60 * 60 * 1000)),
      utcTime(new Date(now + (spec.validDays ?? 365) * 24 * 60 * 60 * 1000))
    ),
    subject,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, seq(...extensions))
  )
  const signature = sign("sha256", tbs, { key: signingKey, dsaEncoding: "der" })
  const der = seq(tbs, ecdsaSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])))
  return { cert: pem("CERTIFICATE", der), key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() }
}

/** A fresh ECDSA P-256 key and a self-signed certificate for 127.0.0.1 and localhost, valid for a year. */
export const selfSigned = (): Certificate =>
  issue({
    commonName: "reconcile-testkit",
    ca: true,
    usages: ["server"],
    ips: ["127.0.0.1"],
    dnsNames: ["localhost"]
  })
