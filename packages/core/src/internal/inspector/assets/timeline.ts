/**
 * `assets/timeline.js`: recent reconciles across keys as an SVG chart, a lane per controller or per key, each
 * reconcile a bar from its start to its end, colored by outcome (a backlog shows as a dense lane, a retry storm
 * as a lane of red bars spaced by the backoff).
 *
 * @internal
 */
export const text = String.raw`// The inspector's timeline view.
import { api } from "./api.js"
import { clock, count, duration, fill, h, svg } from "./dom.js"
import { outcomeBadge, outcomeLabels } from "./views.js"

export const windows = [60, 300, 900]
export const outcomes = ["success", "requeueAfter", "error", "terminal", "timeout", "panic", "interrupted"]
const limit = 500
const maxLanes = 40
const laneHeight = 22
const axisHeight = 26

const windowLabel = (seconds) => seconds < 60 ? seconds + " s" : seconds / 60 + " min"
const shortClock = (at) => clock(at).slice(0, 8)

function lanesOf(items, by) {
  const lanes = new Map()
  for (const item of items) {
    const id = by === "key" ? item.controller + " " + item.key : item.controller
    let lane = lanes.get(id)
    if (lane === undefined) {
      lane = { id, controller: item.controller, key: by === "key" ? item.key : undefined, items: [], last: 0 }
      lanes.set(id, lane)
    }
    lane.items.push(item)
    lane.last = Math.max(lane.last, item.startedAt)
  }
  const all = Array.from(lanes.values())
  return by === "key"
    ? all.sort((a, b) => b.last - a.last)
    : all.sort((a, b) => a.controller < b.controller ? -1 : a.controller > b.controller ? 1 : 0)
}

function draw(ctx, items, route, since, now, width) {
  const by = route.lanes
  const all = lanesOf(items, by)
  const lanes = all.slice(0, maxLanes)
  const labelWidth = by === "key" ? 230 : 170
  const right = 12
  const track = Math.max(100, width - labelWidth - right)
  const height = axisHeight + Math.max(1, lanes.length) * laneHeight + 4
  const x = (t) => labelWidth + ((t - since) / (now - since)) * track
  const chart = svg("svg", {
    class: "timeline", width, height, viewBox: "0 0 " + width + " " + height,
    "aria-labelledby": "timeline-title", "aria-describedby": "timeline-summary"
  }, svg("title", { id: "timeline-title" }, "Reconciles of the last " + windowLabel(route.window)))
  // the time axis: six ticks
  for (let i = 0; i <= 6; i++) {
    const t = since + ((now - since) * i) / 6
    chart.append(
      svg("line", { class: "grid", x1: x(t), x2: x(t), y1: axisHeight - 6, y2: height }),
      svg("text", { class: "tick", x: x(t), y: 14, "text-anchor": i === 0 ? "start" : i === 6 ? "end" : "middle" },
        i === 6 ? "now" : shortClock(t)))
  }
  lanes.forEach((lane, index) => {
    const y = axisHeight + index * laneHeight
    const label = lane.key === undefined ? lane.controller : lane.key
    const href = lane.key === undefined
      ? ctx.href({ view: "keys", controller: lane.controller, state: "all", search: "", page: 1 })
      : ctx.href({ view: "key", controller: lane.controller, key: lane.key })
    chart.append(
      svg("rect", { class: "lane" + (index % 2 === 0 ? " even" : ""), x: 0, y, width, height: laneHeight }),
      svg("a", { href },
        svg("text", { class: "lane-label", x: 6, y: y + 15 },
          label.length > 30 ? label.slice(0, 29) + "…" : label,
          svg("title", null, lane.controller + " " + label))))
    for (const item of lane.items) {
      const end = item.durationMs === undefined ? now : item.startedAt + item.durationMs
      const x0 = x(Math.max(item.startedAt, since))
      const x1 = x(Math.min(end, now))
      const outcome = item.outcome === undefined ? "running" : item.outcome
      chart.append(svg("a", { href: ctx.href({ view: "key", controller: item.controller, key: item.key }) },
        svg("rect", {
          class: "bar outcome-" + outcome, x: x0, y: y + 4, width: Math.max(2, x1 - x0), height: laneHeight - 8,
          dataset: { outcome }
        }, svg("title", null,
          item.controller + " " + item.key + ": " + outcome + ", " +
            (item.durationMs === undefined ? "running" : duration(item.durationMs)) + ", started " +
            clock(item.startedAt) + " (" + item.reconcileID + ")"))))
    }
  })
  if (lanes.length === 0) {
    chart.append(svg("text", { class: "tick", x: labelWidth, y: axisHeight + 15 }, "No reconcile in this window."))
  }
  chart.append(svg("line", { class: "now", x1: x(now), x2: x(now), y1: axisHeight - 6, y2: height }))
  return { chart, shown: lanes.length, total: all.length }
}

export function timeline(ctx, initial) {
  let route = initial
  let last
  const windowSelect = h("select", { id: "timeline-window" },
    windows.map((w) => h("option", { value: String(w), selected: w === route.window }, "last " + windowLabel(w))))
  const lanesSelect = h("select", { id: "timeline-lanes" },
    h("option", { value: "controller", selected: route.lanes === "controller" }, "a lane per controller"),
    h("option", { value: "key", selected: route.lanes === "key" }, "a lane per key"))
  const change = (patch) => element.isConnected && ctx.navigate({ ...route, ...patch }, { replace: true })
  windowSelect.addEventListener("change", () => change({ window: Number(windowSelect.value) }))
  lanesSelect.addEventListener("change", () => change({ lanes: lanesSelect.value }))
  const scope = h("span", { class: "scope" })
  const summary = h("p", { id: "timeline-summary", class: "summary" })
  const figure = h("figure", { class: "timeline-figure" })
  const legend = h("ul", { class: "legend", "aria-label": "Outcomes" },
    outcomes.concat(["running"]).map((o) =>
      h("li", null, o === "running" ? outcomeBadge(undefined) : outcomeBadge(o))))
  const render = () => {
    if (last === undefined) return
    const now = Date.now()
    const since = now - route.window * 1000
    const items = last.items.filter((item) =>
      (route.controller === undefined || item.controller === route.controller) &&
      (item.durationMs === undefined ? now : item.startedAt + item.durationMs) >= since)
    const width = Math.max(640, Math.floor(figure.clientWidth || 960))
    const { chart, shown, total } = draw(ctx, items, route, since, now, width)
    const byOutcome = new Map()
    for (const item of items) {
      const o = item.outcome === undefined ? "running" : item.outcome
      byOutcome.set(o, (byOutcome.get(o) || 0) + 1)
    }
    fill(summary,
      count(items.length) + (items.length === 1 ? " reconcile" : " reconciles") + " since " + shortClock(since),
      byOutcome.size === 0
        ? ""
        : ": " + Array.from(byOutcome, ([o, n]) => count(n) + " " + (outcomeLabels[o] || o)).join(", "),
      last.items.length >= limit ? " (the latest " + limit + " only)" : "",
      shown < total ? "; the " + shown + " most recent of " + count(total) + " keys shown" : "",
      ".")
    fill(figure, chart)
  }
  const element = h("div", null,
    h("h1", null, "Timeline ", scope),
    h("form", { class: "filters", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "timeline-window" }, "Window "), windowSelect, " ",
      h("label", { for: "timeline-lanes" }, "Lanes "), lanesSelect),
    summary, figure, legend)
  const showScope = () =>
    fill(scope, route.controller === undefined ? null : [
      h("span", { class: "muted" }, "of "), route.controller, " ",
      h("a", { href: ctx.href({ ...route, controller: undefined }), class: "small" }, "(all controllers)")
    ])
  showScope()
  return {
    element,
    title: "Timeline",
    update(next) {
      route = next
      windowSelect.value = String(route.window)
      lanesSelect.value = route.lanes
      showScope()
      render()
    },
    async load(signal) {
      const since = Date.now() - route.window * 1000
      last = await api.timeline({ since: Math.floor(since), limit }, signal)
      render()
      return last.version
    },
    // the window slides: redraw once a second from what was fetched (not while a bar or a lane has the focus)
    tick() {
      if (!figure.contains(document.activeElement)) render()
    }
  }
}
`
