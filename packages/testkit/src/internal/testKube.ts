import type { HasMetadata } from "@reconcile/core/ObjectMeta"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as KubeError from "@reconcile/kube/KubeError"
import type * as Resource from "@reconcile/kube/Resource"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as ApiError from "../ApiError.js"
import type { KubeObject, WatchEvent } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import { TestCluster } from "../TestCluster.js"
import type * as TestKube from "../TestKube.js"
import { type OpenWatch, paceStream, type Verb, WatchPace } from "./faults.js"
import * as Freshness from "./freshness.js"
import { isBuiltinGroup } from "./registry.js"
import { type Core, deleteAnswer } from "./store.js"
import { coreOf, toApiError } from "./testCluster.js"

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const metaOf = (u: unknown): Json => isRecord(u) && isRecord(u.metadata) ? u.metadata : {}

const nonEmpty = (u: unknown): string | undefined => typeof u === "string" && u !== "" ? u : undefined

/** The line `TestApiServer` writes on a garbled watch, parsed by the same parser. */
const garbledLine = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\u0000garbled"

const notFoundPath = (): ApiError.ApiError =>
  ApiError.make(404, "NotFound", "the server could not find the requested resource", {})

const badRequest = (message: string): ApiError.ApiError => ApiError.make(400, "BadRequest", message)

/** A `TestCluster` failure as the `KubeError` the HTTP client parses from the same Status. */
const toKubeError = (info: KubeError.RequestInfo) => (e: unknown): KubeError.StatusError => {
  const status = toApiError(e).status
  const retryAfter = status.details?.retryAfterSeconds
  return KubeError.fromStatus(status as KubeError.Status, {
    code: status.code,
    retryAfter: retryAfter !== undefined ? Duration.seconds(retryAfter) : undefined,
    request: info
  })
}

/** Where a request goes once routed, as the HTTP server routes its URL. */
interface Target {
  readonly rt: ResourceType
  readonly namespace: string | undefined
}

/** The JSON a request body becomes on the wire. */
const wire = (kind: string, body: unknown): Effect.Effect<unknown, KubeError.Encode> =>
  Effect.try({
    try: () => {
      const text = JSON.stringify(body)
      return text === undefined ? undefined : JSON.parse(text) as unknown
    },
    catch: (cause) =>
      new KubeError.Encode({ kind, issue: `not JSON-serializable: ${cause instanceof Error ? cause.message : cause}` })
  })

type Item =
  | { readonly _tag: "Event"; readonly event: WatchEvent }
  | { readonly _tag: "Drop" }
  | { readonly _tag: "Garble" }
  | { readonly _tag: "End" }

const END: Item = { _tag: "End" }
const DROP: Item = { _tag: "Drop" }
const GARBLE: Item = { _tag: "Garble" }

/** @internal */
export const fromCore = (core: Core, options: TestKube.Options = {}): KubeClient.KubeClient.Service => {
  const defaultNamespace = options.namespace ?? "default"
  const defaultFieldManager = options.fieldManager ?? "reconcile"
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "30 seconds")
  const bookmarkInterval = Duration.fromInputUnsafe(options.bookmarkInterval ?? "1 minute")

  const namespaceFor = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    namespace: string | undefined
  ): string | undefined => resource.namespaced ? namespace ?? defaultNamespace : undefined

  /** Routes like the HTTP server routes the path `resource.path(...)` builds (a 404 for what it would not serve). */
  const route = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    namespace: string | undefined,
    name: string | undefined
  ): Target => {
    const rt = core.registry.byResource(resource.group, resource.version, resource.plural)
    const ns = resource.namespaced && namespace !== undefined && namespace !== "" ? namespace : undefined
    if (rt === undefined) throw notFoundPath()
    if (ns !== undefined && !rt.namespaced) throw notFoundPath()
    if (rt.namespaced && ns === undefined && name !== undefined) throw notFoundPath()
    return { rt, namespace: ns }
  }

  /** Injected faults: latency on Effect's Clock, then a failure (as the in-process TestCluster does). */
  const guard = (verb: Verb, target: Target): Effect.Effect<void, ApiError.ApiError> =>
    Effect.suspend(() => {
      const decision = core.faults.decide(verb, target.rt, target.namespace)
      const delay = decision.latencyMillis > 0 ? Effect.sleep(Duration.millis(decision.latencyMillis)) : Effect.void
      return decision.failure === undefined ? delay : Effect.andThen(delay, Effect.fail(decision.failure))
    })

  const timeoutOf = (info: KubeError.RequestInfo) =>
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(KubeError.clientTimeout(timeout, info))
    })

  /** One request: route, checks, faults, the core operation; errors as over HTTP; timeout and retries as over HTTP. */
  const request = <A, B extends HasMetadata>(spec: {
    readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
    readonly verb: Verb
    readonly resource: Resource.Resource<B>
    readonly namespace: string | undefined
    readonly name: string | undefined
    readonly subresource?: "status" | undefined
    readonly dryRun?: boolean | undefined
    readonly check?: ((target: Target) => void) | undefined
    /** Whether sending it twice is harmless (decides which failures are retried); `"never"`: no retries (watches). */
    readonly idempotent: boolean | "never"
    readonly run: (target: Target) => A
  }): Effect.Effect<A, KubeError.KubeError> => {
    const info: KubeError.RequestInfo = {
      method: spec.method,
      path: spec.resource.path({ namespace: spec.namespace, name: spec.name, subresource: spec.subresource })
    }
    const attempt = Effect.suspend(() => {
      let target: Target
      try {
        target = route(spec.resource, spec.namespace, spec.name)
        spec.check?.(target)
      } catch (e) {
        return Effect.fail(toApiError(e))
      }
      return Effect.andThen(
        guard(spec.verb, target),
        Effect.try({ try: () => spec.run(target), catch: toApiError })
      )
    }).pipe(Effect.mapError(toKubeError(info)), timeoutOf(info))
    return spec.idempotent === "never" ? attempt : Kube.withRetry(attempt, options.retry, spec.idempotent)
  }

  const decodeWith =
    <A extends HasMetadata>(resource: Resource.Resource<A>, info: KubeError.RequestInfo) =>
    (body: unknown): Effect.Effect<A, KubeError.Decode> =>
      Effect.mapError(
        resource.decode(body),
        (e) => e.request === undefined ? new KubeError.Decode({ ...e, request: info }) : e
      )

  const get = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    options?: KubeClient.GetOptions
  ): Effect.Effect<A, KubeError.KubeError> => {
    const namespace = namespaceFor(resource, options?.namespace)
    const path = resource.path({ namespace, name })
    return request({
      method: "GET",
      verb: "get",
      resource,
      namespace,
      name,
      idempotent: true,
      run: (t) => core.get(t.rt, t.namespace, name)
    }).pipe(Effect.flatMap(decodeWith(resource, { method: "GET", path })))
  }

  const list = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    options?: KubeClient.ListOptions
  ): Effect.Effect<KubeClient.ObjectList<A>, KubeError.KubeError> => {
    const path = resource.path({ namespace: options?.namespace })
    const info = { method: "GET", path }
    return request({
      method: "GET",
      verb: "list",
      resource,
      namespace: options?.namespace,
      name: undefined,
      idempotent: true,
      check: () => {
        const limit = options?.limit
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
          throw badRequest(`invalid integer parameter: ${limit}`)
        }
      },
      run: (t) => {
        if (core.faults.takeExpire("list")) {
          throw ApiError.make(410, "Expired", "too old resource version: injected fault")
        }
        return core.list(t.rt, t.namespace, {
          labelSelector: options?.labelSelector,
          fieldSelector: options?.fieldSelector,
          limit: options?.limit,
          continue: options?.continue,
          resourceVersion: options?.resourceVersion,
          resourceVersionMatch: options?.resourceVersionMatch
        })
      }
    }).pipe(
      Effect.flatMap((body) => {
        return Effect.map(KubeClient.decodeItems(body.items, decodeWith(resource, info)), ({ items, undecodable }) => ({
          items,
          resourceVersion: body.metadata.resourceVersion,
          continue: nonEmpty(body.metadata.continue),
          remainingItemCount: body.metadata.remainingItemCount,
          undecodable
        }))
      })
    )
  }

  const listAll = KubeClient.paginate(list)

  const fieldManagerOf = (explicit: string | undefined): string => nonEmpty(explicit) ?? defaultFieldManager

  const write = <A extends HasMetadata>(
    method: "POST" | "PUT",
    resource: Resource.Resource<A>,
    object: A,
    options: KubeClient.WriteOptions | undefined,
    subresource: "status" | undefined
  ): Effect.Effect<A, KubeError.KubeError> =>
    Effect.gen(function*() {
      const meta = metaOf(object)
      const namespace = namespaceFor(resource, nonEmpty(meta.namespace) ?? options?.namespace)
      const name = nonEmpty(meta.name)
      const path = resource.path({ namespace, name: method === "PUT" ? name : undefined, subresource })
      const info = { method, path }
      if (method === "PUT" && name === undefined) {
        return yield* new KubeError.BadRequest({
          status: {
            kind: "Status",
            status: "Failure",
            reason: "BadRequest",
            code: 0,
            message: "replace needs metadata.name"
          },
          request: info
        })
      }
      const body = yield* Effect.flatMap(resource.encode(object), (encoded) => wire(resource.kind, encoded))
      const fieldManager = fieldManagerOf(options?.fieldManager)
      const answer = yield* request({
        method,
        verb: method === "POST" ? "create" : "update",
        resource,
        namespace,
        name: method === "PUT" ? name : undefined,
        subresource,
        dryRun: options?.dryRun,
        idempotent: method === "PUT",
        run: (t): KubeObject =>
          method === "POST"
            ? core.create(t.rt, t.namespace, body, { fieldManager, dryRun: options?.dryRun })
            : core.update(t.rt, t.namespace, name!, body, { fieldManager, subresource, dryRun: options?.dryRun })
      })
      return yield* decodeWith(resource, info)(answer)
    })

  const patch = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    body: unknown,
    options: KubeClient.PatchOptions,
    subresource: "status" | undefined
  ): Effect.Effect<A, KubeError.KubeError> =>
    Effect.gen(function*() {
      const namespace = namespaceFor(resource, options.namespace)
      const path = resource.path({ namespace, name, subresource })
      const apply = options.type === "apply"
      const json = yield* wire(resource.kind, body)
      const answer = yield* request({
        method: "PATCH",
        verb: "patch",
        resource,
        namespace,
        name,
        subresource,
        dryRun: options.dryRun,
        idempotent: apply,
        check: (t) => {
          if (options.type === "strategic" && !isBuiltinGroup(t.rt.group)) {
            throw ApiError.make(
              415,
              "UnsupportedMediaType",
              "the body of the request was in an unknown format - accepted media types include: " +
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            )
          }
          if (json === undefined) throw badRequest("the body of the request could not be decoded as JSON: no body")
        },
        run: (t) =>
          core.patch(t.rt, t.namespace, name, options.type, json, {
            fieldManager: apply ? options.fieldManager ?? "reconcile" : fieldManagerOf(options.fieldManager),
            subresource,
            force: apply && options.force === true ? true : undefined,
            dryRun: options.dryRun
          }).object
      })
      return yield* decodeWith(resource, { method: "PATCH", path })(answer)
    })

  const del = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    options?: KubeClient.DeleteOptions
  ): Effect.Effect<KubeClient.DeleteResult<A>, KubeError.KubeError> => {
    const namespace = namespaceFor(resource, options?.namespace)
    const path = resource.path({ namespace, name })
    return request({
      method: "DELETE",
      verb: "delete",
      resource,
      namespace,
      name,
      dryRun: options?.dryRun,
      idempotent: false,
      // the body TestApiServer answers: the object while something holds it, else a success Status
      run: (t) =>
        deleteAnswer(
          t.rt,
          name,
          core.delete(t.rt, t.namespace, name, {
            propagationPolicy: options?.propagationPolicy,
            preconditions: options?.preconditions,
            dryRun: options?.dryRun
          })
        )
    }).pipe(
      Effect.flatMap((answer): Effect.Effect<KubeClient.DeleteResult<A>, KubeError.KubeError> => {
        if (answer._tag === "Status") {
          return Effect.succeed({ _tag: "Deleted", status: answer.status as KubeError.Status, object: undefined })
        }
        return Effect.map(
          decodeWith(resource, { method: "DELETE", path })(answer.object),
          (object): KubeClient.DeleteResult<A> =>
            metaOf(object).deletionTimestamp !== undefined && metaOf(object).deletionTimestamp !== null
              ? { _tag: "Pending", object }
              : { _tag: "Deleted", status: undefined, object }
        )
      })
    )
  }

  const toEvent = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    event: WatchEvent
  ): Effect.Effect<KubeClient.WatchEvent<A>> => {
    switch (event.type) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED": {
        const _tag = event.type === "ADDED" ? "Added" : event.type === "MODIFIED" ? "Modified" : "Deleted"
        return Effect.match(resource.decode(event.object), {
          onFailure: (error): KubeClient.WatchEvent<A> => ({ _tag: "Undecodable", error, type: _tag }),
          onSuccess: (object): KubeClient.WatchEvent<A> => ({ _tag, object })
        })
      }
      case "BOOKMARK": {
        const meta = event.object.metadata
        return Effect.succeed({
          _tag: "Bookmark",
          resourceVersion: meta.resourceVersion ?? "",
          annotations: meta.annotations ?? {}
        })
      }
      case "ERROR": {
        const status = event.object as unknown as KubeError.Status
        return Effect.succeed({ _tag: "Error", status, error: KubeError.fromStatus(status, { code: 500 }) })
      }
    }
  }

  const watch = <A extends HasMetadata>(
    resource: Resource.Resource<A>,
    options?: KubeClient.WatchOptions
  ): Stream.Stream<KubeClient.WatchEvent<A>, KubeError.KubeError> => {
    const info: KubeError.RequestInfo = { method: "GET", path: resource.path({ namespace: options?.namespace }) }
    const open = request({
      method: "GET",
      verb: "watch",
      resource,
      namespace: options?.namespace,
      name: undefined,
      idempotent: "never",
      check: () => {
        const t = options?.timeoutSeconds
        if (t !== undefined && (!Number.isInteger(t) || t < 0)) throw badRequest(`invalid integer parameter: ${t}`)
      },
      run: (t) => t
    })
    return Stream.unwrap(Effect.gen(function*() {
      // one attempt, as over HTTP: the watcher decides what to do after a failure
      const target = yield* open
      const queue = yield* Queue.unbounded<Item>()
      if (core.faults.takeExpire("watch")) {
        const status = ApiError.make(410, "Expired", "too old resource version: injected fault").status
        return Stream.fromEffect(toEvent(resource, { type: "ERROR", object: status as unknown as KubeObject }))
      }
      const clock = yield* Clock.Clock
      const pace = new WatchPace(core.faults, target.rt, target.namespace)
      const hooks: OpenWatch = {
        drop: () => Queue.offerUnsafe(queue, DROP),
        garble: () => Queue.offerUnsafe(queue, GARBLE),
        stall: (millis) => pace.stall(clock.currentTimeMillisUnsafe(), millis),
        rt: target.rt,
        namespace: target.namespace
      }
      const handle = yield* Effect.acquireRelease(
        Effect.try({
          try: () =>
            core.watch(target.rt, target.namespace, {
              labelSelector: options?.labelSelector,
              fieldSelector: options?.fieldSelector,
              resourceVersion: options?.resourceVersion,
              sendInitialEvents: options?.sendInitialEvents,
              allowWatchBookmarks: options?.allowWatchBookmarks
            }, (event) => Queue.offerUnsafe(queue, { _tag: "Event", event })),
          catch: (e) => toKubeError(info)(e)
        }),
        (h) =>
          Effect.sync(() => {
            h.close()
            core.faults.openWatches.delete(hooks)
          })
      )
      if (!handle.open) Queue.offerUnsafe(queue, END)
      else if (core.faults.takeDrop()) Queue.offerUnsafe(queue, DROP)
      else core.faults.openWatches.add(hooks)
      let events: Stream.Stream<KubeClient.WatchEvent<A>, KubeError.KubeError> = Stream.fromQueue(queue).pipe(
        Stream.takeWhile((item) => item._tag !== "End"),
        Stream.mapEffect((item): Effect.Effect<KubeClient.WatchEvent<A>, KubeError.KubeError> => {
          switch (item._tag) {
            case "Event":
              return toEvent(resource, item.event)
            case "Garble":
              return KubeClient.parseWatchLine(resource, garbledLine)
            default:
              return Effect.fail(
                new KubeError.Transport({
                  reason: "Response",
                  request: info,
                  cause: new Error("the watch connection was dropped (injected fault)")
                })
              )
          }
        })
      )
      if (options?.allowWatchBookmarks === true) {
        // every bookmarkInterval and 2 s before the deadline; never older than the watch's start (kube-apiserver)
        const from = Freshness.requested(options.resourceVersion)
        const interval = Duration.toMillis(bookmarkInterval)
        const deadline = options.timeoutSeconds !== undefined && options.timeoutSeconds > 0
          ? clock.currentTimeMillisUnsafe() + options.timeoutSeconds * 1000
          : undefined
        const due = Effect.suspend(() => {
          const now = clock.currentTimeMillisUnsafe()
          const at = Freshness.nextBookmarkAt(now, interval, deadline)
          return at === undefined ? Effect.never : Effect.sleep(Duration.millis(at - now))
        })
        const bookmarks = Stream.fromEffectRepeat(due).pipe(
          Stream.map(() => Freshness.bookmarkFor(core, target.rt, from)),
          Stream.filter((bookmark): bookmark is WatchEvent => bookmark !== undefined),
          Stream.mapEffect((bookmark) => toEvent(resource, bookmark))
        )
        events = Stream.merge(events, bookmarks, { haltStrategy: "left" })
      }
      if (options?.timeoutSeconds !== undefined && options.timeoutSeconds > 0) {
        events = Stream.interruptWhen(events, Effect.sleep(Duration.seconds(options.timeoutSeconds)))
      }
      // stalled and delayed watches (Faults) hold everything, the end included, on Effect's Clock
      return paceStream(events, pace)
    }))
  }

  return {
    get,
    list,
    listAll,
    create: (resource, object, options) => write("POST", resource, object, options, undefined),
    replace: (resource, object, options) => write("PUT", resource, object, options, undefined),
    patch: (resource, name, body, options) => patch(resource, name, body, options, undefined),
    delete: del,
    replaceStatus: (resource, object, options) => write("PUT", resource, object, options, "status"),
    patchStatus: (resource, name, body, options) => patch(resource, name, body, options, "status"),
    watch
  }
}

/** @internal */
export const make = (options?: TestKube.Options): Effect.Effect<KubeClient.KubeClient.Service, never, TestCluster> =>
  Effect.flatMap(TestCluster, (cluster) => {
    const core = coreOf(cluster)
    return core === undefined
      ? Effect.die(new Error("TestKube needs a TestCluster made by TestCluster.make (or its layers)"))
      : Effect.succeed(fromCore(core, options))
  })
