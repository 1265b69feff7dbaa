/**
 * What the harness sees happen to WebApps, through its own connection: a list, then a watch from the list's
 * resourceVersion, relisting after any error, timeout or server restart. For every object (by uid) it records
 * whether it ever carried the operator's finalizer and when it was seen gone — the moment after which a cleanup
 * must not run any more. "Seen gone" is never earlier than the server's removal, so a cleanup reported after it
 * certainly ran after the finalizer was released.
 */
import type { Direct } from "./Direct.js"
import { webappsPath } from "./Load.js"

/** The history of one WebApp object. */
export interface Seen {
  readonly uid: string
  readonly name: string
  hadFinalizer: boolean
  /** When the harness first saw `deletionTimestamp` (epoch ms). */
  deletingAt: number | undefined
  /** When the harness saw the object gone (epoch ms). */
  goneAt: number | undefined
}

/** The observer; `run` until the signal aborts. */
export class Observer {
  readonly seen = new Map<string, Seen>()
  relists = 0
  private readonly known = new Set<string>()

  constructor(
    private readonly direct: Direct,
    private readonly namespace: string,
    private readonly finalizer: string,
    private readonly trace: (line: string) => void = () => undefined
  ) {}

  private record(object: any, now: number): void {
    const uid = object?.metadata?.uid as string | undefined
    if (uid === undefined) return
    let seen = this.seen.get(uid)
    if (seen === undefined) {
      seen = { uid, name: object.metadata.name, hadFinalizer: false, deletingAt: undefined, goneAt: undefined }
      this.seen.set(uid, seen)
    }
    if ((object.metadata.finalizers ?? []).includes(this.finalizer)) seen.hadFinalizer = true
    if (object.metadata.deletionTimestamp !== undefined && seen.deletingAt === undefined) {
      seen.deletingAt = now
      this.trace(`observed ${seen.name} uid=${uid} deleting`)
    }
  }

  private gone(uid: string, now: number): void {
    this.known.delete(uid)
    const seen = this.seen.get(uid)
    if (seen !== undefined && seen.goneAt === undefined) {
      seen.goneAt = now
      this.trace(`observed ${seen.name} uid=${uid} gone`)
    }
  }

  /** Lists and watches until `signal` aborts; each round is bounded by timeouts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let rv: string | undefined
      try {
        await this.direct.load()
        const list = await this.direct.ok("GET", webappsPath(this.namespace), { timeoutMs: 5000 })
        const now = Date.now()
        this.relists++
        const present = new Set<string>()
        for (const item of list.items ?? []) {
          this.record(item, now)
          present.add(item.metadata.uid)
          this.known.add(item.metadata.uid)
        }
        for (const uid of [...this.known]) if (!present.has(uid)) this.gone(uid, now)
        rv = list.metadata?.resourceVersion
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 300))
        continue
      }
      const path = `${webappsPath(this.namespace)}?watch=true&allowWatchBookmarks=true&timeoutSeconds=20` +
        (rv === undefined ? "" : `&resourceVersion=${encodeURIComponent(rv)}`)
      await this.direct.watch(
        path,
        (event) => {
          const now = Date.now()
          if (event.type === "ERROR") throw new Error("watch error")
          if (event.type === "BOOKMARK") return
          this.record(event.object, now)
          if (event.type === "DELETED") this.gone(event.object.metadata.uid, now)
          else this.known.add(event.object.metadata.uid)
        },
        25_000,
        signal
      )
    }
  }

  /** The uids seen gone, with their names. */
  goneObjects(): ReadonlyArray<Seen> {
    return [...this.seen.values()].filter((s) => s.goneAt !== undefined)
  }
}
