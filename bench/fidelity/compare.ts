/**
 * Normalising the answers of one server to one scenario, and comparing them field by field with the other's.
 *
 * Normalised (what legitimately differs between two servers given the same requests):
 * - uids: every UUID in any string or object key (managedFields name owner references by uid) becomes `<uid:k>`,
 *   k its order of first appearance in the scenario;
 * - resourceVersions: each value becomes `<rv:k>` by order of first appearance, so that equal, newer and older are
 *   still compared (also those quoted in messages: an object's, a failed delete precondition's); a list's or a
 *   bookmark's resourceVersion (the server's current one, which other writers move) becomes `<rv:current>` when it
 *   is not older than every resourceVersion the scenario has seen;
 * - generated names (`generateName` + 5 random characters) become `<prefix><gen:k>`;
 * - timestamps (RFC 3339, also inside strings: creation and deletion timestamps, managedFields' `time`,
 *   conditions) become `<time>`, and a Table's `Age` cells `<age>`; managedFields entries, which servers order by
 *   time (seconds) first, are compared in operation, manager, apiVersion, subresource order;
 * - continue tokens (opaque) become `<continue>`; the server's current resourceVersion and the oldest one it keeps,
 *   quoted in the 504 and 410 messages, `<rv>`;
 * - headers: only Content-Type, Warning, Retry-After and Cache-Control are compared (Date, Audit-Id,
 *   X-Kubernetes-Pf-*, Content-Length, ETag are each server's own).
 */
import type { Answer } from "./client.js"
import type { Compare } from "./scenario.js"

export interface Difference {
  readonly step: number
  readonly path: string
  readonly embedded: unknown
  readonly real: unknown
}

export interface Normalised {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

const COMPARED_HEADERS = ["content-type", "warning", "retry-after", "cache-control"]
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g
const DIGITS = /^\d+$/

/** The body as data: JSON, a watch's events, or a placeholder for protobuf and other binary bodies. */
export const parse = (answer: Answer, watch: boolean): unknown => {
  const type = answer.headers["content-type"] ?? ""
  const text = answer.body.toString("utf8")
  if (type.includes("protobuf")) return `<protobuf ${answer.body.length} bytes>`
  if (watch && type.includes("json")) {
    return text.split("\n").filter((l) => l.trim() !== "").map((l) => {
      try {
        return JSON.parse(l) as unknown
      } catch {
        return l
      }
    })
  }
  if (type.includes("json")) {
    try {
      return JSON.parse(text) as unknown
    } catch {
      return text
    }
  }
  return text
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Normalises the answers of one server, in step order (the token numbering follows that order). */
export const normalise = (
  answers: ReadonlyArray<
    { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: unknown } | undefined
  >
): ReadonlyArray<Normalised | undefined> => {
  const rvs = new Map<string, string>()
  const uids = new Map<string, string>()
  const generated = new Map<string, string>()
  let newest = 0

  const collectGenerated = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(collectGenerated)
    if (!isObject(v)) return
    const meta = v.metadata
    if (isObject(meta) && typeof meta.generateName === "string" && typeof meta.name === "string") {
      if (!generated.has(meta.name) && meta.name !== meta.generateName) {
        generated.set(meta.name, `${meta.generateName}<gen:${generated.size + 1}>`)
      }
    }
    for (const k of Object.keys(v)) collectGenerated(v[k])
  }
  for (const a of answers) if (a !== undefined) collectGenerated(a.body)

  const rv = (value: string, current: boolean): string => {
    const n = Number(value)
    if (current && n >= newest) return "<rv:current>"
    let token = rvs.get(value)
    if (token === undefined) {
      token = `<rv:${rvs.size + 1}>`
      rvs.set(value, token)
    }
    if (n > newest) newest = n
    return token
  }

  const text = (s: string): string => {
    let out = s.replace(TIMESTAMP, "<time>").replace(UUID, (u) => {
      let token = uids.get(u)
      if (token === undefined) {
        token = `<uid:${uids.size + 1}>`
        uids.set(u, token)
      }
      return token
    })
    for (const [name, token] of generated) out = out.split(name).join(token)
    out = out
      .replace(/current: \d+/g, "current: <rv>")
      // an object quoted in a message (strict decoding errors quote the patched object)
      .replace(/(\\?"resourceVersion\\?":\\?")(\d+)/g, (_m, p: string, v: string) => `${p}${rv(v, false)}`)
      // a failed delete precondition quotes the precondition's and the stored object's resourceVersions
      .replace(
        /(ResourceVersion in (?:the precondition|record) \()(\d+)\)/g,
        (_m, p: string, v: string) => `${p}${rv(v, false)})`
      )
      .replace(
        /(too old resource version: )(\d+) \((\d+)\)/g,
        (_m, p: string, a: string) => `${p}${rv(a, false)} (<rv>)`
      )
    return out
  }

  const isList = (o: Record<string, Json>): boolean =>
    Array.isArray(o.items) || o.kind === "Table" || (typeof o.kind === "string" && o.kind.endsWith("List"))

  // mode 1: an object whose metadata holds the server's current resourceVersion (a list, a bookmark's object);
  // mode 2: that metadata
  const walk = (v: Json, key: string | undefined, mode: 0 | 1 | 2): Json => {
    if (typeof v === "string") {
      if (key === "resourceVersion" && DIGITS.test(v)) return rv(v, mode === 2)
      if (key === "continue" && v !== "") return "<continue>"
      return text(v)
    }
    if (Array.isArray(v)) {
      const items = v.map((x) => walk(x, undefined, 0))
      // managedFields are ordered by their (second-precision) times first: the order follows the normalised time
      if (key !== "managedFields") return items
      const rank = (e: Json) =>
        isObject(e) ? `${e.operation}\u0000${e.manager}\u0000${e.apiVersion}\u0000${e.subresource ?? ""}` : ""
      return [...items].sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0))
    }
    if (!isObject(v)) return v
    const holder = mode === 1 || isList(v)
    const out: Record<string, Json> = {}
    for (const k of Object.keys(v).sort()) {
      const child: 0 | 1 | 2 = mode === 2
        ? 2
        : k === "metadata" && holder
        ? 2
        : k === "object" && v.type === "BOOKMARK"
        ? 1
        : 0
      out[text(k)] = walk(v[k]!, k, child)
    }
    if (v.kind === "Table" && Array.isArray(v.columnDefinitions) && Array.isArray(out.rows)) {
      const age = v.columnDefinitions.findIndex((c) => isObject(c) && c.name === "Age")
      if (age >= 0) {
        out.rows = out.rows.map((r) =>
          isObject(r) && Array.isArray(r.cells) ? { ...r, cells: r.cells.map((c, i) => (i === age ? "<age>" : c)) } : r
        )
      }
    }
    return out
  }

  return answers.map((a) => {
    if (a === undefined) return undefined
    const headers: Record<string, string> = {}
    for (const h of COMPARED_HEADERS) {
      const value = a.headers[h]
      if (value !== undefined) headers[h] = text(value)
    }
    return { status: a.status, headers, body: walk(a.body as Json, undefined, 0) }
  })
}

const MAX_VALUE = 400
const MAX_PER_STEP = 12

const capped = (v: unknown): unknown => {
  if (v === undefined) return "<absent>"
  const s = JSON.stringify(v)
  return s.length <= MAX_VALUE ? v : `${s.slice(0, MAX_VALUE)}…`
}

const diffValues = (
  a: unknown,
  b: unknown,
  path: string,
  out: Array<{ path: string; a: unknown; b: unknown }>
): void => {
  if (out.length > MAX_PER_STEP) return
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) diffValues(a[i], b[i], `${path}[${i}]`, out)
    return
  }
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      diffValues(a[k], b[k], path === "" ? k : `${path}.${k}`, out)
    }
    return
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, a, b })
}

/** The differences of one step's normalised answers, after the step's projection. */
export const diffStep = (step: number, compare: Compare, embedded: Normalised, real: Normalised): Array<Difference> => {
  const found: Array<{ path: string; a: unknown; b: unknown }> = []
  diffValues(embedded.status, real.status, "status", found)
  if (compare === "head") {
    diffValues(embedded.headers["content-type"], real.headers["content-type"], "headers.content-type", found)
  } else {
    diffValues(embedded.headers, real.headers, "headers", found)
    const project = compare === "full" ? (b: unknown) => b : compare
    diffValues(project(embedded.body), project(real.body), "body", found)
  }
  const shown = found.slice(0, MAX_PER_STEP).map((d) => ({
    step,
    path: d.path,
    embedded: capped(d.a),
    real: capped(d.b)
  }))
  if (found.length > MAX_PER_STEP) {
    shown.push({ step, path: "…", embedded: "more differences", real: "more differences" })
  }
  return shown
}
