/**
 * The module structure of the packages, read from their sources with `ts.preProcessFile` (every relative import:
 * type-only ones, re-exports and dynamic `import()` included; `./x.js` is the source `./x.ts`):
 *
 * - in every package's `src`, dependencies point one way: no import cycle, but a public module and its internal
 *   twin importing each other (`Queue.ts` ↔ `internal/queue.ts`);
 * - importing `@reconcile/testkit/TestCluster` (the in-process core) loads none of the modules of the HTTP server
 *   (`internal/http/`: routing, discovery, OpenAPI documents, Table output, field validation reports, the `pods/log`
 *   stream), its protobuf codec (`internal/protobuf/`) or its OpenAPI definitions (`internal/openapi/`): those are
 *   `@reconcile/testkit/TestApiServer`'s, which the cli loads by dynamic import only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const packagesDir = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..")

interface Edge {
  readonly to: string
  /** An `import("…")` expression: loaded when it runs, not with the module. */
  readonly dynamic: boolean
}

/** Every `.ts` source under `dir` (declaration files aside), as absolute paths. */
const sources = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** The relative imports of each source file of a package's `src`, resolved to the files they load. */
const importGraph = (src: string): ReadonlyMap<string, ReadonlyArray<Edge>> => {
  const graph = new Map<string, ReadonlyArray<Edge>>()
  for (const file of sources(src)) {
    const text = Fs.readFileSync(file, "utf8")
    const edges: Array<Edge> = []
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith(".")) continue
      const to = Path.resolve(Path.dirname(file), ref.fileName.replace(/\.js$/, ".ts"))
      assert.isTrue(Fs.existsSync(to), `${Path.relative(src, file)}: ${ref.fileName} is no source file`)
      edges.push({ to, dynamic: /\bimport\s*\(\s*$/.test(text.slice(0, ref.pos)) })
    }
    graph.set(file, edges)
  }
  return graph
}

/** The strongly connected components of more than one file (Tarjan's algorithm), each sorted. */
const cycles = (graph: ReadonlyMap<string, ReadonlyArray<Edge>>): Array<Array<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const out: Array<Array<string>> = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next)
    next++
    stack.push(v)
    onStack.add(v)
    for (const { to } of graph.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(v, Math.min(low.get(v)!, low.get(to)!))
      } else if (onStack.has(to)) {
        low.set(v, Math.min(low.get(v)!, index.get(to)!))
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: Array<string> = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) out.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

/** A public module and its internal twin: `X.ts` and `internal/x.ts`, beside each other. */
const isPublicInternalPair = (src: string, component: ReadonlyArray<string>): boolean => {
  if (component.length !== 2) return false
  const [a, b] = component.map((f) => Path.relative(src, f).split(Path.sep).join("/"))
  const twin = (pub: string, int: string) =>
    !pub.includes("/") && int === `internal/${pub.charAt(0).toLowerCase()}${pub.slice(1)}`
  return twin(a!, b!) || twin(b!, a!)
}

/** The files a module loads with it (static imports, transitively), itself included. */
const loadedWith = (graph: ReadonlyMap<string, ReadonlyArray<Edge>>, entry: string): Set<string> => {
  const seen = new Set([entry])
  const queue = [entry]
  while (queue.length > 0) {
    for (const { dynamic, to } of graph.get(queue.pop()!) ?? []) {
      if (!dynamic && !seen.has(to)) {
        seen.add(to)
        queue.push(to)
      }
    }
  }
  return seen
}

const packages = Fs.readdirSync(packagesDir).filter((name) => Fs.existsSync(Path.join(packagesDir, name, "src")))

describe("structure", () => {
  it("reads every package", () => {
    for (const name of ["workqueue", "core", "kube", "testkit", "cli"]) assert.include(packages, name)
  })

  for (const name of packages) {
    it(`${name}: no import cycle but a public module and its internal twin`, () => {
      const src = Path.join(packagesDir, name, "src")
      const found = cycles(importGraph(src))
        .filter((component) => !isPublicInternalPair(src, component))
        .map((component) => component.map((f) => Path.relative(src, f)).join(", "))
      assert.deepStrictEqual(found, [])
    })
  }

  it("importing @reconcile/testkit/TestCluster loads none of the HTTP server's modules", () => {
    const src = Path.join(packagesDir, "testkit", "src")
    const loaded = [...loadedWith(importGraph(src), Path.join(src, "TestCluster.ts"))]
      .map((f) => Path.relative(src, f).split(Path.sep).join("/"))
    assert.include(loaded, "internal/store.ts")
    assert.deepStrictEqual(
      loaded.filter((f) => /^internal\/(http|protobuf|openapi)\//.test(f) || /^(TestApiServer|TestKube)\.ts$/.test(f)),
      []
    )
  })
})
