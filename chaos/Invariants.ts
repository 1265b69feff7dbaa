/**
 * The invariants a chaos run ends with, as a pure function of what the server holds, what the harness intended,
 * what it observed and which cleanups the operators reported. Each violation names its rule and its object.
 *
 * - `not-ready`, `stale-generation`: every live WebApp is Ready at its last generation (`Ready=True` with
 *   `observedGeneration` = `metadata.generation`, `status.observedGeneration` too, `readyReplicas` =
 *   `spec.replicas`).
 * - `missing-finalizer`: every live WebApp carries the operator's finalizer.
 * - `missing-child`, `wrong-owner`, `child-drift`, `extra-child`: exactly its owned objects — a Deployment and a
 *   Service of its name, controlled by its uid, matching its spec; nothing else owned by it.
 * - `orphan`: no object owned by a WebApp uid the server does not have (or managed by the operator without an
 *   owner).
 * - `registry-missing`, `registry-stale`, `registry-of-deleted`: the registry ConfigMap holds exactly one entry
 *   per live WebApp, with its image; none for a name that has no WebApp at all.
 * - `stuck-terminating`: no WebApp, Deployment or Service keeps a `deletionTimestamp` (the children and the
 *   registry entry of a WebApp still deleting are reported with it, not as orphans).
 * - `cleanup-missing`, `cleanup-after-release`, `cleanup-of-live`: every deleted WebApp that carried the
 *   finalizer was cleaned up, no cleanup ran after the harness saw the object gone (its finalizer released),
 *   and none for an object that is live. A cleanup repeated *before* the release is allowed (the Finalizer's
 *   at-least-once contract: the release may fail after the cleanup succeeded) and counted.
 * - `intent`: the live WebApps are exactly the ones the harness's acknowledged writes say, with those specs.
 * - `shard-unassigned`, `shard-not-live`, `shard-draining`, `shard-child` (sharded runs): every live WebApp is
 *   labelled with a live shard of the ring and not being drained, and its Deployment and Service carry its label.
 *
 * The sharding rule read from the logs (no two replicas reconcile one object at once) is `chaos/Overlap.ts`'s.
 */
import type { Spec } from "./Load.js"
import type { Seen } from "./Observer.js"

/** What the server holds (in the run's namespace). */
export interface Snapshot {
  readonly webapps: ReadonlyArray<any>
  readonly deployments: ReadonlyArray<any>
  readonly services: ReadonlyArray<any>
  /** The registry ConfigMap's data; undefined when it does not exist. */
  readonly registry: Readonly<Record<string, string>> | undefined
}

/** A cleanup an operator reported. */
export interface Cleanup {
  readonly uid: string
  readonly name: string
  /** Epoch ms when it had succeeded. */
  readonly at: number
  /** Which operator process reported it. */
  readonly replica: string
}

/** One broken rule. */
export interface Violation {
  readonly rule: string
  readonly subject: string
  readonly detail: string
}

/** Everything {@link check} needs. */
export interface Input {
  readonly snapshot: Snapshot
  /** name → spec of every WebApp that must be live; undefined: not checked (intents not settled yet). */
  readonly wanted: ReadonlyMap<string, Spec> | undefined
  /** Names whose intended state is unknown (a write without an answer the server's state does not explain). */
  readonly unresolved?: ReadonlySet<string> | undefined
  readonly seen: ReadonlyMap<string, Seen>
  /** undefined: the operator reports no cleanups (they are not checked). */
  readonly cleanups: ReadonlyArray<Cleanup> | undefined
  readonly finalizer: string
  /** A sharded run: the ring's labels and the identities of the replicas running at the end. */
  readonly shards?: Shards | undefined
}

/** What the sharding rules check against. */
export interface Shards {
  /** `shard.reconcile.dev/<ring>`. */
  readonly label: string
  /** `drain.shard.reconcile.dev/<ring>`. */
  readonly drainLabel: string
  /** The identities of the live shards. */
  readonly live: ReadonlySet<string>
}

/** The figures of the cleanups. */
export interface CleanupFigures {
  readonly deletedWithFinalizer: number
  readonly cleanups: number
  /** Cleanups beyond the first for one object, all before its release. */
  readonly repeatedBeforeRelease: number
}

const isDeleting = (o: any) => o?.metadata?.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null

const controllerOf = (o: any): any | undefined =>
  (o?.metadata?.ownerReferences ?? []).find((r: any) => r.controller === true)

const webappOwners = (o: any): ReadonlyArray<any> =>
  (o?.metadata?.ownerReferences ?? []).filter((r: any) => r.kind === "WebApp")

const condition = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type)

/**
 * The rules about what happened rather than what is: once broken they stay broken, so convergence (of the
 * state) is judged without them.
 */
export const historical: ReadonlySet<string> = new Set(["cleanup-after-release", "cleanup-of-live"])

/** Checks every rule; an empty result means the run converged and nothing was violated. */
export const check = (input: Input): ReadonlyArray<Violation> => {
  const out: Array<Violation> = []
  const add = (rule: string, subject: string, detail: string) => out.push({ rule, subject, detail })
  const { snapshot } = input
  const live = snapshot.webapps.filter((w) => !isDeleting(w))
  const liveByUid = new Map(live.map((w) => [w.metadata.uid as string, w]))
  const liveByName = new Map(live.map((w) => [w.metadata.name as string, w]))
  // a WebApp still deleting keeps its children and registry entry until its cleanup: only stuck-terminating
  const deletingByUid = new Map(snapshot.webapps.filter(isDeleting).map((w) => [w.metadata.uid as string, w]))
  const deletingNames = new Set(snapshot.webapps.filter(isDeleting).map((w) => w.metadata.name as string))
  const deploymentsByName = new Map(snapshot.deployments.map((d) => [d.metadata.name as string, d]))
  const servicesByName = new Map(snapshot.services.map((s) => [s.metadata.name as string, s]))

  for (const w of snapshot.webapps) {
    if (isDeleting(w)) {
      const finalizers = (w.metadata.finalizers ?? []).join(", ")
      add(
        "stuck-terminating",
        `WebApp ${w.metadata.name}`,
        `deleting since ${w.metadata.deletionTimestamp}, finalizers [${finalizers}]` +
          (snapshot.registry?.[w.metadata.name] !== undefined ? ", registry entry still there" : "")
      )
    }
  }
  for (const [kind, list] of [["Deployment", snapshot.deployments], ["Service", snapshot.services]] as const) {
    for (const o of list) {
      if (isDeleting(o)) add("stuck-terminating", `${kind} ${o.metadata.name}`, "has a deletionTimestamp")
    }
  }

  if (input.wanted !== undefined) {
    for (const [name, spec] of input.wanted) {
      const w = liveByName.get(name)
      if (w === undefined) add("intent", `WebApp ${name}`, "must exist (acknowledged) but is not live")
      else if (w.spec?.image !== spec.image || w.spec?.replicas !== spec.replicas || w.spec?.port !== spec.port) {
        add("intent", `WebApp ${name}`, `spec ${JSON.stringify(w.spec)}, the harness wrote ${JSON.stringify(spec)}`)
      }
    }
    for (const name of liveByName.keys()) {
      if (!input.wanted.has(name) && input.unresolved?.has(name) !== true) {
        add("intent", `WebApp ${name}`, "is live but the harness deleted it (or never made it)")
      }
    }
  }

  for (const w of live) {
    const name = w.metadata.name as string
    const uid = w.metadata.uid as string
    const subject = `WebApp ${name}`
    const generation = w.metadata.generation
    const ready = condition(w, "Ready")
    if (!(w.metadata.finalizers ?? []).includes(input.finalizer)) add("missing-finalizer", subject, "no finalizer")
    if (ready?.status !== "True") {
      add("not-ready", subject, `Ready=${ready?.status ?? "absent"} (${ready?.reason ?? ""}: ${ready?.message ?? ""})`)
    } else if (ready.observedGeneration !== generation || w.status?.observedGeneration !== generation) {
      add(
        "stale-generation",
        subject,
        `generation ${generation}, Ready at ${ready.observedGeneration}, status at ${w.status?.observedGeneration}`
      )
    } else if (w.status?.readyReplicas !== w.spec?.replicas) {
      add("not-ready", subject, `readyReplicas ${w.status?.readyReplicas} of ${w.spec?.replicas}`)
    }

    const deployment = deploymentsByName.get(name)
    const service = servicesByName.get(name)
    for (const [kind, child] of [["Deployment", deployment], ["Service", service]] as const) {
      if (child === undefined) {
        add("missing-child", subject, `no ${kind}`)
        continue
      }
      const owner = controllerOf(child)
      if (owner?.uid !== uid) {
        add("wrong-owner", `${kind} ${name}`, `controlled by ${owner?.uid ?? "nobody"}, the WebApp's uid is ${uid}`)
      }
    }
    if (deployment !== undefined) {
      const container = deployment.spec?.template?.spec?.containers?.[0]
      const drift: Array<string> = []
      if (deployment.spec?.replicas !== w.spec?.replicas) drift.push(`replicas ${deployment.spec?.replicas}`)
      if (container?.image !== w.spec?.image) drift.push(`image ${container?.image}`)
      if (container?.ports?.[0]?.containerPort !== w.spec?.port) {
        drift.push(`port ${container?.ports?.[0]?.containerPort}`)
      }
      if (drift.length > 0) add("child-drift", `Deployment ${name}`, `${drift.join(", ")} vs ${JSON.stringify(w.spec)}`)
    }
    if (service !== undefined && service.spec?.ports?.[0]?.port !== w.spec?.port) {
      add("child-drift", `Service ${name}`, `port ${service.spec?.ports?.[0]?.port} vs ${w.spec?.port}`)
    }
    if (input.shards !== undefined) shardRules(input.shards, w, [["Deployment", deployment], ["Service", service]], add)
    const value = snapshot.registry?.[name]
    if (value === undefined) add("registry-missing", subject, "no registry entry")
    else if (value !== w.spec?.image) {
      add("registry-stale", subject, `registry says ${value}, spec.image is ${w.spec?.image}`)
    }
  }

  for (const [kind, list] of [["Deployment", snapshot.deployments], ["Service", snapshot.services]] as const) {
    for (const o of list) {
      const owners = webappOwners(o)
      const managed = o.metadata?.labels?.["app.kubernetes.io/managed-by"] === "webapp-controller"
      if (owners.length === 0) {
        if (managed) add("orphan", `${kind} ${o.metadata.name}`, "managed by the operator but owned by no WebApp")
        continue
      }
      for (const ref of owners) {
        const owner = liveByUid.get(ref.uid)
        if (owner === undefined && deletingByUid.has(ref.uid)) continue
        if (owner === undefined) {
          add("orphan", `${kind} ${o.metadata.name}`, `owned by WebApp ${ref.name} uid ${ref.uid}, which is not live`)
        } else if (owner.metadata.name !== o.metadata.name) {
          add("extra-child", `${kind} ${o.metadata.name}`, `owned by WebApp ${owner.metadata.name}`)
        }
      }
    }
  }

  for (const [key, value] of Object.entries(snapshot.registry ?? {})) {
    if (!liveByName.has(key) && !deletingNames.has(key)) {
      add("registry-of-deleted", `registry entry ${key}`, `${value}: no live WebApp ${key}`)
    }
  }

  if (input.cleanups !== undefined) {
    const byUid = new Map<string, Array<Cleanup>>()
    for (const c of input.cleanups) {
      const list = byUid.get(c.uid) ?? []
      list.push(c)
      byUid.set(c.uid, list)
    }
    for (const seen of input.seen.values()) {
      if (seen.goneAt === undefined) continue
      const cleanups = byUid.get(seen.uid) ?? []
      const subject = `WebApp ${seen.name} uid ${seen.uid}`
      if (seen.hadFinalizer && cleanups.length === 0) {
        add("cleanup-missing", subject, "gone without a reported cleanup")
      }
      for (const c of cleanups) {
        if (c.at > seen.goneAt) {
          add(
            "cleanup-after-release",
            subject,
            `cleanup by ${c.replica} ${c.at - seen.goneAt} ms after the object was seen gone`
          )
        }
      }
    }
    for (const [uid, cleanups] of byUid) {
      const w = liveByUid.get(uid)
      if (w !== undefined) {
        add("cleanup-of-live", `WebApp ${w.metadata.name} uid ${uid}`, `${cleanups.length} cleanup(s) of a live object`)
      }
    }
  }
  return out
}

/** The sharding rules of one live WebApp and its children. */
const shardRules = (
  shards: Shards,
  w: any,
  children: ReadonlyArray<readonly [string, any]>,
  add: (rule: string, subject: string, detail: string) => void
) => {
  const subject = `WebApp ${w.metadata.name}`
  const labels = w.metadata.labels ?? {}
  const shard: string | undefined = labels[shards.label]
  if (shard === undefined) add("shard-unassigned", subject, `no ${shards.label} label`)
  else if (!shards.live.has(shard)) {
    add("shard-not-live", subject, `assigned to ${shard}, not a live shard (live: ${[...shards.live].join(", ")})`)
  }
  if (labels[shards.drainLabel] !== undefined) {
    add("shard-draining", subject, `still labelled ${shards.drainLabel}=${labels[shards.drainLabel]}`)
  }
  for (const [kind, child] of children) {
    if (child === undefined || shard === undefined) continue
    const theirs = child.metadata?.labels?.[shards.label]
    if (theirs !== shard) {
      add("shard-child", `${kind} ${w.metadata.name}`, `labelled ${theirs ?? "(none)"}, its owner ${shard}`)
    }
  }
}

/** Counts cleanups per deleted object. */
export const cleanupFigures = (
  seen: ReadonlyMap<string, Seen>,
  cleanups: ReadonlyArray<Cleanup>
): CleanupFigures => {
  let deletedWithFinalizer = 0
  let repeatedBeforeRelease = 0
  for (const s of seen.values()) {
    if (s.goneAt === undefined || !s.hadFinalizer) continue
    deletedWithFinalizer++
    const before = cleanups.filter((c) => c.uid === s.uid && c.at <= s.goneAt!).length
    if (before > 1) repeatedBeforeRelease += before - 1
  }
  return { deletedWithFinalizer, cleanups: cleanups.length, repeatedBeforeRelease }
}
