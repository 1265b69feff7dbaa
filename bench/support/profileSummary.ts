/**
 * Summarises V8 CPU profiles (`node --cpu-prof`): the functions with the most self time, and self time by where the
 * code lives (our packages, effect, client-node, node's internals, the engine), as docs/benchmarks.md quotes them.
 *
 * Allocation profiles (`.heapprofile`, bench/support/profiling.ts) are summed up the same way, in bytes allocated.
 *
 *   npx tsx bench/support/profileSummary.ts [--top N] FILE.cpuprofile|FILE.heapprofile…
 */
import * as fs from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
  }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Where a frame's code lives. */
const areaOf = (url: string, name: string): string => {
  if (url === "") return name === "(garbage collector)" ? "gc" : name === "(idle)" ? "idle" : "engine"
  if (url.includes("/packages/")) return `reconcile:${url.split("/packages/")[1]!.split("/")[0]}`
  if (url.includes("node_modules/effect/")) return "effect"
  if (url.includes("node_modules/@effect/")) return "@effect"
  if (url.includes("node_modules/undici")) return "undici"
  if (url.includes("node_modules/@kubernetes/client-node")) return "client-node"
  if (url.includes("node_modules/")) return `npm:${url.split("node_modules/").at(-1)!.split("/")[0]}`
  if (url.startsWith("node:")) return "node"
  if (url.includes("/bench/")) return "bench"
  return "other"
}

const shortUrl = (url: string) => url.replace(/^.*\/(node_modules|packages|bench)\//, "$1/")

const summarize = (file: string, top: number) => {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  let total = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + dt)
    total += dt
  }
  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  for (const [id, micros] of self) {
    const { functionName, lineNumber, url } = byId.get(id)!.callFrame
    const key = `${functionName || "(anonymous)"} ${shortUrl(url)}${url === "" ? "" : `:${lineNumber + 1}`}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros)
    const area = areaOf(url, functionName)
    byArea.set(area, (byArea.get(area) ?? 0) + micros)
  }
  const busy = total - (byArea.get("idle") ?? 0)
  const pct = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)} %`
  console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy`)
  console.log("  by area (share of busy time):")
  for (const [area, micros] of [...byArea].filter(([a]) => a !== "idle").sort((a, b) => b[1] - a[1])) {
    console.log(`    ${pct(micros)}  ${area}`)
  }
  console.log(`  top ${top} functions by self time:`)
  for (const [key, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`    ${pct(micros)}  ${key}`)
  }
}

interface HeapNode {
  readonly callFrame: Node["callFrame"]
  readonly selfSize: number
  readonly children: ReadonlyArray<HeapNode>
}

/** An allocation profile (`.heapprofile`): bytes allocated by function and by area. */
const summarizeHeap = (file: string, top: number) => {
  const { head } = JSON.parse(fs.readFileSync(file, "utf8")) as { readonly head: HeapNode }
  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  let total = 0
  const walk = (node: HeapNode) => {
    const { functionName, lineNumber, url } = node.callFrame
    if (node.selfSize > 0) {
      const key = `${functionName || "(anonymous)"} ${shortUrl(url)}${url === "" ? "" : `:${lineNumber + 1}`}`
      byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize)
      const area = areaOf(url, functionName)
      byArea.set(area, (byArea.get(area) ?? 0) + node.selfSize)
      total += node.selfSize
    }
    for (const child of node.children) walk(child)
  }
  walk(head)
  const pct = (bytes: number) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %`
  console.log(`${file}: ${(total / 2 ** 20).toFixed(0)} MiB allocated (sampled)`)
  console.log("  by area:")
  for (const [area, bytes] of [...byArea].sort((a, b) => b[1] - a[1])) console.log(`    ${pct(bytes)}  ${area}`)
  console.log(`  top ${top} allocating functions:`)
  for (const [key, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`    ${pct(bytes)}  ${key}`)
  }
}

const args = process.argv.slice(2)
const topAt = args.indexOf("--top")
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25
for (const file of args) {
  if (file.endsWith(".heapprofile")) summarizeHeap(file, top)
  else summarize(file, top)
}
