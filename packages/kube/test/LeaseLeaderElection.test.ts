/**
 * LeaseLeaderElection over the in-process cluster (TestKube), on the TestClock.
 *
 * Replicas share one TestCluster; each talks to it through its own client wrapper, which can "kill" the replica
 * (every request fails: a crashed process writes nothing, not even a release) or fail its Lease updates on demand.
 * Leadership intervals are recorded from awaitLeadership / awaitLoss / the moment a replica is stopped, and the
 * Lease's history is recorded from a watch, so the tests check both "one leader at a time" and "never while the
 * previous holder's lease is valid".
 */
import { assert, describe, it } from "@effect/vitest"
import * as Controller from "@reconcile/core/Controller"
import * as Event from "@reconcile/core/Event"
import * as Handler from "@reconcile/core/Handler"
import * as LeaderElection from "@reconcile/core/LeaderElection"
import * as Manager from "@reconcile/core/Manager"
import * as Source from "@reconcile/core/Source"
import { TestKube } from "@reconcile/testkit"
import { Arbitrary, Clock, Context, Effect, Exit, Fiber, Layer, Schema, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as LeaseLeaderElection from "../src/LeaseLeaderElection.js"
import * as Resource from "../src/Resource.js"

const LEASE = 15_000
const RENEW = 10_000
const RETRY = 2_000

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up

interface Interval {
  readonly identity: string
  readonly start: number
  end: number
}

interface Control {
  dead: boolean
  failUpdates: boolean
}

const refused = (what: string) =>
  new KubeError.ServerError({
    status: { kind: "Status", status: "Failure", reason: "InternalError", code: 500, message: what }
  })

/** A replica's view of the cluster: dead replicas reach nothing; `failUpdates` refuses Lease writes. */
const wrap = (client: KubeClient.KubeClient.Service, control: Control): KubeClient.KubeClient.Service => ({
  ...client,
  get: (resource, name, options) =>
    Effect.suspend(() => control.dead ? Effect.fail(refused("dead")) : client.get(resource, name, options)),
  create: (resource, object, options) =>
    Effect.suspend(() =>
      control.dead || control.failUpdates
        ? Effect.fail(refused("create refused"))
        : client.create(resource, object, options)
    ),
  replace: (resource, object, options) =>
    Effect.suspend(() =>
      control.dead || control.failUpdates
        ? Effect.fail(refused("update refused"))
        : client.replace(resource, object, options)
    )
})

interface Replica {
  readonly identity: string
  readonly control: Control
  readonly election: LeaderElection.LeaderElection.Service
  readonly scope: Scope.Closeable
  /** Stops the replica: gracefully (scope closed, lease released) or by crashing (nothing reaches the cluster). */
  readonly stop: (how: "crash" | "release") => Effect.Effect<void>
  stopped: boolean
}

/** Shared state of one test: the cluster's client, the recorded intervals and the Lease's history. */
const makeWorld = Effect.gen(function*() {
  const client = yield* KubeClient.KubeClient
  const parent = yield* Effect.scope
  const intervals: Array<Interval> = []
  const history: Array<Resource.Lease> = []
  yield* client.watch(Resource.Lease, { namespace: "default" }).pipe(
    Stream.runForEach((e) =>
      Effect.sync(() => {
        if (e._tag === "Added" || e._tag === "Modified") history.push(e.object)
      })
    ),
    Effect.forkScoped
  )
  let n = 0
  const start = (options: Partial<LeaseLeaderElection.Options> = {}) =>
    Effect.gen(function*() {
      const identity = options.identity ?? `replica-${++n}`
      const control: Control = { dead: false, failUpdates: false }
      const scope = yield* Scope.fork(parent, "sequential")
      const election = yield* LeaseLeaderElection.make({ name: "operator", identity, ...options }).pipe(
        Effect.provideService(KubeClient.KubeClient, wrap(client, control)),
        Scope.provide(scope),
        Effect.orDie
      )
      let open: Interval | undefined
      yield* Effect.gen(function*() {
        yield* election.awaitLeadership
        open = { identity, start: yield* Clock.currentTimeMillis, end: Infinity }
        intervals.push(open)
        yield* election.awaitLoss
        open.end = yield* Clock.currentTimeMillis
      }).pipe(Effect.forkIn(scope))
      const replica: Replica = {
        identity,
        control,
        election,
        scope,
        stopped: false,
        stop: (how) =>
          Effect.gen(function*() {
            if (replica.stopped) return
            replica.stopped = true
            if (how === "crash") control.dead = true
            const now = yield* Clock.currentTimeMillis
            if (open !== undefined && open.end === Infinity) open.end = now
            yield* Scope.close(scope, Exit.void)
          })
      }
      return replica
    })
  const leaders = (replicas: ReadonlyArray<Replica>) =>
    Effect.map(
      Effect.filter(replicas, (r) => r.election.isLeader),
      (rs) => rs.map((r) => r.identity)
    )
  return { client, intervals, history, start, leaders }
})

const millisOf = (micro: string | undefined): number => micro === undefined ? NaN : Date.parse(micro)

/** No two leadership intervals of different replicas overlap. */
const assertNoOverlap = (intervals: ReadonlyArray<Interval>) => {
  for (const a of intervals) {
    for (const b of intervals) {
      if (a === b) continue
      assert(a.end <= b.start || b.end <= a.start, `overlap: ${JSON.stringify(a)} and ${JSON.stringify(b)}`)
    }
  }
}

/**
 * Every change of holder happened when the previous holder's record was released or expired: its renewTime plus
 * leaseDurationSeconds is not after the new holder's acquireTime (one clock, the TestClock, wrote both).
 */
const assertTakeoversAfterExpiry = (history: ReadonlyArray<Resource.Lease>) => {
  for (let i = 1; i < history.length; i++) {
    const before = history[i - 1]!.spec!
    const after = history[i]!.spec!
    const from = before.holderIdentity ?? ""
    const to = after.holderIdentity ?? ""
    if (to === "" || to === from || from === "") continue
    const expiry = millisOf(before.renewTime) + (before.leaseDurationSeconds ?? 0) * 1000
    assert(
      millisOf(after.acquireTime) >= expiry,
      `${to} took the lease at ${after.acquireTime} while ${from}'s was valid until ${new Date(expiry).toISOString()}`
    )
    assert.strictEqual(after.leaseTransitions, (before.leaseTransitions ?? 0) + 1)
  }
}

const Env = TestKube.layerWithCluster({ retry: { times: 0 } })

/** Moves the TestClock in steps, returning the first time `done` holds (or undefined after `max`). */
const advanceUntil = (done: Effect.Effect<boolean>, step: number, max: number) =>
  Effect.gen(function*() {
    for (let waited = 0; waited <= max; waited += step) {
      if (yield* done) return yield* Clock.currentTimeMillis
      yield* TestClock.adjust(step)
    }
    return undefined
  })

describe("LeaseLeaderElection (TestKube, TestClock)", () => {
  it.effect("rejects options that cannot keep the guarantee", () =>
    Effect.gen(function*() {
      const bad: ReadonlyArray<LeaseLeaderElection.Options> = [
        { name: "x", leaseDuration: "10 seconds", renewDeadline: "10 seconds" },
        { name: "x", renewDeadline: "2 seconds", retryPeriod: "2 seconds" },
        { name: "x", retryPeriod: "2 seconds", jitter: 5 },
        { name: "" }
      ]
      for (const options of bad) {
        const error = yield* Effect.flip(Effect.scoped(LeaseLeaderElection.make(options)))
        assert.strictEqual(error._tag, "LeaseLeaderElectionError")
      }
      const identity = yield* LeaseLeaderElection.defaultIdentity
      assert.match(identity, /^.+_[0-9a-f]{14}$/)
    }).pipe(Effect.provide(Env)))

  it.effect("two replicas: exactly one leads, it keeps the lease, and only its controller reconciles", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld
      const a = yield* world.start()
      const b = yield* world.start()
      const calls: Array<string> = []
      const sends: Array<(name: string) => Effect.Effect<boolean>> = []
      for (const replica of [a, b]) {
        const channel = yield* Source.channel<{ readonly metadata: { readonly name: string } }>("objects")
        yield* Controller.make({
          name: `two-replicas-${replica.identity}`,
          watches: [Controller.watch(channel.source, Handler.forObject)],
          reconcile: (req) => Effect.sync(() => void calls.push(`${replica.identity}:${req.name}`))
        }).pipe(
          Effect.provide(
            Manager.layer().pipe(Layer.provide(Layer.succeed(LeaderElection.LeaderElection, replica.election)))
          ),
          Scope.provide(replica.scope)
        )
        sends.push((name) => channel.offer(Event.create({ metadata: { name } })))
      }
      yield* settle
      const first = yield* world.leaders([a, b])
      assert.strictEqual(first.length, 1, "one takes the free lease; the other follows")
      for (let i = 0; i < 30; i++) {
        yield* TestClock.adjust(RETRY)
        assert.deepStrictEqual(yield* world.leaders([a, b]), first, `still one leader after ${(i + 1) * RETRY} ms`)
      }
      for (const send of sends) yield* send("web")
      yield* settle
      assert.deepStrictEqual(
        calls,
        [`${first[0]}:web`],
        "the same event reached both replicas; only the leader reconciled"
      )
      const lease = yield* world.client.get(Resource.Lease, "operator")
      assert.strictEqual(lease.spec?.holderIdentity, first[0])
      assert.strictEqual(lease.spec?.leaseDurationSeconds, 15)
      assert.strictEqual(lease.spec?.leaseTransitions, 0)
      assert.strictEqual(millisOf(lease.spec?.renewTime), yield* Clock.currentTimeMillis, "renewed every retryPeriod")
      assertNoOverlap(world.intervals)
    }).pipe(Effect.provide(Env)))

  it.effect("a crashed leader: another leads within leaseDuration + retryPeriod, never while its lease is valid", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld
      const a = yield* world.start()
      yield* settle
      yield* TestClock.adjust(500)
      const b = yield* world.start()
      yield* TestClock.adjust(7_000)
      assert.deepStrictEqual(yield* world.leaders([a, b]), ["replica-1"])
      yield* TestClock.adjust(1_300) // die between two renewals
      const lastRenew = millisOf((yield* world.client.get(Resource.Lease, "operator")).spec?.renewTime)
      const crashedAt = yield* Clock.currentTimeMillis
      yield* a.stop("crash")
      assert.isFalse(yield* a.election.isLeader)
      const tookOver = yield* advanceUntil(b.election.isLeader, 100, 30_000)
      assert(tookOver !== undefined, "the follower took over")
      assert.isAtLeast(tookOver, lastRenew + LEASE, "never while the old lease is valid")
      assert.isAtMost(tookOver - crashedAt, LEASE + RETRY, "within leaseDuration + retryPeriod of the crash")
      const lease = yield* world.client.get(Resource.Lease, "operator")
      assert.strictEqual(lease.spec?.holderIdentity, "replica-2")
      assert.strictEqual(lease.spec?.leaseTransitions, 1)
      assertNoOverlap(world.intervals)
      assertTakeoversAfterExpiry(world.history)
    }).pipe(Effect.provide(Env)))

  it.effect("graceful release: a follower takes over within one retryPeriod", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld
      const a = yield* world.start()
      yield* settle
      const b = yield* world.start()
      yield* TestClock.adjust(5_300)
      assert.deepStrictEqual(yield* world.leaders([a, b]), ["replica-1"])
      const releasedAt = yield* Clock.currentTimeMillis
      yield* a.stop("release")
      const released = yield* world.client.get(Resource.Lease, "operator")
      assert.strictEqual(released.spec?.holderIdentity, "")
      assert.strictEqual(released.spec?.leaseDurationSeconds, 1)
      const tookOver = yield* advanceUntil(b.election.isLeader, 100, 10_000)
      assert(tookOver !== undefined)
      assert.isAtMost(tookOver - releasedAt, RETRY, "within one retryPeriod")
      assertNoOverlap(world.intervals)
    }).pipe(Effect.provide(Env)))

  it.effect("renewals failing past renewDeadline: leadership dropped, workers stopped, Manager fails", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld
      const channel = yield* Source.channel<{ readonly metadata: { readonly name: string } }>("objects")
      const calls: Array<string> = []
      const control: Control = { dead: false, failUpdates: false }
      const app = Controller.layer({
        name: "lease-managed",
        watches: [Controller.watch(channel.source, Handler.forObject)],
        reconcile: (req) => Effect.sync(() => void calls.push(req.name))
      }).pipe(
        Layer.provideMerge(Manager.layer()),
        Layer.provideMerge(LeaseLeaderElection.layer({ name: "operator", identity: "managed" })),
        Layer.provide(Layer.succeed(KubeClient.KubeClient, wrap(world.client, control)))
      )
      const context = yield* Layer.build(app)
      const manager = Context.get(context, Manager.Manager)
      const ended = yield* Effect.forkChild(Effect.flip(manager.await))
      yield* settle
      yield* channel.offer(Event.create({ metadata: { name: "before" } }))
      yield* settle
      assert.deepStrictEqual(calls, ["before"], "leading: workers run")
      const follower = yield* world.start({ identity: "follower" })

      yield* TestClock.adjust(4_000)
      const lastRenew = millisOf((yield* world.client.get(Resource.Lease, "operator")).spec?.renewTime)
      control.failUpdates = true
      const election = Context.get(context, LeaderElection.LeaderElection)
      const lostAt = yield* advanceUntil(Effect.map(election.isLeader, (l) => !l), 100, 20_000)
      assert.strictEqual(lostAt, lastRenew + RENEW, "leads until exactly renewDeadline after the last renewal")
      const error = yield* Fiber.join(ended)
      assert.strictEqual(error._tag, "ManagerError")
      assert.strictEqual(error.runnable, "lease-managed")
      assert(error.cause instanceof LeaderElection.LeadershipLost, "the Manager's error carries LeadershipLost")
      assert.strictEqual(error.cause.identity, "managed")
      assert.include(error.cause.reason, "update refused")
      yield* channel.offer(Event.create({ metadata: { name: "after" } }))
      yield* settle
      assert.deepStrictEqual(calls, ["before"], "workers stopped: no reconcile after the loss")

      const tookOver = yield* advanceUntil(follower.election.isLeader, 100, 30_000)
      assert(tookOver !== undefined)
      assert.isAtLeast(tookOver, lastRenew + LEASE, "the follower waits for the lease to expire")
      assertNoOverlap([
        { identity: "managed", start: 0, end: lostAt! },
        ...world.intervals
      ])
      assertTakeoversAfterExpiry(world.history)
    }).pipe(Effect.provide(Env)))

  // effect 4.1 bundles no FastCheck: the same generators drawn with effect/Arbitrary (what it.prop runs)
  const between = (minimum: number, maximum: number) =>
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))
  const actions = ["start", "crash", "release", "failUpdates", "failUpdates", "heal", "nothing"] as const
  const Step = Arbitrary.all({
    wait: between(0, 20_000),
    action: Arbitrary.map(between(0, actions.length - 1), (i) => actions[i]!),
    replica: between(0, 3)
  })

  it.effect.prop(
    "never two leaders with overlapping valid leases, whatever the crash / restart / release / failure timings",
    [between(0, 3_000), Arbitrary.array(Step, { minLength: 1, maxLength: 25 })],
    ([first, steps]) =>
      Effect.gen(function*() {
        const world = yield* makeWorld
        const replicas: Array<Replica> = [yield* world.start()]
        yield* TestClock.adjust(first)
        replicas.push(yield* world.start())
        const live = () => replicas.filter((r) => !r.stopped)
        for (const step of steps) {
          yield* TestClock.adjust(step.wait)
          const target = live()[step.replica % Math.max(1, live().length)]
          switch (step.action) {
            case "start":
              replicas.push(yield* world.start())
              break
            case "crash":
            case "release":
              if (target !== undefined) yield* target.stop(step.action)
              break
            case "failUpdates":
              if (target !== undefined) target.control.failUpdates = true
              break
            case "heal":
              for (const r of live()) r.control.failUpdates = false
              break
          }
          yield* settle
          assert.isAtMost((yield* world.leaders(replicas)).length, 1, "at most one replica says it leads")
        }
        // liveness: a fresh healthy replica (the others may have given up after a loss) leads within bounds
        for (const r of live()) r.control.failUpdates = false
        const fresh = yield* world.start()
        const leader = yield* advanceUntil(
          Effect.map(world.leaders([...replicas, fresh]), (ls) => ls.length === 1),
          1_000,
          2 * (LEASE + RETRY)
        )
        assert(leader !== undefined, "someone leads again")
        assertNoOverlap(world.intervals)
        assertTakeoversAfterExpiry(world.history)
        for (const r of [...replicas, fresh]) yield* r.stop("release")
      }).pipe(Effect.scoped, Effect.provide(Env)),
    // size 25: effect's Arbitrary caps array lengths at `size` (default 10); fast-check drew up to maxLength
    { arbitrary: { runs: 30, size: 25 }, timeout: 120_000 }
  )
})

describe("LeaseLeaderElection unit details", () => {
  it.effect("the Lease is created when missing, records microsecond times, and counts transitions", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld
      yield* TestClock.setTime(Date.parse("2030-01-02T03:04:05.678Z"))
      const a = yield* world.start()
      yield* settle
      const lease = yield* world.client.get(Resource.Lease, "operator")
      assert.strictEqual(lease.spec?.acquireTime, "2030-01-02T03:04:05.678000Z")
      assert.strictEqual(lease.spec?.holderIdentity, a.identity)
      yield* a.stop("release")
      const b = yield* world.start()
      yield* settle
      const taken = yield* world.client.get(Resource.Lease, "operator")
      assert.strictEqual(taken.spec?.holderIdentity, b.identity)
      assert.strictEqual(taken.spec?.leaseTransitions, 1)
      assert.isTrue(yield* b.election.isLeader)
    }).pipe(Effect.provide(Env)))
})
