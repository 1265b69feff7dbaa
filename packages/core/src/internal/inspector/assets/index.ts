/**
 * The inspector's page: a small static app (HTML, CSS and JavaScript modules, no framework, no build step, nothing
 * from the network), each file's text a module here so that it is compiled and packed with the package. The server
 * serves {@link page} at `/` and {@link files} at `/assets/<name>`, each with {@link headers}. See README.md.
 *
 * @internal
 */
import { text as api } from "./api.js"
import { text as app } from "./app.js"
import { text as dom } from "./dom.js"
import { text as html } from "./html.js"
import { text as style } from "./style.js"
import { text as timeline } from "./timeline.js"
import { text as views } from "./views.js"

/** @internal */
export interface Asset {
  readonly contentType: string
  readonly body: string
}

const javascript = "text/javascript; charset=utf-8"

const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">` +
  `<rect width="16" height="16" rx="3" fill="#1f5fbf"/>` +
  `<path d="M3 11h3V5H3zm4 0h3V3H7zm4 0h2V7h-2z" fill="#fff"/></svg>`

/** The page's files by name, served at `/assets/<name>` (look the name up; never join it to a path). @internal */
export const files: ReadonlyMap<string, Asset> = new Map([
  ["app.js", { contentType: javascript, body: app }],
  ["api.js", { contentType: javascript, body: api }],
  ["dom.js", { contentType: javascript, body: dom }],
  ["views.js", { contentType: javascript, body: views }],
  ["timeline.js", { contentType: javascript, body: timeline }],
  ["style.css", { contentType: "text/css; charset=utf-8", body: style }],
  ["favicon.svg", { contentType: "image/svg+xml", body: favicon }]
])

/** The content type of the page's HTML. @internal */
export const pageContentType = "text/html; charset=utf-8"

/**
 * The page: its HTML (served at `/`) and its {@link files} as a record (`assets[name]`), without a prototype, so
 * that `constructor` or `__proto__` is no file. @internal
 */
export const page: { readonly html: string; readonly assets: Readonly<Record<string, Asset>> } = {
  html,
  assets: Object.assign(Object.create(null) as Record<string, Asset>, Object.fromEntries(files))
}

/**
 * Headers for the page and each file: scripts, styles and requests only from the page's own origin (no inline
 * script, nothing from the network), no sniffing, no caching across versions of the package, no referrer.
 *
 * @internal
 */
export const headers: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-cache",
  "referrer-policy": "no-referrer"
}
