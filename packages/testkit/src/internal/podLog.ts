/**
 * `pods/log`: the simulated containers' logs. There is no kubelet: a container's log is whatever a test wrote
 * (empty by default), line by line with the time each line was written. Reading applies the `PodLogOptions` as the
 * kubelet does (`container`, `previous`, `tailLines`, `limitBytes`, `sinceSeconds`, `sinceTime`, `timestamps`), after
 * kube-apiserver's own checks (the pod exists, the container is one of its containers, options valid).
 * A follower (`follow=true`) gets the lines written later, until the pod is deleted or it stops listening.
 * Logs belong to a pod's uid: a pod created again under the same name starts with empty logs.
 */
import * as ApiError from "../ApiError.js"
import type { ResourceType } from "../ResourceType.js"
import { isObject, type Obj } from "./json.js"
import type { Core } from "./store.js"

interface Line {
  readonly at: number
  readonly text: string
}

/** A container's stored log: the current and previous instances' lines, and who follows it. */
export interface ContainerLog {
  current: Array<Line>
  previous: Array<Line> | undefined
  readonly followers: Set<(lines: ReadonlyArray<Line>) => void>
}

const logs = new WeakMap<Core, Map<string, ContainerLog>>()

const entry = (core: Core, pod: Obj, container: string): ContainerLog => {
  let byKey = logs.get(core)
  if (byKey === undefined) {
    byKey = new Map()
    logs.set(core, byKey)
  }
  const k = `${pod.metadata.uid}/${container}`
  let log = byKey.get(k)
  if (log === undefined) {
    log = { current: [], previous: undefined, followers: new Set() }
    byKey.set(k, log)
  }
  return log
}

/** Splits text into lines, each ending in a newline (a missing final newline is added). */
const toLines = (text: string, at: number): Array<Line> =>
  text === "" ? [] : text.replace(/\n$/, "").split("\n").map((line) => ({ at, text: `${line}\n` }))

/** Options of a log write. */
export interface WriteLogOptions {
  /** Write the log of the previous (terminated) instance of the container instead. */
  readonly previous?: boolean | undefined
}

const podType = (core: Core): ResourceType => core.registry.byResource("", "v1", "pods")!

/** The pod and one of its containers (404 for a missing pod, 400 for a container it does not have). */
const containerEntry = (core: Core, namespace: string, name: string, container: string): ContainerLog => {
  const pod = core.get(podType(core), namespace, name) as Obj
  return entry(core, pod, containerOf(pod, container))
}

/** Replaces a container's log (or its previous instance's log). Followers see nothing of a replacement. */
export const setPodLog = (
  core: Core,
  namespace: string,
  pod: string,
  container: string,
  text: string,
  options: WriteLogOptions = {}
): void => {
  const log = containerEntry(core, namespace, pod, container)
  const lines = toLines(text, core.now())
  if (options.previous === true) log.previous = lines
  else log.current = lines
}

/** Appends to a container's current log; followers receive the new lines. */
export const appendPodLog = (core: Core, namespace: string, pod: string, container: string, text: string): void => {
  const log = containerEntry(core, namespace, pod, container)
  const lines = toLines(text, core.now())
  for (const line of lines) log.current.push(line)
  for (const follower of log.followers) follower(lines)
}

/** `PodLogOptions`, as query parameters carry them. */
export interface PodLogOptions {
  readonly container?: string | undefined
  readonly previous?: boolean | undefined
  readonly tailLines?: number | undefined
  readonly limitBytes?: number | undefined
  readonly sinceSeconds?: number | undefined
  readonly sinceTime?: string | undefined
  readonly timestamps?: boolean | undefined
}

const invalid = (name: string, field: string, value: unknown, detail: string): ApiError.ApiError => {
  const message = `Invalid value: ${JSON.stringify(value)}: ${detail}`
  return ApiError.make(422, "Invalid", `PodLogOptions "${name}" is invalid: ${field}: ${message}`, {
    name,
    kind: "PodLogOptions",
    causes: [{ reason: "FieldValueInvalid", message, field }]
  })
}

const validateOptions = (name: string, options: PodLogOptions): void => {
  if (options.tailLines !== undefined && options.tailLines < 0) {
    throw invalid(name, "tailLines", options.tailLines, "must be greater than or equal to 0")
  }
  if (options.limitBytes !== undefined && options.limitBytes < 1) {
    throw invalid(name, "limitBytes", options.limitBytes, "must be greater than 0")
  }
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined) {
    const message = "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
    throw ApiError.make(422, "Invalid", `PodLogOptions "${name}" is invalid: ${message}`, {
      name,
      kind: "PodLogOptions",
      causes: [{ reason: "FieldValueForbidden", message, field: "" }]
    })
  }
  if (options.sinceSeconds !== undefined && options.sinceSeconds < 1) {
    throw invalid(name, "sinceSeconds", options.sinceSeconds, "must be greater than 0")
  }
}

const names = (list: unknown): Array<string> =>
  Array.isArray(list) ? list.filter(isObject).map((c) => String(c.name)) : []

/** The container a log request reads, as kube-apiserver picks and checks it (400 BadRequest otherwise). */
const containerOf = (pod: Obj, requested: string | undefined): string => {
  const spec = isObject(pod.spec) ? pod.spec : {}
  const all = [...names(spec.initContainers), ...names(spec.containers), ...names(spec.ephemeralContainers)]
  const name = pod.metadata.name as string
  if (requested === undefined || requested === "") {
    const containers = names(spec.containers)
    if (containers.length === 1) return containers[0]!
    if (containers.length === 0) {
      throw ApiError.make(400, "BadRequest", `a container name must be specified for pod ${name}`)
    }
    throw ApiError.make(
      400,
      "BadRequest",
      `a container name must be specified for pod ${name}, choose one of: [${all.join(" ")}]`
    )
  }
  if (!all.includes(requested)) {
    throw ApiError.make(400, "BadRequest", `container ${requested} is not valid for pod ${name}`)
  }
  return requested
}

/** What a log read resolved: the pod's container and the text to send now. */
export interface PodLogRead {
  readonly namespace: string
  readonly pod: string
  readonly container: string
  readonly text: string
  /** The stored log read (for a follower). */
  readonly log: ContainerLog
}

const render = (lines: ReadonlyArray<Line>, timestamps: boolean): string =>
  lines.map((l) => (timestamps ? `${new Date(l.at).toISOString().replace(/\.(\d+)Z$/, ".$1000000Z")} ` : "") + l.text)
    .join("")

/** Reads a pod's container log (GET `pods/<name>/log`). */
export const readPodLog = (
  core: Core,
  rt: ResourceType,
  namespace: string,
  name: string,
  options: PodLogOptions
): PodLogRead => {
  const pod = core.get(rt, namespace, name) as Obj
  validateOptions(name, options)
  const container = containerOf(pod, options.container)
  const log = entry(core, pod, container)
  let lines: ReadonlyArray<Line>
  if (options.previous === true) {
    if (log.previous === undefined) {
      throw ApiError.make(
        400,
        "BadRequest",
        `previous terminated container "${container}" in pod "${name}" not found`
      )
    }
    lines = log.previous
  } else {
    lines = log.current
  }
  const since = options.sinceSeconds !== undefined
    ? core.now() - options.sinceSeconds * 1000
    : options.sinceTime !== undefined
    ? Date.parse(options.sinceTime)
    : undefined
  if (since !== undefined && !Number.isNaN(since)) lines = lines.filter((l) => l.at >= since)
  if (options.tailLines !== undefined) lines = options.tailLines === 0 ? [] : lines.slice(-options.tailLines)
  let text = render(lines, options.timestamps === true)
  if (options.limitBytes !== undefined) {
    text = Buffer.from(text, "utf8").subarray(0, options.limitBytes).toString("utf8")
  }
  return { namespace, pod: name, container, text, log }
}

/**
 * Follows a container's current log: `onText` gets each later write (rendered as the read was), `onEnd` runs when
 * the pod is deleted. Returns the function that stops following.
 */
export const followPodLog = (
  core: Core,
  rt: ResourceType,
  read: PodLogRead,
  timestamps: boolean,
  onText: (text: string) => void,
  onEnd: () => void
): () => void => {
  const log = read.log
  let stopped = false
  const follower = (lines: ReadonlyArray<Line>): void => {
    if (!stopped) onText(render(lines, timestamps))
  }
  log.followers.add(follower)
  const handle = core.watch(
    rt,
    read.namespace,
    { fieldSelector: `metadata.name=${read.pod}`, resourceVersion: core.resourceVersion() },
    (event) => {
      if (event.type === "DELETED" && !stopped) {
        stop()
        onEnd()
      }
    }
  )
  const stop = (): void => {
    if (stopped) return
    stopped = true
    log.followers.delete(follower)
    handle.close()
  }
  return stop
}
