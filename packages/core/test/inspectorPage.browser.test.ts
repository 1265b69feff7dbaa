/**
 * The inspector's page in headless Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core), served by a
 * fake of the API (test/support/inspectorFake.ts: the contract's routes and Schemas, data set by the test): thousands
 * of keys in pages of 100, the state filter and the search, a key's detail and why, the timeline, a proxy's path
 * prefix, live updates from `api/stream` and polling when the stream is unavailable; no error in the page's console
 * (its Content-Security-Policy holds). The page on a running operator: examples/webapp/test/inspector.browser.test.ts.
 *
 * Skipped, saying so, where no Chromium is installed (`.ci/run` installs it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { chromium } from "playwright-core"
import * as Fake from "./support/inspectorFake.js"

const executablePath = "/usr/bin/chromium"
const found = fs.existsSync(executablePath)
const skipped = `skipped: no Chromium at ${executablePath} (apt-get install -y chromium)`

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

/**
 * A page of a headless Chromium, closed with the scope. `errors`: the page's errors and console errors (a refusal of
 * its Content-Security-Policy is one), but a failed request's; `failed`: each answer of 400 or more, as `status path`.
 */
const openPage = Effect.gen(function*() {
  const browser = yield* Effect.acquireRelease(
    use(() => chromium.launch({ executablePath, headless: true })),
    (browser) => use(() => browser.close())
  )
  const page = yield* use(() => browser.newPage({ viewport: { width: 1280, height: 860 } }))
  const errors: Array<string> = []
  const failed: Array<string> = []
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      errors.push(`console: ${message.text()}`)
    }
  })
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`)
  })
  return { page, errors, failed }
})

describe(
  found ? "the inspector's page in Chromium (a fake API)" : `the inspector's page in Chromium: ${skipped}`,
  () => {
    it.live.skipIf(!found)(
      "3,000 keys: pages of 100, the state filter, the search, a key's detail, the timeline",
      () =>
        Effect.gen(function*() {
          const data = Fake.sampleData(3_000, Date.now())
          const fake = yield* Fake.serve(data)
          const { errors, failed, page } = yield* openPage
          yield* use(() => page.goto(fake.url))

          // the overview: both controllers, their sources' states
          yield* use(() => page.locator("section.controller").nth(1).waitFor())
          assert.deepStrictEqual(yield* use(() => page.locator("section.controller h2").allInnerTexts()), [
            "webapps",
            "secrets"
          ])
          assert.strictEqual(yield* use(() => page.locator(".dot.source-disconnected").count()), 1)

          // the key list: 100 rows of 3,000, then the next page
          yield* use(() => page.locator("section.controller h2 a", { hasText: "webapps" }).click())
          yield* use(() => page.locator("#key-summary", { hasText: "1–100 of 3,000 keys" }).waitFor())
          assert.strictEqual(yield* use(() => page.locator("table.keys tbody tr").count()), 100)
          yield* use(() => page.locator("button.pager-next").click())
          yield* use(() => page.locator("#key-summary", { hasText: "101–200 of 3,000 keys" }).waitFor())
          assert.strictEqual(
            yield* use(() => page.locator("table.keys tbody tr").first().getAttribute("data-key")),
            Array.from(data.keys.get("webapps")!.keys())[100]
          )

          // the state filter, then the search within it (the URL keeps both)
          const failing = Array.from(data.keys.get("webapps")!.values()).filter((k) => k.state === "failing")
          yield* use(() => page.locator("#state-filter").selectOption("failing"))
          yield* use(() =>
            page.locator("#key-summary", { hasText: `1–100 of ${failing.length} keys failing (backoff)` }).waitFor()
          )
          const target = failing[42]!.key
          yield* use(() => page.locator("#key-search").fill(target.split("/")[1]!))
          yield* use(() => page.locator("#key-summary", { hasText: "1–1 of 1 keys" }).waitFor())
          assert.include(new URL(page.url()).hash, "state=failing")
          assert.strictEqual(
            yield* use(() => page.locator("#key-search:focus").count()),
            1,
            "the search box keeps the focus"
          )

          // the key: its state and why, its reconcile, its events with the predicate that dropped one
          yield* use(() => page.locator(`tr[data-key='${target}'] a.key`).click())
          yield* use(() => page.locator("#key-state [data-state=failing]").waitFor())
          const why = yield* use(() => page.locator(".why").innerText())
          assert.include(why, "Delayed by backoff after 3 failures: retried")
          assert.include(why, `the API server said no to ${target}`)
          assert.strictEqual(yield* use(() => page.locator("table.reconciles tbody tr").count()), 1)
          assert.include(yield* use(() => page.locator("table.events tr.dropped").innerText()), "generationChanged")

          // an unknown key: said so
          yield* use(() => page.goto(fake.url + "#/c/webapps/k/" + encodeURIComponent("nowhere/none")))
          yield* use(() => page.locator("#key-state", { hasText: "Not recorded" }).waitFor())

          // the timeline: a lane per controller, then a lane per key (at most 40)
          yield* use(() => page.goto(fake.url + "#/timeline"))
          yield* use(() => page.locator("svg.timeline rect.bar").first().waitFor())
          assert.isAtLeast(yield* use(() => page.locator("svg.timeline rect.bar").count()), 100)
          yield* use(() => page.locator("#timeline-lanes").selectOption("key"))
          yield* use(() => page.locator("#timeline-summary", { hasText: "most recent of" }).waitFor())
          assert.strictEqual(yield* use(() => page.locator("svg.timeline .lane-label").count()), 40)

          assert.deepStrictEqual(errors, [], "no error on the page or its console")
          assert.deepStrictEqual(
            failed,
            ["404 /api/controllers/webapps/keys/nowhere%2Fnone"],
            "no failed request but one"
          )
        }),
      60_000
    )

    it.live.skipIf(!found)(
      "behind a proxy's path prefix: the page finds its files and its API relative to itself",
      () =>
        Effect.gen(function*() {
          const fake = yield* Fake.serve(Fake.sampleData(20, Date.now()), { prefix: "/api/v1/proxy/inspector/" })
          const { errors, failed, page } = yield* openPage
          yield* use(() => page.goto(fake.url))
          yield* use(() => page.locator("section.controller h2 a", { hasText: "webapps" }).click())
          yield* use(() => page.locator("#key-summary", { hasText: "1–20 of 20 keys" }).waitFor())
          yield* use(() => page.locator("#live[data-mode=live]").waitFor())
          assert.deepStrictEqual(errors, [], "no error on the page or its console")
          assert.deepStrictEqual(failed, [], "no failed request")
        }),
      60_000
    )

    it.live.skipIf(!found)(
      "live: a change event refreshes the open key; without the stream, it polls every 2 s",
      () =>
        Effect.gen(function*() {
          for (const stream of [true, false]) {
            const data = Fake.sampleData(20, Date.now())
            const fake = yield* Fake.serve(data, { stream })
            const { errors, failed, page } = yield* openPage
            const key = "ns-0/app-00000"
            yield* use(() => page.goto(fake.url + "#/c/webapps/k/" + encodeURIComponent(key)))
            yield* use(() => page.locator("#key-state [data-state=idle]").waitFor())
            yield* use(() => page.locator(`#live[data-mode=${stream ? "live" : "polling"}]`).waitFor())

            const webapps = data.keys.get("webapps")!
            const before = webapps.get(key)!
            webapps.set(key, {
              ...before,
              state: "terminal",
              reconciles: [...before.reconciles, {
                reconcileID: "r-next",
                startedAt: Date.now(),
                durationMs: 3,
                outcome: "terminal",
                message: "spec.image must not be empty",
                attempt: 1
              }]
            })
            fake.changed()
            yield* use(() => page.locator("#key-state [data-state=terminal]").waitFor({ timeout: 10_000 }))
            assert.include(yield* use(() => page.locator(".why").innerText()), "spec.image must not be empty")
            if (!stream) assert.isAtLeast(fake.requests.get("/api/stream") ?? 0, 1, "the stream was tried first")
            assert.deepStrictEqual(errors, [], "no error on the page or its console")
            assert.deepStrictEqual(failed, stream ? [] : ["404 /api/stream"], "no failed request but the stream's")
          }
        }),
      60_000
    )
  }
)
