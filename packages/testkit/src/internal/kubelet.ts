/**
 * A stand-in for the scheduler and a kubelet on a cluster without nodes (the real control plane of `Envtest`):
 * it registers the Node `testkit-node` (as the in-memory cluster's controller manager names it), watches Pods
 * through `KubeClient`, binds each unscheduled one to that node (`pods/binding`, the scheduler's write) and,
 * `podReadyDelay` after it first sees it, writes the status a kubelet would — Running with every container ready
 * (so kube-controller-manager's ReplicaSet and Deployment controllers count it available), or Succeeded for a
 * Pod a Job owns (so the Job completes). A bound Pod being deleted (graceful deletion: `deletionTimestamp` set,
 * the object kept) is removed with a zero grace period once seen, as a kubelet confirms its containers stopped.
 */
import * as Cache from "@reconcile/kube/Cache"
import * as Kube from "@reconcile/kube/Kube"
import * as KubeClient from "@reconcile/kube/KubeClient"
import * as Resource from "@reconcile/kube/Resource"
import * as Watcher from "@reconcile/kube/Watcher"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

export interface KubeletOptions {
  readonly podReadyDelay?: Duration.Input | undefined
  readonly log?: ((line: string) => void) | undefined
}

const isDone = (pod: Resource.Pod): boolean => {
  const status = pod.status
  if (status?.phase === "Succeeded" || status?.phase === "Failed") return true
  return status?.phase === "Running" &&
    (status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
}

const ownedByJob = (pod: Resource.Pod): boolean =>
  (pod.metadata?.ownerReferences ?? []).some((o) => o.kind === "Job" && o.apiVersion === "batch/v1")

/** The status a kubelet would report for `pod` once its containers run (or, for a Job's Pod, have finished). */
export const statusFor = (pod: Resource.Pod, now: Date): Resource.Pod["status"] => {
  const at = now.toISOString().replace(/\.\d+Z$/, "Z")
  const finished = ownedByJob(pod)
  const containers = pod.spec?.containers ?? []
  const condition = (type: string, status: "True" | "False", reason?: string) => ({
    type,
    status,
    lastTransitionTime: at,
    ...(reason !== undefined ? { reason } : {})
  })
  return {
    phase: finished ? "Succeeded" : "Running",
    startTime: at,
    hostIP: "127.0.0.1",
    podIP: "127.0.0.1",
    conditions: finished
      ? [
        condition("PodScheduled", "True"),
        condition("Initialized", "True"),
        condition("ContainersReady", "False", "PodCompleted"),
        condition("Ready", "False", "PodCompleted")
      ]
      : [
        condition("PodScheduled", "True"),
        condition("Initialized", "True"),
        condition("ContainersReady", "True"),
        condition("Ready", "True")
      ],
    containerStatuses: containers.map((c) => ({
      name: c.name,
      image: c.image ?? "",
      imageID: "",
      ready: !finished,
      started: !finished,
      restartCount: 0,
      state: finished
        ? { terminated: { exitCode: 0, reason: "Completed", startedAt: at, finishedAt: at } }
        : { running: { startedAt: at } }
    }))
  } as Resource.Pod["status"]
}

/** The node the stand-in registers and binds Pods to. */
export const nodeName = "testkit-node"

const node = {
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: nodeName, labels: { "kubernetes.io/hostname": nodeName, "kubernetes.io/os": "linux" } }
}

/** Runs the stand-in in scope (a background fiber). */
export const run = (
  options?: KubeletOptions
): Effect.Effect<void, never, KubeClient.KubeClient | Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    const kube = yield* Kube.Kube
    yield* kube.request({
      method: "PATCH",
      path: `/api/v1/nodes/${nodeName}`,
      query: { fieldManager: "reconcile-kubelet", force: true },
      contentType: "application/apply-patch+yaml",
      body: node
    }).pipe(
      Effect.andThen(kube.request({
        method: "PATCH",
        path: `/api/v1/nodes/${nodeName}/status`,
        contentType: "application/merge-patch+json",
        body: {
          status: {
            conditions: [{
              type: "Ready",
              status: "True",
              reason: "KubeletReady",
              message: "reconcile kubelet stand-in"
            }],
            addresses: [{ type: "InternalIP", address: "127.0.0.1" }],
            capacity: { cpu: "2", memory: "8Gi", pods: "110" },
            allocatable: { cpu: "2", memory: "8Gi", pods: "110" }
          }
        }
      })),
      Effect.tapError((e) =>
        Effect.sync(() => options?.log?.(`kubelet: cannot register node ${nodeName}: ${e.message}`))
      ),
      Effect.ignore
    )
    const bind = (pod: Resource.Pod) =>
      pod.spec?.nodeName !== undefined
        ? Effect.void
        : kube.request({
          method: "POST",
          path: `/api/v1/namespaces/${pod.metadata!.namespace}/pods/${pod.metadata!.name}/binding`,
          body: {
            apiVersion: "v1",
            kind: "Binding",
            metadata: { name: pod.metadata!.name, namespace: pod.metadata!.namespace },
            target: { apiVersion: "v1", kind: "Node", name: nodeName }
          }
        }).pipe(Effect.asVoid)
    const confirmDeletion = (pod: Resource.Pod) =>
      client.delete(Resource.Pod, pod.metadata!.name!, {
        namespace: pod.metadata!.namespace,
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata!.uid }
      }).pipe(Effect.ignore)
    const delay = Duration.fromInputUnsafe(options?.podReadyDelay ?? "1 second")
    const scope = yield* Effect.scope
    const pending = new Set<string>()
    const key = (pod: Resource.Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`
    const start = (pod: Resource.Pod) =>
      Effect.gen(function*() {
        if (pod.metadata?.deletionTimestamp !== undefined) {
          if (pod.spec?.nodeName !== undefined) yield* Effect.forkIn(confirmDeletion(pod), scope)
          return
        }
        if (isDone(pod) || pending.has(key(pod))) return
        pending.add(key(pod))
        yield* Effect.forkIn(
          bind(pod).pipe(
            Effect.ignore,
            Effect.andThen(Effect.sleep(delay)),
            Effect.andThen(Effect.clockWith((clock) => clock.currentTimeMillis)),
            Effect.flatMap((now) =>
              client.patchStatus(Resource.Pod, pod.metadata!.name!, { status: statusFor(pod, new Date(now)) }, {
                type: "merge",
                namespace: pod.metadata!.namespace,
                fieldManager: "reconcile-kubelet"
              })
            ),
            Effect.tap(() => Effect.sync(() => options?.log?.(`kubelet: pod ${key(pod)} is running`))),
            Effect.ignore,
            Effect.ensuring(Effect.sync(() => pending.delete(key(pod))))
          ),
          scope
        )
      })
    yield* Watcher.watch(Cache.listWatch(client, Resource.Pod)).pipe(
      Stream.runForEach((event) =>
        event._tag === "InitApply" || event._tag === "Apply" ? start(event.object) : Effect.void
      ),
      Effect.forkScoped
    )
  })
