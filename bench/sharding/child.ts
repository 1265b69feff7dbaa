/**
 * A child process of the sharding benchmark (the API server or a replica), forked under tsx with IPC: `next(op)`
 * waits for the first message of that op (earlier ones wait in a backlog), `on(op, f)` streams the ops that are
 * not answers (a replica's `reconciled` batches). The same shape as the operator benchmark's driver uses.
 */
import { type ChildProcess, fork } from "node:child_process"
import * as path from "node:path"

export interface Child<In, Out extends { readonly op: string }> {
  readonly process: ChildProcess
  readonly send: (message: In) => void
  readonly next: <O extends Out["op"]>(op: O, timeoutMs: number) => Promise<Extract<Out, { op: O }>>
  /** Asks and waits for the answer of op `reply`. */
  readonly ask: <O extends Out["op"]>(message: In, reply: O, timeoutMs?: number) => Promise<Extract<Out, { op: O }>>
  /** Graceful: SIGTERM, then SIGKILL after 5 s. */
  readonly stop: () => Promise<void>
  /** A crash: SIGKILL. */
  readonly kill: () => void
  readonly exited: () => string | undefined
  /** The last 4,000 characters of its stdout and stderr. */
  readonly output: () => string
}

export const start = <In, Out extends { readonly op: string }>(options: {
  readonly file: string
  readonly env?: Record<string, string> | undefined
  readonly execArgv?: ReadonlyArray<string> | undefined
  readonly on?: { readonly [K in Out["op"]]?: (message: Extract<Out, { op: K }>) => void } | undefined
}): Child<In, Out> => {
  const process_ = fork(options.file, [], {
    execArgv: ["--import", "tsx", ...(options.execArgv ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe", "ipc"]
  })
  const name = path.basename(options.file)
  // the last of its output (its logs and errors), for the error when it does not answer
  let output = ""
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  process_.stdout!.on("data", keep)
  process_.stderr!.on("data", keep)
  const waiters: Array<{ readonly op: string; readonly resolve: (m: Out) => void }> = []
  const backlog: Array<Out> = []
  process_.on("message", (m: Out) => {
    const handler = (options.on as Record<string, ((m: Out) => void) | undefined> | undefined)?.[m.op]
    if (handler !== undefined) return handler(m)
    const i = waiters.findIndex((w) => w.op === m.op)
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m)
    else backlog.push(m)
  })
  let exited: string | undefined
  process_.on("exit", (code, signal) => {
    exited = `exited (${signal ?? code})`
  })
  const next = <O extends Out["op"]>(op: O, timeoutMs: number) =>
    new Promise<Extract<Out, { op: O }>>((resolve, reject) => {
      const i = backlog.findIndex((m) => m.op === op)
      if (i >= 0) return resolve(backlog.splice(i, 1)[0] as Extract<Out, { op: O }>)
      const waiter = {
        op,
        resolve: (m: Out) => {
          clearTimeout(timer)
          resolve(m as Extract<Out, { op: O }>)
        }
      }
      const timer = setTimeout(() => {
        const w = waiters.indexOf(waiter)
        if (w >= 0) waiters.splice(w, 1)
        reject(new Error(`${name}: no ${op} within ${timeoutMs} ms${exited ? `; ${exited}` : ""}\n${output}`))
      }, timeoutMs)
      waiters.push(waiter)
    })
  const send = (message: In) => {
    if (process_.connected) process_.send(message as object)
  }
  return {
    process: process_,
    send,
    next,
    ask: (message, reply, timeoutMs = 30_000) => {
      const answer = next(reply, timeoutMs)
      send(message)
      return answer
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (process_.exitCode !== null || process_.signalCode !== null) return resolve()
        const kill = setTimeout(() => process_.kill("SIGKILL"), 5_000)
        process_.once("exit", () => {
          clearTimeout(kill)
          resolve()
        })
        process_.kill("SIGTERM")
      }),
    kill: () => {
      process_.kill("SIGKILL")
    },
    exited: () => exited,
    output: () => output
  }
}
