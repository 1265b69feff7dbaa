/**
 * The `application/vnd.kubernetes.protobuf` wire form: the 4-byte magic `k8s\0` followed by a `runtime.Unknown`
 * {typeMeta{apiVersion=1, kind=2}=1, raw=2, contentEncoding=3, contentType=4} whose `raw` is the object's message;
 * watch streams are frames of a 4-byte big-endian length and a bare `meta.v1.WatchEvent` whose `object.raw` is an
 * enveloped object (apimachinery's protobuf Serializer, RawSerializer and LengthDelimitedFramer).
 *
 * @internal
 */
import protobuf from "protobufjs"
import { decode, encode, Malformed, Unrepresentable } from "./codec.js"

/** The media type. */
export const MEDIA_TYPE = "application/vnd.kubernetes.protobuf"

/** The media type of a protobuf watch stream. */
export const WATCH_MEDIA_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"

/** `k8s\0`. */
export const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00)

type Obj = Record<string, unknown>

/** The group/version/kind → message table: the built-in kinds the server serves, with their lists. */
const kinds = new Map<string, string>()
const add = (apiVersion: string, pkg: string, names: ReadonlyArray<string>, lists = true): void => {
  for (const kind of names) {
    kinds.set(`${apiVersion}/${kind}`, `${pkg}.${kind}`)
    if (lists) kinds.set(`${apiVersion}/${kind}List`, `${pkg}.${kind}List`)
  }
}
add("v1", "core.v1", ["Namespace", "ConfigMap", "Secret", "Service", "Pod", "Event"])
add("apps/v1", "apps.v1", ["Deployment", "ReplicaSet", "StatefulSet"])
add("coordination.k8s.io/v1", "coordination.v1", ["Lease"])
add("events.k8s.io/v1", "events.v1", ["Event"])
add("authorization.k8s.io/v1", "authorization.v1", ["SelfSubjectAccessReview", "SelfSubjectRulesReview"], false)
add("autoscaling/v1", "autoscaling.v1", ["Scale"], false)

/** The built-in group versions: meta/v1 kinds are registered in each (apimachinery's `AddToGroupVersion`). */
const builtinVersions = new Set(["meta.k8s.io/v1", ...[...kinds.keys()].map((k) => k.slice(0, k.lastIndexOf("/")))])

/** meta/v1 kinds of every built-in group version (a custom resource may well be called `Status`). */
const metaKinds = new Map([
  ["Status", "meta.v1.Status"],
  ["DeleteOptions", "meta.v1.DeleteOptions"],
  ["WatchEvent", "meta.v1.WatchEvent"]
])

/** The aggregated discovery document (`/api`, `/apis` asked `as=APIGroupDiscoveryList`). */
kinds.set("apidiscovery.k8s.io/v2/APIGroupDiscoveryList", "apidiscovery.v2.APIGroupDiscoveryList")

/**
 * The legacy discovery documents, meta/v1 kinds: `/api` and `/api/v1` answer them without an apiVersion (the
 * envelope then names none), `/apis…` as `v1`.
 */
const discoveryKinds = new Map([
  ["APIVersions", "meta.v1.APIVersions"],
  ["APIGroupList", "meta.v1.APIGroupList"],
  ["APIGroup", "meta.v1.APIGroup"],
  ["APIResourceList", "meta.v1.APIResourceList"]
])

/** The message of a group/version/kind, if the table has it. */
export const messageOf = (apiVersion: unknown, kind: unknown): string | undefined => {
  if (typeof kind !== "string") return undefined
  if (apiVersion === undefined || apiVersion === "" || apiVersion === "v1") {
    const discovery = discoveryKinds.get(kind)
    if (discovery !== undefined) return discovery
  }
  if (typeof apiVersion !== "string") return undefined
  return kinds.get(`${apiVersion}/${kind}`) ?? (builtinVersions.has(apiVersion) ? metaKinds.get(kind) : undefined)
}

const hasMagic = (bytes: Uint8Array): boolean => bytes.length >= 4 && MAGIC.every((b, i) => bytes[i] === b)

/** Wraps a message's bytes in the envelope, field for field as apimachinery writes it. */
export const wrap = (apiVersion: string, kind: string, raw: Uint8Array): Uint8Array => {
  const typeMeta = protobuf.Writer.create().uint32(0x0a).string(apiVersion).uint32(0x12).string(kind).finish()
  const body = protobuf.Writer.create()
    .uint32(0x0a).bytes(typeMeta)
    .uint32(0x12).bytes(raw)
    .uint32(0x1a).string("")
    .uint32(0x22).string("")
    .finish()
  const out = new Uint8Array(4 + body.length)
  out.set(MAGIC, 0)
  out.set(body, 4)
  return out
}

/** What an envelope holds. */
export interface Unwrapped {
  readonly apiVersion: string
  readonly kind: string
  readonly raw: Uint8Array
}

/** Opens an envelope; throws `Malformed` when the bytes are not one. */
export const unwrap = (bytes: Uint8Array): Unwrapped => {
  if (!hasMagic(bytes)) throw new Malformed("provided data does not appear to be a protobuf message")
  if (bytes.length === 4) throw new Malformed("empty body")
  const r = protobuf.Reader.create(bytes.subarray(4))
  let apiVersion = ""
  let kind = ""
  let raw: Uint8Array = new Uint8Array(0)
  try {
    while (r.pos < r.len) {
      const tag = r.uint32()
      if (tag === 0x0a) {
        const t = protobuf.Reader.create(r.bytes())
        while (t.pos < t.len) {
          const tt = t.uint32()
          if (tt === 0x0a) apiVersion = t.string()
          else if (tt === 0x12) kind = t.string()
          else t.skipType(tt & 7)
        }
      } else if (tag === 0x12) {
        raw = r.bytes()
      } else {
        r.skipType(tag & 7)
      }
    }
  } catch (e) {
    throw new Malformed(e instanceof Error ? e.message : String(e))
  }
  return { apiVersion, kind, raw }
}

/** Why a body could not be decoded. */
export type DecodeFailure =
  | { readonly _tag: "Malformed"; readonly message: string }
  | { readonly _tag: "UnknownKind"; readonly apiVersion: string; readonly kind: string }

/** Decodes an enveloped object to its JSON form (with apiVersion and kind), or says why not. */
export const decodeObject = (bytes: Uint8Array): Obj | DecodeFailure => {
  let env: Unwrapped
  try {
    env = unwrap(bytes)
  } catch (e) {
    return { _tag: "Malformed", message: (e as Error).message }
  }
  const message = messageOf(env.apiVersion, env.kind)
  if (message === undefined) return { _tag: "UnknownKind", apiVersion: env.apiVersion, kind: env.kind }
  try {
    const body = decode(message, env.raw)
    return { apiVersion: env.apiVersion, kind: env.kind, ...body }
  } catch (e) {
    return { _tag: "Malformed", message: (e as Error).message }
  }
}

/**
 * Encodes a JSON object in the envelope; undefined when its kind has no message or when it holds something the
 * table cannot carry (a field the table lacks): the caller answers JSON then, rather than lose data.
 */
export const encodeObject = (json: unknown): Uint8Array | undefined => {
  if (typeof json !== "object" || json === null) return undefined
  const o = json as Obj
  const message = messageOf(o.apiVersion, o.kind)
  if (message === undefined) return undefined
  try {
    return wrap(typeof o.apiVersion === "string" ? o.apiVersion : "", o.kind as string, encode(message, o))
  } catch (e) {
    if (e instanceof Unrepresentable) return undefined
    throw e
  }
}

/**
 * One frame of a protobuf watch stream. A watch cannot change its media type midway, so an object holding a field
 * the table lacks is sent without that field (a typed client, the only kind that asks for protobuf, has nowhere to
 * keep it anyway); `undefined` only when the object's kind has no message at all.
 */
export const watchFrame = (type: string, object: unknown): Uint8Array | undefined => {
  let inner = encodeObject(object)
  if (inner === undefined && typeof object === "object" && object !== null) {
    const o = object as Obj
    const message = messageOf(o.apiVersion, o.kind)
    const pruned = message === undefined ? undefined : pruneToTable(message, o)
    if (pruned === undefined) return undefined
    inner = wrap(o.apiVersion as string, o.kind as string, encode(message!, pruned))
  }
  if (inner === undefined) return undefined
  const event = protobuf.Writer.create()
    .uint32(0x0a).string(type)
    .uint32(0x12).fork().uint32(0x0a).bytes(inner).ldelim()
    .finish()
  const out = new Uint8Array(4 + event.length)
  new DataView(out.buffer).setUint32(0, event.length, false)
  out.set(event, 4)
  return out
}

/** Reads the frames of a protobuf watch stream (for tests and clients of this module). */
export const readFrames = (
  bytes: Uint8Array
): Array<{ readonly type: string; readonly object: Obj | DecodeFailure }> => {
  const out: Array<{ readonly type: string; readonly object: Obj | DecodeFailure }> = []
  let at = 0
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  while (at + 4 <= bytes.length) {
    const length = view.getUint32(at, false)
    if (at + 4 + length > bytes.length) break // an incomplete frame: wait for the rest
    const frame = bytes.subarray(at + 4, at + 4 + length)
    at += 4 + length
    const r = protobuf.Reader.create(frame)
    let type = ""
    let object: Uint8Array = new Uint8Array(0)
    while (r.pos < r.len) {
      const tag = r.uint32()
      if (tag === 0x0a) type = r.string()
      else if (tag === 0x12) {
        const raw = protobuf.Reader.create(r.bytes())
        while (raw.pos < raw.len) {
          const t = raw.uint32()
          if (t === 0x0a) object = raw.bytes()
          else raw.skipType(t & 7)
        }
      } else r.skipType(tag & 7)
    }
    out.push({ type, object: decodeObject(object) })
  }
  return out
}

/** Removes from a JSON object what the encoder would refuse, so that the rest can be encoded. */
const pruneToTable = (message: string, json: Obj): Obj | undefined => {
  const attempt = (o: Obj): Obj | undefined => {
    try {
      encode(message, o)
      return o
    } catch (e) {
      if (!(e instanceof Unrepresentable)) throw e
      const copy = structuredClone(o)
      return deletePath(copy, e.path) ? attempt(copy) : undefined
    }
  }
  return attempt(json)
}

const deletePath = (o: Obj, parts: ReadonlyArray<string | number>): boolean => {
  let node: any = o
  for (const p of parts.slice(0, -1)) {
    node = node?.[p]
    if (typeof node !== "object" || node === null) return false
  }
  const last = parts.at(-1)
  if (last === undefined || typeof node !== "object" || node === null || !(last in node)) return false
  if (Array.isArray(node)) node.splice(last as number, 1)
  else delete node[last]
  return true
}
