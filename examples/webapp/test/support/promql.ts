/**
 * Checks PromQL queries (a dashboard's panels and variables, a PrometheusRule's alerts) against a Prometheus
 * exposition text: every metric a selector names must be exposed, and every label a matcher, `by (...)`,
 * `without (...)`, `on (...)` or `ignoring (...)` uses must be a label of that metric's samples, or one Prometheus
 * adds when it scrapes (`job`, `namespace`, `instance`, `pod`). Queries are parsed by Prometheus's own grammar
 * (`@prometheus-io/lezer-promql`, what the Prometheus UI uses); a query that does not parse is a problem too.
 */
import { parser } from "@prometheus-io/lezer-promql"

/** The labels Prometheus (with the Prometheus Operator's ServiceMonitor) gives every series of a target. */
export const targetLabels: ReadonlySet<string> = new Set(["job", "namespace", "instance", "pod", "service"])

/** Sample names of an exposition text, each with the label names its samples carry. */
export const parseExposition = (text: string): Map<string, Set<string>> => {
  const out = new Map<string, Set<string>>()
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/.exec(line)
    if (match === null) throw new Error(`not an exposition sample line: ${line}`)
    const labels = out.get(match[1]!) ?? new Set<string>()
    for (const label of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g)) labels.add(label[1]!)
    out.set(match[1]!, labels)
  }
  return out
}

/** A series selector of a query: its metric and every label the query uses on it. */
export interface Selector {
  readonly metric: string
  readonly labels: ReadonlySet<string>
}

type Node = ReturnType<typeof parser.parse>["topNode"]

const children = (node: Node): Array<Node> => {
  const out: Array<Node> = []
  for (let child = node.firstChild; child !== null; child = child.nextSibling) out.push(child)
  return out
}

const descendants = (node: Node, name: string): Array<Node> =>
  children(node).flatMap((child) =>
    child.name === name ? [child, ...descendants(child, name)] : descendants(child, name)
  )

/** Grafana's interval variables, which are not PromQL, as a duration. */
const withoutGrafanaIntervals = (query: string): string => query.replace(/\$__(rate_interval|interval|range)\b/g, "5m")

/**
 * The selectors of a query, with the labels it uses on each; throws on a query that does not parse (the first
 * error's position and the text around it).
 */
export const selectors = (query: string): ReadonlyArray<Selector> => {
  const text = withoutGrafanaIntervals(query)
  const tree = parser.parse(text)
  const cursor = tree.cursor()
  do {
    if (cursor.type.isError) {
      throw new Error(
        `the query does not parse at ${cursor.from} ("${text.slice(cursor.from, cursor.from + 20)}"): ${query}`
      )
    }
  } while (cursor.next())
  const found: Array<{ readonly metric: string; readonly labels: Set<string> }> = []
  const source = (node: Node) => text.slice(node.from, node.to)
  const visit = (node: Node): Array<{ readonly metric: string; readonly labels: Set<string> }> => {
    if (node.name === "VectorSelector") {
      const identifier = node.getChild("Identifier")
      const labels = new Set(descendants(node, "LabelName").map(source))
      if (identifier === null) throw new Error(`a selector without a metric name: ${source(node)}`)
      const selector = { metric: source(identifier), labels }
      found.push(selector)
      return [selector]
    }
    const inner = children(node).flatMap(visit)
    // by/without of an aggregation, on/ignoring/group_left/group_right of a binary operation: labels of its operands
    const modifiers = children(node).filter((c) =>
      c.name === "AggregateModifier" || c.name === "MatchingModifierClause"
    )
    for (const modifier of modifiers) {
      for (const label of descendants(modifier, "LabelName").map(source)) {
        for (const selector of inner) selector.labels.add(label)
      }
    }
    return inner
  }
  visit(tree.topNode)
  return found
}

/**
 * What is wrong with a query against an exposition: unknown metrics, labels the metric does not have, a query that
 * does not parse. Grafana's `label_values(query, label)` is checked as its query and its label.
 */
export const problems = (query: string, exposed: ReadonlyMap<string, ReadonlySet<string>>): Array<string> => {
  const labelValues = /^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/.exec(query)
  const expr = labelValues === null ? query : labelValues[1]!
  let found: ReadonlyArray<Selector>
  try {
    found = selectors(expr).map((s) =>
      labelValues === null ? s : { ...s, labels: new Set([...s.labels, labelValues[2]!]) }
    )
  } catch (error) {
    return [(error as Error).message]
  }
  if (found.length === 0) return [`no metric in: ${query}`]
  const out: Array<string> = []
  for (const selector of found) {
    const labels = exposed.get(selector.metric)
    if (labels === undefined) {
      out.push(`${selector.metric} is not exposed (in: ${query})`)
      continue
    }
    for (const label of selector.labels) {
      if (!labels.has(label) && !targetLabels.has(label)) {
        out.push(`${selector.metric} has no label ${label} (it has ${[...labels].join(", ") || "none"}; in: ${query})`)
      }
    }
  }
  return out
}

/** Every query of a Grafana dashboard: its panels' targets (rows' nested panels too) and its query variables. */
export const dashboardQueries = (dashboard: any): Array<string> => {
  const panels = (list: ReadonlyArray<any>): Array<any> => list.flatMap((p) => [p, ...panels(p.panels ?? [])])
  return [
    ...panels(dashboard.panels ?? []).flatMap((p) => (p.targets ?? []).map((t: any) => t.expr as string)),
    ...(dashboard.templating?.list ?? [])
      .filter((v: any) => v.type === "query")
      .map((v: any) => typeof v.query === "string" ? v.query : v.query.query as string)
  ]
}

/** Every alerting and recording rule's expression of a PrometheusRule. */
export const ruleQueries = (rule: any): Array<string> =>
  (rule.spec?.groups ?? []).flatMap((g: any) => (g.rules ?? []).map((r: any) => r.expr as string))
