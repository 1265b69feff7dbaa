/**
 * Child processes of the control plane that never outlive their parent: each runs in its own process group and,
 * on Linux, under `setpriv --pdeathsig SIGKILL` (the kernel kills it when the Node process dies, even by SIGKILL);
 * an `exit` hook kills what is left of them when Node exits normally. Their output goes to a log file whose tail
 * is what a start failure reports.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"

/** A started process: its log and how it ended. */
export interface Proc {
  readonly name: string
  readonly child: ChildProcess.ChildProcess
  readonly logFile: string
  /** Resolves with the exit code (or the signal's name) when it ends. */
  readonly exited: Promise<number | string>
  readonly isRunning: () => boolean
}

const running = new Set<ChildProcess.ChildProcess>()
let hooked = false

const hookExit = () => {
  if (hooked) return
  hooked = true
  process.on("exit", () => {
    for (const child of running) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  })
}

let setprivPath: string | undefined | null = null
const setpriv = (): string | undefined => {
  if (setprivPath !== null) return setprivPath
  setprivPath = undefined
  if (process.platform === "linux") {
    for (const candidate of ["/usr/bin/setpriv", "/bin/setpriv"]) {
      if (Fs.existsSync(candidate)) setprivPath = candidate
    }
  }
  return setprivPath
}

/** Whether the parent-death signal is available (Linux with util-linux's setpriv). */
export const hasParentDeathSignal = (): boolean => setpriv() !== undefined

/** Starts `binary args` with its output appended to `logFile` (mode 0600). */
export const spawn = (name: string, binary: string, args: ReadonlyArray<string>, logFile: string): Proc => {
  hookExit()
  const fd = Fs.openSync(logFile, "a", 0o600)
  const guard = setpriv()
  const [command, argv] = guard !== undefined
    ? [guard, ["--pdeathsig", "SIGKILL", "--", binary, ...args]]
    : [binary, [...args]]
  const child = ChildProcess.spawn(command, argv, { stdio: ["ignore", fd, fd], detached: true })
  Fs.closeSync(fd)
  running.add(child)
  let done = false
  const exited = new Promise<number | string>((resolve) => {
    child.on("error", (e) => {
      done = true
      running.delete(child)
      Fs.appendFileSync(logFile, `\n${name}: could not start ${binary}: ${e.message}\n`)
      resolve(-1)
    })
    child.on("exit", (code, signal) => {
      done = true
      running.delete(child)
      resolve(code ?? signal ?? -1)
    })
  })
  return { name, child, logFile, exited, isRunning: () => !done }
}

/** Stops a process group: SIGTERM, then SIGKILL after `graceMillis`. Resolves once it has exited. */
export const stop = async (proc: Proc, graceMillis = 5_000): Promise<void> => {
  if (!proc.isRunning() || proc.child.pid === undefined) return
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-proc.child.pid!, s)
    } catch {
      // gone between the check and the signal
    }
  }
  // a frozen (SIGSTOPped) process handles SIGTERM only once continued
  signal("SIGCONT")
  signal("SIGTERM")
  const timer = setTimeout(() => signal("SIGKILL"), graceMillis)
  await proc.exited
  clearTimeout(timer)
}

/** Kills a process group at once (a crash, for chaos runs). */
export const kill = async (proc: Proc): Promise<void> => {
  if (!proc.isRunning() || proc.child.pid === undefined) return
  try {
    process.kill(-proc.child.pid, "SIGKILL")
  } catch {
    // already gone
  }
  await proc.exited
}

/** Sends `signal` to a process group (SIGSTOP freezes it, SIGCONT continues it); nothing when it has ended. */
export const signal = (proc: Proc, signal: NodeJS.Signals): void => {
  if (!proc.isRunning() || proc.child.pid === undefined) return
  try {
    process.kill(-proc.child.pid, signal)
  } catch {
    // already gone
  }
}

/** The last `lines` lines of a process's log. */
export const tail = (proc: Proc, lines = 40): string => {
  try {
    return Fs.readFileSync(proc.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}
