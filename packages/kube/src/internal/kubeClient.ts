import type { ObjectMeta } from "@reconcile/core"
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Kube from "../Kube.js"
import type * as KubeClient from "../KubeClient.js"
import * as KubeError from "../KubeError.js"
import * as KubeStatus from "../KubeStatus.js"
import type * as Resource from "../Resource.js"
import { LineSplitter } from "./lines.js"
import { acceptFor } from "./metadataOnly.js"
import { decodeSync, rawText } from "./resource.js"

type Json = Record<string, unknown>

const isNonEmpty = <A>(as: Array<A>): as is Arr.NonEmptyArray<A> => as.length > 0

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const patchContentType: Record<KubeClient.PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml"
}

const clientError = (message: string, request: KubeError.RequestInfo): KubeError.BadRequest =>
  new KubeError.BadRequest({
    status: { kind: "Status", status: "Failure", reason: "BadRequest", code: 0, message },
    request
  })

const badLine = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  line: string,
  issue: string
): KubeClient.WatchEvent<A> => ({
  _tag: "Undecodable",
  error: new KubeError.Decode({ kind: resource.kind, raw: rawText(line, resource.sensitive, resource.kind), issue })
})

const eventTags = { ADDED: "Added", MODIFIED: "Modified", DELETED: "Deleted" } as const

/**
 * One watch line to its event; `decode` turns the event's object into the resource's type (synchronously when the
 * resource has a synchronous decoder, see `decodeSync`, else an Effect).
 */
const parseLine = <A extends ObjectMeta.HasMetadata, D>(
  resource: Resource.Resource<A>,
  line: string,
  decoded: (tag: "Added" | "Modified" | "Deleted", object: unknown) => D
): KubeClient.WatchEvent<A> | D => {
  let event: unknown
  try {
    event = JSON.parse(line)
  } catch (e) {
    return badLine(resource, line, `watch line is not JSON: ${e instanceof Error ? e.message : e}`)
  }
  if (!isRecord(event) || typeof event.type !== "string") {
    return badLine(resource, line, "not a watch event (no type)")
  }
  switch (event.type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED":
      return decoded(eventTags[event.type], event.object)
    case "BOOKMARK": {
      const meta = isRecord(event.object) && isRecord(event.object.metadata) ? event.object.metadata : undefined
      if (meta === undefined || typeof meta.resourceVersion !== "string") {
        return badLine(resource, line, "BOOKMARK without metadata.resourceVersion")
      }
      const annotations = isRecord(meta.annotations) ? meta.annotations as Record<string, string> : {}
      return { _tag: "Bookmark", resourceVersion: meta.resourceVersion, annotations }
    }
    case "ERROR": {
      const status: KubeStatus.Status = isRecord(event.object) ? event.object : {}
      return { _tag: "Error", status, error: KubeStatus.toError(status, { code: 500 }) }
    }
    default:
      return badLine(resource, line, `unknown watch event type ${event.type}`)
  }
}

const fromDecoded = <A>(
  tag: "Added" | "Modified" | "Deleted",
  result: Result.Result<A, KubeError.Decode>
): KubeClient.WatchEvent<A> =>
  Result.isSuccess(result)
    ? { _tag: tag, object: result.success }
    : { _tag: "Undecodable", error: result.failure, type: tag }

/** @internal */
export const parseWatchLine = <A extends ObjectMeta.HasMetadata>(
  resource: Resource.Resource<A>,
  line: string
): Effect.Effect<KubeClient.WatchEvent<A>> => {
  const event = parseLine(resource, line, (tag, object) =>
    Effect.match(resource.decode(object), {
      onFailure: (error): KubeClient.WatchEvent<A> => ({ _tag: "Undecodable", error, type: tag }),
      onSuccess: (object): KubeClient.WatchEvent<A> => ({ _tag: tag, object })
    }))
  return Effect.isEffect(event) ? event : Effect.succeed(event)
}

/** @internal */
export const parseWatchStream = <A extends ObjectMeta.HasMetadata, E, R>(
  resource: Resource.Resource<A>,
  bytes: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<KubeClient.WatchEvent<A>, E, R> =>
  Stream.suspend(() => {
    // One stage for line splitting, parsing and decoding, one array of events per array of network chunks: a watch
    // often arrives one event per chunk, and every extra stream stage costs more per chunk than parsing the line.
    // Each line goes from the splitter to its event at once (no array of lines); a resource decoded by an Effect (a
    // custom decoder) collects its lines' effects instead.
    const splitter = new LineSplitter()
    const sync = decodeSync(resource)
    let events: Array<KubeClient.WatchEvent<A>> = []
    let pending: Array<Effect.Effect<KubeClient.WatchEvent<A>>> = []
    const decoded = sync === undefined
      ? undefined
      : (tag: "Added" | "Modified" | "Deleted", object: unknown) => fromDecoded(tag, sync(object))
    const push = decoded === undefined
      ? (line: string) => {
        pending.push(parseWatchLine(resource, line))
      }
      : (line: string) => {
        events.push(parseLine(resource, line, decoded))
      }
    /** The events of the lines pushed since the last call. */
    const take: Effect.Effect<Array<KubeClient.WatchEvent<A>>> = Effect.suspend(() => {
      if (decoded === undefined) {
        const effects = pending
        pending = []
        return Effect.all(effects)
      }
      const out = events
      events = []
      return Effect.succeed(out)
    })
    return Stream.concat(
      Stream.transformPull(bytes, (pull) =>
        Effect.sync(() => {
          // a chunk without a complete line emits nothing and pulls the next (stream chunks are never empty)
          const next: Pull.Pull<Arr.NonEmptyReadonlyArray<KubeClient.WatchEvent<A>>, E, void, R> = Effect.flatMap(
            pull,
            (chunks) => {
              for (const chunk of chunks) splitter.push(chunk, push)
              return Effect.flatMap(take, (out) => isNonEmpty(out) ? Effect.succeed(out) : next)
            }
          )
          return next
        })),
      Stream.fromArrayEffect(Effect.suspend(() => {
        splitter.end(push)
        return take
      }))
    )
  })

/** @internal */
export const make: Effect.Effect<KubeClient.KubeClient.Service, never, Kube.Kube> = Effect.map(Kube.Kube, (kube) => {
  const namespaceFor = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    namespace: string | undefined
  ): string | undefined => resource.scope === "Namespaced" ? namespace ?? kube.namespace : undefined

  const writeQuery = (options: KubeClient.WriteOptions | undefined) => ({
    fieldManager: options?.fieldManager,
    dryRun: options?.dryRun === true ? "All" : undefined
  })

  const decodeWith = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    request: KubeError.RequestInfo
  ) =>
  (body: unknown): Effect.Effect<A, KubeError.Decode> =>
    Effect.mapError(resource.decode(body), (e) => e.request === undefined ? new KubeError.Decode({ ...e, request }) : e)

  const get = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    options?: KubeClient.GetOptions
  ) => {
    const path = resource.path({ namespace: namespaceFor(resource, options?.namespace), name })
    return kube.request({ method: "GET", path, accept: acceptFor(resource, false) }).pipe(
      Effect.flatMap(decodeWith(resource, { method: "GET", path }))
    )
  }

  const list = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    options?: KubeClient.ListOptions
  ): Effect.Effect<KubeClient.ObjectList<A>, KubeError.KubeError> => {
    const path = resource.path({ namespace: options?.namespace })
    const info = { method: "GET", path }
    return kube.request({
      method: "GET",
      path,
      accept: acceptFor(resource, true),
      query: {
        labelSelector: options?.labelSelector,
        fieldSelector: options?.fieldSelector,
        shardSelector: options?.shardSelector,
        limit: options?.limit,
        continue: options?.continue,
        resourceVersion: options?.resourceVersion,
        resourceVersionMatch: options?.resourceVersionMatch
      }
    }).pipe(
      Effect.flatMap((body) => {
        // an empty PartialObjectMetadataList comes with `items: null` from kube-apiserver (Go's nil slice)
        if (isRecord(body) && body.items === null && isRecord(body.metadata)) body = { ...body, items: [] }
        if (!isRecord(body) || !Array.isArray(body.items)) {
          return Effect.fail(
            new KubeError.Decode({
              kind: `${resource.kind}List`,
              raw: rawText(body, resource.sensitive, resource.kind),
              issue: "expected a list with items",
              request: info
            })
          )
        }
        const meta = isRecord(body.metadata) ? body.metadata : {}
        const sync = decodeSync(resource)
        const decoded = sync === undefined
          ? decodeItems(body.items, decodeWith(resource, info))
          : Effect.sync(() => {
            // no Effect per item: a page is hundreds of them
            const items: Array<A> = []
            const undecodable: Array<KubeError.Decode> = []
            for (const item of body.items as ReadonlyArray<unknown>) {
              const result = sync(item)
              if (Result.isSuccess(result)) items.push(result.success)
              else {
                const e = result.failure
                undecodable.push(e.request === undefined ? new KubeError.Decode({ ...e, request: info }) : e)
              }
            }
            return { items, undecodable }
          })
        return Effect.map(decoded, ({ items, undecodable }) => ({
          items,
          resourceVersion: typeof meta.resourceVersion === "string" ? meta.resourceVersion : "",
          continue: typeof meta.continue === "string" && meta.continue !== "" ? meta.continue : undefined,
          remainingItemCount: typeof meta.remainingItemCount === "number" ? meta.remainingItemCount : undefined,
          shardSelector: isRecord(meta.shardInfo) && typeof meta.shardInfo.selector === "string"
            ? meta.shardInfo.selector
            : undefined,
          undecodable
        }))
      })
    )
  }

  const listAll = paginate(list)

  const metaOf = (u: unknown): Json => isRecord(u) && isRecord(u.metadata) ? u.metadata : {}

  const write = <A extends ObjectMeta.HasMetadata>(
    method: "POST" | "PUT",
    resource: Resource.Resource<A>,
    object: A,
    options: KubeClient.WriteOptions | undefined,
    subresource: string | undefined
  ) =>
    Effect.gen(function*() {
      const meta = metaOf(object)
      const namespace = namespaceFor(
        resource,
        typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : options?.namespace
      )
      const name = typeof meta.name === "string" && meta.name !== "" ? meta.name : undefined
      const path = resource.path({ namespace, name: method === "PUT" ? name : undefined, subresource })
      const info = { method, path }
      if (method === "PUT" && name === undefined) return yield* clientError("replace needs metadata.name", info)
      const body = yield* resource.encode(object)
      const answer = yield* kube.request({
        method,
        path,
        body,
        query: writeQuery(options),
        accept: acceptFor(resource, false)
      })
      return yield* decodeWith(resource, info)(answer)
    })

  const patch = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    body: unknown,
    options: KubeClient.PatchOptions,
    subresource: string | undefined
  ) => {
    const path = resource.path({ namespace: namespaceFor(resource, options.namespace), name, subresource })
    const apply = options.type === "apply"
    return kube.request({
      method: "PATCH",
      path,
      body,
      contentType: patchContentType[options.type],
      accept: acceptFor(resource, false),
      idempotent: apply,
      query: {
        fieldManager: options.fieldManager ?? (apply ? "reconcile" : undefined),
        force: apply && options.force === true ? true : undefined,
        dryRun: options.dryRun === true ? "All" : undefined
      }
    }).pipe(Effect.flatMap(decodeWith(resource, { method: "PATCH", path })))
  }

  const del = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    name: string,
    options?: KubeClient.DeleteOptions
  ): Effect.Effect<KubeClient.DeleteResult<A>, KubeError.KubeError> => {
    const path = resource.path({ namespace: namespaceFor(resource, options?.namespace), name })
    const body: Json = { apiVersion: "v1", kind: "DeleteOptions" }
    if (options?.propagationPolicy !== undefined) body.propagationPolicy = options.propagationPolicy
    if (options?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds
    if (options?.preconditions !== undefined) {
      const preconditions: Json = {}
      if (options.preconditions.uid !== undefined) preconditions.uid = options.preconditions.uid
      if (options.preconditions.resourceVersion !== undefined) {
        preconditions.resourceVersion = options.preconditions.resourceVersion
      }
      body.preconditions = preconditions
    }
    if (options?.dryRun === true) body.dryRun = ["All"]
    return kube.request({ method: "DELETE", path, body, accept: acceptFor(resource, false) }).pipe(
      Effect.flatMap((answer): Effect.Effect<KubeClient.DeleteResult<A>, KubeError.KubeError> => {
        if (!isRecord(answer) || answer.kind === "Status") {
          const status = isRecord(answer) ? answer as KubeStatus.Status : undefined
          return Effect.succeed({ _tag: "Deleted", status, object: undefined })
        }
        return Effect.map(
          decodeWith(resource, { method: "DELETE", path })(answer),
          (object): KubeClient.DeleteResult<A> =>
            metaOf(object).deletionTimestamp !== undefined && metaOf(object).deletionTimestamp !== null
              ? { _tag: "Pending", object }
              : { _tag: "Deleted", status: undefined, object }
        )
      })
    )
  }

  const watch = <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    options?: KubeClient.WatchOptions
  ): Stream.Stream<KubeClient.WatchEvent<A>, KubeError.KubeError> =>
    parseWatchStream(
      resource,
      kube.stream({
        method: "GET",
        path: resource.path({ namespace: options?.namespace }),
        accept: acceptFor(resource, false),
        query: {
          watch: true,
          labelSelector: options?.labelSelector,
          fieldSelector: options?.fieldSelector,
          shardSelector: options?.shardSelector,
          resourceVersion: options?.resourceVersion,
          allowWatchBookmarks: options?.allowWatchBookmarks,
          timeoutSeconds: options?.timeoutSeconds,
          sendInitialEvents: options?.sendInitialEvents,
          resourceVersionMatch: options?.sendInitialEvents === true ? "NotOlderThan" : undefined
        }
      })
    )

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
})

/**
 * `listAll` from `list`: every page (`limit` per page, default 500) of one
 * consistent snapshot; the continue token pins the snapshot, so
 * `resourceVersion` only goes with the first page.
 *
 * @internal
 */
export const paginate =
  (list: KubeClient.KubeClient.Service["list"]): KubeClient.KubeClient.Service["listAll"] =>
  <A extends ObjectMeta.HasMetadata>(
    resource: Resource.Resource<A>,
    options?: KubeClient.ListOptions
  ): Effect.Effect<KubeClient.ObjectList<A>, KubeError.KubeError> =>
    Effect.gen(function*() {
      const limit = options?.limit ?? 500
      const items: Array<A> = []
      const undecodable: Array<KubeError.Decode> = []
      let token = options?.continue
      let resourceVersion: string
      let shardSelector: string | undefined
      do {
        const page: KubeClient.ObjectList<A> = yield* list(resource, {
          ...options,
          limit,
          continue: token,
          resourceVersion: token === undefined ? options?.resourceVersion : undefined,
          resourceVersionMatch: token === undefined ? options?.resourceVersionMatch : undefined
        })
        for (const item of page.items) items.push(item)
        for (const e of page.undecodable) undecodable.push(e)
        resourceVersion = page.resourceVersion
        shardSelector = page.shardSelector
        token = page.continue
      } while (token !== undefined)
      return { items, resourceVersion, continue: undefined, remainingItemCount: undefined, shardSelector, undecodable }
    })

/**
 * Decodes list items, keeping the ones that do not decode apart instead of
 * failing the list.
 *
 * @internal
 */
export const decodeItems = <A>(
  raw: ReadonlyArray<unknown>,
  decode: (u: unknown) => Effect.Effect<A, KubeError.Decode>
): Effect.Effect<{ readonly items: Array<A>; readonly undecodable: Array<KubeError.Decode> }> => {
  const items: Array<A> = []
  const undecodable: Array<KubeError.Decode> = []
  return Effect.as(
    Effect.forEach(raw, (item) =>
      Effect.match(decode(item), {
        onFailure: (e) => {
          undecodable.push(e)
        },
        onSuccess: (a) => {
          items.push(a)
        }
      }), { discard: true }),
    { items, undecodable }
  )
}
