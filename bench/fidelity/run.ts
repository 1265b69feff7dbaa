/**
 * Running a scenario against both servers: a fresh namespace of the same name on each, then every step sent to
 * both at once (templates filled from each server's own earlier answers), then the answers normalised per server
 * and compared step by step.
 */
import type { Answer, Target } from "./client.js"
import { type Difference, diffStep, normalise, parse } from "./compare.js"
import type { Scenario, Step } from "./scenario.js"

export interface Outcome {
  readonly scenario: string
  readonly area: string
  readonly identical: boolean
  readonly differences: ReadonlyArray<Difference>
}

const sleep = (millis: number) => new Promise<void>((r) => setTimeout(r, millis))

const at = (value: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>(
    (v, k) => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[k] : undefined),
    value
  )

const shortcuts: Record<string, ReadonlyArray<string>> = {
  rv: ["metadata", "resourceVersion"],
  uid: ["metadata", "uid"],
  name: ["metadata", "name"]
}

/** Fills `{ns}`, `{rv:N}`, `{uid:N}`, `{name:N}` and `{N:a.b}` from this server's earlier answers. */
const fill = (template: string, namespace: string, bodies: ReadonlyArray<unknown>): string =>
  template.replace(/\{([a-z]+:)?(\d+)?:?([A-Za-z.]*)\}/g, (whole, short: string | undefined, n, path: string) => {
    if (whole === "{ns}") return namespace
    if (n === undefined) return whole
    const body = bodies[Number(n)]
    const field = short !== undefined ? shortcuts[short.slice(0, -1)] : path.split(".")
    const value = field === undefined ? undefined : at(body, field)
    return value === undefined ? `<no ${whole}>` : String(value)
  })

const fillBody = (value: unknown, namespace: string, bodies: ReadonlyArray<unknown>): unknown => {
  if (typeof value === "string") return fill(value, namespace, bodies)
  if (Array.isArray(value)) return value.map((v) => fillBody(v, namespace, bodies))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillBody(v, namespace, bodies)]))
  }
  return value
}

const send = async (target: Target, step: Step, namespace: string, bodies: ReadonlyArray<unknown>) => {
  const path = fill(step.path, namespace, bodies)
  const body = step.body === undefined
    ? undefined
    : typeof step.body === "string"
    ? fill(step.body, namespace, bodies)
    : JSON.stringify(fillBody(step.body, namespace, bodies))
  let answer: Answer
  try {
    answer = await target.request(step.method, path, body, step.headers ?? {})
  } catch (e) {
    answer = { status: 0, headers: {}, body: Buffer.from(e instanceof Error ? e.message : String(e)) }
  }
  return { status: answer.status, headers: answer.headers, body: parse(answer, step.watch === true) }
}

type Parsed = Awaited<ReturnType<typeof send>>

/** The namespace a scenario runs in (the same on both servers). */
export const namespaceOf = (index: number, scenario: Scenario): string =>
  `f${index}-${scenario.name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`.slice(0, 50).replace(/-+$/, "")

export const runScenario = async (
  scenario: Scenario,
  index: number,
  targets: readonly [Target, Target]
): Promise<Outcome> => {
  const namespace = namespaceOf(index, scenario)
  await Promise.all(targets.map((t) =>
    t.request(
      "POST",
      "/api/v1/namespaces",
      JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
      {}
    )
  ))
  // the real namespace is ready once its controllers have published kube-root-ca.crt into it (the embedded server
  // has no such controller: "configmaps in a fresh namespace" shows it); otherwise it could land mid-scenario
  for (let i = 0; i < 100; i++) {
    const got = await targets[1].request(
      "GET",
      `/api/v1/namespaces/${namespace}/configmaps/kube-root-ca.crt`,
      undefined,
      {}
    )
    if (got.status === 200) break
    await sleep(50)
  }
  const answers: [Array<Parsed | undefined>, Array<Parsed | undefined>] = [[], []]
  const pending: Array<Promise<void>> = []
  for (const [i, step] of scenario.steps.entries()) {
    if (step.delay !== undefined) await sleep(step.delay)
    if (step.action === "compact") {
      await Promise.all(targets.map((t) => t.compact()))
      continue
    }
    const both = Promise.all(targets.map((t, k) => send(t, step, namespace, answers[k]!.map((a) => a?.body))))
      .then(([a, b]) => {
        answers[0][i] = a
        answers[1][i] = b
      })
    if (step.background === true) {
      pending.push(both)
      // let the request reach the servers before the next step writes
      await sleep(300)
    } else await both
  }
  await Promise.all(pending)
  const [embedded, real] = answers.map((a) => normalise(scenario.steps.map((_, i) => a[i])))
  const differences: Array<Difference> = []
  for (const [i, step] of scenario.steps.entries()) {
    const e = embedded![i]
    const r = real![i]
    if (e === undefined || r === undefined) continue
    for (const d of diffStep(i, step.compare ?? "full", e, r)) differences.push(d)
  }
  return { scenario: scenario.name, area: scenario.area, identical: differences.length === 0, differences }
}
