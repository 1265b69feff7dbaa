/**
 * `npm start -- --otlp-endpoint URL`: the webapp operator's main job (a process, on its embedded cluster) sends its
 * traces, metrics and logs to an OTLP/HTTP receiver in this test (node:http on 127.0.0.1, JSON bodies): each
 * reconcile is a span whose children are its API requests, the webhooks it caused are spans, the resource carries
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, and log records carry the trace and span of their reconcile.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { spawn } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { Main } from "../src/index.js"

const root = path.join(import.meta.dirname, "..", "..", "..")

interface Received {
  readonly path: string
  readonly body: any
}

const receiver = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly received: Array<Received>; readonly server: http.Server }>(
    (resume) => {
      const received: Array<Received> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString()) })
          res.writeHead(200, { "content-type": "application/json" })
          res.end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          received,
          server
        })))
    }
  ),
  ({ server }) => Effect.sync(() => (server.closeAllConnections(), server.close()))
)

const attributes = (list: ReadonlyArray<{ key: string; value: Record<string, unknown> }> | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]))

const flat = (received: ReadonlyArray<Received>, signal: string, resources: string, scopes: string, items: string) =>
  received.filter((r) => r.path === `/v1/${signal}`).flatMap((r) =>
    (r.body[resources] as Array<any>).flatMap((resource) =>
      (resource[scopes] as Array<any>).flatMap((scope) =>
        ((scope[items] ?? []) as Array<any>).map((item) => ({
          item,
          resource: attributes(resource.resource.attributes)
        }))
      )
    )
  )

/** Runs the main job until `done` holds for what the receiver got (or 60 s), then stops it with SIGTERM. */
const mainJob = (url: string, done: () => boolean) =>
  Effect.callback<{ readonly code: number | null; readonly output: string }>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/webapp/src/main.ts", "--otlp-endpoint", url], {
      cwd: root,
      env: {
        ...process.env,
        KUBECONFIG: "",
        LOG_LEVEL: "debug",
        OTEL_SERVICE_NAME: "webapp-e2e",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,k8s.pod.name=webapp%2D0",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_METRIC_EXPORT_INTERVAL: "300"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const poll = setInterval(() => {
      if (output.includes("is Ready") && done()) {
        clearInterval(poll)
        child.kill("SIGTERM")
      }
    }, 100)
    const limit = setTimeout(() => child.kill("SIGTERM"), 60_000)
    child.on("exit", (code) => {
      clearInterval(poll)
      clearTimeout(limit)
      resume(Effect.succeed({ code, output }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("npm start -- --otlp-endpoint", () => {
  it.live(
    "the webapp operator's reconciles arrive as traces with their API requests as children; metrics and logs",
    () =>
      Effect.gen(function*() {
        const { received, url } = yield* receiver
        const spans = () => flat(received, "traces", "resourceSpans", "scopeSpans", "spans")
        const logs = () => flat(received, "logs", "resourceLogs", "scopeLogs", "logRecords")
        const metrics = () => flat(received, "metrics", "resourceMetrics", "scopeMetrics", "metrics")
        const reconcileWithChildren = () => {
          const all = spans().map((s) => s.item)
          return all.some((s) => s.name === "reconcile" && all.some((c) => c.parentSpanId === s.spanId))
        }
        const { code, output } = yield* mainJob(
          url,
          () =>
            reconcileWithChildren() &&
            spans().some((s) => String(s.item.name).startsWith("webhook ")) &&
            metrics().some((m) => m.item.name === "controller_runtime_reconcile_total") &&
            logs().some((l) => l.item.traceId !== undefined)
        )
        assert.strictEqual(code, 0, output)

        const all = spans()
        const { resource } = all[0]!
        assert.strictEqual(resource["service.name"], "webapp-e2e")
        assert.strictEqual(resource["deployment.environment"], "test")
        assert.strictEqual(resource["k8s.pod.name"], "webapp-0")

        // a reconcile and its API requests
        const reconciles = all.filter((s) => s.item.name === "reconcile").map((s) => s.item)
        assert.isAbove(reconciles.length, 0, output)
        const withChildren = reconciles.find((r) => all.some((c) => c.item.parentSpanId === r.spanId))!
        const facts = attributes(withChildren.attributes)
        assert.strictEqual(facts.controller, "webapp-controller")
        assert.strictEqual(facts.namespace, "default")
        assert.strictEqual(facts.name, "sample")
        assert.include(["success", "requeueAfter", "error"], facts.outcome)
        assert.isAtLeast(Number(facts.attempt), 1)
        const children = all.map((s) => s.item).filter((c) => c.parentSpanId === withChildren.spanId)
        for (const child of children) {
          assert.strictEqual(child.traceId, withChildren.traceId)
          const a = attributes(child.attributes)
          assert.match(child.name, /^(GET|POST|PUT|PATCH|DELETE) \/apis?\//)
          assert.strictEqual(child.name.split(" ")[0], a["http.request.method"])
          assert.isNumber(a["http.response.status_code"])
          assert.include(["get", "list", "create", "update", "patch", "delete"], a["k8s.verb"])
          assert.isString(a["k8s.resource"])
          assert.match(String(a["url.full"]), /^https:\/\/127\.0\.0\.1:\d+\/apis?\//)
        }
        const names = new Set(children.map((c) => c.name))
        assert.isTrue(
          names.has("PATCH /apis/apps/v1/namespaces/{namespace}/deployments/{name}"), // the Deployment applied
          [...names].join(", ")
        )

        // a webhook call served: a server span (the embedded API server sends no traceparent: a trace of its own;
        // joining one: packages/kube/test/webhookSpans.test.ts)
        const webhook = all.find((s) => String(s.item.name).startsWith("webhook "))!.item
        assert.strictEqual(webhook.kind, 2, "SPAN_KIND_SERVER")
        const review = attributes(webhook.attributes)
        assert.isString(review.webhook, JSON.stringify(webhook))
        assert.strictEqual(review["http.response.status_code"], 200)

        // metrics: what /metrics shows, and the dropped counter at 0
        const metricNames = new Set(metrics().map((m) => m.item.name))
        for (const name of ["controller_runtime_reconcile_total", "workqueue_depth", "rest_client_requests_total"]) {
          assert.isTrue(metricNames.has(name), name)
        }

        // log records: a reconcile's lines carry its trace and span
        const byId = new Map(reconciles.map((r) => [r.spanId, r]))
        const joined = logs().map((l) => l.item).filter((l) => l.spanId !== undefined && byId.has(l.spanId))
        assert.isAbove(joined.length, 0)
        for (const record of joined) assert.strictEqual(record.traceId, byId.get(record.spanId)!.traceId)
      }),
    { timeout: 90_000 }
  )
})

describe("--otlp-endpoint and the OTEL_* environment", () => {
  const parse = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    Effect.exit(Main.parseArgs(argv, env, "npm start --"))
  const telemetry = (exit: Exit.Exit<Main.Args, Main.UsageError>) => {
    assert.isTrue(Exit.isSuccess(exit), String(exit))
    return Exit.isSuccess(exit) ? exit.value.telemetry : undefined
  }
  const refusal = (exit: Exit.Exit<Main.Args, Main.UsageError>) => {
    assert.isTrue(Exit.isFailure(exit))
    const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
    return (error as { readonly error: Main.UsageError }).error.message
  }

  it.effect("no flag and no variable: nothing is exported", () =>
    Effect.gen(function*() {
      assert.isUndefined(telemetry(yield* parse([])))
      assert.isUndefined(telemetry(yield* parse([], { OTEL_SERVICE_NAME: "x" })))
    }))

  it.effect("the flag, the variables, and the flag over the variable", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(telemetry(yield* parse(["--otlp-endpoint", "http://127.0.0.1:4318"])), {
        endpoint: "http://127.0.0.1:4318"
      })
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_SERVICE_NAME: "webapp",
        OTEL_RESOURCE_ATTRIBUTES: "k8s.namespace.name=ops"
      }
      assert.deepStrictEqual(telemetry(yield* parse([], env)), {
        endpoint: "http://collector:4318",
        serviceName: "webapp",
        resourceAttributes: { "k8s.namespace.name": "ops" }
      })
      assert.strictEqual(
        telemetry(yield* parse(["--otlp-endpoint=https://otel.example:4318"], env))?.endpoint,
        "https://otel.example:4318"
      )
    }))

  it.effect("a bad URL or variable is a usage error naming it", () =>
    Effect.gen(function*() {
      assert.match(refusal(yield* parse(["--otlp-endpoint", "127.0.0.1:4318"])), /--otlp-endpoint must be an http/)
      assert.match(
        refusal(yield* parse([], { OTEL_RESOURCE_ATTRIBUTES: "oops" })),
        /OTEL_RESOURCE_ATTRIBUTES.*\(from the environment\)/
      )
    }))
})
