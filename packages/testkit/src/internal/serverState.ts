/**
 * What a `TestApiServer` keeps across restarts in its state directory, so
 * that clients holding its kubeconfig reconnect to a restarted server: the
 * self-signed certificate (the kubeconfig's CA), its private key, the bearer
 * token and the port. Files are written atomically with mode 0600 in a 0700
 * directory; a damaged or partial state is refused, naming the file, never
 * silently replaced (replacing the CA or the token would lock out every client).
 */
import { type Certificate, selfSigned } from "@reconcile/kube/Certificates"
import { createPrivateKey, randomBytes, X509Certificate } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/** The self-signed serving certificate (PEM), which is the kubeconfig's CA. */
export const CERT_FILE = "ca.crt"
/** Its private key (PKCS#8 PEM). */
export const KEY_FILE = "server.key"
/** The bearer token (one line). */
export const TOKEN_FILE = "token"
/** The port of the last start (one line). */
export const PORT_FILE = "port"

/** The credentials (and last port) of a server. */
export interface ServerState {
  readonly tls: Certificate
  readonly token: string
  /** The port the server listened on last time, if recorded. */
  readonly port: number | undefined
  /** What changed on disk: `created` (a new state), `renewed` (the certificate had expired), or nothing. */
  readonly changed: "created" | "renewed" | undefined
}

/** A state directory (or given credentials) that cannot be used; the message names the file. */
export class StateError extends Error {}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** A bearer token must fit an HTTP header: visible ASCII, no spaces. */
export const checkToken = (token: string, where: string): string => {
  if (!/^[\x21-\x7e]+$/.test(token)) throw new StateError(`${where}: not a bearer token (visible ASCII, no spaces)`)
  return token
}

/** Parses a PEM certificate and key, checks they belong together and that the certificate covers 127.0.0.1. */
export const checkCertificate = (tls: Certificate, certWhere: string, keyWhere: string): X509Certificate => {
  let cert: X509Certificate
  try {
    cert = new X509Certificate(tls.cert)
  } catch (e) {
    throw new StateError(`${certWhere}: not a PEM certificate: ${messageOf(e)}`)
  }
  let key
  try {
    key = createPrivateKey(tls.key)
  } catch (e) {
    throw new StateError(`${keyWhere}: not a PEM private key: ${messageOf(e)}`)
  }
  if (!cert.checkPrivateKey(key)) throw new StateError(`${keyWhere}: is not the key of ${certWhere}`)
  if (cert.checkIP("127.0.0.1") === undefined) throw new StateError(`${certWhere}: does not cover 127.0.0.1`)
  return cert
}

const readIfExists = async (file: string): Promise<string | undefined> => {
  try {
    return await Fs.readFile(file, "utf8")
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw new StateError(`${file}: cannot be read: ${messageOf(e)}`)
  }
}

/** Writes `content` to `file` with mode 0600, atomically (a temporary file, fsync, rename, fsync of the directory). */
const writePrivate = async (file: string, content: string): Promise<void> => {
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`
  try {
    const handle = await Fs.open(temp, "wx", 0o600)
    try {
      await handle.writeFile(content)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await Fs.rename(temp, file)
    const dir = await Fs.open(Path.dirname(file), "r")
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  } catch (e) {
    await Fs.rm(temp, { force: true })
    throw new StateError(`${file}: cannot be written: ${messageOf(e)}`)
  }
}

/** Files readable by others are narrowed to 0600 (they hold a private key and a token). */
const narrow = async (file: string): Promise<void> => {
  const mode = (await Fs.stat(file)).mode & 0o777
  if ((mode & 0o077) !== 0) await Fs.chmod(file, 0o600)
}

/**
 * Loads the state in `dir`, or creates it (a new certificate, key and token)
 * when the directory has no token yet. Rejects with a {@link StateError}
 * when it is partial or damaged.
 */
export const loadOrCreate = async (dir: string, now: number = Date.now()): Promise<ServerState> => {
  const files = {
    cert: Path.join(dir, CERT_FILE),
    key: Path.join(dir, KEY_FILE),
    token: Path.join(dir, TOKEN_FILE),
    port: Path.join(dir, PORT_FILE)
  }
  try {
    await Fs.mkdir(dir, { recursive: true, mode: 0o700 })
  } catch (e) {
    throw new StateError(`${dir}: cannot be created: ${messageOf(e)}`)
  }
  const [cert, key, token, port] = await Promise.all([
    readIfExists(files.cert),
    readIfExists(files.key),
    readIfExists(files.token),
    readIfExists(files.port)
  ])
  // The token is written last when a state is created: without it, the creation never finished (nothing was handed
  // to a client yet), so it starts over.
  if (token === undefined) {
    const tls = selfSigned()
    const fresh = randomBytes(24).toString("hex")
    await writePrivate(files.key, tls.key)
    await writePrivate(files.cert, tls.cert)
    await writePrivate(files.token, `${fresh}\n`)
    return { tls, token: fresh, port: undefined, changed: "created" }
  }
  const missing = [[cert, files.cert], [key, files.key]].filter(([text]) => text === undefined)
  if (missing.length > 0) {
    throw new StateError(
      `${
        missing.map(([, file]) => file).join(", ")
      }: missing from the server state (remove ${dir} to start with a new CA and token)`
    )
  }
  const tokenText = checkToken(token.trim(), files.token)
  let recordedPort: number | undefined
  if (port !== undefined) {
    const text = port.trim()
    if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
      throw new StateError(`${files.port}: not a port number`)
    }
    recordedPort = Number(text)
  }
  let tls: Certificate = { cert: cert!, key: key! }
  const x509 = checkCertificate(tls, files.cert, files.key)
  await Promise.all([narrow(files.cert), narrow(files.key), narrow(files.token)])
  if (Date.parse(x509.validTo) <= now + 60 * 60 * 1000) {
    // Expired (or within the hour): clients would be refused anyway; a new one keeps the server usable.
    tls = selfSigned()
    await writePrivate(files.key, tls.key)
    await writePrivate(files.cert, tls.cert)
    return { tls, token: tokenText, port: recordedPort, changed: "renewed" }
  }
  return { tls, token: tokenText, port: recordedPort, changed: undefined }
}

/** Records the port the server listens on, so that the next start takes it again. */
export const savePort = (dir: string, port: number): Promise<void> =>
  writePrivate(Path.join(dir, PORT_FILE), `${port}\n`)
