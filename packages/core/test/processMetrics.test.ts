// @effect/vitest 4: `it.live` runs scoped with live services (real HTTP on 127.0.0.1).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import * as LeaderElection from "../src/LeaderElection.js"
import * as Manager from "../src/Manager.js"
import * as Prometheus from "../src/Prometheus.js"

const scrape = (port: number) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`)
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  })

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)( -?\d+)?$/

/**
 * Checks the text exposition format 0.0.4 as Prometheus parses it: each family declared once (`# HELP`, `# TYPE`
 * before its samples), its samples together and named after it (`_bucket`/`_sum`/`_count` for histograms and
 * summaries), values that parse as floats. Returns the families by name with their type and sample lines.
 */
const parseExposition = (text: string) => {
  const families = new Map<string, { type: string; samples: Array<string> }>()
  let current: string | undefined
  const closed = new Set<string>()
  for (const line of text.split("\n")) {
    if (line === "") continue
    const help = /^# HELP (\S+)/.exec(line)
    if (help !== null) {
      assert.match(help[1]!, metricName)
      continue
    }
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type !== null) {
      const name = type[1]!
      assert.isFalse(families.has(name), `family ${name} declared twice`)
      if (current !== undefined) closed.add(current)
      current = name
      families.set(name, { type: type[2]!, samples: [] })
      continue
    }
    assert.notMatch(line, /^#/, `unexpected comment: ${line}`)
    const sample = sampleLine.exec(line)
    assert.isNotNull(sample, `not a sample line: ${line}`)
    const name = sample![1]!
    assert.isDefined(current, `sample before any # TYPE: ${line}`)
    const family = families.get(current!)!
    const allowed = family.type === "histogram"
      ? [`${current}_bucket`, `${current}_sum`, `${current}_count`]
      : family.type === "summary"
      ? [current!, `${current}_sum`, `${current}_count`]
      : [current!]
    assert.include(allowed, name, `sample ${name} under family ${current}`)
    assert.isFalse(closed.has(name), `samples of ${name} are not together`)
    // Go's strconv.ParseFloat, which Prometheus uses, takes NaN and ±Inf in any case.
    assert.isFalse(Number.isNaN(Number(sample![3])) && !/^[+-]?(nan|inf)$/i.test(sample![3]!), `value of ${line}`)
    family.samples.push(line)
  }
  return families
}

describe("process and Node.js metrics on the Manager's /metrics", () => {
  it.live("on by default: prom-client's default collectors beside Effect's metrics, valid exposition text", () =>
    Effect.gen(function*() {
      yield* Metric.update(Metric.counter("processmetrics_test_total", { description: "an Effect counter" }), 3)
      // An Effect metric with a collector's name: the collector keeps it, so the family is still declared once.
      yield* Metric.update(Metric.gauge("process_resident_memory_bytes"), -1)
      const manager = yield* Manager.make({ metricsPort: 0 }).pipe(Effect.provide(LeaderElection.layerAlwaysLeader))
      const reply = yield* scrape(manager.metricsAddress!.port)
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.type, Prometheus.contentType)
      const families = parseExposition(reply.body)
      for (
        const [name, type] of [
          ["process_cpu_seconds_total", "counter"],
          ["process_resident_memory_bytes", "gauge"],
          ["process_start_time_seconds", "gauge"],
          ["nodejs_heap_size_used_bytes", "gauge"],
          ["nodejs_eventloop_lag_seconds", "gauge"],
          ["nodejs_gc_duration_seconds", "histogram"],
          ["nodejs_version_info", "gauge"],
          ["processmetrics_test_total", "counter"]
        ] as const
      ) {
        assert.strictEqual(families.get(name)?.type, type, name)
      }
      assert.deepStrictEqual(families.get("processmetrics_test_total")!.samples, ["processmetrics_test_total 3"])
      const rss = families.get("process_resident_memory_bytes")!.samples
      assert.strictEqual(rss.length, 1)
      assert.isAbove(Number(rss[0]!.split(" ")[1]), 0, "the collector's value, not the Effect gauge's")
      // Families sorted by name, as the Effect-only exposition is.
      const names = Array.from(families.keys())
      assert.deepStrictEqual(names, [...names].sort())
    }))

  it.live("processMetrics: false serves Effect's metrics only", () =>
    Effect.gen(function*() {
      yield* Metric.update(Metric.counter("processmetrics_off_total"), 1)
      const manager = yield* Manager.make({ metricsPort: 0, healthPort: 0, processMetrics: false }).pipe(
        Effect.provide(LeaderElection.layerAlwaysLeader)
      )
      const reply = yield* scrape(manager.metricsAddress!.port)
      const families = parseExposition(reply.body)
      assert.isTrue(families.has("processmetrics_off_total"))
      // (`process_resident_memory_bytes` may be there: the first test's Effect gauge, in Effect's global registry.)
      assert.deepStrictEqual(Array.from(families.keys()).filter((name) => /^nodejs_|^process_cpu/.test(name)), [])
    }))

  it.live("one port for metrics and health serves them too", () =>
    Effect.gen(function*() {
      const manager = yield* Manager.make({ metricsPort: 0 }).pipe(Effect.provide(LeaderElection.layerAlwaysLeader))
      const port = manager.metricsAddress!.port
      const families = parseExposition((yield* scrape(port)).body)
      assert.isTrue(families.has("process_cpu_seconds_total"))
      // Scraped twice: the collectors are made once per process (a second registration would throw).
      const again = parseExposition((yield* scrape(port)).body)
      assert.isTrue(again.has("process_cpu_seconds_total"))
    }))

  it.live("Prometheus.text: with and without the collectors", () =>
    Effect.gen(function*() {
      assert.include(yield* Prometheus.text(), "# TYPE nodejs_heap_size_used_bytes gauge\n")
      assert.notInclude(yield* Prometheus.text({ processMetrics: false }), "nodejs_heap_size_used_bytes")
      assert.notInclude(yield* Prometheus.snapshotText, "nodejs_heap_size_used_bytes")
    }))
})
