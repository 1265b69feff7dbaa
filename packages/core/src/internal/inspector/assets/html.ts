/**
 * `index.html`: the page's shell (served at `/`); `assets/app.js` fills `<main>`.
 *
 * @internal
 */
export const text = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>Reconcile inspector</title>
<link rel="icon" href="assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="assets/style.css">
<script type="module" src="assets/app.js"></script>
</head>
<body>
<header class="top">
  <a class="brand" href="#/">Reconcile <span>inspector</span></a>
  <nav aria-label="Views">
    <a href="#/" data-nav="overview">Controllers</a>
    <a href="#/timeline" data-nav="timeline">Timeline</a>
  </nav>
  <p id="live" class="live" role="status" aria-live="polite" data-mode="connecting">connecting…</p>
</header>
<div id="banner" class="banner" role="alert" hidden></div>
<main id="view" tabindex="-1">
  <p>Loading…</p>
  <noscript>The inspector's page needs JavaScript; its JSON API is at
    <a href="api/controllers">api/controllers</a>.</noscript>
</main>
</body>
</html>
`
