import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestCluster } from "../src/index.js"

// Paged lists (issue 15): each continue page counts what is left in scope from a count kept per list snapshot.
// Checked against the plain answer for random namespaces, object sets, page sizes and writes between pages.

/** A small deterministic generator (mulberry32): the same cases every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const namespaces = ["a", "b", "c"]
const cm = (namespace: string, name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data: { k: name }
})

describe("paged lists", () => {
  it.effect("remainingItemCount and the items of every page match the whole list, for random cases", () =>
    Effect.gen(function*() {
      const next = random(15)
      for (let c = 0; c < 40; c++) {
        const cluster = yield* TestCluster.TestCluster.pipe(Effect.provide(TestCluster.layer))
        for (const ns of namespaces) {
          yield* cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } })
        }
        const names = new Set<string>()
        const count = Math.floor(next() * 30)
        for (let i = 0; i < count; i++) {
          const ns = namespaces[Math.floor(next() * namespaces.length)]!
          const name = `cm-${Math.floor(next() * 50)}`
          if (names.has(`${ns}/${name}`)) continue
          names.add(`${ns}/${name}`)
          yield* cluster.create(cm(ns, name))
        }
        // two lists of different scopes at once (pages alternate): the counts are kept per scope
        const scopes = [0, 1].map(() => next() < 0.25 ? undefined : namespaces[Math.floor(next() * namespaces.length)])
        const limit = 1 + Math.floor(next() * 6)
        const lists = []
        for (const scope of scopes) {
          const whole = yield* cluster.list({ apiVersion: "v1", kind: "ConfigMap", namespace: scope })
          const expected = whole.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
          lists.push({
            scope,
            expected,
            seen: [] as Array<string>,
            token: undefined as string | undefined,
            done: false
          })
        }
        while (lists.some((l) => !l.done)) {
          for (const l of lists) {
            if (l.done) continue
            const page = yield* cluster.list({
              apiVersion: "v1",
              kind: "ConfigMap",
              namespace: l.scope,
              limit,
              continue: l.token
            })
            for (const o of page.items) l.seen.push(`${o.metadata.namespace}/${o.metadata.name}`)
            l.token = page.metadata.continue
            if (l.token !== undefined) {
              assert.strictEqual(page.metadata.remainingItemCount, l.expected.length - l.seen.length)
            } else {
              assert.strictEqual(page.metadata.remainingItemCount, undefined)
              l.done = true
            }
          }
          // a write between pages changes neither these lists' pages nor their counts
          if (next() < 0.3) {
            yield* cluster.create(cm(namespaces[0]!, `late-${c}-${lists[0]!.seen.length}-${lists[1]!.seen.length}`))
          }
        }
        for (const l of lists) assert.deepStrictEqual(l.seen, l.expected)
      }
    }))
})
