import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as ApiError from "../ApiError.js"
import type { KubeObject, WatchEvent } from "../KubeObject.js"
import type { ResourceType } from "../ResourceType.js"
import type * as TestCluster from "../TestCluster.js"
import * as AdmissionWebhooks from "./admissionWebhooks.js"
import { converting } from "./conversionWebhooks.js"
import { type OpenWatch, paceStream, type Verb, WatchPace } from "./faults.js"
import * as Freshness from "./freshness.js"
import type { CoreStorage } from "./persistence.js"
import * as PodLog from "./podLog.js"
import * as Scale from "./scale.js"
import { Core } from "./store.js"
import { toApiError } from "./suspension.js"

const cores = new WeakMap<object, Core>()

/** The synchronous core behind a TestCluster service (for the HTTP server). */
export const coreOf = (service: TestCluster.TestCluster.Service): Core => cores.get(service)!

const attempt = <A>(f: () => A): Effect.Effect<A, ApiError.ApiError> => Effect.try({ try: f, catch: toApiError })

/** Applies injected faults (latency, then failure) before an operation. */
const guard = (
  core: Core,
  verb: Verb,
  rt: ResourceType,
  namespace: string | undefined
): Effect.Effect<void, ApiError.ApiError> =>
  Effect.suspend(() => {
    const decision = core.faults.decide(verb, rt, namespace)
    const delay = decision.latencyMillis > 0 ? Effect.sleep(Duration.millis(decision.latencyMillis)) : Effect.void
    return decision.failure === undefined ? delay : Effect.andThen(delay, Effect.fail(decision.failure))
  })

const END = Symbol("end")

export const make = (
  options: TestCluster.Options = {},
  storage?: CoreStorage
): Effect.Effect<TestCluster.TestCluster.Service> =>
  Effect.clockWith((clock) =>
    Effect.sync(() => {
      const core = new Core({
        now: () => clock.currentTimeMillisUnsafe(),
        historySize: options.historySize,
        namespaceLifecycle: options.namespaceLifecycle,
        featureGates: options.featureGates,
        seed: options.seed,
        storage
      })
      const resolve = (apiVersion: string, kind: string) => attempt(() => core.resolveKind(apiVersion, kind))
      const op = <A>(
        verb: Verb,
        apiVersion: string,
        kind: string,
        namespace: string | undefined,
        f: (rt: ResourceType) => A
      ): Effect.Effect<A, ApiError.ApiError> =>
        Effect.flatMap(
          resolve(apiVersion, kind),
          (rt) => Effect.andThen(guard(core, verb, rt, namespace), converting(core, () => f(rt)))
        )

      /** A write: through the admission webhooks when the cluster has webhook configurations. */
      const write = <A>(
        verb: Verb,
        apiVersion: string,
        kind: string,
        namespace: string | undefined,
        info: AdmissionWebhooks.RequestInfo,
        f: (rt: ResourceType) => A
      ): Effect.Effect<A, ApiError.ApiError> =>
        Effect.flatMap(
          resolve(apiVersion, kind),
          (rt) =>
            Effect.andThen(
              guard(core, verb, rt, namespace),
              Effect.map(AdmissionWebhooks.admit(core, info, () => f(rt)), (r) => r.value)
            )
        )

      /** A list from the "watch cache" waits for a resourceVersion not reached yet, then fails (kube-apiserver). */
      const freshList = (query: TestCluster.ListQuery): Effect.Effect<void, ApiError.ApiError> => {
        const from = Freshness.cachedNotOlderThan(query)
        return !Freshness.behind(core, from) ? Effect.void : Effect.flatMap(
          Freshness.awaitResourceVersion(core, from!, Freshness.defaultWaitMillis),
          (fresh) => fresh ? Effect.void : Effect.fail(Freshness.tooLarge(from!, core))
        )
      }

      const watch = (query: TestCluster.WatchQuery): Stream.Stream<WatchEvent, ApiError.ApiError> =>
        Stream.unwrap(Effect.gen(function*() {
          const rt = yield* resolve(query.apiVersion, query.kind)
          yield* guard(core, "watch", rt, query.namespace)
          const queue = yield* Queue.unbounded<WatchEvent | typeof END>()
          if (core.faults.takeExpire("watch")) {
            const status = ApiError.make(410, "Expired", "too old resource version: injected fault").status
            return Stream.make({ type: "ERROR", object: status as unknown as KubeObject } satisfies WatchEvent)
          }
          const from = Freshness.requested(query.resourceVersion)
          if (
            query.sendInitialEvents === true && Freshness.behind(core, from) &&
            !(yield* Freshness.awaitResourceVersion(core, from!, Freshness.defaultWaitMillis))
          ) {
            // a watch-list from a resourceVersion not reached within the wait: an ERROR event (kube-apiserver)
            const status = Freshness.tooLarge(from!, core).status
            return Stream.make({ type: "ERROR", object: status as unknown as KubeObject } satisfies WatchEvent)
          }
          const clock = yield* Clock.Clock
          // a kind converted by a webhook: its events' conversions called on this fiber's services (its Clock)
          const runFork = Effect.runForkWith(yield* Effect.context<never>())
          const pace = new WatchPace(core.faults, rt, query.namespace)
          const hooks: OpenWatch = {
            drop: () => void Queue.offerUnsafe(queue, END),
            garble: () => {},
            stall: (millis) => pace.stall(clock.currentTimeMillisUnsafe(), millis),
            rt,
            namespace: query.namespace
          }
          const handle = yield* Effect.acquireRelease(
            attempt(() =>
              core.watch(
                rt,
                query.namespace,
                {
                  labelSelector: query.labelSelector,
                  fieldSelector: query.fieldSelector,
                  resourceVersion: query.resourceVersion,
                  sendInitialEvents: query.sendInitialEvents,
                  allowWatchBookmarks: query.allowWatchBookmarks
                },
                (event) => Queue.offerUnsafe(queue, event),
                "copy",
                (effect) => void runFork(effect)
              )
            ),
            (h) =>
              Effect.sync(() => {
                h.close()
                core.faults.openWatches.delete(hooks)
              })
          )
          if (!handle.open || core.faults.takeDrop()) Queue.offerUnsafe(queue, END)
          else core.faults.openWatches.add(hooks)
          // Bookmarks and the timeout go through the watch's queue from fibers started at once (effect 4 forks
          // start on a later scheduler turn, and TestClock.adjust waits one turn only): their sleeps are registered
          // when the watch opens, and a bookmark never overtakes an event queued before it.
          if (query.allowWatchBookmarks === true) {
            // every bookmarkInterval and 2 s before the deadline; never older than the watch's start (kube-apiserver)
            const interval = Duration.toMillis(Duration.fromInputUnsafe(query.bookmarkInterval ?? "1 minute"))
            const now = clock.currentTimeMillisUnsafe()
            const deadline = query.timeoutSeconds !== undefined && query.timeoutSeconds > 0
              ? now + query.timeoutSeconds * 1000
              : undefined
            const bookmarks: Effect.Effect<void> = Effect.suspend(() => {
              const at = Freshness.nextBookmarkAt(clock.currentTimeMillisUnsafe(), interval, deadline)
              if (at === undefined) return Effect.void
              return Effect.sleep(Duration.millis(at - clock.currentTimeMillisUnsafe())).pipe(
                Effect.andThen(Effect.sync(() => {
                  const bookmark = Freshness.bookmarkFor(core, rt, from)
                  // after the events converted before it
                  if (bookmark !== undefined) handle.send(bookmark)
                })),
                Effect.andThen(bookmarks)
              )
            })
            yield* Effect.forkScoped(bookmarks, { startImmediately: true })
          }
          if (query.timeoutSeconds !== undefined && query.timeoutSeconds > 0) {
            yield* Effect.sleep(Duration.seconds(query.timeoutSeconds)).pipe(
              Effect.andThen(Effect.sync(() => Queue.offerUnsafe(queue, END))),
              Effect.forkScoped({ startImmediately: true })
            )
          }
          // stalled and delayed watches (Faults) hold everything, the end included, on Effect's Clock
          return paceStream(
            Stream.fromQueue(queue).pipe(
              Stream.takeWhile((e): e is WatchEvent => e !== END),
              Stream.takeUntil((e) => e.type === "ERROR")
            ),
            pace
          )
        }))

      const service: TestCluster.TestCluster.Service = {
        create: (object, opts) =>
          write(
            "create",
            object.apiVersion,
            object.kind,
            object.metadata?.namespace,
            { fieldManager: opts?.fieldManager ?? "testkit" },
            (rt) =>
              core.create(rt, object.metadata?.namespace, object, {
                fieldManager: opts?.fieldManager ?? "testkit",
                dryRun: opts?.dryRun
              })
          ),
        get: (ref) => op("get", ref.apiVersion, ref.kind, ref.namespace, (rt) => core.get(rt, ref.namespace, ref.name)),
        list: (query) =>
          Effect.flatMap(resolve(query.apiVersion, query.kind), (rt) =>
            Effect.andThen(
              guard(core, "list", rt, query.namespace),
              core.faults.takeExpire("list")
                ? Effect.fail(ApiError.make(410, "Expired", "too old resource version: injected fault"))
                : Effect.andThen(
                  freshList(query),
                  converting(core, () => core.list(rt, query.namespace, query))
                )
            )),
        update: (object, opts) =>
          write(
            "update",
            object.apiVersion,
            object.kind,
            object.metadata?.namespace,
            { fieldManager: opts?.fieldManager ?? "testkit" },
            (rt) =>
              core.update(rt, object.metadata?.namespace, object.metadata?.name ?? "", object, {
                fieldManager: opts?.fieldManager ?? "testkit",
                subresource: opts?.subresource,
                dryRun: opts?.dryRun
              })
          ),
        updateStatus: (object, opts) =>
          write("update", object.apiVersion, object.kind, object.metadata?.namespace, {
            fieldManager: opts?.fieldManager ?? "testkit"
          }, (rt) =>
            core.update(rt, object.metadata?.namespace, object.metadata?.name ?? "", object, {
              fieldManager: opts?.fieldManager ?? "testkit",
              subresource: "status",
              dryRun: opts?.dryRun
            })),
        patch: (ref, patch, opts) =>
          write("patch", ref.apiVersion, ref.kind, ref.namespace, {
            fieldManager: patch.type === "apply" ? patch.fieldManager : opts?.fieldManager ?? "testkit"
          }, (rt) =>
            core.patch(rt, ref.namespace, ref.name, patch.type, patch.patch, {
              fieldManager: patch.type === "apply" ? patch.fieldManager : opts?.fieldManager ?? "testkit",
              subresource: opts?.subresource,
              force: patch.type === "apply" ? patch.force : undefined,
              dryRun: opts?.dryRun
            }).object),
        apply: (object, opts) =>
          write(
            "patch",
            object.apiVersion,
            object.kind,
            object.metadata?.namespace,
            { fieldManager: opts.fieldManager },
            (rt) =>
              core.patch(rt, object.metadata?.namespace, object.metadata?.name ?? "", "apply", object, opts).object
          ),
        delete: (ref, opts) =>
          write(
            "delete",
            ref.apiVersion,
            ref.kind,
            ref.namespace,
            { deleteOptions: { ...opts } },
            (rt) => core.delete(rt, ref.namespace, ref.name, opts ?? {})
          ),
        watch,
        resourceVersion: Effect.sync(() => core.resourceVersion()),
        compact: Effect.sync(() => core.compact()),
        resources: Effect.sync(() => [...core.registry.all()]),
        getScale: (ref) =>
          op(
            "get",
            ref.apiVersion,
            ref.kind,
            ref.namespace,
            (rt) => Scale.getScale(core, rt, ref.namespace, ref.name) as KubeObject
          ),
        updateScale: (ref, scale) =>
          op(
            "update",
            ref.apiVersion,
            ref.kind,
            ref.namespace,
            (rt) =>
              Scale.updateScale(core, rt, ref.namespace, ref.name, scale, { fieldManager: "testkit" }) as KubeObject
          ),
        podLog: (query) =>
          op(
            "get",
            "v1",
            "Pod",
            query.namespace,
            (rt) => PodLog.readPodLog(core, rt, query.namespace, query.name, query).text
          ),
        writePodLog: (container, text, opts) =>
          attempt(() =>
            opts?.append === true && opts.previous !== true
              ? PodLog.appendPodLog(core, container.namespace, container.pod, container.container, text)
              : PodLog.setPodLog(core, container.namespace, container.pod, container.container, text, opts)
          )
      }
      cores.set(service, core)
      return service
    })
  )
