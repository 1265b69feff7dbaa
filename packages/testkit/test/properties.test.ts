import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Fiber, Ref, Schema, Stream } from "effect"
import { TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"
import { deployment } from "./support/fixtures.js"

type Obj = Record<string, any>

// effect 4.1 has no bundled FastCheck: the same generators as Schemas, drawn by effect/Arbitrary (what it.prop runs)
const Name = Schema.Literals(["a", "b", "c"])
const Replicas = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))
const Op = Schema.Union([
  Schema.Struct({ op: Schema.Literal("create"), name: Name, replicas: Replicas }),
  Schema.Struct({ op: Schema.Literal("scale"), name: Name, replicas: Replicas }),
  Schema.Struct({ op: Schema.Literal("label"), name: Name, value: Schema.Literals(["x", "y"]) }),
  Schema.Struct({ op: Schema.Literal("status"), name: Name, replicas: Replicas }),
  Schema.Struct({ op: Schema.Literal("patchImage"), name: Name, image: Schema.Literals(["nginx:1", "nginx:2"]) }),
  Schema.Struct({ op: Schema.Literal("apply"), name: Name, replicas: Replicas }),
  Schema.Struct({ op: Schema.Literal("delete"), name: Name })
])

const ref = (name: string) => ({ apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name })

type Step = typeof Op.Type

const run = (cluster: TestCluster.TestCluster.Service, step: Step) =>
  Effect.gen(function*() {
    switch (step.op) {
      case "create":
        return yield* cluster.create(deployment(step.name, step.replicas) as KubeObject)
      case "scale": {
        const d: any = yield* cluster.get(ref(step.name))
        return yield* cluster.update({ ...d, spec: { ...d.spec, replicas: step.replicas } } as KubeObject)
      }
      case "label":
        return yield* cluster.patch(ref(step.name), {
          type: "merge",
          patch: { metadata: { labels: { l: step.value } } }
        })
      case "status": {
        const d: any = yield* cluster.get(ref(step.name))
        return yield* cluster.updateStatus({ ...d, status: { replicas: step.replicas } } as KubeObject)
      }
      case "patchImage":
        return yield* cluster.patch(ref(step.name), {
          type: "json",
          patch: [{ op: "replace", path: "/spec/template/spec/containers/0/image", value: step.image }]
        })
      case "apply":
        return yield* cluster.apply(deployment(step.name, step.replicas) as KubeObject, {
          fieldManager: "prop",
          force: true
        })
      case "delete":
        return yield* cluster.delete(ref(step.name))
    }
  }).pipe(Effect.ignore)

const specPart = (o: Obj) => JSON.stringify(o.spec)

describe("properties", () => {
  it.effect.prop(
    "replaying watch events gives the final list; resourceVersions strictly increase; generation changes iff spec does",
    [Arbitrary.array(Arbitrary.schema(Op), { minLength: 1, maxLength: 40 })],
    ([ops]) =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.make()
        const start = yield* cluster.resourceVersion
        const events = yield* Ref.make<Array<{ type: string; object: Obj }>>([])
        const watcher = yield* cluster.watch({ apiVersion: "apps/v1", kind: "Deployment", resourceVersion: start })
          .pipe(
            Stream.runForEach((e) => Ref.update(events, (es) => [...es, e])),
            Effect.forkChild
          )
        for (const step of ops) yield* run(cluster, step)
        const final = yield* cluster.resourceVersion
        const list = yield* cluster.list({ apiVersion: "apps/v1", kind: "Deployment" })
        // wait until the watcher has seen everything (events are delivered synchronously into its queue)
        for (let i = 0; i < 1000; i++) {
          const seen = yield* Ref.get(events)
          if (final === start || seen.at(-1)?.object.metadata.resourceVersion === final) break
          yield* Effect.yieldNow
        }
        yield* Fiber.interrupt(watcher)
        const seen = yield* Ref.get(events)

        const replay = new Map<string, Obj>()
        let lastRv = Number(start)
        for (const e of seen) {
          const rv = Number(e.object.metadata.resourceVersion)
          assert.isTrue(rv > lastRv, `resourceVersion ${rv} after ${lastRv}`)
          lastRv = rv
          const name = e.object.metadata.name
          const before = replay.get(name)
          if (e.type === "MODIFIED" && before !== undefined) {
            const specChanged = specPart(before) !== specPart(e.object)
            const generationChanged = before.metadata.generation !== e.object.metadata.generation
            assert.strictEqual(generationChanged, specChanged, `generation vs spec on ${name}`)
          }
          if (e.type === "ADDED") assert.strictEqual(e.object.metadata.generation, 1)
          if (e.type === "DELETED") replay.delete(name)
          else replay.set(name, e.object)
        }
        assert.deepStrictEqual(
          [...replay.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)),
          list.items as unknown as Array<Obj>
        )
        assert.strictEqual(String(lastRv), final)
      }),
    // size 40: effect's Arbitrary caps array lengths at `size` (default 10); fast-check drew up to maxLength
    { arbitrary: { runs: 150, size: 40 } }
  )
})
