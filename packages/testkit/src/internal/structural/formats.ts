/**
 * The string formats of structural schemas as kube-openapi's `strfmt` registry checks them (`date`, `duration`,
 * `datetime`, `hostname`, `ipv4`, `cidr`, `uuid`, …): which formats are known, and whether a string is one.
 */

export const supportedFormats = new Set([
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "datetime"
])

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (mo < 1 || mo > 12 || d < 1) return false
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
  return d <= days[mo - 1]!
}

const isIPv4 = (s: string): boolean =>
  /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s) && s.split(".").every((p) => Number(p) <= 255)

const isIPv6 = (s: string): boolean => {
  if (!s.includes(":")) return false
  let body = s
  const lastColon = s.lastIndexOf(":")
  const tail = s.slice(lastColon + 1)
  let groups = 8
  if (tail.includes(".")) {
    if (!isIPv4(tail)) return false
    body = s.slice(0, lastColon + 1) + "0"
    groups = 7
  }
  const halves = body.split("::")
  if (halves.length > 2) return false
  const parts = (h: string): Array<string> => (h === "" ? [] : h.split(":"))
  const all = halves.flatMap(parts)
  if (!all.every((p) => /^[0-9a-fA-F]{1,4}$/.test(p))) return false
  return halves.length === 2 ? all.length < groups : all.length === groups
}

const durationUnits = new Set(
  [
    "ns",
    "nano",
    "us",
    "µs",
    "micro",
    "ms",
    "milli",
    "s",
    "sec",
    "m",
    "min",
    "h",
    "hr",
    "hour",
    "d",
    "day",
    "w",
    "wk",
    "week"
  ]
    .flatMap((u) => [u, `${u}s`])
)

const isDuration = (s: string): boolean => {
  if (/^([-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(s) || s === "0") return true
  const matches = [...s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)]
  return matches.length > 0 && matches.every((m) => durationUnits.has(m[2]!))
}

const hostChar = "a-zA-Z0-9\\p{S}\\p{L}"
/** strfmt's HostnamePattern. */
const hostnamePattern = new RegExp(
  `^([${hostChar}]((-?[${hostChar}]{0,62})?)|([${hostChar}](([${hostChar}-]{0,61}[${hostChar}])?)(\\.)){1,}` +
    "([a-zA-Z\\p{L}]){2,63})$",
  "u"
)
const octet = "\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*"
const rgbPattern = new RegExp(`^rgb\\(${octet},${octet},${octet}\\)$`)

export const formatValid: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: (s) => /^([a-zA-Z][a-zA-Z0-9+.-]*:\S+|\/\S*)$/.test(s),
  email: (s) => /^[^\s@<>]+@[^\s@<>]+$/.test(s) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(s),
  hostname: (s) =>
    s.length <= 255 &&
    hostnamePattern.test(s) &&
    s.split(".").every((p) => p.length <= 63),
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: (s) => {
    const [ip, bits, ...rest] = s.split("/")
    if (rest.length > 0 || bits === undefined || !/^\d+$/.test(bits)) return false
    if (isIPv4(ip!)) return Number(bits) <= 32
    return isIPv6(ip!) && Number(bits) <= 128
  },
  mac: (s) =>
    /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s) || /^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$/.test(s) ||
    /^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/.test(s),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid4: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  uuid5: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  isbn: (s) => /^(?:[0-9]{9}X|[0-9]{10})$/.test(s.replace(/[\s-]/g, "")) || /^[0-9]{13}$/.test(s.replace(/[\s-]/g, "")),
  isbn10: (s) => /^(?:[0-9]{9}X|[0-9]{10})$/.test(s.replace(/[\s-]/g, "")),
  isbn13: (s) => /^[0-9]{13}$/.test(s.replace(/[\s-]/g, "")),
  creditcard: (s) => /^[0-9]{13,19}$/.test(s.replace(/[^0-9]/g, "")),
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => rgbPattern.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: (s) => {
    if (s.length < 4) return false
    const parts = s.toLowerCase().split("t")
    if (parts.length < 2 || !isDate(parts[0]!)) return false
    const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1]!)
    return m !== null && m[1]! <= "23" && m[2]! <= "59" && m[3]! <= "59"
  }
}
