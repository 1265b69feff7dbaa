/**
 * The HTTP side of protobuf for the test API server: request bodies in, responses and watch frames out. The
 * server calls these in one or two lines each; the semantics stay in Core, which only ever sees JSON objects.
 *
 * @internal
 */
import type * as Http from "node:http"
import * as ApiError from "../../ApiError.js"
import type { ResourceType } from "../../ResourceType.js"
import { isBuiltinGroup } from "../resourceType.js"
import { decodeObject, encodeObject, MEDIA_TYPE, messageOf, WATCH_MEDIA_TYPE, watchFrame } from "./envelope.js"

export { MEDIA_TYPE, WATCH_MEDIA_TYPE }

/** The raw request body. */
export const readRaw = (req: Http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

/** Whether a Content-Type header names protobuf. */
export const isProtobuf = (contentType: string | undefined): boolean => mediaType(contentType) === MEDIA_TYPE

/**
 * Decodes a protobuf request body to the JSON object Core takes. A kind the table has no message for answers 415
 * with the media types it can take instead (as kube-apiserver answers for custom resources); bytes that are not a
 * protobuf envelope answer 400.
 */
export const decodeBody = (raw: Uint8Array): unknown => {
  const decoded = decodeObject(raw)
  if (decoded._tag === "UnknownKind") {
    throw ApiError.make(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`
    )
  }
  if (decoded._tag === "Malformed") {
    throw ApiError.make(400, "BadRequest", `the object provided is unrecognized: ${String(decoded.message)}`)
  }
  return decoded
}

/**
 * Whether the client asks for protobuf first: kubectl's typed clients send
 * `application/vnd.kubernetes.protobuf,application/json` (or `…, *\/*`). Requests for `as=Table` and other
 * transformations are JSON.
 */
export const acceptsProtobuf = (accept: string | undefined): boolean => {
  const first = (accept ?? "").split(",")[0]!
  return mediaType(first) === MEDIA_TYPE && !/;\s*as=/i.test(first)
}

/**
 * The protobuf form of a response body, when the client asked for it first and the body's kind has a message;
 * undefined otherwise — also when the object holds a field our table lacks: JSON then, rather than lose data.
 */
export const responseBody = (
  req: Pick<Http.IncomingMessage, "headers"> | undefined,
  body: unknown
): Uint8Array | undefined => req !== undefined && acceptsProtobuf(req.headers.accept) ? encodeObject(body) : undefined

/** Whether a watch on this request streams protobuf frames: asked for first, and the kind has a message. */
export const watchesProtobuf = (req: Pick<Http.IncomingMessage, "headers">, rt: ResourceType): boolean =>
  acceptsProtobuf(req.headers.accept) &&
  messageOf(rt.group === "" ? rt.version : `${rt.group}/${rt.version}`, rt.kind) !== undefined

/**
 * A watch event as a length-prefixed frame, returned as a latin1 string so it travels through the server's string
 * pipeline (pacing, faults) unchanged; write it with the "latin1" encoding.
 */
export const watchLine = (type: string, object: unknown): string | undefined => {
  const frame = watchFrame(type, object)
  return frame === undefined ? undefined : Buffer.from(frame).toString("latin1")
}

/**
 * Whether the client takes protobuf only: every media range of its Accept header is
 * `application/vnd.kubernetes.protobuf` (no JSON, YAML, `*\/*` or `application/*`).
 */
export const acceptsOnlyProtobuf = (accept: string | undefined): boolean => {
  const ranges = (accept ?? "").split(",").map((r) => r.trim()).filter((r) => r !== "")
  return ranges.length > 0 && ranges.every((r) => mediaType(r) === MEDIA_TYPE && !/;\s*as=/i.test(r))
}

/**
 * The 406 for a client that takes protobuf only when the response cannot be protobuf. Custom resources as
 * kube-apiserver answers them (its protobuf serializer refuses unstructured objects: `object
 * *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a
 * protobuf message`, reason NotAcceptable); a built-in object our table cannot hold (a real server would encode
 * it) with the negotiation wording, naming what we can send: `only the following media types are accepted:
 * application/json, application/yaml`. Undefined when protobuf is not the only choice or the body encodes.
 */
export const notAcceptable = (
  req: Pick<Http.IncomingMessage, "headers"> | undefined,
  body: unknown
): ApiError.ApiError | undefined => {
  if (req === undefined || !acceptsOnlyProtobuf(req.headers.accept)) return undefined
  if (typeof body !== "object" || body === null) return undefined
  const { apiVersion, kind } = body as { apiVersion?: unknown; kind?: unknown }
  if (kind === "Status") return undefined
  const group = typeof apiVersion === "string" && apiVersion.includes("/") ? apiVersion.split("/")[0]! : ""
  const message = isBuiltinGroup(group)
    ? "only the following media types are accepted: application/json, application/yaml"
    : `object *unstructured.${
      typeof kind === "string" && kind.endsWith("List") ? "UnstructuredList" : "Unstructured"
    } does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message`
  return ApiError.make(406, "NotAcceptable", message)
}
