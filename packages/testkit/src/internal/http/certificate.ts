/**
 * A self-signed serving certificate for 127.0.0.1 / localhost, built with
 * `node:crypto` and a few lines of DER. client-go (kubectl) sends bearer
 * tokens only over TLS, so the test server needs one; no npm package was
 * worth its dependencies for a single certificate (the maintained X.509
 * builders need a global reflect-metadata polyfill or a pure-JS RSA keygen).
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto"

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

export interface Certificate {
  readonly cert: string
  readonly key: string
}

/** A fresh ECDSA P-256 key and a self-signed certificate for 127.0.0.1 and localhost, valid for a year. */
export const selfSigned = (): Certificate => {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const ecdsaSha256 = seq(oid("1.2.840.10045.4.3.2"))
  const name = seq(set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from("reconcile-testkit", "utf8")))))
  const now = Date.now()
  const serial = randomBytes(16)
  // Positive and minimal: a leading 0x00 before a byte < 0x80 is illegal DER padding.
  serial[0] = (serial[0]! & 0x7f) | 0x40
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaSha256,
    name,
    seq(utcTime(new Date(now - 60 * 60 * 1000)), utcTime(new Date(now + 365 * 24 * 60 * 60 * 1000))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(
      0xa3,
      seq(
        extension("2.5.29.19", true, seq(bool(true))),
        extension("2.5.29.15", true, tlv(0x03, Buffer.from([0x02, 0x84]))),
        extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))),
        extension(
          "2.5.29.17",
          false,
          seq(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from("localhost", "ascii")))
        )
      )
    )
  )
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" })
  const der = seq(tbs, ecdsaSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])))
  return { cert: pem("CERTIFICATE", der), key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() }
}
