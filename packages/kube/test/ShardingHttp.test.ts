/**
 * Sharding over HTTP in real time, on both clusters (the embedded TestApiServer, and the real kube-apiserver under
 * `npm run test:envtest`): three shards of one ring in this process, each with its own client, Cache, Manager and
 * controller, with short Lease timings (leaseDuration 2 s, renewDeadline 1 s, retryPeriod 200 ms). Reconciles take
 * 50 ms and record themselves in one table, so a reconcile of one object starting while another shard's is in flight
 * is caught when it happens. Waits are bounded polls.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Manager from "@reconcile/core/Manager"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as Cache from "../src/Cache.js"
import * as buckets from "../src/internal/shardBuckets.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import * as Sharding from "../src/Sharding.js"
import { check, eventually, freshNamespace, kubeLayer, makeEnv } from "./support/env.js"

// the server selects shards where asked (`shardSelector`): the rings below shard by labels, and by the server
const env = makeEnv({ shardedListAndWatch: true })
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const RING = "http-apps"
const timing = { leaseDuration: "2 seconds", renewDeadline: "1 second", retryPeriod: "200 millis" } as const
const LEASE = 2_000

const dead = new KubeError.Transport({ reason: "Request", cause: new Error("the replica crashed") })

interface Ledger {
  readonly active: Map<string, string>
  readonly overlaps: Array<string>
  /** object → [shard, data.v] of its last completed reconcile. */
  readonly last: Map<string, readonly [string, string]>
  /** object → [shard, at] of its last reconcile's start. */
  readonly started: Map<string, readonly [string, number]>
}

const controllerOf = (identity: string, ledger: Ledger) =>
  KubeController.make({
    name: "apps",
    for: Resource.ConfigMap,
    owns: [Resource.Secret],
    options: { maxConcurrentReconciles: 4 },
    reconcile: (object) =>
      Effect.gen(function*() {
        const name = object.metadata!.name!
        const other = ledger.active.get(name)
        if (other !== undefined) ledger.overlaps.push(`${name}: ${identity} started while ${other} reconciles it`)
        ledger.active.set(name, identity)
        ledger.started.set(name, [identity, Date.now()])
        yield* Effect.sleep("50 millis").pipe(Effect.ensuring(Effect.sync(() => {
          if (ledger.active.get(name) === identity) ledger.active.delete(name)
        })))
        ledger.last.set(name, [identity, "data" in object ? object.data?.v ?? "" : ""])
      })
  })

interface Replica {
  readonly identity: string
  readonly cache: Cache.Cache.Service
  readonly stop: (how: "crash" | "leave") => Effect.Effect<void>
}

type Mode = "labels" | "server"

const makeWorld = (namespace: string, mode: Mode) =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    const parent = yield* Effect.scope
    const ledger: Ledger = { active: new Map(), overlaps: [], last: new Map(), started: new Map() }
    const start = (identity: string) =>
      Effect.gen(function*() {
        let crashed = false
        const guard = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | KubeError.Transport, R> =>
          Effect.suspend((): Effect.Effect<A, E | KubeError.Transport, R> => crashed ? Effect.fail(dead) : effect)
        const guarded: KubeClient.KubeClient.Service = {
          ...client,
          get: (r, n, o) => guard(client.get(r, n, o)),
          create: (r, o, x) => guard(client.create(r, o, x)),
          replace: (r, o, x) => guard(client.replace(r, o, x)),
          patch: (r, n, p, o) => guard(client.patch(r, n, p, o)),
          delete: (r, n, o) => guard(client.delete(r, n, o))
        }
        const controller = controllerOf(identity, ledger)
        const scope = yield* Scope.fork(parent, "sequential")
        const context = yield* KubeController.layer(controller).pipe(
          Layer.provideMerge(Manager.layer()),
          Layer.provideMerge(Cache.layer({ namespace })),
          Layer.provideMerge(Sharding.layer({
            ring: RING,
            identity,
            namespace,
            objectNamespace: namespace,
            controllers: [controller],
            // labels: forced; server: chosen because the server answers a shardSelector
            mode: mode === "labels" ? "labels" : "auto",
            ...timing
          })),
          Layer.provide(Layer.succeed(KubeClient.KubeClient, guarded)),
          Layer.build,
          Scope.provide(scope),
          Effect.orDie
        )
        assert.strictEqual(Context.get(context, Sharding.Sharding).mode, mode)
        const replica: Replica = {
          identity,
          cache: Context.get(context, Cache.Cache),
          stop: (how) =>
            Effect.suspend(() => {
              // a crash writes nothing more, not even the Lease's release
              if (how === "crash") crashed = true
              return Scope.close(scope, Exit.void)
            })
        }
        return replica
      })
    /** Each ConfigMap's shard (its label, or its bucket's in the sharder's table), and whether one is moving. */
    const assignment = Effect.gen(function*() {
      const list = yield* client.list(Resource.ConfigMap, { namespace })
      if (mode === "labels") {
        return {
          list,
          shards: new Map(
            list.items.map((cm) => [cm.metadata!.name!, cm.metadata?.labels?.[Sharding.shardLabel(RING)]])
          ),
          moving: list.items.some((cm) => cm.metadata?.labels?.[Sharding.drainLabel(RING)] !== undefined)
        }
      }
      const lease = yield* KubeError.ignoreNotFound(client.get(Resource.Lease, `${RING}-sharder`, { namespace }))
      const table = lease._tag === "None"
        ? undefined
        : buckets.decodeTable(lease.value.metadata?.annotations?.[buckets.tableAnnotation])
      return {
        list,
        shards: new Map(
          list.items.map((cm) => [cm.metadata!.name!, table?.shards[buckets.bucketOf(cm.metadata!.uid!)]])
        ),
        moving: table === undefined || table.draining.size > 0
      }
    })
    const labels = Effect.map(assignment, (a) => a.shards)
    /** Every ConfigMap reconciled at its current value by the shard it is assigned to, nothing moving. */
    const converged = (live: ReadonlyArray<string>) =>
      Effect.flatMap(assignment, ({ list, moving, shards }) =>
        check(() => {
          assert.isFalse(moving, "nothing is moving")
          for (const cm of list.items) {
            const shard = shards.get(cm.metadata!.name!)
            const last = ledger.last.get(cm.metadata!.name!)
            assert(shard !== undefined && live.includes(shard), `${cm.metadata!.name} on a live shard (${shard})`)
            assert.deepStrictEqual(last, [shard, cm.data?.v ?? ""], `${cm.metadata!.name} reconciled by its shard`)
          }
        }))
    const edit = (name: string, v: string) =>
      client.patch(Resource.ConfigMap, name, { data: { v } }, { type: "merge", namespace })
    return { client, ledger, start, labels, converged, edit }
  })

for (const mode of ["labels", "server"] as const) {
  describe(`Sharding by ${mode} over HTTP (real time, both clusters)`, () => {
    it.live(
      "three shards split the objects, children follow; a new shard drains in; a crashed one's objects move",
      () =>
        Effect.gen(function*() {
          const namespace = yield* freshNamespace("sharding")
          const world = yield* makeWorld(namespace, mode)
          const a = yield* world.start("shard-a")
          const b = yield* world.start("shard-b")
          for (let i = 0; i < 30; i++) {
            const cm = yield* world.client.create(Resource.ConfigMap, {
              metadata: { name: `app-${i}`, namespace },
              data: { v: "1" }
            })
            yield* world.client.create(Resource.Secret, {
              metadata: {
                name: `app-${i}`,
                namespace,
                ownerReferences: [{
                  apiVersion: "v1",
                  kind: "ConfigMap",
                  name: `app-${i}`,
                  uid: cm.metadata!.uid!,
                  controller: true
                }]
              }
            })
          }
          yield* eventually(world.converged(["shard-a", "shard-b"]), 20_000)

          // a third shard joins while every object is being edited: objects drain from a and b into c
          const c = yield* world.start("shard-c")
          for (let round = 0; round < 10; round++) {
            for (let i = 0; i < 30; i++) yield* world.edit(`app-${i}`, `r${round}`)
            yield* Effect.sleep("100 millis")
          }
          yield* eventually(world.converged(["shard-a", "shard-b", "shard-c"]), 20_000)
          const spread = yield* world.labels
          for (const shard of ["shard-a", "shard-b", "shard-c"]) {
            assert([...spread.values()].includes(shard), `${shard} holds objects`)
          }
          // children on their owner's shard; each cache holds exactly its shard's objects
          yield* eventually(
            Effect.gen(function*() {
              const secrets = yield* world.client.list(Resource.Secret, { namespace })
              for (const secret of mode === "labels" ? secrets.items : []) {
                assert.strictEqual(
                  secret.metadata?.labels?.[Sharding.shardLabel(RING)],
                  spread.get(secret.metadata!.name!),
                  `Secret ${secret.metadata!.name} on its owner's shard`
                )
              }
              for (const replica of [a, b, c]) {
                const own = [...spread].filter(([, s]) => s === replica.identity).map(([name]) => name)
                const configMaps = yield* replica.cache.list(Resource.ConfigMap, { namespace })
                const cachedSecrets = yield* replica.cache.list(Resource.Secret, { namespace })
                assert.sameMembers(configMaps.map((o) => o.metadata!.name!), own, `${replica.identity}'s ConfigMaps`)
                // server: the server hashes a Secret's own uid, so Secrets are not restricted
                assert.sameMembers(
                  cachedSecrets.map((o) => o.metadata!.name!),
                  mode === "labels" ? own : secrets.items.map((o) => o.metadata!.name!),
                  `${replica.identity}'s Secrets`
                )
              }
            }),
            10_000
          )

          // one crashes (not the sharder's replica): its objects are reconciled elsewhere within the lease and 5 s
          const sharder = (yield* world.client.get(Resource.Lease, `${RING}-sharder`, { namespace })).spec
            ?.holderIdentity
          const victim = [a, b, c].find((r) => r.identity !== sharder)!
          const survivors = [a, b, c].filter((r) => r !== victim).map((r) => r.identity)
          const held = [...spread].filter(([, s]) => s === victim.identity).map(([name]) => name)
          const crashedAt = Date.now()
          yield* victim.stop("crash")
          yield* eventually(
            check(() => {
              for (const name of held) {
                const started = world.ledger.started.get(name)
                assert(started !== undefined && survivors.includes(started[0]) && started[1] > crashedAt, name)
              }
            }),
            LEASE + 5_000
          )
          for (let i = 0; i < 30; i++) yield* world.edit(`app-${i}`, "after")
          yield* eventually(world.converged(survivors), 20_000)

          // a graceful leave hands over at once (its Lease released)
          const leaver = [a, b, c].find((r) => r !== victim && r.identity !== sharder)!
          yield* leaver.stop("leave")
          const remaining = survivors.filter((s) => s !== leaver.identity)
          yield* eventually(world.converged(remaining), LEASE + 5_000)
          assert.deepStrictEqual(world.ledger.overlaps, [])
        }).pipe(Effect.provide(TestLayer), Effect.scoped),
      90_000
    )
  })
}
