import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Stream } from "effect"
import * as Watcher from "../src/Watcher.js"

interface Obj {
  readonly metadata: { readonly name: string; readonly resourceVersion: string }
}
const obj = (name: string, rv: number): Obj => ({ metadata: { name, resourceVersion: String(rv) } })

describe("Watcher paged list", () => {
  it.effect("asks for the next page while the current one is being applied, and keeps the order", () =>
    Effect.gen(function*() {
      const secondPage = yield* Deferred.make<Watcher.ListPage<Obj>>()
      const asked: Array<string | undefined> = []
      const listWatch: Watcher.ListWatch<Obj> = {
        name: "objects",
        list: (options) => {
          asked.push(options.continue)
          return options.continue === undefined
            ? Effect.succeed({ items: [obj("a", 1), obj("b", 2)], resourceVersion: "5", continue: "page-2" })
            : Deferred.await(secondPage)
        },
        watch: () => Stream.never,
        resourceVersion: (o) => o.metadata.resourceVersion
      }
      /** What had been asked of the server when the consumer held the first page's first object. */
      let askedWhileApplying: ReadonlyArray<string | undefined> = []
      const seen: Array<string> = []
      const fiber = yield* Watcher.watch(listWatch).pipe(
        Stream.tap((e) =>
          Effect.gen(function*() {
            seen.push(e._tag === "InitApply" ? e.object.metadata.name : e._tag)
            if (e._tag === "InitApply" && e.object.metadata.name === "a") {
              // the consumer is slow with this page; the fetch of the next one goes on meanwhile
              for (let i = 0; i < 5; i++) yield* Effect.yieldNow
              askedWhileApplying = [...asked]
              yield* Deferred.succeed(secondPage, { items: [obj("c", 3)], resourceVersion: "5" })
            }
          })
        ),
        Stream.takeUntil((e) => e._tag === "InitDone"),
        Stream.runDrain,
        Effect.forkChild
      )
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(askedWhileApplying, [undefined, "page-2"])
      assert.deepStrictEqual(seen, ["Init", "a", "b", "c", "InitDone"])
    }))

  it.effect("a failed next page fails the list after the pages before it were delivered", () =>
    Effect.gen(function*() {
      const listWatch: Watcher.ListWatch<Obj> = {
        name: "objects",
        list: (options) =>
          options.continue === undefined
            ? Effect.succeed({ items: [obj("a", 1)], resourceVersion: "5", continue: "page-2" })
            : Effect.die("page 2 broke"),
        watch: () => Stream.never,
        resourceVersion: (o) => o.metadata.resourceVersion
      }
      const seen: Array<string> = []
      const exit = yield* Watcher.watch(listWatch).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e._tag))),
        Effect.exit
      )
      assert.isTrue(exit._tag === "Failure")
      assert.deepStrictEqual(seen, ["Init", "InitApply"])
    }))
})
