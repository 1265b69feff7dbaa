import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Metric, Schema } from "effect"
import * as Prometheus from "../src/Prometheus.js"

// The Prometheus text format (0.0.4) grammar, for checking what prom-client produced.
const metricName = /[a-zA-Z_:][a-zA-Z0-9_:]*/.source
const labelName = /[a-zA-Z_][a-zA-Z0-9_]*/.source
const labelValue = /"(?:[^"\\\n]|\\[\\"n])*"/.source
const label = `${labelName}=${labelValue}`
const number = /[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?[iI][nN][fF]|[nN][aA][nN]/.source
const sampleLine = new RegExp(`^(${metricName})(?:\\{(?:${label}(?:,${label})*,?)?\\})? (${number})(?: -?[0-9]+)?$`)
const typeLine = new RegExp(`^# TYPE (${metricName}) (counter|gauge|histogram|summary|untyped)$`)
const helpLine = new RegExp(`^# HELP (${metricName})(?: (?:[^\\\\]|\\\\[\\\\n])*)?$`)

interface Sample {
  readonly name: string
  readonly labels: ReadonlyArray<readonly [string, string]>
  readonly value: number
}

const unescape = (quoted: string): string =>
  quoted.slice(1, -1).replace(/\\(.)/g, (_, c: string) => c === "n" ? "\n" : c)

const parseValue = (text: string): number =>
  /^[+]?inf$/i.test(text) ? Infinity : /^-inf$/i.test(text) ? -Infinity : /^nan$/i.test(text) ? NaN : Number(text)

/**
 * Checks every line against the grammar, that each family has one TYPE line before its samples and that
 * sample names belong to it; returns the samples.
 */
const parse = (text: string): ReadonlyArray<Sample> => {
  const samples: Array<Sample> = []
  const types = new Map<string, string>()
  let current: string | undefined
  for (const line of text.split("\n")) {
    if (line === "") continue
    if (line.startsWith("# HELP ")) {
      assert.match(line, helpLine)
      continue
    }
    const type = typeLine.exec(line)
    if (type !== null) {
      assert.isFalse(types.has(type[1]!), `one TYPE line per family: ${line}`)
      types.set(type[1]!, type[2]!)
      current = type[1]!
      continue
    }
    const sample = sampleLine.exec(line)
    assert.isNotNull(sample, `not a sample line: ${JSON.stringify(line)}`)
    const name = sample![1]!
    const suffixes = types.get(current!) === "histogram" ? ["", "_bucket", "_sum", "_count"] : ["", "_sum", "_count"]
    assert.isTrue(suffixes.some((suffix) => `${current}${suffix}` === name), `${name} belongs to ${current}`)
    const labels = Array.from(
      line.slice(name.length).matchAll(new RegExp(`(${labelName})=(${labelValue})`, "g")),
      (m) => [m[1]!, unescape(m[2]!)] as const
    )
    samples.push({ name, labels, value: parseValue(sample![2]!) })
  }
  return samples
}

/** The exposition of the metrics named `names` in Effect's global registry. */
const exposition = (...names: ReadonlyArray<string>) =>
  Metric.snapshot.pipe(
    Effect.map((snapshots) => snapshots.filter((snapshot) => names.includes(snapshot.id))),
    Effect.flatMap(Prometheus.format)
  )

/** effect 4: tags became attributes (`Metric.withAttributes`, effect 3's `Metric.taggedWithLabels`). */
const tagged = <M extends Metric.Metric<any, any>>(metric: M, tags: Record<string, string>): M =>
  Metric.withAttributes(metric, tags) as M

/**
 * The snapshot of what `updates` records in a registry of its own. effect 4 has no constructors of metric states
 * (effect 3's `MetricPair`/`MetricState`/`MetricHook`): snapshots come from real metrics, in registry order.
 */
const snapshotOf = <E>(updates: Effect.Effect<void, E>) =>
  Effect.andThen(updates, Metric.snapshot).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))

/**
 * Strings of printable ASCII plus effect's edge cases (lone surrogates, `\n`, `\0`, `__proto__`, ...); effect 3's
 * fast-check `unit: "binary"` drew any code unit.
 */
const string = (maxLength: number) => Arbitrary.schema(Schema.String.check(Schema.isMaxLength(maxLength)))

describe("Prometheus", () => {
  it("uses the text format 0.0.4 content type", () => {
    assert.strictEqual(Prometheus.contentType, "text/plain; version=0.0.4; charset=utf-8")
  })

  it.effect("counters: one family per name, one sample per label set, labels in tag order", () =>
    Effect.gen(function*() {
      const adds = Metric.counter("workqueue_adds_total", { description: "Total number of adds handled by workqueue" })
      yield* Metric.update(tagged(adds, { name: "q", controller: "c" }), 3)
      yield* Metric.update(tagged(adds, { name: "p", controller: "c" }), 1)
      const total = Metric.counter("controller_runtime_reconcile_total", {
        description: "Total number of reconciliations per controller"
      })
      yield* Metric.update(tagged(total, { controller: "c", result: "success" }), 2)
      yield* Metric.update(tagged(total, { controller: "c", result: "error" }), 1)

      const text = yield* exposition("workqueue_adds_total", "controller_runtime_reconcile_total")
      assert.strictEqual(
        text,
        [
          "# HELP controller_runtime_reconcile_total Total number of reconciliations per controller",
          "# TYPE controller_runtime_reconcile_total counter",
          "controller_runtime_reconcile_total{controller=\"c\",result=\"error\"} 1",
          "controller_runtime_reconcile_total{controller=\"c\",result=\"success\"} 2",
          "",
          "# HELP workqueue_adds_total Total number of adds handled by workqueue",
          "# TYPE workqueue_adds_total counter",
          "workqueue_adds_total{name=\"p\",controller=\"c\"} 1",
          "workqueue_adds_total{name=\"q\",controller=\"c\"} 3",
          ""
        ].join("\n")
      )
      parse(text)
    }))

  it.effect("snapshotText reads Effect's global registry when it runs", () =>
    Effect.gen(function*() {
      const depth = tagged(Metric.gauge("workqueue_depth", { description: "Current depth of workqueue" }), {
        name: "q",
        controller: "c"
      })
      yield* Metric.update(depth, 5)
      assert.include(yield* Prometheus.snapshotText, "\nworkqueue_depth{name=\"q\",controller=\"c\"} 5\n")
      yield* Metric.update(depth, 2)
      const text = yield* Prometheus.snapshotText
      assert.include(
        text,
        [
          "# HELP workqueue_depth Current depth of workqueue",
          "# TYPE workqueue_depth gauge",
          "workqueue_depth{name=\"q\",controller=\"c\"} 2"
        ].join("\n")
      )
      parse(text)
    }))

  it.effect("histograms: cumulative buckets ending with le=\"+Inf\", then _sum and _count", () =>
    Effect.gen(function*() {
      const histogram = Metric.histogram("controller_runtime_reconcile_time_seconds", {
        boundaries: Metric.boundariesFromIterable([0.1, 1, 10]),
        description: "Length of time per reconciliation per controller"
      })
      const time = tagged(histogram, { controller: "c" })
      for (const seconds of [0.25, 0.5, 0.5, 20]) yield* Metric.update(time, seconds)
      // Both attributes at once: effect 4 puts the attributes of an outer `withAttributes` first.
      yield* Metric.update(tagged(histogram, { controller: "c", extra: "x" }), 0.0625)

      const text = yield* exposition("controller_runtime_reconcile_time_seconds")
      assert.strictEqual(
        text,
        [
          "# HELP controller_runtime_reconcile_time_seconds Length of time per reconciliation per controller",
          "# TYPE controller_runtime_reconcile_time_seconds histogram",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"0.1\"} 0",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"1\"} 3",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"10\"} 3",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",le=\"+Inf\"} 4",
          "controller_runtime_reconcile_time_seconds_sum{controller=\"c\"} 21.25",
          "controller_runtime_reconcile_time_seconds_count{controller=\"c\"} 4",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",extra=\"x\",le=\"0.1\"} 1",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",extra=\"x\",le=\"1\"} 1",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",extra=\"x\",le=\"10\"} 1",
          "controller_runtime_reconcile_time_seconds_bucket{controller=\"c\",extra=\"x\",le=\"+Inf\"} 1",
          "controller_runtime_reconcile_time_seconds_sum{controller=\"c\",extra=\"x\"} 0.0625",
          "controller_runtime_reconcile_time_seconds_count{controller=\"c\",extra=\"x\"} 1",
          ""
        ].join("\n")
      )
      parse(text)
    }))

  it.effect("summaries: a sample per quantile, then _sum and _count", () =>
    Effect.gen(function*() {
      const latency = Metric.summary("prometheus_test_summary", {
        description: "A summary",
        maxAge: "1 hour",
        maxSize: 100,
        quantiles: [0.5, 0.9]
      })
      for (const value of [2, 2, 2]) yield* Metric.update(latency, value)
      const text = yield* exposition("prometheus_test_summary")
      assert.strictEqual(
        text,
        [
          "# HELP prometheus_test_summary A summary",
          "# TYPE prometheus_test_summary summary",
          "prometheus_test_summary{quantile=\"0.5\"} 2",
          "prometheus_test_summary{quantile=\"0.9\"} 2",
          "prometheus_test_summary_sum 6",
          "prometheus_test_summary_count 3",
          ""
        ].join("\n")
      )
      parse(text)
    }))

  it.effect("frequencies: a counter per occurrence, labelled key", () =>
    Effect.gen(function*() {
      const errors = tagged(Metric.frequency("prometheus_test_errors", { description: "Errors by kind" }), {
        controller: "c"
      })
      for (const kind of ["conflict", "timeout", "conflict"]) yield* Metric.update(errors, kind)
      assert.strictEqual(Prometheus.frequencyLabel, "key")
      const text = yield* exposition("prometheus_test_errors")
      assert.strictEqual(
        text,
        [
          "# HELP prometheus_test_errors Errors by kind",
          "# TYPE prometheus_test_errors counter",
          "prometheus_test_errors{controller=\"c\",key=\"conflict\"} 2",
          "prometheus_test_errors{controller=\"c\",key=\"timeout\"} 1",
          ""
        ].join("\n")
      )
    }))

  it.effect("names are made valid; HELP and label values are escaped", () =>
    Effect.gen(function*() {
      const requests = Metric.counter("prometheus.test-requests", { description: "Line one\nback\\slash" })
      yield* Metric.update(tagged(requests, { "http.method": "a \"quoted\"\nvalue\\" }), 1)
      const text = yield* exposition("prometheus.test-requests")
      assert.strictEqual(
        text,
        [
          "# HELP prometheus_test_requests Line one\\nback\\\\slash",
          "# TYPE prometheus_test_requests counter",
          "prometheus_test_requests{http_method=\"a \\\"quoted\\\"\\nvalue\\\\\"} 1",
          ""
        ].join("\n")
      )
      assert.deepStrictEqual(parse(text)[0]?.labels, [["http_method", "a \"quoted\"\nvalue\\"]])
    }))

  it.effect("one type per name: the first metric keeps it, one series per label set", () =>
    Effect.gen(function*() {
      const name = "prometheus_test_clash"
      const text = yield* Prometheus.format(
        yield* snapshotOf(Effect.all([
          Metric.update(Metric.counter(name, { description: "first" }), 1),
          Metric.update(Metric.gauge(name), 7),
          Metric.update(Metric.counter(name, { description: "second" }), 2)
        ], { discard: true }))
      )
      assert.strictEqual(
        text,
        "# HELP prometheus_test_clash first\n# TYPE prometheus_test_clash counter\nprometheus_test_clash 1\n"
      )
    }))

  it.effect("names of Object.prototype members are ordinary names", () =>
    Effect.gen(function*() {
      const attributes: Array<[string, string]> = [["__proto__", "p"], ["constructor", "c"]]
      const text = yield* Prometheus.format(
        yield* snapshotOf(
          Effect.forEach(
            ["__proto__", "constructor", "toString"],
            (name) => Metric.update(Metric.counter(name, { attributes }), 1),
            { discard: true }
          )
        )
      )
      assert.deepStrictEqual(
        text.split("\n").filter((line) => !line.startsWith("#") && line !== ""),
        ["__proto__", "constructor", "toString"].map((name) => `${name}{__proto__="p",constructor="c"} 1`)
      )
    }))

  it.effect.prop(
    "whatever names, descriptions, tags and values Effect metrics carry, the exposition parses back to them",
    [
      string(20),
      string(40),
      // Unique by name (fast-check's `uniqueArray` with a selector): later duplicates are dropped.
      Arbitrary.map(
        Arbitrary.array(
          Arbitrary.all([
            Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[a-z_][a-z0-9_]{0,8}$/))),
            string(40)
          ]),
          { maxLength: 4 }
        ),
        (tags) => tags.filter(([name], i) => tags.findIndex(([other]) => other === name) === i)
      ),
      Schema.Number
    ],
    ([name, description, tags, value]) =>
      Effect.gen(function*() {
        const gauge = Metric.gauge(name, { description, attributes: tags })
        const text = yield* Prometheus.format(yield* snapshotOf(Metric.update(gauge, value)))
        const samples = parse(text)
        assert.strictEqual(samples.length, 1)
        assert.deepStrictEqual(samples[0]!.labels, tags)
        assert.isTrue(Object.is(samples[0]!.value, value === 0 ? 0 : value), `${samples[0]!.value} is ${value}`)
      })
  )

  it.effect.prop(
    "histogram buckets never decrease with le, and le=\"+Inf\" equals _count",
    [
      Arbitrary.array(Arbitrary.schema(Schema.Finite.check(Schema.isBetween({ minimum: -1e6, maximum: 1e6 }))), {
        minLength: 1,
        maxLength: 8
      }),
      Arbitrary.array(Arbitrary.filter(Arbitrary.schema(Schema.Number), (n) => !Number.isNaN(n)), { maxLength: 50 })
    ],
    ([boundaries, observations]) =>
      Effect.gen(function*() {
        // Deduplicated, with +Inf appended, as effect 3's `MetricBoundaries.fromIterable` did (effect 4's
        // `Metric.boundariesFromIterable` also drops boundaries <= 0, which would narrow the property).
        const histogram = Metric.histogram("prometheus_test_histogram", {
          boundaries: [...new Set([...boundaries, Infinity])]
        })
        // Reading the histogram registers its series, also when there are no observations.
        const record = Effect.andThen(
          Metric.value(histogram),
          Effect.forEach(observations, (observation) => Metric.update(histogram, observation), { discard: true })
        )
        const text = yield* Prometheus.format(yield* snapshotOf(record))
        const samples = parse(text)
        const buckets = samples.filter((s) => s.name === "prometheus_test_histogram_bucket")
        const les = buckets.map((s) => parseValue(s.labels.find(([k]) => k === "le")![1]))
        assert.deepStrictEqual(les, [...les].sort((a, b) => a - b))
        assert.strictEqual(les.at(-1), Infinity)
        assert.strictEqual(new Set(les).size, les.length)
        for (let i = 1; i < buckets.length; i++) assert.isAtMost(buckets[i - 1]!.value, buckets[i]!.value)
        const count = samples.find((s) => s.name === "prometheus_test_histogram_count")!.value
        assert.strictEqual(buckets.at(-1)!.value, count)
        assert.strictEqual(count, observations.length)
      })
  )
})
