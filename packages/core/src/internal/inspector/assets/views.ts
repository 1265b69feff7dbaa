/**
 * `assets/views.js`: the controllers overview, a controller's key list (state filter, search, pages of 100) and a
 * key's detail (its state and why, its reconciles, the events that enqueued it or were dropped).
 *
 * @internal
 */
export const text = String.raw`// The inspector's views: { element, title, load(signal) -> version, update?(route) }
import { api } from "./api.js"
import { count, debounce, duration, fill, h, time } from "./dom.js"

export const pageSize = 100

export const states = ["all", "waiting", "delayed", "inFlight", "failing", "terminal", "idle"]
const stateLabels = {
  all: "all", waiting: "waiting", delayed: "delayed", inFlight: "in flight", failing: "failing (backoff)",
  terminal: "terminal", idle: "idle"
}
export const outcomeLabels = {
  success: "success", requeueAfter: "requeue after", error: "error", terminal: "terminal", timeout: "timeout",
  panic: "panic", interrupted: "interrupted"
}

export const stateBadge = (state) =>
  h("span", { class: "badge state-" + state, dataset: { state } }, stateLabels[state] || state)

export const outcomeBadge = (outcome) =>
  outcome === undefined
    ? h("span", { class: "badge outcome-running" }, "running")
    : h("span", { class: "badge outcome-" + outcome, dataset: { outcome } }, outcomeLabels[outcome] || outcome)

const stat = (label, value, extra) => h("div", { class: "stat" }, h("dt", null, label), h("dd", null, value, extra))

const empty = (message) => h("p", { class: "empty" }, message)

/**
 * Whether data differs from what was last shown (its version aside): a change elsewhere leaves the view as it is,
 * with its selection and focus.
 */
function changes() {
  let last
  return (data) => {
    const text = JSON.stringify({ ...data, version: 0 })
    if (text === last) return false
    last = text
    return true
  }
}

// ---- the controllers overview ----

function sourceItem(source) {
  return h("li", { class: "source" },
    h("span", { class: "dot source-" + source.state, "aria-hidden": "true" }),
    h("span", { class: "source-name" }, source.name), " ",
    h("span", { class: "muted" }, source.state),
    source.since === undefined ? null : h("span", { class: "muted" }, " since ", time(source.since)))
}

function controllerCard(ctx, c) {
  const link = (state, label, n) =>
    h("a", { href: ctx.href({ view: "keys", controller: c.name, state, search: "", page: 1 }) },
      n === undefined ? label : [count(n), " ", label])
  const workers = c.workers.busy + c.workers.idle
  const id = "controller-" + c.name.replace(/[^A-Za-z0-9_-]/g, "-")
  return h("section", { class: "card controller", "aria-labelledby": id },
    h("h2", { id },
      h("a", { href: ctx.href({ view: "keys", controller: c.name, state: "all", search: "", page: 1 }) }, c.name)),
    h("dl", { class: "stats" },
      stat("Workers", count(c.workers.busy) + " busy / " + count(c.workers.idle) + " idle",
        h("meter", { min: 0, max: Math.max(workers, 1), value: c.workers.busy, "aria-label": "busy workers" })),
      stat("Queue depth", count(c.queue.depth)),
      stat("Waiting", link("waiting", "keys", c.queue.waiting)),
      stat("Delayed", link("delayed", "keys", c.queue.delayed)),
      stat("In flight", link("inFlight", "keys", c.queue.inFlight))),
    h("h3", null, "Sources"),
    c.sources.length === 0
      ? empty("No sources.")
      : h("ul", { class: "sources" }, c.sources.map(sourceItem)),
    h("p", { class: "links" },
      link("failing", "failing", undefined), " · ", link("terminal", "terminal", undefined), " · ",
      h("a", { href: ctx.href({ view: "timeline", controller: c.name, window: 60, lanes: "key" }) }, "timeline")))
}

export function overview(ctx) {
  const body = h("div", { class: "cards" }, h("p", null, "Loading…"))
  const element = h("div", null, h("h1", null, "Controllers"), body)
  const changed = changes()
  return {
    element,
    title: "Controllers",
    async load(signal) {
      const data = await api.controllers(signal)
      if (!changed(data)) return data.version
      if (data.controllers.length === 0) {
        fill(body, empty("No controller is recorded yet: the inspector shows a controller once it has started."))
      } else {
        fill(body, data.controllers.map((c) => controllerCard(ctx, c)))
      }
      return data.version
    }
  }
}

// ---- a controller's keys ----

function dueCell(item) {
  if (item.dueAt === undefined) return h("td", null, h("span", { class: "muted" }, "–"))
  const why = item.reason === "backoff"
    ? "backoff after " + count(item.failures) + (item.failures === 1 ? " failure" : " failures")
    : item.reason === "requeueAfter" ? "requeue after" : undefined
  return h("td", null, time(item.dueAt), why === undefined ? null : h("div", { class: "muted small" }, why))
}

function keyRow(ctx, controller, item) {
  return h("tr", { dataset: { key: item.key } },
    h("th", { scope: "row" },
      h("a", { href: ctx.href({ view: "key", controller, key: item.key }), class: "key" }, item.key)),
    h("td", null, stateBadge(item.state)),
    h("td", { class: "num" }, item.priority === undefined ? "–" : String(item.priority)),
    dueCell(item),
    h("td", { class: "num" }, count(item.failures)),
    h("td", { class: "num" }, item.inFlightMs === undefined ? "–" : duration(item.inFlightMs)),
    h("td", null,
      item.lastOutcome === undefined ? h("span", { class: "muted" }, "–") : outcomeBadge(item.lastOutcome)),
    h("td", null, time(item.lastReconcileAt)))
}

export function keyList(ctx, initial) {
  let route = initial
  const select = h("select", { id: "state-filter", name: "state" },
    states.map((s) => h("option", { value: s, selected: s === route.state }, stateLabels[s])))
  const search = h("input", {
    id: "key-search", name: "search", type: "search", value: route.search, placeholder: "namespace/name",
    autocomplete: "off", spellcheck: "false"
  })
  // (a search typed just before leaving the view is dropped: the view is no longer on the page)
  const change = (patch) => element.isConnected && ctx.navigate({ ...route, ...patch }, { replace: true })
  select.addEventListener("change", () => change({ state: select.value, page: 1 }))
  search.addEventListener("input", debounce(() => change({ search: search.value, page: 1 }), 200))
  const summary = h("p", { class: "summary", role: "status", id: "key-summary" })
  const rows = h("tbody")
  const previous = h("button", { type: "button", class: "pager-previous" }, "← Previous")
  const next = h("button", { type: "button", class: "pager-next" }, "Next →")
  const position = h("span", { class: "pager-position" })
  previous.addEventListener("click", () => change({ page: Math.max(1, route.page - 1) }))
  next.addEventListener("click", () => change({ page: route.page + 1 }))
  const heading = h("h1", null)
  const changed = changes()
  const element = h("div", null,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
      h("a", { href: ctx.href({ view: "overview" }) }, "Controllers"), " / "),
    heading,
    h("form", { class: "filters", role: "search", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "state-filter" }, "State "), select, " ",
      h("label", { for: "key-search" }, "Key contains "), search),
    summary,
    h("div", { class: "table-wrap" },
      h("table", { class: "keys" },
        h("caption", { class: "visually-hidden" }, "Keys of the controller"),
        h("thead", null, h("tr", null,
          ["Key", "State", "Priority", "Due", "Failures", "In flight", "Last outcome", "Last reconcile"]
            .map((label) => h("th", { scope: "col" }, label)))),
        rows)),
    h("div", { class: "pager" }, previous, position, next))
  const view = {
    element,
    title: route.controller,
    update(next) {
      route = next
      if (select.value !== route.state) select.value = route.state
      if (document.activeElement !== search && search.value !== route.search) search.value = route.search
    },
    async load(signal) {
      fill(heading, route.controller, " ", h("span", { class: "muted" }, "keys"))
      const offset = (route.page - 1) * pageSize
      const data = await api.keys(route.controller, {
        state: route.state, search: route.search, offset, limit: pageSize
      }, signal)
      if (!changed({ ...data, route })) return data.version
      const first = data.total === 0 ? 0 : offset + 1
      const last = offset + data.items.length
      fill(summary, data.total === 0
        ? "No key matches."
        : count(first) + "–" + count(last) + " of " + count(data.total) + " keys" +
          (route.state === "all" ? "" : " " + stateLabels[route.state]) +
          (route.search === "" ? "" : " containing “" + route.search + "”"))
      fill(rows, data.items.map((item) => keyRow(ctx, route.controller, item)))
      previous.disabled = route.page <= 1
      next.disabled = last >= data.total
      fill(position, "page " + count(route.page) + " of " + count(Math.max(1, Math.ceil(data.total / pageSize))))
      return data.version
    }
  }
  return view
}

// ---- a key ----

/** Why the key is where it is, in a sentence or two. */
export function explain(detail) {
  const last = detail.reconciles.length === 0 ? undefined : detail.reconciles[detail.reconciles.length - 1]
  const failures = detail.limiter.failures
  const failuresText = count(failures) + (failures === 1 ? " failure" : " failures")
  switch (detail.state) {
    case "waiting":
      return ["Waiting in the queue for a free worker",
        detail.priority === undefined ? "." : " (priority " + detail.priority + ")."]
    case "failing":
      return ["Delayed by backoff after ", failuresText, ": retried ", time(detail.dueAt), ".",
        last && last.message ? [" Last error: ", h("q", null, last.message)] : null]
    case "delayed":
      return detail.reason === "backoff"
        ? ["Delayed by backoff after ", failuresText, ": retried ", time(detail.dueAt), "."]
        : ["Delayed: the last reconcile asked to run again after a while (requeue after); due ",
          time(detail.dueAt), "."]
    case "inFlight":
      return ["Being reconciled now",
        detail.inFlightMs === undefined ? "." : ", for " + duration(detail.inFlightMs) + " so far.",
        last ? " Attempt " + last.attempt + "." : null]
    case "terminal":
      return ["Not retried: the last reconcile ended Terminal",
        last && last.message ? [": ", h("q", null, last.message)] : null,
        ". It runs again when an event for the object passes the predicates."]
    case "idle": {
      const dropped = detail.events.filter((e) => !e.enqueued).length
      return ["Not queued: ",
        last
          ? "the last reconcile ended " + (outcomeLabels[last.outcome] || "without an outcome") + ". "
          : "never reconciled yet. ",
        "It runs again when an event for the object passes the predicates",
        dropped === 0 ? "." : "; " + count(dropped) + " of the recorded events did not (below)."]
    }
    default:
      return [detail.state]
  }
}

function reconcilesTable(reconciles) {
  if (reconciles.length === 0) return empty("No reconcile recorded.")
  return h("div", { class: "table-wrap" }, h("table", { class: "reconciles" },
    h("caption", { class: "visually-hidden" }, "Last reconciles, newest first"),
    h("thead", null, h("tr", null,
      ["Started", "Duration", "Outcome", "Attempt", "Message", "Reconcile ID", "Trace ID"].map((label) =>
        h("th", { scope: "col" }, label)))),
    h("tbody", null, reconciles.slice().reverse().map((r) =>
      h("tr", null,
        h("td", null, time(r.startedAt)),
        h("td", { class: "num" }, r.durationMs === undefined ? "–" : duration(r.durationMs)),
        h("td", null, outcomeBadge(r.outcome)),
        h("td", { class: "num" }, String(r.attempt)),
        h("td", { class: "message" }, r.message || ""),
        h("td", null, h("code", null, r.reconcileID)),
        h("td", null, r.traceId ? h("code", null, r.traceId) : h("span", { class: "muted" }, "–")))))))
}

function eventsTable(events) {
  if (events.length === 0) return empty("No event recorded.")
  return h("div", { class: "table-wrap" }, h("table", { class: "events" },
    h("caption", { class: "visually-hidden" }, "Events, newest first"),
    h("thead", null, h("tr", null,
      ["At", "Source", "Type", "Predicates", "Enqueued"].map((label) => h("th", { scope: "col" }, label)))),
    h("tbody", null, events.slice().reverse().map((e) =>
      h("tr", { class: e.enqueued ? "" : "dropped" },
        h("td", null, time(e.at)),
        h("td", null, e.source),
        h("td", null, e.type),
        h("td", null, e.predicates.length === 0
          ? h("span", { class: "muted" }, "none")
          : h("ul", { class: "predicates" }, e.predicates.map((p) =>
            h("li", { class: p.passed ? "passed" : "failed" }, p.passed ? "✓ " : "✗ ", p.name,
              h("span", { class: "visually-hidden" }, p.passed ? " passed" : " did not pass"))))),
        h("td", null, e.enqueued ? "yes" : h("strong", null, "no")))))))
}

export function keyDetail(ctx, route) {
  const body = h("div", null, h("p", null, "Loading…"))
  const element = h("div", null,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
      h("a", { href: ctx.href({ view: "overview" }) }, "Controllers"), " / ",
      h("a", { href: ctx.href({ view: "keys", controller: route.controller, state: "all", search: "", page: 1 }) },
        route.controller), " / "),
    h("h1", { class: "key" }, route.key),
    body)
  const changed = changes()
  return {
    element,
    title: route.key,
    async load(signal) {
      let detail
      try {
        detail = await api.key(route.controller, route.key, signal)
      } catch (error) {
        if (error && error.status === 404) {
          fill(body, h("p", { class: "empty", id: "key-state" },
            "Not recorded: ", error.message,
            ". A key shows here once an event for it has been seen; a key not seen " +
              "for a while is forgotten."))
          return undefined
        }
        throw error
      }
      if (!changed(detail)) return detail.version
      fill(body,
        h("section", { class: "card", "aria-labelledby": "key-state-heading" },
          h("h2", { id: "key-state-heading" }, "State ", h("span", { id: "key-state" }, stateBadge(detail.state))),
          h("p", { class: "why" }, explain(detail)),
          h("dl", { class: "stats" },
            stat("Priority", detail.priority === undefined ? "–" : String(detail.priority)),
            stat("Due", time(detail.dueAt), detail.reason === undefined ? null : h("div", { class: "muted small" },
              detail.reason === "backoff" ? "backoff" : "requeue after")),
            stat("In flight", detail.inFlightMs === undefined ? "–" : duration(detail.inFlightMs)),
            stat("Rate limiter failures", count(detail.limiter.failures)))),
        h("section", { "aria-labelledby": "reconciles-heading" },
          h("h2", { id: "reconciles-heading" }, "Last reconciles"), reconcilesTable(detail.reconciles)),
        h("section", { "aria-labelledby": "events-heading" },
          h("h2", { id: "events-heading" }, "Events"),
          h("p", { class: "muted" }, "What the sources saw for this key, and whether the predicates let it in."),
          eventsTable(detail.events)))
      return detail.version
    }
  }
}
`
