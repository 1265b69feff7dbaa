/**
 * Heap measurement for the benchmarks: used heap after full GCs, and bytes per object of a cache.
 */
import * as v8 from "node:v8"
import * as vm from "node:vm"

/** Two full GCs (node needs `--expose-gc`; without it the flag is set at run time). */
export const collect: () => void = (() => {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {
    v8.setFlagsFromString("--expose-gc")
    return vm.runInNewContext("gc") as () => void
  })()
  return () => {
    gc()
    gc()
  }
})()

/** Used heap after full GCs. */
export const heapUsed = (): number => {
  collect()
  return v8.getHeapStatistics().used_heap_size
}

/** Lets the previous run's sockets close and its objects become garbage, then collects: the heap baseline. */
export const settle = async (): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 250))
  return heapUsed()
}

/**
 * Heap bytes per object: (heap with the cache − baseline) / n, where the baseline is the lower of the heap before
 * the run and after it was stopped (garbage of a previous run still reachable raises one of them, never both).
 */
export const perObject = (before: number, after: number, released: number, n: number) =>
  (after - Math.min(before, released)) / n

/** The median of some numbers. */
export const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
