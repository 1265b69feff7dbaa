/**
 * The span of an API request: effect's `HttpClient` makes one per attempt when a tracer is installed (with the
 * OpenTelemetry HTTP attributes `http.request.method`, `url.full`, `url.path`, `server.address`,
 * `http.response.status_code`, and the W3C `traceparent` header sent to the API server). This names it after the
 * request's route (`GET /apis/apps/v1/namespaces/{namespace}/deployments/{name}`, low-cardinality as the
 * conventions ask) and adds what Kubernetes calls it (`k8s.verb`, `k8s.resource`, `k8s.namespace.name`).
 *
 * A request gets a span only inside another span (a reconcile's, a webhook call's): informers' lists and watches,
 * leader election's Lease renewals and the rest of the background traffic would each start a trace of its own, and a
 * watch lasts for minutes. With no tracer installed a reconcile has no span, so no request builds one either.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Tracer from "effect/Tracer"
import { parsePath } from "./diagnose.js"

/** What a span reads of a request (`Kube.Request`'s shape: this module is below `Kube.ts`). */
interface Request {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly query?: Readonly<Record<string, unknown>> | undefined
}

interface Described {
  readonly name: string
  readonly attributes: Record<string, string>
}

/** The route and Kubernetes attributes of a request (read as a diagnosis reads it: `diagnose.parsePath`). @internal */
export const describe = (req: Request): Described => {
  const watch = req.query?.watch === true || req.query?.watch === "true"
  const info = parsePath(req.method, req.path, watch)
  if (info === undefined) return { name: `${req.method} ${req.path.split("?")[0]}`, attributes: {} }
  const route = [info.group === "" ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`]
  const attributes: Record<string, string> = {}
  if (info.namespace !== undefined) {
    attributes["k8s.namespace.name"] = info.namespace
    route.push("namespaces/{namespace}")
  }
  route.push(info.resource)
  if (info.name !== undefined) route.push("{name}")
  if (info.subresource !== undefined) route.push(info.subresource)
  attributes["k8s.verb"] = info.verb
  attributes["k8s.resource"] = info.subresource === undefined ? info.resource : `${info.resource}/${info.subresource}`
  return { name: `${req.method} ${route.join("/")}`, attributes }
}

/**
 * Runs one attempt of a request: as a child span of the current span when there is one (and tracing is enabled),
 * else with the client's tracing off (no span object at all).
 *
 * @internal
 */
export const traced = <A, E, R>(req: Request, attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const cache = fiber.cache
    if (cache.span === undefined || !cache.tracerEnabled) {
      return Effect.provideService(attempt, Tracer.DisablePropagation, true)
    }
    const described = describe(req)
    return attempt.pipe(
      Effect.annotateSpans(described.attributes),
      Effect.provideService(HttpClient.SpanNameGenerator, () => described.name)
    )
  })

/** Runs the opening of a watch with the client's tracing off: a watch is not part of any reconcile. @internal */
export const untraced = <A, E, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(attempt, Tracer.DisablePropagation, true)
