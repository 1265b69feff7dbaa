import { LeadershipLost } from "@reconcile/core/LeaderElection"
import type { LeaderElection } from "@reconcile/core/LeaderElection"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"
import * as Diagnosis from "../Diagnosis.js"
import * as KubeClient from "../KubeClient.js"
import * as KubeError from "../KubeError.js"
import { LeaseLeaderElectionError, type Options } from "../LeaseLeaderElection.js"
import * as Resource from "../Resource.js"

/**
 * client-go's `leader_election_master_status` (which controller-runtime serves): 1 while this replica holds the
 * Lease `name`, else 0. @internal
 */
export const masterStatus = (name: string): Metric.Gauge<number> =>
  Metric.gauge("leader_election_master_status", {
    description: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 " +
      "indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    attributes: { name }
  })

/** `metav1.MicroTime`: RFC 3339 with microseconds. */
const microTime = (millis: number): string => new Date(millis).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

type LeaseSpec = NonNullable<Resource.Lease["spec"]>

/** The content of the leader election record, for "did it change since we last looked". */
const recordKey = (spec: LeaseSpec | undefined): string =>
  JSON.stringify([
    spec?.holderIdentity ?? "",
    spec?.leaseDurationSeconds ?? 0,
    spec?.acquireTime ?? "",
    spec?.renewTime ?? "",
    spec?.leaseTransitions ?? 0
  ])

/** @internal */
export const defaultIdentity: Effect.Effect<string> = Effect.map(
  Effect.all([
    Random.nextIntBetween(0, 0x10000000, { halfOpen: true }),
    Random.nextIntBetween(0, 0x10000000, { halfOpen: true })
  ]),
  ([a, b]) => `${Os.hostname()}_${a.toString(16).padStart(7, "0")}${b.toString(16).padStart(7, "0")}`
)

const validate = (options: Options) => {
  const leaseDuration = Duration.toMillis(options.leaseDuration ?? "15 seconds")
  const renewDeadline = Duration.toMillis(options.renewDeadline ?? "10 seconds")
  const retryPeriod = Duration.toMillis(options.retryPeriod ?? "2 seconds")
  const jitter = options.jitter ?? 0
  const fail = (reason: string) => Effect.fail(new LeaseLeaderElectionError({ reason }))
  if (options.name === "") return fail("name must not be empty")
  if (options.identity === "") return fail("identity must not be empty")
  if (!(retryPeriod > 0) || !(renewDeadline > 0) || !(leaseDuration > 0)) {
    return fail("leaseDuration, renewDeadline and retryPeriod must be positive")
  }
  if (!(jitter >= 0)) return fail("jitter must not be negative")
  if (!(leaseDuration > renewDeadline)) return fail("leaseDuration must be greater than renewDeadline")
  if (!(renewDeadline > retryPeriod * (1 + jitter))) {
    return fail("renewDeadline must be greater than retryPeriod · (1 + jitter)")
  }
  return Effect.succeed({ leaseDuration, renewDeadline, retryPeriod, jitter })
}

/** What sharding adds to an election (internal: `Sharding` holds its Leases with it). @internal */
export interface Extra {
  /** Labels of the Lease when this replica creates it (a shard Lease carries its ring's). */
  readonly labels?: Readonly<Record<string, string>> | undefined
  /** Annotations this replica writes with every acquisition and renewal (what it publishes through its Lease). */
  readonly annotations?: (() => Readonly<Record<string, string>>) | undefined
}

/** An election, and a way to renew at once rather than at the next period (to publish new annotations). @internal */
export interface Elected extends LeaderElection.Service {
  readonly renewSoon: Effect.Effect<void>
}

/** @internal */
export const make = (
  options: Options,
  extra?: Extra
): Effect.Effect<Elected, LeaseLeaderElectionError, KubeClient.KubeClient | Scope.Scope> =>
  Effect.gen(function*() {
    const { jitter, leaseDuration, renewDeadline, retryPeriod } = yield* validate(options)
    const client = yield* KubeClient.KubeClient
    const identity = options.identity ?? (yield* defaultIdentity)
    const name = options.name
    const namespace = options.namespace ?? "default"
    const lease = `${namespace}/${name}`
    // whole seconds on the wire, rounded up: followers never wait less than leaseDuration
    const leaseSeconds = Math.ceil(leaseDuration / 1000)

    const elected = yield* Deferred.make<void>()
    const soon = yield* Queue.sliding<void>(1)
    const lost = yield* Deferred.make<LeadershipLost>()
    let leader = false
    const status = masterStatus(name)
    yield* Metric.update(status, 0)
    /** The record last observed, when this replica first observed it (its own clock), and the Lease object. */
    let observedKey: string | undefined
    let observedTime = 0
    let current: Resource.Lease | undefined
    let lastFailure = "no attempt yet"
    /** The error of the last failed try, if it was an API error. */
    let lastError: KubeError.KubeError | undefined
    /** When the Lease held by another replica expires in our eyes (after a failed try). */
    let expiresAt: number | undefined

    const observe = (object: Resource.Lease, at: number) => {
      current = object
      const key = recordKey(object.spec)
      if (key !== observedKey) {
        observedKey = key
        observedTime = at
      }
    }

    const record = (spec: LeaseSpec | undefined, start: number, ours: boolean): LeaseSpec => ({
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: leaseSeconds,
      acquireTime: ours && spec?.acquireTime !== undefined ? spec.acquireTime : microTime(start),
      renewTime: microTime(start),
      leaseTransitions: ours ? spec?.leaseTransitions ?? 0 : spec === undefined ? 0 : (spec.leaseTransitions ?? 0) + 1
    })

    /**
     * One try to acquire or renew (client-go's `tryAcquireOrRenew`): the start
     * time of the try when this replica holds the Lease afterwards.
     */
    const attempt: Effect.Effect<Option.Option<number>> = Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      expiresAt = undefined
      lastError = undefined
      const found = yield* KubeError.ignoreNotFound(client.get(Resource.Lease, name, { namespace }))
      if (Option.isNone(found)) {
        const created = yield* client.create(Resource.Lease, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: {
            name,
            namespace,
            ...(extra?.labels === undefined ? {} : { labels: { ...extra.labels } }),
            ...(extra?.annotations === undefined ? {} : { annotations: { ...extra.annotations() } })
          },
          spec: record(undefined, start, false)
        })
        observe(created, yield* Clock.currentTimeMillis)
        return Option.some(start)
      }
      const existing = found.value
      // observed after the read: never earlier than the write that produced the record
      const now = yield* Clock.currentTimeMillis
      observe(existing, now)
      const holder = existing.spec?.holderIdentity ?? ""
      const ours = holder === identity
      if (holder !== "" && !ours) {
        const seconds = existing.spec?.leaseDurationSeconds
        const duration = seconds !== undefined && seconds > 0 ? seconds * 1000 : leaseDuration
        if (observedTime + duration > now) {
          lastFailure = `the lease is held by ${holder}`
          expiresAt = observedTime + duration
          return Option.none()
        }
      }
      const updated = yield* client.replace(Resource.Lease, {
        ...existing,
        ...(extra?.annotations === undefined ? {} : {
          metadata: { ...existing.metadata, annotations: { ...existing.metadata?.annotations, ...extra.annotations() } }
        }),
        spec: record(existing.spec, start, ours)
      })
      observe(updated, yield* Clock.currentTimeMillis)
      return Option.some(start)
    }).pipe(
      Effect.catch((error) =>
        Effect.sync(() => {
          lastFailure = error.message
          lastError = error
          return Option.none()
        })
      )
    )

    /** An attempt that gives up after `millis`. */
    const attemptWithin = (millis: number) =>
      Effect.map(Effect.timeoutOption(attempt, millis), (result) => {
        // no answer in time: that is the reason to report, not an older failure
        if (Option.isNone(result)) lastFailure = `no answer within ${Duration.format(Duration.millis(millis))}`
        return Option.flatten(result)
      })

    const acquire: Effect.Effect<number, KubeError.KubeError> = Effect.gen(function*() {
      let first = true
      while (true) {
        const acquired = yield* attemptWithin(renewDeadline)
        if (Option.isSome(acquired)) return acquired.value
        // at start, what retrying will not fix (a missing namespace, 403, 401, an unreachable server) stops here
        if (first && lastError !== undefined && Diagnosis.isDiagnosed(lastError)) return yield* Effect.fail(lastError)
        first = false
        const r = jitter > 0 ? yield* Random.next : 0
        let wait = retryPeriod * (1 + jitter * r)
        // try again the moment the holder's lease expires rather than up to a period later
        if (expiresAt !== undefined) wait = Math.max(0, Math.min(wait, expiresAt - (yield* Clock.currentTimeMillis)))
        yield* Effect.sleep(Duration.millis(wait))
      }
    })

    /** Renews every retryPeriod; returns once no renewal succeeded within renewDeadline. */
    const renew = (acquiredAt: number): Effect.Effect<void> =>
      Effect.gen(function*() {
        let lastRenew = acquiredAt
        while (true) {
          // every retryPeriod, or sooner when asked (`renewSoon`)
          yield* Effect.timeoutOption(Queue.take(soon), retryPeriod)
          while (true) {
            const now = yield* Clock.currentTimeMillis
            const deadline = lastRenew + renewDeadline
            if (now >= deadline) return
            const renewed = yield* attemptWithin(deadline - now)
            if (Option.isSome(renewed)) {
              lastRenew = renewed.value
              break
            }
            const after = yield* Clock.currentTimeMillis
            if (after >= deadline) return
            yield* Effect.sleep(Duration.millis(Math.min(retryPeriod, deadline - after)))
          }
        }
      })

    const run = Effect.gen(function*() {
      const acquiredAt = yield* Effect.catch(acquire, (error) =>
        Effect.gen(function*() {
          // the controllers stop on `awaitLoss`, so the Manager exits with the reason (and the fix) at once: that
          // failure is the report (a main program prints it once), so it is logged at debug only
          const reason = `cannot acquire the lease ${lease}: ${error.message}`
          yield* Effect.logDebug(reason)
          yield* Deferred.succeed(lost, new LeadershipLost({ identity, reason }))
          return yield* Effect.interrupt
        }))
      leader = true
      yield* Metric.update(status, 1)
      yield* Deferred.succeed(elected, undefined)
      yield* Effect.logInfo("acquired leadership")
      yield* renew(acquiredAt)
      leader = false
      yield* Metric.update(status, 0)
      const within = Duration.format(Duration.millis(renewDeadline))
      const reason = `no renewal of lease ${lease} succeeded within ${within}: ${lastFailure}`
      yield* Deferred.succeed(lost, new LeadershipLost({ identity, reason }))
      yield* Effect.logWarning("leadership lost").pipe(Effect.annotateLogs({ reason }))
    })

    /** Gives the Lease up: no holder, a one-second duration, so a follower takes it at its next try. */
    const release = Effect.gen(function*() {
      const object = current
      if (object === undefined) return
      const now = yield* Clock.currentTimeMillis
      yield* client.replace(Resource.Lease, {
        ...object,
        spec: {
          ...object.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: object.spec?.leaseTransitions ?? 0
        }
      })
      yield* Effect.logInfo("released leadership")
    }).pipe(
      Effect.timeout(Duration.millis(renewDeadline)),
      Effect.catch((error) =>
        Effect.logWarning("could not release the lease").pipe(Effect.annotateLogs({ error: error.message }))
      )
    )

    const annotate = Effect.annotateLogs({ lease, identity })
    const fiber = yield* Effect.forkDetach(annotate(run))
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Fiber.interrupt(fiber)
        const wasLeader = leader
        // not the leader any more before anyone can see the Lease released
        leader = false
        yield* Metric.update(status, 0)
        if (wasLeader && options.releaseOnCancel !== false) yield* release
      }).pipe(annotate)
    )

    return {
      awaitLeadership: Deferred.await(elected),
      awaitLoss: Deferred.await(lost),
      isLeader: Effect.sync(() => leader),
      renewSoon: Effect.asVoid(Queue.offer(soon, undefined))
    } satisfies Elected
  })
