/** Small JSON helpers shared by the internals. */

export type Obj = Record<string, any>

export const isObject = (value: unknown): value is Obj =>
  value !== null && typeof value === "object" && !Array.isArray(value)

export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a as Obj).filter((k) => (a as Obj)[k] !== undefined)
  const kb = Object.keys(b as Obj).filter((k) => (b as Obj)[k] !== undefined)
  if (ka.length !== kb.length) return false
  for (const k of ka) if (!deepEqual((a as Obj)[k], (b as Obj)[k])) return false
  return true
}

export const clone = <A>(value: A): A => (value === undefined ? value : JSON.parse(JSON.stringify(value)))

/** JSON with object keys sorted, for stable keys. */
export const stableStringify = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`
  if (isObject(value)) {
    return `{${
      Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${stableStringify(value[k])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value)
}

/** Go's `encoding/json` escapes `<`, `>`, `&`, U+2028 and U+2029 in what it writes. */
const goEscape = (json: string): string =>
  json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * A decoded JSON value as Go's `encoding/json` marshals it: object keys sorted, HTML characters escaped (what
 * upstream prints for a structured value in a field error, `Duplicate value: {"name":"x"}`).
 */
export const goJson = (value: unknown): string => goEscape(stableStringify(value))

/** A JSON value with its keys in their order, as Go re-marshals a raw message (HTML characters escaped). */
export const goRawJson = (value: unknown): string => goEscape(JSON.stringify(value))

/** RFC 3339 timestamp with second precision, as Kubernetes writes `metav1.Time`. */
export const formatTime = (millis: number): string =>
  new Date(Math.floor(millis / 1000) * 1000).toISOString().replace(".000Z", "Z")

// -----------------------------------------------------------------------------------------------------------------
// Go's views of JSON text and values (what kube-apiserver's messages quote)

/** The name encoding/json gives a decoded JSON value's type in its errors (`bool`, `number`, `array`, …). */
export const goJsonType = (v: unknown): string =>
  Array.isArray(v) ? "array" : v === null ? "null" : typeof v === "object" ? "object" : typeof v === "boolean"
    ? "bool"
    : typeof v

/** A Go float64 as `%v` prints it (shortest form, exponent below 1e-4 and from 1e21). */
export const goFloat = (n: number): string => {
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN"
  const abs = Math.abs(n)
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    const [mantissa, exp] = n.toExponential().split("e") as [string, string]
    const sign = exp.startsWith("-") ? "-" : "+"
    const digits = exp.replace(/^[-+]/, "")
    return `${mantissa}e${sign}${digits.length < 2 ? `0${digits}` : digits}`
  }
  return String(n)
}

/** A decoded JSON value as Go's `%v` prints an `interface{}` (`map[a:1 b:x]`, `[1 2]`, `<nil>`). */
export const goPrint = (v: unknown): string =>
  v === null || v === undefined
    ? "<nil>"
    : typeof v === "number"
    ? goFloat(v)
    : typeof v !== "object"
    ? String(v)
    : Array.isArray(v)
    ? `[${v.map(goPrint).join(" ")}]`
    : `map[${Object.keys(v).sort().map((k) => `${k}:${goPrint((v as Obj)[k])}`).join(" ")}]`

/** One object key of a JSON text: its path (`data.k`, `spec.items[0].name`), byte offset, and whether repeated. */
export interface GoKey {
  readonly path: string
  readonly at: number
  readonly duplicate: boolean
}

/** What scanning a JSON text finds: the first syntax error as encoding/json words it, and the object keys seen. */
export interface GoScan {
  readonly error: string | undefined
  readonly keys: ReadonlyArray<GoKey>
}

/** A byte as encoding/json's `quoteChar` quotes it (`'n'`, `'\''`, `'\u0081'`). */
const quoteByte = (c: number): string => {
  if (c === 0x27) return `'\\''`
  if (c === 0x22) return `'"'`
  const named: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r" }
  if (named[c] !== undefined) return `'${named[c]}'`
  if (c === 0x5c) return `'\\\\'`
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, "0")}'`
  // a byte above 0x7f is the rune of that value (Latin-1): U+0080–U+00A0 and U+00AD are not printable
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, "0")}'`
  return `'${String.fromCharCode(c)}'`
}

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39
const isHex = (c: number | undefined): boolean =>
  c !== undefined && (isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46))

/** Thrown inside `goScan` only, to unwind to its caller at the first syntax error. */
class SyntaxStop {
  constructor(readonly message: string) {}
}

/**
 * Scans a JSON text as Go's encoding/json checks it before decoding: the first syntax error, worded as Go words it
 * (`invalid character 'n' looking for beginning of object key string`, `unexpected end of JSON input`), and the
 * object keys with their paths (repeated keys marked, as a strict decoder reports them: `duplicate field "data.k"`).
 */
export const goScan = (text: string | Uint8Array): GoScan => {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : Buffer.from(text)
  const keys: Array<GoKey> = []
  let i = 0
  // at the end of the input Go's scanner steps a space: a literal or number cut short fails on that space
  const stop = (context: string, endAsSpace = false): never => {
    throw new SyntaxStop(
      i < bytes.length
        ? `invalid character ${quoteByte(bytes[i]!)} ${context}`
        : endAsSpace
        ? `invalid character ' ' ${context}`
        : "unexpected end of JSON input"
    )
  }
  const skip = () => {
    while (isSpace(bytes[i])) i++
  }
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++
      if (bytes[i] !== word.charCodeAt(k)) stop(`in literal ${word} (expecting ${quoteByte(word.charCodeAt(k))})`, true)
    }
    i++
  }
  const string = (): string => {
    const start = i
    i++
    for (;;) {
      const c = bytes[i]
      if (c === undefined) return stop("")
      if (c === 0x22) break
      if (c === 0x5c) {
        i++
        const e = bytes[i]
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            i++
            if (!isHex(bytes[i])) stop("in \\u hexadecimal character escape")
          }
        } else if (e === undefined || !"\"\\/bfnrt".includes(String.fromCharCode(e))) stop("in string escape code")
      } else if (c < 0x20) stop("in string literal")
      i++
    }
    i++
    const raw = bytes.subarray(start + 1, i - 1).toString("utf8")
    return raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw
  }
  const number = () => {
    if (bytes[i] === 0x2d) {
      i++
      if (!isDigit(bytes[i])) stop("in numeric literal", true)
    }
    if (bytes[i] === 0x30) i++
    else while (isDigit(bytes[i])) i++
    if (bytes[i] === 0x2e) {
      i++
      if (!isDigit(bytes[i])) stop("after decimal point in numeric literal", true)
      while (isDigit(bytes[i])) i++
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      i++
      if (bytes[i] === 0x2b || bytes[i] === 0x2d) i++
      if (!isDigit(bytes[i])) stop("in exponent of numeric literal", true)
      while (isDigit(bytes[i])) i++
    }
  }
  const value = (path: string) => {
    skip()
    const c = bytes[i]
    if (c === 0x7b) return object(path)
    if (c === 0x5b) return array(path)
    if (c === 0x22) return void string()
    if (c === 0x2d || isDigit(c)) return number()
    if (c === 0x74) return literal("true")
    if (c === 0x66) return literal("false")
    if (c === 0x6e) return literal("null")
    stop("looking for beginning of value")
  }
  const object = (path: string) => {
    i++
    skip()
    if (bytes[i] === 0x7d) return void i++
    const seen = new Set<string>()
    for (;;) {
      skip()
      if (bytes[i] !== 0x22) stop("looking for beginning of object key string")
      const at = i
      const key = string()
      const child = path === "" ? key : `${path}.${key}`
      keys.push({ path: child, at, duplicate: seen.has(key) })
      seen.add(key)
      skip()
      if (bytes[i] !== 0x3a) stop("after object key")
      i++
      value(child)
      skip()
      if (bytes[i] === 0x2c) {
        i++
        continue
      }
      if (bytes[i] === 0x7d) return void i++
      stop("after object key:value pair")
    }
  }
  const array = (path: string) => {
    i++
    skip()
    if (bytes[i] === 0x5d) return void i++
    for (let n = 0;; n++) {
      value(`${path}[${n}]`)
      skip()
      if (bytes[i] === 0x2c) {
        i++
        continue
      }
      if (bytes[i] === 0x5d) return void i++
      stop("after array element")
    }
  }
  try {
    value("")
    skip()
    if (i < bytes.length) stop("after top-level value")
    return { error: undefined, keys }
  } catch (e) {
    if (e instanceof SyntaxStop) return { error: e.message, keys }
    throw e
  }
}

/**
 * The start of a body as kube-apiserver quotes it in a decoding error (`summarizeData`): a JSON object's first 30
 * bytes, anything else's in hex, ` ...` when cut.
 */
export const summarize = (text: string, max = 30): string => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length === 0) return "<empty>"
  const cut = bytes.length > max ? " ..." : ""
  const head = bytes.subarray(0, max)
  return bytes[0] === 0x7b ? `${head.toString("utf8")}${cut}` : `${head.toString("hex")}${cut}`
}

const base64Url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/**
 * Unpadded base64url decoded as Go's `base64.RawURLEncoding` decodes it (line breaks skipped, trailing bits not
 * checked), or its error: `illegal base64 data at input byte 3`.
 */
export const goBase64Url = (text: string): Uint8Array | { readonly error: string } => {
  const out: Array<number> = []
  let bits = 0
  let count = 0
  let last = -1
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "\n" || c === "\r") continue
    const v = base64Url.indexOf(c)
    if (v < 0) return { error: `illegal base64 data at input byte ${i}` }
    bits = (bits << 6) | v
    count++
    last = i
    if (count % 4 === 0) {
      out.push((bits >> 16) & 0xff, (bits >> 8) & 0xff, bits & 0xff)
      bits = 0
    }
  }
  const rest = count % 4
  if (rest === 1) return { error: `illegal base64 data at input byte ${last}` }
  if (rest === 2) out.push((bits >> 4) & 0xff)
  if (rest === 3) out.push((bits >> 10) & 0xff, (bits >> 2) & 0xff)
  return Uint8Array.from(out)
}

/**
 * A list's continue token (base64url of `{"v": <version>, "rv": <resourceVersion>, "start": <key>}`) decoded as
 * kube-apiserver's storage decodes one, or why it is not one in upstream's words (`continue key is not valid:
 * invalid character '\u0081' looking for beginning of value`). `versions` are the encoding versions accepted.
 */
export const goContinueToken = (
  token: string,
  versions: ReadonlyArray<string>
): { readonly rv: number; readonly start: string } | { readonly error: string } => {
  const invalid = (why: string) => ({ error: `continue key is not valid: ${why}` })
  const data = goBase64Url(token)
  if ("error" in data) return invalid(data.error)
  const syntax = goScan(data).error
  if (syntax !== undefined) return invalid(syntax)
  const parsed: unknown = JSON.parse(Buffer.from(data).toString("utf8"))
  if (parsed !== null && !isObject(parsed)) {
    return invalid(
      `json: cannot unmarshal ${goJsonType(parsed)} into Go value of type storage.continueToken`
    )
  }
  const t: Obj = parsed ?? {}
  const version = typeof t.v === "string" ? t.v : ""
  if (!versions.includes(version)) return invalid(`server does not recognize this encoded version ${version}`)
  const rv = typeof t.rv === "number" ? t.rv : 0
  if (rv === 0) return invalid(`incorrect encoded start resourceVersion (version ${version})`)
  const start = typeof t.start === "string" ? t.start : ""
  if (start === "") return invalid(`encoded start key empty (version ${version})`)
  return { rv, start }
}
