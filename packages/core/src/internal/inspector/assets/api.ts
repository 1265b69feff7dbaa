/**
 * `assets/api.js`: the page's client of the JSON API (relative URLs) and its live updates: `api/stream`'s `change`
 * events, or polling every 2 s while the stream is unavailable.
 *
 * @internal
 */
export const text = String.raw`// The inspector's API client (relative URLs: a proxy's path prefix keeps working).
export class ApiError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

async function getJson(path, signal) {
  let response
  try {
    response = await fetch(path, { headers: { accept: "application/json" }, cache: "no-store", signal })
  } catch (error) {
    if (error && error.name === "AbortError") throw error
    throw new ApiError(0, "cannot reach the operator (" + (error && error.message ? error.message : error) + ")")
  }
  let body
  try {
    body = await response.json()
  } catch (error) {
    if (error && error.name === "AbortError") throw error
    body = undefined
  }
  if (!response.ok) {
    const message = body && typeof body.error === "string"
      ? body.error
      : response.status + " " + response.statusText
    throw new ApiError(response.status, message)
  }
  return body
}

const segment = (s) => encodeURIComponent(s)

function query(params) {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value))
  }
  const text = search.toString()
  return text === "" ? "" : "?" + text
}

export const api = {
  controllers: (signal) => getJson("api/controllers", signal),
  keys: (controller, params, signal) =>
    getJson("api/controllers/" + segment(controller) + "/keys" + query(params), signal),
  key: (controller, key, signal) =>
    getJson("api/controllers/" + segment(controller) + "/keys/" + segment(key), signal),
  timeline: (params, signal) => getJson("api/timeline" + query(params), signal)
}

export const pollMillis = 2000

/**
 * Calls onChange(version) when the recorded state changes: on each "change" event of api/stream, or (version
 * undefined) every 2 s while the stream is not open. onStatus("live" | "polling" | "connecting") says which.
 */
export function subscribe(onChange, onStatus) {
  let poll
  const startPolling = () => {
    if (poll !== undefined) return
    onStatus("polling")
    poll = setInterval(() => onChange(undefined), pollMillis)
  }
  const stopPolling = () => {
    clearInterval(poll)
    poll = undefined
  }
  if (typeof EventSource !== "function") {
    startPolling()
    return
  }
  onStatus("connecting")
  const source = new EventSource("api/stream")
  source.addEventListener("open", () => {
    stopPolling()
    onStatus("live")
    // what changed while the stream was down
    onChange(undefined)
  })
  source.addEventListener("change", (event) => {
    let version
    try {
      version = JSON.parse(event.data).version
    } catch {
      version = undefined
    }
    onChange(typeof version === "number" ? version : undefined)
  })
  // the browser reconnects by itself (unless the server refused the stream): poll meanwhile
  source.addEventListener("error", startPolling)
}
`
