import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { KubeObject } from "../KubeObject.js"
import type * as Simulators from "../Simulators.js"
import { TestCluster } from "../TestCluster.js"
import { formatTime } from "./json.js"

const MANAGER = "deployment-controller"

const upToDate = (d: any): boolean => {
  const s = d.status ?? {}
  const r = d.spec?.replicas ?? 1
  return s.observedGeneration === d.metadata.generation && s.replicas === r && s.readyReplicas === r &&
    s.availableReplicas === r && s.updatedReplicas === r
}

export const deploymentStatus = (
  options: Simulators.DeploymentStatusOptions = {}
): Effect.Effect<void, never, TestCluster | Scope.Scope> =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster
    const delay = options.delay ?? "1 second"
    const pending = yield* FiberMap.make<string>()
    const settle = (d: KubeObject) =>
      Effect.gen(function*() {
        yield* Effect.sleep(delay)
        const ref = {
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: d.metadata.namespace,
          name: d.metadata.name!
        }
        const current: any = yield* cluster.get(ref)
        if (upToDate(current)) return
        const replicas = current.spec?.replicas ?? 1
        const now = formatTime(yield* Effect.clockWith((c) => c.currentTimeMillis))
        const condition = (type: string, reason: string, message: string) => ({
          type,
          status: "True",
          reason,
          message,
          lastUpdateTime: now,
          lastTransitionTime: now
        })
        yield* cluster.updateStatus({
          ...current,
          status: {
            observedGeneration: current.metadata.generation,
            replicas,
            updatedReplicas: replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
            conditions: [
              condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability."),
              condition(
                "Progressing",
                "NewReplicaSetAvailable",
                `ReplicaSet "${current.metadata.name}" has successfully progressed.`
              )
            ]
          }
        }, { fieldManager: MANAGER })
      }).pipe(Effect.retry({ times: 3 }), Effect.ignore)
    yield* cluster.watch({ apiVersion: "apps/v1", kind: "Deployment" }).pipe(
      Stream.runForEach((event) => {
        const d = event.object
        const key = `${d.metadata.namespace}/${d.metadata.name}`
        if (event.type === "DELETED") return FiberMap.remove(pending, key)
        if ((event.type === "ADDED" || event.type === "MODIFIED") && !upToDate(d)) {
          // started at once, so its sleep is registered before TestClock.adjust looks (effect 4 forks start later)
          return FiberMap.run(pending, key, settle(d), { startImmediately: true })
        }
        return Effect.void
      }),
      Effect.ignore,
      Effect.forkScoped({ startImmediately: true })
    )
  })
