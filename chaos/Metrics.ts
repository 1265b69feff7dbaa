/**
 * The operators' `/metrics`, scraped over the run: the last scrape of each operator process is kept (a killed
 * process loses at most one interval), and the figures add up every process's counters.
 */
import * as http from "node:http"

/** One sample: metric name with its labels, e.g. `controller_runtime_reconcile_total{result="success"}`. */
export type Samples = ReadonlyMap<string, number>

/** Parses the Prometheus text format's samples (comments and malformed lines are skipped). */
export const parse = (text: string): Samples => {
  const out = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const match = /^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?)\s+(\S+)/.exec(line)
    if (match === null) continue
    const value = Number(match[2])
    if (Number.isFinite(value)) out.set(match[1]!, value)
  }
  return out
}

/** The value of `name` summed over the samples whose labels include every `labels` pair. */
export const sum = (samples: Samples, name: string, labels: Readonly<Record<string, string>> = {}): number => {
  let total = 0
  for (const [key, value] of samples) {
    const brace = key.indexOf("{")
    const metric = brace < 0 ? key : key.slice(0, brace)
    if (metric !== name) continue
    const text = brace < 0 ? "" : key.slice(brace)
    if (Object.entries(labels).every(([k, v]) => text.includes(`${k}="${v}"`))) total += value
  }
  return total
}

/** GETs a URL on 127.0.0.1 with a timeout; undefined when it fails. */
export const get = (url: string, timeoutMs = 2000): Promise<{ status: number; text: string } | undefined> =>
  new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", () => resolve(undefined))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(undefined))
  })

/** The last scrape of each operator process, by process name. */
export class Scrapes {
  private readonly last = new Map<string, Samples>()

  /** Records a scrape of `process`. */
  set(process: string, samples: Samples): void {
    this.last.set(process, samples)
  }

  /** {@link sum} over every process's last scrape. */
  total(name: string, labels: Readonly<Record<string, string>> = {}): number {
    let total = 0
    for (const samples of this.last.values()) total += sum(samples, name, labels)
    return total
  }

  /** Every metric name seen whose name matches `pattern`, with its total. */
  matching(pattern: RegExp): ReadonlyMap<string, number> {
    const names = new Set<string>()
    for (const samples of this.last.values()) {
      for (const key of samples.keys()) {
        const name = key.split("{")[0]!
        if (pattern.test(name)) names.add(name)
      }
    }
    return new Map([...names].sort().map((n) => [n, this.total(n)]))
  }
}
