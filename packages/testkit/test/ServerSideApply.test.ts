import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestCluster } from "../src/index.js"
import type { KubeObject } from "../src/KubeObject.js"

const service = (ports: ReadonlyArray<number>) =>
  ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec: { selector: { app: "web" }, ports: ports.map((port) => ({ name: `p${port}`, port, targetPort: port })) }
  }) as unknown as KubeObject

const ports = (object: KubeObject) =>
  (object as unknown as { spec: { ports: Array<{ port: number; protocol: string }> } }).spec.ports.map((p) =>
    `${p.port}/${p.protocol}`
  )

describe("server-side apply of list-map items (regressions)", () => {
  it.effect("re-applying ports without `protocol` matches the defaulted items: no duplicates, no write", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      const first = yield* cluster.apply(service([80]), { fieldManager: "m" })
      const second = yield* cluster.apply(service([80]), { fieldManager: "m" })
      assert.deepStrictEqual(ports(second), ["80/TCP"])
      assert.strictEqual(
        second.metadata.resourceVersion,
        first.metadata.resourceVersion,
        "a no-op apply writes nothing"
      )
    }))

  it.effect("changing an item's key replaces the item: the released one goes entirely", () =>
    Effect.gen(function*() {
      const cluster = yield* TestCluster.make()
      yield* cluster.apply(service([80, 443]), { fieldManager: "m" })
      const changed = yield* cluster.apply(service([8080, 443]), { fieldManager: "m" })
      assert.deepStrictEqual(ports(changed).sort(), ["443/TCP", "8080/TCP"])
    }))
})
