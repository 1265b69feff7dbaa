/**
 * The Deployment status simulator of a chaos run, as the testkit's `Simulators.controllerManager` does it in
 * process, but over the harness's direct connection (the API server runs as its own process): a Deployment whose
 * status does not match its spec for `delayMs` gets `observedGeneration`, `replicas`, `updatedReplicas`,
 * `readyReplicas` and `availableReplicas` from its spec. Polls the Deployments of the namespace; each round is
 * bounded by the request timeouts.
 */
import type { Direct } from "./Direct.js"

const upToDate = (d: any): boolean => {
  const s = d.status ?? {}
  const r = d.spec?.replicas ?? 1
  return s.observedGeneration === d.metadata.generation && s.replicas === r && s.readyReplicas === r &&
    s.availableReplicas === r && s.updatedReplicas === r
}

/** The simulator; `run` until the signal aborts. */
export class Simulator {
  updates = 0
  private readonly pendingSince = new Map<string, number>()

  constructor(
    private readonly direct: Direct,
    private readonly namespace: string,
    private readonly delayMs = 1000,
    /** How often it lists the Deployments (longer with many: each list costs the server and the harness). */
    private readonly everyMs = 300
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    const base = `/apis/apps/v1/namespaces/${this.namespace}/deployments`
    while (!signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, this.everyMs))
      let list: any
      try {
        list = await this.direct.ok("GET", base, { timeoutMs: 5000 })
      } catch {
        continue
      }
      const now = Date.now()
      const pending = new Set<string>()
      for (const d of list.items ?? []) {
        if (upToDate(d) || d.metadata.deletionTimestamp !== undefined) continue
        const key = `${d.metadata.uid}/${d.metadata.generation}/${d.spec?.replicas}`
        pending.add(key)
        const since = this.pendingSince.get(key) ?? now
        this.pendingSince.set(key, since)
        if (now - since < this.delayMs || signal.aborted) continue
        const replicas = d.spec?.replicas ?? 1
        const time = new Date().toISOString().replace(/\.\d+Z$/, "Z")
        const condition = (type: string, reason: string) => ({
          type,
          status: "True",
          reason,
          message: "",
          lastUpdateTime: time,
          lastTransitionTime: time
        })
        const body = {
          ...d,
          status: {
            observedGeneration: d.metadata.generation,
            replicas,
            updatedReplicas: replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
            conditions: [
              condition("Available", "MinimumReplicasAvailable"),
              condition("Progressing", "NewReplicaSetAvailable")
            ]
          }
        }
        const answer = await this.direct.request("PUT", `${base}/${d.metadata.name}/status`, { body, timeoutMs: 5000 })
          .catch(() => undefined)
        if (answer?.status === 200) this.updates++
      }
      for (const key of [...this.pendingSince.keys()]) if (!pending.has(key)) this.pendingSince.delete(key)
    }
  }
}
