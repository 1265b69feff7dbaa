import { assert, describe, it } from "@effect/vitest"
import * as Request from "@reconcile/core/Request"
import { TestKube } from "@reconcile/testkit"
import { Context, Effect, Layer } from "effect"
import * as Cache from "../src/Cache.js"
import * as KubeController from "../src/KubeController.js"
import * as Resource from "../src/Resource.js"
import * as Undecodable from "../src/Undecodable.js"
import { makeFakeServer, type Obj } from "./fakeServer.js"
import { TestManager } from "./support/manager.js"

const resource = (kind: string, plural: string) =>
  Resource.make<Obj>({ group: "example.com", version: "v1", kind, plural, scope: "Namespaced" })
const Apps = resource("App", "apps")
const Parts = resource("Part", "parts")
const Configs = resource("Config", "configs")

const settle = TestKube.settle // TestClock.adjust(0) rounds until controllers and watches catch up

/** A cache over one fake server per resource. */
const setup = Effect.gen(function*() {
  const servers = {
    apps: yield* makeFakeServer,
    parts: yield* makeFakeServer,
    configs: yield* makeFakeServer
  }
  const cache = yield* Cache.make((r, _selection) => servers[r.plural as keyof typeof servers].listWatch as never)
  return { servers, cache }
})

/** A service a reconcile needs, provided to its controller's Layer with `Layer.provide`. */
class Greeter extends Context.Service<Greeter, { readonly greet: (name: string) => string }>()("test/Greeter") {}

const owner = { apiVersion: "example.com/v1", kind: "App", name: "web", uid: "uid-web", controller: true }

describe("KubeController", () => {
  it.effect("reconciles the current cached object; keys whose object is gone are skipped", () =>
    Effect.gen(function*() {
      const { cache, servers } = yield* setup
      const seen: Array<string> = []
      yield* servers.apps.put("web", 1)
      yield* KubeController.make({
        name: "apps-by-object",
        for: Apps,
        reconcile: (app: Obj) => Effect.sync(() => void seen.push(`${app.metadata.name}=${app.data}`)),
        onUndecodable: Undecodable.terminal
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* settle
      yield* servers.apps.put("web", 2)
      yield* settle
      yield* servers.apps.remove("web")
      yield* settle
      assert.deepStrictEqual(seen, ["web=1", "web=2"], "the delete enqueues the key, whose object is gone: skipped")
    }))

  it.effect("owns: a change to an owned object enqueues its controller owner", () =>
    Effect.gen(function*() {
      const { cache, servers } = yield* setup
      const seen: Array<string> = []
      yield* servers.apps.put("web", 1)
      yield* KubeController.make({
        name: "apps-owns",
        for: Apps,
        owns: [Parts],
        reconcileRequest: (req) => Effect.sync(() => void seen.push(Request.key(req)))
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* settle
      assert.deepStrictEqual(seen, ["ns/web"])
      yield* servers.parts.put("web-part", 1, { ownerReferences: [owner] })
      yield* settle
      yield* servers.parts.put("orphan", 1)
      yield* servers.parts.put("other", 1, { ownerReferences: [{ ...owner, kind: "Other", name: "x" }] })
      yield* settle
      assert.deepStrictEqual(seen, ["ns/web", "ns/web"], "only controller references of the `for` kind enqueue")
    }))

  it.effect("watches: a map function enqueues what it maps to", () =>
    Effect.gen(function*() {
      const { cache, servers } = yield* setup
      const seen: Array<string> = []
      yield* KubeController.make({
        name: "apps-watches",
        for: Apps,
        watches: [KubeController.watches({
          resource: Configs,
          map: (config: Obj) => Effect.succeed([Request.make(`app-of-${config.metadata.name}`, "ns")])
        })],
        reconcileRequest: (req) => Effect.sync(() => void seen.push(req.name))
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* servers.configs.put("settings", 1)
      yield* settle
      assert.deepStrictEqual(seen, ["app-of-settings"])
    }))

  it.effect("two controllers watching the same kind share one informer and one watch", () =>
    Effect.gen(function*() {
      const { cache, servers } = yield* setup
      const counts = { a: 0, b: 0 }
      yield* servers.apps.put("web", 1)
      const layers = Layer.mergeAll(
        KubeController.layer(
          KubeController.make({ name: "share-a", for: Apps, reconcile: () => Effect.sync(() => void counts.a++) })
        ),
        KubeController.layer(
          KubeController.make({ name: "share-b", for: Apps, reconcile: () => Effect.sync(() => void counts.b++) })
        )
      )
      yield* Layer.build(layers).pipe(Effect.provideService(Cache.Cache, cache), Effect.provide(TestManager))
      yield* settle
      assert.strictEqual(yield* cache.informers, 1)
      assert.strictEqual(servers.apps.watchesOpened, 1)
      assert.deepStrictEqual(counts, { a: 1, b: 1 }, "each controller got the existing object (late subscriber)")
    }))

  it.effect("eventFilter applies to every source", () =>
    Effect.gen(function*() {
      const { cache, servers } = yield* setup
      const seen: Array<string> = []
      yield* KubeController.make({
        name: "apps-filtered",
        for: Apps,
        eventFilter: (e) => e.object.metadata?.name !== "ignored",
        reconcileRequest: (req) => Effect.sync(() => void seen.push(req.name))
      }).pipe(KubeController.start, Effect.provide(TestManager), Effect.provideService(Cache.Cache, cache))
      yield* servers.apps.put("ignored", 1)
      yield* servers.apps.put("kept", 1)
      yield* settle
      assert.deepStrictEqual(seen, ["kept"])
    }))

  it.effect("a controller's Layer is an ordinary Layer: Layer.provide gives it a service, Layer.merge runs it beside others", () =>
    Effect.gen(function*() {
      const { cache, servers } = yield* setup
      const seen: Array<string> = []
      yield* servers.apps.put("web", 1)
      const greeting = KubeController.make({
        name: "composed-greeting",
        for: Apps,
        reconcile: (app: Obj) =>
          Effect.gen(function*() {
            const greeter = yield* Greeter
            seen.push(greeter.greet(app.metadata.name))
          }),
        onUndecodable: Undecodable.terminal
      })
      const counting = KubeController.make({
        name: "composed-count",
        for: Apps,
        reconcile: () => Effect.sync(() => void seen.push("counted"))
      })
      const composed = Layer.mergeAll(
        KubeController.layer(greeting).pipe(Layer.provide(Layer.succeed(Greeter, { greet: (n) => `hello ${n}` }))),
        KubeController.layer(counting)
      )
      yield* Layer.build(composed).pipe(Effect.provideService(Cache.Cache, cache), Effect.provide(TestManager))
      yield* settle
      assert.deepStrictEqual([...seen].sort(), ["counted", "hello web"])
      // the values still declare what they did: composing their Layers changed nothing in them
      assert.strictEqual(greeting.for, Apps)
      assert.strictEqual(counting.name, "composed-count")
    }))
})
