/**
 * The documentation's tests, run: every ```ts block of the Markdown files that is a test (it imports
 * `@effect/vitest`) runs here as it is written, in a `describe` named after its file and line (the `docs:examples`
 * module of docs/vitest.config.ts). The README's test runs in readme.test.ts, with the code it continues.
 */
import { assert, describe, it } from "@effect/vitest"
import { examples } from "docs:examples"

describe("the documentation's test blocks", () => {
  it("are found (docs/testkit.md has one)", () => {
    assert.isTrue(examples.some((name) => name.startsWith("docs/testkit.md:")), examples.join(", "))
  })
})
