/**
 * The benchmark's operator written with kubernetes-fluent-client (the client Pepr builds on), as its README shows
 * it: `K8s(Model).Watch(callback)` for WebApps (a `GenericKind` registered with `RegisterKind`), Deployments and
 * Services; `K8s(kind.Deployment).Apply(..., { force: true })` (server-side apply; the library's field manager is
 * `pepr`) and `K8s(WebApp).PatchStatus(...)`. Its watch calls back per event with no queue of its own, and a
 * failed callback is only retried by its next relist, so events go into the same plain deduplicating queue with
 * backoff as the client-node operator (what Pepr does with its own queue). The owner is read from the latest object
 * the watch delivered. The kubeconfig comes from `KUBECONFIG` (the library reads the default config).
 */
import { GenericKind, K8s, kind, RegisterKind } from "kubernetes-fluent-client"
import {
  CONCURRENCY,
  deployment,
  GROUP,
  keyOf,
  KIND,
  makeQueue,
  ownerKey,
  ownerRef,
  PLURAL,
  serveDriver,
  service,
  statusPatch,
  VERSION,
  type WebAppJson
} from "./shared.js"

class WebAppKind extends GenericKind {}
RegisterKind(WebAppKind, { group: GROUP, version: VERSION, kind: KIND, plural: PLURAL })

/** The latest WebApp seen per key (the watch keeps its own cache, but does not expose it). */
const latest = new Map<string, WebAppJson>()

const reconcile = async (key: string): Promise<void> => {
  const app = latest.get(key)
  if (app === undefined) return
  const owner = ownerRef(app)
  const d = deployment(app)
  await K8s(kind.Deployment).Apply({ ...d, metadata: { ...d.metadata, ownerReferences: [owner] } } as any, {
    force: true
  })
  const s = service(app)
  await K8s(kind.Service).Apply({ ...s, metadata: { ...s.metadata, ownerReferences: [owner] } } as any, {
    force: true
  })
  const patch = statusPatch(app)
  if (patch !== undefined) {
    await K8s(WebAppKind).PatchStatus({
      metadata: { name: app.metadata.name!, namespace: app.metadata.namespace! },
      ...patch
    })
  }
}

const queue = makeQueue(CONCURRENCY, reconcile)

const webApps = K8s(WebAppKind).Watch((app, phase) => {
  const key = keyOf(app.metadata!)
  if (phase === "DELETED") {
    latest.delete(key)
    return
  }
  latest.set(key, app as unknown as WebAppJson)
  queue.add(key)
})
const onOwned = (object: GenericKind) => {
  const key = ownerKey(object as any)
  if (key !== undefined) queue.add(key)
}
const deployments = K8s(kind.Deployment).Watch(onOwned)
const services = K8s(kind.Service).Watch(onOwned)

serveDriver({ exitOnSigterm: true })
await Promise.all([webApps.start(), deployments.start(), services.start()])
