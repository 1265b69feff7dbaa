/**
 * The inspector in a real browser: `npm start -- --inspector-port 0` (the main job on the embedded cluster) and
 * headless Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core) on its page. The test searches the
 * sample's key, opens it, then breaks the sample (an empty image: the reconcile ends Terminal) and repairs it, and
 * sees both on the open page, without reloading it (the page follows `api/stream`). Screenshots are kept in
 * `test-results/` (git-ignored); with `INSPECTOR_DOCS_SCREENSHOT=1` the key's view is also written to
 * `docs/images/inspector.png`, the guide's picture.
 *
 * Skipped, saying so, where no Chromium is installed (`.ci/run` installs it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Kube, KubeClient } from "@reconcile/kube"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { chromium, type Page } from "playwright-core"
import { WebApp } from "../src/WebApp.js"

const root = path.join(import.meta.dirname, "..", "..", "..")
const executablePath = "/usr/bin/chromium"
const found = fs.existsSync(executablePath)
const results = path.join(root, "test-results")
const skipped = `skipped: no Chromium at ${executablePath} (apt-get install -y chromium)`

/** The main job with the inspector on a free port; resolves once the sample is Ready and the URLs are printed. */
const startMainJob = Effect.acquireRelease(
  Effect.callback<{ readonly child: ChildProcess; readonly kubeconfig: string; readonly inspector: string }, Error>(
    (resume) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "examples/webapp/src/main.ts", "--inspector-port", "0"],
        {
          cwd: root,
          env: { ...process.env, KUBECONFIG: "/nonexistent/production-kubeconfig" },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let out = ""
      const timer = setTimeout(() => resume(Effect.fail(new Error(`main job not ready in 30 s:\n${out}`))), 30_000)
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const kubeconfig = /KUBECONFIG=(\S+) kubectl/.exec(out)
        const inspector = /Inspector: (http:\/\/\S+)/.exec(out)
        if (kubeconfig && inspector && out.includes("is Ready")) {
          clearTimeout(timer)
          resume(Effect.succeed({ child, kubeconfig: kubeconfig[1]!, inspector: inspector[1]! }))
        }
      })
      child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()))
      child.on("exit", (code) => resume(Effect.fail(new Error(`main job exited with ${code}:\n${out}`))))
    }
  ),
  ({ child }) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
)

/**
 * A page of a headless Chromium, closed with the scope. `errors`: the page's errors, its console's errors (a refusal
 * of its Content-Security-Policy is one) and each answer of 400 or more.
 */
const openPage = Effect.gen(function*() {
  const browser = yield* Effect.acquireRelease(
    Effect.promise(() => chromium.launch({ executablePath, headless: true })),
    (browser) => Effect.promise(() => browser.close())
  )
  const page = yield* Effect.promise(() =>
    browser.newPage({ viewport: { width: 1280, height: 860 }, colorScheme: "light" })
  )
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`))
  page.on("console", (message) => message.type() === "error" && errors.push(`console: ${message.text()}`))
  page.on("response", (response) => response.status() >= 400 && errors.push(`${response.status()} ${response.url()}`))
  return { page, errors }
})

const use = <A>(f: () => Promise<A>) => Effect.promise(f)

/** The state the key's view shows (`data-state` of its badge). */
const keyState = (page: Page) => use(() => page.locator("#key-state [data-state]").getAttribute("data-state"))

describe(
  found ? "the inspector in Chromium (npm start -- --inspector-port 0)" : `the inspector in Chromium: ${skipped}`,
  () => {
    it.live.skipIf(!found)(
      "finds the sample's key, follows it live through a Terminal failure and its repair, keeps a screenshot",
      () =>
        Effect.gen(function*() {
          fs.mkdirSync(results, { recursive: true })
          const job = yield* startMainJob
          const { page, errors } = yield* openPage
          yield* Effect.gen(function*() {
            const client = Layer.provide(KubeClient.layer, Kube.layerFromFile(job.kubeconfig))
            const setImage = (image: string) =>
              KubeClient.patch(WebApp, "sample", { spec: { image } }, { type: "merge", namespace: "default" }).pipe(
                Effect.provide(client)
              )

            // the overview lists the controller, with its sources
            yield* use(() => page.goto(job.inspector))
            const card = page.locator("section.controller", { hasText: "webapp-controller" })
            yield* use(() => card.waitFor())
            assert.isAtLeast(yield* use(() => card.locator(".source").count()), 1, "the controller's sources")
            yield* use(() => page.locator("#live[data-mode=live]").waitFor())

            // its keys: search the sample, open it
            yield* use(() => card.locator("h2 a").click())
            yield* use(() => page.locator("#key-search").fill("sampl"))
            const row = page.locator("tr[data-key='default/sample']")
            yield* use(() => row.waitFor())
            yield* use(() => page.locator("#key-summary", { hasText: "1–1 of 1 keys containing “sampl”" }).waitFor())
            yield* use(() => row.locator("a.key").click())
            yield* use(() => page.locator("table.reconciles [data-outcome]").first().waitFor())
            assert.notStrictEqual(yield* keyState(page), "terminal")

            // broken: the reconcile ends Terminal, the page shows it and why, without a reload
            yield* setImage("")
            yield* use(() => page.locator("#key-state [data-state=terminal]").waitFor({ timeout: 15_000 }))
            assert.include(yield* use(() => page.locator(".why").innerText()), "spec.image must not be empty")
            assert.strictEqual(
              yield* use(() => page.locator("table.reconciles [data-outcome]").first().getAttribute("data-outcome")),
              "terminal"
            )
            yield* use(() => page.screenshot({ path: path.join(results, "inspector-terminal.png"), fullPage: true }))

            // repaired: the next reconcile succeeds and the key leaves Terminal
            yield* setImage("nginx:1.27")
            yield* use(() =>
              page.locator("#key-state [data-state]:not([data-state=terminal])").waitFor({ timeout: 15_000 })
            )
            yield* use(() =>
              page.locator("table.reconciles tbody tr:first-child [data-outcome=success]").waitFor({ timeout: 15_000 })
            )
            yield* use(() => page.screenshot({ path: path.join(results, "inspector.png"), fullPage: true }))
            if (process.env.INSPECTOR_DOCS_SCREENSHOT === "1") {
              yield* use(() => page.screenshot({ path: path.join(root, "docs", "images", "inspector.png") }))
            }

            // the timeline shows the sample's reconciles, the Terminal one among them
            yield* use(() => page.locator("nav a[data-nav=timeline]").click())
            yield* use(() => page.locator("svg.timeline rect.bar.outcome-terminal").first().waitFor())
            yield* use(() => page.screenshot({ path: path.join(results, "inspector-timeline.png"), fullPage: true }))

            assert.deepStrictEqual(errors, [], "no error on the page or its console")
          }).pipe(
            // what the page showed, to see why
            Effect.onError(() =>
              use(async () => {
                await page.screenshot({ path: path.join(results, "inspector-failure.png"), fullPage: true })
                const text = await page.locator("body").innerText()
                console.error(`the page (test-results/inspector-failure.png):\n${text}\n${errors.join("\n")}`)
              }).pipe(Effect.ignore)
            )
          )
        }),
      90_000
    )
  }
)
