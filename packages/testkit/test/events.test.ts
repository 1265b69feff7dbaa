/**
 * Events: one storage behind core/v1 and events.k8s.io/v1 with upstream's field conversions, the strict validation
 * of events.k8s.io writes, and the field selectors of each kind — in-process (TestCluster) and over HTTPS
 * (client-node against TestApiServer, the same cluster).
 */
import { assert, layer } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import { Effect, Fiber, Stream } from "effect"
import type { ApiError } from "../src/ApiError.js"
import { TestApiServer, TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"

const NS = "ev"

const eventsV1 = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name, namespace: NS },
  eventTime: "2030-01-02T03:04:05.123456Z",
  reportingController: "example.com/webapp-controller",
  reportingInstance: "webapp-controller-0",
  action: "Reconcile",
  reason: "Ready",
  type: "Normal",
  note: "2/2 replicas ready",
  regarding: { apiVersion: "example.com/v1", kind: "WebApp", namespace: NS, name: "sample", uid: "uid-sample" },
  related: { apiVersion: "v1", kind: "Pod", namespace: NS, name: "sample-0" },
  ...extra
} as KubeObject)

const coreEvent = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: NS },
  involvedObject: { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "cfg", uid: "uid-cfg" },
  reason: "Updated",
  message: "data changed",
  source: { component: "kubelet", host: "node-1" },
  firstTimestamp: "2030-01-02T03:00:00Z",
  lastTimestamp: "2030-01-02T03:05:00Z",
  count: 3,
  type: "Warning",
  ...extra
} as KubeObject)

const core = { apiVersion: "v1", kind: "Event", namespace: NS }
const v1 = { apiVersion: "events.k8s.io/v1", kind: "Event", namespace: NS }
const names = (list: { readonly items: ReadonlyArray<KubeObject> }) => list.items.map((i) => i.metadata.name).sort()
const status = (e: ApiError) => ({ code: e.status.code, reason: e.status.reason, message: e.status.message })

const clientFor = (server: TestApiServer.TestApiServer.Service) => {
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(server.kubeconfigPath)
  return kc
}

layer(TestApiServer.layerWithCluster({ controllers: false }), { excludeTestServices: true })("events", (it) => {
  it.effect("setup: namespace", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      yield* cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } as KubeObject)
    }))

  it.effect("written through events.k8s.io/v1, read through core/v1 (and back) with upstream's renames", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(eventsV1("sample.1"))
      assert.strictEqual(created.apiVersion, "events.k8s.io/v1")
      assert.strictEqual((created as any).note, "2/2 replicas ready")
      const asCore = yield* cluster.get({ ...core, name: "sample.1" }) as Effect.Effect<any, ApiError>
      assert.strictEqual(asCore.apiVersion, "v1")
      assert.strictEqual(asCore.metadata.uid, created.metadata.uid)
      assert.strictEqual(asCore.metadata.resourceVersion, created.metadata.resourceVersion)
      assert.deepStrictEqual(asCore.involvedObject, (eventsV1("x") as any).regarding)
      assert.strictEqual(asCore.message, "2/2 replicas ready")
      assert.strictEqual(asCore.reportingComponent, "example.com/webapp-controller")
      assert.strictEqual(asCore.reportingInstance, "webapp-controller-0")
      assert.strictEqual(asCore.eventTime, "2030-01-02T03:04:05.123456Z")
      assert.deepStrictEqual(asCore.related, { apiVersion: "v1", kind: "Pod", namespace: NS, name: "sample-0" })
      for (const gone of ["note", "regarding", "reportingController", "deprecatedSource", "count"]) {
        assert.notProperty(asCore, gone)
      }
      // Go's encoding/json writes struct fields and strings without omitempty even when zero
      assert.deepStrictEqual([asCore.source, asCore.firstTimestamp, asCore.lastTimestamp], [{}, null, null])
      // writing back what was read changes nothing (no new resourceVersion)
      const same = yield* cluster.update(asCore)
      assert.strictEqual(same.metadata.resourceVersion, created.metadata.resourceVersion)

      yield* cluster.create(coreEvent("cfg.1"))
      const asV1 = yield* cluster.get({ ...v1, name: "cfg.1" }) as Effect.Effect<any, ApiError>
      assert.strictEqual(asV1.apiVersion, "events.k8s.io/v1")
      assert.deepStrictEqual(asV1.regarding, (coreEvent("x") as any).involvedObject)
      assert.strictEqual(asV1.note, "data changed")
      assert.deepStrictEqual(asV1.deprecatedSource, { component: "kubelet", host: "node-1" })
      assert.strictEqual(asV1.deprecatedFirstTimestamp, "2030-01-02T03:00:00Z")
      assert.strictEqual(asV1.deprecatedLastTimestamp, "2030-01-02T03:05:00Z")
      assert.strictEqual(asV1.deprecatedCount, 3)
      for (const gone of ["message", "involvedObject", "source", "count", "firstTimestamp", "reportingComponent"]) {
        assert.notProperty(asV1, gone)
      }
      assert.strictEqual(asV1.eventTime, null)
      const asCoreToo = (yield* cluster.get({ ...core, name: "cfg.1" })) as any
      assert.deepStrictEqual([asCoreToo.eventTime, asCoreToo.reportingComponent, asCoreToo.reportingInstance], [
        null,
        "",
        ""
      ])

      // one storage: each list holds both, in its own shape
      const coreList = yield* cluster.list(core)
      assert.strictEqual(coreList.apiVersion, "v1")
      assert.deepStrictEqual(names(coreList), ["cfg.1", "sample.1"])
      const v1List = yield* cluster.list(v1)
      assert.strictEqual(v1List.apiVersion, "events.k8s.io/v1")
      assert.strictEqual(v1List.kind, "EventList")
      assert.deepStrictEqual(names(v1List), ["cfg.1", "sample.1"])
      assert.isTrue(v1List.items.every((i: any) => i.apiVersion === "events.k8s.io/v1" && i.regarding !== undefined))
    }))

  it.effect("update, merge patch and apply through events.k8s.io/v1 (series) show in core/v1; delete through either", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const created = yield* cluster.create(eventsV1("series.1"))
      const series = { count: 2, lastObservedTime: "2030-01-02T03:10:00.000000Z" }
      const updated = yield* cluster.update({ ...created, series } as KubeObject)
      assert.deepStrictEqual((updated as any).series, series)
      assert.deepStrictEqual(((yield* cluster.get({ ...core, name: "series.1" })) as any).series, series)
      // the same reference with its keys in another order is no change (and no new resourceVersion)
      const regarding = Object.fromEntries(Object.entries((updated as any).regarding).reverse())
      const reordered = yield* cluster.update({ ...updated, regarding } as KubeObject)
      assert.strictEqual(reordered.metadata.resourceVersion, updated.metadata.resourceVersion)
      const patched = yield* cluster.patch({ ...v1, name: "series.1" }, {
        type: "merge",
        patch: { series: { count: 3 } }
      })
      assert.strictEqual((patched as any).series.count, 3)
      // the strict rules of events.k8s.io/v1 updates: what happened is immutable
      const immutable = yield* Effect.flip(cluster.patch({ ...v1, name: "series.1" }, {
        type: "merge",
        patch: { note: "rewritten" }
      }))
      assert.deepStrictEqual(status(immutable), {
        code: 422,
        reason: "Invalid",
        message: `Event.events.k8s.io "series.1" is invalid: message: Invalid value: "rewritten": field is immutable`
      })
      const applied = yield* cluster.apply(
        { ...eventsV1("applied.1"), series: undefined } as unknown as KubeObject,
        { fieldManager: "test" }
      )
      assert.strictEqual((applied as any).note, "2/2 replicas ready")
      assert.strictEqual(((yield* cluster.get({ ...core, name: "applied.1" })) as any).message, "2/2 replicas ready")
      const badApply = yield* Effect.flip(cluster.apply(
        { ...eventsV1("applied.2"), action: undefined } as unknown as KubeObject,
        { fieldManager: "test" }
      ))
      assert.strictEqual(badApply.status.message, `Event.events.k8s.io "applied.2" is invalid: action: Required value`)
      const deleted = yield* cluster.delete({ ...core, name: "applied.1" })
      assert.isTrue(deleted.deleted)
      const gone = yield* Effect.flip(cluster.get({ ...v1, name: "applied.1" }))
      assert.strictEqual(gone.status.code, 404)
      assert.strictEqual(gone.status.message, `events.events.k8s.io "applied.1" not found`)
      const deletedV1 = yield* cluster.delete({ ...v1, name: "series.1" })
      assert.strictEqual((deletedV1.object as any).regarding.kind, "WebApp")
    }))

  it.effect("validation: strict for events.k8s.io/v1 creates, legacy for core/v1", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const strict = yield* Effect.flip(cluster.create({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "bad.1", namespace: NS },
        regarding: { kind: "Pod", namespace: NS, name: "p" },
        type: "Info",
        deprecatedCount: 2
      } as KubeObject))
      assert.strictEqual(strict.status.code, 422)
      assert.strictEqual(
        strict.status.message,
        `Event.events.k8s.io "bad.1" is invalid: [eventTime: Required value, type: Invalid value: "": ` +
          `has invalid value: Info, count: Invalid value: "": needs to be unset]`
      )
      assert.deepStrictEqual(strict.status.details?.causes?.map((c) => c.field), ["eventTime", "type", "count"])
      const missing = yield* Effect.flip(cluster.create(eventsV1("bad.2", { reportingController: undefined })))
      assert.strictEqual(
        missing.status.message,
        `Event.events.k8s.io "bad.2" is invalid: reportingController: Required value`
      )
      // core/v1 keeps the legacy rules only: the involved object's namespace must be the event's
      const legacy = yield* Effect.flip(cluster.create(coreEvent("bad.3", {
        involvedObject: { kind: "ConfigMap", namespace: "other", name: "cfg" }
      })))
      assert.deepStrictEqual(status(legacy), {
        code: 422,
        reason: "Invalid",
        message:
          `Event "bad.3" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`
      })
    }))

  it.effect("event field selectors: core/v1 labels, and events.k8s.io/v1 labels converted to them", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const sel = (query: object, fieldSelector: string) =>
        Effect.map(cluster.list({ ...query, fieldSelector } as TestCluster.ListQuery), names)
      assert.deepStrictEqual(yield* sel(core, "involvedObject.kind=WebApp"), ["sample.1"])
      assert.deepStrictEqual(
        yield* sel(core, "involvedObject.name=sample,involvedObject.namespace=ev,involvedObject.uid=uid-sample"),
        ["sample.1"]
      )
      assert.deepStrictEqual(yield* sel(core, "involvedObject.apiVersion=v1"), ["cfg.1"])
      assert.deepStrictEqual(yield* sel(core, "reason=Updated"), ["cfg.1"])
      assert.deepStrictEqual(yield* sel(core, "type!=Normal"), ["cfg.1"])
      assert.deepStrictEqual(yield* sel(core, "source=kubelet"), ["cfg.1"])
      // `source` falls back to the reporting controller, as upstream's selectable fields do
      assert.deepStrictEqual(yield* sel(core, "source=example.com/webapp-controller"), ["sample.1"])
      assert.deepStrictEqual(yield* sel(core, "reportingComponent=example.com/webapp-controller"), ["sample.1"])
      assert.deepStrictEqual(yield* sel(core, "metadata.name==cfg.1"), ["cfg.1"])
      assert.deepStrictEqual(yield* sel(v1, "regarding.kind=WebApp,regarding.name=sample"), ["sample.1"])
      assert.deepStrictEqual(yield* sel(v1, "reportingController=example.com/webapp-controller"), ["sample.1"])
      assert.deepStrictEqual(yield* sel(v1, "type=Warning"), ["cfg.1"])
      const bad = (query: object, fieldSelector: string) =>
        Effect.map(Effect.flip(sel(query, fieldSelector)), (e) => [e.status.code, e.status.message])
      assert.deepStrictEqual(yield* bad(core, "regarding.kind=WebApp"), [
        400,
        "field label not supported: regarding.kind"
      ])
      assert.deepStrictEqual(yield* bad(v1, "involvedObject.kind=WebApp"), [
        400,
        "field label not supported: involvedObject.kind"
      ])
      assert.deepStrictEqual(yield* bad(v1, "note=x"), [400, "field label not supported: note"])
      assert.deepStrictEqual(yield* bad(core, "reason"), [400, "invalid selector: 'reason'; can't understand 'reason'"])
    }))

  it.effect("a watch through one group sees writes through the other, converted", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const rv = yield* cluster.resourceVersion
      const coreWatch = yield* Effect.forkChild(Stream.runCollect(
        cluster.watch({ ...core, resourceVersion: rv, fieldSelector: "involvedObject.kind=WebApp" }).pipe(
          Stream.take(2)
        )
      ))
      const v1Watch = yield* Effect.forkChild(Stream.runCollect(
        cluster.watch({ ...v1, resourceVersion: rv, fieldSelector: "regarding.kind=ConfigMap" }).pipe(Stream.take(1))
      ))
      yield* Effect.yieldNow
      yield* cluster.create(eventsV1("watched.1"))
      yield* cluster.create(coreEvent("watched.2"))
      yield* cluster.delete({ ...v1, name: "watched.1" })
      const seenCore = (yield* Fiber.join(coreWatch)).map((
        e
      ) => [e.type, e.object.apiVersion, (e.object as any).message])
      assert.deepStrictEqual(seenCore, [["ADDED", "v1", "2/2 replicas ready"], ["DELETED", "v1", "2/2 replicas ready"]])
      const seenV1 = (yield* Fiber.join(v1Watch)).map((e) => [e.type, e.object.apiVersion, (e.object as any).note])
      assert.deepStrictEqual(seenV1, [["ADDED", "events.k8s.io/v1", "data changed"]])
    }))

  it.effect("field selectors of other kinds: pods, secrets, namespaces, services, custom resources; errors as upstream", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.TestCluster
      const pod = (name: string, spec: object, phase: string) =>
        Effect.gen(function*() {
          const created = yield* cluster.create({
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name, namespace: NS },
            spec: { containers: [{ name: "c", image: "nginx:1.27" }], ...spec }
          } as KubeObject)
          yield* cluster.updateStatus({
            ...created,
            status: { phase, podIP: "10.0.0.9", podIPs: [{ ip: "10.0.0.9" }] }
          })
        })
      yield* pod("run", { nodeName: "node-a", hostNetwork: true }, "Running")
      yield* pod("wait", { restartPolicy: "Never", serviceAccountName: "robot" }, "Pending")
      const sel = (kind: string, apiVersion: string, fieldSelector: string, namespace: string | undefined = NS) =>
        Effect.map(cluster.list({ apiVersion, kind, namespace, fieldSelector }), names)
      assert.deepStrictEqual(yield* sel("Pod", "v1", "status.phase=Running"), ["run"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "status.phase!=Running"), ["wait"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "spec.nodeName=node-a"), ["run"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "spec.host=node-a"), ["run"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "spec.nodeName="), ["wait"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "spec.hostNetwork=false"), ["wait"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "spec.restartPolicy=Never,spec.serviceAccountName=robot"), [
        "wait"
      ])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "status.podIP=10.0.0.9"), ["run", "wait"])
      assert.deepStrictEqual(yield* sel("Pod", "v1", "spec.schedulerName=other-scheduler"), [])
      yield* cluster.create({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: NS },
        spec: { type: "NodePort", ports: [{ port: 80 }] }
      } as KubeObject)
      assert.deepStrictEqual(yield* sel("Service", "v1", "spec.type=NodePort"), ["web"])
      assert.deepStrictEqual(yield* sel("Service", "v1", "spec.clusterIP=None"), [])
      yield* cluster.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "tls", namespace: NS },
        type: "kubernetes.io/tls",
        data: { "tls.crt": "", "tls.key": "" }
      } as KubeObject)
      yield* cluster.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "plain", namespace: NS } } as any)
      assert.deepStrictEqual(yield* sel("Secret", "v1", "type=Opaque"), ["plain"])
      assert.deepStrictEqual(yield* sel("Namespace", "v1", "status.phase=Active,metadata.name=ev", undefined), ["ev"])
      const bad = (kind: string, apiVersion: string, fieldSelector: string) =>
        Effect.map(Effect.flip(sel(kind, apiVersion, fieldSelector)), (e) => [e.status.code, e.status.message])
      assert.deepStrictEqual(yield* bad("Pod", "v1", "spec.containers=x"), [
        400,
        "field label not supported: spec.containers"
      ])
      assert.deepStrictEqual(yield* bad("Namespace", "v1", "metadata.namespace=x"), [
        400,
        "field label not supported: metadata.namespace"
      ])
      assert.deepStrictEqual(yield* bad("ConfigMap", "v1", "data.a=1"), [
        400,
        `"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"`
      ])
      assert.deepStrictEqual(yield* bad("Deployment", "apps/v1", "spec.replicas=1"), [
        400,
        `"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`
      ])
      assert.deepStrictEqual(yield* bad("Secret", "v1", "type=a\\b"), [400, "invalid escape sequence: \\b"])
      // selectable in the registry, but apps/v1 has no field label conversion for it (kubernetes/kubernetes#135136)
      assert.deepStrictEqual(yield* bad("ReplicaSet", "apps/v1", "status.replicas=0"), [
        400,
        `"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`
      ])
      // custom resources: metadata.* and the CRD version's selectableFields (GA in 1.32), else the CR converter's text
      yield* cluster.create({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "shirts.example.com" },
        spec: {
          group: "example.com",
          scope: "Namespaced",
          names: { plural: "shirts", singular: "shirt", kind: "Shirt" },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            selectableFields: [{ jsonPath: ".spec.color" }, { jsonPath: ".spec.size" }],
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: { type: "object", properties: { color: { type: "string" }, size: { type: "integer" } } }
                }
              }
            }
          }]
        }
      } as KubeObject)
      for (const [name, color, size] of [["s1", "blue", 1], ["s2", "red", 2], ["s3", "blue", 3]] as const) {
        yield* cluster.create({
          apiVersion: "example.com/v1",
          kind: "Shirt",
          metadata: { name, namespace: NS },
          spec: { color, size }
        } as KubeObject)
      }
      assert.deepStrictEqual(yield* sel("Shirt", "example.com/v1", "spec.color=blue"), ["s1", "s3"])
      assert.deepStrictEqual(yield* sel("Shirt", "example.com/v1", "spec.color=blue,spec.size!=1"), ["s3"])
      assert.deepStrictEqual(yield* bad("Shirt", "example.com/v1", "spec.fit=slim"), [
        400,
        "field label not supported: spec.fit"
      ])
      // escaped commas and equals signs in values
      yield* cluster.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace: NS } } as any)
      assert.deepStrictEqual(yield* sel("ConfigMap", "v1", "metadata.name=a\\,b"), [])
    }))

  it.effect("over HTTPS: client-node CoreV1Api and EventsV1Api share the storage; selectors; a watch", () =>
    Effect.gen(function*() {
      const server = yield* TestApiServer.TestApiServer
      const kc = clientFor(server)
      const coreApi = kc.makeApiClient(k8s.CoreV1Api)
      const eventsApi = kc.makeApiClient(k8s.EventsV1Api)
      yield* Effect.promise(async () => {
        const seen: Array<string> = []
        let done!: () => void
        const finished = new Promise<void>((resolve) => (done = resolve))
        const watch = await new k8s.Watch(kc).watch(
          `/api/v1/namespaces/${NS}/events`,
          { fieldSelector: "involvedObject.name=http-app", allowWatchBookmarks: false },
          (type: string, obj: any) => {
            seen.push(`${type} ${obj.apiVersion} ${obj.message}`)
            if (seen.length === 1) done()
          },
          () => done()
        )
        const created = await eventsApi.createNamespacedEvent({
          namespace: NS,
          body: {
            ...(eventsV1("http.1") as any),
            regarding: { apiVersion: "apps/v1", kind: "Deployment", namespace: NS, name: "http-app" },
            eventTime: new Date("2030-01-02T03:04:05Z")
          }
        })
        assert.strictEqual(created.note, "2/2 replicas ready")
        await finished
        watch.abort()
        assert.deepStrictEqual(seen, ["ADDED v1 2/2 replicas ready"])
        const listed = await coreApi.listNamespacedEvent({
          namespace: NS,
          fieldSelector: "involvedObject.kind=Deployment,involvedObject.name=http-app"
        })
        assert.deepStrictEqual(listed.items.map((e) => [e.metadata.name, e.message, e.reportingComponent]), [[
          "http.1",
          "2/2 replicas ready",
          "example.com/webapp-controller"
        ]])
        const v1Listed = await eventsApi.listNamespacedEvent({
          namespace: NS,
          fieldSelector: "regarding.name=http-app"
        })
        assert.deepStrictEqual(v1Listed.items.map((e) => e.metadata?.uid), [created.metadata?.uid])
        const error = await coreApi.listNamespacedEvent({ namespace: NS, fieldSelector: "note=x" }).then(
          () => undefined,
          (e: any) => e
        )
        assert.strictEqual(error.code, 400)
        assert.strictEqual(JSON.parse(error.body).message, "field label not supported: note")
        // a core/v1 body sent to events.k8s.io/v1 is refused as for any kind
        const wrong = await eventsApi.createNamespacedEvent({
          namespace: NS,
          body: { ...(coreEvent("http.2") as any), eventTime: new Date() }
        }).then(() => undefined, (e: any) => e)
        assert.strictEqual(wrong.code, 400)
        assert.strictEqual(
          JSON.parse(wrong.body).message,
          "the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)"
        )
      })
    }))
})
