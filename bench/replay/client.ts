/**
 * Starts the replay server (`./server.ts`) in a child process and talks to it over IPC.
 */
import { fork } from "node:child_process"
import type { Command } from "./server.js"

export interface Ready {
  readonly url: string
  readonly token: string
  readonly ca: string
  readonly kubeconfigPath: string
}

export interface ReplayServer {
  readonly ready: Ready
  readonly pid: number
  readonly call: (command: Command) => Promise<any>
  readonly stop: () => void
}

export type { Command }

export const start = (): Promise<ReplayServer> =>
  new Promise((resolve, reject) => {
    const child = fork(new URL("./server.ts", import.meta.url), [], {
      execArgv: ["--import", "tsx", "--max-old-space-size=4096"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    const pending = new Map<number, { resolve: (a: unknown) => void; reject: (e: unknown) => void }>()
    let next = 0
    child.on("error", reject)
    child.on("exit", (code) => {
      for (const waiter of pending.values()) waiter.reject(new Error(`replay server exited (${code})`))
    })
    child.on("message", (message: any) => {
      if (message.ready !== undefined) {
        resolve({
          ready: message.ready,
          pid: child.pid!,
          call: (command) =>
            new Promise((resolve, reject) => {
              const id = next++
              pending.set(id, { resolve, reject })
              child.send({ id, command })
            }),
          stop: () => {
            // the child exits on disconnect (and removes its kubeconfig); a kill only if it has not after 2 s
            child.disconnect()
            setTimeout(() => child.exitCode === null && child.kill(), 2_000).unref()
          }
        })
        return
      }
      const waiter = pending.get(message.id)!
      pending.delete(message.id)
      if (message.error !== undefined) waiter.reject(new Error(message.error))
      else waiter.resolve(message.result)
    })
  })
