/**
 * The child processes of a chaos run (the API server, the operators), each a single Node process running a
 * TypeScript file through tsx's loader (`node --import tsx FILE`, so a signal reaches the process that does the
 * work), in its own process group, with stdout and stderr appended to a log file. Every child is registered:
 * {@link Children.killAll} ends them all synchronously — from `finally`, a signal handler or `process.on("exit")`.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** How a child ended. */
export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** One running child. */
export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly pid: number
  readonly exited: Promise<Exit>
  /** Whether it has exited. */
  done: boolean
  /** The last lines of its output (for exit reasons). */
  readonly tail: Array<string>
}

/** Why a child ended, from its output: the last line naming an error, else the last line. */
export const reason = (child: Child): string => {
  const named = [...child.tail].reverse().find((l) => /\b\w*(Error|Lost|Failed|Exception)\b/.test(l))
  return (named ?? child.tail.at(-1) ?? "").trim().slice(0, 300)
}

/** The repository's root (where tsx finds tsconfig.json's `paths`). */
export const root = path.resolve(import.meta.dirname, "..")

/** The registry of children. */
export class Children {
  private readonly all = new Set<Child>()

  constructor(private readonly logDir: string) {}

  /**
   * Starts `file` (relative to the repository root) with `args`; `onLine` gets each stdout line. Rejects when
   * the process cannot be spawned.
   */
  spawn(name: string, file: string, args: ReadonlyArray<string>, onLine?: (line: string) => void): Child {
    const log = fs.openSync(path.join(this.logDir, `${name}.log`), "a")
    const proc = spawn(process.execPath, ["--import", "tsx", file, ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" }
    })
    proc.once("close", () => fs.closeSync(log))
    const tail: Array<string> = []
    let pending = ""
    const keep = (line: string) => {
      if (line.trim() === "") return
      tail.push(line)
      if (tail.length > 20) tail.shift()
    }
    proc.stdout!.on("data", (chunk: Buffer) => {
      fs.writeSync(log, chunk)
      pending += chunk.toString("utf8")
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        onLine?.(line)
        keep(line)
      }
    })
    proc.stderr!.on("data", (chunk: Buffer) => {
      fs.writeSync(log, chunk)
      for (const line of chunk.toString("utf8").split("\n")) keep(line)
    })
    const child: Child = {
      name,
      process: proc,
      pid: proc.pid ?? -1,
      done: false,
      tail,
      exited: new Promise<Exit>((resolve) => {
        // "close": exited, and its stdout and stderr ended (so `tail` is complete)
        proc.on("close", (code, signal) => {
          child.done = true
          this.all.delete(child)
          resolve({ code, signal })
        })
        proc.on("error", () => {
          child.done = true
          this.all.delete(child)
          resolve({ code: null, signal: null })
        })
      })
    }
    this.all.add(child)
    return child
  }

  /** Sends `signal` to a child's process group (a stopped child is continued first when it must end). */
  signal(child: Child, signal: NodeJS.Signals): void {
    if (child.done) return
    try {
      if (signal === "SIGTERM" || signal === "SIGKILL") process.kill(-child.pid, "SIGCONT")
      process.kill(-child.pid, signal)
    } catch {
      // already gone
    }
  }

  /** Ends `child`: SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. */
  async stop(child: Child, graceMs = 10_000): Promise<Exit> {
    this.signal(child, "SIGTERM")
    const timer = setTimeout(() => this.signal(child, "SIGKILL"), graceMs)
    const exit = await child.exited
    clearTimeout(timer)
    return exit
  }

  /** SIGKILLs every child still running, synchronously. */
  killAll(): void {
    for (const child of this.all) this.signal(child, "SIGKILL")
  }

  /** Stops every child gracefully (bounded by `graceMs` each, in parallel). */
  async stopAll(graceMs = 10_000): Promise<void> {
    await Promise.all([...this.all].map((c) => this.stop(c, graceMs)))
  }
}
