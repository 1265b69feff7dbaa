/**
 * JSON ⇄ protobuf for the messages of `descriptors.generated.ts`, on protobufjs reflection. The JSON side is the
 * Kubernetes JSON form (what our Core stores); the conversions follow the Go types' JSON marshalling:
 * `Time`/`MicroTime` ({seconds, nanos} ⇄ RFC 3339), `Quantity` ({string} ⇄ string), `IntOrString` ({type, intVal,
 * strVal} ⇄ number | string), `bytes` ⇄ base64, `RawExtension`/`FieldsV1` (JSON bytes ⇄ the JSON value), embedded
 * structs inlined in JSON, Go named slices (`items`) ⇄ arrays, and `omitempty` on non-pointer scalars (zero ⇒
 * omitted).
 *
 * @internal
 */
import protobuf from "protobufjs"
import { type Field, listWrappers, messages } from "./descriptors.generated.js"

/** An object holds something the table cannot carry (unknown field, wrong type): answer JSON instead. */
export class Unrepresentable extends Error {
  constructor(readonly path: ReadonlyArray<string | number>, reason: string) {
    super(`${path.join(".")}: ${reason}`)
  }
}

type Path = ReadonlyArray<string | number>

/** A protobuf body that cannot be decoded. */
export class Malformed extends Error {}

type Obj = Record<string, unknown>

const isObj = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)

const protoName = (message: string): string => message.replaceAll(".", "_")
const fieldName = (n: number): string => `f${n}`

let root: protobuf.Root | undefined

/** The reflection root of every message in the table (built once). */
export const lookup = (message: string): protobuf.Type => {
  if (root === undefined) {
    const nested: Obj = {}
    for (const [name, fields] of Object.entries(messages)) {
      const out: Obj = {}
      for (const [, number, type, flags = ""] of fields) {
        const t = type in scalarTypes ? type : protoName(type)
        out[fieldName(number)] = flags.includes("m")
          ? { keyType: "string", type: t, id: number }
          : flags.includes("r")
          ? { rule: "repeated", type: t, id: number }
          : { type: t, id: number }
      }
      // proto2, as upstream's generated.proto: explicit presence (zeros are written), unpacked repeated scalars
      nested[protoName(name)] = { edition: "proto2", fields: out }
    }
    root = protobuf.Root.fromJSON({ nested: nested as any })
  }
  return root.lookupType(protoName(message))
}

const scalarTypes: Record<string, true> = {
  string: true,
  int32: true,
  int64: true,
  bool: true,
  bytes: true,
  double: true,
  float: true
}

const fieldsByJson = new Map<string, Map<string, Field>>()

/** The JSON keys a message accepts (inlined messages contribute theirs). */
const jsonFields = (message: string): Map<string, Field> => {
  let out = fieldsByJson.get(message)
  if (out === undefined) {
    out = new Map()
    for (const f of messages[message] ?? []) {
      if ((f[3] ?? "").includes("i")) {
        for (const key of jsonFields(f[2]).keys()) out.set(key, f)
      } else {
        out.set(f[0], f)
      }
    }
    fieldsByJson.set(message, out)
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// time

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

const parseTime = (path: Path, s: unknown): { readonly seconds: number; readonly nanos: number } => {
  const m = typeof s === "string" ? RFC3339.exec(s) : null
  if (m === null) throw new Unrepresentable(path, `not an RFC 3339 time: ${JSON.stringify(s)}`)
  const utc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) / 1000
  const offset = m[8] !== undefined ? 0 : (m[9] === "-" ? -1 : 1) * (+m[10]! * 3600 + +m[11]! * 60)
  const nanos = m[7] === undefined ? 0 : +(m[7].padEnd(9, "0"))
  return { seconds: utc - offset, nanos }
}

const formatTime = (seconds: number, nanos: number, micro: boolean): string => {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19)
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z` : `${base}Z`
}

// ---------------------------------------------------------------------------------------------------------------
// JSON → protobufjs plain object

const toInt = (path: Path, v: unknown): number => {
  if (typeof v !== "number" || !Number.isInteger(v)) throw new Unrepresentable(path, "not an integer")
  return v
}

const encodeScalar = (path: Path, type: string, v: unknown): unknown => {
  switch (type) {
    case "string":
      if (typeof v !== "string") throw new Unrepresentable(path, "not a string")
      return v
    case "int32":
    case "int64":
      return toInt(path, v)
    case "bool":
      if (typeof v !== "boolean") throw new Unrepresentable(path, "not a boolean")
      return v
    case "double":
    case "float":
      if (typeof v !== "number") throw new Unrepresentable(path, "not a number")
      return v
    case "bytes":
      if (typeof v !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw new Unrepresentable(path, "not base64")
      return Buffer.from(v, "base64")
  }
  throw new Unrepresentable(path, `unsupported type ${type}`)
}

const encodeValue = (path: Path, type: string, v: unknown): unknown => {
  if (type in scalarTypes) return encodeScalar(path, type, v)
  switch (type) {
    case "meta.v1.Time":
    case "meta.v1.MicroTime": {
      const t = parseTime(path, v)
      return t.nanos === 0 ? { f1: t.seconds } : { f1: t.seconds, f2: t.nanos }
    }
    case "resource.Quantity":
      if (typeof v === "number" && Number.isFinite(v)) return { f1: String(v) }
      if (typeof v !== "string") throw new Unrepresentable(path, "not a quantity")
      return { f1: v }
    case "intstr.IntOrString":
      if (typeof v === "string") return { f1: 1, f3: v }
      return { f1: 0, f2: toInt(path, v) }
    case "runtime.RawExtension":
    case "meta.v1.FieldsV1":
      return { f1: Buffer.from(JSON.stringify(v), "utf8") }
    case "meta.v1.Duration":
      throw new Unrepresentable(path, "Duration is not supported")
  }
  if (listWrappers.has(type)) {
    if (!Array.isArray(v)) throw new Unrepresentable(path, "not an array")
    const [, , itemType] = messages[type]![0]!
    return { f1: v.map((x, i) => encodeValue([...path, i], itemType, x)) }
  }
  if (!isObj(v)) throw new Unrepresentable(path, "not an object")
  return encodeMessage(path, type, v)
}

const encodeMessage = (path: Path, message: string, json: Obj): Obj => {
  const table = messages[message]
  if (table === undefined) throw new Unrepresentable(path, `no message ${message}`)
  const byJson = jsonFields(message)
  const out: Obj = {}
  const inlined = new Map<Field, Obj>()
  for (const [key, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue
    const field = byJson.get(key)
    const at = [...path, key]
    if (field === undefined) {
      // TypeMeta is not part of the protobuf message (it travels in the envelope)
      if (key === "apiVersion" || key === "kind") continue
      throw new Unrepresentable(at, "field not in the protobuf table")
    }
    const [, number, type, flags = ""] = field
    if (flags.includes("i")) {
      let part = inlined.get(field)
      if (part === undefined) inlined.set(field, part = {})
      part[key] = value
    } else if (flags.includes("m")) {
      if (!isObj(value)) throw new Unrepresentable(at, "not a map")
      const map: Obj = {}
      for (const [k, x] of Object.entries(value)) {
        // protobufjs keeps maps in plain objects, where this key would set the prototype: answer JSON instead
        if (k === "__proto__") throw new Unrepresentable([...at, k], "a map key protobufjs cannot hold")
        if (x !== null) map[k] = encodeValue([...at, k], type, x)
      }
      out[fieldName(number)] = map
    } else if (flags.includes("r")) {
      if (!Array.isArray(value)) throw new Unrepresentable(at, "not an array")
      out[fieldName(number)] = value.map((x, i) => encodeValue([...at, i], type, x))
    } else {
      out[fieldName(number)] = encodeValue(at, type, value)
    }
  }
  for (const [[, number, type], part] of inlined) out[fieldName(number)] = encodeMessage(path, type, part)
  return out
}

/** Encodes a JSON object as the given message; throws `Unrepresentable` when the table cannot carry it. */
export const encode = (message: string, json: Obj): Uint8Array => {
  const type = lookup(message)
  return type.encode(type.fromObject(encodeMessage([], message, json))).finish()
}

// ---------------------------------------------------------------------------------------------------------------
// protobufjs message → JSON

const has = (m: object, key: string): boolean => Object.prototype.hasOwnProperty.call(m, key)

const num = (v: unknown): number =>
  typeof v === "number" ? v : v !== null && typeof v === "object" && "toNumber" in v ? (v as any).toNumber() : 0

const isZero = (v: unknown): boolean => v === "" || v === 0 || v === false

const decodeValue = (type: string, v: any): unknown => {
  switch (type) {
    case "string":
    case "bool":
      return v
    case "int32":
    case "int64":
    case "double":
    case "float":
      return num(v)
    case "bytes":
      return Buffer.from(v as Uint8Array).toString("base64")
    case "meta.v1.Time":
    case "meta.v1.MicroTime": {
      const seconds = num(has(v, "f1") ? v.f1 : 0)
      const nanos = num(has(v, "f2") ? v.f2 : 0)
      // the zero time is JSON null in Go: leave the field out
      return seconds === 0 && nanos === 0 ? undefined : formatTime(seconds, nanos, type === "meta.v1.MicroTime")
    }
    case "resource.Quantity":
      return has(v, "f1") ? v.f1 : "0"
    case "intstr.IntOrString":
      return num(has(v, "f1") ? v.f1 : 0) === 1 ? (has(v, "f3") ? v.f3 : "") : num(has(v, "f2") ? v.f2 : 0)
    case "runtime.RawExtension":
    case "meta.v1.FieldsV1": {
      const raw: Uint8Array | undefined = has(v, "f1") ? v.f1 : undefined
      if (raw === undefined || raw.length === 0) return undefined
      try {
        return JSON.parse(Buffer.from(raw).toString("utf8"))
      } catch {
        throw new Malformed(`${type}: raw bytes are not JSON`)
      }
    }
  }
  if (listWrappers.has(type)) {
    const [, , itemType] = messages[type]![0]!
    return ((has(v, "f1") ? v.f1 : []) as Array<unknown>).map((x) => decodeValue(itemType, x))
  }
  return decodeMessage(type, v)
}

const decodeMessage = (message: string, m: any): Obj => {
  const out: Obj = {}
  for (const [json, number, type, flags = ""] of messages[message]!) {
    const key = fieldName(number)
    if (!has(m, key)) continue
    const value = m[key]
    if (flags.includes("m")) {
      const map: Obj = {}
      for (const [k, x] of Object.entries(value as Obj)) map[k] = decodeValue(type, x)
      // protobuf has no empty-vs-absent for maps; Go's JSON leaves empty maps out (omitempty)
      if (Object.keys(map).length > 0) out[json] = map
    } else if (flags.includes("r")) {
      if ((value as Array<unknown>).length > 0) out[json] = (value as Array<unknown>).map((x) => decodeValue(type, x))
    } else if (flags.includes("i")) {
      Object.assign(out, decodeMessage(type, value))
    } else {
      const decoded = decodeValue(type, value)
      if (decoded === undefined || (flags.includes("z") && isZero(decoded))) continue
      out[json] = decoded
    }
  }
  return out
}

/** Decodes bytes of the given message to its JSON form. */
export const decode = (message: string, bytes: Uint8Array): Obj => {
  let m: protobuf.Message
  try {
    m = lookup(message).decode(bytes)
  } catch (e) {
    throw new Malformed(e instanceof Error ? e.message : String(e))
  }
  return decodeMessage(message, m)
}
