/**
 * LeaseLeaderElection through the real HTTP client against TestApiServer, in real time with short durations
 * (leaseDuration 1.5 s — 2 s on the wire, rounded up —, renewDeadline 1 s, retryPeriod 200 ms). Waits are bounded.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as LeaderElection from "@reconcile/core/LeaderElection"
import { Clock, Effect, Exit, Layer, Scope } from "effect"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeError from "../src/KubeError.js"
import * as LeaseLeaderElection from "../src/LeaseLeaderElection.js"
import * as Resource from "../src/Resource.js"
import { kubeLayer, makeEnv } from "./support/env.js"

const env = makeEnv()
const TestLayer = KubeClient.layer.pipe(Layer.provideMerge(kubeLayer()), Layer.provideMerge(env.layer))

const timing = { leaseDuration: "1500 millis", renewDeadline: "1 second", retryPeriod: "200 millis" } as const
const LEASE_ON_WIRE = 2_000
const RETRY = 200

const dead = new KubeError.Transport({ reason: "Request", cause: new Error("the replica crashed") })

interface Replica {
  readonly election: LeaderElection.LeaderElection.Service
  readonly stop: (how: "crash" | "release") => Effect.Effect<void>
}

const start = (identity: string) =>
  Effect.gen(function*() {
    const client = yield* KubeClient.KubeClient
    const scope = yield* Scope.fork(yield* Effect.scope, "sequential")
    let crashed = false
    const guarded: KubeClient.KubeClient.Service = {
      ...client,
      get: (r, n, o) => Effect.suspend(() => crashed ? Effect.fail(dead) : client.get(r, n, o)),
      create: (r, o, opts) => Effect.suspend(() => crashed ? Effect.fail(dead) : client.create(r, o, opts)),
      replace: (r, o, opts) => Effect.suspend(() => crashed ? Effect.fail(dead) : client.replace(r, o, opts))
    }
    const election = yield* LeaseLeaderElection.make({ name: "http-operator", identity, ...timing }).pipe(
      Effect.provideService(KubeClient.KubeClient, guarded),
      Scope.provide(scope),
      Effect.orDie
    )
    const replica: Replica = {
      election,
      stop: (how) =>
        Effect.suspend(() => {
          if (how === "crash") crashed = true
          return Scope.close(scope, Exit.void)
        })
    }
    return replica
  })

/** Polls every 10 ms until `done`, for at most `max` ms; the time it held, or undefined. */
const waitUntil = (done: Effect.Effect<boolean>, max: number) =>
  Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + max
    while ((yield* Clock.currentTimeMillis) <= deadline) {
      if (yield* done) return yield* Clock.currentTimeMillis
      yield* Effect.sleep("10 millis")
    }
    return undefined
  })

const leaderCount = (replicas: ReadonlyArray<Replica>) =>
  Effect.map(Effect.filter(replicas, (r) => r.election.isLeader), (rs) => rs.length)

describe("LeaseLeaderElection over HTTP (TestApiServer, real time)", () => {
  it.live(
    "one leader; graceful release hands over within a retryPeriod; a crash within the lease duration",
    () =>
      Effect.gen(function*() {
        const client = yield* KubeClient.KubeClient
        const a = yield* start("http-a")
        assert.isDefined(yield* waitUntil(a.election.isLeader, 3_000), "the first replica leads")
        const b = yield* start("http-b")
        // watch for a second leader for a while: there must never be one
        const sampled = yield* waitUntil(Effect.map(leaderCount([a, b]), (n) => n !== 1), 1_000)
        assert.isUndefined(sampled, "exactly one leader for a second of renewals")
        assert.strictEqual((yield* client.get(Resource.Lease, "http-operator")).spec?.holderIdentity, "http-a")

        const releasedAt = yield* Clock.currentTimeMillis
        yield* a.stop("release")
        assert.isFalse(yield* a.election.isLeader)
        const bLeads = yield* waitUntil(b.election.isLeader, 2_000)
        assert(bLeads !== undefined, "the follower took over after the release")
        assert.isAtMost(bLeads - releasedAt, RETRY + 400, "within one retryPeriod (plus request latency)")

        const c = yield* start("http-c")
        yield* Effect.sleep("300 millis")
        assert.isFalse(yield* c.election.isLeader)
        const lastRenew = Date.parse((yield* client.get(Resource.Lease, "http-operator")).spec?.renewTime ?? "")
        const crashedAt = yield* Clock.currentTimeMillis
        yield* b.stop("crash")
        const cLeads = yield* waitUntil(c.election.isLeader, 5_000)
        assert(cLeads !== undefined, "the follower took over after the crash")
        assert.isAtLeast(cLeads, lastRenew + LEASE_ON_WIRE, "never while the crashed leader's lease was valid")
        assert.isAtMost(
          cLeads - crashedAt,
          LEASE_ON_WIRE + RETRY + 1_000,
          "within leaseDuration + retryPeriod (+ slack)"
        )
        const lease = yield* client.get(Resource.Lease, "http-operator")
        assert.strictEqual(lease.spec?.holderIdentity, "http-c")
        assert.strictEqual(lease.spec?.leaseTransitions, 2)
        yield* c.stop("release")
      }).pipe(Effect.provide(TestLayer)),
    20_000
  )
})
