/**
 * The inspector page's files, without a browser (the page in Chromium: inspectorPage.browser.test.ts): every file the
 * page or a module names is served, nothing is loaded from the network, no script is inline (the
 * Content-Security-Policy forbids it), every JavaScript module parses, and nothing is parsed as HTML at run time.
 */
import { assert, describe, it } from "@effect/vitest"
import ts from "typescript"
import * as Assets from "../src/internal/inspector/assets/index.js"

const scripts = Array.from(Assets.files).filter(([name]) => name.endsWith(".js"))

/** The parse errors of a JavaScript module (TypeScript's parser, which reads JavaScript). */
const parseErrors = (name: string, text: string): ReadonlyArray<string> => {
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS)
  const diagnostics = (file as unknown as { readonly parseDiagnostics: ReadonlyArray<ts.Diagnostic> }).parseDiagnostics
  return diagnostics.map((d) => `${name}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`)
}

describe("the inspector's page", () => {
  it("names only files it serves: the page's links and scripts, each module's imports", () => {
    const named = Array.from(Assets.page.html.matchAll(/(?:href|src)="assets\/([^"]+)"/g), (m) => m[1]!)
    assert.includeMembers(named, ["app.js", "style.css", "favicon.svg"])
    for (const [name, file] of scripts) {
      for (const [, imported] of file.body.matchAll(/from "\.\/([^"]+)"/g)) {
        assert.isTrue(Assets.files.has(imported!), `${name} imports ${imported}, which is served`)
      }
    }
    for (const name of named) assert.isTrue(Assets.files.has(name), `the page names ${name}, which is served`)
  })

  it("loads nothing from the network, has no inline script, never parses HTML at run time", () => {
    for (
      const [name, text] of [["index.html", Assets.page.html], ...Array.from(Assets.files, ([n, f]) => [n, f.body])]
    ) {
      const urls = Array.from(text!.matchAll(/https?:\/\/[^\s"')]+/g), (m) => m[0]).filter((u) =>
        u !== "http://www.w3.org/2000/svg"
      )
      assert.deepStrictEqual(urls, [], `${name} names no URL but the SVG namespace`)
      assert.notMatch(text!, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/, name)
    }
    assert.notMatch(Assets.page.html, /<script(?![^>]*\bsrc=)[^>]*>/, "no inline script")
    assert.notMatch(Assets.page.html, /\son[a-z]+=/, "no inline event handler")
    assert.include(Assets.headers["content-security-policy"], "script-src 'self'")
  })

  it("serves its files by name only: the record has no prototype", () => {
    assert.deepStrictEqual(Object.keys(Assets.page.assets), Array.from(Assets.files.keys()))
    for (const name of ["constructor", "__proto__", "toString", "../index.ts"]) {
      assert.isUndefined(Assets.page.assets[name], name)
    }
  })

  it("every JavaScript module parses", () => {
    assert.deepStrictEqual(scripts.flatMap(([name, file]) => parseErrors(name, file.body)), [])
    assert.isAtLeast(scripts.length, 5)
    // the check itself finds an error
    assert.isNotEmpty(parseErrors("broken.js", "export function ( {"))
  })
})
