/**
 * The invariants: a converged state passes; each planted violation is found and named by its rule.
 */
import { describe, expect, it } from "vitest"
import type { Cleanup, Input, Snapshot } from "../Invariants.js"
import * as Invariants from "../Invariants.js"
import type { Spec } from "../Load.js"
import type { Seen } from "../Observer.js"

const finalizer = "apps.reconcile.dev/registry"
const labels = (name: string) => ({
  "app.kubernetes.io/name": name,
  "app.kubernetes.io/managed-by": "webapp-controller"
})

const webapp = (name: string, uid: string, spec: Spec, generation = 2) => ({
  apiVersion: "apps.reconcile.dev/v1",
  kind: "WebApp",
  metadata: { name, namespace: "default", uid, generation, finalizers: [finalizer] },
  spec,
  status: {
    observedGeneration: generation,
    readyReplicas: spec.replicas,
    conditions: [{
      type: "Ready",
      status: "True",
      observedGeneration: generation,
      reason: "DeploymentAvailable",
      message: "",
      lastTransitionTime: "2026-01-01T00:00:00Z"
    }]
  }
})

const owner = (name: string, uid: string) => [{
  apiVersion: "apps.reconcile.dev/v1",
  kind: "WebApp",
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true
}]

const deployment = (name: string, uid: string, spec: Spec) => ({
  metadata: { name, namespace: "default", labels: labels(name), ownerReferences: owner(name, uid) },
  spec: {
    replicas: spec.replicas,
    template: { spec: { containers: [{ name: "app", image: spec.image, ports: [{ containerPort: spec.port }] }] } }
  }
})

const service = (name: string, uid: string, spec: Spec) => ({
  metadata: { name, namespace: "default", labels: labels(name), ownerReferences: owner(name, uid) },
  spec: { ports: [{ port: spec.port }] }
})

const specA: Spec = { image: "registry.example/chaos/a:w1", replicas: 2, port: 8080 }
const specB: Spec = { image: "registry.example/chaos/b:w2", replicas: 1, port: 8081 }

const healthy = (): Snapshot => ({
  webapps: [webapp("a", "uid-a", specA), webapp("b", "uid-b", specB)],
  deployments: [deployment("a", "uid-a", specA), deployment("b", "uid-b", specB)],
  services: [
    service("a", "uid-a", specA),
    service("b", "uid-b", specB),
    { metadata: { name: "kubernetes", namespace: "default" }, spec: { ports: [{ port: 443 }] } }
  ],
  registry: { a: specA.image, b: specB.image }
})

const gone: Seen = { uid: "uid-c", name: "c", hadFinalizer: true, deletingAt: 1000, goneAt: 2000 }

const input = (patch: Partial<Input> = {}): Input => ({
  snapshot: healthy(),
  wanted: new Map([["a", specA], ["b", specB]]),
  seen: new Map([["uid-c", gone]]),
  cleanups: [{ uid: "uid-c", name: "c", at: 1500, replica: "operator-0.1" }],
  finalizer,
  ...patch
})

const rules = (i: Input) => Invariants.check(i).map((v) => v.rule)

/** The snapshot with `f` applied to a deep copy. */
const edit = (f: (s: any) => void): Snapshot => {
  const s = structuredClone(healthy()) as any
  f(s)
  return s
}

describe("Invariants.check", () => {
  it("passes a converged state", () => {
    expect(Invariants.check(input())).toEqual([])
  })

  it("finds a WebApp that is not Ready, or Ready at an older generation", () => {
    expect(rules(input({ snapshot: edit((s) => (s.webapps[0].status.conditions[0].status = "False")) }))).toEqual([
      "not-ready"
    ])
    expect(rules(input({ snapshot: edit((s) => (s.webapps[0].metadata.generation = 3)) }))).toEqual([
      "stale-generation"
    ])
    expect(rules(input({ snapshot: edit((s) => (s.webapps[0].status.readyReplicas = 1)) }))).toEqual(["not-ready"])
  })

  it("finds a live WebApp without its finalizer", () => {
    expect(rules(input({ snapshot: edit((s) => (s.webapps[0].metadata.finalizers = [])) }))).toEqual([
      "missing-finalizer"
    ])
  })

  it("finds missing, drifted and wrongly owned children", () => {
    expect(rules(input({ snapshot: edit((s) => s.deployments.shift()) }))).toEqual(["missing-child"])
    expect(rules(input({ snapshot: edit((s) => (s.deployments[0].spec.replicas = 5)) }))).toEqual(["child-drift"])
    expect(rules(input({ snapshot: edit((s) => (s.services[0].spec.ports[0].port = 1)) }))).toEqual(["child-drift"])
    // the Deployment of a previous incarnation of `a`: wrong owner, and an orphan
    expect(rules(input({ snapshot: edit((s) => (s.deployments[0].metadata.ownerReferences[0].uid = "old")) })))
      .toEqual(["wrong-owner", "orphan"])
  })

  it("finds orphans: owned by a vanished WebApp, or managed without an owner", () => {
    const orphan = deployment("c", "uid-c", specA)
    expect(rules(input({ snapshot: edit((s) => s.deployments.push(orphan)) }))).toEqual(["orphan"])
    const ownerless = { ...service("d", "x", specA), metadata: { name: "d", labels: labels("d") } }
    expect(rules(input({ snapshot: edit((s) => s.services.push(ownerless)) }))).toEqual(["orphan"])
  })

  it("finds a registry entry that is missing, stale, or of a deleted WebApp", () => {
    expect(rules(input({ snapshot: edit((s) => delete s.registry.a) }))).toEqual(["registry-missing"])
    expect(rules(input({ snapshot: edit((s) => (s.registry.a = "old")) }))).toEqual(["registry-stale"])
    expect(rules(input({ snapshot: edit((s) => (s.registry.c = "x")) }))).toEqual(["registry-of-deleted"])
    expect(rules(input({ snapshot: edit((s) => (s.registry = undefined)) }))).toEqual([
      "registry-missing",
      "registry-missing"
    ])
  })

  it("finds objects stuck Terminating", () => {
    const stuck = edit((s) => {
      s.webapps.push({
        ...webapp("c", "uid-c2", specA),
        metadata: { name: "c", uid: "uid-c2", deletionTimestamp: "t" }
      })
    })
    expect(rules(input({ snapshot: stuck }))).toEqual(["stuck-terminating"])
    // its children and registry entry wait for it: reported once, as stuck
    const stuckWithChildren = edit((s) => {
      s.webapps[0].metadata.deletionTimestamp = "t"
    })
    const found = Invariants.check(input({ snapshot: stuckWithChildren, wanted: undefined }))
    expect(found.map((v) => v.rule)).toEqual(["stuck-terminating"])
    expect(found[0]!.detail).toMatch(/registry entry still there/)
  })

  it("compares the live WebApps with the harness's intended state", () => {
    expect(rules(input({ wanted: new Map([["a", specA]]) }))).toEqual(["intent"])
    expect(rules(input({ wanted: new Map([["a", specA], ["b", specA]]) }))).toEqual(["intent"])
    expect(rules(input({ wanted: new Map([["a", specA], ["b", specB], ["z", specA]]) }))).toEqual(["intent"])
    expect(rules(input({ wanted: undefined }))).toEqual([])
    // an app whose state no write explains is reported once, by the settling, not again here
    expect(rules(input({ wanted: new Map([["a", specA]]), unresolved: new Set(["b"]) }))).toEqual([])
  })

  it("finds a missing cleanup, a cleanup after the release, and a cleanup of a live WebApp", () => {
    expect(rules(input({ cleanups: [] }))).toEqual(["cleanup-missing"])
    const late: Cleanup = { uid: "uid-c", name: "c", at: 2500, replica: "operator-1.1" }
    expect(rules(input({ cleanups: [late] }))).toEqual(["cleanup-after-release"])
    const ofLive: Cleanup = { uid: "uid-a", name: "a", at: 100, replica: "operator-1.1" }
    expect(rules(input({ cleanups: [...input().cleanups!, ofLive] }))).toEqual(["cleanup-of-live"])
    // an object deleted before the finalizer was added needs no cleanup
    expect(rules(input({ cleanups: [], seen: new Map([["uid-c", { ...gone, hadFinalizer: false }]]) }))).toEqual([])
    // cleanups unobserved (the main job): not checked
    expect(rules(input({ cleanups: undefined }))).toEqual([])
  })

  it("allows (and counts) a cleanup repeated before the release", () => {
    const twice: ReadonlyArray<Cleanup> = [
      { uid: "uid-c", name: "c", at: 1200, replica: "operator-0.1" },
      { uid: "uid-c", name: "c", at: 1900, replica: "operator-1.1" }
    ]
    expect(rules(input({ cleanups: twice }))).toEqual([])
    expect(Invariants.cleanupFigures(new Map([["uid-c", gone]]), twice)).toEqual({
      deletedWithFinalizer: 1,
      cleanups: 2,
      repeatedBeforeRelease: 1
    })
  })

  it("under sharding, finds a WebApp without a live shard, still draining, or with children labelled otherwise", () => {
    const label = "shard.reconcile.dev/webapp"
    const drain = "drain.shard.reconcile.dev/webapp"
    const shards = { label, drainLabel: drain, live: new Set(["replica-0-1", "replica-1-2"]) }
    const assigned = (f: (s: any) => void = () => undefined) =>
      edit((s) => {
        for (const list of [s.webapps, s.deployments, s.services]) {
          for (const o of list) {
            if (o.metadata.name === "kubernetes") continue
            o.metadata.labels = {
              ...o.metadata.labels,
              [label]: o.metadata.name === "a" ? "replica-0-1" : "replica-1-2"
            }
          }
        }
        f(s)
      })
    expect(rules(input({ snapshot: assigned(), shards }))).toEqual([])
    expect(rules(input({ snapshot: healthy(), shards }))).toEqual(["shard-unassigned", "shard-unassigned"])
    expect(rules(input({ snapshot: assigned((s) => (s.webapps[0].metadata.labels[label] = "replica-2-1")), shards })))
      .toEqual(["shard-not-live", "shard-child", "shard-child"])
    expect(rules(input({ snapshot: assigned((s) => (s.webapps[1].metadata.labels[drain] = "true")), shards })))
      .toEqual(["shard-draining"])
    expect(rules(input({ snapshot: assigned((s) => delete s.services[1].metadata.labels[label]), shards })))
      .toEqual(["shard-child"])
  })
})
