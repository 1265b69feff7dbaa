/**
 * A real Kubernetes control plane for tests, as controller-runtime's envtest: etcd, kube-apiserver and
 * kube-controller-manager (its garbage collector, namespace controller and workload controllers, so owner-reference
 * GC and namespace deletion are the real ones) started on free 127.0.0.1 ports with freshly generated certificates
 * and an admin client certificate (`system:masters`), stopped when the scope closes — also when the test process
 * dies (each process runs in its own group under a parent-death signal). There are no nodes and no kubelets:
 * Pods stay `Pending` unless something (e.g. `Simulators.layerKubelet`) plays the kubelet.
 *
 * The binaries come from, in order: `options.assets`, `KUBEBUILDER_ASSETS` (the folder setup-envtest fills; it
 * has no kube-controller-manager, ours is used when built), then our cache, filled by `npm run envtest:setup` /
 * `reconcile-envtest setup` (built with Go from `k8s.io/kubernetes` and `go.etcd.io/etcd/server/v3`). Without any
 * of them the layer fails with `AssetsNotFound`, naming both ways.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { KubeClient, Resource } from "@reconcile/kube"
 * import { Envtest } from "@reconcile/testkit"
 *
 * // one control plane per test file; a namespace per test
 * const Real = KubeClient.layer.pipe(Layer.provideMerge(Envtest.layerKube()))
 * const program = KubeClient.create(Resource.Namespace, { metadata: { name: "t-1" } }).pipe(Effect.provide(Real))
 * ```
 *
 * @since 0.1.0
 */
import * as Kube from "@reconcile/kube/Kube"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internalAssets from "./internal/envtest/assets.js"
import * as internal from "./internal/envtest/controlPlane.js"
import type { KubeObject } from "./KubeObject.js"

/**
 * Where the control-plane binaries are.
 *
 * @since 0.1.0
 * @category models
 */
export type Assets = internalAssets.Assets

/**
 * The Kubernetes and etcd versions to build or find (default Kubernetes 1.36.3, etcd 3.6.8; the environment's
 * `RECONCILE_ENVTEST_KUBERNETES` / `RECONCILE_ENVTEST_ETCD` override them).
 *
 * @since 0.1.0
 * @category models
 */
export type Versions = internalAssets.Versions

/**
 * The control plane could not be had: `AssetsNotFound` (no binaries: the message names `npm run envtest:setup`
 * and `KUBEBUILDER_ASSETS`), `NoGo`, `DownloadFailed` and `BuildFailed` (setup), `StartFailed` (a binary exited
 * during start), `PortTaken`, `NotReady` (not ready in time), `CrdFailed` (a CRD was refused or never
 * established), `RequestFailed`. `log` is the failing component's own log (its last lines) or the build log's path.
 *
 * @since 0.1.0
 * @category errors
 */
export class EnvtestError extends Data.TaggedError("EnvtestError")<{
  readonly reason:
    | "AssetsNotFound"
    | "NoGo"
    | "DownloadFailed"
    | "BuildFailed"
    | "StartFailed"
    | "PortTaken"
    | "NotReady"
    | "CrdFailed"
    | "RequestFailed"
  readonly detail: string
  readonly component?: string | undefined
  readonly log?: string | undefined
}> {
  override get message(): string {
    return `envtest: ${this.reason}: ${this.detail}${
      this.log !== undefined && this.log !== "" ? `\n--- ${this.component ?? "log"} ---\n${this.log}` : ""
    }`
  }
}

/**
 * A process of the control plane.
 *
 * @since 0.1.0
 * @category models
 */
export type Component = internal.Component

/**
 * An HTTP answer of {@link Envtest.Service.request}.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = internal.Answer

/**
 * A running control plane.
 *
 * @since 0.1.0
 * @category tags
 */
export class Envtest extends Context.Service<Envtest, Envtest.Service>()("@reconcile/testkit/Envtest") {}

/**
 * @since 0.1.0
 */
export declare namespace Envtest {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** `https://127.0.0.1:<port>` of kube-apiserver. */
    readonly url: string
    readonly port: number
    /** The admin kubeconfig (context `envtest`, namespace `default`, a client certificate in `system:masters`). */
    readonly kubeconfigPath: string
    readonly kubeconfig: string
    /** The CA that signed the serving and client certificates (PEM). */
    readonly certificateAuthority: string
    /** kube-apiserver's `/version` `gitVersion`, e.g. `v1.36.3`. */
    readonly version: string
    /** `http://127.0.0.1:<port>` of etcd. */
    readonly etcdUrl: string
    /** Whether kube-controller-manager runs (real garbage collection and namespace deletion). */
    readonly controllerManager: boolean
    /** Its working directory (0700: component logs, certificates, etcd's data), removed on stop. */
    readonly directory: string
    /** The binaries it runs. */
    readonly assets: Assets
    /** One request as the admin user (JSON unless `headers` say otherwise); never fails on a status code. */
    readonly request: (
      method: string,
      path: string,
      body?: unknown,
      headers?: Record<string, string>
    ) => Effect.Effect<Answer, EnvtestError>
    /**
     * Server-side applies an object as the admin user (`fieldManager` default `envtest`, forced), at the path
     * discovery gives its kind; a CRD is also waited for until established and served. Fails with
     * `RequestFailed` (the status and body) when the server refuses it.
     */
    readonly apply: (
      object: KubeObject,
      options?: { readonly fieldManager?: string | undefined; readonly force?: boolean | undefined }
    ) => Effect.Effect<KubeObject, EnvtestError>
    /** Reads an object (by `apiVersion`, `kind`, `metadata.name` and `.namespace`); `undefined` when absent. */
    readonly get: (object: KubeObject) => Effect.Effect<KubeObject | undefined, EnvtestError>
    /** Installs CRDs (apply, server-side) and waits until each is established and served. */
    readonly installCrds: (crds: ReadonlyArray<unknown>) => Effect.Effect<void, EnvtestError>
    /**
     * Stops kube-apiserver and starts it again (same port, certificates and etcd): gracefully by default, killed
     * with `signal: "SIGKILL"` (a crash), down for `down` in between.
     */
    readonly restartApiServer: (options?: {
      readonly signal?: "SIGTERM" | "SIGKILL" | undefined
      readonly down?: Duration.Input | undefined
    }) => Effect.Effect<void, EnvtestError>
    /** Kills etcd and starts it again on its data after `down` (a crash). */
    readonly restartEtcd: (down?: Duration.Input) => Effect.Effect<void, EnvtestError>
    /** Compacts etcd's history to its current revision: watches from before it get 410 Gone. Returns the revision. */
    readonly compactEtcd: Effect.Effect<number, EnvtestError>
    /**
     * Freezes a component (SIGSTOP: its connections stay open and nothing answers) until {@link resume}; a
     * stop or restart continues it first.
     */
    readonly pause: (component: Component) => Effect.Effect<void>
    /** Continues a paused component (SIGCONT). */
    readonly resume: (component: Component) => Effect.Effect<void>
    /** The last lines of a component's log. */
    readonly logs: (component: Component, lines?: number) => string
  }
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** A folder with `kube-apiserver`, `etcd` (and `kube-controller-manager`); default as the module header says. */
  readonly assets?: string | undefined
  /** The versions to take from our cache (default {@link defaultVersions}, or the environment's). */
  readonly versions?: Versions | undefined
  /** Where to write the admin kubeconfig (mode 0600); default in the control plane's temporary directory. */
  readonly kubeconfigPath?: string | undefined
  /** kube-controller-manager's `--controllers`, or `false` to run none (a bare API server). */
  readonly controllers?: ReadonlyArray<string> | false | undefined
  /** Extra kube-apiserver flags (`--name=value`), after ours. */
  readonly apiServerFlags?: ReadonlyArray<string> | undefined
  /** CRDs to install once it is ready. */
  readonly crds?: ReadonlyArray<unknown> | undefined
  /** How long each component may take to become ready (default 60 s). */
  readonly startTimeout?: Duration.Input | undefined
  /** One line per step (starting etcd, …). */
  readonly log?: ((line: string) => void) | undefined
}

/**
 * The versions built and looked for by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultVersions: Versions = internalAssets.defaultVersions

const fromAssetsError = (e: unknown): EnvtestError =>
  e instanceof internalAssets.AssetsError
    ? new EnvtestError({
      reason: e.reason === "NotFound" ? "AssetsNotFound" : e.reason,
      detail: e.message,
      log: e.log
    })
    : new EnvtestError({ reason: "BuildFailed", detail: e instanceof Error ? e.message : String(e) })

/**
 * The binaries, without building: `dir`, else `KUBEBUILDER_ASSETS`, else our cache.
 *
 * @since 0.1.0
 * @category assets
 */
export const findAssets = (options?: {
  readonly dir?: string | undefined
  readonly versions?: Versions | undefined
}): Effect.Effect<Assets, EnvtestError> =>
  Effect.try({ try: () => internalAssets.find(options ?? {}), catch: fromAssetsError })

/**
 * Builds the binaries with Go into the cache unless they are there already (then it takes no time). `progress`
 * gets one line per step; the result says whether it built, how long it took and the bytes the binaries take.
 *
 * @since 0.1.0
 * @category assets
 */
export const setup = (options?: {
  readonly versions?: Versions | undefined
  readonly force?: boolean | undefined
  readonly progress?: ((line: string) => void) | undefined
}): Effect.Effect<
  Assets & { readonly built: boolean; readonly seconds: number; readonly bytes: number },
  EnvtestError
> => Effect.tryPromise({ try: () => internalAssets.setup(options ?? {}), catch: fromAssetsError })

const fail = (reason: EnvtestError["reason"]) => (e: unknown) =>
  e instanceof internal.StartError
    ? new EnvtestError({ reason: e.reason, detail: e.message, component: e.component, log: e.log })
    : new EnvtestError({ reason, detail: e instanceof Error ? e.message : String(e) })

const sleep = (millis: number) => Effect.promise(() => new Promise<void>((r) => setTimeout(r, millis)))

const crdInstaller = (plane: internal.ControlPlane) => (crds: ReadonlyArray<unknown>) =>
  Effect.forEach(crds, (crd) =>
    Effect.gen(function*() {
      const c = crd as {
        readonly metadata: { readonly name: string }
        readonly spec: {
          readonly group: string
          readonly names: { readonly plural: string }
          readonly versions: ReadonlyArray<{ readonly name: string; readonly served: boolean }>
        }
      }
      const name = c.metadata.name
      const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`
      const request = (method: string, p: string, body?: string, headers?: Record<string, string>) =>
        Effect.tryPromise({ try: () => plane.request(method, p, body, headers), catch: fail("CrdFailed") })
      const applied = yield* request(
        "PATCH",
        `${path}?fieldManager=envtest&force=true`,
        JSON.stringify({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", ...c }),
        { "content-type": "application/apply-patch+yaml" }
      )
      if (applied.status >= 300) {
        return yield* new EnvtestError({
          reason: "CrdFailed",
          detail: `CRD ${name}: ${applied.status} ${applied.body}`
        })
      }
      // established, then served: discovery of each served version lists the plural
      const deadline = Date.now() + 30_000
      const served = c.spec.versions.filter((v) => v.served).map((v) => `/apis/${c.spec.group}/${v.name}`)
      for (;;) {
        const got = yield* request("GET", path)
        const established = got.status === 200 &&
          ((JSON.parse(got.body) as { status?: { conditions?: ReadonlyArray<{ type: string; status: string }> } })
            .status?.conditions ?? []).some((cond) => cond.type === "Established" && cond.status === "True")
        let listed = established
        for (const gv of established ? served : []) {
          const disc = yield* request("GET", gv)
          listed = listed && disc.status === 200 &&
            (JSON.parse(disc.body) as { resources?: ReadonlyArray<{ name: string }> }).resources?.some((r) =>
                r.name === c.spec.names.plural
              ) === true
        }
        if (listed) return
        if (Date.now() > deadline) {
          return yield* new EnvtestError({ reason: "CrdFailed", detail: `CRD ${name} was not established within 30 s` })
        }
        yield* sleep(50)
      }
    }), { discard: true })

/**
 * Starts a control plane in scope (everything it started is stopped when the scope closes).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): Effect.Effect<Envtest.Service, EnvtestError, Scope.Scope> =>
  Effect.gen(function*() {
    const assets = yield* findAssets({ dir: options?.assets, versions: options?.versions })
    const plane = yield* Effect.acquireRelease(
      // free ports are picked, then bound by the processes: another process may take one in between (PortTaken),
      // then the start is tried again on new ones
      Effect.tryPromise({
        try: () =>
          internal.start({
            assets,
            kubeconfigPath: options?.kubeconfigPath,
            controllers: options?.controllers,
            apiServerFlags: options?.apiServerFlags,
            startTimeoutMillis: options?.startTimeout === undefined
              ? undefined
              : Duration.toMillis(Duration.fromInputUnsafe(options.startTimeout)),
            log: options?.log
          }),
        catch: fail("StartFailed")
      }).pipe(Effect.retry({ times: 2, while: (e) => e.reason === "PortTaken" })),
      (plane) => Effect.promise(() => plane.stop())
    )
    const installCrds = crdInstaller(plane)
    if (options?.crds !== undefined) yield* installCrds(options.crds)
    const request = (method: string, path: string, body?: string, headers?: Record<string, string>) =>
      Effect.tryPromise({ try: () => plane.request(method, path, body, headers), catch: fail("RequestFailed") })
    const served = new Map<string, { readonly name: string; readonly namespaced: boolean }>()
    const pathOf = (object: KubeObject) =>
      Effect.gen(function*() {
        const gv = object.apiVersion.includes("/") ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`
        const id = `${object.apiVersion}|${object.kind}`
        if (!served.has(id)) {
          const answer = yield* request("GET", gv)
          const resources = answer.status === 200
            ? (JSON.parse(answer.body) as {
              readonly resources: ReadonlyArray<{ name: string; kind: string; namespaced: boolean }>
            }).resources
            : []
          for (const r of resources) if (!r.name.includes("/")) served.set(`${object.apiVersion}|${r.kind}`, r)
        }
        const r = served.get(id)
        if (r === undefined) {
          return yield* new EnvtestError({ reason: "RequestFailed", detail: `${id.replace("|", " ")} is not served` })
        }
        const ns = r.namespaced ? `/namespaces/${object.metadata.namespace ?? "default"}` : ""
        return `${gv}${ns}/${r.name}/${encodeURIComponent(object.metadata.name ?? "")}`
      })
    const apply: Envtest.Service["apply"] = (object, applyOptions) =>
      Effect.gen(function*() {
        if (object.kind === "CustomResourceDefinition" && object.apiVersion === "apiextensions.k8s.io/v1") {
          yield* installCrds([object])
          return (yield* get(object))!
        }
        const answer = yield* request(
          "PATCH",
          `${yield* pathOf(object)}?fieldManager=${encodeURIComponent(applyOptions?.fieldManager ?? "envtest")}${
            applyOptions?.force === false ? "" : "&force=true"
          }`,
          JSON.stringify(object),
          { "content-type": "application/apply-patch+yaml" }
        )
        if (answer.status >= 300) {
          return yield* new EnvtestError({
            reason: "RequestFailed",
            detail: `apply ${object.kind} ${object.metadata.name}: ${answer.status} ${answer.body}`
          })
        }
        return JSON.parse(answer.body) as KubeObject
      })
    const get: Envtest.Service["get"] = (object) =>
      Effect.gen(function*() {
        const answer = yield* request("GET", yield* pathOf(object))
        return answer.status === 200 ? JSON.parse(answer.body) as KubeObject : undefined
      })
    const service: Envtest.Service = {
      url: plane.url,
      port: plane.port,
      kubeconfigPath: plane.kubeconfigPath,
      kubeconfig: plane.kubeconfig,
      certificateAuthority: plane.certificateAuthority,
      version: plane.version,
      etcdUrl: plane.etcdUrl,
      controllerManager: plane.controllerManager,
      directory: plane.dir,
      assets,
      request: (method, path, body, headers) =>
        Effect.tryPromise({
          try: () =>
            plane.request(
              method,
              path,
              body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
              headers
            ),
          catch: fail("RequestFailed")
        }),
      apply,
      get,
      installCrds,
      restartApiServer: (restart) =>
        Effect.tryPromise({
          try: () =>
            plane.restartApiServer({
              signal: restart?.signal,
              downMillis: restart?.down === undefined ? 0 : Duration.toMillis(Duration.fromInputUnsafe(restart.down))
            }),
          catch: fail("StartFailed")
        }),
      restartEtcd: (down) =>
        Effect.tryPromise({
          try: () => plane.restartEtcd(down === undefined ? 0 : Duration.toMillis(Duration.fromInputUnsafe(down))),
          catch: fail("StartFailed")
        }),
      compactEtcd: Effect.tryPromise({ try: () => plane.compactEtcd(), catch: fail("RequestFailed") }),
      pause: (component) => Effect.sync(() => plane.signal(component, "SIGSTOP")),
      resume: (component) => Effect.sync(() => plane.signal(component, "SIGCONT")),
      logs: plane.logs
    }
    return service
  })

/**
 * A control plane as a Layer (one per test file, as envtest users do; a namespace per test).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Envtest, EnvtestError> => Layer.effect(Envtest, make(options))

/**
 * A control plane and `Kube` for its admin kubeconfig, so `KubeClient` and everything above it run on it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerKube = (
  options?: Options,
  kubeOptions?: Kube.Options
): Layer.Layer<Envtest | Kube.Kube, EnvtestError | Kube.KubeConfigError> =>
  Layer.unwrap(Effect.map(Envtest, (plane) => Kube.layerFromString(plane.kubeconfig, kubeOptions))).pipe(
    Layer.provideMerge(layer(options))
  )
