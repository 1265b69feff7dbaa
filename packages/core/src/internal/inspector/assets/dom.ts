/**
 * `assets/dom.js`: building elements (text only: no `innerHTML`, so nothing the API returns is ever parsed as
 * markup) and formatting times and durations.
 *
 * @internal
 */
export const text = String.raw`// The inspector's DOM helpers: elements from text nodes and attributes only.
const SVG = "http://www.w3.org/2000/svg"

function setAttributes(element, attributes) {
  if (!attributes) return
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value)
    else if (name === "dataset") Object.assign(element.dataset, value)
    else if (name === "checked" || name === "selected" || name === "value") element[name] = value
    else element.setAttribute(name, value === true ? "" : String(value))
  }
}

function appendChildren(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue
    element.append(child instanceof Node ? child : String(child))
  }
}

/** An HTML element: h("a", { href: "#/" }, "text", otherElement). */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag)
  setAttributes(element, attributes)
  appendChildren(element, children)
  return element
}

/** An SVG element. */
export function svg(tag, attributes, ...children) {
  const element = document.createElementNS(SVG, tag)
  setAttributes(element, attributes)
  appendChildren(element, children)
  return element
}

/** Replaces the children of element. */
export function fill(element, ...children) {
  element.replaceChildren()
  appendChildren(element, children)
  return element
}

export function debounce(f, ms) {
  let timer
  return (...args) => {
    clearTimeout(timer)
    timer = setTimeout(() => f(...args), ms)
  }
}

const pad = (n, width) => String(n).padStart(width, "0")

/** 1,234 */
export function count(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : "–"
}

/** 850 ms, 3.2 s, 4 min 05 s, 2 h 10 min */
export function duration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "–"
  const abs = Math.abs(ms)
  if (abs < 1000) return Math.round(ms) + " ms"
  if (abs < 60000) return (ms / 1000).toFixed(abs < 10000 ? 2 : 1) + " s"
  const seconds = Math.round(abs / 1000)
  if (seconds < 3600) return Math.floor(seconds / 60) + " min " + pad(seconds % 60, 2) + " s"
  return Math.floor(seconds / 3600) + " h " + pad(Math.floor(seconds / 60) % 60, 2) + " min"
}

/** 14:03:07.215 (local time) */
export function clock(at) {
  if (typeof at !== "number") return "–"
  const d = new Date(at)
  return pad(d.getHours(), 2) + ":" + pad(d.getMinutes(), 2) + ":" + pad(d.getSeconds(), 2) + "." +
    pad(d.getMilliseconds(), 3)
}

/** "in 3.0 s", "12 s ago", "now" */
export function relative(at, now) {
  if (typeof at !== "number") return ""
  const delta = at - now
  if (Math.abs(delta) < 50) return "now"
  return delta > 0 ? "in " + duration(delta) : duration(-delta) + " ago"
}

/**
 * A time shown as its clock time with how far it is from now; the page's ticker refreshes every element made here
 * once a second (see tick).
 */
export function time(at) {
  if (typeof at !== "number") return h("span", { class: "muted" }, "–")
  const iso = new Date(at).toISOString()
  return h("time", { datetime: iso, title: iso, dataset: { at: String(at) } },
    clock(at), " ", h("span", { class: "rel" }, "(" + relative(at, Date.now()) + ")"))
}

/** Refreshes the relative part of every time element under root. */
export function tick(root) {
  const now = Date.now()
  for (const element of root.querySelectorAll("time[data-at] .rel")) {
    element.textContent = "(" + relative(Number(element.parentElement.dataset.at), now) + ")"
  }
}
`
