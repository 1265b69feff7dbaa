/**
 * `npm run chaos -- [--seed N] [--duration S] [options]`: the webapp operator under seeded faults, then the
 * invariants. Exits 0 when every invariant holds, 1 on a violation (each one named), 2 on bad usage, 3 when the
 * run could not be set up, 130 when interrupted. See `docs/chaos.md`.
 */
import type { Result } from "./Harness.js"
import * as Harness from "./Harness.js"
import * as Plan from "./Plan.js"

const usage = `Usage: npm run chaos -- [options]

Runs the webapp operator (two replicas with leader election) against the test API server through a fault
proxy, with the server frozen, restarted and the leader killed on a seeded schedule, under create/edit/delete
load; then waits for convergence and checks the invariants (docs/chaos.md).

Options:
  --cluster embedded|real
                        embedded: the testkit's API server (default); real: etcd, kube-apiserver and
                        kube-controller-manager (npm run envtest:setup builds them), with etcd crashes and
                        compactions among the faults
  --seed N              the schedule's seed (default 1)
  --duration S          seconds of faults (default 60)
  --seeds A..B          run every seed from A to B in turn; stops at the first failure
  --keep-going          with --seeds: run every seed, then summarise (exit 1 if any failed)
  --converge S          seconds to wait for convergence after the faults (default 120, or 0.24 s per
                        initial app when more: 240 s for 1000)
  --operator harness|main
                        harness: chaos/operator.ts, the example's controller with leader election and
                        cleanup reports (default); main: the example's main job (one replica)
  --replicas N          operator replicas (default 2 with harness, 1 with main)
  --sharding            the replicas form a ring (Sharding.layer, ring "webapp") instead of electing a
                        leader; adds the faults partition, replica-kill, replica-add and the invariants
                        shard-* (labels) and overlap (no two replicas reconcile one object at once, from
                        the logs); harness operator only
  --apps N              WebApps created before the faults (default 12; 1000 with --sharding)
  --plan                print the schedule and exit
  --json PATH           write the result (figures and violations) as JSON
  --keep                keep the temporary folder (logs of every process, kubeconfigs)
  --help                this text
`

interface Args {
  readonly cluster: Plan.Cluster
  readonly seeds: ReadonlyArray<number>
  readonly duration: number
  readonly converge: number
  readonly operator: "harness" | "main"
  readonly replicas: number
  readonly sharding: boolean
  readonly apps: number
  readonly plan: boolean
  readonly json: string | undefined
  readonly keep: boolean
  readonly keepGoing: boolean
}

const parseArgs = (argv: ReadonlyArray<string>): Args | string => {
  let seeds: Array<number> = [1]
  let cluster: Plan.Cluster = "embedded"
  let duration = 60
  let converge: number | undefined
  let operator: "harness" | "main" = "harness"
  let replicas: number | undefined
  let sharding = false
  let apps: number | undefined
  let plan = false
  let json: string | undefined
  let keep = false
  let keepGoing = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [
      arg,
      undefined
    ]
    const value = () => {
      if (inline !== undefined) return inline
      const v = argv[++i]
      if (v === undefined) throw new Error(`${flag} needs a value`)
      return v
    }
    const integer = (min: number, max: number) => {
      const v = value()
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`${flag}: ${min}–${max}, got ${v}`)
      return Number(v)
    }
    try {
      switch (flag) {
        case "--seed":
          seeds = [integer(0, 2 ** 31)]
          break
        case "--cluster": {
          const v = value()
          if (v !== "embedded" && v !== "real") throw new Error("--cluster embedded|real")
          cluster = v
          break
        }
        case "--seeds": {
          const m = /^(\d+)\.\.(\d+)$/.exec(value())
          if (m === null || Number(m[2]) < Number(m[1]) || Number(m[2]) - Number(m[1]) > 1000) {
            throw new Error("--seeds A..B with A ≤ B, at most 1000 seeds")
          }
          seeds = Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, k) => Number(m[1]) + k)
          break
        }
        case "--duration":
          duration = integer(5, 3600)
          break
        case "--converge":
          converge = integer(10, 3600)
          break
        case "--operator": {
          const v = value()
          if (v !== "harness" && v !== "main") throw new Error("--operator harness|main")
          operator = v
          break
        }
        case "--replicas":
          replicas = integer(1, 5)
          break
        case "--sharding":
          sharding = true
          break
        case "--apps":
          apps = integer(1, 10_000)
          break
        case "--plan":
          plan = true
          break
        case "--json":
          json = value()
          break
        case "--keep":
          keep = true
          break
        case "--keep-going":
          keepGoing = true
          break
        case "--help":
        case "-h":
          return usage
        default:
          return `unknown option ${arg}\n\n${usage}`
      }
    } catch (e) {
      return `${(e as Error).message}\n\n${usage}`
    }
  }
  if (operator === "main" && replicas !== undefined && replicas > 1) {
    return "--operator main runs one replica: the main job exposes no leader election"
  }
  if (sharding && operator === "main") return "--sharding needs the harness operator (--operator harness)"
  return {
    cluster,
    seeds,
    duration,
    converge: converge ?? Math.max(120, Math.ceil((apps ?? (sharding ? 1000 : 12)) * 0.24)),
    operator,
    replicas: replicas ?? (operator === "main" ? 1 : 2),
    sharding,
    apps: apps ?? (sharding ? 1000 : 12),
    plan,
    json,
    keep,
    keepGoing
  }
}

const report = (result: Result, args: Args, seconds: number): string => {
  const lines: Array<string> = []
  const f = result.figures as any
  const kinds = Object.entries(result.faults.injected).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`)
  lines.push(`\n── chaos seed ${result.seed}, ${result.duration} s of faults (${seconds.toFixed(0)} s in all) ──`)
  lines.push(`faults injected: ${kinds.join(", ") || "none"}`)
  const skipped = Object.entries(result.faults.skipped)
  if (skipped.length > 0) lines.push(`faults skipped: ${skipped.map(([k, n]) => `${k} × ${n}`).join("; ")}`)
  const p = f.proxy
  lines.push(
    `proxy: connections ${p.connections.passthrough} pass-through + ${p.connections.terminating} terminating, ` +
      `resets ${p.resets}, stalled ${p.stalledConnections}, blackholed ${p.blackholedConnections}, ` +
      `fragments ${p.fragments} (${p.midCharacterSplits} inside a UTF-8 character), delayed chunks ${p.delayedChunks}`
  )
  const silent = f.silentWatches as ReadonlyArray<{ seconds: number; closed: boolean }>
  if (silent.length > 0) {
    lines.push(
      `silent (blackholed) watches: ${
        silent.map((x) =>
          x.closed ? `closed by the operator after ${x.seconds.toFixed(1)} s` : `open ${x.seconds.toFixed(1)} s`
        )
          .join("; ")
      }`
    )
  }
  const l = f.load
  lines.push(
    `load: ${Object.entries(l.ops).map(([k, n]) => `${k} ${n}`).join(", ")}; refused ${l.rejected}, ` +
      `unanswered ${l.unanswered}; ${l.live} WebApps live of ${l.webapps} names`
  )
  const o = f.operators
  lines.push(
    `operators: ${o.replicas} × ${o.mode}, ${o.starts} starts, apiserver starts ${f.apiserver.starts}` +
      (f.apiserver.cluster === "real"
        ? `, etcd restarts ${f.apiserver.etcdRestarts}, compactions ${f.apiserver.compactions}`
        : "") +
      (o.exits.length > 0 ? `; exits: ${o.exits.join("; ")}` : "")
  )
  const s = f.sharding
  if (s !== undefined) {
    lines.push(
      `sharding: ring ${s.ring} (${
        s.mode ?? "mode unknown"
      }), ${s.replicas} replicas, ${s.identities} identities; reconciles in the logs ` +
        `${s.reconciles.work} work + ${s.reconciles.release} releases + ${s.reconciles.gated} gated ` +
        `(${s.unclosed} ended with their process); ${s.overlaps} overlap(s); moves ${s.moves}, releases ${s.releases}`
    )
    for (const x of s.partitions) {
      lines.push(
        `  partition of ${x.process} for ${x.seconds.toFixed(1)} s: ` +
          (x.stoppedAfter === undefined ? "it did not end" : `it ended ${x.stoppedAfter.toFixed(1)} s in`)
      )
    }
  }
  const r = f.reconciles
  lines.push(
    `reconciles: ${r.success} success, ${r.requeueAfter} requeue_after, ${r.requeue} requeue, ${r.error} error ` +
      `(errors ${r.errors}, terminal ${r.terminalErrors}, panics ${r.panics})`
  )
  const watch = Object.entries(f.watch)
  if (watch.length > 0) lines.push(`watch metrics: ${watch.map(([k, v]) => `${k} ${v}`).join(", ")}`)
  lines.push(
    typeof f.cleanups === "string"
      ? `cleanups: ${f.cleanups}`
      : `cleanups: ${f.cleanups.cleanups} for ${f.cleanups.deletedWithFinalizer} deleted WebApps ` +
        `(${f.cleanups.repeatedBeforeRelease} repeated before the release)`
  )
  lines.push(
    result.convergenceSeconds === undefined
      ? `convergence: NOT within ${args.converge} s`
      : `convergence: ${result.convergenceSeconds.toFixed(1)} s after the faults stopped`
  )
  if (result.violations.length === 0) {
    lines.push(`OK: every invariant holds`)
  } else {
    const byRule = new Map<string, number>()
    for (const v of result.violations) byRule.set(v.rule, (byRule.get(v.rule) ?? 0) + 1)
    lines.push(
      `FAILED: ${result.violations.length} violation(s): ${[...byRule].map(([k, n]) => `${k} × ${n}`).join(", ")}`
    )
    for (const v of result.violations.slice(0, 40)) lines.push(`  ${v.rule}: ${v.subject}: ${v.detail}`)
    if (result.violations.length > 40) lines.push(`  … and ${result.violations.length - 40} more`)
    lines.push(
      `reproduce: npm run chaos -- --seed ${result.seed} --duration ${result.duration}` +
        (args.cluster === "real" ? " --cluster real" : "") +
        (args.operator === "main" ? " --operator main" : "") +
        (args.sharding ? ` --sharding --replicas ${args.replicas} --apps ${args.apps}` : "") + " --keep"
    )
  }
  if (result.tempDir !== undefined) lines.push(`logs: ${result.tempDir}/logs`)
  return lines.join("\n")
}

const main = async (): Promise<number> => {
  const args = parseArgs(process.argv.slice(2))
  if (typeof args === "string") {
    const help = args === usage
    ;(help ? console.log : console.error)(args)
    return help ? 0 : 2
  }
  if (args.plan) {
    for (const seed of args.seeds) {
      const plan = Plan.make(seed, args.duration, args.cluster, { sharding: args.sharding, apps: args.apps })
      console.log(`seed ${seed}, ${args.duration} s: ${plan.faults.length} faults, ${plan.load.length} load operations`)
      for (const fault of plan.faults) console.log(`  ${Plan.describeFault(fault)}`)
    }
    return 0
  }
  const interrupt = new AbortController()
  // the first Ctrl-C stops the run cleanly; a second one exits at once (the exit hook still kills the children)
  const onSignal = () => {
    if (interrupt.signal.aborted) process.exit(130)
    interrupt.abort()
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  const results: Array<unknown> = []
  try {
    for (const seed of args.seeds) {
      const started = Date.now()
      const plan = Plan.make(seed, args.duration, args.cluster, { sharding: args.sharding, apps: args.apps })
      console.log(
        `chaos: seed ${seed} on the ${args.cluster} cluster, ${args.duration} s of faults, ${plan.faults.length} planned`
      )
      let result: Result
      try {
        result = await Harness.run({
          plan,
          cluster: args.cluster,
          operator: args.operator,
          replicas: args.replicas,
          sharding: args.sharding ? "webapp" : undefined,
          convergeTimeout: args.converge,
          stability: 10,
          keep: args.keep,
          log: (line) => console.log(line)
        }, interrupt.signal)
      } catch (e) {
        if (e instanceof Harness.Interrupted) {
          console.error("chaos: interrupted; processes stopped, temporary files removed")
          return 130
        }
        if (e instanceof Harness.SetupFailed) {
          console.error(`chaos: seed ${seed}: setup failed: ${e.message}`)
          return 3
        }
        throw e
      }
      console.log(report(result, args, (Date.now() - started) / 1000))
      results.push({ ...result, seconds: (Date.now() - started) / 1000 })
      if (args.json !== undefined) {
        const fs = await import("node:fs")
        fs.writeFileSync(args.json, JSON.stringify(args.seeds.length === 1 ? results[0] : results, null, 2))
      }
      if (result.violations.length > 0 && !args.keepGoing) return 1
    }
    const failed = (results as Array<Result>).filter((r) => r.violations.length > 0)
    if (args.seeds.length > 1) {
      console.log(
        `\nchaos: ${results.length - failed.length} of ${results.length} seeds green` +
          (failed.length > 0 ? `; failed: ${failed.map((r) => r.seed).join(", ")}` : "")
      )
    }
    return failed.length > 0 ? 1 : 0
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`chaos: ${e instanceof Error ? e.stack : String(e)}`)
    process.exit(3)
  }
)
