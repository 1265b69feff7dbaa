/**
 * TestCluster with a data directory (SQLite through node:sqlite), in process: a restart restores everything, the
 * resourceVersion counter continues, a torn last transaction is dropped, damaged files are refused (and left as
 * they are), nothing is applied before it is durable, and work a crash cut short is finished at start.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Fiber, Schema, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { TestCluster } from "../src/index.js"
import { FILE, type Journal, open } from "../src/internal/persistence.js"
import { make as makeCluster } from "../src/internal/testCluster.js"
import type { KubeObject } from "../src/KubeObject.js"
import { cm, crd, deployment, ref } from "./support/fixtures.js"

type Obj = Record<string, any>

const made: Array<string> = []
const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "testkit-data-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) Fs.rmSync(dir, { recursive: true, force: true })
})

const apiVersionOf = (rt: { readonly group: string; readonly version: string }) =>
  rt.group === "" ? rt.version : `${rt.group}/${rt.version}`

/** Every stored object, by storage and name, as the API shows it. */
const dump = (cluster: TestCluster.TestCluster.Service) =>
  Effect.gen(function*() {
    const out: Record<string, Obj> = {}
    const seen = new Set<string>()
    for (const rt of yield* cluster.resources) {
      const storage = `${rt.group}/${rt.plural}`
      if (seen.has(storage)) continue
      seen.add(storage)
      const list = yield* cluster.list({ apiVersion: apiVersionOf(rt), kind: rt.kind })
      for (const item of list.items) out[`${storage} ${item.metadata.namespace ?? ""}/${item.metadata.name}`] = item
    }
    return out
  })

/** Runs `f` against a cluster on `dir`, closing the database at the end (a clean stop). */
const withData = <A, E>(
  dir: string,
  f: (cluster: TestCluster.TestCluster.Service) => Effect.Effect<A, E>
) => Effect.scoped(Effect.flatMap(TestCluster.makeWithData({ dataDir: dir }), f))

const webapp = (name: string, extra: Obj = {}): KubeObject =>
  ({
    apiVersion: "example.com/v1",
    kind: "WebApp",
    metadata: { name, namespace: "team", ...extra.metadata },
    spec: { replicas: 1, ...extra.spec }
  }) as KubeObject

const openFailure = (dir: string) => Effect.flip(Effect.scoped(TestCluster.makeWithData({ dataDir: dir })))

describe("TestCluster with a data directory", () => {
  it.effect("a restart restores objects, uids, resourceVersions, generations, managedFields, finalizers, deletions and CRDs; the counter continues", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const before = yield* withData(dir, (cluster) =>
        Effect.gen(function*() {
          yield* cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } })
          yield* cluster.create(crd() as KubeObject)
          const app = yield* cluster.create(webapp("web", { metadata: { finalizers: ["example.com/cleanup"] } }))
          const scaled = yield* cluster.update({ ...app, spec: { replicas: 3 } })
          assert.strictEqual(scaled.metadata.generation, 2)
          yield* cluster.updateStatus({ ...scaled, status: { ready: true } })
          yield* cluster.apply(cm("applied", { data: { a: "1" } }) as KubeObject, { fieldManager: "mgr" })
          const owned = deployment("web", 1, {
            metadata: {
              ownerReferences: [{ apiVersion: "example.com/v1", kind: "WebApp", name: "web", uid: app.metadata.uid }]
            }
          }, "team")
          yield* cluster.create(owned as KubeObject)
          yield* cluster.create(cm("held", { metadata: { finalizers: ["example.com/keep"] } }) as KubeObject)
          yield* cluster.delete(ref(cm("held")))
          yield* cluster.create(cm("gone") as KubeObject)
          yield* cluster.delete(ref(cm("gone")))
          yield* cluster.delete({ apiVersion: "example.com/v1", kind: "WebApp", namespace: "team", name: "web" })
          return { objects: yield* dump(cluster), rv: yield* cluster.resourceVersion }
        }))
      assert.isDefined(before.objects["example.com/webapps team/web"]!.metadata.deletionTimestamp)
      assert.deepStrictEqual(before.objects["/configmaps default/applied"]!.metadata.managedFields[0].manager, "mgr")

      yield* withData(dir, (cluster) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* dump(cluster), before.objects)
          assert.strictEqual(yield* cluster.resourceVersion, before.rv)
          const kinds = (yield* cluster.resources).map((rt) => rt.kind)
          assert.include(kinds, "WebApp")
          // A watch from before the restart is expired (it relists); one from the current version continues.
          const expired = yield* Stream.runCollect(cluster.watch({
            apiVersion: "v1",
            kind: "ConfigMap",
            resourceVersion: String(Number(before.rv) - 1)
          }))
          assert.strictEqual(expired[0]!.type, "ERROR")
          assert.strictEqual((expired[0]!.object as Obj).code, 410)
          const watch = yield* Effect.forkChild(Stream.runCollect(
            cluster.watch({ apiVersion: "v1", kind: "ConfigMap", resourceVersion: before.rv }).pipe(Stream.take(1))
          ))
          const next = yield* cluster.create(cm("after") as KubeObject)
          assert.strictEqual(Number(next.metadata.resourceVersion), Number(before.rv) + 1)
          assert.strictEqual((yield* Fiber.join(watch))[0]!.object.metadata.name, "after")
          // The semantics carry on: releasing the finalizer removes the WebApp, and the collector its Deployment.
          const app = yield* cluster.get({
            apiVersion: "example.com/v1",
            kind: "WebApp",
            namespace: "team",
            name: "web"
          })
          yield* cluster.update({ ...app, metadata: { ...app.metadata, finalizers: [] } })
          const left = yield* cluster.list({ apiVersion: "apps/v1", kind: "Deployment", namespace: "team" })
          assert.deepStrictEqual(left.items, [])
          yield* cluster.create(webapp("second"))
        }))
      // The CRD kind is served again after a second restart too, with the new object.
      yield* withData(dir, (cluster) =>
        Effect.gen(function*() {
          const apps = yield* cluster.list({ apiVersion: "example.com/v1", kind: "WebApp", namespace: "team" })
          assert.deepStrictEqual(apps.items.map((a) => a.metadata.name), ["second"])
        }))
    }))

  it.effect("a new data directory starts with the default namespaces; without one every start is empty", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      yield* withData(dir, (cluster) => cluster.create(cm("a") as KubeObject))
      const fresh = yield* TestCluster.make()
      assert.strictEqual(yield* fresh.resourceVersion, "4")
      const names = (yield* fresh.list({ apiVersion: "v1", kind: "Namespace" })).items.map((n) => n.metadata.name)
      assert.deepStrictEqual(names, ["default", "kube-node-lease", "kube-public", "kube-system"])
      assert.strictEqual(Fs.statSync(dir).mode & 0o777, 0o700)
      assert.strictEqual(Fs.statSync(Path.join(dir, FILE)).mode & 0o777, 0o600)
    }))

  it.effect("a torn last transaction (a crash mid-commit) is dropped; every earlier one is kept", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const crashed = tempDir()
      yield* withData(dir, (cluster) =>
        Effect.gen(function*() {
          yield* cluster.create(cm("a") as KubeObject)
          const b = yield* cluster.create(cm("b") as KubeObject)
          yield* cluster.create(cm("c") as KubeObject)
          // The files as a crash would leave them: the database open, the log's last frame cut short.
          Fs.copyFileSync(Path.join(dir, FILE), Path.join(crashed, FILE))
          const wal = Fs.readFileSync(Path.join(dir, `${FILE}-wal`))
          Fs.writeFileSync(Path.join(crashed, `${FILE}-wal`), wal.subarray(0, wal.length - 100))
          return b.metadata.resourceVersion
        })).pipe(Effect.flatMap((rvOfB) =>
          withData(crashed, (cluster) =>
            Effect.gen(function*() {
              const names = (yield* cluster.list({ apiVersion: "v1", kind: "ConfigMap", namespace: "default" })).items
                .map((c) => c.metadata.name)
              assert.deepStrictEqual(names, ["a", "b"])
              assert.strictEqual(yield* cluster.resourceVersion, rvOfB)
            }))
        ))
    }))

  it.effect("a damaged, foreign, newer, locked or unusable data directory is refused, naming the file, and left as it is", () =>
    Effect.gen(function*() {
      const garbage = tempDir()
      Fs.writeFileSync(Path.join(garbage, FILE), "this is not a database, it is a text file of some length".repeat(20))
      const bytes = Fs.readFileSync(Path.join(garbage, FILE))
      const notADb = yield* openFailure(garbage)
      assert.strictEqual(notADb.reason, "Corrupt")
      assert.strictEqual(notADb.path, Path.join(garbage, FILE))
      assert.include(notADb.message, Path.join(garbage, FILE))
      assert.deepStrictEqual(Fs.readFileSync(Path.join(garbage, FILE)), bytes)

      const badRow = tempDir()
      yield* withData(badRow, (cluster) => cluster.create(cm("a") as KubeObject))
      const db = new DatabaseSync(Path.join(badRow, FILE))
      db.prepare("UPDATE objects SET object = '{\"metadata\": ' WHERE key = 'default/a'").run()
      db.close()
      const row = yield* openFailure(badRow)
      assert.strictEqual(row.reason, "Corrupt")
      assert.match(row.detail, /stored object \/configmaps default\/a: not JSON/)

      const foreign = tempDir()
      const other = new DatabaseSync(Path.join(foreign, FILE))
      other.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
      other.close()
      const notOurs = yield* openFailure(foreign)
      assert.strictEqual(notOurs.reason, "Corrupt")
      assert.include(notOurs.detail, "not a testkit data file")

      const newer = tempDir()
      yield* withData(newer, () => Effect.void)
      const bump = new DatabaseSync(Path.join(newer, FILE))
      bump.exec("PRAGMA user_version = 99")
      bump.close()
      assert.strictEqual((yield* openFailure(newer)).reason, "Unsupported")

      const locked = tempDir()
      const second = yield* withData(locked, () => openFailure(locked))
      assert.strictEqual(second.reason, "Locked")

      const file = Path.join(tempDir(), "file")
      Fs.writeFileSync(file, "")
      assert.strictEqual((yield* openFailure(file)).reason, "Unavailable")
    }))

  it.effect("nothing is answered, watched or applied before it is durable: a failed write changes nothing", () =>
    Effect.gen(function*() {
      const opened = yield* Effect.promise(() => open(tempDir()))
      const cluster = yield* makeCluster({}, opened)
      const rv = yield* cluster.resourceVersion
      const seen: Array<unknown> = []
      const watch = yield* Effect.forkChild(
        Stream.runForEach(
          cluster.watch({ apiVersion: "v1", kind: "ConfigMap", resourceVersion: rv }),
          (e) => Effect.sync(() => seen.push(e))
        )
      )
      opened.journal.close()
      const error = yield* Effect.flip(cluster.create(cm("lost") as KubeObject))
      assert.strictEqual(error.status.code, 500)
      assert.include(error.status.message, "nothing was changed")
      assert.strictEqual((yield* Effect.flip(cluster.get(ref(cm("lost"))))).status.code, 404)
      assert.strictEqual(yield* cluster.resourceVersion, rv)
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      yield* Fiber.interrupt(watch)
      assert.deepStrictEqual(seen, [])
    }))

  it.effect("work a crash cut short (a terminating namespace, dependents of a deleted owner) is finished at start", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      yield* Effect.scoped(Effect.gen(function*() {
        const opened = yield* Effect.acquireRelease(
          Effect.promise(() => open(dir)),
          (o) => Effect.sync(() => o.journal.close())
        )
        // The process "dies" after `budget` more durable events: later events of the same request never happen.
        let budget = Infinity
        const journal: Journal = {
          record: (...args) => {
            if (budget-- <= 0) throw new Error("killed")
            opened.journal.record(...args)
          },
          close: opened.journal.close
        }
        const cluster = yield* makeCluster({}, { ...opened, journal })
        yield* cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "doomed" } })
        for (const name of ["x", "y", "z"]) yield* cluster.create(cm(name, {}, "doomed") as KubeObject)
        const owner = yield* cluster.create(cm("owner") as KubeObject)
        const dependent = cm("dependent", {
          metadata: {
            ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid }]
          }
        })
        yield* cluster.create(dependent as KubeObject)
        const invented = cm("invented", {
          metadata: { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "nobody", uid: "never-stored" }] }
        })
        yield* cluster.create(invented as KubeObject)
        budget = 2 // the namespace marked terminating, one ConfigMap deleted
        yield* Effect.flip(cluster.delete({ apiVersion: "v1", kind: "Namespace", name: "doomed" }))
        budget = 1 // the owner removed, its dependent not yet
        yield* Effect.flip(cluster.delete(ref(cm("owner"))))
        assert.strictEqual(
          (yield* cluster.list({ apiVersion: "v1", kind: "ConfigMap", namespace: "doomed" })).items.length,
          2
        )
      }))
      yield* withData(dir, (cluster) =>
        Effect.gen(function*() {
          const namespaces = (yield* cluster.list({ apiVersion: "v1", kind: "Namespace" })).items
          assert.notInclude(namespaces.map((n) => n.metadata.name), "doomed")
          const left = (yield* cluster.list({ apiVersion: "v1", kind: "ConfigMap" })).items.map((c) => c.metadata.name)
          // An owner uid never stored (tests invent them) is not a deleted owner: its dependent stays.
          assert.deepStrictEqual(left, ["invented"])
        }))
    }))
})

// effect 4.1 has no bundled FastCheck: generators are Schemas drawn by effect/Arbitrary
const Name = Schema.Literals(["a", "b", "c"])
const Op = Schema.Union([
  Schema.Struct({ op: Schema.Literal("create"), name: Name, replicas: Schema.Literals([1, 2]) }),
  Schema.Struct({ op: Schema.Literal("scale"), name: Name, replicas: Schema.Literals([1, 2, 3]) }),
  Schema.Struct({ op: Schema.Literal("status"), name: Name, ready: Schema.Boolean }),
  Schema.Struct({ op: Schema.Literal("apply"), name: Name, image: Schema.Literals(["nginx:1", "nginx:2"]) }),
  Schema.Struct({ op: Schema.Literal("hold"), name: Name }),
  Schema.Struct({ op: Schema.Literal("release"), name: Name }),
  Schema.Struct({ op: Schema.Literal("delete"), name: Name }),
  Schema.Struct({ op: Schema.Literal("restart") })
])

const deploymentRef = (name: string) => ({ apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name })

const step = (cluster: TestCluster.TestCluster.Service, s: Exclude<typeof Op.Type, { op: "restart" }>) =>
  Effect.gen(function*() {
    switch (s.op) {
      case "create":
        return yield* cluster.create(deployment(s.name, s.replicas) as KubeObject)
      case "scale": {
        const d: any = yield* cluster.get(deploymentRef(s.name))
        return yield* cluster.update({ ...d, spec: { ...d.spec, replicas: s.replicas } } as KubeObject)
      }
      case "status": {
        const d: any = yield* cluster.get(deploymentRef(s.name))
        return yield* cluster.updateStatus({ ...d, status: { ready: s.ready } } as KubeObject)
      }
      case "apply": {
        const d = deployment(s.name)
        d.spec.template.spec.containers[0].image = s.image
        return yield* cluster.apply(d as KubeObject, { fieldManager: "prop", force: true })
      }
      case "hold":
      case "release":
        return yield* cluster.patch(deploymentRef(s.name), {
          type: "merge",
          patch: { metadata: { finalizers: s.op === "hold" ? ["example.com/hold"] : null } }
        })
      case "delete":
        return yield* cluster.delete(deploymentRef(s.name))
    }
  }).pipe(Effect.ignore)

describe("TestCluster with a data directory (property)", () => {
  it.effect.prop(
    "any sequence of writes and restarts: each start shows exactly the objects and resourceVersion the last stop had",
    [Arbitrary.array(Arbitrary.schema(Op), { minLength: 1, maxLength: 30 })],
    ([ops]) =>
      Effect.gen(function*() {
        const dir = tempDir()
        let last: { objects: Record<string, Obj>; rv: string } | undefined
        let pending = [...ops, { op: "restart" as const }]
        while (pending.length > 0) {
          const cut = pending.findIndex((s) => s.op === "restart")
          const batch = pending.slice(0, cut)
          pending = pending.slice(cut + 1)
          last = yield* withData(dir, (cluster) =>
            Effect.gen(function*() {
              if (last !== undefined) {
                assert.deepStrictEqual(yield* dump(cluster), last.objects)
                assert.strictEqual(yield* cluster.resourceVersion, last.rv)
              }
              for (const s of batch) if (s.op !== "restart") yield* step(cluster, s)
              return { objects: yield* dump(cluster), rv: yield* cluster.resourceVersion }
            }))
        }
        Fs.rmSync(dir, { recursive: true, force: true })
      }),
    { arbitrary: { runs: 25, size: 30 } }
  )
})
