/**
 * `assets/app.js`: the page's entry module: the view in the URL's hash, refetched when the recorded state changes.
 *
 * @internal
 */
export const text = String.raw`// The inspector's entry module: routing (the URL's hash) and live refreshes.
import { subscribe } from "./api.js"
import { clock, fill, tick } from "./dom.js"
import { timeline, windows } from "./timeline.js"
import { keyDetail, keyList, overview, states } from "./views.js"

const main = document.getElementById("view")
const live = document.getElementById("live")
const banner = document.getElementById("banner")

// ---- routes: #/  #/c/<controller>?state&search&page  #/c/<controller>/k/<key>  #/timeline?window&lanes&controller

function parse(hash) {
  const text = hash.replace(/^#/, "")
  const q = text.indexOf("?")
  const path = q < 0 ? text : text.slice(0, q)
  const params = new URLSearchParams(q < 0 ? "" : text.slice(q + 1))
  const parts = path.split("/").filter((p) => p !== "").map((p) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return p
    }
  })
  if (parts[0] === "timeline") {
    const window = Number(params.get("window"))
    return {
      view: "timeline",
      window: windows.includes(window) ? window : windows[0],
      lanes: params.get("lanes") === "key" ? "key" : "controller",
      controller: params.get("controller") || undefined
    }
  }
  if (parts[0] === "c" && parts.length === 2) {
    const state = params.get("state")
    const page = Math.floor(Number(params.get("page")))
    return {
      view: "keys",
      controller: parts[1],
      state: states.includes(state) ? state : "all",
      search: params.get("search") || "",
      page: page >= 1 ? page : 1
    }
  }
  if (parts[0] === "c" && parts.length === 4 && parts[2] === "k") {
    return { view: "key", controller: parts[1], key: parts[3] }
  }
  return { view: "overview" }
}

function href(route) {
  const e = encodeURIComponent
  const withParams = (path, params) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== "") search.set(name, value)
    }
    const text = search.toString()
    return "#" + path + (text === "" ? "" : "?" + text)
  }
  switch (route.view) {
    case "keys":
      return withParams("/c/" + e(route.controller), {
        state: route.state === "all" ? undefined : route.state,
        search: route.search,
        page: route.page > 1 ? String(route.page) : undefined
      })
    case "key":
      return "#/c/" + e(route.controller) + "/k/" + e(route.key)
    case "timeline":
      return withParams("/timeline", {
        window: String(route.window), lanes: route.lanes, controller: route.controller
      })
    default:
      return "#/"
  }
}

const sameView = (a, b) =>
  a.view === b.view && a.controller === b.controller && a.key === b.key

// ---- the current view and its refreshes

let current
let renderedVersion
let loading = false
let again = false
let abort

function showBanner(message) {
  banner.hidden = false
  fill(banner, message)
}

function hideBanner() {
  banner.hidden = true
}

/** What has the focus in the view: its id or link target, to find it again once the view is redrawn. */
function focusOf() {
  const element = document.activeElement
  if (!element || element === main || !main.contains(element)) return undefined
  if (element.id) return "#" + CSS.escape(element.id)
  const target = element.getAttribute("href")
  return target ? '[href="' + CSS.escape(target) + '"]' : undefined
}

function restoreFocus(selector) {
  if (selector === undefined || main.contains(document.activeElement)) return
  const element = main.querySelector(selector)
  if (element) element.focus({ preventScroll: true })
}

async function refresh() {
  if (loading) {
    again = true
    return
  }
  loading = true
  try {
    do {
      again = false
      const view = current
      abort = new AbortController()
      const focus = focusOf()
      try {
        const version = await view.load(abort.signal)
        if (view === current) {
          restoreFocus(focus)
          renderedVersion = version
          hideBanner()
          document.body.dataset.version = version === undefined ? "" : String(version)
          live.dataset.updated = clock(Date.now())
          showStatus()
        }
      } catch (error) {
        if (error && error.name === "AbortError") continue
        if (view === current) showBanner(error && error.message ? error.message : String(error))
      }
    } while (again)
  } finally {
    loading = false
  }
}

const ctx = {
  href,
  navigate(route, options) {
    const target = href(route)
    if (options && options.replace) {
      history.replaceState(null, "", target)
      show(parse(target))
    } else {
      location.hash = target
    }
  }
}

function show(route) {
  if (current && current.update && sameView(current.route, route)) {
    current.route = route
    current.update(route)
  } else {
    if (abort) abort.abort()
    const make = route.view === "keys" ? keyList : route.view === "key" ? keyDetail : route.view === "timeline"
      ? timeline
      : overview
    const focused = current !== undefined
    current = make(ctx, route)
    current.route = route
    renderedVersion = undefined
    fill(main, current.element)
    document.title = current.title + " · Reconcile inspector"
    if (focused) main.focus({ preventScroll: true })
  }
  for (const link of document.querySelectorAll("[data-nav]")) {
    const active = link.dataset.nav === (route.view === "timeline" ? "timeline" : "overview")
    if (active) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  refresh()
}

// ---- live updates

let mode = "connecting"
const modeLabels = { live: "live", polling: "polling every 2 s", connecting: "connecting…" }

function showStatus() {
  live.dataset.mode = mode
  fill(live, modeLabels[mode], live.dataset.updated ? " · updated " + live.dataset.updated : "")
}

subscribe(
  (version) => {
    if (version !== undefined && version === renderedVersion) return
    refresh()
  },
  (next) => {
    mode = next
    showStatus()
  }
)

setInterval(() => {
  tick(main)
  if (current && current.tick) current.tick()
}, 1000)

window.addEventListener("hashchange", () => show(parse(location.hash)))
show(parse(location.hash))
`
