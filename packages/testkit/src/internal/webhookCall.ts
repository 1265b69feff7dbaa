/**
 * One call of an admission webhook, as kube-apiserver's webhook client makes it: the target (`clientConfig.url`, or
 * a Service resolved to an address of its EndpointSlices, then its Endpoints), an HTTPS POST of the AdmissionReview
 * verified against `caBundle`, within `timeoutSeconds` on the fiber's Clock, and the answer checked as upstream
 * checks it. Failures are outcomes worded as Go's client words them (`failed to call webhook: Post "…": …`).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Https from "node:https"
import * as YAML from "yaml"
import { goJsonType, isObject, type Obj } from "./json.js"
import type { Registry } from "./resourceType.js"
import type { Storage } from "./storage.js"

/** What a webhook call reads of the cluster: the Services and endpoints a `clientConfig.service` resolves to. */
export interface Cluster {
  readonly storage: Storage
  readonly registry: Registry
}

/** A webhook of a configuration. */
export interface Hook {
  readonly configuration: string
  readonly index: number
  readonly webhook: Obj
  readonly mutating: boolean
}

/** The outcome of one call: the webhook's AdmissionResponse, or why there is none. */
export type Outcome =
  | { readonly _tag: "Answer"; readonly response: Obj }
  | { readonly _tag: "Failed"; readonly reason: string }

/** Checks a webhook's answer (kube-apiserver's `VerifyAdmissionResponse`): the response, or why it is invalid. */
const verify = (body: string, uid: string, mutating: boolean): Outcome => {
  // client-go's decoder reads JSON or YAML, then the version and kind into a struct
  const undecodable = (why: string): Outcome => ({
    _tag: "Failed",
    reason: `failed to call webhook: couldn't get version/kind; json parse error: ${why}`
  })
  let review: unknown
  try {
    review = JSON.parse(body)
  } catch {
    try {
      review = YAML.parse(body)
    } catch (e) {
      return undecodable(e instanceof Error ? e.message : String(e))
    }
  }
  if (!isObject(review) && review !== null) {
    return undecodable(
      `json: cannot unmarshal ${
        goJsonType(review)
      } into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`
    )
  }
  const invalid = (why: string): Outcome => ({ _tag: "Failed", reason: `received invalid webhook response: ${why}` })
  if (!isObject(review)) return invalid("webhook response was absent")
  if (review.apiVersion !== "admission.k8s.io/v1" || review.kind !== "AdmissionReview") {
    return invalid(
      `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${review.apiVersion ?? ""}, Kind=${
        review.kind ?? ""
      }`
    )
  }
  const response = review.response
  if (!isObject(response)) return invalid("webhook response was absent")
  if (response.uid !== uid) return invalid(`expected response.uid="${uid}", got "${response.uid ?? ""}"`)
  if (!mutating && response.patch !== undefined && response.patch !== null && response.patch !== "") {
    return invalid("validating webhook may not return response.patch")
  }
  if (response.patch !== undefined && response.patch !== null && response.patch !== "") {
    if (response.patchType === undefined || response.patchType === null || response.patchType === "") {
      return invalid("webhook returned response.patch but not response.patchType")
    }
    if (response.patchType !== "JSONPatch") {
      return invalid(`webhook returned invalid response.patchType of "${response.patchType}"`)
    }
  }
  return { _tag: "Answer", response }
}

/** A JSONPatch that does not apply, worded as Go's json-patch library words it. */
export const patchError = (e: unknown): string => {
  const error = e as { name?: string; message?: string; operation?: { op?: string; path?: string } }
  const op = error.operation?.op ?? "patch"
  const path = error.operation?.path ?? ""
  if (error.name === "TEST_OPERATION_FAILED") return `testing value ${path} failed: test failed`
  if (error.name === "OPERATION_PATH_UNRESOLVABLE" || error.name === "OPERATION_FROM_UNRESOLVABLE") {
    return `${op} operation does not apply: doc is missing path: ${path}: missing value`
  }
  return error.message?.split("\n")[0] ?? String(e)
}

// -----------------------------------------------------------------------------------------------------------------
// calls

/** A URL with the `timeout` parameter client-go adds (the port kept as written, as Go prints it). */
const goUrl = (url: string, timeoutSeconds: number): string =>
  `${url}${url.includes("?") ? "&" : "?"}timeout=${timeoutSeconds}s`

interface Target {
  /** Where the request goes. */
  readonly connect: URL
  /** The URL as kube-apiserver names it in errors (a Service's DNS name). */
  readonly shown: string
  readonly servername: string | undefined
}

/** The URL of a webhook: `clientConfig.url`, or its Service's endpoint (kube-apiserver's aggregator routing). */
const targetOf = (
  core: Cluster,
  clientConfig: unknown
): Target | { readonly error: string; readonly shown: string } => {
  const config = (isObject(clientConfig) ? clientConfig : {}) as Obj
  if (typeof config.url === "string") {
    return { connect: new URL(config.url), shown: config.url, servername: undefined }
  }
  const service = (config.service ?? {}) as Obj
  const port = typeof service.port === "number" ? service.port : 443
  const path = typeof service.path === "string" ? service.path : ""
  const host = `${service.name}.${service.namespace}.svc`
  const shownUrl = `https://${host}:${port}${path}`
  const svc = core.storage.stored(core.registry.byKind("", "v1", "Service")!, service.namespace, service.name)
  if (svc === undefined) return { error: `service "${service.name}" not found`, shown: shownUrl }
  const type = svc.spec?.type ?? "ClusterIP"
  if (!["ClusterIP", "LoadBalancer", "NodePort"].includes(type)) {
    return { error: `unsupported service type "${type}"`, shown: shownUrl }
  }
  const svcPort = ((svc.spec?.ports ?? []) as Array<Obj>).find((p) => p.port === port)
  if (svcPort === undefined) {
    return { error: `no service port ${port} found for service "${service.name}"`, shown: shownUrl }
  }
  const at = (ip: string, endpointPort: number): Target => ({
    connect: new URL(`https://${ip.includes(":") ? `[${ip}]` : ip}:${endpointPort}${path}`),
    shown: shownUrl,
    servername: host
  })
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(Math.random() * items.length)]!
  // the Service's EndpointSlices (ready endpoints), then its Endpoints
  const sliceType = core.registry.byKind("discovery.k8s.io", "v1", "EndpointSlice")
  const slices = sliceType === undefined ?
    [] :
    [...core.storage.objects(sliceType).values()].filter((s) =>
      s.metadata.namespace === service.namespace && s.metadata.labels?.["kubernetes.io/service-name"] === service.name
    )
  for (const slice of slices) {
    const p = ((slice.ports ?? []) as Array<Obj>).find((p) => (p.name ?? "") === (svcPort.name ?? ""))
    if (p === undefined || typeof p.port !== "number") continue
    const ready = ((slice.endpoints ?? []) as Array<Obj>).filter((e) =>
      e.conditions?.ready !== false && Array.isArray(e.addresses) && e.addresses.length > 0
    )
    if (ready.length > 0) return at(pick(ready).addresses[0], p.port)
  }
  const endpoints = core.storage.stored(core.registry.byKind("", "v1", "Endpoints")!, service.namespace, service.name)
  for (const subset of (endpoints?.subsets ?? []) as Array<Obj>) {
    for (const p of (subset.ports ?? []) as Array<Obj>) {
      if ((p.name ?? "") !== (svcPort.name ?? "")) continue
      const addresses = (subset.addresses ?? []) as Array<Obj>
      if (addresses.length > 0) return at(pick(addresses).ip, p.port)
    }
  }
  return { error: `no endpoints available for service "${service.name}"`, shown: shownUrl }
}

/** Go's wording of a failed connection. */
const goError = (e: NodeJS.ErrnoException, url: URL): string => {
  const hostPort = `${url.hostname.replace(/^\[|\]$/g, "")}:${url.port === "" ? 443 : url.port}`
  switch (e.code) {
    case "ECONNREFUSED":
      return `dial tcp ${hostPort}: connect: connection refused`
    case "ECONNRESET":
      return "EOF"
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
      return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `tls: failed to verify certificate: x509: certificate is valid for other names, not ${url.hostname}`
    case "CERT_HAS_EXPIRED":
      return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
    default:
      return e.message
  }
}

/** The answer to one POST, or why there is none (worded as Go's client words it: `Post "…": …`). */
export type Posted =
  | { readonly _tag: "Response"; readonly code: number; readonly text: string }
  | { readonly _tag: "Failed"; readonly reason: string }

/**
 * POSTs a review to a webhook's `clientConfig` (its URL, or its Service's endpoint), verified against its `caBundle`,
 * within `timeoutSeconds` on the fiber's Clock: the answer (never fails).
 */
export const post = (
  core: Cluster,
  clientConfig: unknown,
  timeoutSeconds: number,
  body: string
): Effect.Effect<Posted> => {
  const target = targetOf(core, clientConfig)
  const failed = (why: string): Posted => ({
    _tag: "Failed",
    reason: `Post "${goUrl(target.shown, timeoutSeconds)}": ${why}`
  })
  if ("error" in target) return Effect.succeed(failed(target.error))
  const caBundle = isObject(clientConfig) ? clientConfig.caBundle : undefined
  const ca = typeof caBundle === "string" && caBundle !== ""
    ? Buffer.from(caBundle, "base64").toString("utf8")
    : undefined
  const request = Effect.callback<Posted>((resume, signal) => {
    const url = new URL(goUrl(target.connect.toString(), timeoutSeconds))
    const req = Https.request(url, {
      method: "POST",
      ...(ca !== undefined ? { ca } : {}),
      ...(target.servername !== undefined ? { servername: target.servername } : {}),
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, */*",
        "Content-Length": Buffer.byteLength(body)
      },
      signal
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", (e) => resume(Effect.succeed(failed(goError(e, target.connect)))))
      res.on("end", () => {
        resume(Effect.succeed({
          _tag: "Response",
          code: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8")
        }))
      })
    })
    req.on("error", (e: NodeJS.ErrnoException) => {
      if (!signal.aborted) resume(Effect.succeed(failed(goError(e, target.connect))))
    })
    req.end(body)
  })
  return Effect.timeoutOrElse(request, {
    duration: Duration.seconds(timeoutSeconds),
    orElse: () => Effect.succeed(failed("context deadline exceeded"))
  })
}

/** POSTs one AdmissionReview; the outcome (never fails), within the webhook's `timeoutSeconds` on the Clock. */
export const call = (core: Cluster, hook: Hook, review: Obj, uid: string): Effect.Effect<Outcome> => {
  const timeoutSeconds = typeof hook.webhook.timeoutSeconds === "number" ? hook.webhook.timeoutSeconds : 10
  return Effect.map(
    post(core, hook.webhook.clientConfig, timeoutSeconds, JSON.stringify(review)),
    (posted): Outcome => {
      if (posted._tag === "Failed") return { _tag: "Failed", reason: `failed to call webhook: ${posted.reason}` }
      if (posted.code < 200 || posted.code > 299) {
        return { _tag: "Failed", reason: `failed to call webhook: ${nonSuccess(posted.code, posted.text)}` }
      }
      return verify(posted.text, uid, hook.mutating)
    }
  )
}

/** A non-2xx answer, as client-go's REST client reports it. */
export const nonSuccess = (code: number, text: string): string => {
  try {
    const status = JSON.parse(text)
    if (isObject(status) && status.kind === "Status" && typeof status.message === "string") {
      return status.message
    }
  } catch {
    // not a Status
  }
  const trimmed = text.trim()
  const known: Record<number, string> = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request"
  }
  const message = known[code] ?? (code >= 500
    ? `an error on the server (${
      JSON.stringify(trimmed === "" ? "unknown" : trimmed)
    }) has prevented the request from succeeding`
    : `the server responded with the status code ${code} but did not return more information`)
  return message
}
