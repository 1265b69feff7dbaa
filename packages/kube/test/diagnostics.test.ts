/**
 * Errors that say what to do, in process (TestKube + TestClock): a CRD not installed, a missing namespace, a
 * forbidden list (RBAC), rejected credentials — each fails the start at once (virtual time far below the cache-sync
 * timeout) with a message holding the fix, and, when it happens later, is logged once and retried quietly until it
 * recovers (logged once again).
 */
import { assert, describe, it } from "@effect/vitest"
import * as LeaderElection from "@reconcile/core/LeaderElection"
import * as Manager from "@reconcile/core/Manager"
import { Faults, TestCluster, TestKube } from "@reconcile/testkit"
import { Arbitrary, Cause, Clock, Effect, Fiber, Layer, Logger, pipe, References, Schema } from "effect"
import type { Duration } from "effect"
import { TestClock } from "effect/testing"
import * as Cache from "../src/Cache.js"
import * as Diagnosis from "../src/Diagnosis.js"
import * as KubeClient from "../src/KubeClient.js"
import * as KubeController from "../src/KubeController.js"
import * as KubeError from "../src/KubeError.js"
import * as KubeStatus from "../src/KubeStatus.js"
import * as LeaseLeaderElection from "../src/LeaseLeaderElection.js"
import * as Resource from "../src/Resource.js"
import { WebApp } from "./support/fixtures.js"

const Env = Layer.mergeAll(Cache.layer(), Faults.layer).pipe(Layer.provideMerge(TestKube.layerWithCluster()))

const settle = TestKube.settle
const advance = (duration: Duration.Input) => Effect.andThen(settle, TestClock.adjust(duration))

const crd = Resource.crdManifest(WebApp)
const crdRef = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name: "webapps.example.com" }
const installCrd = Effect.flatMap(TestCluster.TestCluster, (cluster) => Effect.orDie(cluster.create(crd as never)))
const deleteCrd = Effect.flatMap(TestCluster.TestCluster, (cluster) => Effect.orDie(cluster.delete(crdRef)))

const missingCrd = "the CustomResourceDefinition webapps.example.com (example.com/v1 WebApp) is not installed: " +
  "apply it (reconcile manifests writes it, then kubectl apply --server-side -f config/) or start with --install-crds"

interface Line {
  readonly level: string
  readonly message: string
}

/** Captures every log line (all levels) of the effect and the fibers it forks. */
const capturing = <A, E, R>(lines: Array<Line>, effect: Effect.Effect<A, E, R>) => {
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel, message: Array.isArray(message) ? message.map(String).join(" ") : String(message) })
  })
  return effect.pipe(
    Effect.provide(Logger.layer([logger])),
    Effect.provideService(References.MinimumLogLevel, "All")
  )
}

const count = (lines: ReadonlyArray<Line>, level: string, text: string) =>
  lines.filter((l) => l.level === level && l.message.includes(text)).length

describe("diagnostics at start", () => {
  it.effect("a CRD that is not installed fails the cache sync at once, with the fix", () =>
    Effect.gen(function*() {
      const cache = yield* Cache.Cache
      const started = yield* Clock.currentTimeMillis
      const informer = yield* cache.informer(WebApp)
      const error = yield* Effect.flip(informer.synced)
      assert.strictEqual(error._tag, "NotFound", "the tag stays what the server said")
      assert.strictEqual(error.message, missingCrd)
      assert.isTrue(Diagnosis.isDiagnosed(error))
      assert.strictEqual(Diagnosis.isDiagnosed(error) && error.diagnosis.problem, "ResourceNotInstalled")
      assert.strictEqual((yield* Clock.currentTimeMillis) - started, 0, "no retry, no wait")
      // the cache's reads and waitForSync fail with it too
      assert.strictEqual((yield* Effect.flip(cache.waitForSync)).message, missingCrd)
      assert.strictEqual((yield* Effect.flip(cache.get(WebApp, "web", { namespace: "default" }))).message, missingCrd)
    }).pipe(Effect.provide(Env)))

  it.effect("a controller of a kind whose CRD is not installed stops the Manager at once (no cache-sync timeout)", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const app = KubeController.layer(
        KubeController.make({ name: "webapps", for: WebApp, reconcile: () => Effect.void })
      )
        .pipe(Layer.provideMerge(Manager.layer()), Layer.provide(LeaderElection.layerAlwaysLeader))
      const started = yield* Clock.currentTimeMillis
      let done = false
      const fiber = yield* Manager.launch(app).pipe(
        Effect.ensuring(Effect.sync(() => void (done = true))),
        (launch) => capturing(lines, launch),
        Effect.forkScoped
      )
      yield* advance("1 second")
      assert.isTrue(done, "the Manager stopped within a second of virtual time (the sync timeout is 2 minutes)")
      const exit = yield* Fiber.await(fiber)
      assert.strictEqual(exit._tag, "Failure")
      const error = KubeError.find(exit)
      assert.isDefined(error)
      assert.strictEqual(error!.message, missingCrd)
      // the ManagerError's own message carries the fix too (what a main program prints)
      const managerError = exit._tag === "Failure" ? exit.cause.reasons[0] : undefined
      assert.include(String((managerError as { error?: Error } | undefined)?.error?.message), missingCrd)
      assert.isAtMost((yield* Clock.currentTimeMillis) - started, 1000)
      // reported once: by the failure the main program prints, not by log lines as well
      assert.strictEqual(count(lines, "Error", ""), 0, "no error log line besides the failure")
      assert.strictEqual(count(lines, "Warn", ""), 0, "no warnings per attempt")
    }).pipe(Effect.provide(Env)))

  it.effect("a namespaced cache in a namespace that does not exist: namespace \"x\" does not exist", () =>
    Effect.gen(function*() {
      const cache = yield* Cache.Cache
      const informer = yield* cache.informer(Resource.ConfigMap, { namespace: "nope" })
      const error = yield* Effect.flip(informer.synced)
      assert.strictEqual(error.message, "namespace \"nope\" does not exist: kubectl create namespace nope")
      // an existing namespace starts
      const fine = yield* cache.informer(Resource.ConfigMap, { namespace: "default" })
      yield* fine.synced
    }).pipe(Effect.provide(Env)))

  it.effect("a write into a namespace that does not exist says so", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        KubeClient.create(Resource.ConfigMap, { metadata: { name: "c", namespace: "ghost" }, data: {} })
      )
      assert.strictEqual(error._tag, "NotFound")
      assert.strictEqual(error.message, "namespace \"ghost\" does not exist: kubectl create namespace ghost")
      // a NotFound of an object is not diagnosed
      const plain = yield* Effect.flip(KubeClient.get(Resource.ConfigMap, "absent", { namespace: "default" }))
      assert.isFalse(Diagnosis.isDiagnosed(plain))
      assert.include(plain.message, "NotFound")
    }).pipe(Effect.provide(Env)))

  it.effect("a forbidden list names the account, verb, resource, group, scope and the rule to grant", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      yield* faults.failRequests({ code: 403, verbs: ["list"], resources: ["webapps.example.com"] })
      yield* installCrd
      const cache = yield* Cache.Cache
      const started = yield* Clock.currentTimeMillis
      const error = yield* Effect.flip((yield* cache.informer(WebApp, { namespace: "default" })).synced)
      assert.strictEqual(error._tag, "Forbidden")
      assert.strictEqual(
        error.message,
        "the service account default/reconcile (system:serviceaccount:default:reconcile) may not list " +
          "webapps.example.com in the namespace \"default\" (403 Forbidden): grant it with a Role in \"default\" " +
          "with a RoleBinding (or a ClusterRole) holding the rule {apiGroups: [example.com], resources: [webapps], " +
          "verbs: [list]}; reconcile manifests generates the operator's RBAC from its controllers"
      )
      assert.deepStrictEqual(Diagnosis.isDiagnosed(error) ? error.diagnosis.rule : undefined, {
        apiGroups: ["example.com"],
        resources: ["webapps"],
        verbs: ["list"]
      })
      assert.strictEqual((yield* Clock.currentTimeMillis) - started, 0)
    }).pipe(Effect.provide(Env)))

  it.effect("rejected credentials (401): the token may have expired", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      yield* faults.failRequests({ code: 401, message: "Unauthorized" })
      const cache = yield* Cache.Cache
      const error = yield* Effect.flip((yield* cache.informer(Resource.ConfigMap)).synced)
      assert.strictEqual(error._tag, "Unauthorized")
      assert.strictEqual(
        error.message,
        "the API server rejected the credentials (401 Unauthorized): the token may have expired; refresh it " +
          "(log in again, or get a new kubeconfig)"
      )
    }).pipe(Effect.provide(Env)))

  it.effect("a leader-election namespace that does not exist stops the Manager at once, with the fix", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const app = KubeController.layer(
        KubeController.make({ name: "configs", for: Resource.ConfigMap, reconcile: () => Effect.void })
      ).pipe(
        Layer.provideMerge(Manager.layer()),
        Layer.provide(LeaseLeaderElection.layer({ name: "operator", namespace: "operator-system" }))
      )
      let done = false
      const fiber = yield* Manager.launch(app).pipe(
        Effect.ensuring(Effect.sync(() => void (done = true))),
        (launch) => capturing(lines, launch),
        Effect.forkScoped
      )
      yield* advance("1 second")
      assert.isTrue(done, "no retry loop waiting for a lease that cannot be created")
      const exit = yield* Fiber.await(fiber)
      const failure = exit._tag === "Failure" ? exit.cause.reasons[0] : undefined
      const message = String((failure as { error?: Error } | undefined)?.error?.message)
      assert.include(
        message,
        "cannot acquire the lease operator-system/operator: namespace \"operator-system\" does not exist: " +
          "kubectl create namespace operator-system"
      )
      assert.strictEqual(count(lines, "Error", ""), 0, "reported once: by the failure alone")
      assert.strictEqual(count(lines, "Debug", "does not exist"), 1)
    }).pipe(Effect.provide(Env)))

  it.effect("Informer.Options.failAtStart: false keeps retrying until the CRD appears", () =>
    Effect.gen(function*() {
      const client = yield* KubeClient.KubeClient
      const lines: Array<Line> = []
      yield* Effect.gen(function*() {
        const cache = yield* Cache.make((r, s) => Cache.listWatch(client, r, s), { informer: { failAtStart: false } })
        const informer = yield* cache.informer(WebApp)
        yield* advance("10 seconds")
        assert.isFalse(yield* informer.hasSynced)
        yield* installCrd
        yield* advance("1 minute")
        assert.isTrue(yield* informer.hasSynced)
      }).pipe((e) => capturing(lines, e))
      assert.strictEqual(count(lines, "Error", "is not installed"), 1, "logged once while it retried")
    }).pipe(Effect.scoped, Effect.provide(Env)))
})

describe("diagnostics later", () => {
  it.effect(
    "a CRD deleted under a running informer: logged once at error with the fix, retried quietly, " +
      "logged once again when it recovers",
    () =>
      Effect.gen(function*() {
        yield* installCrd
        const lines: Array<Line> = []
        yield* Effect.gen(function*() {
          const cache = yield* Cache.Cache
          const informer = yield* cache.informer(WebApp)
          yield* informer.synced
          yield* deleteCrd
          // several backoffs (800 ms doubling to 30 s): many failed relists
          for (let i = 0; i < 20; i++) yield* advance("15 seconds")
          assert.strictEqual(count(lines, "Error", missingCrd), 1, "one error line with the fix")
          assert.isAtLeast(count(lines, "Debug", "watcher error; retrying"), 3, "the retries are quiet (debug)")
          assert.strictEqual(count(lines, "Warn", ""), 0, "no warning per attempt")
          yield* installCrd
          yield* advance("1 minute")
          assert.strictEqual(count(lines, "Info", "watch connected again"), 1)
          // a second outage is reported again
          yield* deleteCrd
          for (let i = 0; i < 4; i++) yield* advance("15 seconds")
          assert.strictEqual(count(lines, "Error", missingCrd), 2)
        }).pipe((e) => capturing(lines, e))
      }).pipe(Effect.provide(Env))
  )

  it.effect("forbidden after the start: logged once per (verb, resource), retried quietly until allowed", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.Faults
      const lines: Array<Line> = []
      yield* Effect.gen(function*() {
        const cache = yield* Cache.Cache
        const informer = yield* cache.informer(Resource.ConfigMap, { namespace: "default" })
        yield* informer.synced
        const rule = yield* faults.failRequests({ code: 403, verbs: ["list", "watch"], resources: ["configmaps"] })
        yield* faults.dropWatches
        for (let i = 0; i < 20; i++) yield* advance("15 seconds")
        const forbidden = lines.filter((l) => l.level === "Error" && l.message.includes("(403 Forbidden)"))
        assert.deepStrictEqual(
          forbidden.map((l) => /verbs: \[(\w+)\]/.exec(l.message)?.[1]).sort(),
          ["list", "watch"],
          "one line per (verb, resource) over 5 minutes of retries"
        )
        yield* faults.removeRule(rule)
        yield* advance("1 minute")
        assert.strictEqual(count(lines, "Info", "watch connected again"), 1)
        yield* KubeClient.create(Resource.ConfigMap, { metadata: { name: "after", namespace: "default" }, data: {} })
        yield* advance("1 second")
        assert.isDefined(informer.store.get("after", "default"), "the informer works again")
      }).pipe((e) => capturing(lines, e))
    }).pipe(Effect.provide(Env)))
})

describe("Diagnosis.diagnose", () => {
  it("reads the request path: a built-in kind the server does not serve is no CRD", () => {
    const e = KubeStatus.toError(
      { code: 404, reason: "NotFound", message: "the server could not find the requested resource" },
      { request: { method: "GET", path: "/apis/batch/v2/namespaces/a/cronjobs?limit=500" } }
    )
    assert.strictEqual(e.message.split(":")[0], "the API server does not serve batch/v2 cronjobs (cronjobs.batch)")
  })

  it("adds what the client knows: server, context and kind", () => {
    const e = KubeStatus.toError({ code: 401, reason: "Unauthorized", message: "Unauthorized" }, {
      request: { method: "GET", path: "/api/v1/configmaps" }
    })
    const withServer = Diagnosis.attach(e, { server: "https://10.0.0.1:6443", context: "prod" })
    assert.strictEqual(
      withServer.message,
      "the API server at https://10.0.0.1:6443 (kubeconfig context \"prod\") rejected the credentials (401 " +
        "Unauthorized): the token may have expired; refresh it (log in again, or get a new kubeconfig)"
    )
    assert.strictEqual(withServer._tag, "Unauthorized")
    assert.isTrue(KubeError.isKubeError(withServer))
  })

  it("a forbidden at the cluster scope asks for a ClusterRole", () => {
    const e = KubeStatus.toError({
      code: 403,
      reason: "Forbidden",
      message:
        "nodes is forbidden: User \"jane\" cannot watch resource \"nodes\" in API group \"\" at the cluster scope"
    }, { request: { method: "GET", path: "/api/v1/nodes" } })
    assert.include(e.message, "the user \"jane\" may not watch nodes at the cluster scope")
    assert.include(e.message, "a ClusterRole bound with a ClusterRoleBinding")
    assert.include(e.message, "{apiGroups: [\"\"], resources: [nodes], verbs: [watch]}")
  })

  it("an unreachable server: the cause in words, found along the cause chain (undici wraps Node's errors)", () => {
    const unreachable = (cause: unknown) =>
      Diagnosis.attach(
        new KubeError.Transport({ reason: "Request", request: { method: "GET", path: "/api/v1/pods" }, cause }),
        { server: "https://api.example.com:6443", context: "prod" }
      ).message
    const wrapped = (code: string) => new Error("fetch failed", { cause: Object.assign(new Error(code), { code }) })
    const head = "cannot reach the API server at https://api.example.com:6443 (kubeconfig context \"prod\"): "
    assert.strictEqual(
      unreachable(wrapped("ENOTFOUND")),
      `${head}the host name api.example.com does not resolve (DNS, ENOTFOUND): check the server address in the ` +
        "kubeconfig, or the network (VPN)"
    )
    assert.strictEqual(
      unreachable(wrapped("UND_ERR_CONNECT_TIMEOUT")),
      `${head}no connection (UND_ERR_CONNECT_TIMEOUT: timeout or unreachable network): check the network, a VPN or ` +
        "a firewall"
    )
    assert.include(unreachable(wrapped("CERT_HAS_EXPIRED")), "the server's certificate has expired")
    assert.include(
      unreachable(wrapped("ERR_TLS_CERT_ALTNAME_INVALID")),
      "the server's certificate is not valid for api.example.com"
    )
    assert.include(unreachable(wrapped("SELF_SIGNED_CERT_IN_CHAIN")), "certificate signed by unknown authority")
    // the client's own timeout (no answer at all) is unreachable too; a server's 504 is not
    const noAnswer = Diagnosis.attach(
      new KubeError.Timeout({ status: { reason: "Timeout", code: 0, message: "no answer within 30s" } }),
      { server: "https://api.example.com:6443" }
    )
    assert.include(noAnswer.message, "cannot reach the API server at https://api.example.com:6443")
    assert.isFalse(Diagnosis.isDiagnosed(KubeStatus.toError({ code: 504, reason: "Timeout", message: "slow" })))
  })

  it("attach is data-first and pipeable; isDiagnosed wants a KubeError", () => {
    const e = KubeStatus.toError({ code: 401, reason: "Unauthorized", message: "Unauthorized" })
    const context = { server: "https://10.0.0.1:6443" }
    assert.strictEqual(pipe(e, Diagnosis.attach(context)).message, Diagnosis.attach(e, context).message)
    assert.include(Diagnosis.attach(e, context).message, "https://10.0.0.1:6443")
    assert.isFalse(Diagnosis.isDiagnosed({ diagnosis: Diagnosis.diagnose(e) }))
  })

  it("a 403 that is not RBAC (a terminating namespace) is not diagnosed", () => {
    const e = KubeStatus.toError({
      code: 403,
      reason: "Forbidden",
      message: "configmaps \"x\" is forbidden: unable to create new content in namespace a because it is being " +
        "terminated"
    }, { request: { method: "POST", path: "/api/v1/namespaces/a/configmaps" } })
    assert.isFalse(Diagnosis.isDiagnosed(e))
  })
})

// effect 4.1 bundles no FastCheck: generators as Schemas, drawn by effect/Arbitrary (what it.prop runs)
const Denial = Schema.Struct({
  group: Schema.Literals(["", "apps", "example.com", "coordination.k8s.io", "events.k8s.io"]),
  plural: Schema.Literals(["configmaps", "webapps", "leases", "deployments", "events"]),
  subresource: Schema.optional(Schema.Literals(["status", "finalizers"])),
  verb: Schema.Literals(["get", "list", "watch", "create", "update", "patch", "delete"]),
  namespace: Schema.optional(Schema.Literals(["default", "team-a", "operator-system"])),
  user: Schema.Literals(["system:serviceaccount:ops:greeter", "jane@example.com", "system:anonymous"])
})
const Token = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{16,48}$/))

describe("diagnoses (properties)", () => {
  it.prop(
    "an RBAC denial is diagnosed with exactly the rule it names, in its scope",
    [Arbitrary.schema(Denial)],
    ([d]) => {
      const resource = d.subresource === undefined ? d.plural : `${d.plural}/${d.subresource}`
      const scope = d.namespace === undefined ? "at the cluster scope" : `in the namespace "${d.namespace}"`
      const prefix = d.group === "" ? "/api/v1" : `/apis/${d.group}/v1`
      const path = `${prefix}${d.namespace === undefined ? "" : `/namespaces/${d.namespace}`}/${d.plural}`
      const e = KubeStatus.toError({
        code: 403,
        reason: "Forbidden",
        message: `${d.plural} is forbidden: User "${d.user}" cannot ${d.verb} resource "${resource}" in API group ` +
          `"${d.group}" ${scope}`
      }, { request: { method: "GET", path } })
      assert.isTrue(Diagnosis.isDiagnosed(e))
      const diagnosis = Diagnosis.diagnose(e)!
      assert.deepStrictEqual(diagnosis.rule, { apiGroups: [d.group], resources: [resource], verbs: [d.verb] })
      assert.include(e.message, scope)
      assert.include(e.message, d.namespace === undefined ? "ClusterRole bound" : `a Role in "${d.namespace}"`)
      assert.include(e.message, "reconcile manifests")
    }
  )

  it.prop(
    "no token that a Status or a cause quotes reaches a diagnosed message",
    [Arbitrary.schema(Token)],
    ([token]) => {
      const request = { method: "GET", path: "/api/v1/configmaps" }
      const unauthorized = Diagnosis.attach(
        KubeStatus.toError({ code: 401, reason: "Unauthorized", message: `token ${token} expired` }, { request }),
        { server: "https://127.0.0.1:6443" }
      )
      const transport = Diagnosis.attach(
        new KubeError.Transport({
          reason: "Request",
          request,
          cause: new Error(`request failed: Authorization: Bearer ${token}`)
        }),
        { server: "https://127.0.0.1:6443" }
      )
      const credentials = Diagnosis.attach(
        new KubeError.Transport({ reason: "Credentials", request, cause: new Error(`exec: "token": "${token}"`) }),
        {}
      )
      for (const e of [unauthorized, transport, credentials]) {
        assert.isTrue(Diagnosis.isDiagnosed(e))
        assert.notInclude(e.message, token)
      }
    }
  )

  it("KubeError.find digs the diagnosed error out of wrappers and Causes", () => {
    const diagnosed = KubeStatus.toError({ code: 401, reason: "Unauthorized" }, {
      request: { method: "GET", path: "/api/v1/pods" }
    })
    const plain = KubeStatus.toError({ code: 500, message: "boom" })
    const wrapped = { _tag: "ManagerError", cause: { _tag: "SourceFailed", cause: diagnosed } }
    assert.strictEqual(KubeError.find(wrapped), diagnosed)
    assert.strictEqual(KubeError.find(Cause.fail(plain)), plain)
    assert.strictEqual(KubeError.find(Cause.die(wrapped)), diagnosed)
    assert.strictEqual(KubeError.find({ cause: [plain] }), undefined, "arrays are not causes")
    assert.strictEqual(KubeError.find("nothing"), undefined)
  })
})
