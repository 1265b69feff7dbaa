/**
 * The main job with `--sharding`: two replicas (two `Main.program`s in this process, as two Pods of the sharded
 * Deployment would run) against one cluster — the embedded API server, or with `RECONCILE_TEST_CLUSTER=real` a real
 * control plane (Envtest) — join the ring named after the operator and split the objects: a change of each object is
 * reconciled by one replica only, both replicas have some, and, where the objects carry assignment labels, by the
 * shard its label names. The ring's timings are `Sharding.layer`'s defaults (the main job has no flags for
 * them); nothing here waits for a Lease to expire, and every wait polls the cluster or the logs with a bound.
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient, Resource, Sharding } from "@reconcile/kube"
import { Envtest, TestApiServer } from "@reconcile/testkit"
import { Console, Context, Effect, Fiber, Layer } from "effect"
import { TestConsole } from "effect/testing"
import { Main } from "../src/index.js"
import { Greeting, operator } from "./fixtures/greeting.js"

const onRealCluster = process.env.RECONCILE_TEST_CLUSTER === "real"

/** The cluster both replicas reach through its kubeconfig file. */
class Cluster extends Context.Service<Cluster, { readonly kubeconfigPath: string }>()("test/Cluster") {}

const ClusterLive: Layer.Layer<Cluster, unknown> = onRealCluster
  ? Layer.effect(Cluster, Effect.map(Envtest.Envtest, (plane) => ({ kubeconfigPath: plane.kubeconfigPath }))).pipe(
    Layer.provide(Envtest.layer({ controllers: false }))
  )
  : Layer.effect(Cluster, Effect.map(TestApiServer.TestApiServer, (s) => ({ kubeconfigPath: s.kubeconfigPath }))).pipe(
    Layer.provide(TestApiServer.layerWithCluster({ controllers: false }))
  )

const ring = operator.name
const objects = Array.from({ length: 16 }, (_, i) => `hello-${i}`)

/** A record of a replica's JSON log. */
interface Line {
  readonly msg: string
  readonly replica?: string
  readonly controller?: string
  readonly name?: string
  readonly reconcileID?: string
}

/** One replica: the main job with `--sharding` in the background, its JSON log lines. */
const replica = (kubeconfig: string) =>
  Effect.gen(function*() {
    const console = yield* TestConsole.make
    const fiber = yield* Main.program(operator, {
      argv: [
        "--kubeconfig",
        kubeconfig,
        "--sharding",
        "--install-crds",
        "--log-format",
        "json",
        "--log-level",
        "debug"
      ],
      env: {}
    }).pipe(Effect.provideService(Console.Console, console), Effect.forkScoped)
    const lines = Effect.map(console.logLines, (all) =>
      all.flatMap((line): ReadonlyArray<Line> => {
        try {
          return [JSON.parse(String(line)) as Line]
        } catch {
          return []
        }
      }))
    const errors = Effect.map(console.errorLines, (all) => all.map(String))
    return { fiber, lines, errors }
  })

type Replica = Effect.Success<ReturnType<typeof replica>>

/**
 * Polls (real time) until `check` holds, at most `seconds`; fails at once when a replica has stopped. A failure
 * says what each replica printed last.
 */
const poller = (replicas: ReadonlyArray<Replica>) => {
  const lastWords = Effect.map(
    Effect.forEach(
      replicas,
      (r, i) =>
        Effect.zipWith(r.errors, r.lines, (errors, lines) =>
          [
            `replica ${i}:`,
            ...errors,
            ...lines.slice(-5).map((l) => JSON.stringify(l))
          ].join("\n"))
    ),
    (texts) => texts.join("\n")
  )
  return <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = 20) =>
    Effect.gen(function*() {
      const deadline = Date.now() + seconds * 1000
      while (Date.now() < deadline) {
        if (replicas.some((r) => r.fiber.pollUnsafe() !== undefined)) {
          return yield* Effect.die(new Error(`a replica stopped, waiting for: ${what}\n${yield* lastWords}`))
        }
        if (yield* check) return
        yield* Effect.sleep("100 millis")
      }
      return yield* Effect.die(new Error(`timed out after ${seconds} s: ${what}\n${yield* lastWords}`))
    })
}

const isReady = (g: Greeting) => g.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true

/**
 * Each object: its shard (its assignment label) when it is assigned and not being drained, whether it has either
 * label (the sharder labels the objects it assigns), and whether it is Ready.
 */
const assignments = Effect.map(
  KubeClient.list(Greeting, { namespace: "default" }),
  (list) =>
    new Map(list.items.map((g) => {
      const labels = g.metadata?.labels ?? {}
      const drained = labels[Sharding.drainLabel(ring)] !== undefined
      const shard = drained ? undefined : labels[Sharding.shardLabel(ring)]
      return [g.metadata!.name!, { shard, labelled: drained || shard !== undefined, ready: isReady(g) }] as const
    }))
)

describe("Main.program --sharding", () => {
  it.live(
    `two replicas on one cluster (${onRealCluster ? "a real control plane" : "the embedded API server"}) split the ` +
      "objects: a change of each is reconciled by one of them, the shard its label names",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { kubeconfigPath } = yield* Cluster
        const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(kubeconfigPath))
        const replicas = [yield* replica(kubeconfigPath), yield* replica(kubeconfigPath)]
        const eventually = poller(replicas)

        // each joins the ring: its identity is on its reconcile lines, its shard Lease holds it
        const identities: Array<string> = []
        for (const r of replicas) {
          yield* eventually(
            "the replica joins the ring",
            Effect.map(r.lines, (lines) => lines.some((l) => l.msg === "joining the ring" && l.replica !== undefined))
          )
          identities.push((yield* r.lines).find((l) => l.msg === "joining the ring")!.replica!)
        }
        assert.notStrictEqual(identities[0], identities[1])

        yield* Effect.gen(function*() {
          yield* eventually(
            "both shard Leases are held, in the Leases' namespace (default), labelled with the ring",
            Effect.map(
              KubeClient.list(Resource.Lease, {
                namespace: "default",
                labelSelector: `lease.shard.reconcile.dev/ring=${ring}`
              }),
              (leases) =>
                identities.every((id) =>
                  leases.items.some((l) => l.metadata?.name === `${ring}-${id}` && l.spec?.holderIdentity !== undefined)
                )
            ).pipe(Effect.catch(() => Effect.succeed(false)))
          )
          yield* eventually(
            "the CRD is served",
            Effect.as(KubeClient.list(Greeting, { namespace: "default" }), true).pipe(
              Effect.catch(() => Effect.succeed(false))
            )
          )
          for (const name of objects) {
            yield* KubeClient.create(Greeting, {
              apiVersion: Greeting.apiVersion,
              kind: Greeting.kind,
              metadata: { name, namespace: "default" },
              spec: { message: "hi" }
            }, { namespace: "default" })
          }
          // every one reconciled, and the work split (16 objects on a ring of two: one shard alone has a 2^-15
          // chance): assigned to both shards with no move in flight, or, without labels, both replicas reconciling
          const active = Effect.map(
            Effect.forEach(replicas, (r) => r.lines),
            (perReplica) => perReplica.every((lines) => lines.some((l) => l.msg === "Reconcile successful"))
          )
          yield* eventually(
            "every object is Ready, and both shards have some",
            Effect.zipWith(assignments, active, (current, both) =>
              objects.every((name) =>
                current.get(name)?.ready === true
              ) &&
              ([...current.values()].some((a) => a.labelled)
                ? objects.every((name) => current.get(name)?.shard !== undefined) &&
                  identities.every((id) => [...current.values()].some((a) => a.shard === id))
                : both))
          )
          const assigned = yield* assignments
          const labelled = [...assigned.values()].some((a) =>
            a.labelled
          )

          // every object changed once more: each change is reconciled by one replica, the shard its label names
          const marks = yield* Effect.forEach(replicas, (r) => Effect.map(r.lines, (lines) => lines.length))
          for (const name of objects) {
            yield* KubeClient.patch(Greeting, name, { spec: { message: "again" } }, {
              type: "merge",
              namespace: "default"
            })
          }
          const reconcilesSince = Effect.map(
            Effect.forEach(replicas, (r, i) => Effect.map(r.lines, (lines) => lines.slice(marks[i]))),
            (perReplica) =>
              perReplica.map((lines) =>
                lines.filter((l) => l.controller === "greeting" && l.reconcileID !== undefined && l.name !== undefined)
              )
          )
          yield* eventually(
            "every object reconciled after its change",
            Effect.map(reconcilesSince, (perReplica) =>
              objects.every((name) =>
                perReplica.some((lines) =>
                  lines.some((l) => l.msg === "Reconcile successful" && l.name === name)
                )
              ))
          )
          const perReplica = yield* reconcilesSince
          const reconcilers = new Map<string, Set<string>>()
          for (const [i, lines] of perReplica.entries()) {
            const identity = identities[i]!
            assert.isAbove(lines.length, 0, `${identity} reconciled some objects`)
            for (const line of lines) {
              assert.strictEqual(line.replica, identity, `a reconcile line of ${identity}: ${JSON.stringify(line)}`)
              reconcilers.set(line.name!, new Set([...(reconcilers.get(line.name!) ?? []), identity]))
              if (labelled) {
                assert.strictEqual(
                  assigned.get(line.name!)?.shard,
                  identity,
                  `${line.name} (assigned to ${assigned.get(line.name!)?.shard}) reconciled by ${identity}`
                )
              }
            }
          }
          for (const name of objects) {
            assert.strictEqual(reconcilers.get(name)?.size, 1, `${name} reconciled by ${[...reconcilers.get(name)!]}`)
          }
          // nothing moved meanwhile
          assert.deepStrictEqual(yield* assignments, assigned)
        }).pipe(Effect.provide(client))

        for (const r of replicas) {
          assert.deepStrictEqual(yield* r.errors, [])
          yield* Fiber.interrupt(r.fiber)
        }
      })).pipe(Effect.provide(ClusterLive)),
    { timeout: onRealCluster ? 90_000 : 45_000 }
  )
})
