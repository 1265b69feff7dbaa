import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as PromClient from "prom-client"

/** @internal */
export const contentType: string = PromClient.prometheusContentType

/** @internal */
export const frequencyLabel = "key"

type Labels = Record<string, string>

type PromType = "counter" | "gauge" | "histogram" | "summary"

/** One sample line as prom-client's `Registry` reads it from a metric's `get()`. */
interface Sample {
  readonly value: number
  readonly labels: Labels
  readonly metricName?: string
}

/**
 * What prom-client's `Registry` expects from a registered metric (see `prom-client/lib/registry.js`): it keys
 * metrics by `name` and prints what `get()` returns, including the name.
 */
interface Collector {
  /** The family's name; the registry is given another key (see {@link format}), and prints the name from `get()`. */
  readonly name: string
  readonly get: () => Promise<{
    readonly name: string
    readonly help: string
    readonly type: PromType
    readonly values: ReadonlyArray<Sample>
    readonly aggregator: "sum"
  }>
}

interface Series {
  /** The label set sorted by name, to order series and to find duplicates. */
  readonly key: ReadonlyArray<readonly [string, string]>
  readonly id: string
  readonly samples: ReadonlyArray<Sample>
}

interface Family {
  readonly name: string
  readonly type: PromType
  help: string
  readonly series: Map<string, Series>
}

/** @internal */
export const sanitizeMetricName = (name: string): string => {
  const replaced = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return replaced === "" || /^[0-9]/.test(replaced) ? `_${replaced}` : replaced
}

/** @internal */
export const sanitizeLabelName = (name: string): string => {
  const replaced = name.replace(/[^a-zA-Z0-9_]/g, "_")
  return replaced === "" || /^[0-9]/.test(replaced) ? `_${replaced}` : replaced
}

// `Object.fromEntries` defines properties, so an attribute named `__proto__` is a label, not a prototype.
const labelsOf = (snapshot: Metric.Metric.Snapshot): Labels =>
  Object.fromEntries(
    new Map(Object.entries(snapshot.attributes ?? {}).map(([key, value]) => [sanitizeLabelName(key), value]))
  )

/** Label sets are compared by content: Effect keys tags by order, Prometheus by name. */
const makeSeries = (labels: Labels, samples: ReadonlyArray<Sample>): Series => {
  const key = Object.entries(labels).sort(([a], [b]) => compare(a, b))
  return { key, id: JSON.stringify(key), samples }
}

/** Orders label sets pair by pair, a label set before those it is a prefix of. */
const compareSeries = (a: Series, b: Series): number => {
  for (let i = 0; i < Math.min(a.key.length, b.key.length); i++) {
    const [nameA, valueA] = a.key[i]!
    const [nameB, valueB] = b.key[i]!
    const order = compare(nameA, nameB) || compare(valueA, valueB)
    if (order !== 0) return order
  }
  return a.key.length - b.key.length
}

/** The Prometheus type and samples of one Effect metric. */
const toSeries = (
  name: string,
  labels: Labels,
  snapshot: Metric.Metric.Snapshot
): { readonly type: PromType; readonly series: ReadonlyArray<Series> } => {
  const single = (samples: ReadonlyArray<Sample>): ReadonlyArray<Series> => [makeSeries(labels, samples)]
  switch (snapshot.type) {
    case "Counter":
      return { type: "counter", series: single([{ value: Number(snapshot.state.count), labels }]) }
    case "Gauge":
      return { type: "gauge", series: single([{ value: Number(snapshot.state.value), labels }]) }
    case "Histogram": {
      const state = snapshot.state
      const buckets: Array<Sample> = []
      for (const [bound, count] of state.buckets) {
        // Boundaries made by `Metric.boundariesFromIterable` end with +Inf; it is emitted below from the total count.
        if (Number.isFinite(bound)) {
          buckets.push({ value: count, labels: { ...labels, le: String(bound) }, metricName: `${name}_bucket` })
        }
      }
      return {
        type: "histogram",
        series: single([
          ...buckets,
          { value: state.count, labels: { ...labels, le: "+Inf" }, metricName: `${name}_bucket` },
          { value: state.sum, labels, metricName: `${name}_sum` },
          { value: state.count, labels, metricName: `${name}_count` }
        ])
      }
    }
    case "Summary": {
      const state = snapshot.state
      return {
        type: "summary",
        series: single([
          ...state.quantiles.map(([quantile, value]): Sample => ({
            value: value ?? NaN,
            labels: { ...labels, quantile: String(quantile) }
          })),
          { value: state.sum, labels, metricName: `${name}_sum` },
          { value: state.count, labels, metricName: `${name}_count` }
        ])
      }
    }
    case "Frequency":
      return {
        type: "counter",
        series: Array.from(snapshot.state.occurrences, ([occurrence, count]) => {
          const withKey = { ...labels, [frequencyLabel]: occurrence }
          return makeSeries(withKey, [{ value: count, labels: withKey }])
        })
      }
  }
}

/** Groups Effect metrics by Prometheus name: one family per name, one series per label set. */
const toFamilies = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>): ReadonlyArray<Family> => {
  const families = new Map<string, Family>()
  for (const snapshot of snapshots) {
    const name = sanitizeMetricName(snapshot.id)
    const converted = toSeries(name, labelsOf(snapshot), snapshot)
    const help = snapshot.description ?? ""
    let family = families.get(name)
    if (family === undefined) {
      family = { name, type: converted.type, help, series: new Map() }
      families.set(name, family)
    }
    // A name holds one type in Prometheus: the first metric seen decides, others are skipped.
    if (family.type !== converted.type) continue
    if (family.help === "") family.help = help
    for (const series of converted.series) {
      // Two Effect metrics with one name and label set (e.g. different descriptions): the first wins.
      if (!family.series.has(series.id)) family.series.set(series.id, series)
    }
  }
  return Array.from(families.values()).sort((a, b) => compare(a.name, b.name))
}

const compare = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

const toCollector = (family: Family): Collector => {
  const values = Array.from(family.series.values())
    .sort(compareSeries)
    .flatMap((series) => series.samples)
  const result = { name: family.name, help: family.help, type: family.type, values, aggregator: "sum" as const }
  return { name: family.name, get: () => Promise.resolve(result) }
}

/** The families of a prom-client registry (the default collectors'), as collectors of the exposition registry. */
const registryFamilies = async (registry: PromClient.Registry): Promise<ReadonlyArray<Collector>> => {
  const metrics = await registry.getMetricsAsJSON()
  return metrics.map((metric) => {
    const result = {
      name: metric.name,
      help: metric.help,
      type: metric.type as unknown as PromType,
      values: metric.values as ReadonlyArray<Sample>,
      aggregator: "sum" as const
    }
    return { name: metric.name, get: () => Promise.resolve(result) }
  })
}

let processRegistry: PromClient.Registry | undefined

/**
 * The registry of prom-client's default collectors (process and Node.js metrics), made once per process: the
 * collectors measure the process, and some of them (event loop delay, garbage collection) observe it from the moment
 * they are made. @internal
 */
export const processMetrics = (): PromClient.Registry => {
  if (processRegistry === undefined) {
    processRegistry = new PromClient.Registry()
    PromClient.collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** @internal */
export const format = (
  snapshots: ReadonlyArray<Metric.Metric.Snapshot>,
  extra?: PromClient.Registry | undefined
): Effect.Effect<string> =>
  Effect.promise(async () => {
    const registry = new PromClient.Registry()
    const fromRegistry = extra === undefined ? [] : await registryFamilies(extra)
    // The default collectors keep their names: an Effect metric with one of them is left out (one family per name).
    const taken = new Set(fromRegistry.map((collector) => collector.name))
    const collectors: Array<Collector> = [...fromRegistry]
    for (const family of toFamilies(snapshots)) {
      if (!taken.has(family.name)) collectors.push(toCollector(family))
    }
    collectors.sort((a, b) => compare(a.name, b.name)).forEach((collector, index) => {
      // prom-client types `registerMetric` with its own metric classes; at run time the registry only reads
      // `name` and calls `get()` (lib/registry.js), which is what a Collector provides. The registry keeps
      // metrics in a plain object, so a family named `constructor` or `__proto__` cannot be its key: the key
      // is the family's position (not an array index, so insertion order is kept), the name comes from get().
      registry.registerMetric({ name: `family ${index}`, get: collector.get } as unknown as PromClient.Metric)
    })
    return registry.metrics()
  })

/** @internal */
export const snapshotText: Effect.Effect<string> = Effect.flatMap(Metric.snapshot, (snapshots) => format(snapshots))

/** @internal */
export const text = (options: { readonly processMetrics?: boolean | undefined } = {}): Effect.Effect<string> =>
  Effect.flatMap(
    Metric.snapshot,
    (snapshots) => format(snapshots, options.processMetrics === false ? undefined : processMetrics())
  )
