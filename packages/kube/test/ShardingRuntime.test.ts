/**
 * Sharding as it runs (issue 24): replicas of one operator in one process over the in-process cluster (TestKube), on
 * the TestClock, each with its own shard Lease, Cache, Manager and controller, one of them running the sharder.
 *
 * Every replica talks to the cluster through its own client wrapper, which can cut it off (`partitioned`: every
 * request fails, watches too, while the process goes on) or kill it (nothing reaches the cluster, then its scope
 * closes: a crashed process writes nothing, not even a release). Reconciles take 300 ms of TestClock time and
 * record themselves in one shared table, so a reconcile of one object starting while another replica's is in flight
 * is caught the moment it happens. The pure rules are property-tested against a model in `sharding.test.ts`; here
 * the runtime that applies them — Leases, the sharder's watches and patches, the shards' label-selected caches and
 * their gate — is.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Manager from "@reconcile/core/Manager"
import * as Predicates from "@reconcile/core/Predicates"
import type { Predicate } from "@reconcile/core/Predicates"
import * as Reconcile from "@reconcile/core/Reconcile"
import { TestKube } from "@reconcile/testkit"
import { Clock, Context, Effect, Exit, Layer, Metric, Schema, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Cache from "../src/Cache.js"
import * as buckets from "../src/internal/shardBuckets.js"
import * as sharder from "../src/internal/sharder.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as KubeError from "../src/KubeError.js"
import * as Resource from "../src/Resource.js"
import * as Sharding from "../src/Sharding.js"

const RING = "apps"
const LEASE = 15_000
const RENEW = 10_000
const RECONCILE = 300

const settle = TestKube.settle

const refused = new KubeError.ServerError({
  status: { kind: "Status", status: "Failure", reason: "InternalError", code: 500, message: "partitioned" }
})

interface Control {
  cut: boolean
  /** Its watches of Leases deliver no event of the Leases named (its view of those goes stale). */
  staleLeases?: ((name: string) => boolean) | undefined
}

/** A replica's view of the cluster: cut off, every request (and every watch) fails. */
const wrap = (client: KubeClient.KubeClient.Service, control: Control): KubeClient.KubeClient.Service => {
  const gate = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | KubeError.ServerError, R> =>
    Effect.suspend((): Effect.Effect<A, E | KubeError.ServerError, R> => control.cut ? Effect.fail(refused) : effect)
  return {
    ...client,
    get: (r, n, o) => gate(client.get(r, n, o)),
    list: (r, o) => gate(client.list(r, o)),
    listAll: (r, o) => gate(client.listAll(r, o)),
    create: (r, o, x) => gate(client.create(r, o, x)),
    replace: (r, o, x) => gate(client.replace(r, o, x)),
    patch: (r, n, p, o) => gate(client.patch(r, n, p, o)),
    delete: (r, n, o) => gate(client.delete(r, n, o)),
    watch: (r, o) =>
      Stream.suspend(() =>
        control.cut ? Stream.fail(refused) : client.watch(r, o).pipe(
          Stream.takeWhile(() => !control.cut),
          Stream.filter((e) =>
            !(r.kind === "Lease" && (e._tag === "Added" || e._tag === "Modified" || e._tag === "Deleted") &&
              control.staleLeases?.((e.object as { metadata?: { name?: string } }).metadata?.name ?? "") === true)
          )
        )
      )
  }
}

/** What the replicas' reconciles saw: who reconciles what now, every overlap, and the last value each reconciled. */
interface Ledger {
  readonly active: Map<string, string>
  readonly overlaps: Array<string>
  /** object → [replica, data.v] of its last completed reconcile. */
  readonly last: Map<string, readonly [string, string]>
  /** replica → when its last reconcile started. */
  readonly lastStart: Map<string, number>
  /** object → completed reconciles. */
  readonly counts: Map<string, number>
  /** Every reconcile asks to be run again after this long (a replica cut off keeps reconciling what it has). */
  requeue?: number | undefined
}

const controllerOf = (identity: string, ledger: Ledger, forPredicates?: ReadonlyArray<Predicate<any>>) =>
  KubeController.make({
    name: "apps",
    for: Resource.ConfigMap,
    forPredicates,
    owns: [Resource.Secret],
    options: { maxConcurrentReconciles: 4 },
    reconcile: (object) =>
      Effect.gen(function*() {
        const name = object.metadata!.name!
        const other = ledger.active.get(name)
        if (other !== undefined) ledger.overlaps.push(`${name}: ${identity} started while ${other} reconciles it`)
        ledger.active.set(name, identity)
        ledger.lastStart.set(identity, yield* Clock.currentTimeMillis)
        yield* Effect.sleep(RECONCILE).pipe(
          Effect.onExit(() =>
            Effect.sync(() => {
              if (ledger.active.get(name) === identity) ledger.active.delete(name)
            })
          )
        )
        ledger.last.set(name, [identity, "data" in object ? object.data?.v ?? "" : ""])
        ledger.counts.set(name, (ledger.counts.get(name) ?? 0) + 1)
        if (ledger.requeue !== undefined) return yield* Effect.fail(Reconcile.requeueAfter(ledger.requeue))
      })
  })

interface Replica {
  readonly identity: string
  readonly control: Control
  readonly scope: Scope.Closeable
  /** The replica's cache. */
  readonly cache: Cache.Cache.Service
  /** The replica's shard. */
  readonly sharding: Sharding.Sharding.Service
  stopped: boolean
}

/** How the ring is sharded: by labels, or by the server's `shardSelector` (its feature gate on). */
type Mode = "labels" | "server"

const makeWorld = (mode: Mode, forPredicates?: ReadonlyArray<Predicate<any>>) =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    const parent = yield* Effect.scope
    const ledger: Ledger = { active: new Map(), overlaps: [], last: new Map(), counts: new Map(), lastStart: new Map() }
    const replicas: Array<Replica> = []
    let n = 0

    const start = Effect.gen(function*() {
      const identity = `shard-${++n}`
      const control: Control = { cut: false }
      const scope = yield* Scope.fork(parent, "sequential")
      const controller = controllerOf(identity, ledger, forPredicates)
      const layer = KubeController.layer(controller).pipe(
        Layer.provideMerge(Manager.layer()),
        Layer.provideMerge(Cache.layer()),
        Layer.provideMerge(Sharding.layer({ ring: RING, identity, controllers: [controller] })),
        Layer.provide(Layer.succeed(KubeClient.KubeClient, wrap(client, control)))
      )
      const context = yield* Layer.build(layer).pipe(Scope.provide(scope), Effect.orDie)
      const replica: Replica = {
        identity,
        control,
        scope,
        cache: Context.get(context, Cache.Cache),
        sharding: Context.get(context, Sharding.Sharding),
        stopped: false
      }
      assert.strictEqual(replica.sharding.mode, mode, "the mode chosen from what the server answers")
      replicas.push(replica)
      return replica
    })
    /**
     * A graceful stop (controllers drain, the Lease is released) or a crash (nothing more is written). A graceful stop
     * waits for reconciles in flight, which take TestClock time: the clock moves until it is over.
     */
    const stop = (replica: Replica, how: "leave" | "kill") =>
      Effect.gen(function*() {
        if (replica.stopped) return
        replica.stopped = true
        if (how === "kill") replica.control.cut = true
        const fiber = yield* Effect.forkChild(Scope.close(replica.scope, Exit.void))
        while (fiber.pollUnsafe() === undefined) yield* TestClock.adjust(50)
      })
    /** The sharder's table (server mode), as its Lease publishes it. */
    const table = Effect.map(
      Effect.orDie(KubeError.ignoreNotFound(client.get(Resource.Lease, `${RING}-sharder`, { namespace: "default" }))),
      (lease) =>
        lease._tag === "None"
          ? undefined
          : buckets.decodeTable(lease.value.metadata?.annotations?.[buckets.tableAnnotation])
    )
    /** Each ConfigMap's shard, and whether one of them is being moved (a drain label, or a drained bucket). */
    const assignment = Effect.gen(function*() {
      const list = yield* Effect.orDie(client.list(Resource.ConfigMap, { namespace: "default" }))
      if (mode === "labels") {
        return {
          shards: new Map(
            list.items.map((cm) => [cm.metadata!.name!, cm.metadata?.labels?.[Sharding.shardLabel(RING)]])
          ),
          moving: list.items.some((cm) => cm.metadata?.labels?.[Sharding.drainLabel(RING)] !== undefined),
          list
        }
      }
      const t = yield* table
      return {
        shards: new Map(list.items.map((cm) => [cm.metadata!.name!, t?.shards[buckets.bucketOf(cm.metadata!.uid!)]])),
        moving: t === undefined || t.draining.size > 0,
        list
      }
    })
    const labels = Effect.map(assignment, (a) => a.shards)
    /** Every ConfigMap reconciled at its current value by the replica it is assigned to, and nothing moving. */
    const converged = Effect.map(assignment, ({ list, moving, shards }) =>
      !moving && list.items.every((cm) => {
        const shard = shards.get(cm.metadata!.name!)
        const last = ledger.last.get(cm.metadata!.name!)
        return shard !== undefined && last !== undefined && last[0] === shard && last[1] === (cm.data?.v ?? "")
      }))
    const create = (name: string, v: string) =>
      client.create(Resource.ConfigMap, { metadata: { name, namespace: "default" }, data: { v } })
    const edit = (name: string, v: string) =>
      Effect.ignore(client.patch(Resource.ConfigMap, name, { data: { v } }, { type: "merge", namespace: "default" }))
    /**
     * Stops every replica gracefully while moving the TestClock (a graceful stop waits for reconciles in flight, which
     * take TestClock time); what a test ends with, before its scope closes.
     */
    const shutdown = Effect.forEach(replicas, (r) => stop(r, "leave"), { discard: true })
    return { client, ledger, replicas, start, stop, labels, converged, create, edit, shutdown }
  })

type World = Effect.Success<ReturnType<typeof makeWorld>>

const envOf = (mode: Mode) =>
  TestKube.layerWithCluster({ retry: { times: 0 }, featureGates: { ShardedListAndWatch: mode === "server" } })

/** Advances the TestClock in steps until `done` holds; the time it took, or undefined after `max`. */
const advanceUntil = (done: Effect.Effect<boolean>, step: number, max: number) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    for (let waited = 0; waited <= max; waited += step) {
      yield* settle
      if (yield* done) return (yield* Clock.currentTimeMillis) - start
      yield* TestClock.adjust(step)
    }
    return undefined
  })

const converge = (world: World, max = 60_000) =>
  Effect.gen(function*() {
    const took = yield* advanceUntil(world.converged, 500, max)
    assert(took !== undefined, `converged within ${max} ms: ${JSON.stringify([...(yield* world.labels)])}`)
    return took
  })

/** Of `replicas`, the one holding the sharder Lease and the others. */
const sharderAmong = <R extends { readonly identity: string }>(world: World, replicas: ReadonlyArray<R>) =>
  Effect.map(
    world.client.get(Resource.Lease, `${RING}-sharder`, { namespace: "default" }),
    (lease) => {
      const sharder = replicas.find((r) => r.identity === lease.spec?.holderIdentity)!
      return { sharder, others: replicas.filter((r) => r !== sharder) }
    }
  )

describe("Sharding (TestKube, TestClock)", () => {
  it.effect("rejects a ring it cannot form", () =>
    Effect.gen(function*() {
      const controller = controllerOf("x", {
        active: new Map(),
        overlaps: [],
        last: new Map(),
        counts: new Map(),
        lastStart: new Map()
      })
      const bad: ReadonlyArray<Sharding.Options> = [
        { ring: "Apps", controllers: [controller] },
        { ring: "apps", controllers: [] },
        { ring: "apps", identity: "host_1", controllers: [controller] },
        { ring: "apps", identity: "sharder", controllers: [controller] }
      ]
      for (const options of bad) {
        const error = yield* Effect.flip(Effect.scoped(Sharding.make(options)))
        assert.strictEqual(error._tag, "ShardingError", JSON.stringify(options))
      }
    }).pipe(Effect.provide(envOf("labels"))))
})

for (const mode of ["labels", "server"] as const) {
  describe(`Sharding by ${mode} (TestKube, TestClock)`, () => {
    const Env = envOf(mode)

    it.effect(
      "three replicas share the objects; children follow their owner; each shard caches only its own",
      () =>
        Effect.gen(function*() {
          const world = yield* makeWorld(mode)
          for (let i = 0; i < 3; i++) yield* world.start
          for (let i = 0; i < 60; i++) {
            const cm = yield* world.create(`app-${i}`, "1")
            yield* world.client.create(Resource.Secret, {
              metadata: {
                name: `app-${i}`,
                namespace: "default",
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
          yield* converge(world)
          const labels = yield* world.labels
          const perShard = new Map<string, number>()
          for (const shard of labels.values()) perShard.set(shard!, (perShard.get(shard!) ?? 0) + 1)
          assert.strictEqual(perShard.size, 3, `every shard has objects: ${JSON.stringify([...perShard])}`)
          for (const count of perShard.values()) assert.isAtLeast(count, 8)
          const secrets = yield* world.client.list(Resource.Secret, { namespace: "default" })
          if (mode === "labels") {
            for (const secret of secrets.items) {
              assert.strictEqual(
                secret.metadata?.labels?.[Sharding.shardLabel(RING)],
                labels.get(secret.metadata!.name!),
                "a Secret is on its owner's shard"
              )
            }
          }
          // each shard's cache holds its own ConfigMaps and nothing else; its own Secrets (labels: they follow their
          // owner), or all of them (server: the server hashes a Secret's own uid, so they are not restricted)
          for (const replica of world.replicas) {
            const own = [...labels].filter(([, shard]) => shard === replica.identity).map(([name]) => name)
            const configMaps = yield* replica.cache.list(Resource.ConfigMap, { namespace: "default" })
            assert.sameMembers(configMaps.map((o) => o.metadata!.name!), own, `${replica.identity}'s ConfigMaps`)
            const cachedSecrets = yield* replica.cache.list(Resource.Secret, { namespace: "default" })
            assert.sameMembers(
              cachedSecrets.map((o) => o.metadata!.name!),
              mode === "labels" ? own : secrets.items.map((o) => o.metadata!.name!),
              `${replica.identity}'s Secrets`
            )
          }
          assert.deepStrictEqual(world.ledger.overlaps, [])
          yield* world.shutdown
        }).pipe(Effect.provide(Env)),
      60_000
    )

    it.effect(
      "a new replica takes its share through the drain handshake: never two reconcilers of one object",
      () =>
        Effect.gen(function*() {
          const world = yield* makeWorld(mode)
          yield* world.start
          yield* world.start
          for (let i = 0; i < 40; i++) yield* world.create(`app-${i}`, "1")
          yield* converge(world)
          const before = yield* world.labels
          // edits keep reconciles in flight (4 per replica) all the while the ring changes: the third replica joins
          // while the first two are busy
          for (let round = 0; round < 30; round++) {
            if (round === 3) yield* world.start
            for (let i = 0; i < 40; i++) yield* world.edit(`app-${i}`, String(round))
            yield* TestClock.adjust(100)
            yield* settle
          }
          yield* converge(world)
          const after = yield* world.labels
          const moved = [...after].filter(([name, shard]) => before.get(name) !== shard)
          assert.isAbove(moved.length, 5, "objects moved to the new shard")
          assert(moved.every(([, shard]) => shard === "shard-3"), "only to the new shard (consistent hashing)")
          assert.deepStrictEqual(world.ledger.overlaps, [])
          if (mode === "server") return yield* world.shutdown
          // the metrics of the ring
          const ring = { ring: RING }
          yield* TestClock.adjust(5_000)
          yield* settle
          assert.strictEqual((yield* Metric.value(Metric.withAttributes(sharder.metrics.members, ring))).value, 3)
          assert.strictEqual(
            (yield* Metric.value(Metric.withAttributes(sharder.metrics.moves, ring))).count,
            moved.length
          )
          assert.strictEqual(
            (yield* Metric.value(Metric.withAttributes(sharder.metrics.releases, ring))).count,
            moved.length,
            "each moved object was released by its shard"
          )
          // the first assignments, and the second of each moved object (unassigned once its shard let it go)
          assert.strictEqual(
            (yield* Metric.value(Metric.withAttributes(sharder.metrics.assignment, ring))).count,
            40 + moved.length
          )
          const perShard = new Map<string, number>()
          for (const shard of after.values()) perShard.set(shard!, (perShard.get(shard!) ?? 0) + 1)
          for (const [shard, count] of perShard) {
            const gauge = yield* Metric.value(Metric.withAttributes(sharder.metrics.objects, { ...ring, shard }))
            assert.strictEqual(gauge.value, count, `shard_objects{shard=${shard}}`)
          }
          yield* world.shutdown
        }).pipe(Effect.provide(Env), Effect.provideService(Metric.MetricRegistry, new Map())),
      60_000
    )

    it.effect(
      "a controller whose predicates drop label changes still lets a drained object go",
      () =>
        Effect.gen(function*() {
          // a ConfigMap has no generation: generationChanged drops every update, the drain label's too
          const world = yield* makeWorld(mode, [Predicates.generationChanged])
          yield* world.start
          for (let i = 0; i < 20; i++) yield* world.create(`app-${i}`, "1")
          yield* converge(world)
          yield* world.start
          yield* converge(world)
          const labels = yield* world.labels
          assert([...labels.values()].includes("shard-2"), "objects moved to the new shard")
          assert.deepStrictEqual(world.ledger.overlaps, [])
          yield* world.shutdown
        }).pipe(Effect.provide(Env)),
      60_000
    )

    for (const killed of ["another shard", "the sharder's replica"] as const) {
      it.effect(
        `${killed} killed: its objects are reconciled by the others once its Lease expires`,
        () =>
          Effect.gen(function*() {
            const world = yield* makeWorld(mode)
            const [a, b] = [yield* world.start, yield* world.start]
            for (let i = 0; i < 30; i++) yield* world.create(`app-${i}`, "1")
            yield* converge(world)
            // the sharder's replica dies too: the other, which watched the Leases all along, takes over both
            const { others, sharder } = yield* sharderAmong(world, [a, b])
            const victim = killed === "another shard" ? others[0]! : sharder
            yield* world.stop(victim, "kill")
            const victims = [...(yield* world.labels)].filter(([, shard]) => shard === victim.identity)
              .map(([name]) => name)
            assert.isAbove(victims.length, 0)
            const reconciledAt = new Map(victims.map((name) => [name, world.ledger.counts.get(name) ?? 0]))
            // every object the killed shard held is reconciled by a survivor within the Lease duration and 5 s
            const took = yield* advanceUntil(
              Effect.sync(() =>
                victims.every((name) => (world.ledger.counts.get(name) ?? 0) > reconciledAt.get(name)!)
              ),
              250,
              LEASE + 5_000
            )
            assert(took !== undefined, "reassigned and reconciled within the Lease duration and 5 s")
            assert.isAtLeast(took, LEASE - 2_000 - 1, "not before the Lease could have expired")
            const labels = yield* world.labels
            assert(![...labels.values()].includes(victim.identity), "nothing is left on the killed shard")
            for (let i = 0; i < 30; i++) yield* world.edit(`app-${i}`, "2")
            yield* converge(world)
            assert.deepStrictEqual(world.ledger.overlaps, [])
            yield* world.shutdown
          }).pipe(Effect.provide(Env)),
        60_000
      )
    }

    it.effect(
      "a sharder whose watch of the Leases goes stale does not take a renewing shard for dead",
      () =>
        Effect.gen(function*() {
          const world = yield* makeWorld(mode)
          const [a, b] = [yield* world.start, yield* world.start]
          for (let i = 0; i < 30; i++) yield* world.create(`app-${i}`, "1")
          yield* converge(world)
          const { others: [other], sharder } = yield* sharderAmong(world, [a, b])
          const before = yield* world.labels
          // the sharder sees no event of the other shard's Lease for 40 s, while that shard renews as always
          sharder.control.staleLeases = (name) => name === `${RING}-${other.identity}`
          for (let step = 0; step < 80; step++) {
            for (let i = 0; i < 30; i += 5) yield* world.edit(`app-${i}`, `s${step}`)
            yield* TestClock.adjust(500)
            yield* settle
          }
          assert.deepStrictEqual(yield* world.labels, before, "nothing moved away from the live shard")
          sharder.control.staleLeases = undefined
          yield* converge(world)
          assert.deepStrictEqual(world.ledger.overlaps, [])
          assert.isAbove([...before.values()].filter((s) => s === other.identity).length, 0)
          yield* world.shutdown
        }).pipe(Effect.provide(Env)),
      60_000
    )

    it.effect(
      "a new sharder does not move objects to a shard it has only listed (maybe dead) until it knows",
      () =>
        Effect.gen(function*() {
          const world = yield* makeWorld(mode)
          const [a, b] = [yield* world.start, yield* world.start]
          for (let i = 0; i < 30; i++) yield* world.create(`app-${i}`, "1")
          yield* converge(world)
          const { others: [victim], sharder } = yield* sharderAmong(world, [a, b])
          const victims = [...(yield* world.labels)].filter(([, shard]) => shard === victim.identity).length
          // the victim crashes; a new replica starts (it lists the victim's Lease, still unexpired: it cannot tell
          // whether that shard is alive); the sharder's replica leaves, and the new replica becomes the sharder
          yield* world.stop(victim, "kill")
          const survivor = yield* world.start
          yield* TestClock.adjust(100)
          yield* settle
          yield* world.stop(sharder, "leave")
          for (let step = 0; step < 30; step++) {
            yield* TestClock.adjust(500)
            yield* settle
            const now = [...(yield* world.labels)].filter(([, shard]) => shard === victim.identity).length
            assert.isAtMost(now, victims, "nothing moves to a shard not seen alive")
          }
          // once the victim's Lease expires, its objects go to the survivor
          const moved = yield* advanceUntil(
            Effect.map(world.labels, (labels) => [...labels.values()].every((shard) => shard === survivor.identity)),
            500,
            30_000
          )
          assert(moved !== undefined, "all on the survivor")
          yield* converge(world)
          assert.deepStrictEqual(world.ledger.overlaps, [])
          yield* world.shutdown
        }).pipe(Effect.provide(Env)),
      60_000
    )

    it.effect(
      "a partitioned replica stops before its objects move: no overlap, then convergence",
      () =>
        Effect.gen(function*() {
          const world = yield* makeWorld(mode)
          // every object is reconciled again each second: a replica cut off would go on reconciling what it has
          world.ledger.requeue = 1_000
          const [a, b] = [yield* world.start, yield* world.start]
          for (let i = 0; i < 30; i++) yield* world.create(`app-${i}`, "1")
          yield* converge(world)
          const { others: [victim] } = yield* sharderAmong(world, [a, b])
          victim.control.cut = true
          const cutAt = yield* Clock.currentTimeMillis
          for (let step = 0; step < 40; step++) {
            for (let i = 0; i < 30; i += 7) yield* world.edit(`app-${i}`, `p${step}`)
            yield* TestClock.adjust(500)
            yield* settle
          }
          yield* converge(world)
          assert.deepStrictEqual(world.ledger.overlaps, [])
          assert.isAtMost(
            world.ledger.lastStart.get(victim.identity)!,
            cutAt + RENEW,
            "it stopped within renewDeadline"
          )
          const labels = yield* world.labels
          assert(![...labels.values()].includes(victim.identity), "its objects moved to the other shard")
          yield* world.shutdown
        }).pipe(Effect.provide(Env)),
      60_000
    )
  })
}

// A property over random schedules of joins, graceful leaves, kills, partitions, creates, edits and deletes.
const Step = Schema.Union([
  Schema.Struct({ op: Schema.Literal("join") }),
  Schema.Struct({ op: Schema.Literal("leave"), which: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })) }),
  Schema.Struct({ op: Schema.Literal("kill"), which: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })) }),
  Schema.Struct({ op: Schema.Literal("cut"), which: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })) }),
  Schema.Struct({ op: Schema.Literal("create"), n: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 })) }),
  Schema.Struct({ op: Schema.Literal("edit"), n: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 29 })) }),
  Schema.Struct({ op: Schema.Literal("delete"), n: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 29 })) }),
  Schema.Struct({ op: Schema.Literal("wait"), ms: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 12_000 })) })
])
const Schedule = Schema.Array(Step).check(Schema.isMinLength(4), Schema.isMaxLength(14))

for (const mode of ["labels", "server"] as const) {
  describe(`Sharding by ${mode}: property (TestKube, TestClock)`, () => {
    it.effect.prop("any schedule: never two reconcilers of one object; all converge once membership settles", [
      Schedule
    ], ([schedule]) =>
      Effect.gen(function*() {
        const world = yield* makeWorld(mode)
        yield* world.start
        let created = 0
        const running = () => world.replicas.filter((r) => !r.stopped && !r.control.cut)
        for (const step of schedule) {
          switch (step.op) {
            case "join":
              if (running().length < 4) yield* world.start
              break
            case "leave":
            case "kill":
            case "cut": {
              // one replica always stays up
              const alive = running()
              if (alive.length < 2) break
              const replica = alive[step.which % alive.length]!
              if (step.op === "cut") replica.control.cut = true
              else yield* world.stop(replica, step.op === "leave" ? "leave" : "kill")
              break
            }
            case "create":
              for (let i = 0; i < step.n; i++) yield* world.create(`app-${created++}`, "1")
              break
            case "edit":
              if (created > 0) yield* world.edit(`app-${step.n % created}`, `e${step.n}`)
              break
            case "delete":
              if (created > 0) {
                yield* Effect.ignore(
                  world.client.delete(Resource.ConfigMap, `app-${step.n % created}`, { namespace: "default" })
                )
              }
              break
            case "wait":
              yield* TestClock.adjust(step.ms)
              break
          }
          yield* settle
        }
        yield* converge(world, 120_000)
        const objects = yield* world.client.list(Resource.ConfigMap, { namespace: "default" })
        for (const cm of objects.items) assert.isAbove(world.ledger.counts.get(cm.metadata!.name!) ?? 0, 0)
        assert.deepStrictEqual(world.ledger.overlaps, [])
        yield* world.shutdown
      }).pipe(Effect.provide(envOf(mode))), { timeout: 120_000, arbitrary: { runs: 30 } })
  })
}
