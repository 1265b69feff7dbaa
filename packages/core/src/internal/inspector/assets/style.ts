/**
 * `assets/style.css`: the page's style sheet (light and dark, following the system).
 *
 * @internal
 */
export const text = String.raw`:root {
  --bg: #f7f7f8; --fg: #1d1f24; --muted: #5d6470; --card: #ffffff; --line: #d9dce1; --accent: #1f5fbf;
  --lane: #eef0f3; --focus: #1f5fbf;
  --success: #1e7f3c; --requeue: #2a63c4; --error: #c4372d; --terminal: #7a2ca0; --timeout: #b86e00;
  --panic: #b0166b; --interrupted: #6b7280; --running: #9aa3af;
  --waiting: #2a63c4; --delayed: #b86e00; --inflight: #0f7c86; --failing: #c4372d; --idle: #6b7280;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  color: var(--fg);
  background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171b; --fg: #e6e8eb; --muted: #a0a7b2; --card: #1e2126; --line: #343943; --accent: #7fb0ff;
    --lane: #23272d; --focus: #7fb0ff;
    --success: #3fb86a; --requeue: #6c9cff; --error: #ff6b5e; --terminal: #c084fc; --timeout: #f0a436;
    --panic: #f472b6; --interrupted: #9ca3af; --running: #6b7280;
    --waiting: #6c9cff; --delayed: #f0a436; --inflight: #2cc3cf; --failing: #ff6b5e; --idle: #9ca3af;
  }
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, select:focus-visible, input:focus-visible, main:focus-visible {
  outline: 2px solid var(--focus); outline-offset: 2px;
}
main:focus { outline: none; }
code, .key {
  font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.92em;
}
h1 { font-size: 1.5rem; margin: 0.2rem 0 1rem; overflow-wrap: anywhere; }
h1.key { font-size: 1.35rem; }
h2 { font-size: 1.15rem; margin: 1.4rem 0 0.6rem; }
h3 { font-size: 0.95rem; margin: 0.8rem 0 0.3rem; color: var(--muted); }
.muted { color: var(--muted); }
.small { font-size: 0.85em; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}

.top {
  display: flex; align-items: center; gap: 1.5rem; flex-wrap: wrap;
  padding: 0.6rem 1.5rem; background: var(--card); border-bottom: 1px solid var(--line);
}
.brand { font-weight: 700; text-decoration: none; color: var(--fg); font-size: 1.05rem; }
.brand span { font-weight: 400; color: var(--muted); }
.top nav { display: flex; gap: 1rem; }
.top nav a { text-decoration: none; padding: 0.2rem 0; border-bottom: 2px solid transparent; }
.top nav a[aria-current="page"] { border-bottom-color: var(--accent); font-weight: 600; }
.live { margin: 0 0 0 auto; color: var(--muted); font-size: 0.9em; }
.live::before { content: "●"; margin-right: 0.35em; color: var(--muted); }
.live[data-mode="live"]::before { color: var(--success); }
.live[data-mode="polling"]::before { color: var(--timeout); }
.banner { margin: 0; padding: 0.6rem 1.5rem; background: var(--error); color: #fff; }

main { padding: 1rem 1.5rem 3rem; max-width: 1400px; }
.crumbs { color: var(--muted); margin-bottom: 0.2rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 0.9rem 1.1rem; }
.card h2 { margin-top: 0; }
.stats { display: flex; flex-wrap: wrap; gap: 0.6rem 1.6rem; margin: 0; }
.stat dt { color: var(--muted); font-size: 0.85em; }
.stat dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
.stat meter { display: block; width: 8rem; height: 0.6rem; margin-top: 0.2rem; }
.sources { list-style: none; padding: 0; margin: 0; }
.source { display: flex; gap: 0.4rem; align-items: baseline; flex-wrap: wrap; }
.dot { display: inline-block; width: 0.6rem; height: 0.6rem; border-radius: 50%; background: var(--idle); }
.dot.source-connected { background: var(--success); }
.dot.source-disconnected { background: var(--error); }
.links { margin: 0.8rem 0 0; }
.why { font-size: 1.02rem; margin: 0 0 0.8rem; }
.why q { font-style: italic; }
.empty { color: var(--muted); }

.filters { display: flex; flex-wrap: wrap; gap: 0.4rem 0.6rem; align-items: center; margin-bottom: 0.6rem; }
.filters input, .filters select, .pager button {
  font: inherit; color: var(--fg); background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 0.3rem 0.5rem;
}
.filters input { width: min(24rem, 100%); }
.pager { display: flex; gap: 0.8rem; align-items: center; margin-top: 0.6rem; }
.pager button:disabled { opacity: 0.45; }
.summary { color: var(--muted); margin: 0.4rem 0; }

.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.35rem 0.7rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: 0.85em; color: var(--muted); font-weight: 600; white-space: nowrap; }
tbody tr:last-child > * { border-bottom: none; }
tbody th { font-weight: 400; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.message { max-width: 36rem; overflow-wrap: anywhere; }
tr.dropped { color: var(--muted); }
.predicates { list-style: none; margin: 0; padding: 0; }
.predicates .passed { color: var(--success); }
.predicates .failed { color: var(--error); }

.badge {
  display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.85em; font-weight: 600;
  border: 1px solid currentColor; white-space: nowrap;
}
.state-waiting { color: var(--waiting); }
.state-delayed { color: var(--delayed); }
.state-inFlight { color: var(--inflight); }
.state-failing { color: var(--failing); }
.state-terminal { color: var(--terminal); }
.state-idle { color: var(--idle); }
.outcome-success { color: var(--success); }
.outcome-requeueAfter { color: var(--requeue); }
.outcome-error { color: var(--error); }
.outcome-terminal { color: var(--terminal); }
.outcome-timeout { color: var(--timeout); }
.outcome-panic { color: var(--panic); }
.outcome-interrupted { color: var(--interrupted); }
.outcome-running { color: var(--running); }

.timeline-figure {
  margin: 0.6rem 0; overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px;
}
svg.timeline { display: block; font-size: 11px; }
svg.timeline .lane { fill: transparent; }
svg.timeline .lane.even { fill: var(--lane); }
svg.timeline .lane-label { fill: var(--accent); font-family: ui-monospace, Menlo, Consolas, monospace; }
svg.timeline .tick { fill: var(--muted); }
svg.timeline .grid { stroke: var(--line); stroke-width: 1; }
svg.timeline .now { stroke: var(--fg); stroke-width: 1; stroke-dasharray: 3 3; }
svg.timeline .bar { fill: currentColor; }
svg.timeline .bar.outcome-running { fill: var(--running); opacity: 0.7; }
svg.timeline a:focus-visible .bar, svg.timeline a:hover .bar { stroke: var(--fg); stroke-width: 1.5; }
.legend { display: flex; flex-wrap: wrap; gap: 0.5rem; list-style: none; padding: 0; margin: 0.4rem 0; }
`
