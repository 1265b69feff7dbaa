/**
 * One client interface over the in-process cluster and over HTTP, so the
 * conformance cases run unchanged against both.
 */
import { Context, Effect, Layer, Stream } from "effect"
import type { Scope } from "effect"
import * as Https from "node:https"
import { ApiError, TestApiServer, TestCluster } from "../../src/index.js"
import type { ResourceType } from "../../src/index.js"
import type { KubeObject } from "../../src/KubeObject.js"

type Obj = Record<string, any>

export interface Ref {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
}

export interface Driver {
  readonly name: string
  readonly cluster: TestCluster.TestCluster.Service
  readonly create: (obj: Obj, fieldManager?: string) => Effect.Effect<Obj, ApiError.ApiError>
  readonly get: (ref: Ref) => Effect.Effect<Obj, ApiError.ApiError>
  readonly list: (query: TestCluster.ListQuery) => Effect.Effect<Obj, ApiError.ApiError>
  readonly update: (obj: Obj, subresource?: "status") => Effect.Effect<Obj, ApiError.ApiError>
  readonly patch: (ref: Ref, patch: TestCluster.Patch) => Effect.Effect<Obj, ApiError.ApiError>
  readonly delete: (ref: Ref, options?: TestCluster.DeleteOptions) => Effect.Effect<unknown, ApiError.ApiError>
  /** Collects the first `count` events of a watch (fails the test after 5 s). */
  readonly watch: (query: TestCluster.WatchQuery, count: number) => Effect.Effect<Array<Obj>, ApiError.ApiError>
}

export const inProcess: Effect.Effect<Driver> = Effect.map(TestCluster.make(), (cluster) => ({
  name: "in-process",
  cluster,
  create: (obj, fieldManager) => cluster.create(obj as KubeObject, { fieldManager }),
  get: (ref) => cluster.get(ref),
  list: (query) => cluster.list(query) as Effect.Effect<Obj, ApiError.ApiError>,
  update: (obj, subresource) => cluster.update(obj as KubeObject, { subresource }),
  patch: (ref, patch) => cluster.patch(ref, patch),
  delete: (ref, options) => cluster.delete(ref, options),
  watch: (query, count) =>
    cluster.watch(query).pipe(
      Stream.take(count),
      Stream.runCollect,
      Effect.map((c) => c as Array<Obj>),
      Effect.timeoutOrElse({
        duration: "5 seconds",
        orElse: () => Effect.fail(ApiError.make(504, "Timeout", "test watch timed out"))
      })
    )
}))

export interface HttpResponse {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

export const request = (
  server: TestApiServer.TestApiServer.Service,
  method: string,
  path: string,
  options: { body?: string; contentType?: string; accept?: string; token?: string | null } = {}
): Promise<HttpResponse> =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? server.token}`
    if (options.contentType !== undefined) headers["content-type"] = options.contentType
    if (options.accept !== undefined) headers.accept = options.accept
    if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body))
    const req = Https.request(
      { host: "127.0.0.1", port: server.port, method, path, headers, ca: server.certificateAuthority },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    if (options.body !== undefined) {
      req.write(options.body)
    }
    req.end()
  })

/** Streams the lines of a watch until `count` lines arrived or the response ends. */
export const watchLines = (
  server: TestApiServer.TestApiServer.Service,
  path: string,
  count: number,
  onOpen?: () => void
): Promise<{ lines: Array<string>; ended: "count" | "end" | "error" }> =>
  new Promise((resolve) => {
    const lines: Array<string> = []
    let buffer = ""
    const req = Https.request(
      {
        host: "127.0.0.1",
        port: server.port,
        method: "GET",
        path,
        headers: { authorization: `Bearer ${server.token}` },
        ca: server.certificateAuthority
      },
      (res) => {
        onOpen?.()
        res.on("data", (c: Buffer) => {
          buffer += c.toString("utf8")
          let i: number
          while ((i = buffer.indexOf("\n")) >= 0) {
            lines.push(buffer.slice(0, i))
            buffer = buffer.slice(i + 1)
            if (lines.length >= count) {
              req.destroy()
              resolve({ lines, ended: "count" })
              return
            }
          }
        })
        res.on("end", () => resolve({ lines, ended: "end" }))
        res.on("error", () => resolve({ lines, ended: "error" }))
        res.on("aborted", () => resolve({ lines, ended: "error" }))
      }
    )
    req.on("error", () => resolve({ lines, ended: "error" }))
    req.end()
  })

const resourcePath = (cluster: TestCluster.TestCluster.Service, apiVersion: string, kind: string) =>
  Effect.flatMap(cluster.resources, (types) => {
    const t = types.find((t) =>
      (t.group === "" ? t.version : `${t.group}/${t.version}`) === apiVersion && t.kind === kind
    )
    // the path of an unserved kind is unknown: answer as the server would for any unknown path
    return t === undefined
      ? Effect.fail(ApiError.make(404, "NotFound", "the server could not find the requested resource", {}))
      : Effect.succeed(t)
  })

const pathOf = (
  t: Pick<ResourceType.ResourceType, "group" | "version" | "plural" | "scope">,
  namespace: string | undefined,
  name?: string,
  sub?: string
): string =>
  `/${t.group === "" ? `api/${t.version}` : `apis/${t.group}/${t.version}`}${
    t.scope === "Namespaced" && namespace !== undefined ? `/namespaces/${namespace}` : ""
  }/${t.plural}${name !== undefined ? `/${name}` : ""}${sub !== undefined ? `/${sub}` : ""}`

const qs = (params: Record<string, string | number | boolean | undefined>): string => {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as Array<
    [string, string | number | boolean]
  >
  return entries.length === 0 ? "" : `?${entries.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join("&")}`
}

const decode = (res: HttpResponse): Effect.Effect<Obj, ApiError.ApiError> => {
  if (res.body === "") throw new Error(`empty body: ${res.status} ${JSON.stringify(res.headers)}`)
  const body = JSON.parse(res.body)
  if (res.status >= 400) {
    if (body.kind !== "Status") throw new Error(`error without a Status body: ${res.body}`)
    return Effect.fail(new ApiError.ApiError({ status: body }))
  }
  return Effect.succeed(body)
}

export const http: Effect.Effect<Driver, never, Scope.Scope> = Effect.gen(function*() {
  // a bare server (no controller manager), as the in-process driver
  const context = yield* Effect.orDie(Layer.build(TestApiServer.layerWithCluster({ controllers: false })))
  const server = Context.get(context, TestApiServer.TestApiServer)
  const cluster = server.cluster
  const call = (method: string, path: string, options: Parameters<typeof request>[3] = {}) =>
    Effect.flatMap(Effect.promise(() => request(server, method, path, options)), decode)
  return {
    name: "http",
    cluster,
    create: (obj, fieldManager) =>
      Effect.flatMap(
        resourcePath(cluster, obj.apiVersion, obj.kind),
        (t) =>
          call("POST", pathOf(t, obj.metadata?.namespace) + qs({ fieldManager }), {
            body: JSON.stringify(obj),
            contentType: "application/json"
          })
      ),
    get: (ref) =>
      Effect.flatMap(
        resourcePath(cluster, ref.apiVersion, ref.kind),
        (t) => call("GET", pathOf(t, ref.namespace, ref.name))
      ),
    list: (q) =>
      Effect.flatMap(resourcePath(cluster, q.apiVersion, q.kind), (t) =>
        call(
          "GET",
          pathOf(t, q.namespace) +
            qs({
              labelSelector: q.labelSelector,
              fieldSelector: q.fieldSelector,
              limit: q.limit,
              continue: q.continue,
              resourceVersion: q.resourceVersion,
              resourceVersionMatch: q.resourceVersionMatch
            })
        )),
    update: (obj, subresource) =>
      Effect.flatMap(
        resourcePath(cluster, obj.apiVersion, obj.kind),
        (t) =>
          call("PUT", pathOf(t, obj.metadata?.namespace, obj.metadata.name, subresource), {
            body: JSON.stringify(obj),
            contentType: "application/json"
          })
      ),
    patch: (ref, patch) =>
      Effect.flatMap(resourcePath(cluster, ref.apiVersion, ref.kind), (t) => {
        const contentType = {
          merge: "application/merge-patch+json",
          json: "application/json-patch+json",
          strategic: "application/strategic-merge-patch+json",
          apply: "application/apply-patch+yaml"
        }[patch.type]
        const params = patch.type === "apply" ? qs({ fieldManager: patch.fieldManager, force: patch.force }) : ""
        return call("PATCH", pathOf(t, ref.namespace, ref.name) + params, {
          body: JSON.stringify(patch.patch),
          contentType
        })
      }),
    delete: (ref, options) =>
      Effect.flatMap(
        resourcePath(cluster, ref.apiVersion, ref.kind),
        (t) =>
          call("DELETE", pathOf(t, ref.namespace, ref.name), {
            body: JSON.stringify(options ?? {}),
            contentType: "application/json"
          })
      ),
    watch: (q, count) =>
      Effect.flatMap(resourcePath(cluster, q.apiVersion, q.kind), (t) =>
        Effect.promise(() =>
          watchLines(
            server,
            pathOf(t, q.namespace) +
              qs({
                watch: true,
                resourceVersion: q.resourceVersion,
                labelSelector: q.labelSelector,
                fieldSelector: q.fieldSelector,
                allowWatchBookmarks: q.allowWatchBookmarks,
                timeoutSeconds: q.timeoutSeconds ?? 5
              }),
            count
          )
        ).pipe(Effect.map((r) => r.lines.map((l) => JSON.parse(l)))))
  }
})

export const drivers: ReadonlyArray<readonly [string, Effect.Effect<Driver, never, Scope.Scope>]> = [
  ["in-process", inProcess],
  ["http", http]
]
