/**
 * What keeps credentials and bulk out of the messages of errors: redaction of tokens and keys, truncation of raw
 * bodies. Used by every module that quotes a server's, a plugin's or a kubeconfig's text.
 */

/** @internal */
export const maxRawLength = 512

/** @internal */
export const truncate = (raw: string): string =>
  raw.length <= maxRawLength ? raw : `${raw.slice(0, maxRawLength)}… (${raw.length} chars)`

const bearer = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi
const tokenish = /("?(?:token|password|client-key-data|id-token|refresh-token|access-token)"?\s*[:=]\s*)"?[^\s",}]+"?/gi

/**
 * Removes credentials from a message that may quote a header, an exec
 * plugin's output or a kubeconfig.
 *
 * @internal
 */
export const redact = (text: string): string => text.replace(bearer, "$1 <redacted>").replace(tokenish, "$1<redacted>")
