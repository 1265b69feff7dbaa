/**
 * The benchmark's operator written with `@kubernetes/client-node` only, as its README and examples show it:
 * `makeInformer` for WebApps (through `CustomObjectsApi.listClusterCustomObject`), Deployments and Services (all
 * namespaces), a plain deduplicating queue with workers and backoff (`makeQueue`), server-side apply through
 * `KubernetesObjectApi.patch(..., PatchStrategy.ServerSideApply)` and the status through
 * `CustomObjectsApi.patchNamespacedCustomObjectStatus` with a merge patch. The owner is read from the informer's
 * cache.
 */
import * as k8s from "@kubernetes/client-node"
import {
  CONCURRENCY,
  deployment,
  FIELD_MANAGER,
  GROUP,
  keyOf,
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

const kc = new k8s.KubeConfig()
kc.loadFromFile(process.env.BENCH_KUBECONFIG!)
const objects = k8s.KubernetesObjectApi.makeApiClient(kc)
const custom = kc.makeApiClient(k8s.CustomObjectsApi)
const apps = kc.makeApiClient(k8s.AppsV1Api)
const core = kc.makeApiClient(k8s.CoreV1Api)
const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch)

const webApps = k8s.makeInformer<k8s.KubernetesObject>(
  kc,
  `/apis/${GROUP}/${VERSION}/${PLURAL}`,
  () => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL }) as any
)
const deployments = k8s.makeInformer(kc, "/apis/apps/v1/deployments", () => apps.listDeploymentForAllNamespaces())
const services = k8s.makeInformer(kc, "/api/v1/services", () => core.listServiceForAllNamespaces())

const reconcile = async (key: string): Promise<void> => {
  const [namespace, name] = key.split("/") as [string, string]
  const app = webApps.get(name, namespace) as WebAppJson | undefined
  if (app === undefined) return // deleted: the garbage collector removes its children
  const owner = ownerRef(app)
  const d = deployment(app)
  await objects.patch(
    { ...d, metadata: { ...d.metadata, ownerReferences: [owner] } },
    undefined,
    undefined,
    FIELD_MANAGER,
    true,
    k8s.PatchStrategy.ServerSideApply
  )
  const s = service(app)
  await objects.patch(
    { ...s, metadata: { ...s.metadata, ownerReferences: [owner] } },
    undefined,
    undefined,
    FIELD_MANAGER,
    true,
    k8s.PatchStrategy.ServerSideApply
  )
  const patch = statusPatch(app)
  if (patch !== undefined) {
    await custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: patch },
      mergePatch
    )
  }
}

const queue = makeQueue(CONCURRENCY, reconcile)
const enqueue = (object: k8s.KubernetesObject) => queue.add(keyOf(object.metadata!))
const enqueueOwner = (object: k8s.KubernetesObject) => {
  const key = ownerKey(object as any)
  if (key !== undefined) queue.add(key)
}

webApps.on("add", enqueue)
webApps.on("update", enqueue)
for (const informer of [deployments, services] as Array<k8s.Informer<k8s.KubernetesObject>>) {
  informer.on("add", enqueueOwner)
  informer.on("update", enqueueOwner)
  informer.on("delete", enqueueOwner)
}
// makeInformer stops on an error: client-node's informer example restarts it 5 s later; 1 s here
for (const informer of [webApps, deployments, services] as Array<k8s.Informer<k8s.KubernetesObject>>) {
  informer.on("error", () => setTimeout(() => void informer.start().catch(() => {}), 1_000))
}

serveDriver({ exitOnSigterm: true })
await Promise.all([webApps.start(), deployments.start(), services.start()])
