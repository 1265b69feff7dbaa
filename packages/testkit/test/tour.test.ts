/**
 * The acceptance tour of issue 12: what a new user types, with clients nobody here wrote — kubectl 1.32, the
 * official Python client (skipped when python3-kubernetes is absent) and a client-go program
 * (kubernetes-mcp-server, over MCP on stdio; skipped when its binary is absent) — against two clusters:
 *
 * - `npm run apiserver` (the testkit's bin, `reconcile-apiserver`, as a child process), and
 * - the embedded cluster of `npm start` (examples/webapp main as a child process on this Node; its kubeconfig is
 *   the path it prints once the sample WebApp is Ready, so the cluster, the CRD and the operator are up).
 *
 * Each item is one test; items that build on a Deployment, a ConfigMap or the WebApp CRD create what they need
 * with `kubectl apply` (JSON bodies) when an earlier item did not, so one failing item does not fail the others.
 * kubectl never sees the user's ~/.kube: it gets --kubeconfig, --cache-dir and a HOME in a temporary directory.
 */
import { assert, describe, layer, type Vitest } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Kubectl from "./support/kubectl.js"

const root = Path.join(import.meta.dirname, "..", "..", "..")
const MCP = Path.join(
  root,
  "node_modules/kubernetes-mcp-server-linux-amd64/bin/kubernetes-mcp-server-linux-amd64"
)
const crdFile = Path.join(root, "examples/webapp/config/crd.yaml")
/** `RECONCILE_TEST_CLUSTER=real` (`npm run test:envtest`): both targets run with `--real`, on real control planes. */
const real = process.env.RECONCILE_TEST_CLUSTER === "real"

/** A python3 that has the `kubernetes` package (PATH's first, then Debian's), or undefined. */
const python = ["python3", "/usr/bin/python3"].find((bin) =>
  spawnSync(bin, ["-c", "import kubernetes"], { stdio: "ignore" }).status === 0
)

// -----------------------------------------------------------------------------
// targets
// -----------------------------------------------------------------------------

interface TargetService {
  readonly kubeconfig: string
  /** `npm start`'s cluster: the sample WebApp and its events are there. */
  readonly mainJob: boolean
  /** A HOME (and kubectl cache) of its own. */
  readonly home: string
  /** What `ensure` made or found (the tour never deletes it). */
  readonly ensured: Set<string>
}

class Target extends Context.Service<Target, TargetService>()("tour/Target") {}

/**
 * A program as a child process on this Node (the way a user runs it), ready once its output names the kubeconfig
 * (`ready` captures the path); killed when the layer closes.
 */
const childTarget = (name: string, args: ReadonlyArray<string>, ready: RegExp, mainJob: boolean) =>
  Layer.effect(
    Target,
    Effect.acquireRelease(
      Effect.callback<{ readonly child: ChildProcess; readonly kubeconfig: string }, Error>((resume) => {
        const child = spawn(process.execPath, ["--import", "tsx", ...args], {
          cwd: root,
          env: { ...process.env, KUBECONFIG: "" },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let out = ""
        const timer = setTimeout(() => resume(Effect.fail(new Error(`${name} not ready in 45 s:\n${out}`))), 45_000)
        const onData = (chunk: Buffer) => {
          out += chunk.toString()
          const match = ready.exec(out)
          if (match !== null) {
            clearTimeout(timer)
            resume(Effect.succeed({ child, kubeconfig: match[1]! }))
          }
        }
        child.stdout!.on("data", onData)
        child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()))
        child.on("exit", (code) => {
          clearTimeout(timer)
          resume(Effect.fail(new Error(`${name} exited with ${code}:\n${out}`)))
        })
      }),
      ({ child }) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve()
            child.on("exit", () => resolve())
            child.kill("SIGKILL")
          })
        )
    ).pipe(Effect.map(({ kubeconfig }) => ({
      kubeconfig,
      mainJob,
      home: Fs.mkdtempSync(Path.join(Os.tmpdir(), "tour-home-")),
      ensured: new Set<string>()
    })))
  )

/** `npm run apiserver` (the testkit's bin, `reconcile-apiserver`) as a child process. */
const apiserverBin = childTarget(
  "npm run apiserver",
  [
    "packages/testkit/src/bin/apiserver.ts",
    ...(real ? ["--real"] : ["--port", "0"]),
    "--kubeconfig",
    Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tour-apiserver-")), "kubeconfig")
  ],
  /kubeconfig: (\S+)/,
  false
)

/** `npm start` (examples/webapp main, embedded mode): ready once its "Try it" text prints `KUBECONFIG=… kubectl`. */
const mainJob = childTarget(
  "npm start",
  ["examples/webapp/src/main.ts", ...(real ? ["--real"] : [])],
  /KUBECONFIG=(\S+) kubectl/,
  true
)

// -----------------------------------------------------------------------------
// clients
// -----------------------------------------------------------------------------

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly stdin?: string; readonly env?: Record<string, string>; readonly timeout?: number }
) =>
  Effect.promise(() =>
    new Promise<Run>((resolve) => {
      const child = execFile(
        file,
        args,
        { env: options.env, timeout: options.timeout ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : (typeof error.code === "number" ? error.code : 1), stdout, stderr })
      )
      child.stdin?.end(options.stdin ?? "")
    })
  )

/** kubectl against the target, with the target's HOME; never the user's ~/.kube. */
const kubectlOf = (t: TargetService) => Kubectl.make({ home: t.home, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 })

const kubectl = (args: ReadonlyArray<string>, stdin?: string) =>
  Effect.gen(function*() {
    const t = yield* Target
    return yield* kubectlOf(t).run(t.kubeconfig, args, stdin)
  })

/** kubectl that must succeed: its stdout. */
const ok = (args: ReadonlyArray<string>, stdin?: string) =>
  Effect.gen(function*() {
    const t = yield* Target
    return yield* kubectlOf(t).ok(t.kubeconfig, args, stdin)
  })

const getJson = (args: ReadonlyArray<string>): Effect.Effect<any, never, Target> =>
  Effect.map(ok(["get", ...args, "-o", "json"]), (s) => JSON.parse(s))

/** Polls (real time) until `check` holds; the last failure is the test's. */
const eventually = <A, R>(check: Effect.Effect<A, never, R>, seconds = 20): Effect.Effect<A, never, R> =>
  Effect.suspend(() => {
    const deadline = Date.now() + seconds * 1000
    const loop: Effect.Effect<A, never, R> = Effect.catchCause(
      check,
      (cause) => Date.now() > deadline ? Effect.failCause(cause) : Effect.andThen(Effect.sleep("200 millis"), loop)
    )
    return loop
  })

const NS = "tour"

const namespaceYaml = `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${NS}}\n`
const configMapYaml = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ${NS}}\ndata: {a: "1"}\n`
const deploymentYaml = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${NS}, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
`
const serviceYaml = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${NS}}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080, protocol: TCP}]
`

/** Creates an object with `kubectl apply` (JSON on the wire) unless it exists. */
const ensure = (kind: string, name: string, yaml: string) =>
  Effect.gen(function*() {
    const t = yield* Target
    if (t.ensured.has(`${kind}/${name}`)) return
    yield* ensureNamespace
    const exists = yield* kubectl(["get", kind, name, "-n", NS])
    if (exists.code !== 0) yield* ok(["apply", "-f", "-"], yaml)
    t.ensured.add(`${kind}/${name}`)
  })

/** The tour's namespace, made with `kubectl apply` (JSON on the wire) once per target. */
const ensureNamespace = Effect.gen(function*() {
  const t = yield* Target
  if (t.ensured.has("namespace")) return
  yield* ok(["apply", "-f", "-"], namespaceYaml)
  t.ensured.add("namespace")
})

const ensureDeployment = ensure("deployment", "web", deploymentYaml)
const ensureConfigMap = ensure("configmap", "cfg", configMapYaml)
const ensureService = ensure("service", "web", serviceYaml)
const ensureCrd = Effect.gen(function*() {
  const t = yield* Target
  if (!t.mainJob) yield* ok(["apply", "-f", crdFile])
  yield* eventually(ok(["get", "crd", "webapps.apps.reconcile.dev"]))
})

const rolledOut = Effect.map(
  ok(["rollout", "status", "deployment/web", "-n", NS, "--timeout=30s"]),
  (out) => assert.include(out, `deployment "web" successfully rolled out`)
)

/** The name of a Running pod of `web`. */
const aPod = Effect.gen(function*() {
  yield* ensureDeployment
  yield* rolledOut
  const pods = yield* getJson(["pods", "-n", NS, "-l", "app=web"])
  const running = pods.items.find((p: any) => p.status?.phase === "Running")
  assert.isDefined(running, "a Running pod of web")
  return running.metadata.name as string
})

// -----------------------------------------------------------------------------
// the tour
// -----------------------------------------------------------------------------

/** Every item gets a minute: rollouts wait for pods to become Ready. */
const ITEM = 60_000

const tour = (it: Vitest.MethodsNonLive<Target>) => {
  it.effect("kubectl create ns (protobuf body)", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* ok(["create", "ns", "demo"]), "namespace/demo created\n")
      assert.strictEqual(yield* ok(["get", "ns", "demo", "-o", "jsonpath={.status.phase}"]), "Active")
    }), ITEM)

  it.effect("kubectl create configmap|secret (protobuf bodies)", () =>
    Effect.gen(function*() {
      yield* ensureNamespace
      assert.strictEqual(
        yield* ok(["create", "configmap", "made", "-n", NS, "--from-literal=a=1"]),
        "configmap/made created\n"
      )
      assert.deepStrictEqual((yield* getJson(["configmap", "made", "-n", NS])).data, { a: "1" })
      assert.strictEqual(
        yield* ok(["create", "secret", "generic", "sec", "-n", NS, "--from-literal=password=hunter2"]),
        "secret/sec created\n"
      )
      const secret = yield* getJson(["secret", "sec", "-n", NS])
      assert.deepStrictEqual(secret.data, { password: "aHVudGVyMg==" })
      assert.strictEqual(secret.type, "Opaque")
    }), ITEM)

  it.effect("kubectl create deployment; defaults as the real defaulting", () =>
    Effect.gen(function*() {
      yield* ensureNamespace
      assert.strictEqual(
        yield* ok(["create", "deployment", "made", "-n", NS, "--image=nginx:1.27", "--replicas=2"]),
        "deployment.apps/made created\n"
      )
      const d = yield* getJson(["deployment", "made", "-n", NS])
      assert.strictEqual(d.spec.replicas, 2)
      assert.deepStrictEqual(d.spec.strategy, {
        type: "RollingUpdate",
        rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" }
      })
      assert.strictEqual(d.spec.revisionHistoryLimit, 10)
      assert.strictEqual(d.spec.progressDeadlineSeconds, 600)
      const container = d.spec.template.spec.containers[0]
      assert.include(container, { name: "nginx", image: "nginx:1.27", imagePullPolicy: "IfNotPresent" })
      assert.strictEqual(d.spec.template.spec.restartPolicy, "Always")
      assert.strictEqual(yield* ok(["delete", "deployment", "made", "-n", NS]), "deployment.apps \"made\" deleted\n")
    }), ITEM)

  it.effect("kubectl auth can-i (access reviews: no RBAC, everything allowed)", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* ok(["auth", "can-i", "create", "deployments", "-n", NS]), "yes\n")
      assert.strictEqual(yield* ok(["auth", "can-i", "delete", "nodes"]), "yes\n")
      const list = yield* ok(["auth", "can-i", "--list", "-n", NS])
      assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/)
      assert.match(list, /\n\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/)
      assert.match(list, /\n\s+\[\*\]\s+\[\]\s+\[\*\]/)
    }), ITEM)

  it.effect(
    "kubectl rollout status; get deployments and pods (controller manager, tables)",
    () =>
      Effect.gen(function*() {
        yield* ensureDeployment
        yield* rolledOut
        const deployments = yield* ok(["get", "deployments", "-n", NS])
        assert.match(deployments, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\n/)
        assert.match(deployments, /\nweb\s+2\/2\s+2\s+2\s+\S+\n/)
        const wide = yield* ok(["get", "deployments", "web", "-n", NS, "-o", "wide"])
        assert.match(wide, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\n/)
        assert.match(wide, /\nweb\s+2\/2\s+2\s+2\s+\S+\s+nginx\s+nginx:1\.27\s+app=web\n/)
        const pods = yield* ok(["get", "pods", "-n", NS, "-l", "app=web"])
        assert.match(pods, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/)
        assert.strictEqual(pods.match(/\nweb-[a-z0-9]+-[a-z0-9]{5}\s+1\/1\s+Running\s+0\s+\S+/g)?.length, 2, pods)
        const podsWide = yield* ok(["get", "pods", "-n", NS, "-l", "app=web", "-o", "wide"])
        assert.match(podsWide, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/)
        assert.match(podsWide, /\s+testkit-node\s+<none>\s+<none>/)
        const rs = yield* ok(["get", "replicasets", "-n", NS, "-l", "app=web"])
        assert.match(rs, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\n/)
        assert.match(rs, /\nweb-[a-z0-9]+\s+2\s+2\s+2\s+\S+/)
        const running = yield* ok(["get", "pods", "-n", NS, "--field-selector", "status.phase=Running", "-o", "name"])
        assert.strictEqual(running.split("\n").filter((l) => l.startsWith("pod/web-")).length, 2)
      }),
    ITEM
  )

  it.effect("kubectl scale (/scale subresource)", () =>
    Effect.gen(function*() {
      yield* ensureDeployment
      assert.strictEqual(
        yield* ok(["scale", "deployment", "web", "-n", NS, "--replicas=3"]),
        "deployment.apps/web scaled\n"
      )
      yield* rolledOut
      yield* eventually(Effect.map(
        getJson(["deployment", "web", "-n", NS]),
        (d) => assert.include(d.status, { replicas: 3, readyReplicas: 3, availableReplicas: 3 })
      ))
      assert.strictEqual(
        yield* ok(["scale", "deployment", "web", "-n", NS, "--replicas=2"]),
        "deployment.apps/web scaled\n"
      )
      yield* rolledOut
    }), ITEM)

  // embedded only: on the real control plane no kubelet serves containers' logs (the stand-in runs none)
  it.effect.skipIf(real)(
    "kubectl logs (pods/log: empty by default; an unknown container is a 400)",
    () =>
      Effect.gen(function*() {
        const pod = yield* aPod
        assert.strictEqual(yield* ok(["logs", pod, "-n", NS]), "")
        assert.strictEqual(yield* ok(["logs", "deployment/web", "-n", NS]), "")
        const bad = yield* kubectl(["logs", pod, "-n", NS, "-c", "nope"])
        assert.notStrictEqual(bad.code, 0)
        assert.include(bad.stderr, `container nope is not valid for pod ${pod}`)
      }),
    ITEM
  )

  it.effect(
    "kubectl describe shows Events (written through events.k8s.io/v1, read through core/v1)",
    () =>
      Effect.gen(function*() {
        const t = yield* Target
        yield* ensureConfigMap
        const uid = yield* ok(["get", "configmap", "cfg", "-n", NS, "-o", "jsonpath={.metadata.uid}"])
        const now = new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")
        const event = {
          apiVersion: "events.k8s.io/v1",
          kind: "Event",
          metadata: { name: "cfg.tour", namespace: NS },
          eventTime: now,
          reportingController: "tour-controller",
          reportingInstance: "tour-controller-1",
          action: "Check",
          reason: "Tested",
          type: "Normal",
          note: "hello from the tour",
          regarding: { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "cfg", uid }
        }
        const exists = yield* kubectl(["get", "events.events.k8s.io", "cfg.tour", "-n", NS])
        if (exists.code !== 0) yield* ok(["create", "-f", "-"], JSON.stringify(event))
        const core = yield* getJson(["events", "cfg.tour", "-n", NS])
        assert.deepStrictEqual(core.involvedObject, event.regarding)
        assert.strictEqual(core.message, "hello from the tour")
        assert.strictEqual(core.reportingComponent, "tour-controller")
        const described = yield* ok(["describe", "configmap", "cfg", "-n", NS])
        assert.match(described, /\nEvents:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/)
        assert.match(described, /\n\s+Normal\s+Tested\s+\S+\s+tour-controller\s+hello from the tour\n/)
        if (t.mainJob) {
          // recorded by our EventRecorder (packages/kube) in the WebApp operator
          const app = yield* ok(["describe", "webapp", "sample", "-n", "default"])
          assert.match(app, /\n\s+Normal\s+Ready\s+\S+\s+\S+\s+2\/2 replicas of nginx:1\.27 ready\n/)
        }
      }),
    ITEM
  )

  it.effect("kubectl events --for; kubectl get events (tables, field selectors)", () =>
    Effect.gen(function*() {
      const t = yield* Target
      const events = yield* eventually(Effect.map(ok(["events", "--for", "configmap/cfg", "-n", NS]), (out) => {
        assert.match(out, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/)
        return out
      }))
      assert.match(events, /\n\S+\s+Normal\s+Tested\s+ConfigMap\/cfg\s+hello from the tour\n/)
      const table = yield* ok(["get", "events", "-n", NS, "--field-selector", "involvedObject.kind=ConfigMap"])
      assert.match(table, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/)
      assert.match(table, /\n\S+\s+Normal\s+Tested\s+configmap\/cfg\s+hello from the tour\n/)
      const none = yield* kubectl(["get", "events", "-n", NS, "--field-selector", "reason=Nothing"])
      assert.strictEqual(none.code, 0)
      assert.include(none.stderr, `No resources found in ${NS} namespace.`)
      if (t.mainJob) {
        const app = yield* ok(["events", "--for", "webapp/sample", "-n", "default"])
        assert.match(app, /\n\S+\s+Normal\s+Ready\s+WebApp\/sample\s+2\/2 replicas of nginx:1\.27 ready\n/)
      }
    }), ITEM)

  it.effect("kubectl diff (server-side dry run: nothing stored)", () =>
    Effect.gen(function*() {
      yield* ensureConfigMap
      const rv = yield* ok(["get", "configmap", "cfg", "-n", NS, "-o", "jsonpath={.metadata.resourceVersion}"])
      const diff = yield* kubectl(["diff", "-f", "-"], configMapYaml.replace(`a: "1"`, `a: "2"`))
      assert.strictEqual(diff.code, 1, `kubectl diff: ${diff.stderr}`)
      assert.match(diff.stdout, /\n-\s+a: "1"\n\+\s+a: "2"\n/)
      assert.strictEqual(yield* ok(["get", "configmap", "cfg", "-n", NS, "-o", "jsonpath={.data.a}"]), "1")
      assert.strictEqual(
        yield* ok(["get", "configmap", "cfg", "-n", NS, "-o", "jsonpath={.metadata.resourceVersion}"]),
        rv
      )
      const same = yield* kubectl(["diff", "-f", "-"], configMapYaml)
      assert.strictEqual(same.code, 0, same.stderr)
      assert.strictEqual(same.stdout, "")
    }), ITEM)

  it.effect("kubectl get services; get all (categories)", () =>
    Effect.gen(function*() {
      yield* ensureDeployment
      yield* ensureService
      const services = yield* ok(["get", "services", "-n", NS])
      assert.match(services, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\n/)
      assert.match(services, /\nweb\s+ClusterIP\s+\d+\.\d+\.\d+\.\d+\s+<none>\s+80\/TCP\s+\S+\n/)
      yield* rolledOut
      const all = yield* ok(["get", "all", "-n", NS])
      assert.match(all, /\npod\/web-[a-z0-9]+-[a-z0-9]{5}\s+1\/1\s+Running\s+0\s+/)
      assert.match(all, /\nservice\/web\s+ClusterIP\s+/)
      assert.match(all, /\ndeployment\.apps\/web\s+2\/2\s+2\s+2\s+/)
      assert.match(all, /\nreplicaset\.apps\/web-[a-z0-9]+\s+2\s+2\s+2\s+/)
    }), ITEM)

  it.effect("kubectl explain (OpenAPI: built-ins and the WebApp CRD)", () =>
    Effect.gen(function*() {
      const containers = yield* ok(["explain", "pods.spec.containers"])
      assert.match(containers, /^KIND:\s+Pod\nVERSION:\s+v1\n/)
      assert.match(containers, /\nFIELD:\s+containers <\[\]Container>\n/)
      assert.match(containers, /\n\s+image\t<string>\n/)
      const deployment = yield* ok(["explain", "deployment"])
      assert.match(deployment, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/)
      assert.match(deployment, /\n\s+spec\t<DeploymentSpec>\n/)
      yield* ensureCrd
      const webapp = yield* eventually(ok(["explain", "webapps.spec"]))
      assert.match(webapp, /^GROUP:\s+apps\.reconcile\.dev\nKIND:\s+WebApp\nVERSION:\s+v1\n/)
      // `replicas` is optional: the example's defaulting webhook sets it
      assert.match(
        webapp,
        /\n\s+replicas\t<integer>\n\s+Number of pods \(0–20\); default 1, set by the defaulting webhook\n/
      )
    }), ITEM)

  it.effect("kubectl apply -f of a kind: List", () =>
    Effect.gen(function*() {
      yield* ensureNamespace
      const list = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed, namespace: ${NS}}
  data: {k: v}
- apiVersion: v1
  kind: Secret
  metadata: {name: listed, namespace: ${NS}}
  stringData: {token: abc}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: listed, namespace: ${NS}}
  spec:
    replicas: 0
    selector: {matchLabels: {app: listed}}
    template:
      metadata: {labels: {app: listed}}
      spec: {containers: [{name: c, image: "busybox:1"}]}
`
      assert.strictEqual(
        yield* ok(["apply", "-f", "-"], list),
        "configmap/listed created\nsecret/listed created\ndeployment.apps/listed created\n"
      )
      assert.strictEqual(
        yield* ok(["apply", "-f", "-"], list),
        "configmap/listed unchanged\nsecret/listed configured\ndeployment.apps/listed unchanged\n"
      )
      assert.strictEqual(yield* ok(["get", "secret", "listed", "-n", NS, "-o", "jsonpath={.data.token}"]), "YWJj")
    }), ITEM)

  it.effect("kubectl rollout history|undo", () =>
    Effect.gen(function*() {
      yield* ensureDeployment
      yield* rolledOut
      assert.strictEqual(
        yield* ok(["set", "image", "deployment/web", "nginx=nginx:1.28", "-n", NS]),
        "deployment.apps/web image updated\n"
      )
      yield* rolledOut
      const history = yield* ok(["rollout", "history", "deployment/web", "-n", NS])
      assert.match(history, /^deployment\.apps\/web \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/)
      const rs = yield* getJson(["replicasets", "-n", NS, "-l", "app=web"])
      const byRevision = Object.fromEntries(
        rs.items.map((r: any) => [r.metadata.annotations["deployment.kubernetes.io/revision"], r])
      ) as Record<string, any>
      assert.strictEqual(byRevision["1"].spec.replicas, 0)
      assert.strictEqual(byRevision["2"].spec.replicas, 2)
      assert.strictEqual(
        byRevision["2"].metadata.name,
        `web-${byRevision["2"].metadata.labels["pod-template-hash"]}`
      )
      assert.strictEqual(
        yield* ok(["rollout", "undo", "deployment/web", "-n", NS]),
        "deployment.apps/web rolled back\n"
      )
      yield* rolledOut
      assert.strictEqual(
        yield* ok(["get", "deployment", "web", "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].image}"]),
        "nginx:1.27"
      )
      const after = yield* ok(["rollout", "history", "deployment/web", "-n", NS])
      assert.match(after, /\n2\s+<none>\n3\s+<none>\n/)
    }), ITEM)

  it.effect(
    "a WebApp with replicas \"three\" is rejected (422, one cause per field); unknown fields pruned",
    () =>
      Effect.gen(function*() {
        yield* ensureCrd
        yield* ensureNamespace
        const bad = `apiVersion: apps.reconcile.dev/v1
kind: WebApp
metadata: {name: bad, namespace: ${NS}}
spec: {image: "nginx:1.27", replicas: "three", port: 8080}
`
        const rejected = yield* eventually(Effect.map(kubectl(["create", "--validate=false", "-f", "-"], bad), (r) => {
          assert.notInclude(r.stderr, "the server doesn't have a resource type")
          return r
        }))
        assert.notStrictEqual(rejected.code, 0, rejected.stdout)
        // two causes, as kube-apiserver gives them: the schema's, then the scale subresource's replicas path
        assert.include(
          rejected.stderr,
          `The WebApp "bad" is invalid: \n` +
            `* spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"\n` +
            `* .spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64`
        )
        const missing = yield* kubectl(["get", "webapp", "bad", "-n", NS])
        assert.include(missing.stderr, `webapps.apps.reconcile.dev "bad" not found`)
        const extra = `apiVersion: apps.reconcile.dev/v1
kind: WebApp
metadata: {name: pruned, namespace: ${NS}}
spec: {image: "nginx:1.27", replicas: 0, port: 8080, colour: blue}
`
        yield* ok(["apply", "--validate=false", "-f", "-"], extra)
        assert.deepStrictEqual((yield* getJson(["webapp", "pruned", "-n", NS])).spec, {
          image: "nginx:1.27",
          replicas: 0,
          port: 8080
        })
      }),
    ITEM
  )

  it.effect.skipIf(python === undefined)(
    "the Python client's watch streams (watch=True)",
    () =>
      Effect.gen(function*() {
        const t = yield* Target
        yield* ensureNamespace
        const script = `
import sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
ns = sys.argv[2]
rv = v1.list_namespaced_config_map(ns).metadata.resource_version
v1.create_namespaced_config_map(ns, {"metadata": {"name": "from-python"}, "data": {"a": "1"}})
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, namespace=ns, resource_version=rv, timeout_seconds=10):
    print(ev["type"], ev["object"].metadata.name, ev["object"].data["a"], flush=True)
    if ev["object"].metadata.name == "from-python":
        w.stop()
`
        const r = yield* run(python!, ["-c", script, t.kubeconfig, NS], {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: t.home },
          timeout: 20_000
        })
        assert.strictEqual(r.code, 0, r.stderr)
        assert.strictEqual(r.stdout, "ADDED from-python 1\n")
      }),
    ITEM
  )

  it.effect.skipIf(!Fs.existsSync(MCP))(
    "a client-go program (kubernetes-mcp-server): list, get, create",
    () =>
      Effect.gen(function*() {
        const t = yield* Target
        yield* ensureConfigMap
        const calls: Array<readonly [string, Record<string, unknown>]> = [
          ["resources_list", { apiVersion: "v1", kind: "ConfigMap", namespace: NS }],
          ["resources_get", { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "cfg" }],
          ["resources_create_or_update", {
            resource:
              `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-mcp, namespace: ${NS}}\ndata: {via: mcp}\n`
          }],
          ["resources_list", { apiVersion: "apps/v1", kind: "Deployment", namespace: NS }]
        ]
        const messages = [
          {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "tour", version: "1" } }
          },
          { jsonrpc: "2.0", method: "notifications/initialized" },
          ...calls.map(([name, args], i) => ({
            jsonrpc: "2.0",
            id: i + 1,
            method: "tools/call",
            params: { name, arguments: args }
          }))
        ]
        const answers = yield* mcpSession(t, messages, calls.length + 1)
        const text = (id: number) => {
          const answer = answers.get(id)
          assert.isDefined(answer, `no answer to ${id}`)
          assert.isUndefined(answer.error, JSON.stringify(answer.error))
          assert.notStrictEqual(answer.result.isError, true, JSON.stringify(answer.result))
          return answer.result.content.map((c: any) => c.text).join("")
        }
        assert.match(text(1), /\n\S*\s*v1\s+ConfigMap\s+cfg\s+1\s+/)
        assert.match(text(2), /\nkind: ConfigMap\n/)
        assert.match(text(2), /\n {2}a: "1"\n/)
        assert.include(text(3), "have been created or updated successfully")
        assert.strictEqual(yield* ok(["get", "configmap", "from-mcp", "-n", NS, "-o", "jsonpath={.data.via}"]), "mcp")
        assert.match(text(4), /^NAMESPACE\s+APIVERSION\s+KIND\s+NAME\s+/)
      }),
    ITEM
  )
}

/** Runs kubernetes-mcp-server on stdio, sends `messages` one per line, collects `expected` answers by id. */
const mcpSession = (t: TargetService, messages: ReadonlyArray<unknown>, expected: number) =>
  Effect.promise(() =>
    new Promise<Map<number, any>>((resolve) => {
      const child = spawn(MCP, ["--kubeconfig", t.kubeconfig, "--disable-multi-cluster"], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: t.home },
        stdio: ["pipe", "pipe", "ignore"]
      })
      const answers = new Map<number, any>()
      let buffer = ""
      const done = () => {
        clearTimeout(timer)
        child.kill("SIGKILL")
        resolve(answers)
      }
      const timer = setTimeout(done, 20_000)
      const send = (i: number) => {
        if (i < messages.length) child.stdin!.write(`${JSON.stringify(messages[i])}\n`)
      }
      let next = 0
      // one request at a time: the calls depend on each other (create, then list)
      const sendUntilRequest = () => {
        while (next < messages.length) {
          const m = messages[next++] as { id?: number }
          send(next - 1)
          if (m.id !== undefined) return
        }
      }
      child.stdout!.on("data", (chunk: Buffer) => {
        buffer += chunk.toString()
        let newline: number
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          if (line.trim() === "") continue
          const message = JSON.parse(line)
          if (typeof message.id !== "number") continue
          answers.set(message.id, message)
          if (answers.size === expected) return done()
          sendUntilRequest()
        }
      })
      child.on("exit", done)
      sendUntilRequest()
    })
  )

describe("acceptance tour", () => {
  const suffix = real ? " -- --real" : ""
  layer(apiserverBin, { excludeTestServices: true, timeout: 90_000 })(`npm run apiserver${suffix}`, (it) => tour(it))
  layer(mainJob, { excludeTestServices: true, timeout: 90_000 })(
    real ? "npm start -- --real" : "npm start's embedded cluster",
    (it) => tour(it)
  )
})
