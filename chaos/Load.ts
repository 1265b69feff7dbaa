/**
 * The user's side of a chaos run: creates, edits and deletes WebApps through the direct connection, and keeps the
 * intended state — what every acknowledged write says the cluster must hold. A write without an answer (the
 * server frozen, restarting) may or may not have been applied: the app becomes uncertain between its state before
 * and after, and {@link Load.settle} later adopts whichever of the two the server holds (anything else is a
 * violation: a lost or invented write).
 */
import type { Direct } from "./Direct.js"
import { NoAnswer } from "./Direct.js"
import type { LoadOp } from "./Plan.js"

/** The spec of a WebApp, as the harness writes it. */
export interface Spec {
  readonly image: string
  readonly replicas: number
  readonly port: number
}

/** One possible state of an app: absent, or present with a spec. */
export interface State {
  readonly present: boolean
  readonly spec: Spec | undefined
}

/** What the harness intends for one name. */
export interface Intent {
  readonly name: string
  /** The state after the last acknowledged write, or (uncertain) the candidates. */
  states: ReadonlyArray<State>
  /** How many times the name was created (a recreated name is a new object with a new uid). */
  incarnations: number
}

/** Counters of the load. */
export interface LoadStats {
  readonly ops: Record<LoadOp["op"], number>
  /** Writes the server refused (e.g. AlreadyExists while an old object of the name is still terminating). */
  rejected: number
  /** Writes without an answer. */
  unanswered: number
}

/** The group, version and plural of WebApps. */
export const webappsPath = (namespace: string, name?: string) =>
  `/apis/apps.reconcile.dev/v1/namespaces/${namespace}/webapps${name === undefined ? "" : `/${name}`}`

/** Notes written into an annotation: multibyte UTF-8 (2, 3 and 4 bytes) that the proxy splits mid-character. */
const notes = [
  "déjà vu — crème brûlée, naïve façade",
  "日本語のテキストと漢字の列",
  "🚀🔥✨🧪 emoji of four bytes each 🛰️",
  "Ελληνικά και Кириллица и ↯ symbols ∑∫√",
  "mixed: ü日🚀é語🔥ñ"
]

const noteOf = (variant: number, seq: number) => `${notes[variant % notes.length]} #${seq}`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const sameSpec = (a: Spec | undefined, b: Spec | undefined) =>
  a !== undefined && b !== undefined && a.image === b.image && a.replicas === b.replicas && a.port === b.port

/** Whether a server object matches a state (present with that spec, or absent). */
export const matches = (state: State, object: any | undefined): boolean =>
  state.present
    ? object !== undefined && sameSpec(state.spec, object.spec)
    : object === undefined

/** The load and the intended state. */
export class Load {
  readonly intents = new Map<string, Intent>()
  readonly stats: LoadStats = {
    ops: { create: 0, edit: 0, delete: 0, "edit-delete": 0, replace: 0, recreate: 0, "poison-delete": 0 },
    rejected: 0,
    unanswered: 0
  }
  /** Problems seen while writing (e.g. an acknowledged app answering 404): violations, checked at the end. */
  readonly anomalies: Array<string> = []
  /** Names that must end deleted whatever the answers were (poisoned apps). */
  private readonly mustDelete = new Set<string>()
  private seq = 0
  private nextName = 0

  constructor(
    private readonly direct: Direct,
    readonly namespace: string,
    private readonly trace: (line: string) => void = () => undefined,
    /** At most `cap` live apps (creates become edits); at most `floor` (deletes become creates). */
    private readonly limits: { readonly cap: number; readonly floor: number } = { cap: 40, floor: 8 }
  ) {}

  /** Names whose intended state may be present. */
  live(): ReadonlyArray<string> {
    return [...this.intents.values()].filter((i) => i.states.some((s) => s.present)).map((i) => i.name).sort()
  }

  /** Names whose intended state is certainly absent (candidates for a recreate). */
  gone(): ReadonlyArray<string> {
    return [...this.intents.values()].filter((i) => i.states.every((s) => !s.present)).map((i) => i.name).sort()
  }

  /** A spec derived from `variant`, with an image unique to this write. */
  private spec(name: string, variant: number): Spec {
    this.seq++
    return {
      image: `registry.example/chaos/${name}:w${this.seq}`,
      replicas: 1 + (variant % 4),
      port: 8000 + (Math.floor(variant / 4) % 1000)
    }
  }

  /** Creates `count` apps (before the faults), `concurrency` at a time (names and specs in order). */
  async populate(count: number, concurrency = 1): Promise<void> {
    let next = 0
    const worker = async () => {
      while (next < count) {
        const i = next++
        await this.run({ at: 0, op: "create", pick: 0, variant: i * 7 + 1 })
      }
    }
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker))
  }

  /** Runs one planned operation; never throws. */
  async run(op: LoadOp): Promise<void> {
    const live = this.live()
    const { cap, floor } = this.limits
    let kind = op.op
    if (kind !== "create" && kind !== "recreate" && live.length === 0) kind = "create"
    // keep a population to work on: below the floor, deletes become creates
    if ((kind === "delete" || kind === "edit-delete" || kind === "poison-delete") && live.length <= floor) {
      kind = "create"
    }
    if (kind === "create" && live.length >= cap) kind = "edit"
    if (kind === "recreate" && (this.gone().length === 0 || live.length >= cap)) {
      kind = live.length >= cap
        ? "edit"
        : "create"
    }
    this.stats.ops[kind]++
    try {
      switch (kind) {
        case "create":
          await this.create(`app-${this.nextName++}`, op.variant)
          return
        case "recreate": {
          const gone = this.gone()
          await this.create(gone[Math.floor(op.pick * gone.length)]!, op.variant)
          return
        }
        case "edit":
          return await this.edit(live[Math.floor(op.pick * live.length)]!, op.variant)
        case "delete":
          return await this.remove(live[Math.floor(op.pick * live.length)]!)
        case "edit-delete": {
          // an edit, then the delete while the operator is still reacting to it (its children change)
          const name = live[Math.floor(op.pick * live.length)]!
          await this.edit(name, op.variant)
          await sleep(200 + (op.variant % 1800))
          return await this.remove(name)
        }
        case "replace": {
          // delete, then the same name again: a new object (new uid) while the old one may still terminate
          const name = live[Math.floor(op.pick * live.length)]!
          await this.remove(name)
          for (let attempt = 0; attempt < 4; attempt++) {
            await sleep(300 + (op.variant % 700))
            if (await this.create(name, op.variant)) return
          }
          return
        }
        case "poison-delete":
          return await this.poisonDelete(live[Math.floor(op.pick * live.length)]!)
      }
    } catch (e) {
      this.anomalies.push(`load ${kind}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }

  private intent(name: string): Intent {
    let intent = this.intents.get(name)
    if (intent === undefined) {
      intent = { name, states: [{ present: false, spec: undefined }], incarnations: 0 }
      this.intents.set(name, intent)
    }
    return intent
  }

  /** Applies a write's outcome: acknowledged → `after`; refused → unchanged; no answer → uncertain. */
  private async write(
    intent: Intent,
    after: State,
    send: () => Promise<{ status: number; body: any }>,
    accepted: (status: number) => boolean
  ): Promise<number | undefined> {
    const what = after.present ? `write ${intent.name} ${JSON.stringify(after.spec)}` : `delete ${intent.name}`
    try {
      const answer = await send()
      this.trace(`load ${what}: ${answer.status} uid=${answer.body?.metadata?.uid ?? ""}`)
      if (accepted(answer.status)) {
        intent.states = [after]
      } else {
        this.stats.rejected++
      }
      return answer.status
    } catch (e) {
      if (!(e instanceof NoAnswer)) throw e
      this.trace(`load ${what}: no answer (${e.reason})`)
      this.stats.unanswered++
      const states = [...intent.states]
      if (!states.some((s) => s.present === after.present && (!s.present || sameSpec(s.spec, after.spec)))) {
        states.push(after)
      }
      intent.states = states
      return undefined
    }
  }

  /** Creates `name`; true when the server acknowledged it. */
  private async create(name: string, variant: number): Promise<boolean> {
    const intent = this.intent(name)
    const spec = this.spec(name, variant)
    const body = {
      apiVersion: "apps.reconcile.dev/v1",
      kind: "WebApp",
      metadata: {
        name,
        namespace: this.namespace,
        annotations: { "chaos.reconcile.dev/note": noteOf(variant, this.seq) }
      },
      spec
    }
    const status = await this.write(
      intent,
      { present: true, spec },
      () => this.direct.request("POST", webappsPath(this.namespace), { body }),
      (s) => s === 201 || s === 200
    )
    if (status === 201 || status === 200) {
      intent.incarnations++
      this.mustDelete.delete(name)
      return true
    }
    return false
  }

  private async edit(name: string, variant: number): Promise<void> {
    const intent = this.intent(name)
    const spec = this.spec(name, variant)
    const wasCertain = intent.states.length === 1 && intent.states[0]!.present
    const status = await this.write(
      intent,
      { present: true, spec },
      () =>
        this.direct.request("PATCH", webappsPath(this.namespace, name), {
          body: { metadata: { annotations: { "chaos.reconcile.dev/note": noteOf(variant, this.seq) } }, spec },
          contentType: "application/merge-patch+json"
        }),
      (s) => s === 200
    )
    if (status === 404 && wasCertain) {
      this.anomalies.push(`acknowledged WebApp ${name} answered 404 to an edit (a lost write)`)
    }
  }

  private async remove(name: string): Promise<void> {
    const intent = this.intent(name)
    const wasCertain = intent.states.length === 1 && intent.states[0]!.present
    const status = await this.write(
      intent,
      { present: false, spec: undefined },
      () => this.direct.request("DELETE", webappsPath(this.namespace, name)),
      (s) => s === 200 || s === 202
    )
    if (status === 404) {
      if (wasCertain) this.anomalies.push(`acknowledged WebApp ${name} answered 404 to a delete (a lost write)`)
      intent.states = [{ present: false, spec: undefined }]
    }
  }

  /**
   * Makes the app undecodable (`spec.replicas: "three"`), then deletes it: the operator must still run the
   * cleanup and release the finalizer. Whatever happens, the intended state is "absent" (the harness deletes it
   * again after the faults if needed: see {@link settle}).
   */
  private async poisonDelete(name: string): Promise<void> {
    const intent = this.intent(name)
    await this.direct.request("PATCH", webappsPath(this.namespace, name), {
      body: { spec: { replicas: "three" } },
      contentType: "application/merge-patch+json"
    }).catch(() => undefined)
    await sleep(300)
    await this.write(
      intent,
      { present: false, spec: undefined },
      () => this.direct.request("DELETE", webappsPath(this.namespace, name)),
      (s) => s === 200 || s === 202 || s === 404
    )
    // the poison may have landed even when the delete did not: the app is to be deleted either way
    intent.states = [{ present: false, spec: undefined }]
    this.mustDelete.add(name)
  }

  /**
   * After the faults: resolves every uncertain intent from the server's objects (`byName`, deleting objects
   * count as absent), and deletes what must go (poisoned apps, apps whose delete may not have landed).
   * Returns the violations: a server state that no write of the harness can explain.
   */
  async settle(byName: ReadonlyMap<string, any>): Promise<ReadonlyArray<string>> {
    const problems: Array<string> = [...this.anomalies]
    for (const intent of this.intents.values()) {
      const object = byName.get(intent.name)
      const live = object !== undefined && object.metadata?.deletionTimestamp === undefined ? object : undefined
      if (this.mustDelete.has(intent.name)) {
        // a poisoned app whose delete may not have landed: the user deletes it again
        if (live !== undefined) await this.deleteAgain(intent.name)
        intent.states = [{ present: false, spec: undefined }]
        continue
      }
      const state = intent.states.find((s) => matches(s, live))
      if (state === undefined) {
        const wanted = intent.states.map((s) => s.present ? `present with ${JSON.stringify(s.spec)}` : "absent")
        const actual = live === undefined ? "absent" : `present with ${JSON.stringify(live.spec)}`
        problems.push(`WebApp ${intent.name}: the server has it ${actual}, the harness wrote ${wanted.join(" or ")}`)
        continue
      }
      intent.states = [state]
    }
    for (const name of byName.keys()) {
      if (!this.intents.has(name)) problems.push(`WebApp ${name} exists but the harness never created it`)
    }
    return problems
  }

  private async deleteAgain(name: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const answer = await this.direct.request("DELETE", webappsPath(this.namespace, name)).catch(() => undefined)
      if (answer !== undefined && [200, 202, 404].includes(answer.status)) return
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }

  /** Names whose intended state is still one of several (not settled, or settling found no match). */
  unresolved(): ReadonlySet<string> {
    return new Set([...this.intents.values()].filter((i) => i.states.length > 1).map((i) => i.name))
  }

  /** The settled intended state: name → spec of every app that must exist. */
  wanted(): ReadonlyMap<string, Spec> {
    const out = new Map<string, Spec>()
    for (const intent of this.intents.values()) {
      const state = intent.states[0]
      if (intent.states.length === 1 && state?.present === true) out.set(intent.name, state.spec!)
    }
    return out
  }
}
