/**
 * CPU and allocation profiles of a stretch of a benchmark, taken in-process through the inspector
 * (BENCH_PROFILE=FILE → FILE.cpuprofile, BENCH_HEAP_PROFILE=FILE → FILE.heapprofile). tsx runs each module as one
 * line of code; with `--enable-source-maps` every frame is mapped back to its TypeScript file and line, so the
 * profile reads like the source (bench/support/profileSummary.ts sums it up; Chrome DevTools opens it).
 */
import * as fs from "node:fs"
import * as inspector from "node:inspector/promises"
import * as module from "node:module"
import { fileURLToPath } from "node:url"

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

/** Maps a frame of tsx's generated code to its source line (in place). */
const remap = (frame: CallFrame) => {
  if (!frame.url.startsWith("file://") || frame.lineNumber < 0) return
  const map = module.findSourceMap(fileURLToPath(frame.url)) ?? module.findSourceMap(frame.url)
  if (map === undefined) return
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber)
  if (!("originalLine" in entry)) return
  frame.lineNumber = entry.originalLine
  frame.columnNumber = entry.originalColumn
  // the source map's name of the position, where it has one (not in @types/node's SourceMapping)
  const name = (entry as { readonly name?: string }).name
  if (frame.functionName === "" && name !== undefined) frame.functionName = name
}

interface HeapNode {
  callFrame: CallFrame
  children: Array<HeapNode>
}

const remapHeap = (node: HeapNode) => {
  remap(node.callFrame)
  for (const child of node.children) remapHeap(child)
}

/** A profile in progress: `stop` writes what was asked for. */
export interface Profiling {
  readonly stop: () => Promise<void>
}

export const Profiling = {
  /** Starts the profiles the environment asks for (none: `stop` does nothing). */
  start: async (): Promise<Profiling> => {
    const cpu = process.env.BENCH_PROFILE
    const heap = process.env.BENCH_HEAP_PROFILE
    if (cpu === undefined && heap === undefined) return { stop: async () => {} }
    const session = new inspector.Session()
    session.connect()
    if (cpu !== undefined) {
      await session.post("Profiler.enable")
      await session.post("Profiler.setSamplingInterval", { interval: 200 })
      await session.post("Profiler.start")
    }
    if (heap !== undefined) {
      await session.post("HeapProfiler.enable")
      // every allocation sampled, the collected ones too: what the code allocates, not what it retains
      await session.post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
    }
    return {
      stop: async () => {
        if (cpu !== undefined) {
          const { profile } = await session.post("Profiler.stop")
          for (const node of profile.nodes) remap(node.callFrame)
          fs.writeFileSync(`${cpu}.cpuprofile`, JSON.stringify(profile))
          console.log(`CPU profile: ${cpu}.cpuprofile`)
        }
        if (heap !== undefined) {
          const { profile } = await session.post("HeapProfiler.stopSampling")
          remapHeap(profile.head as HeapNode)
          fs.writeFileSync(`${heap}.heapprofile`, JSON.stringify(profile))
          console.log(`allocation profile: ${heap}.heapprofile`)
        }
        session.disconnect()
      }
    }
  }
}
