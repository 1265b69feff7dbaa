import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber, Ref, Stream } from "effect"
import type { KubeObject } from "../src/KubeObject.js"
import { TestCluster } from "../src/index.js"
import { deployment } from "./support/fixtures.js"

type Obj = Record<string, any>

const Name = fc.constantFrom("a", "b", "c")
const Op = fc.oneof(
  fc.record({ op: fc.constant("create" as const), name: Name, replicas: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant("scale" as const), name: Name, replicas: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant("label" as const), name: Name, value: fc.constantFrom("x", "y") }),
  fc.record({ op: fc.constant("status" as const), name: Name, replicas: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant("patchImage" as const), name: Name, image: fc.constantFrom("nginx:1", "nginx:2") }),
  fc.record({ op: fc.constant("apply" as const), name: Name, replicas: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant("delete" as const), name: Name })
)

const ref = (name: string) => ({ apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name })

type Step = typeof Op extends fc.Arbitrary<infer A> ? A : never

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
        return yield* cluster.patch(ref(step.name), { type: "merge", patch: { metadata: { labels: { l: step.value } } } })
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
        return yield* cluster.apply(deployment(step.name, step.replicas) as KubeObject, { fieldManager: "prop", force: true })
      case "delete":
        return yield* cluster.delete(ref(step.name))
    }
  }).pipe(Effect.ignore)


const specPart = (o: Obj) => JSON.stringify(o.spec)

describe("properties", () => {
  it.effect.prop(
    "replaying watch events gives the final list; resourceVersions strictly increase; generation changes iff spec does",
    [fc.array(Op, { minLength: 1, maxLength: 40 })],
    ([ops]) =>
      Effect.gen(function*() {
        const cluster = yield* TestCluster.make()
        const start = yield* cluster.resourceVersion
        const events = yield* Ref.make<Array<{ type: string; object: Obj }>>([])
        const watcher = yield* cluster.watch({ apiVersion: "apps/v1", kind: "Deployment", resourceVersion: start }).pipe(
          Stream.runForEach((e) => Ref.update(events, (es) => [...es, e])),
          Effect.fork
        )
        for (const step of ops) yield* run(cluster, step)
        const final = yield* cluster.resourceVersion
        const list = yield* cluster.list({ apiVersion: "apps/v1", kind: "Deployment" })
        // wait until the watcher has seen everything (events are delivered synchronously into its queue)
        for (let i = 0; i < 1000; i++) {
          const seen = yield* Ref.get(events)
          if (final === start || seen.at(-1)?.object.metadata.resourceVersion === final) break
          yield* Effect.yieldNow()
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
    { fastCheck: { numRuns: 150 } }
  )
})
