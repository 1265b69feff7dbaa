/**
 * A stand-in for kubelets on a cluster without nodes (the real control plane of `Envtest`): it watches Pods
 * through `KubeClient` and, `podReadyDelay` after it first sees one, writes the status a kubelet would — Running
 * with every container ready (so kube-controller-manager's ReplicaSet and Deployment controllers count it
 * available), or Succeeded for a Pod a Job owns (so the Job completes). Pods stay unscheduled (no `nodeName`),
 * hence are deleted at once, as the apiserver does for a Pod no kubelet runs.
 */
import * as Cache from "@reconcile/kube/Cache"
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

/** Runs the stand-in in scope (a background fiber). */
export const run = (options?: KubeletOptions): Effect.Effect<void, never, KubeClient.KubeClient | Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    const delay = Duration.fromInputUnsafe(options?.podReadyDelay ?? "1 second")
    const scope = yield* Effect.scope
    const pending = new Set<string>()
    const key = (pod: Resource.Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`
    const start = (pod: Resource.Pod) =>
      Effect.gen(function*() {
        if (pod.metadata?.deletionTimestamp !== undefined || isDone(pod) || pending.has(key(pod))) return
        pending.add(key(pod))
        yield* Effect.forkIn(
          Effect.sleep(delay).pipe(
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
